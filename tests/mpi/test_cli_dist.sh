#!/bin/sh
# test_cli_dist.sh: nz cg / nz solve / nz spmv / nz bench --dist under mpiexec against the serial tool,
# and errors reported by every rank. Usage: test_cli_dist.sh NZ DATA_DIR MPIEXEC "FLAGS"
NZ=$1
DATA=$2
MPIEXEC=$3
FLAGS=$4
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
run() { n=$1; shift; $MPIEXEC -n "$n" $FLAGS "$@"; }

# numeric comparison of two Matrix Market arrays: max |a - b| / max |a|
compare() {
    awk 'FNR == 1 { file++ } /^%/ { next } FNR > 0 && !header[file]++ { next }
         file == 1 { a[n1++] = $1 } file == 2 { b[n2++] = $1 }
         END { if (n1 != n2 || n1 == 0) { print "length", n1, n2; exit 1 }
               m = 0; d = 0
               for (i = 0; i < n1; i++) { v = a[i] < 0 ? -a[i] : a[i]; if (v > m) m = v
                   e = a[i] - b[i]; if (e < 0) e = -e; if (e > d) d = e }
               if (d > 1e-12 * m) { print "differ", d, m; exit 1 } }' "$1" "$2"
}
field() { sed -n "s/^$2: //p" "$1" | head -n 1; }

# ---- CG: the same iterations and L2 error as the serial tool, x written in global order ----
"$NZ" cg --fe3d 10 -o "$TMP/x1.mtx" > "$TMP/cg1.txt" || bad "serial cg"
for n in 2 3; do
    run $n "$NZ" cg --fe3d 10 -o "$TMP/x$n.mtx" > "$TMP/cg$n.txt" 2> "$TMP/cg$n.err" || bad "cg on $n ranks: $(cat "$TMP/cg$n.err")"
    i1=$(field "$TMP/cg1.txt" iterations); i2=$(field "$TMP/cg$n.txt" iterations)
    [ -n "$i2" ] && [ "$i2" -ge $((i1 - 1)) ] && [ "$i2" -le $((i1 + 1)) ] || bad "cg iterations $i2 on $n ranks, serial $i1"
    [ "$(field "$TMP/cg1.txt" 'L2 error' | cut -c1-5)" = "$(field "$TMP/cg$n.txt" 'L2 error' | cut -c1-5)" ] || bad "L2 error on $n ranks"
    [ "$(grep -c '^problem:' "$TMP/cg$n.txt")" = 1 ] || bad "only rank 0 prints (cg on $n ranks)"
    compare "$TMP/x1.mtx" "$TMP/x$n.mtx" || bad "x on $n ranks"
done
grep -q "ranks" "$TMP/cg2.txt" || bad "distributed cg setup line"
run 2 "$NZ" cg --laplace3d 8 --precond jacobi > "$TMP/lap.txt" 2>&1 || bad "cg --laplace3d: $(cat "$TMP/lap.txt")"
grep -q "status: converged" "$TMP/lap.txt" || bad "laplace3d converged"
run 1 "$NZ" cg --dist "$DATA/bcsstk01.mtx" --precond jacobi > "$TMP/one.txt" 2>&1 || bad "--dist on one rank"
grep -q "1 ranks" "$TMP/one.txt" || bad "--dist runs distributed on one rank"

# ---- SpMV: y equal within rounding, written once ----
for m in west0067 lp_afiro; do
    "$NZ" spmv "$DATA/$m.mtx" -o "$TMP/y1.mtx" > /dev/null || bad "serial spmv $m"
    run 4 "$NZ" spmv "$DATA/$m.mtx" -o "$TMP/y4.mtx" > "$TMP/spmv.txt" 2>&1 || bad "spmv $m on 4 ranks: $(cat "$TMP/spmv.txt")"
    compare "$TMP/y1.mtx" "$TMP/y4.mtx" || bad "y of $m on 4 ranks"
    grep -q "overlap" "$TMP/spmv.txt" || bad "spmv profile line"
done

