#!/bin/bash
# gpu-sanitize.sh: compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over the GPU
# test binaries, each run under its own time limit; quick test mode. Logs under $OUT.
# Usage: scripts/gpu-sanitize.sh "tool:test tool:test ..."   (test = gpu_test_* name)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
MDIR=${NZ_CARRY_MATRICES:-$PWD/.carry/matrices}
B=build-gpu
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DNZ_TEST_MATRIX_DIR=$MDIR > "$OUT/build.log" 2>&1 &&
  cmake --build $B -j "$(nproc)" >> "$OUT/build.log" 2>&1 || { echo "build failed"; exit 1; }
for pair in $1; do
  tool=${pair%%:*}
  t=${pair#*:}
  NZ_TEST_QUICK=1 NZ_TEST_SANITIZER=1 NZ_MATRIX_DIR=$MDIR timeout ${T_EACH:-90} \
    compute-sanitizer --tool "$tool" --error-exitcode 99 "$B/tests/$t" > "$OUT/$tool-$t.log" 2>&1
  rc=$?
  echo "compute-sanitizer --tool $tool $t: rc=$rc :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool-$t.log" | tail -1)" | tee -a "$OUT/summary.txt"
done
