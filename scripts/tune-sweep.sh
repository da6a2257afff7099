#!/bin/sh
# tune-sweep.sh: one GPU run that times every CSR kernel variant (NZ_TUNE_*) on the generated suite.
#
# Run on the GPU machine from the repository root, after
#   cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j16
# It makes ONE `nz bench` call (the six generated matrices are built once), with NZ_BENCH_TUNE
# listing extra plans per algorithm: bench_cuda_case.cu runs each algorithm with its defaults, then
# once per entry with those NZ_TUNE_* tunables set on the context while the plan is made (read
# at plan setup), every variant verified against the CPU reference like the defaults.
# Output (under $OUT, default ./tune-out): sweep.csv (every row), sweep.log (stderr of the run),
# and a table of GB/s per (matrix, precision, kernel) printed last, best of ours and cuSPARSE's
# best marked. Environment: NZ=path to nz (default build-gpu/nz), RUNS (default 30),
# ALGS (default every tuned CSR algorithm), TUNE (replaces the variant list below).
set -u
NZ=${NZ:-build-gpu/nz}
OUT=${OUT:-tune-out}
RUNS=${RUNS:-30}
ALGS=${ALGS:-scalar,vector,ipcsr,adaptive,merge}
mkdir -p "$OUT"

# Variants: "alg:VAR=v+VAR=v", separated by ';'. Defaults (see docs/dev/PERF_NOTES.md):
# vector: V from mean/4 (FE: 8, Laplacian: 2, random: 4, rail: 32), U = 4.
V=""
for w in 2 4 8 16 32; do
    for u in 1 2 8; do V="$V;vector:NZ_TUNE_VECTOR_WIDTH=$w+NZ_TUNE_VECTOR_UNROLL=$u"; done
    V="$V;vector:NZ_TUNE_VECTOR_WIDTH=$w"
done
V="$V;adaptive:NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD=4;adaptive:NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD=8"
V="$V;adaptive:NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD=32"
TUNE=${TUNE:-${V#;}}

echo "tune-sweep: $NZ bench --no-real --precision both --alg $ALGS --runs $RUNS" >&2
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader \
    > "$OUT/sweep.log" 2>&1 || true
start=$(date +%s)
NZ_BENCH_TUNE="$TUNE" "$NZ" bench --no-real --precision both --alg "$ALGS" --runs "$RUNS" \
    --csv "$OUT/sweep.csv" >> "$OUT/sweep.log" 2>&1
rc=$?
echo "nz bench exit $rc after $(($(date +%s) - start)) s" >> "$OUT/sweep.log"
tail -n 5 "$OUT/sweep.log"
[ -s "$OUT/sweep.csv" ] || { echo "tune-sweep: no CSV" >&2; exit 1; }

# Table: matrix, precision, kernel, median us, GB/s (minimal bytes), % of copy, check; one block
# per (matrix, precision), with cuSPARSE's best and our best summarised.
python3 - "$OUT/sweep.csv" <<'EOF' || awk -F, 'NR > 1 { print $2, $7, $8, $12, $17, $20, $25 }' "$OUT/sweep.csv"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("source") == "generated"]
groups = {}
for r in rows:
    groups.setdefault((r["matrix"], r["precision"]), []).append(r)
summary = []
for (m, p), rs in groups.items():
    ok = [r for r in rs if r["status"] == "ok" and r["check"] == "pass"]
    cus = [float(r["median_us"]) for r in ok if r["kernel"].startswith("cusparse")]
    best_c = min(cus) if cus else float("nan")
    print(f"\n{m} {p}  (cuSPARSE best {best_c:.1f} us)")
    for r in sorted(rs, key=lambda r: float(r["median_us"] or 1e30)):
        t = float(r["median_us"] or "nan")
        sp = best_c / t if t == t and t > 0 else float("nan")
        flag = "" if r in ok else "  <-- " + r["status"] + "/" + r["check"]
        print(f"  {r['kernel'][:44]:44s} {t:10.1f} us {float(r['gbs_min'] or 0):8.0f} GB/s "
              f"{float(r['pct_copy'] or 0):5.1f}% x{sp:5.2f}{flag}")
    ours = [r for r in ok if not r["kernel"].startswith("cusparse")]
    if ours:
        b = min(ours, key=lambda r: float(r["median_us"]))
        d = [r for r in ours if ":" not in r["kernel"]]
        bd = min(d, key=lambda r: float(r["median_us"])) if d else b
        summary.append((m, p, b["kernel"], best_c / float(b["median_us"]), float(b["pct_copy"]),
                        bd["kernel"], best_c / float(bd["median_us"]), float(bd["pct_copy"])))
print("\nSUMMARY  matrix precision | best variant xcuSPARSE %copy | best default xcuSPARSE %copy")
for s in summary:
    print(f"  {s[0]:14s} {s[1]:6s} | {s[2][:40]:40s} x{s[3]:4.2f} {s[4]:5.1f}% | "
          f"{s[5]:18s} x{s[6]:4.2f} {s[7]:5.1f}%")
import math
for p in ("single", "double"):
    for k, name in ((3, "best variant"), (6, "best default")):
        v = [s[k] for s in summary if s[1] == p and s[k] > 0]
        if v:
            print(f"  geomean {p} {name}: x{math.exp(sum(map(math.log, v)) / len(v)):.3f}")
EOF
exit $rc
