# test_layer_paths.cmake: the build's include paths hold the layers of src/ (unit/test_layer_paths).
# Usage: cmake -DPROBES=<build>/tests/layer_paths.cmake -P test_layer_paths.cmake
#
# PROBES (written by tests/CMakeLists.txt at generate time) holds the C compiler, each layer's
# include path exactly as the build compiles that layer's objects (the INCLUDE_DIRECTORIES of
# nzutil_objects and of every nonzero_layer<N>), and every header below src/ with its layer.
# For each layer, from probe files in a folder of their own (so nothing is found beside them):
#  - a header of a higher layer: `#include "name"` must fail to compile, because the file is not
#    found (an upward include cannot compile);
#  - a header of an include folder of this layer or a lower one must be found (__has_include), so
#    the probes see the right path and a refusal is not a broken command line.
# Only the preprocessor runs: one short call per refused header, one per layer for the rest.
cmake_minimum_required(VERSION 3.25)
if(NOT PROBES OR NOT EXISTS "${PROBES}")
  message(FATAL_ERROR "test_layer_paths: no probe list (-DPROBES=...)")
endif()
include(${PROBES})
file(REMOVE_RECURSE "${NZ_PROBE_DIR}")
file(MAKE_DIRECTORY "${NZ_PROBE_DIR}")

set(failures 0)
set(refused 0)
set(found 0)
list(LENGTH NZ_PROBE_HEADERS header_count)
math(EXPR last "${header_count} - 1")
foreach(layer IN LISTS NZ_PROBE_LAYERS)
  set(flags "")
  foreach(dir IN LISTS NZ_PROBE_PATH_${layer})
    if(NOT dir IN_LIST NZ_PROBE_IMPLICIT)  # as the build leaves out the compiler's own folders
      list(APPEND flags "-I${dir}")
    endif()
  endforeach()
  set(reachable "")
  foreach(i RANGE ${last})
    list(GET NZ_PROBE_HEADERS ${i} header)
    list(GET NZ_PROBE_HEADER_LAYERS ${i} header_layer)
    list(GET NZ_PROBE_HEADER_SHARED ${i} shared)
    get_filename_component(name "${header}" NAME)
    if(header_layer GREATER layer)
      set(probe "${NZ_PROBE_DIR}/layer${layer}_up_${name}.c")
      file(WRITE "${probe}" "#include \"${name}\"\n")
      execute_process(COMMAND ${NZ_PROBE_CC} ${flags} -E "${probe}"
                      RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
      string(REPLACE "." "[.]" name_regex "${name}")
      if(rc EQUAL 0)
        message("FAIL: layer ${layer} includes ${header} (layer ${header_layer}): it compiles")
        math(EXPR failures "${failures} + 1")
      elseif(NOT err MATCHES "${name_regex}'?:? *(No such file|file not found)")
        message("FAIL: layer ${layer}'s probe of ${header} failed for another reason:\n${err}")
        math(EXPR failures "${failures} + 1")
      else()
        math(EXPR refused "${refused} + 1")
      endif()
    elseif(shared)
      string(APPEND reachable "#if !__has_include(\"${name}\")\n"
                              "#error \"${header} (layer ${header_layer}) is not found\"\n#endif\n")
      math(EXPR found "${found} + 1")
    endif()
  endforeach()
  if(reachable)
    set(probe "${NZ_PROBE_DIR}/layer${layer}_found.c")
    file(WRITE "${probe}" "${reachable}")
    execute_process(COMMAND ${NZ_PROBE_CC} ${flags} -E "${probe}"
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message("FAIL: layer ${layer} (include path: ${NZ_PROBE_PATH_${layer}}):\n${err}")
      math(EXPR failures "${failures} + 1")
    endif()
  endif()
endforeach()

list(LENGTH NZ_PROBE_LAYERS layer_count)
if(refused EQUAL 0 OR found EQUAL 0)
  message("FAIL: the probes checked nothing (${refused} refused, ${found} found)")
  math(EXPR failures "${failures} + 1")
endif()
if(failures GREATER 0)
  message(FATAL_ERROR "test_layer_paths: ${failures} failure(s)")
endif()
message("test_layer_paths: ${layer_count} layers, ${header_count} headers: ${refused} upward "
        "includes refused, ${found} includes of the same or a lower layer found")