# ---- errors: every rank fails with the same message, no hang ----
run 3 "$NZ" cg "$DATA/no_such_matrix.mtx" > "$TMP/err.txt" 2>&1 && bad "a missing file must fail"
[ "$(grep -o 'nz cg: rank 0: [^ ]*no_such_matrix.mtx' "$TMP/err.txt" | wc -l)" = 3 ] || bad "3 ranks report the missing file: $(cat "$TMP/err.txt")"
run 2 "$NZ" cg --fe3d 6 --backend cuda > "$TMP/gpu.txt" 2>&1
rc=$?
if [ "$("$NZ" --version | sed -n 's/.*visible: \([0-9]*\).*/\1/p')" = 0 ]; then
    [ $rc = 3 ] || bad "--backend cuda without a device: exit $rc, expected 3"
    [ "$(grep -o 'no CUDA device for rank 0' "$TMP/gpu.txt" | wc -l)" = 2 ] || bad "both ranks report the missing device: $(cat "$TMP/gpu.txt")"
fi
run 2 "$NZ" cg --fe3d 6 --bogus > "$TMP/usage.txt" 2>&1
[ $? = 2 ] || bad "unknown option: exit 2"

# ---- issue 36: outputs never replace inputs, distributed as serially (one shared check) ----
cp "$DATA/bcsstk01.mtx" "$TMP/v.mtx"
"$NZ" convert "$DATA/bcsstk01.mtx" -o "$TMP/v.nzb" > /dev/null || bad "convert v.nzb"
cp "$TMP/v.nzb" "$TMP/v0.nzb"
run 2 "$NZ" cg "$TMP/v.mtx" -o "$TMP/v.mtx" > "$TMP/o.txt" 2>&1
[ $? = 2 ] || bad "cg -o its input on 2 ranks: not exit 2: $(cat "$TMP/o.txt")"
cmp -s "$TMP/v.mtx" "$DATA/bcsstk01.mtx" || bad "cg -o its input on 2 ranks replaced the matrix"
[ "$(grep -c 'option -o: .*is the input' "$TMP/o.txt")" = 1 ] || bad "cg -o input: one error line expected: $(cat "$TMP/o.txt")"
for n in 2 3; do
    run $n "$NZ" spmv "$TMP/v.nzb" -o "$TMP/v.nzb" > "$TMP/o.txt" 2>&1
    [ $? = 2 ] || bad "spmv -o its .nzb input on $n ranks: not exit 2: $(cat "$TMP/o.txt")"
    cmp -s "$TMP/v.nzb" "$TMP/v0.nzb" || bad "spmv -o its .nzb input on $n ranks replaced it"
done
run 2 "$NZ" spmv "$DATA/west0067.mtx" --write-x "$TMP/s.mtx" -o "$TMP/s.mtx" > "$TMP/o.txt" 2>&1
[ $? = 2 ] || bad "spmv --write-x s.mtx -o s.mtx on 2 ranks: not exit 2: $(cat "$TMP/o.txt")"
[ -e "$TMP/s.mtx" ] && bad "spmv --write-x s.mtx -o s.mtx on 2 ranks wrote s.mtx"
ln -s v.mtx "$TMP/v-link.mtx"
run 2 "$NZ" cg "$TMP/v-link.mtx" --b "$TMP/nob.mtx" -o "$TMP/./nob.mtx" > "$TMP/o.txt" 2>&1
[ $? = 2 ] || bad "cg --b nob.mtx -o ./nob.mtx on 2 ranks: not exit 2: $(cat "$TMP/o.txt")"

# ---- issue 36: the distributed commands take the serial inputs and options ----
vector() { # vector FILE N EXPR(i): a Matrix Market array
    awk -v n="$2" "BEGIN { print \"%%MatrixMarket matrix array real general\"; print n, 1
                           for (i = 1; i <= n; i++) printf \"%.17g\\n\", $3 }" > "$1"
}
close_to() { # close_to A B TOL: max |a - b| <= TOL max |a|
    awk -v tol="$3" 'FNR == 1 { file++ } /^%/ { next } !header[file]++ { next }
         file == 1 { a[n1++] = $1 } file == 2 { b[n2++] = $1 }
         END { if (n1 != n2 || n1 == 0) exit 1; m = 0; d = 0
               for (i = 0; i < n1; i++) { v = a[i] < 0 ? -a[i] : a[i]; if (v > m) m = v
                   e = a[i] - b[i]; if (e < 0) e = -e; if (e > d) d = e }
               if (d > tol * m) { print "differ", d, m; exit 1 } }' "$1" "$2"
}
W="$DATA/west0067.mtx"
vector "$TMP/wx.mtx" 67 'sin(i)'
vector "$TMP/wy.mtx" 67 'cos(3 * i)'
"$NZ" spmv "$W" --x "$TMP/wx.mtx" --y "$TMP/wy.mtx" --alpha 2 --beta -0.5 --format csr \
    --write-x "$TMP/sx1.mtx" -o "$TMP/sy1.mtx" > /dev/null || bad "serial spmv --x --y"
