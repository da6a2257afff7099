/* bench_amg.h: the algebraic-multigrid benchmark (`nz bench --amg`): AMG-PCG against Jacobi-PCG, set-up and solve, on the CPU or the GPU. */
#ifndef NZ_BENCH_AMG_H
#define NZ_BENCH_AMG_H

#include "nonzero.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NZB_AMG_MAX_SIZES 8

/* Zero-initialise, then set what you need; zero means default. */
typedef struct nzb_amg_options {
    int cuda;                           /* 1: device 0 (matrices uploaded), 0: the CPU */
    int num_sizes;                      /* grid sides n; 0: 32 64 (CPU) / 64 128 (GPU); 16 24
                                           with quick */
    int64_t sizes[NZB_AMG_MAX_SIZES];
    int quick;
    int real;                           /* the symmetric real matrices of the matrix directory
                                           (NZ_MATRIX_DIR, else the source tree's
                                           ../shared/matrices) */
    int runs;                           /* solves per row, the median reported (default 3) */
    int threads;                        /* CPU threads (0: OpenMP's) */
    const char *csv_path;               /* also write every row as CSV (NULL: none) */
    FILE *out;                          /* default stdout */
} nzb_amg_options_t;

/* For each size n: fe3d n (Q1 Poisson, (n-1)^3 unknowns) and laplace3d n^3, each with a V- and
 * a W-cycle, and (n <= 128)
 * elasticity3d n / 2 (3 unknowns a node, the six rigid-body modes as near-nullspace), then the real symmetric
 * matrices: AMG set-up (nz_precond_create), re-setup with the same values (nz_precond_update),
 * AMG-PCG to rtol 1e-8 (nz_solve, true residual) and Nonzero's Jacobi-PCG in the same run, time
 * to solution with the set-up included. Returns 0, or 1 when a solve that must converge did
 * not, or a call failed (one line on stderr). */
int nzb_bench_amg(const nzb_amg_options_t *options);

#ifdef __cplusplus
}
#endif

#endif /* NZ_BENCH_AMG_H */
