# test_bench.sh: `nz bench` on the CPU: a quick run verifies every kernel, CSV and table are sane.
# Usage: sh test_bench.sh NZ_TOOL DATA_DIR
NZ=$1
DATA=$2
if [ -z "$NZ" ] || [ ! -x "$NZ" ] || [ ! -d "$DATA" ]; then
    echo "usage: sh $0 NZ_TOOL DATA_DIR" >&2
    exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/nzbench.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
FAILURES=0

fail() {
    FAILURES=$((FAILURES + 1))
    echo "FAIL: $*" >&2
}

show() {
    sed 's/^/    stdout: /' "$TMP/out" | tail -n 30 >&2
    sed 's/^/    stderr: /' "$TMP/err" | tail -n 20 >&2
}

# 1. The quick suite, both precisions: exit 0, a CSV with a header and rows, every timed row
#    verified, the table copy next to the CSV, and a summary.
"$NZ" bench --backend cpu --quick --no-real --csv "$TMP/b.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || { fail "quick run exited $rc"; show; }
[ -s "$TMP/b.csv" ] || fail "no CSV written"
head -n 1 "$TMP/b.csv" | grep -q '^backend,matrix,source,rows,cols,nnz,precision,kernel,status,' ||
    fail "CSV header is wrong: $(head -n 1 "$TMP/b.csv")"
rows=$(($(wc -l <"$TMP/b.csv") - 1))
[ "$rows" -ge 24 ] || fail "only $rows CSV rows (6 matrices x 2 precisions x >= 2 kernels expected)"
# status is column 9, check column 25: ok rows must say pass, refused rows none; no failures.
bad=$(awk -F, 'NR > 1 && !(($9 == "ok" && $25 == "pass") || ($9 == "refused" && $25 == "none"))' \
    "$TMP/b.csv" | head -n 3)
[ -z "$bad" ] || fail "rows not verified: $bad"
ok=$(awk -F, 'NR > 1 && $9 == "ok"' "$TMP/b.csv" | wc -l)
[ "$ok" -ge 24 ] || fail "only $ok verified rows"
for m in laplace3d-16 fe3d-12 random-16K-16 rmat-12-16 rail-64x16K mixed-16K; do
    for p in single double; do
        grep -q "^cpu,\"$m\",generated,.*,$p,csr/parallel,ok," "$TMP/b.csv" ||
            fail "no verified csr/parallel row for $m ($p)"
    done
done
# Positive times and rates on every ok row (median_us column 12, gbs_min column 17).
awk -F, 'NR > 1 && $9 == "ok" && !($12 > 0 && $17 > 0)' "$TMP/b.csv" | grep -q . &&
    fail "an ok row has a zero time or rate"
[ -s "$TMP/b.txt" ] || fail "the table copy $TMP/b.txt is missing"
grep -q "Summary (cpu, " "$TMP/out" || { fail "no summary on stdout"; show; }
grep -q "STREAM bandwidth: copy" "$TMP/out" || fail "no bandwidth reference line"
grep -q "^laplace3d-16 .* double csr/parallel " "$TMP/out" || fail "no aligned table row"
grep -q "All [0-9]* timed kernels verified" "$TMP/out" || fail "no verification line"
grep -q "Summary (cpu, " "$TMP/b.txt" || fail "the table copy has no summary"
# Refusal notes: whole in the CSV (the library's message ends "... CSR bytes"); in the table a
# head, a reason code and a footnote number, the footnote holding the whole note.
grep -q '^cpu,"rmat-12-16",generated,.*,double,ell/parallel,refused,.*,"refused: converting the .* CSR bytes"$' \
    "$TMP/b.csv" || fail "the CSV refusal note for rmat-12-16 ell is not whole"
line=$(grep '^rmat-12-16 .* double ell/parallel ' "$TMP/out")
num=$(echo "$line" | sed -n 's/.* refused (too much padding) \[\([0-9]*\)\]$/\1/p')
[ -n "$num" ] || fail "the table's refusal note is not 'refused (too much padding) [n]': $line"
grep -q "^\[$num\] rmat-12-16 double ell/parallel: refused: converting the .* CSR bytes$" \
    "$TMP/out" || fail "no whole footnote [$num] for rmat-12-16 ell"
# The summary names its columns for what they hold.
grep -q "fastest (any fmt) .* best CSR " "$TMP/out" || fail "summary columns not named"
# The planner's format and algorithm against the fastest kernel of any format, per precision:
# DIA for the Laplacian (it reads 0.6x the CSR bytes), and a count line.
grep -Eq "^double: laplace3d-16: planner's format and algorithm dia/[a-z]+: [0-9.]+x the time of" \
    "$TMP/out" || fail "no planner format/algorithm line for laplace3d-16 (dia)"
