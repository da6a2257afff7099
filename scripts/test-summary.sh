#!/bin/sh
# test-summary.sh: after ctest, list every skipped test with its reason, so that "100% tests
# passed" does not hide what did not run. Usage: sh scripts/test-summary.sh BUILD_DIR
# A test skips by printing "SKIP: reason" on stdout and exiting 77 (tests/common/testutil.h's
# NZT_SKIP, the CLI scripts); the reason is read back from ctest's log of the last run. Always
# exits 0: the caller keeps ctest's exit status.
BUILD=${1:-build}
LOG=$BUILD/Testing/Temporary/LastTest.log
if [ ! -r "$LOG" ]; then
    echo "test-summary: no $LOG (did ctest run?)"
    exit 0
fi
# LastTest.log: per test "N/M Test: NAME", its output, then "<end of output>"; a skipped test's
# output holds its "SKIP: reason" line (ctest's log calls skips "Test Passed", so that line is it).
skipped=$(awk '
    /^[0-9]+\/[0-9]+ Test: / { name = $3; reason = ""; next }
    /^SKIP: / && name != "" && reason == "" { reason = substr($0, 7) }
    /^<end of output>/ {
        if (reason != "") print name " \342\200\224 " reason
        name = ""; reason = ""
    }
' "$LOG" | sort)
if [ -z "$skipped" ]; then
    echo "skipped: none"
else
    echo "$(echo "$skipped" | wc -l) test(s) skipped:"
    echo "$skipped" | sed 's/^/skipped: /'
fi
exit 0
