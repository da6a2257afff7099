#!/bin/sh
# test_headers.sh: the public headers (include/nonzero.h and each of its parts include/nonzero/*.h)
# each compile alone, twice in one file (include guards), as strict C11 and as C++, with C linkage
# in C++ (extern "C" guards), and none includes a CUDA or MPI header.
# Usage: test_headers.sh C_COMPILER SOURCE_DIR BUILD_DIR
set -u
CC=$1
SRC=$2
BUILD=$3
T=$(mktemp -d "${TMPDIR:-/tmp}/nz-headers.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
FAILURES=0
fail() { FAILURES=$((FAILURES + 1)); echo "FAIL: $*"; }

CXX=
for c in c++ g++ clang++; do
  if command -v $c >/dev/null 2>&1; then CXX=$c; break; fi
done
INC="-I$SRC/include -I$BUILD/include"

headers="nonzero.h"
for f in "$SRC"/include/nonzero/*.h; do
  headers="$headers nonzero/$(basename "$f")"
done
count=0
for h in $headers; do
  count=$((count + 1))
  file=$SRC/include/$h
  if grep -En '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](cuda|cu[a-z_]*[.]h|mpi)' "$file"; then
    fail "$h includes a CUDA or MPI header"
  fi
  # every function declaration lies between the header's extern "C" { and the closing guard
  awk -v h="$h" '/^extern "C" [{]$/ { open = 1; opened = 1; next }
                 open && /^#ifdef __cplusplus$/ { open = 0; closed = 1 }
                 /^[a-z_][a-z_ ]*[ *]+nz_[a-z0-9_]+[(]/ && !open { print h ":" FNR ": outside extern \"C\""; bad = 1 }
                 END { exit bad || !opened || !closed }' "$file" || fail "$h: extern \"C\" guards"
  printf '#include <%s>\n#include <%s>\nint nz_headers_test_unit;\n' "$h" "$h" > "$T/t.c"
  "$CC" -std=c11 -Wall -Wextra -pedantic -Werror -fsyntax-only $INC "$T/t.c" > "$T/log" 2>&1 ||
    { cat "$T/log"; fail "$h alone (C11)"; }
  if [ -n "$CXX" ]; then
    printf '#include <%s>\n#include <%s>\nint nz_headers_test_unit;\n' "$h" "$h" > "$T/t.cc"
    "$CXX" -std=c++11 -Wall -Wextra -pedantic -Werror -fsyntax-only $INC -x c++ "$T/t.cc" \
      > "$T/log" 2>&1 || { cat "$T/log"; fail "$h alone (C++)"; }
  fi
done
[ -n "$CXX" ] || echo "C++: skipped (no c++, g++ or clang++)"
if [ $FAILURES -ne 0 ]; then
  echo "$FAILURES failure(s)"; exit 1
fi
echo "headers: $count public headers compile alone (C11${CXX:+ and C++ with $CXX}), guarded, no CUDA or MPI"
