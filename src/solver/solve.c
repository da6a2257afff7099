/* solve.c: nz_solve, the solver family's one entry: options, setup, the method, the true residual and the status. */
#include "nzi.h"
#include "backend.h"
#include "krylov_method.h"
#include "precond.h"
#include "solve_internal.h"

#include <math.h>
#include <string.h>

#define NZI_SOLVE_DEFAULT_RESTART 30
#define NZI_SOLVE_MAX_RESTART 1000

const char *nz_method_name(nz_method_t method) {
    switch (method) {
    case NZ_METHOD_CG: return "cg";
    case NZ_METHOD_BICGSTAB: return "bicgstab";
    case NZ_METHOD_GMRES: return "gmres";
    case NZ_METHOD_FGMRES: return "fgmres";
    case NZ_METHOD_MINRES: return "minres";
    default: return "unknown";
    }
}

nz_status_t nzi_solve_options(nz_context_t *ctx, const nz_solve_options_t *in, int64_t n,
                              nz_solve_options_t *opt) {
    if (in != NULL)
        *opt = *in;
    else
        memset(opt, 0, sizeof *opt);
    if ((int)opt->method < (int)NZ_METHOD_CG || (int)opt->method > (int)NZ_METHOD_MINRES)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_solve: unknown method %d",
                         (int)opt->method);
    if (!(opt->rtol >= 0.0) || !(opt->atol >= 0.0) || isinf(opt->rtol) || isinf(opt->atol))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_solve: tolerances must be finite and >= 0 (rtol %g, atol %g)",
                         opt->rtol, opt->atol);
    if (opt->max_iterations < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_solve: max_iterations %lld < 0",
                         (long long)opt->max_iterations);
    if (opt->restart < 0 || opt->restart > NZI_SOLVE_MAX_RESTART)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_solve: restart %d outside 0 .. %d",
                         opt->restart, NZI_SOLVE_MAX_RESTART);
    if ((int)opt->precond < (int)NZ_PRECOND_NONE || (int)opt->precond > (int)NZ_PRECOND_AMG)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_solve: unknown preconditioner %d",
                         (int)opt->precond);
    if (opt->block_size < 0 || opt->block_size > 32 || opt->cheb_degree < 0 ||
        opt->cheb_degree > 64)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_solve: block_size %d outside 1 .. 32 or cheb_degree %d outside "
                         "1 .. 64 (0: the default)", opt->block_size, opt->cheb_degree);
    if (opt->precond_sweeps < 0 || opt->precond_sweeps > 255)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_solve: precond_sweeps %d outside 0 .. 255 (0: exact triangular "
                         "solves)", opt->precond_sweeps);
    if (opt->precond == NZ_PRECOND_USER && opt->precond_apply == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT,
                         "nz_solve: NZ_PRECOND_USER needs a precond_apply callback");
    if (opt->rtol == 0.0) opt->rtol = NZI_CG_DEFAULT_RTOL;
    if (opt->max_iterations == 0)
        opt->max_iterations = n > NZI_CG_DEFAULT_MAX_ITERATIONS ? n : NZI_CG_DEFAULT_MAX_ITERATIONS;
    if (opt->restart == 0) opt->restart = NZI_SOLVE_DEFAULT_RESTART;
    return NZ_SUCCESS;
}

/* NZ_METHOD_CG with none or Jacobi (nz_solve's dispatch): nz_cg_solve with the options and the
 * result mapped (its history moves over). */
static nz_status_t solve_cg(nz_context_t *ctx, const nz_matrix_t *A, const void *b, void *x,
                            const nz_solve_options_t *opt, nz_solve_result_t *res) {
    nz_cg_options_t cg;
    nz_cg_result_t out;
    memset(&cg, 0, sizeof cg);
    cg.rtol = opt->rtol;
    cg.atol = opt->atol;
    cg.max_iterations = opt->max_iterations;
    cg.precond = opt->precond;
    cg.alg = opt->alg;
    cg.plan_flags = opt->plan_flags;
    cg.record_history = opt->record_history;
    nz_status_t status = nz_cg_solve(ctx, A, b, x, &cg, &out);
    res->iterations = out.iterations;
    res->residual_norm = out.residual_norm;
    res->relative_residual = out.relative_residual;
    res->setup_seconds = out.setup_seconds;
    res->solve_seconds = out.solve_seconds;
    res->history = out.history;
    res->history_length = out.history_length;
    switch (status) {
    case NZ_SUCCESS: res->reason = NZ_SOLVE_CONVERGED; break;
    case NZ_MAX_ITERATIONS: res->reason = NZ_SOLVE_MAX_ITERATIONS; break;
    case NZ_STAGNATED: res->reason = NZ_SOLVE_STAGNATED; break;
    case NZ_ERR_BREAKDOWN:
        res->reason = isnan(out.residual_norm) ? NZ_SOLVE_NOT_RUN : NZ_SOLVE_BREAKDOWN_INDEFINITE;
        break;
    default: res->reason = NZ_SOLVE_NOT_RUN; break;
    }
    return status;
}

