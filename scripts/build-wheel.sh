#!/bin/sh
# build-wheel.sh: one wheel of the Python package with the built shared library inside it
# (nonzero/_lib/libnonzero.so.0, the first place the package looks), offline, with Debian's
# setuptools, wheel and pip (python3-setuptools python3-wheel python3-pip).
# Usage: scripts/build-wheel.sh BUILD_DIR OUT_DIR   (the library of BUILD_DIR as built: CPU, and
#        CUDA when the build has it). Prints the wheel's path on its last line.
set -eu
BUILD=$1
OUT=$2
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=${NZ_WHEEL_PYTHON:-/usr/bin/python3}
lib=$(readlink -f "$BUILD/libnonzero.so.0" 2>/dev/null || true)
[ -n "$lib" ] && [ -f "$lib" ] || { echo "build-wheel.sh: no libnonzero.so.0 in $BUILD (build first)" >&2; exit 1; }
"$PY" -c "import setuptools, wheel, pip" 2>/dev/null ||
  { echo "build-wheel.sh: $PY lacks setuptools, wheel or pip (apt-get install python3-setuptools python3-wheel python3-pip)" >&2; exit 1; }
stage=$(mktemp -d "${TMPDIR:-/tmp}/nz-wheel.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/nonzero/_lib" "$OUT"
# the package's sources only (no caches, no install-time _config.py), and the library itself
(cd "$SRC/python" && find nonzero -name '*.py' ! -name _config.py) | while read -r f; do
  cp "$SRC/python/$f" "$stage/$f"
done
cp "$SRC/python/README.md" "$stage/"
cp "$lib" "$stage/nonzero/_lib/libnonzero.so.0"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$SRC/python/pyproject.toml")
# a platform wheel (it carries a shared library): setuptools is told the distribution has
# compiled parts, so the tag names this Python and platform instead of py3-none-any
cat > "$stage/setup.py" <<PYEOF
from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(name="nonzero", version="$version",
      description="Sparse linear algebra on NVIDIA GPUs and CPUs: ctypes binding of libnonzero",
      long_description=open("README.md").read(), long_description_content_type="text/markdown",
      packages=["nonzero"], package_data={"nonzero": ["_lib/libnonzero.so.0"]},
      python_requires=">=3.8", install_requires=["numpy"],
      extras_require={"scipy": ["scipy"], "cuda": ["cupy"]},
      distclass=BinaryDistribution, zip_safe=False)
PYEOF
(cd "$stage" && "$PY" -m pip wheel --no-build-isolation --no-deps --no-index -q -w "$OUT" .) >&2
wheel=$(ls -t "$OUT"/nonzero-"$version"-*.whl | head -1)
echo "$wheel"
