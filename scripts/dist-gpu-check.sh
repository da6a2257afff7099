#!/bin/sh
# dist-gpu-check.sh: on the GPU machine, build with CUDA and MPI, run the mpi tests (GPU ranks
# sharing the device, CUDA-aware and staged), the distributed CLI on GPU ranks, and the scaling
# tables. Output under ${OUT:-dist-gpu-out}. Usage: scripts/dist-gpu-check.sh [build dir]
B=${1:-build-dist-gpu}
OUT=${OUT:-dist-gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
{
    echo "== tools"; command -v mpicc mpiexec nvcc; mpiexec --version | head -1
    nvidia-smi -L 2>&1 | head -4
    ompi_info --parsable --all 2>/dev/null | grep -i "mpi_built_with_cuda_support:value" || true
} > "$OUT/env.txt" 2>&1
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release > "$OUT/configure.log" 2>&1 &&
    cmake --build "$B" -j"$(nproc)" > "$OUT/build.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
grep -i "distributed layer\|MPI not found" "$OUT/configure.log"
(cd "$B" && ctest -L mpi --output-on-failure > "$OUT/ctest-mpi.log" 2>&1; tail -25 "$OUT/ctest-mpi.log")
for n in 1 2 4; do
    for stage in 0 1; do
        echo "== mpiexec -n $n nz cg --fe3d 64 --backend cuda (staging forced: $stage)"
        NZ_DIST_STAGE=$stage mpiexec -n $n --oversubscribe "$B/nz" cg --dist --fe3d 64 --backend cuda --precond jacobi 2>&1 | grep -v "^\["
    done
done > "$OUT/cg-gpu.txt" 2>&1
cat "$OUT/cg-gpu.txt"
mpiexec -n 4 --oversubscribe "$B/nz" bench --dist --backend cuda --n 128 --weak 80 > "$OUT/bench-gpu.txt" 2>&1
cat "$OUT/bench-gpu.txt"
mpiexec -n 4 --oversubscribe "$B/nz" bench --dist --n 48 --weak 32 --threads 4 > "$OUT/bench-cpu.txt" 2>&1
cat "$OUT/bench-cpu.txt"
