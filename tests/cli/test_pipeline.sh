# test_pipeline.sh: gen -> info -> convert -> spmv on tiny matrices of every kind; vectors
# round-trip exactly through files.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup

# kind | parameters | rows | nonzeros ("-" = not known in closed form)
cat >"$TMP/kinds" <<'KINDS'
laplace2d|--nx 4 --ny 4|16|64
laplace2d|--nx 5 --ny 3|15|59
laplace3d|--n 3|27|135
laplace3d|--nx 2 --ny 3 --nz 4|24|116
fe3d|--n 4|27|-
rmat|--scale 5 --edge-factor 4 --seed 3|32|-
random|--rows 40 --cols 30 --mean 3 --seed 7|40|-
rail|--rows 5 --cols 200 --row-length 20 --seed 2|5|-
mixed|--rows 60 --short 2 --long-rows 2 --long-length 30 --seed 5|60|-
banded|--n 10 --lower 2 --upper 1|10|36
convdiff2d|--nx 5 --ny 3 --peclet 0.5|15|59
convdiff3d|--n 3 --peclet 2|27|135
convdiff3d|--nx 2 --ny 3 --nz 4|24|116
elasticity3d|--n 2|54|1764
elasticity3d|--n 3 --poisson-ratio 0.45|144|6300
KINDS

i=0
while IFS='|' read -r kind params rows nnz; do
    i=$((i + 1))
    A="$TMP/a$i.mtx"
    # shellcheck disable=SC2086
    expect_ok "gen $kind $params" "$NZ" gen $kind $params -o "$A" || continue
    [ -s "$A" ] || fail "gen $kind: $A is empty"

    expect_ok "info $kind" "$NZ" info "$A" || continue
    shape=$(info_field shape)
    got_rows=${shape%% x *}
    [ "$got_rows" = "$rows" ] || fail "info $kind $params: $got_rows rows, expected $rows"
    got_nnz=$(info_field nonzeros)
    [ "$nnz" = - ] || [ "$got_nnz" = "$nnz" ] ||
        fail "info $kind $params: $got_nnz nonzeros, expected $nnz"
    for key in "row length" "empty rows" bandwidth diagonals "hot columns" symmetric "memory csr" \
        "memory dia" "read time"; do
        grep -q "^$key " "$OUT" || fail "info $kind: no '$key' line"
    done
    case $kind in laplace* | fe3d | elasticity3d | banded)
        [ "$kind" = banded ] || [ "$(info_field symmetric)" = yes ] ||
            fail "info $kind: not reported symmetric" ;;
    convdiff*)
        [ "$(info_field symmetric)" = no ] || fail "info $kind: reported symmetric" ;;
    esac
    # the planner's advice for both backends: format/algorithm and the reason
    grep -Eq '^planner cpu +[a-z]+/[a-z-]+ \(format ' "$OUT" || fail "info $kind: no cpu planner advice"
    grep -Eq '^planner cuda +([a-z]+/[a-z-]+ \(format |none \()' "$OUT" ||
        fail "info $kind: no cuda planner line"

    # The same matrix through every file kind gives the same product, bit for bit.
    expect_ok "spmv $kind" "$NZ" spmv "$A" --check -o "$TMP/y$i.mtx" || continue
    grep -q '^relerr ' "$OUT" || fail "spmv --check $kind: no relerr line"
    for ext in nzb mtx.gz conv.mtx; do
        B="$TMP/b$i.$ext"
        expect_ok "convert $kind to .$ext" "$NZ" convert "$A" -o "$B" || continue
        expect_ok "info $kind .$ext" "$NZ" info "$B" &&
            [ "$(info_field nonzeros)" = "$got_nnz" ] || fail "info .$ext: nonzeros differ"
        expect_ok "spmv $kind .$ext" "$NZ" spmv "$B" --check -o "$TMP/y$i.$ext.mtx" &&
            cmp -s "$TMP/y$i.mtx" "$TMP/y$i.$ext.mtx" ||
            fail "spmv on the .$ext copy of $kind differs"
    done
    # gen straight to binary gives the same matrix.
    # shellcheck disable=SC2086
    expect_ok "gen $kind .nzb" "$NZ" gen $kind $params -o "$TMP/g$i.nzb" &&
        expect_ok "spmv gen .nzb" "$NZ" spmv "$TMP/g$i.nzb" -o "$TMP/g$i.y.mtx" &&
        cmp -s "$TMP/y$i.mtx" "$TMP/g$i.y.mtx" || fail "gen $kind -o .nzb differs from .mtx"

    for precision in double single; do
        expect_ok "spmv --format all $kind $precision" \
            "$NZ" spmv "$A" --format all --check --precision $precision || continue
        [ "$(wc -l <"$OUT")" -eq 8 ] || fail "spmv --format all $kind: not 8 lines"
        grep -Evq '^[a-z]+(/[a-z-]+ relerr [-+.e0-9]+| refused: .*)$' "$OUT" &&
            fail "spmv --format all $kind: unexpected line" && show_output
        grep -q '^csr/' "$OUT" || fail "spmv --format all $kind: csr did not run"
    done
    # --format auto runs the format nz info advises for the CPU (and checks out)
    advised=$("$NZ" info "$A" | sed -n 's/^planner cpu  *\([a-z]*\)\/.*/\1/p')
    expect_ok "spmv --format auto $kind" "$NZ" spmv "$A" --format auto --check &&
        grep -Eq "^y = A x: .*, $advised/[a-z-]+ on cpu," "$OUT" ||
        fail "spmv --format auto $kind: not the advised format '$advised'"
    expect_ok "spmv --format all --alg all $kind" "$NZ" spmv "$A" --format all --alg all --check &&
        grep -q '^csr/serial relerr ' "$OUT" && grep -q '^csr/parallel relerr ' "$OUT" ||
        fail "spmv --format all --alg all $kind: csr/serial or csr/parallel missing"
