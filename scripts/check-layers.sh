#!/bin/sh
# check-layers.sh: the include graph of src/ has no arrow back up and no circle.
# Usage: check-layers.sh [SOURCE_DIR]   (ctest unit/test_layers runs it on the source tree)
#
# Every folder below src/ has a layer (docs/ARCHITECTURE.md, "the layers"); a file may include
# headers of its own layer and of the layers below, never of a layer above:
#   7  src/mpi                            the distributed library (public API only)
#   6  src/ops src/io src/gen              the public API's entry points
#   5  src/plan src/solver                 host logic over the backend table
#   4  src/backend src/cpu src/cuda/*      the backend table and the two backends
#   3  src/format src/spgemm               matrices; what both backends' SpGEMM shares
#   2  src/core src/internal               context, errors, names; the shared internal headers
#   1  src/util                            below the library and its tools
# src/internal's headers are the interface every layer may include (backend.h, nzi.h, ...); what
# they include is checked like any other file. A quoted include is resolved as the compiler does
# (beside the file first, then the library's include folders: any header of that name below
# src/); system headers and include/ are outside the graph. A folder missing from the list above
# fails the check, so a new folder is placed on purpose. The graph of folders and the graph of
# files must have no circle (tsort). CMakeLists.txt reads rank() below (keep one
# "folders) echo N ;;" line per layer) and gives each layer's objects the include folders of
# that layer and those below only, so the build refuses an upward include too.
set -u
SRC=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$SRC" || exit 1
T=$(mktemp -d "${TMPDIR:-/tmp}/nz-layers.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

rank() {
    case $1 in
    src/mpi) echo 7 ;;
    src/ops | src/io | src/gen) echo 6 ;;
    src/plan | src/solver) echo 5 ;;
    src/backend | src/cpu | src/cuda | src/cuda/*) echo 4 ;;
    src/format | src/spgemm) echo 3 ;;
    src/core | src/internal) echo 2 ;;
    src/util) echo 1 ;;
    *) echo 0 ;;
    esac
}

FAILURES=0
fail() { FAILURES=$((FAILURES + 1)); echo "FAIL: $*"; }

find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort >"$T/files"
[ -s "$T/files" ] || { echo "FAIL: no sources below $SRC/src"; exit 1; }
: >"$T/file_edges"
: >"$T/dir_edges"
count=0
while read -r file; do
    dir=$(dirname "$file")
    from=$(rank "$dir")
    if [ "$from" -eq 0 ]; then
        fail "$dir has no layer in scripts/check-layers.sh (place it, after docs/ARCHITECTURE.md)"
        continue
    fi
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file" |
        while read -r name; do
            if [ -f "$dir/$name" ]; then
                target=$dir/$name
            else
                target=$(grep -E "(^|/)$(basename "$name")\$" "$T/files" | head -n 1)
                [ -n "$target" ] || continue # a system header or include/
            fi
            # normalise a/b/../c to a/c
            target=$(echo "$target" | sed -e ':a' -e 's#[^/]*/\.\./##' -e 'ta' -e 's#/\./#/#g')
            echo "$file $target" >>"$T/file_edges"
            tdir=$(dirname "$target")
            [ "$tdir" = "$dir" ] && continue
            echo "$dir $tdir" >>"$T/dir_edges"
            to=$(rank "$tdir")
            if [ "$to" -gt "$from" ]; then
                echo "FAIL: $file (layer $from) includes $target (layer $to): an arrow back up"
            fi
        done >>"$T/upward"
    count=$((count + 1))
done <"$T/files"

if [ -s "$T/upward" ]; then
    cat "$T/upward"
    FAILURES=$((FAILURES + $(wc -l <"$T/upward")))
fi
for graph in dir_edges file_edges; do
    if ! tsort "$T/$graph" >/dev/null 2>"$T/loop"; then
        fail "the include graph ($graph) has a circle:"
        sed 's/^/    /' "$T/loop"
    fi
done

if [ "$FAILURES" -ne 0 ]; then
    echo "check-layers: $FAILURES failure(s) over $count files"
    exit 1
fi
echo "check-layers: $count files, $(sort -u "$T/dir_edges" | wc -l) folder edges, no arrow back up, no circle"
