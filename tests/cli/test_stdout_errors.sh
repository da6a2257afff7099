# test_stdout_errors.sh: a result that cannot be written to standard output is a failure: exit
# non-zero with one line on stderr (issue 17, section 2). Uses /dev/full.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup

if [ ! -c /dev/full ] || ! [ -w /dev/full ]; then
    echo "test_stdout_errors: /dev/full not available; skipped"
    exit 77
fi
A="$DATA/bcsstk01.mtx"

# full CMD...: run with stdout on /dev/full; expect exit 1 and one "cannot write standard output"
full() {
    desc=$1
    shift
    CHECKS=$((CHECKS + 1))
    "$@" >/dev/full 2>"$ERR"
    rc=$?
    if [ "$rc" -ne 1 ]; then
        fail "$desc > /dev/full: exit $rc, expected 1"
        sed 's/^/    stderr: /' "$ERR" >&2
        return
    fi
    if [ "$(wc -l <"$ERR")" -ne 1 ] || ! grep -q '^nz.*cannot write standard output' "$ERR"; then
        fail "$desc > /dev/full: expected one 'cannot write standard output' line"
        sed 's/^/    stderr: /' "$ERR" >&2
    fi
}

full "info" "$NZ" info "$A"
full "spmv" "$NZ" spmv "$A"
full "spmv --list" "$NZ" spmv --list
full "cg" "$NZ" cg "$A"
full "spgemm" "$NZ" spgemm "$A"
full "gen summary" "$NZ" gen laplace2d --nx 4 -o "$TMP/g.mtx"
full "convert summary" "$NZ" convert "$A" -o "$TMP/c.mtx"
full "--version" "$NZ" --version
full "--help" "$NZ" --help
full "info --help" "$NZ" info --help
full "bench --quick" "$NZ" bench --backend cpu --quick --no-real --precision single --alg csr/serial

cli_finish