done <"$TMP/kinds"

# gen is deterministic, and the seed matters.
expect_ok "gen random seed 1" "$NZ" gen random --rows 50 --mean 4 --seed 1 -o "$TMP/r1.mtx"
expect_ok "gen random seed 1 again" "$NZ" gen random --rows 50 --mean 4 --seed 1 -o "$TMP/r1b.mtx"
expect_ok "gen random seed 2" "$NZ" gen random --rows 50 --mean 4 --seed 2 -o "$TMP/r2.mtx"
cmp -s "$TMP/r1.mtx" "$TMP/r1b.mtx" || fail "gen random is not deterministic"
cmp -s "$TMP/r1.mtx" "$TMP/r2.mtx" && fail "gen random ignores --seed"

# convdiff with --peclet 0 is the Laplacian, byte for byte; a negative Peclet number is refused.
expect_ok "gen convdiff3d --peclet 0" "$NZ" gen convdiff3d --nx 3 --ny 4 --nz 2 --peclet 0 -o "$TMP/c0.mtx"
expect_ok "gen laplace3d for convdiff" "$NZ" gen laplace3d --nx 3 --ny 4 --nz 2 -o "$TMP/l0.mtx"
cmp -s "$TMP/c0.mtx" "$TMP/l0.mtx" || fail "convdiff3d --peclet 0 differs from laplace3d"
expect_ok "gen convdiff2d --peclet 0" "$NZ" gen convdiff2d --nx 5 --peclet 0 -o "$TMP/c0.mtx"
expect_ok "gen laplace2d for convdiff" "$NZ" gen laplace2d --nx 5 -o "$TMP/l0.mtx"
cmp -s "$TMP/c0.mtx" "$TMP/l0.mtx" || fail "convdiff2d --peclet 0 differs from laplace2d"
expect_error 2 "--peclet" "gen convdiff3d negative peclet" \
    "$NZ" gen convdiff3d --n 3 --peclet -1 -o "$TMP/c1.mtx"
expect_error 2 "--peclet" "gen laplace3d --peclet" "$NZ" gen laplace3d --n 3 --peclet 1 -o "$TMP/c1.mtx"

# fe3d writes the load vector and the exact solution with one entry per unknown.
expect_ok "gen fe3d --b --u" "$NZ" gen fe3d --n 4 -o "$TMP/fe.mtx" --b "$TMP/b.mtx" --u "$TMP/u.mtx"
expect_ok "spmv fe3d x = u" "$NZ" spmv "$TMP/fe.mtx" --x "$TMP/u.mtx" --y "$TMP/b.mtx" \
    --beta -1 --check -o "$TMP/res.mtx"
[ "$(grep -cv '^%' "$TMP/res.mtx")" -eq 28 ] || fail "fe3d: residual has not 27 entries"

# elasticity3d writes the load (rows x 1) and the 6 rigid-body modes (rows x 6, column-major);
# --poisson-ratio 0 is the default 0.3.
expect_ok "gen elasticity3d --rhs --modes" "$NZ" gen elasticity3d --n 3 -o "$TMP/el.mtx" \
    --rhs "$TMP/el_b.mtx" --modes "$TMP/el_modes.mtx"