/* The checks made before anything is allocated. */
static nz_status_t solve_check(nz_context_t *ctx, const nz_matrix_t *A, const void *b,
                               const void *x) {
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->rows != A->cols)
        return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH, "nz_solve: A is %lld x %lld, not square",
                         (long long)A->rows, (long long)A->cols);
    const int64_t n = A->rows;
    if (n > 0 && (b == NULL || x == NULL))
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_solve: b or x is NULL");
    const size_t bytes = (size_t)n * nzi_value_size(A->value_type);
    if (nzi_ranges_overlap(b, bytes, x, bytes))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_solve: b and x overlap in memory (x is updated while b is still "
                         "needed); use separate arrays");
    return NZ_SUCCESS;
}

/* The message and status of a finished Krylov solve whose true residual missed the tolerance
 * (relres, reltol relative to ||b||). */
static nz_status_t solve_final(nz_context_t *ctx, const nz_solve_options_t *opt,
                               const nzi_krylov_solve_t *k, double relres, double reltol) {
    const char *name = nz_method_name(opt->method);
    switch (k->reason) {
    case NZ_SOLVE_MAX_ITERATIONS:
        return nzi_error(ctx, NZ_MAX_ITERATIONS,
                         "nz_solve: %s not converged: stopped at the iteration limit %lld with "
                         "true relative residual %.3e above the tolerance %.3e",
                         name, (long long)k->max_iterations, relres, reltol);
    case NZ_SOLVE_STAGNATED:
        return nzi_error(ctx, NZ_STAGNATED,
                         "nz_solve: %s not converged: stagnated after %lld iterations (%lld "
                         "restarts) with true relative residual %.3e above the tolerance %.3e",
                         name, (long long)k->iterations, (long long)k->restarts, relres, reltol);
    case NZ_SOLVE_BREAKDOWN_RHO:
        return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                         "nz_solve: %s breakdown at iteration %lld: rho = r0'r = 0 or r0'v = 0 "
                         "(true relative residual %.3e)",
                         name, (long long)k->iterations, relres);
    case NZ_SOLVE_BREAKDOWN_OMEGA:
        return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                         "nz_solve: %s breakdown at iteration %lld: omega = t's / t't = 0 (true "
                         "relative residual %.3e)",
                         name, (long long)k->iterations, relres);
    case NZ_SOLVE_BREAKDOWN_INDEFINITE:
        return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                         "nz_solve: %s breakdown at iteration %lld: p'Ap <= 0 or r'M^-1 r <= 0, "
                         "A or the preconditioner is not positive definite (true relative "
                         "residual %.3e)",
                         name, (long long)k->iterations, relres);
    case NZ_SOLVE_BREAKDOWN_SINGULAR:
        return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                         "nz_solve: %s breakdown at iteration %lld: the Krylov space is "
                         "invariant but the true relative residual %.3e is above the tolerance "
                         "%.3e (A or the preconditioner is singular; MINRES: or the "
                         "preconditioner is not positive definite)",
                         name, (long long)k->iterations, relres, reltol);
    default:
        return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                         "nz_solve: %s breakdown at iteration %lld: NaN or Inf (A, x0 or the "
                         "preconditioner holds non-finite values, or A is singular)",
                         name, (long long)k->iterations);
    }
}

int nzi_solve_max_dots(const nz_solve_options_t *opt) {
    return opt->method == NZ_METHOD_GMRES || opt->method == NZ_METHOD_FGMRES
               ? nzi_gmres_dots(opt->restart)
               : NZI_BICGSTAB_DOTS;
}

