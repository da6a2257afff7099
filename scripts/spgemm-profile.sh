#!/bin/bash
# spgemm-profile.sh: the hash SpGEMM on the suite's generated matrices, once plainly and once
# with --profile-bins (rows, C entries and ms per phase and bin), then the tunables that
# decide the dense rows, one run each (NZ_TUNE_* in the environment of the nz CLI, which sets them
# on its context through nz_tunables_parse; the library itself reads no environment).
# Usage (on the GPU machine, after a build): BUILD_DIR=build-gpu scripts/spgemm-profile.sh [quick]
B=${BUILD_DIR:-build-gpu}
G=/tmp/nzgen; mkdir -p $G
[ -f $G/r20.nzb ] || {
  $B/nz gen rmat --scale 20 --edge-factor 4 -o $G/r20.nzb
  $B/nz gen rmat --scale 18 --edge-factor 16 -o $G/r18.nzb
  $B/nz gen rmat --scale 16 --edge-factor 16 -o $G/r16.nzb
  $B/nz gen random --rows 1000000 --mean 8 -o $G/rand.nzb
  $B/nz gen fe3d --n 64 -o $G/fe.nzb
  $B/nz gen laplace3d --n 100 -o $G/lap.nzb
}
if [ "${1:-}" != quick ]; then
  for f in r20 r18 r16 rand fe lap; do
    echo "== $f"
    $B/nz spgemm $G/$f.nzb --alg hash
    $B/nz spgemm $G/$f.nzb --alg hash --profile-bins
  done
fi
for v in "NZ_TUNE_SPGEMM_SYMDENSE=0" "NZ_TUNE_SPGEMM_SYMDENSE=1" "NZ_TUNE_SPGEMM_DENSE=2" "NZ_TUNE_SPGEMM_DENSE=8"; do
  for f in r20 r18 r16 rand fe lap; do
    printf "%s %s: " $f $v
    env $v $B/nz spgemm $G/$f.nzb --alg hash | grep -o "symbolic [0-9.]* numeric [0-9.]*"
  done
done
