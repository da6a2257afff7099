#!/bin/bash
# ncu-spmv.sh: DRAM bytes read, L2 hit rate and duration of one SpMV per plan variant (issue 19),
# with Nsight Compute on `nz spmv`, for the generated gather-bound matrices.
# Usage: scripts/ncu-spmv.sh BUILD_DIR   (logs to $OUT/ncu-*.txt; needs ncu on PATH)
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT" /tmp/nz-ncu
NZ=$BUILD/nz
METRICS=dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
gen() { [ -f /tmp/nz-ncu/$1.nzb ] || $NZ gen "${@:2}" -o /tmp/nz-ncu/$1.nzb; }
gen random4m random --rows 4194304 --mean 16
gen rmat20 rmat --scale 20 --edge-factor 16
gen laplace200 laplace3d --n 200
VARIANTS=${VARIANTS:-"vector: vector:hints vector:panels,hints vector:reorder,hints vector:compressed merge: merge:hints merge:reorder,hints"}
MATRICES=${MATRICES:-"random4m rmat20 laplace200"}
for m in $MATRICES; do
  for variant in $VARIANTS; do
    alg=${variant%%:*}; flags=${variant#*:}
    log="$OUT/ncu-$m-$alg-$(echo ${flags:-plain} | tr , +)${NZ_TUNE_PANELS:+-p$NZ_TUNE_PANELS}.txt"
    ncu --metrics $METRICS --kernel-name regex:'csr_vector_kernel|csr_steps_kernel|merge|gather_kernel' \
      --launch-skip 0 --launch-count 12 $NZ spmv /tmp/nz-ncu/$m.nzb --backend cuda --alg $alg \
      ${flags:+--plan-flags $flags} --repeat 2 > "$log" 2>&1
    # sum over the kernels of the first SpMV (the plan's kernels are excluded by the name filter;
    # --repeat 2 runs it twice and every launch is listed: half the total is one SpMV)
    awk -v m=$m -v v="$alg:${flags:-plain}${NZ_TUNE_PANELS:+ panels=$NZ_TUNE_PANELS}" '
      /dram__bytes_read.sum/ { u=$(NF-1); x=$NF; gsub(",","",x); f=(u=="Gbyte"?1e9:u=="Mbyte"?1e6:u=="Kbyte"?1e3:1); dram+=x*f }
      /gpu__time_duration.sum/ { u=$(NF-1); x=$NF; gsub(",","",x); f=(u=="ms"?1e3:u=="us"?1:u=="ns"?1e-3:1e6); t+=x*f }
      /lts__t_sector_hit_rate.pct/ { x=$NF; gsub(",","",x); hit+=x; n++ }
      END { printf "%-11s %-24s DRAM read %.3f GB per SpMV, L2 hit %.1f%% (mean over kernels), %.1f us per SpMV (ncu, caches flushed)\n", m, v, dram/2e9, n?hit/n:0, t/2 }' "$log" | tee -a "$OUT/ncu-summary.txt"
  done
done
