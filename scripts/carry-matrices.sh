#!/bin/sh
# carry-matrices.sh: copy ../shared/matrices into .carry/matrices (git-ignored) so the device tool
# can carry them to the GPU machine (the ../shared folder beside the checkout does not travel).
set -eu
cd "$(dirname "$0")/.."
src=${1:-../shared/matrices}
mkdir -p .carry/matrices
cp -u "$src"/*.mtx "$src"/*.mtx.gz "$src"/MANIFEST.tsv .carry/matrices/ 2>/dev/null || true
du -sh .carry/matrices
