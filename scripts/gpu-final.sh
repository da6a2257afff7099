#!/bin/bash
# gpu-final.sh: the closing GPU run: build, every GPU test, then the benchmarks (SpMV with all
# device formats and the planner, CG, SpGEMM, transpose/SpMM) and the >2^31-nonzero test, each
# step under its own time limit so one slow step cannot starve the rest. Logs under $OUT.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
MDIR=${NZ_CARRY_MATRICES:-$PWD/.carry/matrices}
B=build-gpu
S="$OUT/summary.txt"
note() { echo "$*" | tee -a "$S"; }
note "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DNZ_TEST_MATRIX_DIR=$MDIR > "$OUT/log.txt" 2>&1 &&
  cmake --build $B -j "$(nproc)" >> "$OUT/log.txt" 2>&1
note "build: rc=$?"
(cd $B && timeout 200 ctest -L gpu --output-on-failure --timeout 150) > "$OUT/ctest-gpu.log" 2>&1
note "ctest -L gpu: rc=$? :: $(grep -E 'tests passed|tests failed' "$OUT/ctest-gpu.log" | tail -1)"
grep -E "\*\*\*|check failed" "$OUT/ctest-gpu.log" | head -10 | tee -a "$S"
timeout ${T_SPMV:-170} $B/nz bench --no-real --runs 30 --markdown --csv "$OUT/bench.csv" \
  --png "$OUT/bench.png" > "$OUT/bench.md" 2>&1
note "bench (spmv): rc=$?"
timeout ${T_CG:-80} $B/nz bench --cg --backend gpu > "$OUT/bench-cg.md" 2>&1
note "bench --cg: rc=$?"
timeout ${T_SPGEMM:-60} $B/nz bench --spgemm --quick --no-real > "$OUT/bench-more.md" 2>&1
note "bench --spgemm --quick: rc=$?"
timeout ${T_SPMM:-50} $B/nz bench --spmm >> "$OUT/bench-more.md" 2>&1
note "bench --spmm: rc=$?"
NZ_TEST_HUGE=1 timeout ${T_HUGE:-120} $B/tests/gpu_test_huge >> "$OUT/log.txt" 2>&1
note "test_huge (NZ_TEST_HUGE=1): rc=$? :: $(grep -iE 'nonzeros|peak|passed|failed' "$OUT/log.txt" | tail -3 | tr '\n' ' ')"
cat "$S"
