#!/bin/sh
# fuzz-campaign.sh: a long libFuzzer campaign over every target, one core, low priority, with logs and a summary.
# Usage: scripts/fuzz-campaign.sh BUILD_DIR TOTAL_SECONDS [TARGET...]
#   BUILD_DIR      a build configured with CC=clang -DNZ_FUZZ=ON (make fuzz makes build-fuzz)
#   TOTAL_SECONDS  wall time for the whole campaign, split evenly over the targets, which run one
#                  after another in rounds of at most 10 minutes each (one process, nice 19), so
#                  the campaign never takes more than one core of a shared machine
# The corpus grows in BUILD_DIR/campaign/corpus/TARGET (seeded from tests/fuzz/corpus/TARGET and
# kept across runs); logs in BUILD_DIR/campaign/logs; crash inputs in BUILD_DIR/campaign/crashes.
# BUILD_DIR/campaign/summary.tsv gets one line per round: target, seconds, executions, exec/s,
# coverage (libFuzzer "cov", instrumented edges reached), features, corpus size, result.
# Exit status 1 if any round found a crash, leak or timeout.
set -u
build=${1:?usage: fuzz-campaign.sh BUILD_DIR TOTAL_SECONDS [TARGET...]}
total=${2:?usage: fuzz-campaign.sh BUILD_DIR TOTAL_SECONDS [TARGET...]}
shift 2
targets=${*:-fuzz_mm fuzz_mm_gz fuzz_binary fuzz_csr fuzz_convert}
root=$(cd "$(dirname "$0")/.." && pwd)
camp="$build/campaign"
mkdir -p "$camp/logs" "$camp/crashes"
[ -f "$camp/summary.tsv" ] || printf 'target\tseconds\texecutions\texec_per_s\tcov\tft\tcorpus\tresult\n' > "$camp/summary.tsv"

count=0
for t in $targets; do count=$((count + 1)); done
per_target=$((total / count))
round=600
[ "$per_target" -lt "$round" ] && round=$per_target
[ "$round" -lt 1 ] && round=1
status=0
left=$per_target
while [ "$left" -gt 0 ]; do
    slice=$round
    [ "$slice" -gt "$left" ] && slice=$left
    for t in $targets; do
        exe="$build/tests/$t"
        [ -x "$exe" ] || exe=$(find "$build" -type f -name "$t" -perm -u+x 2>/dev/null | head -n 1)
        if [ -z "$exe" ] || [ ! -x "$exe" ]; then
            echo "fuzz-campaign: $t not built in $build" >&2
            status=1
            continue
        fi
        corpus="$camp/corpus/$t"
        if [ ! -d "$corpus" ]; then
            mkdir -p "$corpus"
            cp "$root/tests/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null
        fi
        log="$camp/logs/$t-$(date +%Y%m%d-%H%M%S).log"
        max_len=65536
        [ "$t" = fuzz_convert ] && max_len=4096
        # one OpenMP thread: the campaign uses one core of a shared machine
        start=$(date +%s)
        TMPDIR="$camp" OMP_NUM_THREADS=1 nice -n 19 "$exe" -max_total_time="$slice" -timeout=20 -rss_limit_mb=2048 \
            -max_len="$max_len" -print_final_stats=1 -reload=0 \
            -artifact_prefix="$camp/crashes/$t-" "$corpus" > "$log" 2>&1
        rc=$?
        secs=$(( $(date +%s) - start ))
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
        ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | sed 's/ft: //')
        files=$(ls "$corpus" | wc -l)
        result=ok
        if [ "$rc" -ne 0 ]; then result="FAILED(rc=$rc)"; status=1; fi
        [ -n "$execs" ] || execs=0
        rate=0
        [ "$secs" -gt 0 ] && rate=$((execs / secs))
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$secs" "$execs" "$rate" "${cov:-?}" "${ft:-?}" \
            "$files" "$result" >> "$camp/summary.tsv"
        if [ "$rc" -ne 0 ]; then
            tail -n 40 "$log" >&2
            echo "fuzz-campaign: $t failed; input in $camp/crashes/ (make it a regression test)" >&2
        fi
    done
    left=$((left - slice))
done
# totals per target
awk -F'\t' 'NR > 1 { e[$1] += $3; s[$1] += $2; c[$1] = $5; n[$1] = $7; if ($8 != "ok") bad[$1]++ }
    END { for (t in e) { printf "%-13s %6ds %12d execs  cov %s  corpus %s  failures %d\n", t, s[t], e[t], c[t], n[t], bad[t] + 0; all += e[t] }
          printf "total executions %d\n", all }' "$camp/summary.tsv"
exit $status
