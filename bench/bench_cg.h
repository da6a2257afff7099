/* bench_cg.h: the CG benchmark (`nz bench --cg`): the Q1 FE problem per size, backend and format. */
#ifndef NZ_BENCH_CG_H
#define NZ_BENCH_CG_H

#include "nonzero.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NZB_CG_MAX_SIZES 16

/* Zero-initialise, then set what you need; zero means default. */
typedef struct nzb_cg_options {
    int num_sizes;                      /* N values (elements per side); 0: the defaults below */
    int64_t sizes[NZB_CG_MAX_SIZES];    /* default 16 32 64 128 256 (GPU), 16 32 64 (CPU) */
    int64_t cpu_max_n;                  /* skip the CPU above this N (default 64) */
    int backend;                        /* -1 or 0: both (GPU when present); else 1 + nz_backend_t */
    int single;                         /* single precision (default double) */
    nz_precond_t precond;               /* default none */
    double rtol;                        /* default 1e-8 */
    int use_graph;                      /* GPU loop as a CUDA graph */
    int threads;                        /* CPU threads (0: OpenMP default) */
    double cpu_copy_gbs, gpu_copy_gbs;  /* copy bandwidth for the floor (0: measured here) */
    int64_t laplace_n;                  /* GPU: the 7-point Laplacian n^3 for the CuPy comparison
                                           (default 200; < 0 skips it) */
    int laplace_iterations;             /* its fixed iteration count (default 200) */
    FILE *out;                          /* default stdout */
    const char *csv_path;               /* also write the rows as CSV (NULL: no CSV) */
    const nz_tunables_t *tunables;      /* the context's tunables (NULL: the library's defaults) */
} nzb_cg_options_t;

/* Run CG on the Q1 FE problem of nz_gen_fe3d for every N, backend (CPU, GPU) and format (CSR,
 * and SELL-C-sigma where the backend accepts it; otherwise a note says it was skipped), from the
 * deterministic random start (the load is a discrete eigenvector; from x0 = 0 CG would take one
 * step). One row each: iterations, time per iteration, MUPS, the SpMV time, the host-to-device
 * transfer time (and its ratio to one SpMV), host assembly vs GPU assembly, the discrete L2
 * error, and the bandwidth floor per iteration = (SpMV bytes: the matrix arrays + x + y, plus the
 * vector kernels' 11 n values, 13 n with Jacobi) / copy bandwidth, with time / floor. On the GPU
 * it also times the 7-point Laplacian laplace_n^3 (double) against CuPy's 748 us per iteration
 * (H200). Returns the process exit status (0: every run converged or, for the fixed-count
 * Laplacian, ran). */
int nzb_bench_cg(const nzb_cg_options_t *options);

#ifdef __cplusplus
}
#endif

#endif /* NZ_BENCH_CG_H */
