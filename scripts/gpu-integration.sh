#!/bin/bash
# gpu-integration.sh: one GPU call for the pieces that join the library around it: the GPU tests
# of the thread-safety, Python, MPI and install layers, distributed CG on GPU ranks (CUDA-aware
# and staged), and the Python benchmark against CuPy. Logs under $OUT.
# Usage: scripts/gpu-integration.sh   (ARCH=90 by default: only this machine's code, for speed)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export PYTHONUNBUFFERED=1
B=build-int
MDIR=${NZ_CARRY_MATRICES:-}
s="$OUT/integration-summary.txt"
note() { echo "$*" | tee -a "$s"; }
t0=$(date +%s)
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=${ARCH:-90} \
  ${MDIR:+-DNZ_TEST_MATRIX_DIR=$MDIR} > "$OUT/int-build.log" 2>&1 &&
  cmake --build $B -j "$(nproc)" >> "$OUT/int-build.log" 2>&1 || { grep -E "error" "$OUT/int-build.log" | head -30; exit 1; }
note "build: $(( $(date +%s) - t0 )) s; $(grep -i 'distributed layer' "$OUT/int-build.log" | head -1)"
(cd $B && timeout ${CTEST_SECONDS:-210} ctest -R "threads_gpu|python|mpi|install|gpu/test_reliability" \
   --output-on-failure) > "$OUT/int-ctest.log" 2>&1
note "ctest (threads_gpu, python, mpi, install, reliability): rc=$? :: $(grep -E 'tests passed|tests failed' "$OUT/int-ctest.log" | tail -1)"
grep -E "Failed|\*\*\*|Skipped" "$OUT/int-ctest.log" | head -20 | tee -a "$s"
for n in 1 2; do
  for stage in 0 1; do
    echo "== mpiexec -n $n nz cg --dist --fe3d 64 --backend cuda --precond jacobi (NZ_DIST_STAGE=$stage)"
    NZ_DIST_STAGE=$stage timeout 60 mpiexec -n $n $B/nz cg --dist --fe3d 64 --backend cuda --precond jacobi 2>&1 | grep -v "^\["
  done
done > "$OUT/dist-cg-gpu.txt" 2>&1
grep -E "==|iterations|converged|error|MPI" "$OUT/dist-cg-gpu.txt" | head -24 | tee -a "$s"
timeout 70 mpiexec -n 2 $B/nz bench --dist --backend cuda --n 96 --weak 64 > "$OUT/dist-bench-gpu.txt" 2>&1
note "bench --dist --backend cuda (2 ranks, one GPU): rc=$?"
tail -20 "$OUT/dist-bench-gpu.txt" | tee -a "$s"
NONZERO_LIBRARY=$B/libnonzero.so.0 PYTHONPATH=python timeout ${PYBENCH_SECONDS:-170} python3 -m nonzero.bench \
  > "$OUT/py-bench.txt" 2>&1
note "python3 -m nonzero.bench: rc=$?"
tail -40 "$OUT/py-bench.txt"
