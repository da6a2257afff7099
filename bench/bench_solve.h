/* bench_solve.h: the solver benchmark (`nz bench --solve`): GPU SpSV against cuSPARSE, Krylov cost per iteration, time to solution. */
#ifndef NZ_BENCH_SOLVE_H
#define NZ_BENCH_SOLVE_H

#include "nonzero.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NZB_SOLVE_MAX_SIZES 8

/* Zero-initialise, then set what you need; zero means default. */
typedef struct nzb_solve_options {
    int num_sizes;                      /* grid sides n (matrices n^3); 0: 128 200 (32 48 quick) */
    int64_t sizes[NZB_SOLVE_MAX_SIZES];
    int single, dbl;                    /* SpSV precisions (both 0: both); Krylov runs f64 */
    int runs;                           /* timed runs per SpSV / SpMV (default 20); the Krylov
                                           solves run min(runs, 5) times */
    int quick;                          /* small default sizes (32, 48) */
    double peclet;                      /* convdiff3d mesh Peclet number (default 1) */
    int krylov_iterations;              /* part (b)'s fixed count (default 50) */
    const char *csv_path;               /* also write every row as CSV (NULL: none) */
    FILE *out;                          /* default stdout */
    const nz_tunables_t *tunables;      /* the context's tunables (NULL: the library's defaults) */
} nzb_solve_options_t;

/* On device 0, in one run: (a) SpSV of the lower triangle of the 7-point Laplacian n^3 and of
 * the lower and upper triangles of convdiff3d n^3 (stand-ins with the pattern and level sets of
 * the IC(0) / ILU(0) factors, which the public API does not expose), Nonzero (nz_spsv_plan on
 * the device matrix) against cuSPARSE SpSV (CUSPARSE_SPSV_ALG_DEFAULT) on the same device
 * arrays, both solutions compared; (b) BiCGSTAB and GMRES(30) per iteration on convdiff3d n^3
 * (f64, a fixed iteration count) against one SpMV of the matrix; (c) ILU(0)-preconditioned
 * BiCGSTAB and GMRES(30) to rtol 1e-8 on convdiff3d with the first size. Every time after a
 * warm-up, CUDA events on the context's stream, medians. A call the device refuses
 * (NZ_ERR_UNSUPPORTED) prints a row saying so. Returns 0, or 1 when a result was wrong, a call
 * failed otherwise, or there is no device (one line on stderr). CUDA builds only. */
int nzb_bench_solve(const nzb_solve_options_t *options);

#ifdef __cplusplus
}
#endif

#endif /* NZ_BENCH_SOLVE_H */
