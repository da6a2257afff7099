# test_acceptance.sh: the issue's acceptance check: `nz spmv --check` on every matrix of
# $NZ_MATRIX_DIR (else of tests/data), every format, both precisions, passes or is refused
# (exit 3); y round-trips.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
# Without the larger set (NZ_MATRIX_DIR, which CMake points at ../shared/matrices when present)
# the check runs on the small matrices of tests/data, so it never skips for want of matrices.
if [ -z "$NZ_MATRIX_DIR" ] || [ ! -d "$NZ_MATRIX_DIR" ]; then
    echo "NZ_MATRIX_DIR ${NZ_MATRIX_DIR:-is not set}${NZ_MATRIX_DIR:+ is not a directory}:" \
        "using the matrices of $DATA"
    NZ_MATRIX_DIR=$DATA
fi
cli_setup

matrices=0
passed=0
refused=0
for m in "$NZ_MATRIX_DIR"/*.mtx "$NZ_MATRIX_DIR"/*.mtx.gz; do
    [ -e "$m" ] || continue
    matrices=$((matrices + 1))
    name=$(basename "$m")
    for precision in double single; do
        # Every format and every algorithm in one invocation (the matrix is read once): one
        # line per run, "FORMAT/ALG relerr E" or "FORMAT[/ALG] refused: reason"; exit 0 unless
        # a run failed.
        run "$NZ" spmv "$m" --format all --alg all --check --precision $precision
        if [ "$RC" -ne 0 ]; then
            fail "$name $precision: nz spmv --format all --alg all --check exited $RC"
            show_output
            continue
        fi
        if grep -Evq '^[a-z]+(/[a-z-]+)?( relerr [-+.e0-9]+| refused: .+)$' "$OUT"; then
            fail "$name $precision: unexpected output"
            show_output
            continue
        fi
        for format in csr csc coo ell sell hyb bsr dia; do
            grep -Eq "^$format[/ ]" "$OUT" || fail "$name $precision: format $format did not run"
        done
        grep -q '^csr/[a-z-]* relerr ' "$OUT" || fail "$name $precision: CSR was refused"
        passed=$((passed + $(grep -c ' relerr ' "$OUT")))
        cp "$OUT" "$TMP/all"
        # A refusal seen there must also be a clean exit 3 when asked for alone.
        for label in $(sed -n 's/ refused: .*//p' "$TMP/all"); do
            refused=$((refused + 1))
            [ "$precision" = double ] || continue
            format=${label%%/*}
            alg=auto
            case $label in */*) alg=${label#*/} ;; esac
            expect_error 3 "" "$name: --format $format --alg $alg alone" \
                "$NZ" spmv "$m" --format "$format" --alg "$alg" --check --precision $precision
        done
        # y written with -o reads back exactly: A x - y_file is exactly zero (serial CSR both
        # times, so the sums are formed in the same order).
        expect_ok "$name $precision: -o" "$NZ" spmv "$m" --precision $precision --alg serial \
            -o "$TMP/y.mtx" || continue
        # In double the reference cancels exactly too (relerr 0); in single it does not, as
        # the reference uses the matrix read in double.
        check=--check
        [ $precision = single ] && check=
        expect_ok "$name $precision: --y" "$NZ" spmv "$m" --precision $precision --alg serial \
            --y "$TMP/y.mtx" --beta -1 $check -o "$TMP/z.mtx" || continue
        rows=$(awk '!/^%/ { print $1; exit }' "$TMP/y.mtx")
        { [ -z "$check" ] || grep -qx 'relerr 0.000e+00' "$OUT"; } &&
            all_zero_vector "$TMP/z.mtx" "$rows" ||
            fail "$name $precision: y did not round-trip exactly through -o / --y"
    done
done
[ "$matrices" -gt 0 ] || { echo "SKIP: no .mtx files in $NZ_MATRIX_DIR"; exit 77; }
echo "$matrices matrices: $passed runs passed --check, $refused refused"
cli_finish
