#!/bin/sh
# snapshot.sh: export HEAD into .carry/snap (git-ignored) so a GPU run can use a clean tree while
# the working tree is being edited: run `cd .carry/snap && NZ_CARRY_MATRICES=$PWD/../matrices
# scripts/gpu-check.sh ...` on the device.
set -eu
cd "$(dirname "$0")/.."
rm -rf .carry/snap
mkdir -p .carry/snap
git archive HEAD | tar -x -C .carry/snap
git rev-parse --short HEAD > .carry/snap/REVISION
echo "snapshot of $(cat .carry/snap/REVISION) in .carry/snap"