for n in 2 3; do
    run $n "$NZ" spmv "$W" --x "$TMP/wx.mtx" --y "$TMP/wy.mtx" --alpha 2 --beta -0.5 --format csr \
        --write-x "$TMP/sx$n.mtx" -o "$TMP/sy$n.mtx" --repeat 2 > "$TMP/o.txt" 2>&1 || bad "spmv --x --y on $n ranks: $(cat "$TMP/o.txt")"
    compare "$TMP/sy1.mtx" "$TMP/sy$n.mtx" || bad "y = 2 A x - y/2 on $n ranks"
    compare "$TMP/sx1.mtx" "$TMP/sx$n.mtx" || bad "--write-x on $n ranks"
done
run 2 "$NZ" spmv "$W" --x "$TMP/wy.mtx.missing" > "$TMP/o.txt" 2>&1 && bad "spmv --x of a missing file must fail"
grep -q "wy.mtx.missing" "$TMP/o.txt" || bad "spmv --x missing: $(cat "$TMP/o.txt")"
vector "$TMP/short.mtx" 5 'i'
run 2 "$NZ" spmv "$W" --x "$TMP/short.mtx" > "$TMP/o.txt" 2>&1 && bad "spmv --x of the wrong length must fail"
"$NZ" gen laplace3d --n 5 -o "$TMP/lap.mtx" > /dev/null || bad "gen lap.mtx"
vector "$TMP/lb.mtx" 125 '1 + (i % 5)'
"$NZ" cg "$TMP/lap.mtx" --b "$TMP/lb.mtx" --x0 random --precond jacobi --tol 1e-10 --atol 1e-300 \
    --maxit 500 --format auto -o "$TMP/lx1.mtx" > "$TMP/lc1.txt" || bad "serial cg --b"
for n in 2 3; do
    run $n "$NZ" cg "$TMP/lap.mtx" --b "$TMP/lb.mtx" --x0 random --precond jacobi --tol 1e-10 \
        --atol 1e-300 --maxit 500 --format auto -o "$TMP/lx$n.mtx" > "$TMP/lc$n.txt" 2>&1 || bad "cg --b on $n ranks: $(cat "$TMP/lc$n.txt")"
    close_to "$TMP/lx1.mtx" "$TMP/lx$n.mtx" 1e-7 || bad "cg --b x on $n ranks"
    grep -q "precond jacobi, x0 random" "$TMP/lc$n.txt" || bad "cg setup on $n ranks: $(cat "$TMP/lc$n.txt")"
done
# stderr apart: the ranks' message would interleave with the report lines
run 2 "$NZ" cg "$TMP/lap.mtx" --maxit 2 > "$TMP/o.txt" 2> "$TMP/o.err"
rc=$?
[ "$rc" -eq 4 ] || bad "cg --maxit 2: exit $rc, expected 4 (not converged)"
grep -q "^status: not converged (iteration limit)$" "$TMP/o.txt" || bad "cg --maxit 2 status: $(cat "$TMP/o.txt")"
grep -q "^iterations: 2$" "$TMP/o.txt" || bad "cg --maxit 2: $(cat "$TMP/o.txt")"
# the same validation, the same message as the serial tool
for args in "--tol 5" "--tol 0" "--atol -1" "--maxit 0" "--precond ilu" "--x0 ones" "--format foo" "--threads 0"; do
    "$NZ" cg "$TMP/lap.mtx" $args > /dev/null 2> "$TMP/serial.err"
    run 2 "$NZ" cg "$TMP/lap.mtx" $args > /dev/null 2> "$TMP/dist.err"
    [ $? = 2 ] || bad "cg $args on 2 ranks: not exit 2"
    grep '^nz ' "$TMP/dist.err" > "$TMP/dist.nz" # (mpiexec adds its own lines)
    cmp -s "$TMP/serial.err" "$TMP/dist.nz" || bad "cg $args: '$(cat "$TMP/dist.nz")' on 2 ranks, serially '$(cat "$TMP/serial.err")'"
