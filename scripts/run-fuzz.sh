#!/bin/sh
# run-fuzz.sh: run every libFuzzer target of a build for a while on its seed corpus; fail on a crash.
# Usage: scripts/run-fuzz.sh BUILD_DIR SECONDS
# The corpus is copied to a temporary directory so the repository is not modified; crash inputs
# are kept in BUILD_DIR/fuzz-artifacts/ (add each as a regression file under tests/data/mm/).
set -u
build=${1:?usage: run-fuzz.sh BUILD_DIR SECONDS}
seconds=${2:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/nz-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$build/fuzz-artifacts"
status=0
# Every target, each under libFuzzer's memory limits: an input that makes the library allocate
# more than 2 GiB in one request or in total RSS is a failure (issue 17: memory is bounded by
# the input and the context's budget, not by a hostile header).
targets=$(cd "$root/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//')
for target in $targets; do
    exe=$(find "$build" -type f -name "$target" -perm -u+x 2>/dev/null | head -n 1)
    if [ -z "$exe" ]; then
        echo "run-fuzz: $target not built in $build (configure with -DNZ_FUZZ=ON, CC=clang)" >&2
        status=1
        continue
    fi
    mkdir -p "$work/$target"
    if [ -d "$root/tests/fuzz/corpus/$target" ]; then
        cp "$root/tests/fuzz/corpus/$target/"* "$work/$target/" 2>/dev/null
    fi
    echo "run-fuzz: $target for ${seconds}s"
    if ! "$exe" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
            -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$target-" \
            "$work/$target" > "$work/$target.log" 2>&1; then
        tail -n 60 "$work/$target.log" >&2
        echo "run-fuzz: $target FAILED; inputs in $build/fuzz-artifacts/" >&2
        status=1
    else
        grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov:" "$work/$target.log" | tail -n 3
    fi
done
exit $status
