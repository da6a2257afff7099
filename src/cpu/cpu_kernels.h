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
#else
#define NZI_OMP_FOR(parallel, threads)
#endif

void nzi_cpu_csr_spmv_f32(const nz_matrix_t *A, float alpha, const float *x, float beta, float *y,
                          int parallel, int threads);
void nzi_cpu_csr_spmv_f64(const nz_matrix_t *A, double alpha, const double *x, double beta,
                          double *y, int parallel, int threads);

#endif /* NZI_CPU_KERNELS_H */
