#!/bin/bash
# spgemm-small-profile.sh: hash SpGEMM on a few small real matrices (3 timed calls and one
# NZ_SPGEMM_PROFILE=1 call each); after a build in build-gpu, with NZ_CARRY_MATRICES set.
B=build-gpu; M=$NZ_CARRY_MATRICES
for f in ca-GrQc.mtx bp_1600.mtx bp_400.mtx; do
  p=$(find $M -name "$f*" | head -1)
  for r in 1 2 3; do $B/nz spgemm $p --alg hash; done
  NZ_SPGEMM_PROFILE=1 $B/nz spgemm $p --alg hash
done
