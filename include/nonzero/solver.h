/* nonzero/solver.h: conjugate gradients and the Krylov solver family (nz_solve). Part of <nonzero.h>. */
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

/* Preconditioners. NZ_PRECOND_USER (nz_solve only): the caller's callback
 * (nz_solve_options_t.precond_apply); nz_cg_solve refuses it. L1_JACOBI, ILU0 and IC0 are
 * nz_solve's (host matrices, non-CG methods; docs/SOLVERS.md); nz_cg_solve refuses them. */
typedef enum nz_precond {
    NZ_PRECOND_NONE = 0,
    NZ_PRECOND_JACOBI = 1,
    NZ_PRECOND_USER = 2,
    NZ_PRECOND_L1_JACOBI = 3,  /* z_i = r_i / sum_j |a_ij| (the l1 row norm) */
    NZ_PRECOND_ILU0 = 4,       /* incomplete LU, no fill (A's pattern) */
    NZ_PRECOND_IC0 = 5         /* incomplete Cholesky, no fill (symmetric A, lower pattern) */
} nz_precond_t;

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

/* ------------------------------------------------------------------------------------------ */
/* The solver family: nz_solve                                                                */
/* ------------------------------------------------------------------------------------------ */

/* Krylov methods of nz_solve (docs/SOLVERS.md). CG: symmetric positive definite A, through
 * nz_cg_solve. BICGSTAB: van der Vorst's BiCGSTAB, right-preconditioned. GMRES: restarted
 * GMRES(m), right-preconditioned, classical Gram-Schmidt applied twice (CGS2), Givens rotations.
 * FGMRES: flexible GMRES (the preconditioner may change between iterations; stores M^-1 v_j).
 * MINRES: Paige-Saunders MINRES for symmetric (indefinite) A with an SPD preconditioner. */
typedef enum nz_method {
    NZ_METHOD_CG = 0,
    NZ_METHOD_BICGSTAB = 1,
    NZ_METHOD_GMRES = 2,
    NZ_METHOD_FGMRES = 3,
    NZ_METHOD_MINRES = 4
} nz_method_t;

/* A caller's preconditioner: z = M^-1 r for vectors of A's value type and length (host arrays
 * for a host matrix; r and z never overlap). Returns NZ_SUCCESS, or any error status, which
 * ends the solve with that status (reason NZ_SOLVE_PRECOND_FAILED). */
typedef nz_status_t (*nz_precond_apply_t)(void *user, const void *r, void *z);

/* Options of nz_solve. Zero-initialise, then set what you need; zero means default. */
typedef struct nz_solve_options {
    nz_method_t method;        /* default NZ_METHOD_CG */
    double rtol;               /* converged when ||b - A x|| <= max(rtol ||b||, atol) (default
                                  rtol 1e-8) */
    double atol;               /* absolute tolerance (default 0) */
    int64_t max_iterations;    /* default max(n, 10000); GMRES counts Arnoldi steps */
    int restart;               /* GMRES / FGMRES: Krylov dimension m between restarts (default
                                  30, at most 1000) */
    nz_precond_t precond;      /* NONE; JACOBI: z = D^-1 r (needs a finite non-zero diagonal;
                                  CG: positive); USER: precond_apply. Not with CG (host, see
                                  docs/SOLVERS.md): L1_JACOBI: z_i = r_i / sum_j |a_ij|;
                                  ILU0: z = U^-1 L^-1 r; IC0: z = L^-T L^-1 r (lower triangle
                                  of A read, A assumed symmetric); a zero or negative pivot
                                  shifts the diagonal (result->precond_shift) */
    nz_precond_apply_t precond_apply; /* NZ_PRECOND_USER: the callback (required) */
    void *precond_user;        /* its first argument */
    nz_alg_t alg;              /* SpMV algorithm for the plan (NZ_ALG_AUTO: the planner) */
    unsigned plan_flags;       /* NZ_PLAN_* flags for the SpMV plan */
    int record_history;        /* non-zero: return the residual norm of each iteration */
} nz_solve_options_t;

