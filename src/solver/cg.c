/* cg.c: (Jacobi-preconditioned) conjugate gradients, written once against the vector-ops table. */
#include "nzi.h"
#include "backend.h"
#include "cg_work.h"
#include "plan_internal.h"

#include <math.h>
#include <string.h>

/* GPU: read the scalars back every 8 iterations. An iteration on a large problem costs 100 us or
 * more, a round trip about 10 us; at most 7 iterations' SpMVs are wasted after convergence (the
 * vector kernels are no-ops then), which is noise next to the hundreds of iterations CG needs. */
#define NZI_CG_DEFAULT_CHECK_INTERVAL 8
#define NZI_CG_SPMV_TIMING_REPEATS 3

/* One CG iteration (Hestenes & Stiefel 1952; Saad, Iterative Methods, Alg. 9.1 for the
 * preconditioned form): q = A p; alpha = r'z / p'q; x += alpha p; r -= alpha q; z = M^-1 r;
 * beta = r'z (new) / r'z (old); p = z + beta p. The scalar logic (alpha, beta, convergence,
 * breakdown) runs inside the reductions, wherever the backend keeps its scalars. x += alpha p is
 * done in the pass that updates p (update_xp), which reads p anyway: the same values as updating
 * x beside r, with one vector fewer read and written. */
static nz_status_t cg_iteration(const nzi_cg_ops_t *ops, nzi_cg_work_t *w, nz_spmv_plan_t *plan,
                                void *x) {
    NZI_TRY(nz_spmv_execute(plan, 1.0, w->p, 0.0, w->q));
    NZI_TRY(ops->dot_pq(w));
    NZI_TRY(ops->update_r(w));
    return ops->update_xp(w, x);
}

static nz_status_t check_options(nz_context_t *ctx, const nz_cg_options_t *in, int64_t n,
                                 nz_cg_options_t *opt) {
    char why[256];
    if (nzi_cg_options_read(in, n, opt, why, sizeof why) != NZ_SUCCESS)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_cg_solve: %s", why);
    if (opt->check_interval < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_cg_solve: check_interval %d < 0",
                         opt->check_interval);
    if (opt->check_interval == 0) opt->check_interval = NZI_CG_DEFAULT_CHECK_INTERVAL;
    return NZ_SUCCESS;
}

/* Turn the final state into the returned status with a message naming what happened (the true
 * relative residual and the relative tolerance for a caveat). */
static nz_status_t final_status(nz_context_t *ctx, const nzi_cg_scalars_t *s, double relres,
                                double reltol) {
    char why[320];
    nz_status_t status = nzi_cg_final_message(s, relres, reltol, why, sizeof why);
    return status == NZ_SUCCESS ? status : nzi_error(ctx, status, "nz_cg_solve: %s", why);
}

/* ||b|| and the scaling exponent e (cg_scalars.h): *bnorm_scaled = ||2^e b||, e = 0 unless the
 * plain ||b||^2 leaves the safe range; then max|b| (and max|x0|, so that 2^e x0 stays finite)
 * pick e. NZ_ERR_BREAKDOWN when b holds a NaN or Inf. Cost: one pass over b; two more over b
 * and one over x only when scaling. */
static nz_status_t scaled_bnorm(nz_context_t *ctx, const nzi_cg_ops_t *ops, nzi_cg_work_t *w,
                                const void *b, const void *x, double *bnorm_scaled,
                                int *exponent) {
    nzi_cg_scalars_t s;
    *exponent = 0;
    NZI_TRY(ops->norm2(w, b, 1.0));
    NZI_TRY(ops->get_scalars(w, &s));
    if (nzi_cg_norm2_safe(s.result, w->value_type)) {
        *bnorm_scaled = sqrt(s.result);
        return NZ_SUCCESS;
    }
    NZI_TRY(ops->maxabs(w, b));
    NZI_TRY(ops->get_scalars(w, &s));
    const double bmax = s.result;
    if (!isfinite(bmax)) return nzi_error(ctx, NZ_ERR_BREAKDOWN, "nz_cg_solve: b holds NaN or Inf");
    if (bmax == 0.0) {
        *bnorm_scaled = 0.0;
        return NZ_SUCCESS;
    }
    NZI_TRY(ops->maxabs(w, x));
    NZI_TRY(ops->get_scalars(w, &s));
    *exponent = nzi_cg_scale_exponent(bmax, s.result, w->value_type);
    NZI_TRY(ops->norm2(w, b, ldexp(1.0, *exponent)));
    NZI_TRY(ops->get_scalars(w, &s));
    *bnorm_scaled = sqrt(s.result);
    return NZ_SUCCESS;
}