nz_status_t nzi_solve_run(nz_context_t *ctx, const nzi_krylov_ops_t *ops,
                          nzi_krylov_space_t *space, const void *b, void *x,
                          const nz_solve_options_t *opt, nz_solve_result_t *res, double t0) {
    nz_status_t status = NZ_SUCCESS;
    nzi_krylov_solve_t k;
    void *r = NULL, *bscaled = NULL;
    double bnorm = 0.0, reltol = 0.0;
    int exponent = 0, x_scaled = 0;
    memset(&k, 0, sizeof k);
    k.space = space;
    status = ops->vec_create(space, &r, "nz_solve: residual");
    if (status == NZ_SUCCESS && opt->record_history) {
        if (nzi_add_overflow_i64(opt->max_iterations, 1, &k.history_capacity))
            status = nzi_error(ctx, NZ_ERR_OVERFLOW, "nz_solve: history length overflows");
        else
            status = nzi_alloc_array(ctx, (void **)&k.history, (size_t)k.history_capacity,
                                     sizeof(double), "nz_solve: residual history");
    }
    NZI_CHECK(nzi_krylov_agree(&k, status)); /* across processes: all go on, or none */
    /* ||b||: NaN or Inf in b is refused with x untouched. A b whose squared norm overflows or
     * underflows a double is solved as 2^e A x = 2^e b (x0 scaled alike, exact powers of two),
     * e chosen as nz_cg_solve chooses it, and everything scaled back on the way out. */
    NZI_CHECK(ops->norm2(space, b, &bnorm));
    if (!isfinite(bnorm) || bnorm == 0.0) {
        double bmax, xmax;
        NZI_CHECK(ops->maxabs(space, b, &bmax));
        if (!isfinite(bmax)) {
            status = nzi_error(ctx, NZ_ERR_BREAKDOWN, "nz_solve: b holds NaN or Inf");
            goto cleanup;
        }
        if (bmax > 0.0) {
            NZI_CHECK(ops->maxabs(space, x, &xmax));
            exponent = nzi_cg_scale_exponent(bmax, xmax, space->value_type);
            NZI_CHECK(nzi_krylov_agree(
                &k, ops->vec_create(space, &bscaled, "nz_solve: scaled b")));
            NZI_CHECK(ops->axpby(space, ldexp(1.0, exponent), b, 0.0, bscaled));
            NZI_CHECK(ops->scale(space, ldexp(1.0, exponent), x));
            x_scaled = 1;
            b = bscaled;
            NZI_CHECK(ops->norm2(space, b, &bnorm));
            if (!(bnorm > 0.0) || !isfinite(bnorm)) {
                status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                                   "nz_solve: ||b|| is out of the double range even scaled "
                                   "(max |b_i| = %.3e)", bmax);
                goto cleanup;
            }
        }
    }
    res->setup_seconds = nzi_wtime() - t0;
    const double t1 = nzi_wtime();
    if (bnorm == 0.0) { /* b = 0: x = 0 exactly */
        NZI_CHECK(ops->fill(space, 0.0, x));
        res->reason = NZ_SOLVE_CONVERGED;
        res->residual_norm = res->relative_residual = 0.0;
        if (k.history != NULL) {
            k.history[0] = 0.0;
            res->history_length = 1;
        }
        res->solve_seconds = nzi_wtime() - t1;
        goto cleanup;
    }
    const double tol = nzi_cg_scaled_tolerance(opt->rtol, opt->atol, bnorm, exponent, &reltol);
    k.ops = ops;
    k.space = space;
    k.b = b;
    k.x = x;
    k.tol = tol;
    k.max_iterations = opt->max_iterations;
    k.restart = opt->restart;
    k.flexible = opt->method == NZ_METHOD_FGMRES;
    k.reason = NZ_SOLVE_NOT_RUN;
    k.monitor = opt->monitor;
    k.monitor_user = opt->monitor_user;
    /* a scaled solve's x is 2^exponent the caller's: the monitor gets no x then */
    k.monitor_x = opt->method != NZ_METHOD_GMRES && opt->method != NZ_METHOD_FGMRES && !x_scaled;
    k.exponent = exponent;
    nz_status_t method = opt->method == NZ_METHOD_BICGSTAB ? nzi_krylov_bicgstab(&k)
                         : opt->method == NZ_METHOD_MINRES ? nzi_krylov_minres(&k)
                         : opt->method == NZ_METHOD_CG     ? nzi_krylov_cg(&k)
                                                           : nzi_krylov_gmres(&k);
    res->iterations = k.iterations;
    res->restarts = k.restarts;
    res->reason = k.reason;
    /* The history once the method has recorded its initial residual (an allocation failure
     * at its start leaves none to return). */
    if (k.history != NULL && (method >= 0 || k.reason != NZ_SOLVE_NOT_RUN || k.iterations > 0))
        res->history_length = k.iterations + 1 < k.history_capacity ? k.iterations + 1
                                                                    : k.history_capacity;
    if (method < 0 && method != NZ_ERR_OUT_OF_MEMORY && method != NZ_ERR_OVERFLOW &&
        opt->precond == NZ_PRECOND_USER)
        res->reason = NZ_SOLVE_PRECOND_FAILED;
    /* The true residual of the returned x, by an explicit SpMV, whatever stopped the method
     * (a method error keeps its message: the residual is computed on a copy of the status). */
    double true_norm = NAN;
    {
        nz_status_t st = ops->apply(space, x, r);
        if (st == NZ_SUCCESS) st = ops->axpby(space, 1.0, b, -1.0, r);
        if (st == NZ_SUCCESS) st = ops->norm2(space, r, &true_norm);
        if (st < 0 && method >= 0) method = st;
    }
    res->residual_norm = ldexp(true_norm, -exponent);
    res->relative_residual = true_norm / bnorm;
    res->solve_seconds = nzi_wtime() - t1;
    if (method < 0) {
        status = method;
        goto cleanup;
    }
    if (true_norm <= tol) {
        res->reason = NZ_SOLVE_CONVERGED;
        status = NZ_SUCCESS;
    } else if (k.monitor_status != NZ_SUCCESS) { /* the caller's monitor stopped it */
        res->reason = NZ_SOLVE_MONITOR_STOPPED;
        status = nzi_error(ctx, k.monitor_status,
                           "nz_solve: %s stopped by the monitor after iteration %lld (status %d, "
                           "%s) with true relative residual %.3e above the tolerance %.3e",
                           nz_method_name(opt->method), (long long)k.iterations,
                           (int)k.monitor_status, nz_status_string(k.monitor_status),
                           res->relative_residual, reltol);
    } else {
        /* a method's CONVERGED rests on the same residual computation: it cannot miss here */
        if (res->reason == NZ_SOLVE_CONVERGED) res->reason = NZ_SOLVE_STAGNATED;
        k.reason = res->reason;
        status = solve_final(ctx, opt, &k, res->relative_residual, reltol);
    }

