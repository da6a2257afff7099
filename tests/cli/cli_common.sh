# cli_common.sh: helpers sourced by the tests/cli/test_*.sh scripts (POSIX sh).
# The sourcing script sets NZ (the tool) and calls cli_setup first; cli_finish ends it.

cli_setup() {
    if [ -z "$NZ" ] || [ ! -x "$NZ" ]; then
        echo "usage: sh $0 NZ_BINARY DATA_DIR (nz binary '$NZ' not executable)" >&2
        exit 1
    fi
    FAILURES=0
    CHECKS=0
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/nzcli.XXXXXX") || exit 1
    trap 'rm -rf "$TMP"' EXIT
    trap 'exit 1' INT TERM
    OUT="$TMP/stdout"
    ERR="$TMP/stderr"
}

fail() {
    FAILURES=$((FAILURES + 1))
    echo "FAIL: $*" >&2
}

# Show what the last command printed (after a failure).
show_output() {
    sed 's/^/    stdout: /' "$OUT" | head -n 20 >&2
    sed 's/^/    stderr: /' "$ERR" | head -n 20 >&2
}

# run CMD...: run the command with output in $OUT / $ERR; sets RC.
run() {
    CHECKS=$((CHECKS + 1))
    "$@" >"$OUT" 2>"$ERR"
    RC=$?
}

# expect_ok DESCRIPTION CMD...: exit 0 and nothing on stderr.
expect_ok() {
    desc=$1
    shift
    run "$@"
    if [ "$RC" -ne 0 ]; then
        fail "$desc: exit $RC, expected 0"
        show_output
        return 1
    fi
    if [ -s "$ERR" ]; then
        fail "$desc: unexpected stderr"
        show_output
        return 1
    fi
    return 0
}

# expect_error CODE PATTERN DESCRIPTION CMD...: exit CODE ("any" = any non-zero), exactly one
# line on stderr that starts with "nz " and matches the grep -E PATTERN ("" = any), no crash.
expect_error() {
    code=$1
    pattern=$2
    desc=$3
    shift 3
    run "$@"
    if [ "$RC" -eq 0 ]; then
        fail "$desc: exit 0, expected an error"
        show_output
        return 1
    fi
    if [ "$RC" -gt 125 ]; then
        fail "$desc: crashed (exit $RC)"
        show_output
        return 1
    fi
    if [ "$code" != any ] && [ "$RC" -ne "$code" ]; then
        fail "$desc: exit $RC, expected $code"
        show_output
        return 1
    fi
    lines=$(wc -l <"$ERR")
    if [ "$lines" -ne 1 ]; then
        fail "$desc: $lines lines on stderr, expected exactly 1"
        show_output
        return 1
    fi
    if ! grep -q '^nz' "$ERR"; then
        fail "$desc: the error line does not start with 'nz'"
        show_output
        return 1
    fi
    if [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$ERR"; then
        fail "$desc: the error line does not match /$pattern/"
        show_output
        return 1
    fi
    return 0
}

# The value after KEY on a line of nz info output ("nonzeros        64" -> 64).
info_field() {
    sed -n "s/^$1  *//p" "$OUT" | head -n 1
}

# All entries of a Matrix Market array file are exactly zero (and there are $2 of them).
all_zero_vector() {
    awk -v n="$2" '
        /^%/ { next }
        !size { size = 1; if ($1 * $2 != n) bad = 1; next }
        { count++; if ($1 + 0 != 0) bad = 1 }
        END { exit (bad || count != n) }' "$1"
}

cli_finish() {
    if [ "$FAILURES" -ne 0 ]; then
        echo "$(basename "$0"): $FAILURES of $CHECKS checks failed" >&2
        exit 1
    fi
    echo "$(basename "$0"): all $CHECKS checks passed"
    exit 0
}