/* The planner's format for a host matrix (nz_spmv_plan_choose with the format open, from
 * nz_matrix_stats): *converted is a copy of A in it, or NULL when the planner keeps A's format,
 * has no advice, or the conversion is refused (padding limit, unsupported): A is then used as it
 * is. Other failures (out of memory) are returned. Matrices below the CPU planner's one-thread
 * size (nzi_plan_thresholds.cpu_serial_nnz nonzeros) keep CSR. Cost: the statistics (a pass
 * over A) and the conversion, both part of the solve's setup. */
static nz_status_t cg_planner_format(nz_context_t *ctx, const nz_matrix_t *A, unsigned flags,
                                     nz_matrix_t **converted) {
    nz_matrix_stats_t stats;
    nz_format_t format;
    nz_alg_t alg;
    *converted = NULL;
    /* Below the CPU planner's one-thread size a conversion cannot pay: CSR runs serially there,
     * and most other formats have only OpenMP kernels, whose fork / join then dominates. */
    if ((double)A->nnz < nzi_plan_thresholds.cpu_serial_nnz) return NZ_SUCCESS;
    NZI_TRY(nz_matrix_stats(ctx, &stats, A));
    if (nz_spmv_plan_choose(&format, &alg, NULL, 0, &stats, NZ_BACKEND_CPU, NZ_FORMAT_COUNT,
                            flags & NZ_PLAN_DETERMINISTIC) != NZ_SUCCESS ||
        format == A->format)
        return NZ_SUCCESS;
    nz_status_t status = nz_matrix_convert(ctx, converted, A, format, NULL);
    if (status == NZ_ERR_TOO_MUCH_PADDING || status == NZ_ERR_UNSUPPORTED) {
        *converted = NULL;
        nzi_clear_error(ctx);
        return NZ_SUCCESS;
    }
    return status;
}

/* One solve's state between its phases (nz_cg_solve). */
typedef struct cg_solve {
    nz_context_t *ctx;
    const nz_matrix_t *A;
    const void *b;
    void *x;
    nz_cg_options_t opt;
    const nzi_cg_ops_t *ops;
    nz_spmv_plan_t *plan;
    nz_matrix_t *converted; /* A in the planner's format, when the solve made one */
    nzi_cg_work_t w;
    int created;            /* w holds the backend's workspace (ops->create succeeded) */
    nzi_cg_scalars_t s;
    nz_cg_result_t res;
    double *history;        /* the history returned in res (NULL without record_history) */
    double bnorm;           /* ||2^e b||: the solve runs on 2^e A x = 2^e b when e != 0 */
    int exponent;           /* e */
    double reltol;          /* max(rtol ||b||, atol) / ||b|| */
} cg_solve_t;

/* The arguments nz_cg_solve checks before it allocates anything, and the backend's vector
 * operations for A. */
static nz_status_t cg_check_arguments(nz_context_t *ctx, const nz_matrix_t *A, const void *b,
                                      const void *x, const nz_cg_options_t *options,
                                      nz_cg_options_t *opt, const nzi_cg_ops_t **ops) {
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->rows != A->cols)
        return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH, "nz_cg_solve: A is %lld x %lld, not square",
                         (long long)A->rows, (long long)A->cols);
    const int64_t n = A->rows;
    if (n > 0 && (b == NULL || x == NULL))
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_cg_solve: b or x is NULL");
    if (nzi_ranges_overlap(b, (size_t)n * nzi_value_size(A->value_type), x,
                           (size_t)n * nzi_value_size(A->value_type)))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_cg_solve: b and x overlap in memory (x is updated while b is still "
                         "needed); use separate arrays");
    NZI_TRY(check_options(ctx, options, n, opt));
    if (A->location == NZ_DEVICE && ctx->cuda == NULL)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE,
                         "nz_cg_solve: A is a device matrix but the context is not bound to a "
                         "device");
    *ops = nzi_backend_of(A)->cg_ops();
    if (*ops == NULL)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE, "nz_cg_solve: this build has no CUDA backend");
    return NZ_SUCCESS;
}

