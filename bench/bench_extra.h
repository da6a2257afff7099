/* bench_extra.h: GPU benchmarks of transpose SpMV and SpMM (many right-hand sides) against cuSPARSE. */
#ifndef NZ_BENCH_EXTRA_H
#define NZ_BENCH_EXTRA_H

#include "nonzero.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NZB_EXTRA_MAX_K 8

/* Zero-initialise, then set what you need; zero means default. */
typedef struct nzb_extra_options {
    int transpose_only, spmm_only;  /* default: both parts */
    int single;                     /* single precision (default double) */
    int runs;                       /* timed runs per kernel, median reported (default and
                                       minimum 20), after 3 untimed warm-up runs */
    int num_ks;                     /* SpMM right-hand-side counts (default 1 4 8 16 32 64) */
    int64_t ks[NZB_EXTRA_MAX_K];
    int num_files;                  /* matrices to read (.mtx, .mtx.gz, .nzb); 0: the built-in
                                       generated suite (FE 64^3, Laplace 64^3, R-MAT 18, rail) */
    char **files;
    const char *csv_path;           /* also write every row as CSV (NULL: none) */
    const nz_tunables_t *tunables;  /* the context's tunables (NULL: the library's defaults) */
} nzb_extra_options_t;

/*
 * Transpose SpMV (y = A^T x) and SpMM (Y = A X, k columns, row- and column-major) on device 0,
 * timed with CUDA events on a stream of our own that the Nonzero context is bound to
 * (nz_context_set_device(ctx, 0, stream)); median of `runs` runs after warm-up. Every result,
 * ours and cuSPARSE's, is verified once against a CPU double reference (tolerance scaled by
 * row length). Rows (on `out`, default stdout, and in the CSV):
 *   matrix, op, k, layout, ours (format/alg and variant), time, GB/s (matrix + X + Y bytes),
 *   plan time, cuSPARSE best (alg), its time, speedup = cuSPARSE best / ours.
 * Transpose: ours with the cached device transpose (merge and vector; plan time = building A^T)
 * and the atomic scatter, vs cusparseSpMV(CUSPARSE_OPERATION_TRANSPOSE) with CSR_ALG1 and
 * CSR_ALG2 (refused ones are reported). SpMM: ours (csr/vector; sell/scalar when device SELL
 * exists) vs cusparseSpMM with CSR_ALG1, ALG2, ALG3 for each k and layout.
 * Returns 0 when every kernel ran and verified, 1 on a failure or a wrong result, 2 when no
 * GPU is available (one line says why). Call it from `nz bench` as
 *     nzb_extra_options_t o = {0}; o.single = ...; status = nzb_bench_transpose_spmm(stdout, &o);
 */
int nzb_bench_transpose_spmm(FILE *out, const nzb_extra_options_t *options);

#ifdef __cplusplus
}
#endif

#endif /* NZ_BENCH_EXTRA_H */
