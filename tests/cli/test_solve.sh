# test_solve.sh: `nz solve`: each method reaches the known x; statuses, exit codes, errors.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup

# The one report line (starts with "solve: ").
report() { grep '^solve: ' "$OUT" | head -n 1; }

# x_is_ones FILE N: every entry of the Matrix Market array FILE is 1 within 1e-6 (b = A ones).
x_is_ones() {
    awk -v n="$2" '/^%/ { next } !size { size = 1; next }
        { d = $1 - 1; if (d < 0) d = -d; if (d > 1e-6) bad = 1; count++ }
        END { exit (bad || count != n) }' "$1"
}

"$NZ" gen convdiff2d --nx 30 --peclet 1 -o "$TMP/cd.mtx" >/dev/null 2>&1 ||
    fail "nz gen convdiff2d did not produce a matrix"
"$NZ" gen laplace2d --nx 20 --ny 20 -o "$TMP/lap.mtx" >/dev/null 2>&1 ||
    fail "nz gen laplace2d did not produce a matrix"

# ---- non-symmetric: bicgstab, gmres(10), fgmres; symmetric: minres; none and jacobi ----------
for precond in none jacobi; do
    for method in bicgstab "gmres --restart 10" fgmres; do
        name=${method%% *}
        rm -f "$TMP/x.mtx"
        if expect_ok "$method $precond" "$NZ" solve "$TMP/cd.mtx" --method $method \
            --precond $precond -o "$TMP/x.mtx"; then
            case "$(report)" in
            *"method $name"*"precond $precond"*"status converged"*) ;;
            *) fail "$method $precond: report '$(report)'"; show_output ;;
            esac
            x_is_ones "$TMP/x.mtx" 900 || fail "$method $precond: x is not ones (b = A ones)"
        fi
    done
    if expect_ok "minres $precond" "$NZ" solve "$TMP/lap.mtx" --method minres --precond $precond \
        -o "$TMP/x.mtx"; then
        case "$(report)" in
        *"method minres"*"precond $precond"*"status converged"*) ;;
        *) fail "minres $precond: report '$(report)'"; show_output ;;
        esac
        x_is_ones "$TMP/x.mtx" 400 || fail "minres $precond: x is not ones"
    fi
done
# the library's further preconditioners (nz_precond_t): l1-jacobi, ilu0 (non-symmetric), ic0 (SPD)
for case in "cd.mtx bicgstab l1-jacobi 900" "cd.mtx gmres ilu0 900" "cd.mtx fgmres ilu0 900" \
    "lap.mtx minres ic0 400"; do
    set -- $case
    if expect_ok "$2 $3" "$NZ" solve "$TMP/$1" --method $2 --precond $3 -o "$TMP/x.mtx"; then
        case "$(report)" in
        *"method $2"*"precond $3"*"status converged"*) ;;
        *) fail "$2 $3: report '$(report)'"; show_output ;;
        esac
        x_is_ones "$TMP/x.mtx" $4 || fail "$2 $3: x is not ones"
    fi
done
# the object-built preconditioners: block-jacobi (default 4 rows, --block-size) and chebyshev
# (default degree 3, --degree); chebyshev with minres on the SPD Laplacian
for case in "cd.mtx gmres block-jacobi 900" "cd.mtx bicgstab block-jacobi 900 --block-size 8" \
    "cd.mtx gmres chebyshev 900" "lap.mtx gmres chebyshev 400 --degree 5" \
    "lap.mtx minres chebyshev 400 --degree 6" "lap.mtx fgmres block-jacobi 400 --block-size 1" \
    "cd.mtx bicgstab ilu0 900 --sweeps 2" "lap.mtx cg ic0 400 --sweeps 3"; do
    set -- $case
    if expect_ok "$2 $3 $5 $6" "$NZ" solve "$TMP/$1" --method $2 --precond $3 $5 $6 \
        -o "$TMP/x.mtx"; then
        case "$(report)" in
        *"method $2"*"precond $3"*"status converged"*) ;;
        *) fail "$2 $3 $5 $6: report '$(report)'"; show_output ;;
        esac
        x_is_ones "$TMP/x.mtx" $4 || fail "$2 $3 $5 $6: x is not ones"
    fi