/* The SpMV plan: on A in the planner's format where the solve may choose it (a host CSR matrix,
 * NZ_ALG_AUTO, keep_format off) and that format's kernels accept the flags, else on A. A solve
 * runs the plan once an iteration: NZ_PLAN_REUSE lets the planner spend set-up that pays back
 * over hundreds of products (docs/PLANNER.md, "setup proportional to use"). */
static nz_status_t cg_plan(cg_solve_t *c) {
    nz_context_t *ctx = c->ctx;
    nz_cg_options_t reuse = c->opt;
    reuse.plan_flags |= NZ_PLAN_REUSE;
    const nz_cg_options_t *opt = &reuse;
    if (c->A->location == NZ_HOST && c->A->format == NZ_FORMAT_CSR && opt->alg == NZ_ALG_AUTO &&
        !opt->keep_format && c->A->rows > 0)
        NZI_TRY(cg_planner_format(ctx, c->A, opt->plan_flags, &c->converted));
    if (c->converted != NULL) {
        nz_status_t status = nz_spmv_plan_create(ctx, &c->plan, c->converted, NZ_OP_N, opt->alg,
                                                 opt->plan_flags);
        if (status == NZ_ERR_UNSUPPORTED) { /* e.g. flags the new format's kernels refuse */
            nz_matrix_destroy(&c->converted);
            nzi_clear_error(ctx);
        } else if (status != NZ_SUCCESS) {
            return status;
        }
    }
    if (c->plan == NULL)
        NZI_TRY(nz_spmv_plan_create(ctx, &c->plan, c->A, NZ_OP_N, opt->alg, opt->plan_flags));
    c->res.alg = c->plan->alg;
    c->res.format = c->plan->A->format;
    return NZ_SUCCESS;
}

/* Setup: format and plan, workspace, history, scalars, the Jacobi preconditioner and the scaled
 * ||b||; timed into res.setup_seconds. */
static nz_status_t cg_setup(cg_solve_t *c) {
    nz_context_t *ctx = c->ctx;
    const nzi_cg_ops_t *ops = c->ops;
    nzi_cg_work_t *w = &c->w;
    nzi_cg_scalars_t *s = &c->s;
    const int64_t n = c->A->rows;
    double t0 = nzi_wtime();
    NZI_TRY(cg_plan(c));
    w->ctx = ctx;
    w->value_type = c->A->value_type;
    w->n = n;
    w->jacobi = c->opt.precond == NZ_PRECOND_JACOBI;
    if (c->opt.record_history &&
        nzi_add_overflow_i64(c->opt.max_iterations, 1, &w->history_capacity))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "nz_cg_solve: history length overflows");
    NZI_TRY(ops->create(w));
    c->created = 1;
    /* The returned history is allocated before x is touched, so running out of memory never
     * leaves a half-finished solve in x behind an error status. */
    if (w->history_capacity > 0)
        NZI_TRY(nzi_alloc_array(ctx, (void **)&c->history, (size_t)w->history_capacity,
                                sizeof(double), "CG history"));
    s->history = w->history;
    s->history_capacity = w->history_capacity;
    s->max_iterations = c->opt.max_iterations;
    s->bad_row = n;
    s->state = NZI_CG_RUNNING;
    NZI_TRY(ops->set_scalars(w, s));
    if (w->jacobi) {
        NZI_TRY(ops->jacobi(w, c->A));
        NZI_TRY(ops->get_scalars(w, s));
        if (s->bad_row < n)
            return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                             "nz_cg_solve: Jacobi preconditioner: diagonal entry (%lld, %lld) of "
                             "A is missing, not positive or not finite (A is not SPD)",
                             (long long)s->bad_row + 1, (long long)s->bad_row + 1); /* 1-based */
    }
    NZI_TRY(scaled_bnorm(ctx, ops, w, c->b, c->x, &c->bnorm, &c->exponent));
    c->res.setup_seconds = nzi_wtime() - t0;
    return NZ_SUCCESS;
}