for p in single double; do
    grep -Eq "^$p: planner's format and algorithm within 10% of the fastest kernel of any format on [0-9]+ of 6 generated" \
        "$TMP/out" || fail "no planner format/algorithm summary ($p)"
done

# 2. Files on the command line (a rectangular matrix and an empty one), one kernel, Markdown.
"$NZ" bench --backend cpu --quick --no-real --precision single --alg csr/serial --markdown \
    --runs 3 --csv "$TMP/f.csv" "$DATA/illc1033.mtx" "$DATA/mmtest_ss_empty_0x0.mtx" \
    >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || { fail "run with files exited $rc"; show; }
grep -q '^cpu,"illc1033",file,1033,320,4732,single,csr/serial,ok,' "$TMP/f.csv" ||
    fail "no verified row for illc1033: $(grep illc "$TMP/f.csv")"
awk -F, 'NR > 1 && $8 != "csr/serial"' "$TMP/f.csv" | grep -q . && fail "--alg did not filter"
awk -F, 'NR > 1 && $7 != "single"' "$TMP/f.csv" | grep -q . && fail "--precision did not filter"
grep -q "mmtest_ss_empty_0x0: skipped" "$TMP/out" || fail "the empty matrix was not reported"
grep -q '^| matrix | rows | nnz |' "$TMP/out" || fail "no Markdown header"
grep -q '^| illc1033 | 1033 | 4732 | single | csr/serial |' "$TMP/out" || fail "no Markdown row"
[ -s "$TMP/f.md" ] || fail "the Markdown copy $TMP/f.md is missing"

# 3. A missing file is an error (exit 1) that names it; the rest still runs.
"$NZ" bench --backend cpu --quick --no-real --precision double --alg csr/serial --runs 3 \
    --csv "$TMP/m.csv" "$TMP/no-such.mtx" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] || fail "missing file: exit $rc, expected 1"
grep -q "no-such" "$TMP/err" || fail "missing file: stderr does not name it"
grep -q '"laplace3d-16"' "$TMP/m.csv" || fail "missing file stopped the run"

# 4. --backend gpu: on a machine without a device it falls back to the CPU with a one-line note;
#    with one it runs the GPU path (cuSPARSE rows included), every row verified either way.
"$NZ" bench --backend gpu --quick --no-real --precision single --runs 3 --alg merge,serial \
    --csv "$TMP/g.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || { fail "--backend gpu exited $rc"; show; }
if grep -q "no CUDA device" "$TMP/err"; then
    grep -q "no CUDA device" "$TMP/out" || fail "the fallback note is not under the table"
    awk -F, 'NR > 1 && $1 != "cpu"' "$TMP/g.csv" | grep -q . && fail "fallback rows are not cpu rows"
else
    grep -q '^gpu,"laplace3d-16",generated,.*,cusparse/alg2,ok,' "$TMP/g.csv" ||
        fail "no verified cuSPARSE row on the GPU"
    grep -q '^gpu,"laplace3d-16",generated,.*,csr/merge,ok,' "$TMP/g.csv" ||
        fail "no verified merge row on the GPU"
fi
bad=$(awk -F, 'NR > 1 && !(($9 == "ok" && $25 == "pass") || ($9 == "refused" && $25 == "none"))' \
    "$TMP/g.csv" | head -n 3)
[ -z "$bad" ] || fail "--backend gpu rows not verified: $bad"

# 5. A wrong result is loud: the row says FAIL, stderr names it, the exit status is 1, and the
#    other kernels still run and pass (NZ_BENCH_CORRUPT perturbs one kernel's output as read).
NZ_BENCH_CORRUPT=csr/parallel "$NZ" bench --backend cpu --quick --no-real --precision double \
    --runs 3 --alg csr --csv "$TMP/c.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] || fail "a wrong result exited $rc, expected 1"
grep -q "FAILED: laplace3d-16 double csr/parallel: WRONG RESULT" "$TMP/err" ||
    { fail "the wrong result is not named on stderr"; show; }
grep -q "^laplace3d-16 .* csr/parallel .* FAIL  *WRONG RESULT" "$TMP/out" ||
    fail "the table row is not marked FAIL"
grep -q "kernel run(s) FAILED" "$TMP/out" || fail "the summary does not report the failure"
[ "$(awk -F, 'NR > 1 && $9 == "failed" && $25 == "FAIL"' "$TMP/c.csv" | wc -l)" -eq 6 ] ||
    fail "expected 6 failed csr/parallel CSV rows"
[ "$(awk -F, 'NR > 1 && $8 == "csr/serial" && $25 == "pass"' "$TMP/c.csv" | wc -l)" -eq 6 ] ||
    fail "csr/serial should still pass on all 6 matrices"