done
expect_error 2 "--block-size" "block size 33" "$NZ" solve "$TMP/cd.mtx" --method gmres \
    --precond block-jacobi --block-size 33
expect_error 2 "--sweeps" "sweeps without ilu0 / ic0" "$NZ" solve "$TMP/cd.mtx" --precond jacobi \
    --sweeps 2
expect_error 2 "--sweeps" "sweeps 256" "$NZ" solve "$TMP/cd.mtx" --precond ilu0 --sweeps 256
expect_error 2 "--block-size" "block size 0" "$NZ" solve "$TMP/cd.mtx" --method gmres \
    --precond block-jacobi --block-size 0
expect_error 2 "--block-size" "block size without block-jacobi" "$NZ" solve "$TMP/cd.mtx" \
    --method gmres --precond jacobi --block-size 4
expect_error 2 "--degree" "degree 0" "$NZ" solve "$TMP/lap.mtx" --method gmres \
    --precond chebyshev --degree 0
expect_error 2 "--degree" "degree without chebyshev" "$NZ" solve "$TMP/lap.mtx" --method gmres \
    --degree 3
expect_ok "cg with chebyshev" "$NZ" solve "$TMP/lap.mtx" --method cg --precond chebyshev
# ---- algebraic multigrid: converges in few iterations, reports its hierarchy ------------------
expect_ok "cg with amg" "$NZ" solve "$TMP/lap.mtx" --method cg --precond amg --amg-report \
    --amg-coarse 20
case "$(report)" in *"precond amg"*"status converged"*) ;; *) fail "amg: report '$(report)'" ;; esac
it=$(report | sed -n 's/.*iterations \([0-9]*\),.*/\1/p')
[ -n "$it" ] && [ "$it" -le 15 ] || fail "cg with amg: $it iterations (at most 15)"
grep -q '^amg: level 1, rows' "$OUT" || fail "--amg-report printed no level 1"
grep -q '^amg: levels [0-9]*, smoother chebyshev, operator complexity' "$OUT" ||
    fail "--amg-report printed no totals"
expect_ok "gmres with amg, W-cycle, l1-jacobi" "$NZ" solve "$TMP/cd.mtx" --method gmres \
    --precond amg --amg-cycle w --amg-smoother l1-jacobi --amg-degree 3
expect_error 2 "--amg-\*" "amg option without amg" "$NZ" solve "$TMP/lap.mtx" --precond jacobi \
    --amg-threshold 0.1
expect_error 2 "--amg-threshold" "threshold 1" "$NZ" solve "$TMP/lap.mtx" --precond amg \
    --amg-threshold 1
expect_error 2 "--amg-cycle" "cycle x" "$NZ" solve "$TMP/lap.mtx" --precond amg --amg-cycle x
expect_error 2 "" "nullspace equal to the output" "$NZ" solve "$TMP/lap.mtx" --precond amg \
    --amg-nullspace "$TMP/x.mtx" -o "$TMP/x.mtx"
expect_ok "nz info --amg" "$NZ" info "$TMP/lap.mtx" --amg
grep -q '^amg: levels' "$OUT" || fail "nz info --amg printed no hierarchy"
expect_ok "gmres restart in the report" "$NZ" solve "$TMP/cd.mtx" --method gmres --restart 10
case "$(report)" in *"gmres(10)"*) ;; *) fail "gmres --restart 10: report '$(report)'" ;; esac

# ---- the true residual is reported: a number at most the tolerance -------------------------
expect_ok "bicgstab rtol" "$NZ" solve "$TMP/cd.mtx" --method bicgstab --rtol 1e-10
res=$(report | sed -n 's/.*relative residual \([^ ]*\) (true).*/\1/p')
awk -v r="$res" 'BEGIN { exit !(r != "" && r + 0 <= 1e-10) }' ||
    fail "bicgstab --rtol 1e-10: relative residual '$res'"

# ---- the same x as nz cg on an SPD system, with --b ------------------------------------------
"$NZ" cg "$TMP/lap.mtx" --tol 1e-12 -o "$TMP/xcg.mtx" >/dev/null 2>&1 || fail "nz cg on laplace2d"
# b = A (1, 2, 3, ...)': nz spmv of a non-trivial x, so that x = ones cannot pass by accident
awk 'BEGIN { print "%%MatrixMarket matrix array real general"; print "400 1";
             for (i = 1; i <= 400; i++) print i }' >"$TMP/xi.mtx"
