# test_errors.sh: every error is one stderr line, non-zero exit, naming the file and line or the
# option; refusals exit with 3; nothing crashes.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup

# ---- malformed Matrix Market files: the line of the problem is named -------------------------
printf '%%%%MatrixMarket matrix coordinate real genral\n3 3 1\n1 1 1.0\n' >"$TMP/banner.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n%% comment\n3 three 1\n1 1 1.0\n' >"$TMP/size.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n2 2 2.0\n3 3 x7\n' >"$TMP/value.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n%%\n3 3 3\n1 1 1.0\n2 2 2.0\n4 3 1.0\n' >"$TMP/range.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n0 2 2.0\n3 3 1.0\n' >"$TMP/zero.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1.0\n2 2 2.0\n' >"$TMP/short.mtx"
printf '%%%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 2.0\n' >"$TMP/complex.mtx"
: >"$TMP/empty.mtx"
printf 'this is not a binary matrix file at all' >"$TMP/junk.nzb"

for cmd in info convert spmv; do
    extra=""
    [ $cmd = convert ] && extra="-o $TMP/out.mtx"
    # shellcheck disable=SC2086
    {
        expect_error 1 "banner\.mtx:1([^0-9]|$)" "$cmd: bad banner" "$NZ" $cmd "$TMP/banner.mtx" $extra
        expect_error 1 "size\.mtx:3([^0-9]|$)" "$cmd: bad size line" "$NZ" $cmd "$TMP/size.mtx" $extra
        expect_error 1 "value\.mtx:5([^0-9]|$)" "$cmd: bad value" "$NZ" $cmd "$TMP/value.mtx" $extra
        expect_error 1 "range\.mtx:6([^0-9]|$)" "$cmd: row out of range" "$NZ" $cmd "$TMP/range.mtx" $extra
        expect_error 1 "zero\.mtx:4([^0-9]|$)" "$cmd: zero index" "$NZ" $cmd "$TMP/zero.mtx" $extra
        expect_error 1 "short\.mtx" "$cmd: too few entries" "$NZ" $cmd "$TMP/short.mtx" $extra
        expect_error 1 "complex\.mtx" "$cmd: complex field" "$NZ" $cmd "$TMP/complex.mtx" $extra
        expect_error 1 "empty\.mtx" "$cmd: empty file" "$NZ" $cmd "$TMP/empty.mtx" $extra
        expect_error 1 "junk\.nzb" "$cmd: not a .nzb file" "$NZ" $cmd "$TMP/junk.nzb" $extra
        expect_error 1 "missing\.mtx" "$cmd: nonexistent file" "$NZ" $cmd "$TMP/missing.mtx" $extra
        expect_error 1 "missing\.mtx\.gz" "$cmd: nonexistent .gz" "$NZ" $cmd "$TMP/missing.mtx.gz" $extra
    }
done
[ -e "$TMP/out.mtx" ] && fail "convert wrote an output for a malformed input"

# ---- a good matrix for the remaining cases ----------------------------------------------------
A="$TMP/a.mtx"
"$NZ" gen laplace2d --nx 4 --ny 3 -o "$A" >/dev/null 2>&1 || { fail "gen laplace2d failed"; cli_finish; }

# Vectors of the wrong length or malformed name the file.
printf '%%%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n' >"$TMP/x3.mtx"
printf '%%%%MatrixMarket matrix array real general\n12 1\n1\n2\nnope\n' >"$TMP/xbad.mtx"
awk 'BEGIN { print "%%MatrixMarket matrix array real general"; print "12 2";
             for (i = 0; i < 24; i++) print i }' >"$TMP/x12x2.mtx"
expect_error 1 "x3\.mtx.*12" "spmv: x of the wrong length" "$NZ" spmv "$A" --x "$TMP/x3.mtx"
expect_error 1 "x3\.mtx.*12" "spmv: y of the wrong length" "$NZ" spmv "$A" --y "$TMP/x3.mtx" --beta 1
expect_error 1 "x12x2\.mtx" "spmv: x is a matrix" "$NZ" spmv "$A" --x "$TMP/x12x2.mtx"
expect_error 1 "xbad\.mtx:5([^0-9]|$)" "spmv: malformed x" "$NZ" spmv "$A" --x "$TMP/xbad.mtx"
expect_error 1 "nothere\.mtx" "spmv: missing x" "$NZ" spmv "$A" --x "$TMP/nothere.mtx"

# Outputs that cannot be written.
expect_error 1 "nodir" "convert: unwritable output" "$NZ" convert "$A" -o "$TMP/nodir/b.mtx"
expect_error 1 "nodir" "gen: unwritable output" "$NZ" gen banded --n 5 -o "$TMP/nodir/b.nzb"
expect_error 1 "nodir" "spmv: unwritable y" "$NZ" spmv "$A" -o "$TMP/nodir/y.mtx"
expect_error 2 "b\.txt" "convert: unknown extension" "$NZ" convert "$A" -o "$TMP/b.txt"
expect_error 2 "b\.txt" "gen: unknown extension" "$NZ" gen banded -o "$TMP/b.txt"

