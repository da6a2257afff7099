/* test_solve_operator.c: nz_solve_operator (matrix-free solves): every method against nz_solve on the same matrix, CG on the table against nz_cg_solve, the allreduce hook, callback errors, indefinite CG, arguments, allocation failures. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* The operator: y = A x through an SpMV plan of a host matrix, counting its calls. */
typedef struct spmv_op {
    nz_spmv_plan_t *plan;
    int64_t calls;
    int64_t fail_at;    /* > 0: the call with this number fails */
} spmv_op_t;

static nz_status_t spmv_apply(void *user, const void *x, void *y) {
    spmv_op_t *op = (spmv_op_t *)user;
    if (++op->calls == op->fail_at) return NZ_ERR_IO;
    return nz_spmv_execute(op->plan, 1.0, x, 0.0, y);
}

/* An allreduce over one process: leaves the values as they are, counts the calls and values. */
typedef struct reduce_log {
    int64_t calls, sums, maxes;
    int64_t fail_at;
} reduce_log_t;

static nz_status_t log_allreduce(void *user, double *values, int count, nz_reduce_op_t op) {
    reduce_log_t *log = (reduce_log_t *)user;
    (void)values;
    if (++log->calls == log->fail_at) return NZ_ERR_IO;
    if (op == NZ_REDUCE_SUM) log->sums += count;
    else log->maxes += count;
    return NZ_SUCCESS;
}

/* Two "processes" in one: the operator is block-diagonal with two equal blocks B, b = (c, c);
 * each half is solved through the same vectors, and the allreduce doubles a sum (the other
 * process holds the same part) and keeps a maximum: the solve must then give x = (y, y) with y
 * the single-block solution of B y = c, with the true residual of the whole system. */
static nz_status_t twin_allreduce(void *user, double *values, int count, nz_reduce_op_t op) {
    (void)user;
    if (op == NZ_REDUCE_SUM)
        for (int i = 0; i < count; i++) values[i] *= 2.0;
    return NZ_SUCCESS;
}

static void make_op(nz_context_t *ctx, nz_operator_t *op, spmv_op_t *sp, const nz_matrix_t *A) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    memset(sp, 0, sizeof *sp);
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &sp->plan, A, NZ_OP_N, NZ_ALG_AUTO, NZ_PLAN_REUSE));
    memset(op, 0, sizeof *op);
    op->rows = info.rows;
    op->value_type = info.value_type;
    op->location = NZ_HOST;
    op->apply = spmv_apply;
    op->user = sp;
}

static void *rhs(nz_context_t *ctx, const nz_matrix_t *A, nz_value_type_t vt, uint64_t seed) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    double *bd = (double *)nzt_malloc((size_t)info.rows * sizeof(double) + 8);
    void *b = nzt_malloc((size_t)info.rows * nzi_value_size(vt) + 8);
    nzt_random_vector(bd, b, vt, info.rows, seed);
    free(bd);
    return b;
}

/* Every method on the operator gives bitwise the x of nz_solve on the matrix (same table, same
 * plan; CG: nz_solve's CG is nz_cg_solve, so there the iterations are compared). */