cleanup:
    if (x_scaled) { /* x back to the caller's problem, whatever the outcome */
        nz_status_t st = ops->scale(space, ldexp(1.0, -exponent), x);
        if (st < 0 && status >= 0) status = st;
    }
    if (res->history_length > 0) {
        nzi_cg_unscale_history(k.history, res->history_length, exponent);
        res->history = k.history;
        k.history = NULL;
    }
    nzi_free(ctx, k.history);
    ops->vec_destroy(space, bscaled);
    ops->vec_destroy(space, r);
    return status;
}

/* A BiCGSTAB / GMRES / FGMRES / MINRES solve on the backend of A (host: the CPU table; device:
 * the GPU table, b and x device vectors): the plan, the table's space and preconditioner,
 * ||b||, the method, the true residual of the returned x, the status. */
static nz_status_t solve_krylov(nz_context_t *ctx, const nz_matrix_t *A, const void *b, void *x,
                                const nz_solve_options_t *opt, nz_solve_result_t *res) {
    nz_status_t status = NZ_SUCCESS;
    const nzi_backend_t *backend = nzi_backend_of(A);
    if (A->location == NZ_DEVICE && ctx->cuda == NULL)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE,
                         "nz_solve: A is a device matrix but the context is not bound to a "
                         "device");
    const nzi_krylov_ops_t *ops = backend->krylov_ops != NULL ? backend->krylov_ops() : NULL;
    if (ops == NULL)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE, "nz_solve: this build has no CUDA backend (%s)",
                         nz_method_name(opt->method));
    const int64_t n = A->rows;
    if (backend->vector_check != NULL && n > 0) {
        NZI_TRY(backend->vector_check(ctx, b, "nz_solve: b"));
        NZI_TRY(backend->vector_check(ctx, x, "nz_solve: x"));
    }
    if (A->location == NZ_DEVICE && A->format != NZ_FORMAT_CSR &&
        (opt->precond == NZ_PRECOND_JACOBI || opt->precond == NZ_PRECOND_L1_JACOBI))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_solve: the %s preconditioner on the GPU needs a device CSR matrix, "
                         "not %s (there is no device format conversion: convert on the host "
                         "before nz_matrix_to_device)",
                         opt->precond == NZ_PRECOND_JACOBI ? "Jacobi" : "l1-Jacobi",
                         nz_format_name(A->format));
    nz_spmv_plan_t *plan = NULL;
    nz_matrix_t *csr = NULL;      /* A as CSR for a preconditioner that needs it, when A is not */
    nzi_factor_precond_t *factor = NULL;
    nzi_krylov_space_t space;
    int created = 0;
    memset(&space, 0, sizeof space);
    const double t0 = nzi_wtime();

    NZI_CHECK(nz_spmv_plan_create(ctx, &plan, A, NZ_OP_N, opt->alg,
                                  opt->plan_flags | NZ_PLAN_REUSE));
    space.ctx = ctx;
    space.value_type = A->value_type;
    space.n = n;
    space.plan = plan;
    space.precond = opt->precond;
    space.user_apply = opt->precond_apply;
    space.user = opt->precond_user;
    space.max_dots = nzi_solve_max_dots(opt);
    NZI_CHECK(ops->create(&space));
    created = 1;
    const nz_matrix_t *Ac = A;
    if (opt->precond >= NZ_PRECOND_L1_JACOBI && A->format != NZ_FORMAT_CSR) {
        NZI_CHECK(nz_matrix_convert(ctx, &csr, A, NZ_FORMAT_CSR, NULL));
        Ac = csr;
    }
    if (opt->precond == NZ_PRECOND_JACOBI || opt->precond == NZ_PRECOND_L1_JACOBI) {
        int64_t bad_row;
        NZI_CHECK(ops->precond_setup(&space, Ac, &bad_row));
        if (bad_row < n) {
            if (opt->precond == NZ_PRECOND_JACOBI)
                status = nzi_error(ctx, NZ_ERR_BREAKDOWN,
                                   "nz_solve: Jacobi preconditioner: diagonal entry (%lld, %lld) "
                                   "of A is missing, zero or not finite",
                                   (long long)bad_row + 1, (long long)bad_row + 1);
            else
                status = nzi_error(ctx, NZ_ERR_BREAKDOWN,
                                   "nz_solve: l1-Jacobi preconditioner: row %lld of A is zero or "
                                   "holds a value that is not finite",
                                   (long long)bad_row + 1);
            goto cleanup;
        }
    } else if (opt->precond == NZ_PRECOND_ILU0 || opt->precond == NZ_PRECOND_IC0) {
        NZI_CHECK(nzi_factor_precond_create(ctx, Ac, opt->precond, opt->precond_sweeps,
                                            &factor));
        space.user_apply = nzi_factor_precond_apply;
        space.user = factor;
        res->precond_shift = factor->shift;
        res->precond_attempts = factor->attempts;
    }
    status = nzi_solve_run(ctx, ops, &space, b, x, opt, res, t0);

