#!/bin/sh
# test_cli_dist.sh: nz cg / nz spmv / nz bench --dist under mpiexec against the serial tool,
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