static void test_against_matrix(nz_context_t *ctx) {
    const nz_method_t methods[] = {NZ_METHOD_BICGSTAB, NZ_METHOD_GMRES, NZ_METHOD_FGMRES};
    for (int t = 0; t < 2; t++) {
        const nz_value_type_t vt = t ? NZ_F32 : NZ_F64;
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, 40, 40, 0.8, vt));
        const int64_t n = 1600;
        void *b = rhs(ctx, A, vt, nzt_seed + 1);
        void *x1 = nzt_malloc((size_t)n * nzi_value_size(vt));
        void *x2 = nzt_malloc((size_t)n * nzi_value_size(vt));
        nz_operator_t op;
        spmv_op_t sp;
        make_op(ctx, &op, &sp, A);
        for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++)
            for (int p = 0; p < 2; p++) {
                nz_solve_options_t opt;
                memset(&opt, 0, sizeof opt);
                opt.method = methods[m];
                opt.rtol = vt == NZ_F32 ? 1e-5 : 1e-10;
                nz_solve_result_t r1, r2;
                memset(x1, 0, (size_t)n * nzi_value_size(vt));
                memset(x2, 0, (size_t)n * nzi_value_size(vt));
                reduce_log_t log;
                memset(&log, 0, sizeof log);
                if (p) {
                    op.allreduce = log_allreduce;
                    op.reduce_user = &log;
                } else {
                    op.allreduce = NULL;
                }
                nz_status_t s1 = nz_solve(ctx, A, b, x1, &opt, &r1);
                nz_status_t s2 = nz_solve_operator(ctx, &op, b, x2, &opt, &r2);
                const int same = memcmp(x1, x2, (size_t)n * nzi_value_size(vt)) == 0;
                /* with an allreduce, norm2 is the root of the reduced dot: not bitwise the
                 * table's norm, so the iterations may differ by rounding only */
                NZT_CHECK(s1 == NZ_SUCCESS && s2 == NZ_SUCCESS &&
                              (p ? llabs((long long)(r1.iterations - r2.iterations)) <= 1
                                 : same && r1.iterations == r2.iterations) &&
                              r2.relative_residual <= opt.rtol,
                          "%s %s allreduce %d: status %d/%d its %lld/%lld same %d relres %g",
                          nz_method_name(opt.method), vt == NZ_F32 ? "f32" : "f64", p, (int)s1,
                          (int)s2, (long long)r1.iterations, (long long)r2.iterations, same,
                          r2.relative_residual);
                NZT_CHECK(!p || (log.calls > 0 && log.sums > 0),
                          "%s: the allreduce was not called (%lld calls)",
                          nz_method_name(opt.method), (long long)log.calls);
            }
        nz_spmv_plan_destroy(&sp.plan);
        nz_matrix_destroy(&A);
        free(b);
        free(x1);
        free(x2);
    }
}

/* CG on the table: the iterations of nz_cg_solve (within 1), the true residual at tolerance,
 * with and without a Jacobi callback; MINRES too on the SPD problem. */
static nz_status_t jacobi_apply(void *user, const void *r, void *z) {
    const double *d = (const double *)user;
    const double *rr = (const double *)r;
    double *zz = (double *)z;
    for (int64_t i = 0; i < 900; i++) zz[i] = rr[i] / d[i];
    return NZ_SUCCESS;
}

