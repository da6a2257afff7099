#!/bin/sh
# test_wheel.sh: the README's wheel command (scripts/build-wheel.sh), then a fresh virtual
# environment (Debian's numpy / scipy / pytest seen through --system-site-packages: nothing is
# downloaded), `pip install --no-index` of the wheel, and the Python tests against it with no
# PYTHONPATH and no NONZERO_LIBRARY: the package and its library must come from the venv.
# Usage: test_wheel.sh BUILD_DIR SOURCE_DIR [sanitized]
set -u
BUILD=$1
SRC=$2
PY=/usr/bin/python3
[ "${3:-}" = "sanitized" ] && { echo "SKIP: sanitized build (the wheel carries the release library)"; exit 77; }
"$PY" -c "import setuptools, wheel, pip, venv, numpy, scipy, pytest" >/dev/null 2>&1 ||
  { echo "SKIP: $PY lacks setuptools, wheel, pip, venv, numpy, scipy or pytest"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/nz-wheel-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
echo "== build the wheel"
whl=$(sh "$SRC/scripts/build-wheel.sh" "$BUILD" "$T/dist" | tail -1) || fail "build-wheel.sh"
[ -f "$whl" ] || fail "no wheel"
echo "$whl"
case "$whl" in *-py3-none-any.whl) fail "a pure-Python tag for a wheel with a shared library";; esac
"$PY" -m zipfile -l "$whl" | grep -q "nonzero/_lib/libnonzero.so.0" || fail "the wheel lacks the library"
echo "== install into a fresh venv, offline"
"$PY" -m venv --system-site-packages "$T/venv" || fail "python3 -m venv"
"$T/venv/bin/python" -m pip install -q --no-index "$whl" || fail "pip install --no-index"
echo "== import and run the tests from the venv (no PYTHONPATH, no NONZERO_LIBRARY)"
cd "$T" || exit 1
where=$(env -u PYTHONPATH -u NONZERO_LIBRARY "$T/venv/bin/python" -c "
import nonzero, nonzero._lib as l
print(nonzero.__file__); print(l.lib._name); print(nonzero.__version__)") || fail "import nonzero"
echo "$where"
case "$where" in
  *"$T/venv/"*"nonzero/__init__.py"*"$T/venv/"*"nonzero/_lib/libnonzero.so.0"*) ;;
  *) fail "nonzero or its library was not loaded from the venv" ;;
esac
# the source tree's tests, run by the venv's interpreter; the tests directory is not the
# package's parent, so `import nonzero` resolves to the installed wheel
cd "$SRC/python/tests" || exit 1
env -u PYTHONPATH -u NONZERO_LIBRARY "$T/venv/bin/python" -m pytest -q -p no:cacheprovider \
  test_host.py test_precond_scipy.py || fail "the Python tests against the installed wheel"
echo "wheel: all checks passed"
