# test_list.sh: `nz spmv --list` prints FORMAT/ALG lines and nothing else.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup

for backend in cpu cuda; do
    expect_ok "spmv --list --backend $backend" "$NZ" spmv --list --backend $backend || continue
    cp "$OUT" "$TMP/list_$backend"
    if grep -Evq '^(csr|csc|coo|ell|sell|hyb|bsr|dia)/[a-z][a-z-]*$' "$OUT"; then
        fail "--list --backend $backend: a line is not FORMAT/ALG"
        show_output
    fi
    if [ "$(sort "$OUT" | uniq -d | wc -l)" -ne 0 ]; then
        fail "--list --backend $backend: duplicate lines"
    fi
    # Every listed algorithm name is accepted back by --alg (no matrix needed to parse it).
    for alg in $(sed 's|.*/||' "$OUT" | sort -u); do
        run "$NZ" spmv --alg "$alg" --list
        [ "$RC" -eq 0 ] || fail "--alg $alg from --list is not accepted"
    done
done
cpu_lines=$(wc -l <"$TMP/list_cpu")
[ "$cpu_lines" -ge 8 ] || fail "--list: only $cpu_lines CPU pairs, expected one or more per format"
for f in csr csc coo ell sell hyb bsr dia; do
    grep -q "^$f/" "$TMP/list_cpu" || fail "--list: no CPU algorithm for $f"
done
grep -qx 'csr/serial' "$TMP/list_cpu" || fail "--list: csr/serial (the reference) missing"
# The default backend is the CPU.
expect_ok "spmv --list" "$NZ" spmv --list && cmp -s "$OUT" "$TMP/list_cpu" ||
    fail "--list without --backend differs from --backend cpu"
# Without a device the CUDA list may be empty, but never holds CPU-only algorithms.
if grep -Eq '/(serial|parallel|simd)$' "$TMP/list_cuda"; then
    fail "--list --backend cuda lists CPU algorithms"
fi
expect_error 2 "--backend" "--list with a bad backend" "$NZ" spmv --list --backend tpu

cli_finish