done
for args in "--alpha x" "--beta inf" "--format foo" "--alg nope" "--repeat 0"; do
    "$NZ" spmv "$W" $args > /dev/null 2> "$TMP/serial.err"
    run 2 "$NZ" spmv "$W" $args > /dev/null 2> "$TMP/dist.err"
    [ $? = 2 ] || bad "spmv $args on 2 ranks: not exit 2"
    grep '^nz ' "$TMP/dist.err" > "$TMP/dist.nz" # (mpiexec adds its own lines)
    cmp -s "$TMP/serial.err" "$TMP/dist.nz" || bad "spmv $args: '$(cat "$TMP/dist.nz")' on 2 ranks, serially '$(cat "$TMP/serial.err")'"
done
# what cannot run distributed is refused by name, once
for args in "--format ell" "--check" "--format all"; do
    run 2 "$NZ" spmv "$W" $args > "$TMP/o.txt" 2>&1
    [ $? = 2 ] || bad "spmv $args on 2 ranks: not exit 2"
    [ "$(grep -c "distributed" "$TMP/o.txt")" = 1 ] || bad "spmv $args on 2 ranks: $(cat "$TMP/o.txt")"
done
run 2 "$NZ" cg "$TMP/lap.mtx" --format sell > "$TMP/o.txt" 2>&1
[ $? = 2 ] || bad "cg --format sell on 2 ranks: not exit 2: $(cat "$TMP/o.txt")"
# a NaN in A is named as such (b = A ones), not as "b holds NaN or Inf"
printf '%%%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 2 nan\n3 3 4\n2 1 1\n' > "$TMP/nan.mtx"
run 2 "$NZ" cg "$TMP/nan.mtx" > "$TMP/o.txt" 2>&1
[ $? = 1 ] || bad "cg of a NaN matrix on 2 ranks: not exit 1: $(cat "$TMP/o.txt")"
grep -q "A holds nan at (2, 2)" "$TMP/o.txt" || bad "cg of a NaN matrix on 2 ranks: $(cat "$TMP/o.txt")"
grep -q "b holds" "$TMP/o.txt" && bad "a NaN in A reported as one in b: $(cat "$TMP/o.txt")"

# ---- nz solve: the methods and block preconditioners of nz_dist_solve against the serial tool ----
"$NZ" gen convdiff3d --n 8 -o "$TMP/cd.mtx" > /dev/null || bad "gen cd.mtx"
"$NZ" gen laplace3d --n 8 -o "$TMP/sl.mtx" > /dev/null || bad "gen sl.mtx"
for case in "cd.mtx bicgstab ilu0" "cd.mtx gmres jacobi" "sl.mtx cg ic0" "sl.mtx minres none"; do
    set -- $case
    "$NZ" solve "$TMP/$1" --method $2 --precond $3 --rtol 1e-12 -o "$TMP/sx1.mtx" > "$TMP/s1.txt" 2>&1 || bad "serial solve $case: $(cat "$TMP/s1.txt")"
    run 2 "$NZ" solve "$TMP/$1" --method $2 --precond $3 --rtol 1e-12 -o "$TMP/sx2.mtx" > "$TMP/s2.txt" 2> "$TMP/s2.err" || bad "solve $case on 2 ranks: $(cat "$TMP/s2.txt" "$TMP/s2.err")"
    grep -q "^solve: method $2\(([0-9]*)\)\{0,1\}, precond $3, double, .*status converged" "$TMP/s2.txt" || bad "solve $case on 2 ranks: report $(cat "$TMP/s2.txt")"
    [ "$(grep -c '^solve: ' "$TMP/s2.txt")" = 1 ] || bad "solve $case: one report line, from rank 0"
    grep -q "^ranks: 2, cpu, problem $TMP/$1 (512 unknowns" "$TMP/s2.txt" || bad "solve $case: ranks line: $(cat "$TMP/s2.txt")"
    # the same line as the serial command up to the numbers
    [ "$(sed -n 's/, iterations.*//p' "$TMP/s1.txt")" = "$(sed -n 's/, iterations.*//p' "$TMP/s2.txt")" ] || bad "solve $case: report differs from the serial one"
    close_to "$TMP/sx1.mtx" "$TMP/sx2.mtx" 1e-8 || bad "solve $case: x on 2 ranks differs from the serial x"
    [ $3 = none ] || grep -q "precond block jacobi over the ranks, $3 in each block$" "$TMP/s2.txt" || bad "solve $case: the block preconditioner is not named: $(cat "$TMP/s2.txt")"
