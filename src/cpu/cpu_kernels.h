/* cpu_kernels.h: the CPU kernels behind nz_cpu_spmv_execute, one pair (f32, f64) per format. */
#ifndef NZI_CPU_KERNELS_H
#define NZI_CPU_KERNELS_H

#include "nzi.h"

/* Work (multiply-adds: stored entries, padding included, times right-hand sides) below which a
 * CPU kernel runs on one thread even when its plan's algorithm is parallel. Measured with
 * scripts/cpu_serial_threshold.c on 2 cores (docs/PLANNER.md, "CPU: one thread for small work"):
 * idle, a 2-thread team beats one thread from ~1200 nonzeros on, but saves at most ~40 us a call
 * below 32K; with both cores busy, teams of 20K nonzeros and more stalled 12-16 ms (a scheduler
 * time slice, waiting at the join for a preempted thread) where one thread took 50-80 us. The
 * planner uses the same number (nzi_plan_thresholds.cpu_serial_nnz). */
#define NZI_CPU_SERIAL_WORK 32768.0

/* Threads a kernel runs on: 1 unless `parallel` and work >= NZI_CPU_SERIAL_WORK; otherwise the
 * context's count `threads` (0: the OpenMP default), never more than nzi_thread_limit() (the
 * online CPUs, at most NZ_MAX_THREADS), so no region asks libgomp for threads the machine cannot
 * run. Teams of one thread skip the OpenMP region altogether (the pragmas' if clause). */
static inline int nzi_cpu_team(int parallel, int threads, double work) {
    if (!parallel || threads == 1 || work < NZI_CPU_SERIAL_WORK) return 1;
    return nzi_resolve_threads(threads);
}

/* Fixed-order block reductions (CG's and the Krylov methods' vector operations, cg_cpu.c and
 * krylov_cpu.c): the n entries are cut into blocks of NZI_CPU_REDUCE_BLOCK, each block's sum is
 * computed on some thread, and the caller adds the block sums in block order (serially), so a
 * result is bitwise the same for any thread count. 4096 doubles are 32 KB per vector, a
 * comfortable L1/L2 working set per thread. NZI_CPU_FOR_BLOCKS runs its body with `blk`, `lo`,
 * `hi` for each block, spread over `threads` threads; below NZI_CPU_SERIAL_WORK entries on one
 * thread, without an OpenMP region. */
#define NZI_CPU_REDUCE_BLOCK 4096
#define NZI_CPU_REDUCE_BLOCKS(n) (((n) + NZI_CPU_REDUCE_BLOCK - 1) / NZI_CPU_REDUCE_BLOCK)
#define NZI_CPU_FOR_BLOCKS(n, blocks, threads, ...)                                             \
    do {                                                                                        \
        const int64_t nzi_n_ = (n), nzi_blocks_ = (blocks);                                     \
        const int nzi_threads_ = (threads);                                                     \
        (void)nzi_threads_;                                                                     \
        _Pragma("omp parallel for schedule(static) num_threads(nzi_threads_) if((double)nzi_n_ >= NZI_CPU_SERIAL_WORK)") \
        for (int64_t blk = 0; blk < nzi_blocks_; blk++) {                                       \
            int64_t lo = blk * NZI_CPU_REDUCE_BLOCK;                                            \
            int64_t hi = lo + NZI_CPU_REDUCE_BLOCK < nzi_n_ ? lo + NZI_CPU_REDUCE_BLOCK : nzi_n_; \
            __VA_ARGS__;                                                                        \
        }                                                                                       \
    } while (0)

/* d[i] += a_ii for a host matrix of any format (d zeroed by the caller, n = rows entries;
 * missing diagonal entries leave 0). One pass over the entries (cg_cpu.c). */
void nzi_cpu_extract_diagonal(const nz_matrix_t *A, double *d);

#ifdef _OPENMP
#include <omp.h>
#define NZI_PRAGMA(x) _Pragma(#x)
/* Parallel for with a static schedule on `team` threads (nzi_cpu_team); one thread: no region. */
#define NZI_OMP_FOR(team)                                                                       \
    NZI_PRAGMA(omp parallel for schedule(static) if ((team) > 1) num_threads(team))
/* Vectorise the following loop (its iterations are independent). */
#define NZI_OMP_SIMD NZI_PRAGMA(omp simd)
#else
#define NZI_OMP_FOR(team)
#define NZI_OMP_SIMD
#endif

/* Every kernel computes y = alpha A x + beta y for a host matrix of its format with BLAS rules:
 * beta == 0 means y is not read (NaN in y does not propagate), alpha == 0 means A and x are not
 * read. `parallel` selects OpenMP, `threads` 0 = the OpenMP default; the team is
 * nzi_cpu_team(parallel, threads, stored entries). All are deterministic: each output entry is
 * computed by one thread in a fixed order, so the result is bitwise the same for any team. */
#define NZI_DECLARE_KERNEL(NAME)                                                                \
    void NAME##_f32(const nz_matrix_t *A, float alpha, const float *x, float beta, float *y,    \
                    int parallel, int threads);                                                 \
    void NAME##_f64(const nz_matrix_t *A, double alpha, const double *x, double beta,           \
                    double *y, int parallel, int threads);

NZI_DECLARE_KERNEL(nzi_cpu_csr_spmv)      /* rows in parallel (spmv_csr.c) */
NZI_DECLARE_KERNEL(nzi_cpu_csc_spmv)      /* serial column scatter */
NZI_DECLARE_KERNEL(nzi_cpu_coo_spmv)      /* row ranges found by binary search */
NZI_DECLARE_KERNEL(nzi_cpu_ell_spmv)      /* blocks of rows, column-major sweep */
NZI_DECLARE_KERNEL(nzi_cpu_sell_spmv)     /* chunks in parallel, any chunk height */
NZI_DECLARE_KERNEL(nzi_cpu_sell_simd_spmv)/* chunk height 4 or 8 only, vectorised over the chunk */
NZI_DECLARE_KERNEL(nzi_cpu_hyb_spmv)      /* ELL blocks plus their COO rows */
NZI_DECLARE_KERNEL(nzi_cpu_bsr_spmv)      /* block rows in parallel */
NZI_DECLARE_KERNEL(nzi_cpu_dia_spmv)      /* blocks of rows, diagonal by diagonal */

#endif /* NZI_CPU_KERNELS_H */
