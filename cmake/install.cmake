# install.cmake: what `cmake --install` puts under the prefix, and the package files that let a
# C, C++ or CMake project use the installed library with one line (find_package or pkg-config).
include(CMakePackageConfigHelpers)

install(TARGETS nonzero EXPORT NonzeroTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(NZ_INSTALL_STATIC)
  install(TARGETS nonzero_static EXPORT NonzeroTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(FILES include/nonzero.h ${PROJECT_BINARY_DIR}/include/nonzero_version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# the umbrella's parts (include/nonzero/*.h, listed by CMakeLists.txt), beside it as nonzero/*.h
list(TRANSFORM NZ_PUBLIC_PARTS PREPEND include/ OUTPUT_VARIABLE NZ_PUBLIC_PART_FILES)
install(FILES ${NZ_PUBLIC_PART_FILES} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nonzero)
if(TARGET nz)
  install(TARGETS nz RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # nz bench --png draws with it; nz looks for it at ../share/nonzero/plot.py from its own path
  install(FILES bench/plot.py DESTINATION ${CMAKE_INSTALL_DATADIR}/nonzero)
endif()

set(NZ_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Nonzero)
install(EXPORT NonzeroTargets NAMESPACE Nonzero:: DESTINATION ${NZ_CMAKE_DIR})
configure_package_config_file(cmake/NonzeroConfig.cmake.in
  ${PROJECT_BINARY_DIR}/NonzeroConfig.cmake INSTALL_DESTINATION ${NZ_CMAKE_DIR})
# 0.x: a consumer asking for 0.2 accepts 0.2.* only (minor releases of 0.x may break the ABI
# until 1.0 says otherwise; docs/ABI.md); from 1.0 on, SameMajorVersion.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/NonzeroConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/NonzeroConfig.cmake
              ${PROJECT_BINARY_DIR}/NonzeroConfigVersion.cmake DESTINATION ${NZ_CMAKE_DIR})

# pkg-config: the shared library needs nothing but -lnonzero; the static flavour's own
# dependencies go to Libs.private (pkg-config --static).
set(NZ_PC_PRIVATE "-lm")
if(ZLIB_FOUND)
  string(APPEND NZ_PC_PRIVATE " -lz")
endif()
if(OpenMP_C_FOUND)
  string(APPEND NZ_PC_PRIVATE " ${OpenMP_C_FLAGS}")
endif()
if(NZ_HAVE_CUDA)
  string(APPEND NZ_PC_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lstdc++ -ldl -lrt -lpthread")
endif()
string(REGEX REPLACE "[^/]+" ".." NZ_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
configure_file(cmake/nonzero.pc.in ${PROJECT_BINARY_DIR}/nonzero.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/nonzero.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