# ---- bad command lines: one line naming the option, exit 2 ------------------------------------
expect_error 2 "--frobnicate" "info: unknown option" "$NZ" info "$A" --frobnicate
expect_error 2 "--precision" "info: bad precision" "$NZ" info "$A" --precision half
expect_error 2 "--precision" "info: missing value" "$NZ" info "$A" --precision
expect_error 2 "--backend" "info: bad backend" "$NZ" info "$A" --backend tpu
expect_error 2 "input" "info: no file" "$NZ" info
expect_error 2 "extra" "info: two files" "$NZ" info "$A" extra
expect_error 2 "-o" "convert: no output" "$NZ" convert "$A"
expect_error 2 "--format" "convert: --format is not an option" "$NZ" convert "$A" -o "$TMP/c.mtx" --format ell
expect_error 2 "-o" "convert: -o without a value" "$NZ" convert "$A" -o

expect_error 2 "KIND" "gen: no kind" "$NZ" gen -o "$TMP/g.mtx"
expect_error 2 "hexagonal" "gen: unknown kind" "$NZ" gen hexagonal -o "$TMP/g.mtx"
expect_error 2 "-o" "gen: no output" "$NZ" gen laplace2d --nx 3
expect_error 2 "--scale" "gen: option of another kind" "$NZ" gen laplace2d --scale 3 -o "$TMP/g.mtx"
expect_error 2 "--nx" "gen: zero size" "$NZ" gen laplace2d --nx 0 -o "$TMP/g.mtx"
expect_error 2 "--nx" "gen: not a number" "$NZ" gen laplace2d --nx 4x -o "$TMP/g.mtx"
expect_error 2 "--nx" "gen: huge number" "$NZ" gen laplace2d --nx 99999999999999999999999 -o "$TMP/g.mtx"
expect_error 2 "--nx" "gen: missing value" "$NZ" gen laplace2d -o "$TMP/g.mtx" --nx
expect_error 2 "--seed" "gen: negative seed" "$NZ" gen random --seed -1 -o "$TMP/g.mtx"
expect_error 2 "--a" "gen: probability above 1" "$NZ" gen rmat --a 1.5 -o "$TMP/g.mtx"
expect_error 2 "--mean" "gen: NaN" "$NZ" gen random --mean nan -o "$TMP/g.mtx"
expect_error 2 "--a --b --c" "gen: probabilities sum above 1" "$NZ" gen rmat --a 0.5 --b 0.5 --c 0.5 -o "$TMP/g.mtx"
expect_error 2 "--b" "gen: --b of fe3d without a value" "$NZ" gen fe3d --n 3 -o "$TMP/g.mtx" --b
[ -e "$TMP/g.mtx" ] && fail "gen wrote an output despite a bad command line"

expect_error 2 "--repeat" "spmv: zero repeats" "$NZ" spmv "$A" --repeat 0
expect_error 2 "--repeat" "spmv: repeat not a number" "$NZ" spmv "$A" --repeat many
expect_error 2 "--alpha" "spmv: NaN alpha" "$NZ" spmv "$A" --alpha nan
expect_error 2 "--alpha" "spmv: overflowing alpha" "$NZ" spmv "$A" --alpha 1e999
expect_error 2 "--beta" "spmv: empty beta" "$NZ" spmv "$A" --beta ""
expect_error 2 "--precision" "spmv: bad precision" "$NZ" spmv "$A" --precision quad
expect_error 2 "--format" "spmv: unknown format" "$NZ" spmv "$A" --format jds
grep -q "dia, auto or all" "$ERR" || fail "spmv: unknown format: the message does not list auto"
expect_error 2 "--alg" "spmv: unknown algorithm" "$NZ" spmv "$A" --alg quantum
expect_error 2 "--bsr-block" "spmv: block too large" "$NZ" spmv "$A" --format bsr --bsr-block 33
expect_error 2 "--sell-chunk" "spmv: zero chunk" "$NZ" spmv "$A" --format sell --sell-chunk 0
expect_error 2 "--max-padding" "spmv: negative padding" "$NZ" spmv "$A" --max-padding -1
expect_error 2 "--threads" "spmv: negative threads" "$NZ" spmv "$A" --threads -2
expect_error 2 "--x" "spmv: --x without a value" "$NZ" spmv "$A" --x
expect_error 2 "-o" "spmv: -o with --format all" "$NZ" spmv "$A" --format all -o "$TMP/y.mtx"
expect_error 2 "-o" "spmv: -o with --alg all" "$NZ" spmv "$A" --alg all -o "$TMP/y.mtx"
expect_ok "spmv: subnormal alpha" "$NZ" spmv "$A" --alpha 1e-320 --check
expect_error 2 "--bogus" "spmv: unknown option" "$NZ" spmv "$A" --bogus
expect_error 2 "input" "spmv: no matrix" "$NZ" spmv --check
expect_error 2 "second" "spmv: two matrices" "$NZ" spmv "$A" second

