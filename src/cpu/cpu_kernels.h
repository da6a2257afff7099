/* cpu_kernels.h: the CPU kernels behind nz_cpu_spmv_execute, one pair (f32, f64) per format. */
#ifndef NZI_CPU_KERNELS_H
#define NZI_CPU_KERNELS_H

#include "nzi.h"

#ifdef _OPENMP
#include <omp.h>
#define NZI_PRAGMA(x) _Pragma(#x)
/* Parallel for with a static schedule when `parallel` is non-zero; `threads` 0 = OpenMP default. */
#define NZI_OMP_FOR(parallel, threads)                                                          \
    NZI_PRAGMA(omp parallel for schedule(static) if (parallel) num_threads((threads) > 0 ? (threads) : omp_get_max_threads()))
/* Vectorise the following loop (its iterations are independent). */
#define NZI_OMP_SIMD NZI_PRAGMA(omp simd)
#else
#define NZI_OMP_FOR(parallel, threads)
#define NZI_OMP_SIMD
#endif

/* Every kernel computes y = alpha A x + beta y for a host matrix of its format with BLAS rules:
 * beta == 0 means y is not read (NaN in y does not propagate), alpha == 0 means A and x are not
 * read. `parallel` selects OpenMP, `threads` 0 = the OpenMP default. All are deterministic:
 * each output entry is computed by one thread in a fixed order. */
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
