# test_cuda.sh: the nz tool on the GPU (--backend cuda): info, every CUDA format/algorithm with
# --check on generated and real matrices. Skips without a CUDA device.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup
if "$NZ" --version | grep -q 'CUDA devices visible: 0'; then
    echo "SKIP: no CUDA device (or a build without CUDA)"
    exit 77
fi

expect_ok "gen laplace2d" "$NZ" gen laplace2d --nx 30 --ny 20 -o "$TMP/lap.mtx"
expect_ok "info --backend cuda" "$NZ" info "$TMP/lap.mtx" --backend cuda
grep -q '^device ' "$OUT" || fail "info --backend cuda: no device line"
grep -Eq '^host-to-device .* GB/s\)$' "$OUT" || fail "info --backend cuda: no transfer time / GB/s"
expect_ok "spmv --list --backend cuda" "$NZ" spmv --list --backend cuda
grep -q '^csr/' "$OUT" || fail "--list --backend cuda: no CSR algorithm"

# Generated shapes: uniform short rows, power-law rows, a few very long rows, empty rows, wide.
expect_ok "gen rmat" "$NZ" gen rmat --scale 9 --edge-factor 8 --seed 4 -o "$TMP/rmat.mtx"
expect_ok "gen mixed" "$NZ" gen mixed --rows 3000 --short 3 --long-rows 3 --long-length 2500 \
    --seed 2 -o "$TMP/mixed.mtx"
expect_ok "gen random" "$NZ" gen random --rows 700 --cols 500 --mean 1 --seed 3 -o "$TMP/random.mtx"
expect_ok "gen rail" "$NZ" gen rail --rows 20 --cols 5000 --row-length 800 --seed 1 -o "$TMP/rail.mtx"
for m in lap rmat mixed random rail; do
    for precision in double single; do
        expect_ok "$m $precision: cuda --alg all" "$NZ" spmv "$TMP/$m.mtx" --backend cuda \
            --format all --alg all --check --precision $precision || continue
        grep -q '^csr/[a-z-]* relerr ' "$OUT" || fail "$m $precision: no CUDA CSR run"
        grep -Evq '^[a-z]+(/[a-z-]+)?( relerr [-+.e0-9]+| refused: .+)$' "$OUT" &&
            fail "$m $precision: unexpected output" && show_output
    done
    # the planner's format for the GPU (nz info names it) runs and checks out
    advised=$("$NZ" info "$TMP/$m.mtx" | sed -n 's/^planner cuda  *\([a-z]*\)\/.*/\1/p')
    expect_ok "$m: cuda --format auto" "$NZ" spmv "$TMP/$m.mtx" --backend cuda --format auto \
        --check && grep -Eq "^y = A x: .*, $advised/[a-z-]+ on cuda," "$OUT" ||
        fail "$m: cuda --format auto: not the advised format '$advised'"
    # alpha, beta and an input y; repeated runs start from the same y.
    expect_ok "$m: cpu y0" "$NZ" spmv "$TMP/$m.mtx" -o "$TMP/y0.mtx"
    expect_ok "$m: cuda alpha beta" "$NZ" spmv "$TMP/$m.mtx" --backend cuda --alg all \
        --alpha -1.5 --beta 0.25 --y "$TMP/y0.mtx" --check --repeat 3
done
# The GPU result written with -o matches the CPU's to the tolerance (through the files).
expect_ok "cuda -o" "$NZ" spmv "$TMP/rmat.mtx" --backend cuda -o "$TMP/yg.mtx"
expect_ok "cpu --y gpu result" "$NZ" spmv "$TMP/rmat.mtx" --y "$TMP/yg.mtx" --beta -1 -o "$TMP/d.mtx"
awk '!/^%/ && n++ > 0 { d = $1 < 0 ? -$1 : $1; if (d > 1e-12 * 100) bad = 1 } END { exit bad }' \
    "$TMP/d.mtx" || fail "cuda and cpu results differ beyond 1e-10"
# --verbose times on stderr only.
run "$NZ" spmv "$TMP/lap.mtx" --backend cuda --verbose --repeat 5
[ "$RC" -eq 0 ] && grep -q 'execute' "$ERR" && ! grep -q execute "$OUT" ||
    fail "cuda --verbose: timing not on stderr"

# Real matrices: every CUDA CSR algorithm, double always, single on every fourth matrix.
if [ -n "$NZ_MATRIX_DIR" ] && [ -d "$NZ_MATRIX_DIR" ]; then
    k=0
    for m in "$NZ_MATRIX_DIR"/*.mtx "$NZ_MATRIX_DIR"/*.mtx.gz; do
        [ -e "$m" ] || continue
        k=$((k + 1))
        precisions=double
        [ $((k % 4)) -eq 0 ] && precisions="double single"
        for precision in $precisions; do
            expect_ok "$(basename "$m") $precision: cuda csr --alg all" "$NZ" spmv "$m" \
                --backend cuda --format csr --alg all --check --precision $precision
        done
    done
fi

cli_finish
