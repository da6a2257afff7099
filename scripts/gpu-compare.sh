#!/bin/bash
# gpu-compare.sh: the before/after performance set of one revision on the GPU machine, so a
# restructuring or a new kernel can be compared with the revision before it on the same device:
# build (one architecture, default 90), `nz bench --quick`, `nz bench --spgemm`, the hySpMM
# pipeline, CG against CuPy, and (STEPS spmv) the generated SpMV suite in both precisions.
# Usage: scripts/gpu-compare.sh [STEPS]  STEPS: comma list of build,quick,real,spgemm,hyspmm,cg,
#        memcheck,spmv (SPMV_RUNS: runs per kernel, default 20; SHARD for memcheck, default 0/6)
# Logs go to $OUT/<TAG>-*.txt (TAG defaults to the short revision).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
STEPS=${1:-build,quick,spgemm,hyspmm,cg}
ARCH=${GPU_ARCH:-90}
BUILD=build-cmp$ARCH
TAG=${TAG:-$(git rev-parse --short HEAD 2>/dev/null || echo tree)}
MDIR=${NZ_CARRY_MATRICES:-$PWD/.carry/matrices}
[ -d "$MDIR" ] || MDIR=""
summary="$OUT/$TAG-summary.txt"
note() { echo "$*" | tee -a "$summary"; }
has() { case ",$STEPS," in *,"$1",*) return 0;; esac; return 1; }
PY=$(command -v python3)

note "== $TAG $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
if has build; then
  t0=$(date +%s)
  cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=$ARCH \
    ${MDIR:+-DNZ_TEST_MATRIX_DIR=$MDIR} > "$OUT/$TAG-build.log" 2>&1 &&
    cmake --build $BUILD -j "$(nproc)" >> "$OUT/$TAG-build.log" 2>&1
  rc=$?
  note "build (-DCMAKE_CUDA_ARCHITECTURES=$ARCH): rc=$rc ($(( $(date +%s) - t0 )) s)"
  [ $rc -eq 0 ] || { grep -E "error" "$OUT/$TAG-build.log" | head -30; exit 1; }
fi
if has quick; then
  $BUILD/nz bench --quick --no-real > "$OUT/$TAG-bench-quick.txt" 2>&1
  note "nz bench --quick --no-real: rc=$?"; grep -iE "geometric|summary|planner" "$OUT/$TAG-bench-quick.txt" | tee -a "$summary"
fi
if has real; then
  # the real matrices (NZ_MATRIX_DIR) with the tiny generated ones, every kernel and cuSPARSE in
  # the same process: the per-matrix ratios to compare between revisions
  NZ_MATRIX_DIR=$MDIR timeout 300 $BUILD/nz bench --quick --runs ${REAL_RUNS:-20} --csv "$OUT/$TAG-real.csv" > "$OUT/$TAG-real.txt" 2>&1
  note "nz bench --quick --runs ${REAL_RUNS:-20} (real matrices): rc=$?"; grep -iE "geometric|summary" "$OUT/$TAG-real.txt" | tee -a "$summary"
fi
if has spgemm; then
  NZ_MATRIX_DIR=$MDIR timeout 300 $BUILD/nz bench --spgemm --precision double --runs 3 > "$OUT/$TAG-spgemm.txt" 2>&1
  note "nz bench --spgemm --precision double --runs 3: rc=$?"; tail -6 "$OUT/$TAG-spgemm.txt" | tee -a "$summary"
fi
if has hyspmm; then
  timeout 240 $BUILD/nz bench --spgemm --alg hyspmm --no-real --precision double --runs ${HYSPMM_RUNS:-1} > "$OUT/$TAG-hyspmm.txt" 2>&1
  note "nz bench --spgemm --alg hyspmm --no-real --precision double --runs ${HYSPMM_RUNS:-1}: rc=$?"; tail -14 "$OUT/$TAG-hyspmm.txt" | tee -a "$summary"
fi
if has cg; then
  $PY bench/cupy_cg.py 200 200 5 > "$OUT/$TAG-cupy-cg.txt" 2>&1
  note "python3 bench/cupy_cg.py 200 200 5: rc=$? :: $(tail -1 "$OUT/$TAG-cupy-cg.txt")"
  timeout 240 $BUILD/nz bench --cg --backend gpu > "$OUT/$TAG-cg.txt" 2>&1
  note "nz bench --cg --backend gpu: rc=$?"; grep -iE "laplace|cupy|planner" "$OUT/$TAG-cg.txt" | tee -a "$summary"
fi
if has memcheck; then
  # the SpMV layouts and every CSR form under compute-sanitizer, one shard of the quick suite
  # (gpu_test_spmv_csr: the algorithms on every matrix; _forms: the plan forms; _api: plans, wraps)
  for t in gpu_test_spmv_csr gpu_test_spmv_csr_forms gpu_test_spmv_csr_api; do
    NZ_TEST_QUICK=1 NZ_TEST_SANITIZER=1 NZ_TEST_SHARD=${SHARD:-0/6} timeout 200 compute-sanitizer --tool memcheck \
      --error-exitcode 99 $BUILD/tests/$t > "$OUT/$TAG-memcheck-$t.txt" 2>&1
    note "compute-sanitizer --tool memcheck $t (NZ_TEST_QUICK=1 NZ_TEST_SHARD=${SHARD:-0/6}): rc=$? :: $(grep -E 'ERROR SUMMARY' "$OUT/$TAG-memcheck-$t.txt" | tail -1)"
  done
fi
if has spmv; then
  # SPMV_ALGS (e.g. vector,light-vector,light-warp) and SPMV_PRECISION narrow the run
  timeout ${SPMV_TIMEOUT:-420} $BUILD/nz bench --no-real --runs ${SPMV_RUNS:-20} ${SPMV_ALGS:+--alg $SPMV_ALGS} \
    ${SPMV_PRECISION:+--precision $SPMV_PRECISION} --csv "$OUT/$TAG-spmv.csv" > "$OUT/$TAG-spmv.txt" 2>&1
  note "nz bench --no-real --runs ${SPMV_RUNS:-20}${SPMV_ALGS:+ --alg $SPMV_ALGS}${SPMV_PRECISION:+ --precision $SPMV_PRECISION}: rc=$?"
  grep -iE "geometric|planner|within" "$OUT/$TAG-spmv.txt" | tee -a "$summary"
fi
echo "---- summary"; cat "$summary"
