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
 * (nz_solve_options_t.precond_apply); nz_cg_solve refuses it. L1_JACOBI, ILU0, IC0,
 * BLOCK_JACOBI and CHEBYSHEV are nz_solve's (non-CG methods; docs/SOLVERS.md) and
 * nz_precond_create's; nz_cg_solve refuses them. */
typedef enum nz_precond {
    NZ_PRECOND_NONE = 0,
    NZ_PRECOND_JACOBI = 1,
    NZ_PRECOND_USER = 2,
    NZ_PRECOND_L1_JACOBI = 3,  /* z_i = r_i / sum_j |a_ij| (the l1 row norm) */
    NZ_PRECOND_ILU0 = 4,       /* incomplete LU, no fill (A's pattern) */
    NZ_PRECOND_IC0 = 5,        /* incomplete Cholesky, no fill (symmetric A, lower pattern) */
    NZ_PRECOND_BLOCK_JACOBI = 6, /* z = B^-1 r, B the diagonal blocks of A (block_size rows) */
    NZ_PRECOND_CHEBYSHEV = 7,  /* z = p(D^-1 A) D^-1 r: Chebyshev polynomial in Jacobi-scaled A */
    NZ_PRECOND_AMG = 8         /* one cycle of smoothed-aggregation algebraic multigrid
                                  (nz_amg_options_t) */
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

/* What nz_cg_solve reports: iterations, the true residual, timings and the SpMV it ran. */
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

/* Krylov methods of nz_solve (docs/SOLVERS.md). CG: symmetric positive definite A (nz_cg_solve
 * with none or Jacobi, else PCG on the vector operations). BICGSTAB: van der Vorst's BiCGSTAB,
 * right-preconditioned. GMRES: restarted GMRES(m), right-preconditioned, classical Gram-Schmidt
 * with delayed re-orthogonalisation (DCGS2: two passes a vector, one reduction a step), Givens
 * rotations.
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
 * ends the solve with that status (reason NZ_SOLVE_PRECOND_FAILED).
 * For a device matrix r and z are DEVICE pointers on the context's device. r is complete in the
 * order of the context's stream (nz_context_set_device), not necessarily on the host: queue the
 * callback's work on that stream (every nz_* call with the solve's context is, e.g. nz_spmv with
 * a device matrix, nz_device_copy) or call nz_context_synchronize before touching r from another
 * stream or the host; z must be written, or its writes queued on that stream, when the callback
 * returns. */
typedef nz_status_t (*nz_precond_apply_t)(void *user, const void *r, void *z);

/* ------------------------------------------------------------------------------------------ */
/* Preconditioner objects                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* A preconditioner built once from a matrix and applied as z = M^-1 r (PETSc's PC in spirit):
 * hand it to nz_solve (nz_solve_options_t.preconditioner) or apply it yourself. Opaque. */
typedef struct nz_preconditioner nz_preconditioner_t;

/* Smoothed-aggregation algebraic multigrid (NZ_PRECOND_AMG; docs/SOLVERS.md, "Algebraic
 * multigrid"). The hierarchy: strength of connection, aggregation by a deterministic distance-2
 * maximal independent set, a tentative prolongator fitted to the near-nullspace, smoothed by one
 * damped Jacobi step, and Galerkin coarse operators P^T A P, level by level until at most
 * max_coarse rows remain; the coarsest level is solved by a dense LU inverse. One apply is one
 * cycle from z = 0 with the smoother before and after each coarse correction; with the default
 * Chebyshev (or l1-Jacobi) smoother and a V-cycle it is symmetric positive definite for a
 * symmetric positive definite A, so CG can use it. */
typedef enum nz_amg_smoother {
    NZ_AMG_SMOOTHER_AUTO = 0,      /* Chebyshev for a symmetric A (|a_ij - a_ji| <= 1e-12
                                      max|a|), l1-Jacobi otherwise: a Chebyshev polynomial on a
                                      real interval can amplify the complex spectrum of a strongly
                                      non-symmetric D^-1 A (convection), where l1-Jacobi cannot */
    NZ_AMG_SMOOTHER_CHEBYSHEV = 1, /* Chebyshev polynomial in D^-1 A (degree 2) */
    NZ_AMG_SMOOTHER_L1_JACOBI = 2  /* sweeps of x += D_l1^-1 (b - A x), D_l1 = the l1 row norms */
} nz_amg_smoother_t;
typedef enum nz_amg_cycle { NZ_AMG_CYCLE_V = 0, NZ_AMG_CYCLE_W = 1 } nz_amg_cycle_t;
/* The most levels of a hierarchy (max_levels' bound and the size of nz_amg_info_t's arrays). */
#define NZ_AMG_MAX_LEVELS 24

/* Options of NZ_PRECOND_AMG (nz_precond_options_t.amg). Zero-initialise; zero means default. */
typedef struct nz_amg_options {
    double threshold;          /* strength of connection: node j is strongly connected to i when
                                  |a_ij| >= threshold sqrt(|a_ii a_jj|) (blocks: Frobenius
                                  norms), symmetrised; 0 <= threshold < 1, default 0 (every
                                  off-diagonal non-zero is strong, as PyAMG's and PETSc GAMG's
                                  defaults); 0.02 .. 0.1 for anisotropic problems */
    double omega;              /* prolongator smoothing: P = (I - omega / rho(D^-1 A) D^-1 A) T,
                                  default 4/3; rho estimated by power iteration */
    int max_levels;            /* default 10, at most NZ_AMG_MAX_LEVELS */
    int64_t max_coarse;        /* stop coarsening at or below this many rows (default 256, at
                                  most 1024: the coarsest level is inverted densely) */
    nz_amg_smoother_t smoother;
    int smoother_degree;       /* Chebyshev: polynomial degree (SpMVs per smoothing, default 2);
                                  l1-Jacobi: sweeps (default 2); at most 16 */
    double cheb_ratio;         /* Chebyshev: the interval [lambda_max / cheb_ratio, lambda_max]
                                  of D^-1 A it damps (default 10; lambda_max the estimate
                                  times 1.1) */
    nz_amg_cycle_t cycle;      /* V (default) or W */
    int block_size;            /* unknowns per node, interleaved (default 1; 3 for 3-D
                                  elasticity): aggregation runs on nodes, rows divisible by it */
    int nullspace_dim;         /* columns k of near_nullspace (default 1, at most 16) */
    const double *near_nullspace; /* rows x k, column-major, host memory, read at setup (NULL:
                                  the constant vector, k = 1); e.g. the rigid-body modes that
                                  nz_gen_elasticity3d writes */
    unsigned plan_flags;       /* NZ_PLAN_* flags of every level's SpMV plans (e.g.
                                  NZ_PLAN_DETERMINISTIC) */
    int64_t reserved[4];       /* zero */
} nz_amg_options_t;

/* Options of nz_precond_create. Zero-initialise, then set what the kind reads; zero means
 * default. */
typedef struct nz_precond_options {
    int block_size;            /* BLOCK_JACOBI: rows of each diagonal block (default 4, at most
                                  32; the last block holds the rows left over) */
    int degree;                /* CHEBYSHEV: Chebyshev steps per apply (default 3, at most 64) */
    double lambda_min;         /* CHEBYSHEV: the interval [lambda_min, lambda_max] of the spectrum
                                  of D^-1 A the polynomial targets. lambda_max 0: estimated at
                                  setup (power iteration, times 1.1); lambda_min 0:
                                  lambda_max / 30 */
    double lambda_max;
    nz_precond_apply_t apply;  /* USER: z = M^-1 r (required) */
    void *user;                /* its first argument */
    int sweeps;                /* ILU0, IC0: 0 (default): exact triangular solves; k in
                                  1 .. 255: each triangular solve is k Jacobi sweeps
                                  (NZ_SPSV_JACOBI(k), nonzero/spsv.h): cheaper and fully
                                  parallel, an approximation of the factors' solve (more
                                  iterations of the outer method, each cheaper). IC0 stays
                                  symmetric positive definite (the sweeps on L^T are the
                                  transpose of those on L), so CG can use it */
    int32_t reserved0;         /* zero */
    int64_t reserved[3];       /* zero */
    const struct nz_amg_options *amg; /* AMG: its options (NULL: every default) */
} nz_precond_options_t;

/* What nz_precond_info reports. */
typedef struct nz_precond_info {
    nz_precond_t kind;
    int64_t rows;              /* the dimension of A (M is rows x rows) */
    nz_value_type_t value_type;
    nz_location_t location;    /* where r and z live: A's location */
    double setup_seconds;      /* everything nz_precond_create did */
    double shift;              /* ILU0 / IC0: the diagonal shift of the accepted factorisation */
    int attempts;              /* ILU0 / IC0: factorisations tried (1: no shift needed) */
    int block_size;            /* BLOCK_JACOBI: rows per block */
    int degree;                /* CHEBYSHEV: steps per apply */
    double lambda_min;         /* CHEBYSHEV: the interval the polynomial targets */
    double lambda_max;
    double lambda_estimate;    /* CHEBYSHEV: the power-iteration estimate of lambda_max(D^-1 A)
                                  before the safety factor (0 when options gave lambda_max) */
    int sweeps;                /* ILU0 / IC0: Jacobi sweeps per triangular solve (0: exact) */
} nz_precond_info_t;

/* The hierarchy of an AMG preconditioner (nz_amg_info): level 0 is A. */
typedef struct nz_amg_info {
    int levels;                /* levels including A's and the coarsest */
    int64_t rows[NZ_AMG_MAX_LEVELS];
    int64_t nnz[NZ_AMG_MAX_LEVELS];
    int block_size[NZ_AMG_MAX_LEVELS];   /* unknowns per node (coarse: the near-nullspace's k) */
    double lambda_max[NZ_AMG_MAX_LEVELS]; /* the power-iteration estimate of rho(D^-1 A_l) */
    int mis_rounds[NZ_AMG_MAX_LEVELS];   /* rounds of the distance-2 independent set */
    int64_t unaggregated[NZ_AMG_MAX_LEVELS]; /* nodes without a strong neighbour (left to the
                                  smoother: e.g. Dirichlet rows) */
    double operator_complexity; /* sum of the levels' nnz / nnz(A) */
    double grid_complexity;    /* sum of the levels' rows / rows(A) */
    nz_amg_smoother_t smoother; /* the smoother of the cycle (AUTO resolved) */
    int coarse_direct;         /* 1: the coarsest level is solved by its dense LU inverse; 0: by
                                  smoothing steps (coarsening stalled above 1024 rows) */
    double coarse_shift;       /* the diagonal shift the coarsest LU needed (0: none; a singular
                                  coarse operator, e.g. a pure Neumann problem, needs one) */
    /* set-up seconds per phase, summed over the levels (host wall clock); transfer: A's host
     * copy (a device A), its pattern hash and symmetry check, the levels' SpMV plans and
     * smoother set-up */
    double strength_seconds, aggregate_seconds, tentative_seconds, smooth_seconds, rap_seconds,
        coarse_seconds, transfer_seconds, setup_seconds;
    double update_seconds;     /* the last nz_precond_update (0: none yet) */
} nz_amg_info_t;

/* The hierarchy of an NZ_PRECOND_AMG object (NZ_ERR_INVALID_ARGUMENT for another kind). */
nz_status_t nz_amg_info(const nz_preconditioner_t *M, nz_amg_info_t *info);

/* Build preconditioner `kind` of the square matrix A (host or device; vectors of the apply live
 * where A does) into *M (docs/SOLVERS.md):
 *   NONE          z = r.
 *   JACOBI        z = D^-1 r (a missing, zero or non-finite diagonal: NZ_ERR_BREAKDOWN naming it).
 *   L1_JACOBI     z_i = r_i / sum_j |a_ij| (a zero row: NZ_ERR_BREAKDOWN naming it).
 *   ILU0, IC0     the factorisations of nz_solve (a diagonal shift on bad pivots; info.shift).
 *   USER          options->apply(options->user, r, z).
 *   BLOCK_JACOBI  z = B^-1 r, B the diagonal blocks of A of options->block_size rows, each
 *                 inverted in double by LU with partial pivoting (a singular or non-finite block:
 *                 NZ_ERR_BREAKDOWN naming its first row); the inverses are one block-diagonal
 *                 CSR matrix applied by an SpMV plan.
 *   CHEBYSHEV     options->degree steps of the Chebyshev iteration for D^-1 A z = D^-1 r from
 *                 z = 0 on [lambda_min, lambda_max] (for A symmetric positive definite, or
 *                 with a spectrum of D^-1 A near the positive real axis); A is borrowed: it must
 *                 outlive *M and stay unchanged.
 *   AMG           one V- (or W-) cycle of smoothed-aggregation multigrid (options->amg, above;
 *                 nz_amg_info reports the hierarchy). Strength, aggregation and the tentative
 *                 prolongators are computed on the host (a device A is copied down once); for
 *                 a device A the products (P, P^T A P) and the cycle run on the device. The
 *                 hierarchy is bitwise the same for any thread count, and, with
 *                 NZ_PLAN_DETERMINISTIC in options->amg->plan_flags, for a host or device A. A is borrowed: it must outlive *M and stay
 *                 unchanged (nz_precond_update for new values). A zero or non-finite diagonal
 *                 is NZ_ERR_BREAKDOWN naming the row.
 * The other kinds keep no reference to A. JACOBI, L1_JACOBI and CHEBYSHEV run on the Krylov
 * vector operations of A's backend (NZ_ERR_UNSUPPORTED where it has none). Destroy with
 * nz_precond_destroy. */
nz_status_t nz_precond_create(nz_context_t *ctx, nz_preconditioner_t **M, const nz_matrix_t *A,
                              nz_precond_t kind, const nz_precond_options_t *options);
/* z = M^-1 r: r and z arrays of A's value type and row count where A lives, not overlapping.
 * Allocates nothing. One apply at a time per object (it has workspace). */
nz_status_t nz_precond_apply(const nz_preconditioner_t *M, const void *r, void *z);
nz_status_t nz_precond_info(const nz_preconditioner_t *M, nz_precond_info_t *info);
/* Re-setup with new values: A has the dimension, value type, location and pattern (row offsets
 * and column indices) of the matrix M was made from, other values. AMG keeps its aggregation,
 * tentative prolongators and every symbolic product and recomputes the values only (spectral
 * estimates, smoothed prolongators, Galerkin products, the coarse inverse; the levels' SpMV
 * plans are made again, on the device the new values uploaded into the existing matrices);
 * a pattern that differs is NZ_ERR_INVALID_ARGUMENT. The other kinds are built again from A
 * with the options of nz_precond_create (the object keeps its address). On an error M is
 * unusable until an update succeeds (nz_precond_apply refuses it). */
nz_status_t nz_precond_update(nz_preconditioner_t *M, const nz_matrix_t *A);
/* Accepts NULL and *M == NULL; sets *M to NULL. */
nz_status_t nz_precond_destroy(nz_preconditioner_t **M);
/* The kind's name ("none", "jacobi", "user", "l1-jacobi", "ilu0", "ic0", "block-jacobi",
 * "chebyshev", "amg"), or "unknown". */
const char *nz_precond_name(nz_precond_t kind);

/* A caller's monitor (nz_solve_options_t.monitor): called once after each iteration k = 1, 2,
 * ... with the residual norm the method records for it (the history's entry: recursive for CG
 * and BiCGSTAB, the least-squares estimate for GMRES, MINRES's estimate) and the current
 * iterate x where the method keeps one (CG, BiCGSTAB, MINRES: a vector where A lives, valid
 * during the call only; GMRES and FGMRES form x at a restart only: NULL; NULL too when the solve
 * runs scaled, for a b whose squared norm leaves the double range). With NZ_METHOD_CG it
 * makes nz_solve run the table's CG (not nz_cg_solve's fused GPU loop). A status other than
 * NZ_SUCCESS stops the solve after that iteration: nz_solve computes the true residual of the
 * x reached and returns that status (reason NZ_SOLVE_MONITOR_STOPPED). */
typedef nz_status_t (*nz_solve_monitor_t)(void *user, int64_t iteration, double residual_norm,
                                          const void *x);

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
                                  shifts the diagonal (result->precond_shift);
                                  BLOCK_JACOBI, CHEBYSHEV: as nz_precond_create (block_size,
                                  cheb_degree below) */
    nz_precond_apply_t precond_apply; /* NZ_PRECOND_USER: the callback (required) */
    void *precond_user;        /* its first argument */
    nz_alg_t alg;              /* SpMV algorithm for the plan (NZ_ALG_AUTO: the planner) */
    unsigned plan_flags;       /* NZ_PLAN_* flags for the SpMV plan */
    int record_history;        /* non-zero: return the residual norm of each iteration */
    /* appended after 0.2.0 (docs/ABI.md) */
    const nz_preconditioner_t *preconditioner; /* non-NULL: the preconditioner of the
                                  solve (any method); precond, block_size
                                  and cheb_degree are then ignored. Made in the same context
                                  from a matrix of A's dimension (else
                                  NZ_ERR_DIMENSION_MISMATCH), value type and location (else
                                  NZ_ERR_INVALID_ARGUMENT); an error of its apply ends the solve
                                  as a callback's would (NZ_SOLVE_PRECOND_FAILED) */
    int block_size;            /* precond BLOCK_JACOBI: rows per block (default 4, at most 32) */
    int cheb_degree;           /* precond CHEBYSHEV: steps per apply (default 3, at most 64);
                                  the bounds are estimated (nz_precond_options_t) */
    nz_solve_monitor_t monitor; /* optional: called after every iteration (below) */
    void *monitor_user;        /* its first argument */
    int precond_sweeps;        /* precond ILU0 / IC0: Jacobi sweeps per triangular solve
                                  (nz_precond_options_t.sweeps; 0: exact solves) */
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
    NZ_SOLVE_PRECOND_FAILED = 8,    /* the preconditioner callback returned an error */
    NZ_SOLVE_BREAKDOWN_INDEFINITE = 9, /* CG: p'Ap <= 0 or r'M^-1 r <= 0, A or M is not
                                          positive definite */
    NZ_SOLVE_MONITOR_STOPPED = 10     /* the monitor returned an error */
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
 * unsupported). BiCGSTAB, GMRES, FGMRES and MINRES run on the CPU for a host matrix (b, x host
 * arrays) and on the context's GPU for a device matrix (b, x device arrays of the context's
 * device, else NZ_ERR_WRONG_LOCATION; NZ_ERR_NO_DEVICE on an unbound context): every vector
 * stays on the device, each reduction is a fixed-order two-stage sum (bitwise identical run to
 * run on a given device) read back with one host synchronisation. On the GPU, JACOBI and
 * L1_JACOBI need a device CSR matrix (NZ_ERR_UNSUPPORTED otherwise) and a USER callback gets
 * device pointers (nz_precond_apply_t).
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