/* How a solve ended (PETSc's KSPConvergedReason in spirit: every way has a name). */
typedef enum nz_solve_reason {
    NZ_SOLVE_NOT_RUN = 0,           /* stopped before iterating: bad argument, setup error */
    NZ_SOLVE_CONVERGED = 1,         /* the true residual meets the tolerance (b = 0 included) */
    NZ_SOLVE_MAX_ITERATIONS = 2,    /* the iteration limit */
    NZ_SOLVE_STAGNATED = 3,         /* the true residual stopped decreasing */
    NZ_SOLVE_BREAKDOWN_RHO = 4,     /* BiCGSTAB: rho = r0'r = 0 or r0'v = 0 */
    NZ_SOLVE_BREAKDOWN_OMEGA = 5,   /* BiCGSTAB: omega = 0 (t't = 0 or t's = 0) */
    NZ_SOLVE_BREAKDOWN_NAN = 6,     /* a NaN or Inf in a reduction or the least-squares problem */
    NZ_SOLVE_BREAKDOWN_SINGULAR = 7,/* GMRES / MINRES: the Krylov space became invariant (lucky
                                       breakdown) but the true residual misses the tolerance (A
                                       or M singular); MINRES: r'M^-1 r <= 0 (M not positive
                                       definite); CG: p'Ap <= 0 */
    NZ_SOLVE_PRECOND_FAILED = 8     /* the preconditioner callback returned an error */
} nz_solve_reason_t;

/* The outcome of nz_solve. */
typedef struct nz_solve_result {
    nz_status_t status;        /* the status nz_solve returned */
    nz_solve_reason_t reason;  /* how the solve ended */
    nz_method_t method;
    int64_t iterations;        /* BiCGSTAB / CG iterations, GMRES Arnoldi steps */
    int64_t restarts;          /* GMRES cycles begun after the first; BiCGSTAB / CG residual
                                  replacements */
    double residual_norm;      /* TRUE ||b - A x|| of the returned x, by an explicit SpMV (NaN
                                  when none was computed: a setup error, a non-finite b) */
    double relative_residual;  /* residual_norm / ||b|| (0 when b = 0; NaN as above) */
    double setup_seconds;      /* plan, workspace, preconditioner */
    double solve_seconds;      /* the iterations, initial and final true residuals included */
    int64_t history_length;    /* entries of history, 0 without record_history */
    double *history;           /* residual norm at iteration k = 0 .. history_length - 1: the
                                  recursive (BiCGSTAB, CG) or least-squares (GMRES) one, the true
                                  one where it was computed; free with nz_free */
    double precond_shift;      /* ILU0 / IC0: the diagonal shift s of the accepted factorisation
                                  of A + s I (0: A factored as it is; docs/SOLVERS.md) */
    int precond_attempts;      /* ILU0 / IC0: factorisations tried (1: no shift needed); 0 for
                                  the other preconditioners */
} nz_solve_result_t;

/* Solve A x = b (A square, host or device) with options->method. x holds the initial guess on
 * input and the solution on output; values of A's value type, scalars in double, every
 * reduction a fixed-order block sum (results bitwise identical for any thread count). The SpMV
 * runs on A's format through an nz SpMV plan (NZ_PLAN_REUSE added). NZ_METHOD_CG calls
 * nz_cg_solve (its rules: planner format, device matrices, scaling; NZ_PRECOND_USER
 * unsupported). BiCGSTAB, GMRES, FGMRES and MINRES run on host matrices for now: a device matrix
 * gives NZ_ERR_UNSUPPORTED.
 * Stopping (docs/SOLVERS.md): NZ_SUCCESS only when the TRUE residual ||b - A x|| of the
 * returned x, computed by an explicit SpMV, is <= max(rtol ||b||, atol). When the recursive
 * (BiCGSTAB), least-squares (GMRES) or estimated (MINRES) residual meets the tolerance the true
 * one is computed; if it misses, the method restarts from it (each such restart must halve the
 * true residual, at most 16, else NZ_STAGNATED); GMRES also checks it at every restart and
 * stagnates when a cycle does not reduce it. NZ_MAX_ITERATIONS at the limit. Breakdowns
 * (BiCGSTAB rho = 0 or omega = 0, NaN, a singular invariant Krylov space in GMRES or MINRES,
 * MINRES with a preconditioner that is not positive definite; reason in *result) give
 * NZ_ERR_BREAKDOWN with x the last
 * iterate and its true residual in *result, unless that true residual meets the tolerance (then
 * NZ_SUCCESS). b = 0 gives x = 0 (converged); a b with NaN or Inf gives NZ_ERR_BREAKDOWN with x
 * untouched. result may be NULL; when given it is overwritten (free an earlier history first).
 * b and x must not overlap (NZ_ERR_INVALID_ARGUMENT). */
nz_status_t nz_solve(nz_context_t *ctx, const nz_matrix_t *A, const void *b, void *x,
                     const nz_solve_options_t *options, nz_solve_result_t *result);

/* The method's name ("cg", "bicgstab", "gmres", "fgmres", "minres"), or "unknown". */
const char *nz_method_name(nz_method_t method);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_SOLVER_H */
