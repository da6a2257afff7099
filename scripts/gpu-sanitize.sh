#!/bin/bash
# gpu-sanitize.sh: compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over the GPU
# test binaries in quick test mode, many runs side by side on the one GPU, each under its own
# time limit. A slow tool/test pair can be split into N shards (NZ_TEST_SHARD=i/N: shard i runs
# every N-th test case), so that the whole test completes under the tool.
# Usage: scripts/gpu-sanitize.sh "tool:test[:N] tool:test[:N] ..."   (test = gpu_test_* name)
# Env: JOBS (parallel runs, default 12), T_EACH (seconds per run, default 500), SKIP_BUILD=1,
#      SHARDS="i j ..." (run only these shard indices of every tool:test:N given).
# Output under $OUT: summary.txt (one line per run, then per tool/test: complete or not) and
# sanitize-logs.tar.gz (every log).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
MDIR=${NZ_CARRY_MATRICES:-$PWD/.carry/matrices}
B=${BUILD_DIR:-build-gpu}
LOGS=$(mktemp -d)
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DNZ_TEST_MATRIX_DIR=$MDIR > "$LOGS/build.log" 2>&1 &&
    cmake --build $B -j "$(nproc)" >> "$LOGS/build.log" 2>&1 || { echo "build failed"; tail -30 "$LOGS/build.log"; exit 1; }
fi
jobs_file="$LOGS/jobs.txt"
: > "$jobs_file"
for spec in $1; do
  tool=${spec%%:*}
  rest=${spec#*:}
  t=${rest%%:*}
  n=1
  [ "$rest" != "$t" ] && n=${rest#*:}
  for ((i = 0; i < n; i++)); do
    # SHARDS="i j ...": only those shard indices (to finish the ones an earlier run cut)
    case " ${SHARDS:-$i} " in *" $i "*) echo "$tool $t $i $n" >> "$jobs_file";; esac
  done
done
run_one() {
  tool=$1 t=$2 i=$3 n=$4
  log="$LOGS/$tool-$t-$i.log"
  start=$(date +%s)
  # every log line starts with the seconds since the run began (where the time goes)
  NZ_TEST_SHARD=$i/$n NZ_TEST_QUICK=1 NZ_TEST_SANITIZER=1 NZ_MATRIX_DIR=$MDIR timeout "${T_EACH:-500}" \
    stdbuf -oL -eL compute-sanitizer --tool "$tool" --error-exitcode 99 "$B/tests/$t" 2>&1 |
    { SECONDS=0; while IFS= read -r l; do printf '%5d %s\n' "$SECONDS" "$l"; done; } > "$log"
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - start ))
  summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | cut -c7-)
  final=$(grep -E 'all checks passed|check\(s\) failed|SKIP' "$log" | tail -1 | cut -c7-)
  # a run cut by the time limit: the last case it reached (stdout is line-buffered)
  [ -z "$final" ] && final="reached: $(grep -v '=========' "$log" | tail -1 | cut -c1-86)"
  echo "$tool $t shard $i/$n: rc=$rc ${secs}s :: ${summary:-no summary} :: ${final:-no final line}"
}
export -f run_one
export LOGS MDIR B T_EACH
xargs -P "${JOBS:-12}" -L 1 bash -c 'run_one "$@"' _ < "$jobs_file" | sort > "$OUT/summary.txt"
# per tool/test: complete only when every shard exited 0 with a clean summary and all checks passed
awk '{ key = $1 " " $2; n[key]++; if ($0 ~ /rc=0 / && $0 ~ /(0 errors|0 hazards)/ && $0 ~ /all checks passed/) ok[key]++ }
     END { for (k in n) printf "%-40s %s (%d/%d shards clean)\n", k, (ok[k] == n[k] ? "COMPLETE, CLEAN" : "NOT CLEAN OR INCOMPLETE"), ok[k] + 0, n[k] }' \
  "$OUT/summary.txt" | sort >> "$OUT/summary.txt"
tar -C "$LOGS" -czf "$OUT/sanitize-logs.tar.gz" .
cat "$OUT/summary.txt"
