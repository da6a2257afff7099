#!/bin/bash
# Usage (on the GPU machine, after a build): BUILD_DIR=build-gpu scripts/spgemm-profile.sh
# profile the hash SpGEMM per bin on the suite's generated matrices
B=${BUILD_DIR:-build-gpu}
OUT=${OUT:-gpu-out}; mkdir -p $OUT
G=/tmp/nzgen; mkdir -p $G
$B/nz gen rmat --scale 20 --edge-factor 4 -o $G/r20.nzb
$B/nz gen rmat --scale 18 --edge-factor 16 -o $G/r18.nzb
$B/nz gen rmat --scale 16 --edge-factor 16 -o $G/r16.nzb
$B/nz gen random --rows 1000000 --mean 8 -o $G/rand.nzb
$B/nz gen fe3d --n 64 -o $G/fe.nzb
$B/nz gen laplace3d --n 100 -o $G/lap.nzb
for f in r20 r18 r16 rand fe lap; do
  echo "== $f"
  $B/nz spgemm $G/$f.nzb --alg hash
  NZ_SPGEMM_PROFILE=1 $B/nz spgemm $G/$f.nzb --alg hash
done
# the dense-path factor (dense_from_bin) on the power-law products, one run each
for d in 0 1 2 4 8 16 32; do
  for f in r20 r18 r16; do
    printf "%s DENSE=%s: " $f $d
    NZ_TUNE_SPGEMM_DENSE=$d $B/nz spgemm $G/$f.nzb --alg hash | grep -o "symbolic [0-9.]* numeric [0-9.]*"
  done
done
