#!/bin/sh
# test_install.sh: install the build into a temporary prefix and build the examples against the
# INSTALLED package, as a user would: a C-only CMake project with find_package(Nonzero), and a
# plain cc command line with pkg-config. Then run them. Nothing may point into the build or
# source tree (the examples are copied out first; only the prefix is given).
# Usage: test_install.sh BUILD_DIR SOURCE_DIR [sanitized]
set -u
BUILD=$1
SRC=$2
if [ "${3:-}" = "sanitized" ]; then
  echo "SKIP: sanitizer build (an installed ASan library needs the runtime preloaded)"; exit 77
fi
for tool in cmake cc pkg-config nm; do
  command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool not installed"; exit 77; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/nz-install.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
P=$T/prefix
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$BUILD" --prefix "$P" > "$T/install.log" 2>&1 || { cat "$T/install.log"; fail "cmake --install"; }
echo "== install tree"
(cd "$P" && find . -type f -o -type l | sort)
LIBDIR=$(cd "$P" && dirname "$(find . -name 'libnonzero.so' | head -1)")
LIBDIR=$P/${LIBDIR#./}
for f in include/nonzero.h include/nonzero_version.h bin/nz; do
  [ -e "$P/$f" ] || fail "missing $f"
done
# the umbrella's parts: exactly the source tree's include/nonzero/*.h
(cd "$SRC/include" && ls nonzero/*.h) > "$T/parts.src"
(cd "$P/include" && ls nonzero/*.h 2>/dev/null) > "$T/parts.installed"
diff "$T/parts.src" "$T/parts.installed" || fail "installed include/nonzero/*.h differ from the source's"
for f in libnonzero.so cmake/Nonzero/NonzeroConfig.cmake cmake/Nonzero/NonzeroConfigVersion.cmake \
         cmake/Nonzero/NonzeroTargets.cmake pkgconfig/nonzero.pc; do
  [ -e "$LIBDIR/$f" ] || fail "missing lib/$f"
done
real=$(readlink -f "$LIBDIR/libnonzero.so")
version=$("$P/bin/nz" --version | awk '{print $2}')
case "$real" in *"libnonzero.so.$version") ;; *) fail "library file $real does not carry version $version";; esac
soname=$(readelf -d "$real" | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
[ "$soname" = "libnonzero.so.${version%%.*}" ] || fail "SONAME $soname, expected libnonzero.so.${version%%.*}"
echo "version $version, SONAME $soname"

echo "== nz bench --png from the install (plot.py in share/nonzero)"
[ -r "$P/share/nonzero/plot.py" ] || fail "missing share/nonzero/plot.py"
mkdir -p "$T/elsewhere"
png_out=$(cd "$T/elsewhere" && "$P/bin/nz" bench "$SRC/tests/data/west0067.mtx" --quick --runs 2 \
          --backend cpu --png "$T/elsewhere/chart.png" 2>&1)
png_rc=$?
case "$png_out" in
  *"plot.py not found"*) fail "the installed nz did not find its plot.py: $png_out" ;;
esac
if [ $png_rc -eq 0 ]; then
  [ -s "$T/elsewhere/chart.png" ] || fail "nz bench --png exited 0 without a chart"
  echo "chart drawn"
else
  # matplotlib is optional: one line naming the missing module, a non-zero exit
  case "$png_out" in
    *"cannot import matplotlib"*) echo "no matplotlib: refused as documented" ;;
    *) fail "nz bench --png from the install: $png_out" ;;
  esac
fi

echo "== exported symbols"
nm -D --defined-only "$real" | awk '$2 ~ /^[TtWwDdBbRrVviu]$/ {print $3}' | sort > "$T/exported"
count=$(wc -l < "$T/exported")
echo "exported: $count symbols"
if grep -v '^nz_' "$T/exported" > "$T/foreign"; then
  head "$T/foreign"; fail "symbols outside the nz_ API are exported"
fi
if [ -f "$BUILD/nonzero.exports" ]; then
  sort "$BUILD/nonzero.exports" | diff - "$T/exported" > "$T/diff" || { cat "$T/diff"; fail "exports differ from the header's functions"; }
  echo "exports = the $count functions declared in nonzero.h and nonzero/*.h"
fi

cp -r "$SRC/examples" "$T/examples"
MATRIX=$SRC/tests/data/west0067.mtx
run_examples() { # DIR LABEL
  "$1/spmv" "$MATRIX" > "$T/out" 2>&1 || { cat "$T/out"; fail "$2: spmv"; }
  cat "$T/out"
  grep -q "sum(y)" "$T/out" || fail "$2: spmv printed no checksum"
  if grep -q "max |y_gpu" "$T/out"; then
    d=$(sed -n 's/.*max |y_gpu - y_cpu| = \([^ ]*\).*/\1/p' "$T/out")
    awk -v d="$d" 'BEGIN { exit !(d < 1e-9) }' || fail "$2: GPU differs from CPU by $d"
  fi
  "$1/cg_fe3d" 12 > "$T/out" 2>&1 || { cat "$T/out"; fail "$2: cg_fe3d"; }
  cat "$T/out"
  err=$(sed -n 's/max |x - u_exact| = //p' "$T/out")
  awk -v e="$err" 'BEGIN { exit !(e < 2e-2) }' || fail "$2: cg_fe3d error $err too large"
  "$1/spgemm" 60 > "$T/out" 2>&1 || { cat "$T/out"; fail "$2: spgemm"; }
  cat "$T/out"
  "$1/solve" 16 > "$T/out" 2>&1 || { cat "$T/out"; fail "$2: solve"; }
  cat "$T/out"
  err=$(sed -n 's/.*max |x - 1| = //p' "$T/out")
  awk -v e="$err" 'BEGIN { exit !(e < 1e-6) }' || fail "$2: solve error $err too large"
  if [ -x "$1/device_arrays" ]; then
    "$1/device_arrays" > "$T/out" 2>&1 || { cat "$T/out"; fail "$2: device_arrays"; }
    cat "$T/out"
  fi
}

echo "== find_package(Nonzero 0.2) in a C-only CMake project"
cmake -S "$T/examples" -B "$T/build-cmake" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
  > "$T/cmake.log" 2>&1 || { cat "$T/cmake.log"; fail "configure the examples"; }
cmake --build "$T/build-cmake" > "$T/cmake-build.log" 2>&1 || { cat "$T/cmake-build.log"; fail "build the examples"; }
if grep -q "$BUILD\|$SRC/src\|$SRC/include" "$T/build-cmake/CMakeCache.txt"; then
  fail "the examples' build refers to the build or source tree"
fi
run_examples "$T/build-cmake" cmake

echo "== pkg-config"
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
flags=$(pkg-config --cflags --libs nonzero) || fail "pkg-config"
echo "pkg-config --cflags --libs nonzero: $flags"
mkdir -p "$T/build-pc"
# the run path the README's pkg-config line gives (pkg-config itself has none)
pc_libdir=$(pkg-config --variable=libdir nonzero) || fail "pkg-config --variable=libdir"
for ex in spmv cg_fe3d spgemm solve; do
  cc -O2 "$T/examples/$ex.c" $flags -lm -Wl,-rpath,"$pc_libdir" -o "$T/build-pc/$ex" ||
    fail "cc $ex.c \$(pkg-config --cflags --libs nonzero)"
done
cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [ -f "$cuda_home/include/cuda_runtime.h" ]; then
  cc -O2 "$T/examples/device_arrays.c" $flags -I"$cuda_home/include" -L"$cuda_home/lib64" -lcudart \
     -Wl,-rpath,"$LIBDIR" -Wl,-rpath,"$cuda_home/lib64" -o "$T/build-pc/device_arrays" ||
    fail "cc device_arrays.c"
fi
run_examples "$T/build-pc" pkg-config

echo "== python: import nonzero from the prefix, outside the source tree, PYTHONPATH only"
if /usr/bin/python3 -c "import numpy" >/dev/null 2>&1; then
  out=$(cd "$T" && env -u NONZERO_LIBRARY PYTHONPATH="$P/lib/python3/dist-packages" /usr/bin/python3 -c \
    "import nonzero, numpy; print(nonzero.library_path); print((nonzero.laplace2d(3) @ numpy.ones(9)).sum())") ||
    fail "python3 -c 'import nonzero' with PYTHONPATH=$P/lib/python3/dist-packages"
  echo "$out"
  case $out in "$P"/*) ;; *) fail "nonzero loaded a library outside the prefix: $out" ;; esac
else
  echo "python: skipped (/usr/bin/python3 has no numpy)"
fi
echo "install: all checks passed"