static void test_cg(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 30, 30, NZ_F64));
    const int64_t n = 900;
    double *b = (double *)rhs(ctx, A, NZ_F64, nzt_seed + 2);
    double *x1 = (double *)nzt_malloc((size_t)n * sizeof(double));
    double *x2 = (double *)nzt_malloc((size_t)n * sizeof(double));
    double *d = (double *)nzt_malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) d[i] = 4.0;
    nz_operator_t op;
    spmv_op_t sp;
    make_op(ctx, &op, &sp, A);
    for (int p = 0; p < 2; p++) {
        nz_solve_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.method = NZ_METHOD_CG;
        opt.rtol = 1e-10;
        opt.precond = p ? NZ_PRECOND_JACOBI : NZ_PRECOND_NONE;
        nz_solve_result_t r1, r2;
        memset(x1, 0, (size_t)n * sizeof(double));
        memset(x2, 0, (size_t)n * sizeof(double));
        nz_status_t s1 = nz_solve(ctx, A, b, x1, &opt, &r1);
        if (p) {
            opt.precond = NZ_PRECOND_USER;
            opt.precond_apply = jacobi_apply;
            opt.precond_user = d;
        }
        sp.calls = 0;
        nz_status_t s2 = nz_solve_operator(ctx, &op, b, x2, &opt, &r2);
        double diff = 0;
        for (int64_t i = 0; i < n; i++) diff = fmax(diff, fabs(x1[i] - x2[i]));
        NZT_CHECK(s1 == NZ_SUCCESS && s2 == NZ_SUCCESS && r2.reason == NZ_SOLVE_CONVERGED &&
                      llabs((long long)(r1.iterations - r2.iterations)) <= 1 &&
                      r2.relative_residual <= 1e-10 && diff < 1e-6 &&
                      sp.calls >= r2.iterations + 2,
                  "CG on the table (precond %d): status %d/%d its %lld/%lld relres %g diff %g "
                  "applies %lld: %s", p, (int)s1, (int)s2, (long long)r1.iterations,
                  (long long)r2.iterations, r2.relative_residual, diff, (long long)sp.calls,
                  nz_context_last_error(ctx));
    }
    /* the twin system: block-diagonal (A, A) as two processes holding one block each */
    {
        nz_solve_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.rtol = 1e-10;
        nz_solve_result_t r1, r2;
        for (int m = 0; m < 3; m++) {
            opt.method = m == 0 ? NZ_METHOD_CG : m == 1 ? NZ_METHOD_BICGSTAB : NZ_METHOD_MINRES;
            memset(x1, 0, (size_t)n * sizeof(double));
            memset(x2, 0, (size_t)n * sizeof(double));
            op.allreduce = NULL;
            nz_status_t s1 = nz_solve_operator(ctx, &op, b, x1, &opt, &r1);
            op.allreduce = twin_allreduce;
            nz_status_t s2 = nz_solve_operator(ctx, &op, b, x2, &opt, &r2);
            op.allreduce = NULL;
            double diff = 0;
            for (int64_t i = 0; i < n; i++) diff = fmax(diff, fabs(x1[i] - x2[i]));
            /* the whole system's ||b|| and residual are sqrt(2) times one block's */
            NZT_CHECK(s1 == NZ_SUCCESS && s2 == NZ_SUCCESS && diff < 1e-8 &&
                          fabs(r2.residual_norm - sqrt(2.0) * r1.residual_norm) <=
                              1e-6 * r1.residual_norm + 1e-300 &&
                          llabs((long long)(r1.iterations - r2.iterations)) <= 1,
                      "%s twin: status %d/%d diff %g residual %g vs %g its %lld/%lld",
                      nz_method_name(opt.method), (int)s1, (int)s2, diff, r2.residual_norm,
                      r1.residual_norm, (long long)r1.iterations, (long long)r2.iterations);
        }
    }
    nz_spmv_plan_destroy(&sp.plan);
    nz_matrix_destroy(&A);
    free(b);
    free(x1);
    free(x2);
    free(d);
}

