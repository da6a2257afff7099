# test_spgemm.sh: nz spgemm: a hand-computed product through files, B defaulting to A, --check
# on the CPU and (with a device) every GPU algorithm, row panels, argument and shape errors.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup

# A = [1 0 2; 0 3 0] (2 x 3), B = [1 2; 0 1; 4 0] (3 x 2): C = A B = [9 2; 0 3].
cat >"$TMP/a.mtx" <<'MTX'
%%MatrixMarket matrix coordinate real general
2 3 3
1 1 1
1 3 2
2 2 3
MTX
cat >"$TMP/b.mtx" <<'MTX'
%%MatrixMarket matrix coordinate real general
3 2 4
1 1 1
1 2 2
2 2 1
3 1 4
MTX
expect_ok "hand product" "$NZ" spgemm "$TMP/a.mtx" "$TMP/b.mtx" --alg cpu -o "$TMP/c.mtx"
grep -Eq '^C 2 x 2 nnz 3 products 4 alg cpu time ' "$OUT" || { fail "hand product: summary"; show_output; }
# The entries of C, as "row col value" with the value as a number.
entries=$(awk '/^%/ { next } !size { size = 1; next } { printf "%d %d %g;", $1, $2, $3 }' "$TMP/c.mtx")
[ "$entries" = "1 1 9;1 2 2;2 2 3;" ] || fail "hand product: C entries '$entries'"
expect_ok "hand product single" "$NZ" spgemm "$TMP/a.mtx" "$TMP/b.mtx" --alg cpu --precision single --check
grep -q '^check ok$' "$OUT" || { fail "hand product single: no 'check ok'"; show_output; }

# B defaults to A; --check against the CPU; a .nzb output reads back with the same nonzeros.
expect_ok "gen laplace2d" "$NZ" gen laplace2d --nx 40 --ny 30 -o "$TMP/lap.mtx"
expect_ok "lap squared" "$NZ" spgemm "$TMP/lap.mtx" --alg cpu --check -o "$TMP/lap2.nzb"
grep -Eq '^C 1200 x 1200 nnz [0-9]+ products [0-9]+ alg cpu ' "$OUT" || { fail "lap squared: summary"; show_output; }
nnz=$(sed -n 's/^C [0-9]* x [0-9]* nnz \([0-9]*\) .*/\1/p' "$OUT")
expect_ok "info of C" "$NZ" info "$TMP/lap2.nzb"
[ "$(info_field nonzeros)" = "$nnz" ] || fail "C read back: nonzeros $(info_field nonzeros), expected $nnz"
expect_ok "rmat" "$NZ" gen rmat --scale 9 --edge-factor 8 --seed 3 -o "$TMP/rmat.mtx"
# nz clamps --threads to the online CPUs (with a warning), so ask for 3 only where there are 3
threads=3
[ "$(nproc 2>/dev/null || echo 1)" -ge 3 ] || threads=2
expect_ok "rmat squared, $threads threads" "$NZ" spgemm "$TMP/rmat.mtx" --alg cpu --threads $threads --check
if [ -f "$DATA/west0067.mtx" ]; then
    expect_ok "west0067 squared" "$NZ" spgemm "$DATA/west0067.mtx" --alg cpu --check
fi

# Errors: one line on stderr, the documented exit status.
# --profile: the library's stage data, printed by the tool (the library itself prints nothing)
expect_ok "lap squared --profile" "$NZ" spgemm "$TMP/lap.mtx" --alg cpu --profile
grep -Eq '^profile \(cpu\): wall [0-9.]+ ms, stages ms: symbolic [0-9.]+ numeric [0-9.]+ \| sum ' "$OUT" ||
    { fail "--profile: no stage line"; show_output; }
expect_ok "lap squared, no --profile" "$NZ" spgemm "$TMP/lap.mtx" --alg cpu
grep -q '^profile' "$OUT" && { fail "profile printed without --profile"; show_output; }

expect_error 1 'A is 2 x 3 and B is 2 x 3' "shape mismatch" "$NZ" spgemm "$TMP/a.mtx" "$TMP/a.mtx"
expect_error 2 'unknown algorithm' "unknown --alg" "$NZ" spgemm "$TMP/a.mtx" --alg quick
expect_error 2 'gpu-mem-limit' "bad --gpu-mem-limit" "$NZ" spgemm "$TMP/a.mtx" --gpu-mem-limit lots
expect_error 2 '' "missing A" "$NZ" spgemm
expect_error 2 '' "extra argument" "$NZ" spgemm "$TMP/a.mtx" "$TMP/b.mtx" "$TMP/b.mtx"
expect_error 2 '' "unknown option" "$NZ" spgemm "$TMP/a.mtx" --fast
expect_error 1 'missing.mtx' "missing file" "$NZ" spgemm "$TMP/missing.mtx"
expect_ok "--help" "$NZ" spgemm --help
grep -q 'usage: nz spgemm' "$OUT" || fail "--help: no usage line"

if "$NZ" --version | grep -q 'CUDA devices visible: 0'; then
    for alg in hash esc hyspmm; do
        expect_error 3 '' "$alg without a device" "$NZ" spgemm "$TMP/lap.mtx" --alg $alg
    done
    expect_ok "auto without a device" "$NZ" spgemm "$TMP/lap.mtx"
    grep -q ' alg cpu ' "$OUT" || fail "auto without a device did not run the CPU"
else
    expect_ok "auto with a device" "$NZ" spgemm "$TMP/rmat.mtx" --check
    grep -q ' alg hash ' "$OUT" || fail "auto with a device did not run hash"
    for alg in hash esc hyspmm; do
        for precision in double single; do
            expect_ok "$alg $precision rmat" "$NZ" spgemm "$TMP/rmat.mtx" --alg $alg --check \
                --precision $precision
            expect_ok "$alg $precision hand" "$NZ" spgemm "$TMP/a.mtx" "$TMP/b.mtx" --alg $alg \
                --check --precision $precision
        done
    done
    # Out of core: a budget of ~250 KB forces many row panels (A is about 60 KB on the device).
    expect_ok "gen rmat 11" "$NZ" gen rmat --scale 11 --edge-factor 8 --seed 5 -o "$TMP/rmat11.mtx"
    expect_ok "hash in panels" "$NZ" spgemm "$TMP/rmat11.mtx" --alg hash --gpu-mem-limit 400000 --check
    panels=$(sed -n 's/.* panels \([0-9]*\).*/\1/p' "$OUT" | head -n 1)
    [ "${panels:-0}" -gt 2 ] || { fail "hash in panels: $panels panels"; show_output; }
    grep -q ' overlap [0-9.]*' "$OUT" || fail "hash in panels: no overlap figure"
    expect_error 1 'budget' "budget below A" "$NZ" spgemm "$TMP/rmat11.mtx" --alg hash --gpu-mem-limit 1000
fi
cli_finish
