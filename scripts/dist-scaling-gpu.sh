#!/bin/sh
# dist-scaling-gpu.sh: the multi-GPU scaling run of the distributed SpMV and CG, one rank a GPU on
# a machine with several GPUs: build with CUDA and MPI, `ctest -L mpi`, then `nz bench --dist`
# (FE strong, Laplacian strong, FE weak at two sizes) with halo messages as device pointers
# (CUDA-aware MPI, where the MPI is) and staged through pinned host memory, side by side.
# Usage: scripts/dist-scaling-gpu.sh [bench options]   (default: --n 256 --laplace 400 --weak 128
#        --weak 253, i.e. FE n = 256 and laplace3d 400^3 strong, ~2M and ~16M unknowns a GPU weak)
# GPU_ARCH=90 builds for that architecture only; STAGES="0 1" (default) runs without and with
# forced staging (the same where the MPI is not CUDA-aware); output under ${OUT:-dist-gpu-out}.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-dist-gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
B=build-dist${GPU_ARCH:-}
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
[ "$GPUS" -ge 1 ] || { echo "dist-scaling-gpu.sh: no GPU"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and friends, as the machine sets them): the
# layer uses no NCCL, and these are inherited by the ranks unchanged
{
    echo "== $(date -u +%FT%TZ), $(git rev-parse --short HEAD 2>/dev/null || cat REVISION 2>/dev/null), $GPUS GPUs, $(nproc) cores"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvidia-smi topo -m 2>&1 | head -12
    mpiexec --version | head -1
    ompi_info --parsable --all 2>/dev/null | grep -i "mpi_built_with_cuda_support:value" || echo "ompi_info: no CUDA support line"
    env | grep -E "NVLS|MULTICAST" || true
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
t0=$(date +%s)
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release ${GPU_ARCH:+-DCMAKE_CUDA_ARCHITECTURES=$GPU_ARCH} > "$OUT/configure.log" 2>&1 &&
    cmake --build "$B" -j"$(nproc)" > "$OUT/build.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s; $(grep -i "distributed layer\|MPI not found" "$OUT/configure.log" | head -1)"
(cd "$B" && timeout 300 ctest -L mpi --output-on-failure > "$OUT/ctest-mpi.log" 2>&1
 echo "ctest -L mpi: rc=$? :: $(grep -E 'tests passed|tests failed' "$OUT/ctest-mpi.log" | tail -1)")
[ $# -gt 0 ] || set -- --n 256 --laplace 400 --weak 128 --weak 253
for stage in ${STAGES:-0 1}; do
    t0=$(date +%s)
    NZ_DIST_STAGE=$stage timeout ${BENCH_TIMEOUT:-240} mpiexec -n "$GPUS" --bind-to none "$B/nz" bench --dist --backend cuda "$@" \
        > "$OUT/bench-stage$stage.txt" 2>&1
    echo "== mpiexec -n $GPUS nz bench --dist --backend cuda $* (NZ_DIST_STAGE=$stage): rc=$? ($(( $(date +%s) - t0 )) s)"
    cat "$OUT/bench-stage$stage.txt"
done