[ "$(grep -v '^%' "$TMP/el_b.mtx" | head -1)" = "144 1" ] || fail "elasticity3d: --rhs is not 144 x 1"
[ "$(grep -v '^%' "$TMP/el_modes.mtx" | head -1)" = "144 6" ] || fail "elasticity3d: --modes is not 144 x 6"
[ "$(grep -cv '^%' "$TMP/el_modes.mtx")" -eq 865 ] || fail "elasticity3d: --modes has not 864 entries"
expect_ok "gen elasticity3d --poisson-ratio 0" "$NZ" gen elasticity3d --n 3 --poisson-ratio 0 -o "$TMP/el0.mtx"
cmp -s "$TMP/el.mtx" "$TMP/el0.mtx" || fail "elasticity3d --poisson-ratio 0 differs from the default"
expect_ok "spmv elasticity3d x = b" "$NZ" spmv "$TMP/el.mtx" --x "$TMP/el_b.mtx" --check
expect_error 2 "--poisson-ratio" "gen elasticity3d --poisson-ratio 0.5" \
    "$NZ" gen elasticity3d --n 3 --poisson-ratio 0.5 -o "$TMP/el1.mtx"
expect_error 2 "--poisson-ratio" "gen fe3d --poisson-ratio" "$NZ" gen fe3d --n 3 --poisson-ratio 0.3 -o "$TMP/el1.mtx"
expect_error 2 "--modes" "gen fe3d --modes" "$NZ" gen fe3d --n 3 --modes "$TMP/m.mtx" -o "$TMP/el1.mtx"
[ -e "$TMP/el1.mtx" ] && fail "gen wrote an output despite a refused option"

# Round trip of written vectors: the x used (--write-x) reproduces y exactly, and y read back
# cancels exactly against the same product (y_new = A x - y_file = 0 only if no digit was lost).
R="$TMP/r1.mtx"
for precision in double single; do
    expect_ok "spmv --write-x $precision" "$NZ" spmv "$R" --precision $precision \
        --alg serial --write-x "$TMP/x.mtx" -o "$TMP/y1.mtx"
    expect_ok "spmv --x $precision" "$NZ" spmv "$R" --precision $precision --alg serial \
        --x "$TMP/x.mtx" -o "$TMP/y2.mtx" && cmp -s "$TMP/y1.mtx" "$TMP/y2.mtx" ||
        fail "x written by --write-x does not reproduce y ($precision)"
    # (No --check in single: against the double reference, 0 has relative error 1.)
    check=--check
    [ $precision = single ] && check=
    expect_ok "spmv y - y_file $precision" "$NZ" spmv "$R" --precision $precision --alg serial \
        --y "$TMP/y1.mtx" --beta -1 $check -o "$TMP/z.mtx"
    [ -z "$check" ] || grep -qx 'relerr 0.000e+00' "$OUT" ||
        fail "A x - y_file: relerr not 0 ($precision)"
    all_zero_vector "$TMP/z.mtx" 50 || fail "y did not round-trip exactly through -o ($precision)"
    # The written digits: 17 significant in double, 9 in single (when not exact in fewer).
    digits=$(awk '!/^%/ && NR > 2 { s = $1; sub(/^-/, "", s); sub(/[eE].*/, "", s);
             gsub(/\./, "", s); sub(/^0+/, "", s); if (length(s) > m) m = length(s) } END { print m + 0 }' \
        "$TMP/y1.mtx")
    want=17
    [ $precision = single ] && want=9
    [ "$digits" -ge $((want - 1)) ] && [ "$digits" -le "$want" ] ||
        fail "y written with up to $digits significant digits in $precision, expected $want"
done

# alpha, beta and y: y = 2 A x + 0.5 y0 is checked against the reference.
expect_ok "spmv alpha beta" "$NZ" spmv "$R" --alpha 2 --beta 0.5 --y "$TMP/y1.mtx" --check --repeat 3
# Summary line without -o, and --verbose timing on stderr only.
expect_ok "spmv summary" "$NZ" spmv "$R" --format sell --sell-chunk 4 --sell-sigma 8
grep -q '^y = A x: 50 x 50' "$OUT" || fail "spmv without -o: no summary line"
run "$NZ" spmv "$R" --verbose --repeat 2
[ "$RC" -eq 0 ] && grep -q 'plan' "$ERR" && grep -q 'execute' "$ERR" ||
    fail "spmv --verbose: no timing on stderr"

cli_finish