done
# reductions in rank order: the same ranks give bitwise the same x
run 2 "$NZ" solve "$TMP/cd.mtx" --method gmres --precond ilu0 -o "$TMP/sr1.mtx" > /dev/null 2>&1 || bad "solve gmres ilu0 (1)"
run 2 "$NZ" solve "$TMP/cd.mtx" --method gmres --precond ilu0 -o "$TMP/sr2.mtx" > /dev/null 2>&1 || bad "solve gmres ilu0 (2)"
cmp -s "$TMP/sr1.mtx" "$TMP/sr2.mtx" || bad "solve on 2 ranks: two runs differ"
# the generated problems: the serial tool on nz gen's matrices
"$NZ" gen convdiff3d --n 6 --peclet 2 -o "$TMP/cd6.mtx" > /dev/null || bad "gen cd6.mtx"
"$NZ" solve "$TMP/cd6.mtx" --method fgmres --precond ilu0 --restart 10 --rtol 1e-12 -o "$TMP/gx1.mtx" > /dev/null 2>&1 || bad "serial solve cd6"
run 2 "$NZ" solve --convdiff3d 6 --peclet 2 --method fgmres --precond ilu0 --restart 10 --rtol 1e-12 --history -o "$TMP/gx2.mtx" > "$TMP/g.txt" 2>&1 || bad "solve --convdiff3d: $(cat "$TMP/g.txt")"
close_to "$TMP/gx1.mtx" "$TMP/gx2.mtx" 1e-8 || bad "solve --convdiff3d: x differs from the serial x"
grep -q "^ranks: 2, cpu, problem convdiff3d N=6 peclet 2 (216 unknowns" "$TMP/g.txt" || bad "solve --convdiff3d: $(cat "$TMP/g.txt")"
[ "$(grep -c '^history [0-9]*: ' "$TMP/g.txt")" -ge 2 ] || bad "solve --history: $(cat "$TMP/g.txt")"
run 2 "$NZ" solve --laplace3d 8 --method cg --precond jacobi --rtol 1e-12 -o "$TMP/gl2.mtx" > "$TMP/g.txt" 2>&1 || bad "solve --laplace3d: $(cat "$TMP/g.txt")"
"$NZ" solve "$TMP/sl.mtx" --method cg --precond jacobi --rtol 1e-12 -o "$TMP/gl1.mtx" > /dev/null 2>&1 || bad "serial solve sl"
close_to "$TMP/gl1.mtx" "$TMP/gl2.mtx" 1e-8 || bad "solve --laplace3d: x differs from the serial x"
# --b: the serial x of b = A (1, 2, 3, ...)
vector "$TMP/si.mtx" 512 'i'
"$NZ" spmv "$TMP/cd.mtx" --x "$TMP/si.mtx" -o "$TMP/sb.mtx" > /dev/null || bad "spmv for solve --b"
run 2 "$NZ" solve "$TMP/cd.mtx" --b "$TMP/sb.mtx" --method bicgstab --precond ilu0 --rtol 1e-12 -o "$TMP/sbx.mtx" > "$TMP/o.txt" 2>&1 || bad "solve --b: $(cat "$TMP/o.txt")"
close_to "$TMP/si.mtx" "$TMP/sbx.mtx" 1e-8 || bad "solve --b on 2 ranks: x is not A^-1 b"
# not converged: exit 4 on every rank, x written; a bad option: exit 2, one line, the serial one
run 2 sh -c '"$0" "$@"; rc=$?; echo $rc > "$2.rc.$OMPI_COMM_WORLD_RANK"; exit $rc' "$NZ" solve "$TMP/cd.mtx" --method bicgstab --maxit 2 -o "$TMP/sm.mtx" > "$TMP/o.txt" 2> "$TMP/o.err"
[ $? = 4 ] || bad "solve --maxit 2 on 2 ranks: not exit 4: $(cat "$TMP/o.txt" "$TMP/o.err")"
[ "$(cat "$TMP/cd.mtx.rc.0" "$TMP/cd.mtx.rc.1" 2> /dev/null | tr '\n' ' ')" = "4 4 " ] || bad "solve --maxit 2: every rank exits 4"
grep -q "status iteration limit" "$TMP/o.txt" || bad "solve --maxit 2: $(cat "$TMP/o.txt")"
[ -s "$TMP/sm.mtx" ] || bad "solve --maxit 2: x not written"
for args in "--method frob" "--precond user" "--restart 5" "--method gmres --block-size 4" "--rtol 2" "--peclet 1" "--graph"; do
    "$NZ" solve "$TMP/cd.mtx" $args > /dev/null 2> "$TMP/serial.err"
    run 2 "$NZ" solve "$TMP/cd.mtx" $args > /dev/null 2> "$TMP/dist.err"
    [ $? = 2 ] || bad "solve $args on 2 ranks: not exit 2"
    grep '^nz ' "$TMP/dist.err" > "$TMP/dist.nz" # (mpiexec adds its own lines)
    [ "$(wc -l < "$TMP/dist.nz")" = 1 ] || bad "solve $args on 2 ranks: one line expected: $(cat "$TMP/dist.nz")"
    case "$args" in --peclet*) continue ;; esac # (a distributed option, unknown serially)
    cmp -s "$TMP/serial.err" "$TMP/dist.nz" || bad "solve $args: '$(cat "$TMP/dist.nz")' on 2 ranks, serially '$(cat "$TMP/serial.err")'"