# 6. Bad command lines: exit 2 with one line on stderr.
for args in "--runs 0" "--alg no-such-alg" "--backend tpu" "--size huge" "--precision half" \
    "--offsets 16" "--no-such-option" "--csv" "--spgemm --alg cpu" "--spgemm --alg nope" \
    "--solve --solve-sizes 2" "--solve --solve-sizes 64,x" "--solve --solve-sizes ,"; do
    # shellcheck disable=SC2086
    "$NZ" bench $args >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ $rc -eq 2 ] || fail "'nz bench $args' exited $rc, expected 2"
    [ -s "$TMP/err" ] || fail "'nz bench $args' printed no error"
done
"$NZ" bench --help >"$TMP/out" 2>"$TMP/err" || fail "--help failed"
grep -q -- "--quick" "$TMP/out" || fail "--help does not list --quick"

# 7. --png: a chart that cannot be drawn is an error (exit 1, one line naming why), found before
#    the run; NZ_BENCH_PYTHON picks the interpreter. Fake interpreters stand in for python: one
#    without matplotlib, one that draws (touches the PNG), one whose plot.py fails.
mkdir -p "$TMP/py"
printf '#!/bin/sh\nexit 1\n' >"$TMP/py/nompl"
printf '#!/bin/sh\n[ "$1" = -c ] && exit 0\n: > "$3"\n' >"$TMP/py/draws"
printf '#!/bin/sh\n[ "$1" = -c ] && exit 0\nexit 1\n' >"$TMP/py/fails"
chmod +x "$TMP/py/nompl" "$TMP/py/draws" "$TMP/py/fails"
png_run() {
    NZ_BENCH_PYTHON="$TMP/py/$1" "$NZ" bench --backend cpu --quick --no-real --precision single \
        --alg csr/serial --runs 2 --csv "$TMP/p.csv" --png "$TMP/p.png" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}
png_run nompl
[ $rc -eq 1 ] || fail "--png without matplotlib exited $rc, expected 1"
grep -q "^nz bench: --png .*p.png: chart cannot be drawn: .*nompl cannot import matplotlib" \
    "$TMP/err" || { fail "--png without matplotlib: no one-line reason"; show; }
[ -e "$TMP/p.csv" ] && fail "--png without matplotlib still ran the benchmark"
png_run draws
[ $rc -eq 0 ] || { fail "--png with a drawing python exited $rc"; show; }
grep -q "^chart: $TMP/p.png" "$TMP/out" || fail "--png: no 'chart:' line"
[ -e "$TMP/p.png" ] || fail "--png: plot.py was not run"
png_run fails
[ $rc -eq 1 ] || fail "--png with a failing plot.py exited $rc, expected 1"
grep -q "chart not drawn: .*plot.py failed" "$TMP/err" || { fail "--png: plot.py failure not named"; show; }
NZ_BENCH_PLOT="$TMP/no-plot.py" NZ_BENCH_PYTHON="$TMP/py/draws" "$NZ" bench --backend cpu \
    --quick --no-real --runs 2 --csv "$TMP/q.csv" --png "$TMP/q.png" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] || fail "--png with a missing NZ_BENCH_PLOT exited $rc, expected 1"
grep -q "NZ_BENCH_PLOT=.*no-plot.py is not readable" "$TMP/err" || fail "missing plot.py not named"

# 8. The large real matrices: a directory of two small files stands in for --large. Their own
#    table after the generated suite, with the same columns, the source "large" in the CSV, the
#    planner's default plan (csr/auto: what it chose, its setup in ms and in SpMVs) per matrix in
#    the table and in a summary of its own; every row has its setup next to its time.
#    --no-real skips them; --quick skips the default directory; --only-large runs them alone.
mkdir -p "$TMP/large"
cp "$DATA/west0067.mtx" "$DATA/football.mtx" "$TMP/large/"
NZ_MATRIX_DIR= "$NZ" bench --backend cpu --quick --precision double --alg serial,auto --runs 2 \
    --large "$TMP/large" --csv "$TMP/l.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || { fail "--large exited $rc"; show; }
grep -q "^# large real matrices: 2 file(s) in $TMP/large" "$TMP/out" ||
    fail "the preamble does not name the large directory"
grep -q "^Large real matrices ($TMP/large), the same columns:" "$TMP/out" ||
    { fail "no large matrices' table"; show; }
header=$(grep '^matrix  *rows  *nnz prec' "$TMP/out" | sort -u | wc -l)
[ "$(grep -c '^matrix  *rows  *nnz prec' "$TMP/out")" -eq 2 ] && [ "$header" -eq 1 ] ||
    fail "the large table does not repeat the suite's header"