# ---- a failing --check: exit 1, one line naming the matrix and the error ----------------------
# y computed in single, fed back with beta = -1, cancels to exactly 0 in single; the reference
# (the matrix read in double) keeps the rounding differences, so the relative error is 1.
"$NZ" gen random --rows 30 --mean 4 --seed 9 -o "$TMP/r.mtx" >/dev/null 2>&1 || fail "gen random"
expect_ok "single y" "$NZ" spmv "$TMP/r.mtx" --precision single --alg serial -o "$TMP/ys.mtx"
expect_error 1 "r\.mtx.*relerr 1\.000e\+00 > 1e-05" "spmv: failing --check" "$NZ" spmv "$TMP/r.mtx" \
    --precision single --alg serial --y "$TMP/ys.mtx" --beta -1 --check
grep -qx 'relerr 1.000e+00' "$OUT" || fail "failing --check: relerr line missing from stdout"
expect_error 1 "csr/[a-z]+ relerr" "spmv --format all: failing --check" "$NZ" spmv "$TMP/r.mtx" \
    --format all --precision single --y "$TMP/ys.mtx" --beta -1 --check
grep -q '^csr/[a-z]* relerr 1.000e+00 FAILED$' "$OUT" || fail "--format all: FAILED not marked"

# ---- refusals: exit 3 with the library's reason -----------------------------------------------
# An arrow matrix: row 0 is full, the rest is the diagonal. ELL pads every row to 40 entries and
# DIA needs 40 diagonals of 40, far beyond 3 x the CSR bytes.
awk 'BEGIN { n = 40; print "%%MatrixMarket matrix coordinate real general";
             print n, n, 2 * n - 1;
             for (j = 1; j <= n; j++) print 1, j, 1.0 / j;
             for (i = 2; i <= n; i++) print i, i, i }' >"$TMP/arrow.mtx"
expect_error 3 "" "spmv: ELL refused" "$NZ" spmv "$TMP/arrow.mtx" --format ell --check
expect_error 3 "" "spmv: DIA refused" "$NZ" spmv "$TMP/arrow.mtx" --format dia
expect_error 3 "" "spmv: SELL refused at a tight limit" "$NZ" spmv "$TMP/arrow.mtx" --format sell --max-padding 1.01
expect_ok "spmv: HYB accepts the arrow" "$NZ" spmv "$TMP/arrow.mtx" --format hyb --check
expect_ok "spmv: ELL accepted with a loose limit" "$NZ" spmv "$TMP/arrow.mtx" --format ell --max-padding 100 --check
expect_ok "spmv --format all: refusals are not failures" "$NZ" spmv "$TMP/arrow.mtx" --format all --check
grep -q '^ell refused: ' "$OUT" || fail "--format all: ell not reported refused"
grep -q '^dia refused: ' "$OUT" || fail "--format all: dia not reported refused"
expect_error 3 "merge" "spmv: a GPU algorithm on the CPU" "$NZ" spmv "$A" --alg merge
# One algorithm over all formats: those without it are refused, the others run.
expect_ok "spmv --format all --alg serial" "$NZ" spmv "$A" --format all --alg serial --check
grep -q '^csr/serial relerr ' "$OUT" || fail "--format all --alg serial: csr/serial did not run"
grep -q '^ell refused: ' "$OUT" || fail "--format all --alg serial: ell/serial not refused"
# The SIMD SELL kernel refuses chunk 32 in --alg all (a plan refusal, named with the algorithm).
expect_ok "spmv --format sell --alg all" "$NZ" spmv "$A" --format sell --alg all --check --max-padding 100
grep -q '^sell/simd refused: ' "$OUT" || fail "--alg all: sell/simd with chunk 32 not refused"
grep -q '^sell/parallel relerr ' "$OUT" || fail "--alg all: sell/parallel did not run"
expect_error 3 "chunk" "spmv: sell/simd chunk 32 alone" "$NZ" spmv "$A" --format sell --alg simd --max-padding 100
expect_ok "spmv: sell/simd chunk 8" "$NZ" spmv "$A" --format sell --alg simd --sell-chunk 8 --check

# The CUDA backend without a device (or without CUDA) is a refusal too.
if "$NZ" --version | grep -q 'CUDA devices visible: 0'; then
    expect_error 3 "" "spmv --backend cuda without a device" "$NZ" spmv "$A" --backend cuda
    expect_error 3 "" "info --backend cuda without a device" "$NZ" info "$A" --backend cuda
fi

cli_finish