/* Statuses: an indefinite operator in CG, failing callbacks, b = 0, NaN in b, refusals. */
static void test_statuses(nz_context_t *ctx) {
    const double dense[9] = {2, 0, 0, 0, -1, 0, 0, 0, 3};
    int64_t ro[4] = {0, 1, 2, 3};
    int32_t ci[3] = {0, 1, 2};
    double v[3] = {dense[0], dense[4], dense[8]};
    nz_matrix_t *D = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &D, 3, 3, NZ_I64, ro, ci, NZ_F64, v));
    nz_operator_t op;
    spmv_op_t sp;
    make_op(ctx, &op, &sp, D);
    double b[3] = {1, 1, 1}, x[3] = {0, 0, 0};
    nz_solve_options_t opt;
    nz_solve_result_t res;
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_CG;
    nz_status_t st = nz_solve_operator(ctx, &op, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && res.reason == NZ_SOLVE_BREAKDOWN_INDEFINITE &&
                  isfinite(res.residual_norm),
              "CG on an indefinite operator: status %d reason %d", (int)st, (int)res.reason);
    /* MINRES solves it */
    opt.method = NZ_METHOD_MINRES;
    memset(x, 0, sizeof x);
    st = nz_solve_operator(ctx, &op, b, x, &opt, &res);
    NZT_CHECK(st == NZ_SUCCESS && fabs(x[1] + 1.0) < 1e-12,
              "MINRES on the indefinite operator: status %d x1 %g", (int)st, x[1]);
    /* the apply callback fails: its status, x finite */
    for (int m = 0; m < 5; m++) {
        opt.method = (nz_method_t)m;
        memset(x, 0, sizeof x);
        sp.calls = 0;
        sp.fail_at = 2;
        st = nz_solve_operator(ctx, &op, b, x, &opt, &res);
        NZT_CHECK(st == NZ_ERR_IO && strstr(nz_context_last_error(ctx), "apply") != NULL,
                  "%s: failing apply gave %d: %s", nz_method_name(opt.method), (int)st,
                  nz_context_last_error(ctx));
    }
    sp.fail_at = 0;
    /* the allreduce fails */
    reduce_log_t log;
    memset(&log, 0, sizeof log);
    log.fail_at = 3;
    op.allreduce = log_allreduce;
    op.reduce_user = &log;
    opt.method = NZ_METHOD_GMRES;
    memset(x, 0, sizeof x);
    st = nz_solve_operator(ctx, &op, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_IO && strstr(nz_context_last_error(ctx), "allreduce") != NULL,
              "failing allreduce gave %d: %s", (int)st, nz_context_last_error(ctx));
    op.allreduce = NULL;
    /* b = 0: x = 0; NaN in b: refused, x untouched */
    double z[3] = {0, 0, 0};
    x[0] = 5;
    st = nz_solve_operator(ctx, &op, z, x, &opt, &res);
    NZT_CHECK(st == NZ_SUCCESS && x[0] == 0.0 && res.reason == NZ_SOLVE_CONVERGED,
              "b = 0: status %d x0 %g", (int)st, x[0]);
    double bn[3] = {1, NAN, 1};
    x[0] = 7;
    st = nz_solve_operator(ctx, &op, bn, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && x[0] == 7, "NaN b: status %d x0 %g", (int)st, x[0]);
    /* refusals: matrix preconditioners, no apply, NULL operator, bad type/location, overlap,
     * a device operator on an unbound context */
    opt.precond = NZ_PRECOND_ILU0;
    st = nz_solve_operator(ctx, &op, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_UNSUPPORTED && res.reason == NZ_SOLVE_NOT_RUN,
              "ILU0 on an operator: %d", (int)st);
    opt.precond = NZ_PRECOND_NONE;
    st = nz_solve_operator(ctx, NULL, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_NULL_ARGUMENT, "NULL operator: %d", (int)st);
    nz_operator_t bad = op;
    bad.apply = NULL;
    NZT_CHECK(nz_solve_operator(ctx, &bad, b, x, &opt, &res) == NZ_ERR_NULL_ARGUMENT,
              "no apply accepted");
    bad = op;
    bad.value_type = (nz_value_type_t)77;
    NZT_CHECK(nz_solve_operator(ctx, &bad, b, x, &opt, &res) == NZ_ERR_INVALID_ARGUMENT,
              "bad value type accepted");
    bad = op;
    bad.rows = -1;
    NZT_CHECK(nz_solve_operator(ctx, &bad, b, x, &opt, &res) == NZ_ERR_INVALID_ARGUMENT,
              "negative rows accepted");
    bad = op;
    bad.location = NZ_DEVICE;
    st = nz_solve_operator(ctx, &bad, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_INVALID_ARGUMENT || st == NZ_ERR_UNSUPPORTED,
              "device operator on a host context: %d", (int)st);
    NZT_CHECK(nz_solve_operator(ctx, &op, b, b + 1, &opt, &res) == NZ_ERR_INVALID_ARGUMENT,
              "overlapping b and x accepted");
    /* zero rows: converged at once */
    bad = op;
    bad.rows = 0;
    NZT_CHECK(nz_solve_operator(ctx, &bad, NULL, NULL, &opt, &res) == NZ_SUCCESS,
              "an empty operator: %s", nz_context_last_error(ctx));
    nz_spmv_plan_destroy(&sp.plan);
    nz_matrix_destroy(&D);
}

/* The monitor: once per iteration in order, the history's norm, x where the method has one; an
 * error stops the solve with that status and the true residual of the x reached. */
typedef struct monitor_log {
    int64_t calls, last, stop_at;
    int x_seen, out_of_order, norm_mismatch;
    double norms[4096];
} monitor_log_t;

static nz_status_t log_monitor(void *user, int64_t iteration, double norm, const void *x) {
    monitor_log_t *m = (monitor_log_t *)user;
    if (iteration != m->last + 1) m->out_of_order++;
    m->last = iteration;
    m->calls++;
    if (x != NULL) m->x_seen++;
    if (iteration < 4096) m->norms[iteration] = norm;
    return iteration == m->stop_at ? NZ_ERR_IO : NZ_SUCCESS;
}