/* b = 0: the solution is x = 0 exactly, whatever the guess. */
static nz_status_t cg_zero_rhs(cg_solve_t *c, double t0) {
    NZI_TRY(c->ops->zero(&c->w, c->x));
    c->s.state = NZI_CG_CONVERGED;
    c->s.iterations = 0;
    c->s.rr = 0.0;
    c->res.residual_norm = c->res.relative_residual = 0.0;
    if (c->w.history_capacity > 0) {
        c->history[0] = 0.0;
        c->res.history_length = 1;
    }
    c->res.solve_seconds = nzi_wtime() - t0;
    return NZ_SUCCESS;
}

/* The iterations: the tolerance, the initial residual, the iterations in batches of
 * check_interval (replayed from a captured graph where the backend can and use_graph asks),
 * and a true-residual check whenever the recursive residual meets the tolerance. */
static nz_status_t cg_iterate(cg_solve_t *c) {
    nz_context_t *ctx = c->ctx;
    const nzi_cg_ops_t *ops = c->ops;
    nzi_cg_work_t *w = &c->w;
    nzi_cg_scalars_t *s = &c->s;
    const double bscale = ldexp(1.0, c->exponent);
    const double tol =
        nzi_cg_scaled_tolerance(c->opt.rtol, c->opt.atol, c->bnorm, c->exponent, &c->reltol);
    s->tol2 = tol * tol;
    NZI_TRY(ops->set_scalars(w, s));
    if (c->exponent != 0) NZI_TRY(ops->scale(w, c->x, bscale));
    NZI_TRY(nz_spmv_execute(c->plan, 1.0, c->x, 0.0, w->q));
    NZI_TRY(ops->residual(w, c->b, bscale, NZI_CG_RESIDUAL_INIT));
    NZI_TRY(ops->get_scalars(w, s));

    const int batch = ops->capture_begin != NULL ? c->opt.check_interval : 1;
    int graph = 0;
    if (s->state == NZI_CG_RUNNING && c->opt.use_graph && ops->capture_begin != NULL) {
        /* Record `batch` iterations once; on any failure fall back to plain launches. */
        NZI_TRY(ops->capture_begin(w));
        nz_status_t body = NZ_SUCCESS;
        for (int k = 0; k < batch && body == NZ_SUCCESS; k++)
            body = cg_iteration(ops, w, c->plan, c->x);
        NZI_TRY(ops->capture_end(w, &graph));
        if (body != NZ_SUCCESS) graph = 0;
        nzi_clear_error(ctx);
    }
    c->res.used_graph = graph;
    for (;;) {
        while (s->state == NZI_CG_RUNNING) {
            if (graph) {
                NZI_TRY(ops->replay(w));
            } else {
                for (int k = 0; k < batch; k++) NZI_TRY(cg_iteration(ops, w, c->plan, c->x));
            }
            NZI_TRY(ops->get_scalars(w, s));
        }
        if (s->state != NZI_CG_CHECK) break;
        /* The recursive residual meets the tolerance: the true one decides, and CG goes on from
         * it when it misses (a residual replacement, cg_scalars.h). */
        NZI_TRY(nz_spmv_execute(c->plan, 1.0, c->x, 0.0, w->q));
        NZI_TRY(ops->residual(w, c->b, bscale, NZI_CG_RESIDUAL_REPLACE));
        NZI_TRY(ops->get_scalars(w, s));
    }
    return NZ_SUCCESS;
}

/* After the iterations: the true residual of the returned x, whatever stopped the loop; x
 * scaled back; the history read back (unscaled); one SpMV timed on its own, for the
 * transfer-vs-SpMV comparison. */