/* ------------------------------------------------------------------------------------------ */
/* Matrix-free solves: nz_solve_operator                                                      */
/* ------------------------------------------------------------------------------------------ */

/* How an allreduce combines its values. */
typedef enum nz_reduce_op { NZ_REDUCE_SUM = 0, NZ_REDUCE_MAX = 1 } nz_reduce_op_t;

/* A linear operator the caller applies: y = A x for vectors of `rows` values of value_type
 * (NZ_F32 or NZ_F64) in `location` (NZ_HOST: host arrays; NZ_DEVICE: arrays on the device the
 * context is bound to). apply's x and y never overlap; a status other than NZ_SUCCESS ends the
 * solve with it. allreduce (optional) makes the solve span processes: it must combine `count`
 * doubles in place over every process (NZ_REDUCE_SUM: the sum; NZ_REDUCE_MAX: the maximum, NaN
 * when any is NaN) and return the same values everywhere; rows is then this process's share, b
 * and x its parts, every process calls nz_solve_operator with the same options, and the solve
 * is bitwise reproducible when the allreduce is (the distributed layer's nz_dist_solve sums in
 * rank order). Zero-initialise, then set what you need. */
typedef struct nz_operator {
    int64_t rows;
    nz_value_type_t value_type;
    nz_location_t location;
    nz_status_t (*apply)(void *user, const void *x, void *y);
    void *user;
    nz_status_t (*allreduce)(void *reduce_user, double *values, int count, nz_reduce_op_t op);
    void *reduce_user;
    void *reserved[4];         /* zero */
} nz_operator_t;

/* nz_solve for an operator: the same methods (NZ_METHOD_CG: preconditioned CG written on the
 * same vector operations as the others, with the true-residual check and residual replacement
 * of nz_cg_solve; p'Ap <= 0 or r'M^-1 r <= 0 end it as NZ_SOLVE_BREAKDOWN_INDEFINITE), the same
 * options, stopping rule, statuses and result. Preconditioners: NZ_PRECOND_NONE or
 * NZ_PRECOND_USER (the callback gets vectors in the operator's location); the kinds built from
 * a matrix are NZ_ERR_UNSUPPORTED here (an operator has no matrix). alg and plan_flags are
 * ignored. The true residual of the returned x is computed with the operator's apply. */
nz_status_t nz_solve_operator(nz_context_t *ctx, const nz_operator_t *A, const void *b, void *x,
                              const nz_solve_options_t *options, nz_solve_result_t *result);

/* The method's name ("cg", "bicgstab", "gmres", "fgmres", "minres"), or "unknown". */
const char *nz_method_name(nz_method_t method);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_SOLVER_H */