static void test_monitor(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 20, 20, NZ_F64));
    double *b = (double *)rhs(ctx, A, NZ_F64, nzt_seed + 4);
    double x[400];
    static monitor_log_t m;
    for (int meth = 0; meth < 5; meth++) {
        for (int stop = 0; stop < 2; stop++) {
            nz_solve_options_t opt;
            memset(&opt, 0, sizeof opt);
            opt.method = (nz_method_t)meth;
            opt.precond = meth == NZ_METHOD_CG ? NZ_PRECOND_JACOBI : NZ_PRECOND_NONE;
            opt.record_history = 1;
            opt.monitor = log_monitor;
            opt.monitor_user = &m;
            memset(&m, 0, sizeof m);
            m.stop_at = stop ? 3 : -1;
            memset(x, 0, sizeof x);
            nz_solve_result_t res;
            nz_status_t st = nz_solve(ctx, A, b, x, &opt, &res);
            const int has_x = meth != NZ_METHOD_GMRES && meth != NZ_METHOD_FGMRES;
            if (!stop) {
                int mismatch = 0;
                for (int64_t k = 1; k < res.history_length && k < 4096; k++)
                    if (m.norms[k] != res.history[k] && k < res.history_length - 1) mismatch++;
                NZT_CHECK(st == NZ_SUCCESS && m.calls == res.iterations && m.out_of_order == 0 &&
                              m.x_seen == (has_x ? m.calls : 0) &&
                              mismatch <= res.restarts + 1, /* a check replaces an entry */
                          "%s monitor: status %d calls %lld its %lld order %d x %d mismatch %d",
                          nz_method_name(opt.method), (int)st, (long long)m.calls,
                          (long long)res.iterations, m.out_of_order, m.x_seen, mismatch);
            } else {
                NZT_CHECK(st == NZ_ERR_IO && res.reason == NZ_SOLVE_MONITOR_STOPPED &&
                              res.iterations == 3 && m.calls == 3 &&
                              isfinite(res.residual_norm) &&
                              strstr(nz_context_last_error(ctx), "monitor") != NULL,
                          "%s monitor stop: status %d reason %d its %lld calls %lld: %s",
                          nz_method_name(opt.method), (int)st, (int)res.reason,
                          (long long)res.iterations, (long long)m.calls,
                          nz_context_last_error(ctx));
            }
            nz_free(ctx, res.history);
        }
    }
    nz_matrix_destroy(&A);
    free(b);
}

/* Every allocation of a solve fails in turn: a status, never a crash or a leak (ASan). */
static void test_alloc_failures(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, 12, 12, 0.0, NZ_F64));
    double *b = (double *)rhs(ctx, A, NZ_F64, nzt_seed + 3);
    double x[144];
    nz_operator_t op;
    spmv_op_t sp;
    make_op(ctx, &op, &sp, A);
    for (int m = 0; m < 5; m++) {
        nz_solve_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.method = (nz_method_t)m == NZ_METHOD_MINRES ? NZ_METHOD_GMRES : (nz_method_t)m;
        opt.record_history = 1;
        int ok = 0;
        for (int64_t k = 1; k < 200 && !ok; k++) {
            memset(x, 0, sizeof x);
            nz_context_fail_alloc_after(ctx, k);
            nz_solve_result_t res;
            nz_status_t st = nz_solve_operator(ctx, &op, b, x, &opt, &res);
            nz_context_fail_alloc_after(ctx, 0);
            if (st == NZ_SUCCESS) ok = 1;
            else NZT_CHECK(st == NZ_ERR_OUT_OF_MEMORY, "%s: failure %lld gave %d",
                           nz_method_name(opt.method), (long long)k, (int)st);
            nz_free(ctx, res.history);
        }
        NZT_CHECK(ok, "%s never succeeded under failure injection", nz_method_name(opt.method));
    }
    nz_spmv_plan_destroy(&sp.plan);
    nz_matrix_destroy(&A);
    free(b);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    test_against_matrix(ctx);
    test_cg(ctx);
    test_statuses(ctx);
    test_monitor(ctx);
    test_alloc_failures(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_solve_operator");
}