done
run 2 "$NZ" solve "$TMP/no_such.mtx" > "$TMP/o.txt" 2>&1
[ $? = 1 ] || bad "solve of a missing file on 2 ranks: not exit 1"
[ "$(grep -c '^nz solve: .*no_such.mtx' "$TMP/o.txt")" = 1 ] || bad "solve of a missing file: one line expected: $(cat "$TMP/o.txt")"
run 2 "$NZ" solve "$DATA/lp_afiro.mtx" > "$TMP/o.txt" 2>&1
[ $? = 1 ] || bad "solve of a 27 x 51 matrix on 2 ranks: not exit 1"
[ "$(grep -c 'is 27 x 51; the solvers need a square matrix' "$TMP/o.txt")" = 1 ] || bad "solve of a rectangular matrix: $(cat "$TMP/o.txt")"

# ---- without mpiexec the tool is unchanged (and --dist is unknown to it) ----
env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_RANK "$NZ" cg --fe3d 6 --dist > "$TMP/serial.txt" 2>&1
[ $? = 2 ] || bad "serial nz must not know --dist"

# ---- bench --dist: both tables ----
run 2 "$NZ" bench --dist --n 8 --weak 6 --repeat 2 --iterations 3 > "$TMP/bench.txt" 2>&1 || bad "bench --dist: $(cat "$TMP/bench.txt")"
grep -q "strong scaling" "$TMP/bench.txt" && grep -q "weak scaling" "$TMP/bench.txt" || bad "bench tables"
[ "$(grep -c '^    2 ' "$TMP/bench.txt")" = 2 ] || bad "bench rows for 2 ranks: $(cat "$TMP/bench.txt")"
# the Laplacian's strong table and one weak table per --weak: four tables, a row each for 2 ranks
run 2 "$NZ" bench --dist --n 8 --laplace 7 --weak 5 --weak 6 --repeat 2 --iterations 3 > "$TMP/bench4.txt" 2>&1 || bad "bench --dist --laplace: $(cat "$TMP/bench4.txt")"
grep -q "strong scaling: laplace3d 7^3" "$TMP/bench4.txt" || bad "bench: no Laplacian table"
[ "$(grep -c '^weak scaling' "$TMP/bench4.txt")" = 2 ] || bad "bench: two weak tables expected"
[ "$(grep -c '^    2 ' "$TMP/bench4.txt")" = 4 ] || bad "bench rows for 2 ranks (4 tables): $(cat "$TMP/bench4.txt")"
grep '^    2 ' "$TMP/bench4.txt" | awk '$11 + 0 <= 0 {exit 1}' || bad "bench: 2 ranks exchange no halo (KB column)"

[ $fail = 0 ] && echo "test_cli_dist: ok"
exit $fail