if "$NZ" spmv "$TMP/lap.mtx" --x "$TMP/xi.mtx" -o "$TMP/b.mtx" >/dev/null 2>&1; then
    expect_ok "gmres --b" "$NZ" solve "$TMP/lap.mtx" --method gmres --b "$TMP/b.mtx" --tol 1e-12 \
        -o "$TMP/xb.mtx"
    awk '/^%/ { next } !size { size = 1; next }
         { i++; d = $1 - i; if (d < 0) d = -d; if (d > 1e-6 * i) bad = 1 }
         END { exit (bad || i != 400) }' "$TMP/xb.mtx" || fail "gmres --b: x is not A^-1 b"
else
    fail "nz spmv --x: could not compute b"
fi
expect_ok "cg via solve" "$NZ" solve "$TMP/lap.mtx" --method cg --tol 1e-12 -o "$TMP/xs.mtx"
paste "$TMP/xcg.mtx" "$TMP/xs.mtx" | awk '/^%/ { next } !size { size = 1; next }
    { d = $1 - $2; if (d < 0) d = -d; if (d > 1e-9) bad = 1; n++ }
    END { exit (bad || n != 400) }' ||
    fail "nz solve --method cg and nz cg give different x"

# ---- caveats, history ------------------------------------------------------------------------
expect_error 4 "iteration limit" "maxit 2" "$NZ" solve "$TMP/cd.mtx" --method bicgstab --maxit 2
case "$(report)" in *"status iteration limit"*) ;; *) fail "maxit 2: report '$(report)'" ;; esac
run "$NZ" solve "$TMP/cd.mtx" --method gmres --maxit 2 -o "$TMP/x2.mtx"
[ "$RC" -eq 4 ] || fail "gmres --maxit 2: exit $RC, expected 4"
[ -s "$TMP/x2.mtx" ] || fail "gmres --maxit 2: x not written"
expect_ok "history" "$NZ" solve "$TMP/lap.mtx" --method minres --history
[ "$(grep -c '^history [0-9]*: ' "$OUT")" -ge 2 ] || fail "--history: no history lines"

# ---- bad command lines -----------------------------------------------------------------------
expect_error 2 "--method.*frob" "unknown method" "$NZ" solve "$TMP/cd.mtx" --method frob
expect_error 2 "--precond.*frob" "unknown preconditioner" "$NZ" solve "$TMP/cd.mtx" --precond frob
expect_error 2 "--precond.*user" "user preconditioner" "$NZ" solve "$TMP/cd.mtx" --precond user
expect_error 2 "--restart" "restart 0" "$NZ" solve "$TMP/cd.mtx" --method gmres --restart 0
expect_error 2 "--restart" "restart with bicgstab" "$NZ" solve "$TMP/cd.mtx" --method bicgstab \
    --restart 5
expect_error 2 "--tol" "tol 2" "$NZ" solve "$TMP/cd.mtx" --tol 2
expect_error 2 "" "no matrix" "$NZ" solve --method gmres
cp "$TMP/cd.mtx" "$TMP/keep.mtx"
expect_error 2 "-o" "-o is the input" "$NZ" solve "$TMP/keep.mtx" -o "$TMP/keep.mtx"
cmp -s "$TMP/cd.mtx" "$TMP/keep.mtx" || fail "-o is the input: the input was changed"
expect_error 2 "-o" "-o is --b" "$NZ" solve "$TMP/lap.mtx" --b "$TMP/b.mtx" -o "$TMP/b.mtx"

# ---- --help lists every option and every name ------------------------------------------------
expect_ok "solve --help" "$NZ" solve --help
for opt in --method --precond --restart --rtol --tol --atol --maxit --b -o --history --backend \
    --precision --block-size --degree cg bicgstab gmres fgmres minres none jacobi block-jacobi \
    chebyshev; do
    grep -q -- "$opt" "$OUT" || fail "nz solve --help does not mention $opt"
done

cli_finish