cleanup:
    if (created) ops->destroy(&space);
    nzi_factor_precond_destroy(&factor);
    nz_matrix_destroy(&csr);
    nz_spmv_plan_destroy(&plan);
    return status;
}

/* z = M^-1 r of a preconditioner object, as nz_solve's callback (nz_precond_apply_t). */
static nz_status_t object_apply(void *user, const void *r, void *z) {
    return nz_precond_apply((const nz_preconditioner_t *)user, r, z);
}

/* A non-CG solve preconditioned by an object: the caller's (options->preconditioner), or one
 * made here for the kinds that exist only as objects (BLOCK_JACOBI, CHEBYSHEV; its set-up
 * counted in setup_seconds). It runs as the callback of NZ_PRECOND_USER, so the solve itself is
 * solve_krylov's. */
static nz_status_t solve_object(nz_context_t *ctx, const nz_matrix_t *A, const void *b, void *x,
                                const nz_solve_options_t *opt, nz_solve_result_t *res) {
    nz_status_t status = NZ_SUCCESS;
    nz_preconditioner_t *own = NULL;
    const nz_preconditioner_t *M = opt->preconditioner;
    nz_solve_options_t local = *opt;
    nz_precond_info_t info;
    const double t0 = nzi_wtime();
    if (M == NULL) {
        nz_precond_options_t po;
        memset(&po, 0, sizeof po);
        po.block_size = opt->block_size;
        po.degree = opt->cheb_degree;
        NZI_CHECK(nz_precond_create(ctx, &own, A, opt->precond, &po));
        M = own;
    }
    status = nz_precond_info(M, &info);
    if (status < 0) {
        status = nzi_error(ctx, status, "nz_solve: options->preconditioner is not a valid "
                                        "preconditioner object");
        goto cleanup;
    }
    if (info.rows != A->rows) {
        status = nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH,
                           "nz_solve: the preconditioner was made from a %lld x %lld matrix, A "
                           "is %lld x %lld", (long long)info.rows, (long long)info.rows,
                           (long long)A->rows, (long long)A->rows);
        goto cleanup;
    }
    if (info.value_type != A->value_type || info.location != A->location) {
        status = nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                           "nz_solve: the preconditioner's vectors are %s on the %s, A's %s on "
                           "the %s", info.value_type == NZ_F32 ? "float" : "double",
                           info.location == NZ_HOST ? "host" : "device",
                           A->value_type == NZ_F32 ? "float" : "double",
                           A->location == NZ_HOST ? "host" : "device");
        goto cleanup;
    }
    local.preconditioner = NULL;
    local.precond = NZ_PRECOND_USER;
    local.precond_apply = object_apply;
    local.precond_user = (void *)M;
    const double setup = nzi_wtime() - t0;
    status = solve_krylov(ctx, A, b, x, &local, res);
    res->setup_seconds += setup;
    if (info.kind == NZ_PRECOND_ILU0 || info.kind == NZ_PRECOND_IC0) {
        res->precond_shift = info.shift;
        res->precond_attempts = info.attempts;
    }
