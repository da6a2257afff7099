#!/bin/bash
# gpu-check.sh: one call on the GPU machine: configure, build (all cores), GPU tests, sanitizers, bench.
# Usage: scripts/gpu-check.sh [STEPS]   STEPS: comma list of build,test,cpu,memcheck,racecheck,
#        initcheck,synccheck,bench,benchquick,benchnoreal,spmm,spgemm,hyspmm
#        (CTEST_REGEX restricts the test step to the GPU tests it matches)
#        (SANITIZE_TESTS restricts the sanitizer steps to the named gpu_test_* executables)
#        (default: build,test,memcheck,racecheck,benchquick)
# GPU_ARCH=80 builds into build-gpu80 with -DCMAKE_CUDA_ARCHITECTURES=80 (sm_80 code + compute_80
# PTX, which the driver JIT-compiles on newer GPUs): proof that no kernel needs a newer GPU.
# Logs go to $OUT (the device tool's output folder) or ./gpu-out. Real matrices are read from
# .carry/matrices (copied there from ../shared/matrices and carried; see scripts/carry-matrices.sh)
# or $NZ_CARRY_MATRICES. scripts/snapshot.sh puts a clean copy of HEAD (or of REV, or of the
# working tree: see there) in .carry/snap for runs
# while the working tree is mid-edit.
set -u
GPU_ARCH=${GPU_ARCH:-}
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
STEPS=${1:-build,test,memcheck,racecheck,benchquick}
JOBS=$(nproc)
BUILD=build-gpu${GPU_ARCH:-}
ARCHFLAG=${GPU_ARCH:+-DCMAKE_CUDA_ARCHITECTURES=$GPU_ARCH}
MDIR=${NZ_CARRY_MATRICES:-$PWD/.carry/matrices}
[ -d "$MDIR" ] || MDIR=""
summary="$OUT/summary${GPU_ARCH:+-$GPU_ARCH}.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
has() { case ",$STEPS," in *,"$1",*) return 0;; esac; return 1; }

note "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
if has build; then
  t0=$(date +%s)
  cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release $ARCHFLAG ${MDIR:+-DNZ_TEST_MATRIX_DIR=$MDIR} > "$OUT/build$GPU_ARCH.log" 2>&1 &&
  cmake --build $BUILD -j "$JOBS" >> "$OUT/build$GPU_ARCH.log" 2>&1
  rc=$?
  note "build: rc=$rc ($(( $(date +%s) - t0 )) s)"
  if [ $rc -ne 0 ]; then grep -E "error|Error" "$OUT/build$GPU_ARCH.log" | head -40; exit 1; fi
fi
if has test; then
  (cd $BUILD && ctest -L gpu ${CTEST_REGEX:+-R "$CTEST_REGEX"} --output-on-failure --timeout 900 -j ${CTEST_JOBS:-1}) > "$OUT/ctest-gpu$GPU_ARCH.log" 2>&1
  note "ctest -L gpu${CTEST_REGEX:+ -R $CTEST_REGEX} ($BUILD${ARCHFLAG:+, $ARCHFLAG}): rc=$? :: $(grep -E 'tests passed|tests failed' "$OUT/ctest-gpu$GPU_ARCH.log" | tail -1)"
  grep -E "Failed|\*\*\*|check failed" "$OUT/ctest-gpu$GPU_ARCH.log" | head -20 | tee -a "$summary"
fi
if has cpu; then
  (cd $BUILD && ctest -LE gpu -j "$JOBS" --output-on-failure) > "$OUT/ctest-cpu.log" 2>&1
  note "ctest (cpu): rc=$? :: $(grep -E 'tests passed|tests failed' "$OUT/ctest-cpu.log" | tail -1)"
fi
for tool in memcheck racecheck initcheck synccheck; do
  has $tool || continue
  # SANITIZE_TESTS="gpu_test_a gpu_test_b": only those (default: every GPU test)
  list=""
  for n in ${SANITIZE_TESTS:-}; do list="$list $BUILD/tests/$n"; done
  for t in ${list:-$BUILD/tests/gpu_test_*}; do
    [ -x "$t" ] || continue
    extra=""
    [ $tool = memcheck ] && extra="--leak-check full"
    NZ_TEST_QUICK=1 NZ_TEST_SANITIZER=1 NZ_MATRIX_DIR=$MDIR compute-sanitizer --tool $tool --error-exitcode 99 \
      $extra "$t" >> "$OUT/sanitizer.log" 2>&1
    rc=$?
    note "compute-sanitizer --tool $tool $(basename $t): rc=$rc :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1)"
  done
done
if has benchquick; then
  $BUILD/nz bench --quick --no-real --csv "$OUT/bench-quick.csv" > "$OUT/bench-quick.txt" 2>&1
  note "bench --quick: rc=$?"
  tail -25 "$OUT/bench-quick.txt"
fi
if has benchnoreal; then
  timeout 300 $BUILD/nz bench --no-real --runs 20 --csv "$OUT/bench-noreal.csv" > "$OUT/bench-noreal.txt" 2>&1
  note "bench --no-real: rc=$?"
  grep -E "planner|within|geometric" "$OUT/bench-noreal.txt" | tee -a "$summary"
fi
if has spmm; then
  timeout 240 $BUILD/nz bench --spmm --precision double > "$OUT/spmm.txt" 2>&1
  note "bench --spmm: rc=$?"
  grep -E "^(rmat|rail)" "$OUT/spmm.txt" | grep -v cusparse | tee -a "$summary"
fi
if has spgemm; then
  NZ_MATRIX_DIR=$MDIR timeout 400 $BUILD/nz bench --spgemm --precision double --runs 3 > "$OUT/spgemm.txt" 2>&1
  note "bench --spgemm: rc=$?"
  tail -12 "$OUT/spgemm.txt" | tee -a "$summary"
fi
if has hyspmm; then
  # the host's transparent huge pages (C's arrays ask for them) and the huge pages in use while
  # the bench runs, sampled every 0.2 s
  note "thp: enabled=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null) defrag=$(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null) kernel=$(uname -r)"
  ( while sleep 0.2; do grep AnonHugePages /proc/meminfo; done ) > "$OUT/hyspmm-thp.txt" 2>&1 &
  sampler=$!
  timeout 300 $BUILD/nz bench --spgemm --alg hyspmm --no-real --precision double --runs ${HYSPMM_RUNS:-3} > "$OUT/hyspmm.txt" 2>&1
  note "bench --spgemm --alg hyspmm: rc=$?"
  kill $sampler 2>/dev/null
  note "AnonHugePages max: $(sort -k2 -n "$OUT/hyspmm-thp.txt" | tail -1)"
  grep -E "stages ms|host GB/s|first call|geometric|overlap" "$OUT/hyspmm.txt" | tee -a "$summary"
fi
if has bench; then
  NZ_MATRIX_DIR=$MDIR $BUILD/nz bench --markdown --csv "$OUT/bench.csv" --png "$OUT/bench.png" > "$OUT/bench.md" 2>&1
  note "bench: rc=$?"
  tail -40 "$OUT/bench.md"
fi
echo "---- summary"
cat "$summary"
