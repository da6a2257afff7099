/* bench_spgemm.h: the SpGEMM benchmark (`nz bench --spgemm`): A*A, Nonzero vs cuSPARSE SpGEMM. */
#ifndef NZ_BENCH_SPGEMM_H
#define NZ_BENCH_SPGEMM_H

#include "nonzero.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Zero-initialise, then set what you need; zero means default. */
typedef struct nzb_spgemm_options {
    int single;                /* single precision (default double) */
    int runs;                  /* timed runs per algorithm, median reported (default 3) */
    int quick;                 /* small suite (Laplacian 40^3, FE 24^3, random 100K, R-MAT 12-14) */
    int real;                  /* also every matrix in NZ_MATRIX_DIR (square ones: A*A) */
    int rmat_edge_factor;      /* default 16 (Graph500) */
    size_t gpu_memory_limit;   /* passed to nz_spgemm (0: the free device memory) */
    int num_files;             /* matrices to read instead of the generated suite */
    char **files;
    const char *csv_path;      /* also write every row as CSV (NULL: none) */
    FILE *out;                 /* default stdout */
    nz_spgemm_alg_t alg;       /* ours: NZ_SPGEMM_HASH (also for AUTO), ESC or HYSPMM */
} nzb_spgemm_options_t;

/* For every matrix A of the suite: C = A*A with Nonzero's hash algorithm (fresh context per run,
 * so the peak device bytes are this product's), verified once against the CPU algorithm (every
 * row when the product has at most 5e8 multiplications, else 2000 sampled rows plus the 8 with the
 * most products); then cuSPARSE cusparseSpGEMM ALG1, ALG2 and ALG3 in the same run, each timed
 * from work estimation to the copy into C (buffer and output allocations included), any failure
 * (CUSPARSE_STATUS_INSUFFICIENT_RESOURCES, out of memory) recorded as a note, never fatal.
 * Table per matrix: products, nnz(C), ours end to end (host A in, host C out), ours on the device
 * (symbolic + numeric phases), panels, overlap, GFLOP/s = 2 products / time, peak device bytes,
 * and per cuSPARSE algorithm its time or failure; speedups against cuSPARSE's best on the device
 * and end to end (cuSPARSE plus the copies of A in and C out). Summary: geometric-mean speedups
 * where cuSPARSE succeeds and whether ours was correct where it failed.
 * Returns 0 when every Nonzero run succeeded and verified, 1 otherwise. CUDA builds only. */
int nzb_bench_spgemm(const nzb_spgemm_options_t *options);

#ifdef __cplusplus
}
#endif

#endif /* NZ_BENCH_SPGEMM_H */