cleanup:
    nz_precond_destroy(&own);
    return status;
}

nz_status_t nz_solve(nz_context_t *ctx, const nz_matrix_t *A, const void *b, void *x,
                     const nz_solve_options_t *options, nz_solve_result_t *result) {
    nz_solve_result_t res;
    nz_solve_options_t opt;
    nz_status_t status;
    memset(&res, 0, sizeof res);
    res.residual_norm = res.relative_residual = NAN;
    res.reason = NZ_SOLVE_NOT_RUN;
    if (result != NULL) *result = res;
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    res.method = options != NULL ? options->method : NZ_METHOD_CG;
    status = solve_check(ctx, A, b, x);
    if (status == NZ_SUCCESS) status = nzi_solve_options(ctx, options, A->rows, &opt);
    if (status == NZ_SUCCESS) {
        const int object = opt.preconditioner != NULL ||
                           opt.precond == NZ_PRECOND_BLOCK_JACOBI ||
                           opt.precond == NZ_PRECOND_CHEBYSHEV ||
                           opt.precond == NZ_PRECOND_AMG;
        /* CG with none or Jacobi: nz_cg_solve (its fused GPU iteration); with any other
         * preconditioner: the table's CG (cg_table.c) as the other methods */
        const int native_cg = opt.method == NZ_METHOD_CG && opt.preconditioner == NULL &&
                              opt.monitor == NULL &&
                              (opt.precond == NZ_PRECOND_NONE || opt.precond == NZ_PRECOND_JACOBI);
        status = native_cg ? solve_cg(ctx, A, b, x, &opt, &res)
                 : object  ? solve_object(ctx, A, b, x, &opt, &res)
                           : solve_krylov(ctx, A, b, x, &opt, &res);
    }
    res.status = status;
    if (result != NULL)
        *result = res;
    else
        nzi_free(ctx, res.history);
    return status;
}