bad=$(awk '/^Large real matrices/ { n = 1; next } n == 1 || n == 2 { n++; next }
          n == 3 && $0 == "" { exit } n == 3 && !/^(west0067|football) / { print; exit }' "$TMP/out")
[ -z "$bad" ] || fail "another matrix in the large table: $bad"
sed -n '/^Large real matrices/,$p' "$TMP/out" | grep -q "^west0067 .* double csr/serial " ||
    fail "west0067 is not in the large table"
sed -n '/^Large real matrices/,$p' "$TMP/out" |
    grep -Eq "^football .* double csr/auto .* [0-9.]+ +[0-9.]+ .* ok +planner chose [a-z-]+" ||
    fail "no csr/auto row with the planner's choice and setup for football"
for m in west0067 football; do
    grep -Eq "^cpu,\"$m\",large,.*,double,csr/auto,ok,.*,[0-9.]+,\"planner chose [a-z-]+" \
        "$TMP/l.csv" || fail "no CSV csr/auto row with source large for $m"
done
head -n 1 "$TMP/l.csv" | grep -q ',plan_ms,.*,plan_spmvs,note$' || fail "no plan_spmvs CSV column"
grep -q "^double precision, large real matrices: the planner's default plan" "$TMP/out" ||
    fail "no large matrices' planner summary"
grep -Eq "^football +1226  [a-z-]+ " "$TMP/out" ||
    fail "no summary line for football"
grep -q "^double: on 2 large real matrices the default plan is within 10% of the fastest" \
    "$TMP/out" || fail "no large matrices' count line"
NZ_MATRIX_DIR= "$NZ" bench --backend cpu --quick --no-real --precision double --alg serial \
    --runs 2 --large "$TMP/large" --csv "$TMP/n.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || { fail "--no-real --large exited $rc"; show; }
grep -q "^Large real matrices" "$TMP/out" && fail "--no-real ran the large matrices"
grep -q ',large,' "$TMP/n.csv" && fail "--no-real wrote large rows"
grep -q "^# large real matrices: skipped (--no-real)" "$TMP/out" || fail "--no-real not said"
NZ_LARGE_MATRIX_DIR="$TMP/large" "$NZ" bench --backend cpu --quick --precision double \
    --alg serial --runs 2 --csv "$TMP/n.csv" >"$TMP/out" 2>"$TMP/err"
grep -q "^Large real matrices" "$TMP/out" && fail "--quick ran the large matrices without --large"
NZ_LARGE_MATRIX_DIR="$TMP/large" "$NZ" bench --backend cpu --only-large --precision double \
    --alg serial --runs 2 --csv "$TMP/o.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || { fail "--only-large exited $rc"; show; }
[ "$(awk -F, 'NR > 1 && $3 != "large"' "$TMP/o.csv" | wc -l)" -eq 0 ] ||
    fail "--only-large ran other matrices"
grep -q '^cpu,"west0067",large,' "$TMP/o.csv" || fail "--only-large did not run NZ_LARGE_MATRIX_DIR"
"$NZ" bench --backend cpu --quick --large "$TMP/no-such-dir" --runs 2 --alg serial \
    --csv "$TMP/x.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] || fail "a missing --large directory exited $rc, expected 1"
grep -q "no-such-dir" "$TMP/err" || fail "a missing --large directory is not named"
"$NZ" bench --only-large --no-real >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] || fail "--only-large --no-real is not a usage error"

# 9. --solve (SpSV and the Krylov solvers against cuSPARSE) runs on the GPU only: without a
#    device, or in a build without CUDA, it fails with one line on stderr and nothing on stdout;
#    with one, the quick sizes print the three tables and every result checks.
"$NZ" bench --solve --quick --runs 2 --csv "$TMP/s.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
if grep -Eq "no CUDA device|needs the CUDA backend" "$TMP/err"; then
    [ $rc -ne 0 ] || fail "--solve without a device exited 0"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || { fail "--solve without a device: not one line"; show; }
    [ -s "$TMP/out" ] && fail "--solve without a device wrote to stdout"
    [ -e "$TMP/s.csv" ] && fail "--solve without a device wrote a CSV"
else
    [ $rc -eq 0 ] || { fail "--solve --quick exited $rc"; show; }
    for t in "## (a) SpSV" "## (b) Krylov" "## (c) Time to solution"; do
        grep -qF "$t" "$TMP/out" || fail "--solve: no table '$t'"
    done
    grep -q "^| laplace3d 32^3 L .* | f64 | 32768 |" "$TMP/out" || fail "--solve: no SpSV row"
    head -n 1 "$TMP/s.csv" | grep -q '^part,matrix,precision,method,' || fail "--solve: bad CSV"
fi

if [ $FAILURES -ne 0 ]; then
    echo "test_bench: $FAILURES failure(s)" >&2
    exit 1
fi
echo "test_bench: all checks passed"
