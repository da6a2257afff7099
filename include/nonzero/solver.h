/* nonzero/solver.h: conjugate gradients. Part of <nonzero.h>. */
#ifndef NONZERO_SOLVER_H
#define NONZERO_SOLVER_H

#include "nonzero/core.h"
#include "nonzero/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Solvers                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef enum nz_precond { NZ_PRECOND_NONE = 0, NZ_PRECOND_JACOBI = 1 } nz_precond_t;

/* Conjugate gradient options. Zero-initialise, then set what you need; zero means default. */
typedef struct nz_cg_options {
    double rtol;               /* stop when ||r|| <= max(rtol ||b||, atol) (default rtol 1e-8) */
    double atol;               /* absolute tolerance on ||r|| (default 0) */
    int64_t max_iterations;    /* default max(n, 10000) */
    nz_precond_t precond;      /* NZ_PRECOND_JACOBI: z = D^-1 r (needs a positive diagonal) */
    nz_alg_t alg;              /* SpMV algorithm for the plan (NZ_ALG_AUTO: the planner, which
                                  for a host CSR matrix also picks the format: nz_cg_solve) */
    unsigned plan_flags;       /* NZ_PLAN_* flags for the SpMV plan */
    int record_history;        /* non-zero: return ||r_k|| for k = 0 .. iterations */
    int use_graph;             /* GPU: replay the loop body as a CUDA graph (falls back silently
                                  when the SpMV cannot be captured; see nz_cg_result_t.used_graph) */
    int check_interval;        /* GPU: read the convergence scalars back every k iterations
                                  (default 8; 1 = every iteration). Iteration counts and results do
                                  not depend on it: the device stops updating once converged. */
    int keep_format;           /* non-zero: run the SpMV on A as given, never on a copy in the
                                  planner's format */
} nz_cg_options_t;

typedef struct nz_cg_result {
    int64_t iterations;        /* iterations performed */
    double residual_norm;      /* true residual ||b - A x|| of the returned x (NaN when the solve
                                  stopped before computing one: a setup error, a non-finite b) */
    double relative_residual;  /* residual_norm / ||b|| (0 when b = 0; NaN as above) */
    double setup_seconds;      /* SpMV plan, workspace, Jacobi diagonal */
    double solve_seconds;      /* the iteration loop (initial and final residual included) */
    double seconds_per_iteration; /* solve_seconds / max(iterations, 1) */
    double spmv_seconds;       /* one SpMV with the solve's plan, timed separately after the solve */
    nz_alg_t alg;              /* the SpMV algorithm the plan used */
    int used_graph;            /* 1 if the GPU loop ran as a CUDA graph */
    int64_t history_length;    /* entries in history (iterations + 1), 0 without record_history */
    double *history;           /* ||r_k|| (recursive residual; the true one at an iteration
                                  whose residual was checked); free with nz_free */
    nz_format_t format;        /* the format the SpMV ran on: A's, or the planner's when the solve
                                  converted A (counted in setup_seconds) */
} nz_cg_result_t;

/* Solve A x = b for symmetric positive definite A by (Jacobi-preconditioned) conjugate gradients.
 * x holds the initial guess on input and the solution on output. A host matrix solves on the CPU
 * (b, x host arrays); a device matrix solves on the context's GPU (b, x device arrays). Values are
 * of A's value type; scalars (dots, alpha, beta) are accumulated in double. Every SpMV goes through
 * an SpMV plan, so any format / algorithm the backend accepts works. Dot products are bitwise
 * reproducible run to run (fixed-order block reductions, no atomics on values).
 * Format: with alg = NZ_ALG_AUTO and keep_format = 0, a host CSR matrix is converted in the setup
 * (counted in setup_seconds, the copy freed before returning) to the format the planner advises
 * for the CPU (nz_spmv_plan_choose with format NZ_FORMAT_COUNT, e.g. DIA for a stencil), when
 * that differs from A's and the conversion is accepted (a refusal, e.g. for padding, keeps A's
 * format; so is a matrix small enough for the CPU's one-thread CSR kernel); result->format says
 * which ran. A device matrix is used as it is (there is no device
 * format conversion): convert on the host before nz_matrix_to_device, as nz cg does.
 * Convergence is judged on the TRUE residual: NZ_SUCCESS only when ||b - A x|| <= max(rtol ||b||,
 * atol) for the returned x. When the recursive residual meets the tolerance, b - A x is computed;
 * if it misses, CG continues from it (a residual replacement: r = b - A x, p = M^-1 r); each
 * replacement must halve the true residual, else the attainable accuracy of the precision is
 * reached (e.g. single precision at rtol 1e-8) and the solve returns the caveat NZ_STAGNATED; at
 * most 16 replacements are made. NZ_MAX_ITERATIONS (a caveat) at the limit (all iterations
 * count). For both caveats the message names the true relative residual and the tolerance, and
 * *result holds the true residual. NZ_ERR_BREAKDOWN when p'Ap <= 0, a NaN or Inf appears (also in
 * b), or Jacobi meets a non-positive diagonal (A is not SPD), with x the last finite iterate.
 * b = 0 gives x = 0 at once. A b whose squared norm overflows or underflows a double (entries of
 * 1e160 or 1e-170) is solved as the exactly scaled problem 2^e A x = 2^e b (docs/CG.md).
 * result may be NULL; when given it is overwritten (free an earlier history first). b and x must
 * not overlap in memory (NZ_ERR_INVALID_ARGUMENT). */
nz_status_t nz_cg_solve(nz_context_t *ctx, const nz_matrix_t *A, const void *b, void *x,
                        const nz_cg_options_t *options, nz_cg_result_t *result);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_SOLVER_H */