static nz_status_t cg_true_residual(cg_solve_t *c, double t0) {
    const nzi_cg_ops_t *ops = c->ops;
    nzi_cg_work_t *w = &c->w;
    const int exponent = c->exponent;
    nzi_cg_scalars_t end = c->s;
    NZI_TRY(nz_spmv_execute(c->plan, 1.0, c->x, 0.0, w->q));
    NZI_TRY(ops->residual(w, c->b, ldexp(1.0, exponent), NZI_CG_RESIDUAL_TRUE));
    NZI_TRY(ops->get_scalars(w, &end));
    if (exponent != 0) NZI_TRY(ops->scale(w, c->x, ldexp(1.0, -exponent)));
    c->res.solve_seconds = nzi_wtime() - t0;
    nzi_cg_after_true(&c->s, end.result);
    c->res.residual_norm = ldexp(sqrt(end.result), -exponent);
    c->res.relative_residual = sqrt(end.result) / c->bnorm;
    if (w->history_capacity > 0) {
        int64_t count = c->s.iterations + 1;
        if (count > w->history_capacity) count = w->history_capacity;
        NZI_TRY(ops->get_history(w, c->history, count));
        nzi_cg_unscale_history(c->history, count, exponent);
        c->res.history_length = count;
    }
    double t1 = nzi_wtime();
    for (int k = 0; k < NZI_CG_SPMV_TIMING_REPEATS; k++)
        NZI_TRY(nz_spmv_execute(c->plan, 1.0, c->x, 0.0, w->q));
    NZI_TRY(ops->synchronize(w));
    c->res.spmv_seconds = (nzi_wtime() - t1) / NZI_CG_SPMV_TIMING_REPEATS;
    return NZ_SUCCESS;
}

/* The result (its history moves to the caller, or is freed without a result) and the status
 * that names how the solve ended. */
static nz_status_t cg_report(cg_solve_t *c, nz_cg_result_t *result) {
    nz_cg_result_t *res = &c->res;
    res->iterations = c->s.iterations;
    res->seconds_per_iteration =
        res->solve_seconds / (double)(c->s.iterations > 0 ? c->s.iterations : 1);
    res->history = c->history;
    c->history = NULL;
    nz_status_t status = final_status(c->ctx, &c->s, res->relative_residual, c->reltol);
    if (result != NULL) {
        *result = *res;
    } else {
        nzi_free(c->ctx, res->history);
    }
    return status;
}

/* Setup, iterations and the true residual, then the report; every phase above. */
nz_status_t nz_cg_solve(nz_context_t *ctx, const nz_matrix_t *A, const void *b, void *x,
                        const nz_cg_options_t *options, nz_cg_result_t *result) {
    nz_status_t status = NZ_SUCCESS;
    cg_solve_t c;
    memset(&c, 0, sizeof c);

    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    /* NaN residuals until one is computed: a solve that stops in its checks or setup (a bad
     * argument, a non-finite b, Jacobi on a non-positive diagonal) reports none */
    c.res.residual_norm = c.res.relative_residual = NAN;
    if (result != NULL) *result = c.res;
    NZI_TRY(cg_check_arguments(ctx, A, b, x, options, &c.opt, &c.ops));
    c.ctx = ctx;
    c.A = A;
    c.b = b;
    c.x = x;

    NZI_CHECK(cg_setup(&c));
    NZI_CHECK(c.ops->synchronize(&c.w));
    const double t0 = nzi_wtime();
    if (c.bnorm == 0.0) {
        NZI_CHECK(cg_zero_rhs(&c, t0));
    } else {
        NZI_CHECK(cg_iterate(&c));
        NZI_CHECK(cg_true_residual(&c, t0));
    }
    status = cg_report(&c, result);

cleanup:
    nzi_free(ctx, c.history);
    if (c.created) c.ops->destroy(&c.w);
    nz_spmv_plan_destroy(&c.plan);
    nz_matrix_destroy(&c.converted);
    return status;
}
