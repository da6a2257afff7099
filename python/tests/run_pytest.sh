#!/bin/sh
# run_pytest.sh: run one pytest file of the Python binding against a built libnonzero (for ctest).
# usage: run_pytest.sh LIBRARY PYTHON_DIR TEST_FILE|doctest [gpu] [sanitized]
# Exit 77 (ctest's skip) with a reason when no interpreter has numpy, scipy and pytest, or, for
# the gpu entry, when CuPy, a device or a CUDA-enabled library is missing. pytest's exit 5 (no
# tests collected) is a failure: every file here has tests.
set -u
lib=$1 pydir=$2 file=$3
shift 3
gpu=0 sanitized=0
for a in "$@"; do
  case $a in gpu) gpu=1 ;; sanitized) sanitized=1 ;; esac
done
py=
for cand in /usr/bin/python3 python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import numpy, scipy, pytest" >/dev/null 2>&1; then
    py=$cand
    break
  fi
done
if [ -z "$py" ]; then
  echo "skipped: no python3 with numpy, scipy and pytest (apt-get install python3-numpy python3-scipy python3-pytest)"
  exit 77
fi
NONZERO_LIBRARY=$lib
PYTHONPATH=$pydir${PYTHONPATH:+:$PYTHONPATH}
export NONZERO_LIBRARY PYTHONPATH
if [ "$sanitized" = 1 ]; then
  # an ASan-instrumented library needs the ASan runtime loaded first into an uninstrumented python
  asan=$(${CC:-cc} -print-file-name=libasan.so 2>/dev/null)
  if [ -z "$asan" ] || [ ! -e "$asan" ]; then
    echo "skipped: sanitized build and libasan.so not found"
    exit 77
  fi
  LD_PRELOAD=$asan
  # the interpreter itself is not leak-clean: leak checks stay with the C tests
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
  NZ_PY_SANITIZED=1  # the RSS bound of the leak test does not hold with ASan's quarantine
  export LD_PRELOAD ASAN_OPTIONS NZ_PY_SANITIZED
fi
if [ "$gpu" = 1 ]; then
  why=$("$py" -c "
import sys
try:
    import cupy
except Exception as e:
    print('CuPy is not importable (%s)' % e); sys.exit()
try:
    n = cupy.cuda.runtime.getDeviceCount()
except Exception as e:
    print('CuPy sees no device (%s)' % e); sys.exit()
if n == 0:
    print('no CUDA device'); sys.exit()
import nonzero
if nonzero.device_count() == 0:
    print('libnonzero was built without CUDA')
" 2>&1)
  if [ -n "$why" ]; then
    echo "skipped: $why"
    exit 77
  fi
fi
cd "$pydir/tests" || exit 1
if [ "$file" = doctest ]; then
  # the Examples sections of the package's docstrings (numpydoc), run as doctests
  "$py" -m pytest -q -rs -p no:cacheprovider --doctest-modules "$pydir/nonzero"
else
  "$py" -m pytest -q -rs -p no:cacheprovider "$file"
fi
rc=$?
if [ "$rc" = 5 ]; then
  echo "pytest collected no tests from $file: failing"
  exit 1
fi
exit $rc
