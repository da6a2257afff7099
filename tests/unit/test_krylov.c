/* test_krylov.c: nz_solve with BiCGSTAB, GMRES(m) and FGMRES(m) on non-symmetric systems, MINRES on symmetric indefinite ones (upwind convection-diffusion, west0067), CG through the family, stopping statuses, reproducibility and argument checks. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static const nz_method_t krylov_methods[] = {NZ_METHOD_BICGSTAB, NZ_METHOD_GMRES,
                                             NZ_METHOD_FGMRES};
/* MINRES (symmetric A only) has its own cases: test_minres */

/* ---- helpers ------------------------------------------------------------------------------ */

/* The 2-D convection-diffusion operator -Lap u + c . grad u on an nx x nx grid, 5-point, first
 * order upwind for the convection c = (1, 1) scaled so that the cell Peclet number is `peclet`
 * (rows scaled by h^2): diagonal 4 + 2 peclet, west and south -1 - peclet, east and north -1.
 * Non-symmetric for peclet > 0, an M-matrix (diagonally dominant) for peclet >= 0. */
static nz_matrix_t *convdiff2d(nz_context_t *ctx, int64_t nx, double peclet, nz_value_type_t vt) {
    const int64_t n = nx * nx;
    int64_t *ro = (int64_t *)nzt_malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *ci = (int32_t *)nzt_malloc((size_t)(5 * n) * sizeof(int32_t));
    double *v = (double *)nzt_malloc((size_t)(5 * n) * sizeof(double));
    int64_t k = 0;
    for (int64_t j = 0; j < nx; j++)
        for (int64_t i = 0; i < nx; i++) {
            const int64_t row = j * nx + i;
            ro[row] = k;
            if (j > 0) ci[k] = (int32_t)(row - nx), v[k++] = -1.0 - peclet;
            if (i > 0) ci[k] = (int32_t)(row - 1), v[k++] = -1.0 - peclet;
            ci[k] = (int32_t)row, v[k++] = 4.0 + 2.0 * peclet;
            if (i + 1 < nx) ci[k] = (int32_t)(row + 1), v[k++] = -1.0;
            if (j + 1 < nx) ci[k] = (int32_t)(row + nx), v[k++] = -1.0;
        }
    ro[n] = k;
    void *vals = nzt_malloc((size_t)k * nzi_value_size(vt));
    nzt_from_double(vals, vt, v, k);
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, n, n, NZ_I64, ro, ci, vt, vals));
    free(ro);
    free(ci);
    free(v);
    free(vals);
    return A;
}

static nz_matrix_t *small_csr(nz_context_t *ctx, int64_t n, const double *dense,
                              nz_value_type_t vt) {
    int64_t *ro = (int64_t *)nzt_malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *ci = (int32_t *)nzt_malloc((size_t)(n * n) * sizeof(int32_t));
    double *v = (double *)nzt_malloc((size_t)(n * n) * sizeof(double));
    void *vals = nzt_malloc((size_t)(n * n) * nzi_value_size(vt));
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        ro[i] = k;
        for (int64_t j = 0; j < n; j++)
            if (dense[i * n + j] != 0.0 || i == j) ci[k] = (int32_t)j, v[k++] = dense[i * n + j];
    }
    ro[n] = k;
    nzt_from_double(vals, vt, v, k);
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, n, n, NZ_I64, ro, ci, vt, vals));
    free(ro);
    free(ci);
    free(v);
    free(vals);
    return A;
}

/* ||b - A x|| in double from the matrix's own CSR arrays (independent of the library's SpMV). */
static double true_residual(nz_context_t *ctx, const nz_matrix_t *A, const void *b,
                            const void *x) {
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A));
    double rr = 0;
    for (int64_t i = 0; i < info.rows; i++) {
        double s = nzi_get(b, info.value_type, i);
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            s -= nzi_get(v, info.value_type, k) * nzi_get(x, info.value_type, ci[k]);
        rr += s * s;
    }
    return sqrt(rr);
}

static double vec_norm(const void *b, nz_value_type_t vt, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += nzi_get(b, vt, i) * nzi_get(b, vt, i);
    return sqrt(s);
}

/* A solve from x0 = 0 with b random (seeded); x returned (malloc'ed) for comparisons. */
typedef struct run {
    nz_status_t status;
    nz_solve_result_t res;
    void *x;
    double relres; /* independent true relative residual */
} run_t;

static run_t solve_run(nz_context_t *ctx, const nz_matrix_t *A, const nz_solve_options_t *opt,
                       uint64_t seed) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    const int64_t n = info.rows;
    const size_t vs = nzi_value_size(info.value_type);
    double *bd = (double *)nzt_malloc(nzt_at_least_one(n) * sizeof(double));
    void *b = nzt_malloc(nzt_at_least_one(n) * vs);
    run_t r;
    r.x = nzt_malloc(nzt_at_least_one(n) * vs);
    memset(r.x, 0, nzt_at_least_one(n) * vs);
    nzt_random_vector(bd, b, info.value_type, n, seed);
    r.status = nz_solve(ctx, A, b, r.x, opt, &r.res);
    r.relres = true_residual(ctx, A, b, r.x) / vec_norm(b, info.value_type, n);
    free(bd);
    free(b);
    return r;
}

static void run_free(nz_context_t *ctx, run_t *r) {
    nz_free(ctx, r->res.history);
    free(r->x);
}

/* ---- convergence on convection-diffusion -------------------------------------------------- */

/* Every method x value type x preconditioner x Peclet: NZ_SUCCESS, the independent true
 * residual at the tolerance, the reported residual agreeing with it, the history's ends, the
 * same iterations and bits on a second run. */
static void test_convdiff(nz_context_t *ctx) {
    const double peclets[] = {0.5, 5.0};
    for (int vi = 0; vi < 2; vi++) {
        const nz_value_type_t vt = vi == 0 ? NZ_F64 : NZ_F32;
        const double rtol = vt == NZ_F64 ? 1e-9 : 1e-5;
        for (int pi = 0; pi < 2; pi++) {
            nz_matrix_t *A = convdiff2d(ctx, 24, peclets[pi], vt);
            const int64_t n = 24 * 24;
            for (int mi = 0; mi < 3; mi++)
                for (int pc = 0; pc < 2; pc++) {
                    nz_solve_options_t opt;
                    memset(&opt, 0, sizeof opt);
                    opt.method = krylov_methods[mi];
                    opt.rtol = rtol;
                    opt.precond = pc ? NZ_PRECOND_JACOBI : NZ_PRECOND_NONE;
                    opt.record_history = 1;
                    run_t a = solve_run(ctx, A, &opt, nzt_seed + 10);
                    run_t b = solve_run(ctx, A, &opt, nzt_seed + 10);
                    const char *m = nz_method_name(opt.method);
                    NZT_CHECK(a.status == NZ_SUCCESS && a.res.reason == NZ_SOLVE_CONVERGED,
                              "%s %s Pe %g precond %d: status %d reason %d: %s", m,
                              nzt_vt_name(vt), peclets[pi], pc, (int)a.status, (int)a.res.reason,
                              nz_context_last_error(ctx));
                    NZT_CHECK(a.res.status == a.status, "%s: result status", m);
                    /* f32: the library's residual is computed in single precision, so the
                     * independent double one may differ by a few per cent at rtol 1e-5 */
                    const double slack = vt == NZ_F64 ? 1e-3 : 5e-2;
                    NZT_CHECK(a.relres <= rtol * (1.0 + slack), "%s %s Pe %g: true relres %.3e > %.1e", m,
                              nzt_vt_name(vt), peclets[pi], a.relres, rtol);
                    NZT_CHECK(fabs(a.res.relative_residual - a.relres) <= slack * a.relres + 1e-14,
                              "%s %s: reported relres %.6e vs independent %.6e", m,
                              nzt_vt_name(vt), a.res.relative_residual, a.relres);
                    NZT_CHECK(a.res.iterations > 0 && a.res.iterations < 400,
                              "%s %s: %lld iterations", m, nzt_vt_name(vt),
                              (long long)a.res.iterations);
                    NZT_CHECK(a.res.history_length == a.res.iterations + 1 &&
                                  a.res.history != NULL,
                              "%s: history length %lld for %lld iterations", m,
                              (long long)a.res.history_length, (long long)a.res.iterations);
                    if (a.res.history_length > 0) {
                        NZT_CHECK(a.res.history[a.res.history_length - 1] == a.res.residual_norm,
                                  "%s: last history entry %.6e is not the true residual %.6e", m,
                                  a.res.history[a.res.history_length - 1], a.res.residual_norm);
                        NZT_CHECK(fabs(a.res.history[0] - a.res.residual_norm / a.res.relative_residual) <=
                                      1e-6 * a.res.history[0],
                                  "%s: history[0] %.6e is not ||b|| (x0 = 0)", m, a.res.history[0]);
                    }
                    NZT_CHECK(a.res.iterations == b.res.iterations &&
                                  memcmp(a.x, b.x, (size_t)n * nzi_value_size(vt)) == 0,
                              "%s %s: a second run differs (%lld vs %lld iterations)", m,
                              nzt_vt_name(vt), (long long)a.res.iterations,
                              (long long)b.res.iterations);
                    printf("  %-8s %s Pe %-4g %-6s: %3lld iterations, relres %.2e\n", m,
                           nzt_vt_name(vt), peclets[pi], pc ? "jacobi" : "none",
                           (long long)a.res.iterations, a.relres);
                    run_free(ctx, &a);
                    run_free(ctx, &b);
                }
            nz_matrix_destroy(&A);
        }
    }
}

/* GMRES and FGMRES with m = 1, 5, 30: converged; GMRES and FGMRES with a fixed preconditioner
 * build the same space (iterations within 1); a longer restart never needs more iterations
 * here. */
static void test_restarts(nz_context_t *ctx) {
    nz_matrix_t *A = convdiff2d(ctx, 16, 2.0, NZ_F64);
    const int restarts[] = {1, 5, 30};
    int64_t its[2][3];
    for (int f = 0; f < 2; f++)
        for (int ri = 0; ri < 3; ri++) {
            nz_solve_options_t opt;
            memset(&opt, 0, sizeof opt);
            opt.method = f ? NZ_METHOD_FGMRES : NZ_METHOD_GMRES;
            opt.restart = restarts[ri];
            opt.rtol = 1e-8;
            opt.precond = NZ_PRECOND_JACOBI;
            opt.max_iterations = 20000;
            run_t a = solve_run(ctx, A, &opt, nzt_seed + 20);
            NZT_CHECK(a.status == NZ_SUCCESS && a.relres <= 1e-8 * 1.01,
                      "%s(%d): status %d relres %.3e: %s", nz_method_name(opt.method),
                      restarts[ri], (int)a.status, a.relres, nz_context_last_error(ctx));
            NZT_CHECK(restarts[ri] == 30 || a.res.restarts > 0, "%s(%d): no restart counted",
                      nz_method_name(opt.method), restarts[ri]);
            its[f][ri] = a.res.iterations;
            printf("  %-6s(%2d) jacobi: %4lld iterations, %lld restarts\n",
                   nz_method_name(opt.method), restarts[ri], (long long)a.res.iterations,
                   (long long)a.res.restarts);
            run_free(ctx, &a);
        }
    for (int ri = 0; ri < 3; ri++)
        NZT_CHECK(llabs(its[0][ri] - its[1][ri]) <= 1, "m = %d: GMRES %lld vs FGMRES %lld",
                  restarts[ri], (long long)its[0][ri], (long long)its[1][ri]);
    NZT_CHECK(its[0][2] <= its[0][1] && its[0][1] <= its[0][0],
              "GMRES iterations %lld (m=1), %lld (m=5), %lld (m=30) not ordered",
              (long long)its[0][0], (long long)its[0][1], (long long)its[0][2]);
    nz_matrix_destroy(&A);
}

/* 1 and 2 threads on a system large enough for parallel kernels (n = 40000 > the serial
 * threshold): the same iterations and bitwise the same x. */
static void test_threads(nz_context_t *ctx) {
    for (int vi = 0; vi < 2; vi++) {
        const nz_value_type_t vt = vi == 0 ? NZ_F64 : NZ_F32;
        nz_matrix_t *A = convdiff2d(ctx, 200, 1.0, vt);
        const int64_t n = 200 * 200;
        for (int mi = 0; mi < 3; mi++) {
            nz_solve_options_t opt;
            memset(&opt, 0, sizeof opt);
            opt.method = krylov_methods[mi];
            opt.restart = 10;
            opt.max_iterations = 40;
            opt.precond = NZ_PRECOND_JACOBI;
            NZT_OK(ctx, nz_context_set_threads(ctx, 1));
            run_t a = solve_run(ctx, A, &opt, nzt_seed + 30);
            NZT_OK(ctx, nz_context_set_threads(ctx, 2));
            run_t b = solve_run(ctx, A, &opt, nzt_seed + 30);
            NZT_OK(ctx, nz_context_set_threads(ctx, 0));
            NZT_CHECK(a.status == b.status && a.res.iterations == b.res.iterations &&
                          memcmp(a.x, b.x, (size_t)n * nzi_value_size(vt)) == 0 &&
                          a.res.residual_norm == b.res.residual_norm,
                      "%s %s: 1 and 2 threads differ (status %d/%d, %lld/%lld iterations, "
                      "residual %.17g/%.17g)",
                      nz_method_name(opt.method), nzt_vt_name(vt), (int)a.status, (int)b.status,
                      (long long)a.res.iterations, (long long)b.res.iterations,
                      a.res.residual_norm, b.res.residual_norm);
            NZT_CHECK(a.status == NZ_MAX_ITERATIONS || a.status == NZ_SUCCESS,
                      "%s: status %d", nz_method_name(opt.method), (int)a.status);
            run_free(ctx, &a);
            run_free(ctx, &b);
        }
        nz_matrix_destroy(&A);
    }
}

/* ---- real matrices ------------------------------------------------------------------------ */

/* west0067 (non-symmetric, 67 x 67, zero diagonal entries: Jacobi refused): full GMRES (m >= n)
 * converges; BiCGSTAB and GMRES(30), GMRES(5) either converge or stop with an honest
 * non-success status whose residual is the true one.
 * bcsstk01 (SPD) through NZ_METHOD_CG equals nz_cg_solve. */
static void test_real(nz_context_t *ctx) {
    char path[4096];
    nz_matrix_t *A = NULL;
    snprintf(path, sizeof path, "%s/west0067.mtx", nzt_data_dir());
    NZT_OK(ctx, nz_matrix_read(ctx, &A, path, NZ_F64));
    struct {
        nz_method_t method;
        int restart;
        nz_precond_t precond;
        int must_converge;
    } cases[] = {
        {NZ_METHOD_GMRES, 100, NZ_PRECOND_NONE, 1}, {NZ_METHOD_FGMRES, 100, NZ_PRECOND_NONE, 1},
        {NZ_METHOD_GMRES, 67, NZ_PRECOND_NONE, 1},  {NZ_METHOD_GMRES, 30, NZ_PRECOND_NONE, 0},
        {NZ_METHOD_GMRES, 5, NZ_PRECOND_NONE, 0},   {NZ_METHOD_BICGSTAB, 0, NZ_PRECOND_NONE, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nz_solve_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.method = cases[c].method;
        opt.restart = cases[c].restart;
        opt.precond = cases[c].precond;
        opt.rtol = 1e-8;
        opt.max_iterations = 2000;
        run_t a = solve_run(ctx, A, &opt, nzt_seed + 40);
        printf("  west0067 %-8s(%3d) %-6s: status %d reason %d, %lld iterations, relres %.2e\n",
               nz_method_name(opt.method), opt.restart,
               opt.precond == NZ_PRECOND_JACOBI ? "jacobi" : "none", (int)a.status,
               (int)a.res.reason, (long long)a.res.iterations, a.relres);
        if (cases[c].must_converge)
            NZT_CHECK(a.status == NZ_SUCCESS, "west0067 %s(%d): status %d: %s",
                      nz_method_name(opt.method), opt.restart, (int)a.status,
                      nz_context_last_error(ctx));
        if (a.status == NZ_SUCCESS)
            NZT_CHECK(a.relres <= 1e-8 * 1.01, "west0067: converged with relres %.3e", a.relres);
        else
            NZT_CHECK(a.res.reason != NZ_SOLVE_CONVERGED && isfinite(a.res.residual_norm) &&
                          a.res.relative_residual > 1e-8 &&
                          fabs(a.res.relative_residual - a.relres) <= 1e-6 * a.relres,
                      "west0067 %s: status %d with reason %d, residual %.3e vs %.3e",
                      nz_method_name(opt.method), (int)a.status, (int)a.res.reason,
                      a.res.relative_residual, a.relres);
        run_free(ctx, &a);
    }
    {
        nz_solve_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.method = NZ_METHOD_GMRES;
        opt.precond = NZ_PRECOND_JACOBI;
        run_t a = solve_run(ctx, A, &opt, nzt_seed + 40);
        NZT_CHECK(a.status == NZ_ERR_BREAKDOWN && a.res.reason == NZ_SOLVE_NOT_RUN &&
                      isnan(a.res.residual_norm),
                  "west0067 Jacobi: status %d", (int)a.status);
        run_free(ctx, &a);
    }
    nz_matrix_destroy(&A);

    snprintf(path, sizeof path, "%s/bcsstk01.mtx", nzt_data_dir());
    NZT_OK(ctx, nz_matrix_read(ctx, &A, path, NZ_F64));
    nz_solve_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_CG;
    opt.precond = NZ_PRECOND_JACOBI;
    opt.rtol = 1e-10;
    opt.record_history = 1;
    run_t a = solve_run(ctx, A, &opt, nzt_seed + 41);
    NZT_CHECK(a.status == NZ_SUCCESS && a.res.reason == NZ_SOLVE_CONVERGED &&
                  a.relres <= 1e-10 * 1.01 && a.res.history_length == a.res.iterations + 1,
              "bcsstk01 CG through nz_solve: status %d relres %.3e", (int)a.status, a.relres);
    /* the same solve through nz_cg_solve */
    nz_cg_options_t cg;
    nz_cg_result_t cres;
    memset(&cg, 0, sizeof cg);
    cg.precond = NZ_PRECOND_JACOBI;
    cg.rtol = 1e-10;
    double *b = (double *)nzt_malloc(48 * sizeof(double)), *x = (double *)nzt_malloc(48 * sizeof(double));
    nzt_random_vector(b, b, NZ_F64, 48, nzt_seed + 41);
    memset(x, 0, 48 * sizeof(double));
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &cg, &cres));
    NZT_CHECK(cres.iterations == a.res.iterations && memcmp(x, a.x, 48 * sizeof(double)) == 0,
              "nz_solve CG (%lld iterations) differs from nz_cg_solve (%lld)",
              (long long)a.res.iterations, (long long)cres.iterations);
    /* BiCGSTAB and GMRES on an SPD matrix converge as well */
    for (int mi = 0; mi < 3; mi++) {
        opt.method = krylov_methods[mi];
        opt.record_history = 0;
        opt.max_iterations = 5000;
        run_t k = solve_run(ctx, A, &opt, nzt_seed + 41);
        NZT_CHECK(k.status == NZ_SUCCESS && k.relres <= 1e-10 * 1.01,
                  "bcsstk01 %s: status %d relres %.3e: %s", nz_method_name(opt.method),
                  (int)k.status, k.relres, nz_context_last_error(ctx));
        run_free(ctx, &k);
    }
    free(b);
    free(x);
    run_free(ctx, &a);
    nz_matrix_destroy(&A);
}

/* ---- stopping statuses -------------------------------------------------------------------- */

static nz_status_t jacobi_callback(void *user, const void *r, void *z) {
    const double *dinv = (const double *)user;
    const double *rd = (const double *)r;
    double *zd = (double *)z;
    for (int64_t i = 0; i < 24 * 24; i++) zd[i] = dinv[i] * rd[i];
    return NZ_SUCCESS;
}

static int callback_calls;
/* z = r for two calls, then an error */
static nz_status_t failing_callback(void *user, const void *r, void *z) {
    (void)user;
    if (++callback_calls >= 3) return NZ_ERR_INVALID_ARGUMENT;
    memcpy(z, r, 24 * 24 * sizeof(double));
    return NZ_SUCCESS;
}

static nz_status_t copy_callback(void *user, const void *r, void *z) {
    callback_calls++;
    memcpy(z, r, (size_t)(*(const int64_t *)user) * sizeof(double));
    return NZ_SUCCESS;
}

static void test_statuses(nz_context_t *ctx) {
    nz_matrix_t *A = convdiff2d(ctx, 24, 5.0, NZ_F64);
    nz_solve_options_t opt;
    /* the iteration limit: a caveat with the true residual reported */
    for (int mi = 0; mi < 3; mi++) {
        memset(&opt, 0, sizeof opt);
        opt.method = krylov_methods[mi];
        opt.max_iterations = 2;
        run_t a = solve_run(ctx, A, &opt, nzt_seed + 50);
        NZT_CHECK(a.status == NZ_MAX_ITERATIONS && a.res.reason == NZ_SOLVE_MAX_ITERATIONS &&
                      a.res.iterations == 2 && isfinite(a.res.residual_norm) &&
                      fabs(a.res.relative_residual - a.relres) <= 1e-9 * a.relres &&
                      strstr(nz_context_last_error(ctx), "iteration limit") != NULL,
                  "%s max_iterations 2: status %d reason %d its %lld relres %.3e/%.3e: %s",
                  nz_method_name(opt.method), (int)a.status, (int)a.res.reason,
                  (long long)a.res.iterations, a.res.relative_residual, a.relres,
                  nz_context_last_error(ctx));
        run_free(ctx, &a);
    }
    /* user callback = Jacobi gives the built-in Jacobi's iterations and bits */
    double *dinv = (double *)nzt_malloc(24 * 24 * sizeof(double));
    for (int64_t i = 0; i < 24 * 24; i++) dinv[i] = 1.0 / (4.0 + 2.0 * 5.0);
    for (int mi = 0; mi < 3; mi++) {
        memset(&opt, 0, sizeof opt);
        opt.method = krylov_methods[mi];
        opt.precond = NZ_PRECOND_JACOBI;
        run_t a = solve_run(ctx, A, &opt, nzt_seed + 51);
        opt.precond = NZ_PRECOND_USER;
        opt.precond_apply = jacobi_callback;
        opt.precond_user = dinv;
        run_t b = solve_run(ctx, A, &opt, nzt_seed + 51);
        NZT_CHECK(a.status == NZ_SUCCESS && b.status == NZ_SUCCESS &&
                      a.res.iterations == b.res.iterations &&
                      memcmp(a.x, b.x, 24 * 24 * sizeof(double)) == 0,
                  "%s: callback Jacobi (%d, %lld its) differs from built-in (%d, %lld its)",
                  nz_method_name(opt.method), (int)b.status, (long long)b.res.iterations,
                  (int)a.status, (long long)a.res.iterations);
        run_free(ctx, &a);
        run_free(ctx, &b);
        /* a failing callback: its status, the reason, a true residual */
        opt.precond_apply = failing_callback;
        callback_calls = 0;
        run_t c = solve_run(ctx, A, &opt, nzt_seed + 51);
        NZT_CHECK(c.status == NZ_ERR_INVALID_ARGUMENT && c.res.reason == NZ_SOLVE_PRECOND_FAILED &&
                      isfinite(c.res.residual_norm) &&
                      strstr(nz_context_last_error(ctx), "callback") != NULL,
                  "%s failing callback: status %d reason %d: %s", nz_method_name(opt.method),
                  (int)c.status, (int)c.res.reason, nz_context_last_error(ctx));
        run_free(ctx, &c);
    }
    free(dinv);
    /* FGMRES with a callback that is no preconditioner at all (identity) still converges */
    {
        int64_t n = 24 * 24;
        memset(&opt, 0, sizeof opt);
        opt.method = NZ_METHOD_FGMRES;
        opt.precond = NZ_PRECOND_USER;
        opt.precond_apply = copy_callback;
        opt.precond_user = &n;
        callback_calls = 0;
        run_t a = solve_run(ctx, A, &opt, nzt_seed + 52);
        NZT_CHECK(a.status == NZ_SUCCESS && callback_calls == a.res.iterations,
                  "FGMRES identity callback: status %d, %d calls for %lld iterations",
                  (int)a.status, callback_calls, (long long)a.res.iterations);
        run_free(ctx, &a);
    }
    /* single precision cannot reach rtol 1e-12: a non-success caveat, the true residual named */
    nz_matrix_t *A32 = convdiff2d(ctx, 24, 5.0, NZ_F32);
    for (int mi = 0; mi < 3; mi++) {
        memset(&opt, 0, sizeof opt);
        opt.method = krylov_methods[mi];
        opt.rtol = 1e-12;
        opt.max_iterations = 3000;
        run_t a = solve_run(ctx, A32, &opt, nzt_seed + 53);
        NZT_CHECK((a.status == NZ_STAGNATED || a.status == NZ_MAX_ITERATIONS) &&
                      a.res.relative_residual > 1e-12 && isfinite(a.res.relative_residual),
                  "f32 %s rtol 1e-12: status %d relres %.3e", nz_method_name(opt.method),
                  (int)a.status, a.res.relative_residual);
        printf("  f32 %-8s rtol 1e-12: status %d (%s), %lld iterations, relres %.2e\n",
               nz_method_name(opt.method), (int)a.status, nz_status_string(a.status),
               (long long)a.res.iterations, a.relres);
        run_free(ctx, &a);
    }
    nz_matrix_destroy(&A32);
    nz_matrix_destroy(&A);
}

/* Breakdowns on 2 x 2 systems whose arithmetic is exact. */
static void test_breakdowns(nz_context_t *ctx) {
    const double skew[4] = {0, 1, -1, 0};
    const double b[2] = {1, 1};
    double x[2];
    nz_matrix_t *S = small_csr(ctx, 2, skew, NZ_F64);
    nz_solve_options_t opt;
    nz_solve_result_t res;
    /* BiCGSTAB: r0'A r0 = 0 for a skew A, so r0'v = 0 at once */
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_BICGSTAB;
    memset(x, 0, sizeof x);
    nz_status_t st = nz_solve(ctx, S, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && res.reason == NZ_SOLVE_BREAKDOWN_RHO &&
                  res.residual_norm == sqrt(2.0) && res.relative_residual == 1.0,
              "BiCGSTAB on a skew matrix: status %d reason %d residual %g", (int)st,
              (int)res.reason, res.residual_norm);
    /* GMRES(1) on it cannot move (h11 = v'Av = 0): stagnation */
    opt.method = NZ_METHOD_GMRES;
    opt.restart = 1;
    memset(x, 0, sizeof x);
    st = nz_solve(ctx, S, b, x, &opt, &res);
    NZT_CHECK(st == NZ_STAGNATED && res.reason == NZ_SOLVE_STAGNATED && res.iterations == 1,
              "GMRES(1) on a skew matrix: status %d reason %d its %lld: %s", (int)st,
              (int)res.reason, (long long)res.iterations, nz_context_last_error(ctx));
    /* full GMRES solves it in 2 steps */
    opt.restart = 2;
    memset(x, 0, sizeof x);
    st = nz_solve(ctx, S, b, x, &opt, &res);
    NZT_CHECK(st == NZ_SUCCESS && res.iterations == 2 && fabs(x[0] + 1) < 1e-14 &&
                  fabs(x[1] - 1) < 1e-14,
              "GMRES(2) on a skew matrix: status %d its %lld x (%g, %g)", (int)st,
              (long long)res.iterations, x[0], x[1]);
    nz_matrix_destroy(&S);
    /* singular A = diag(1, 0): the Krylov space is invariant after 2 steps with b outside the
     * range: a breakdown, not convergence */
    const double sing[4] = {1, 0, 0, 0};
    nz_matrix_t *Z = small_csr(ctx, 2, sing, NZ_F64);
    for (int f = 0; f < 2; f++) {
        opt.method = f ? NZ_METHOD_FGMRES : NZ_METHOD_GMRES;
        opt.restart = 30;
        memset(x, 0, sizeof x);
        st = nz_solve(ctx, Z, b, x, &opt, &res);
        NZT_CHECK(st == NZ_ERR_BREAKDOWN && res.reason == NZ_SOLVE_BREAKDOWN_SINGULAR &&
                      fabs(res.residual_norm - 1.0) < 1e-12,
                  "%s on a singular matrix: status %d reason %d residual %g: %s",
                  nz_method_name(opt.method), (int)st, (int)res.reason, res.residual_norm,
                  nz_context_last_error(ctx));
    }
    /* Jacobi refuses a zero diagonal */
    opt.method = NZ_METHOD_BICGSTAB;
    opt.precond = NZ_PRECOND_JACOBI;
    st = nz_solve(ctx, Z, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && res.reason == NZ_SOLVE_NOT_RUN && isnan(res.residual_norm) &&
                  strstr(nz_context_last_error(ctx), "(2, 2)") != NULL,
              "Jacobi on a zero diagonal: status %d: %s", (int)st, nz_context_last_error(ctx));
    nz_matrix_destroy(&Z);
    /* a NaN in A: breakdown, reported */
    const double bad[4] = {2, NAN, 0, 2};
    nz_matrix_t *N = small_csr(ctx, 2, bad, NZ_F64);
    for (int mi = 0; mi < 3; mi++) {
        memset(&opt, 0, sizeof opt);
        opt.method = krylov_methods[mi];
        memset(x, 0, sizeof x);
        st = nz_solve(ctx, N, b, x, &opt, &res);
        NZT_CHECK(st == NZ_ERR_BREAKDOWN && res.reason == NZ_SOLVE_BREAKDOWN_NAN,
                  "%s with NaN in A: status %d reason %d", nz_method_name(opt.method), (int)st,
                  (int)res.reason);
    }
    nz_matrix_destroy(&N);
}

/* b = 0, a non-finite b, a poisoned result and guess, NULL and invalid arguments. */
static void test_arguments(nz_context_t *ctx) {
    nz_matrix_t *A = convdiff2d(ctx, 4, 1.0, NZ_F64);
    double b[16], x[16], x_before[16];
    nz_solve_options_t opt;
    nz_solve_result_t res;
    for (int mi = 0; mi < 3; mi++) {
        memset(&opt, 0, sizeof opt);
        opt.method = krylov_methods[mi];
        opt.record_history = 1;
        /* b = 0 with a NaN guess and a poisoned result: x = 0, converged, every field set */
        memset(b, 0, sizeof b);
        nzt_poison(x, NZ_F64, 16);
        memset(&res, 0xAB, sizeof res);
        nz_status_t st = nz_solve(ctx, A, b, x, &opt, &res);
        int zero = 1;
        for (int i = 0; i < 16; i++) zero &= x[i] == 0.0;
        NZT_CHECK(st == NZ_SUCCESS && zero && res.reason == NZ_SOLVE_CONVERGED &&
                      res.iterations == 0 && res.restarts == 0 && res.residual_norm == 0.0 &&
                      res.relative_residual == 0.0 && res.history_length == 1 &&
                      res.history != NULL && res.history[0] == 0.0 && res.method == opt.method &&
                      res.status == NZ_SUCCESS,
                  "%s b = 0: status %d", nz_method_name(opt.method), (int)st);
        nz_free(ctx, res.history);
        /* a NaN guess with b != 0: a breakdown, no success */
        for (int i = 0; i < 16; i++) b[i] = 1.0;
        nzt_poison(x, NZ_F64, 16);
        st = nz_solve(ctx, A, b, x, &opt, &res);
        NZT_CHECK(st == NZ_ERR_BREAKDOWN && res.reason == NZ_SOLVE_BREAKDOWN_NAN,
                  "%s NaN guess: status %d reason %d", nz_method_name(opt.method), (int)st,
                  (int)res.reason);
        nz_free(ctx, res.history);
        /* NaN / Inf in b: refused, x untouched, no history */
        for (int k = 0; k < 2; k++) {
            b[3] = k ? INFINITY : NAN;
            for (int i = 0; i < 16; i++) x[i] = x_before[i] = i;
            memset(&res, 0xAB, sizeof res);
            st = nz_solve(ctx, A, b, x, &opt, &res);
            NZT_CHECK(st == NZ_ERR_BREAKDOWN && memcmp(x, x_before, sizeof x) == 0 &&
                          isnan(res.residual_norm) && res.history == NULL &&
                          res.history_length == 0 && res.reason == NZ_SOLVE_NOT_RUN,
                      "%s non-finite b: status %d", nz_method_name(opt.method), (int)st);
        }
        b[3] = 1.0;
        /* a b whose squared norm overflows or underflows: solved as the scaled system, x and
         * the residuals those of the caller's problem (the solution of b = 1 times the scale) */
        double x1[16], scales[2] = {1e200, 1e-200};
        memset(x1, 0, sizeof x1);
        for (int i = 0; i < 16; i++) b[i] = 1.0;
        NZT_OK(ctx, nz_solve(ctx, A, b, x1, &opt, NULL));
        for (int t = 0; t < 2; t++) {
            for (int i = 0; i < 16; i++) b[i] = scales[t];
            memset(x, 0, sizeof x);
            nz_solve_result_t big;
            st = nz_solve(ctx, A, b, x, &opt, &big);
            double err = 0;
            for (int i = 0; i < 16; i++) err = fmax(err, fabs(x[i] / scales[t] - x1[i]));
            NZT_CHECK(st == NZ_SUCCESS && big.relative_residual <= 1e-8 &&
                          big.residual_norm <= 1e-8 * 4 * scales[t] && err < 1e-6,
                      "%s b = %g: status %d relres %g residual %g err %g: %s",
                      nz_method_name(opt.method), scales[t], (int)st, big.relative_residual,
                      big.residual_norm, err, nz_context_last_error(ctx));
            nz_free(ctx, big.history);
        }
        for (int i = 0; i < 16; i++) b[i] = 1.0;
    }
    /* NULL and invalid arguments: an error status, the result's residual NaN */
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_GMRES;
    memset(x, 0, sizeof x);
    NZT_CHECK(nz_solve(NULL, A, b, x, &opt, &res) == NZ_ERR_NULL_ARGUMENT, "NULL ctx");
    NZT_CHECK(nz_solve(ctx, NULL, b, x, &opt, &res) == NZ_ERR_NULL_ARGUMENT, "NULL A");
    NZT_CHECK(nz_solve(ctx, A, NULL, x, &opt, &res) == NZ_ERR_NULL_ARGUMENT, "NULL b");
    NZT_CHECK(nz_solve(ctx, A, b, NULL, &opt, &res) == NZ_ERR_NULL_ARGUMENT, "NULL x");
    NZT_CHECK(isnan(res.residual_norm) && res.reason == NZ_SOLVE_NOT_RUN, "result after NULL x");
    NZT_CHECK(nz_solve(ctx, A, b, b, &opt, &res) == NZ_ERR_INVALID_ARGUMENT, "b and x overlap");
    nz_solve_options_t bad = opt;
    bad.rtol = -1;
    NZT_CHECK(nz_solve(ctx, A, b, x, &bad, &res) == NZ_ERR_INVALID_ARGUMENT, "rtol < 0");
    bad = opt;
    bad.atol = NAN;
    NZT_CHECK(nz_solve(ctx, A, b, x, &bad, &res) == NZ_ERR_INVALID_ARGUMENT, "atol NaN");
    bad = opt;
    bad.max_iterations = -1;
    NZT_CHECK(nz_solve(ctx, A, b, x, &bad, &res) == NZ_ERR_INVALID_ARGUMENT, "max_iterations");
    bad = opt;
    bad.restart = -1;
    NZT_CHECK(nz_solve(ctx, A, b, x, &bad, &res) == NZ_ERR_INVALID_ARGUMENT, "restart -1");
    bad.restart = 100000;
    NZT_CHECK(nz_solve(ctx, A, b, x, &bad, &res) == NZ_ERR_INVALID_ARGUMENT, "restart huge");
    bad = opt;
    bad.method = (nz_method_t)9;
    NZT_CHECK(nz_solve(ctx, A, b, x, &bad, &res) == NZ_ERR_INVALID_ARGUMENT, "method 9");
    bad = opt;
    bad.precond = (nz_precond_t)9; /* the first value past NZ_PRECOND_AMG */
    NZT_CHECK(nz_solve(ctx, A, b, x, &bad, &res) == NZ_ERR_INVALID_ARGUMENT, "precond 9");
    bad = opt;
    bad.precond = NZ_PRECOND_USER;
    NZT_CHECK(nz_solve(ctx, A, b, x, &bad, &res) == NZ_ERR_NULL_ARGUMENT, "USER without callback");
    /* CG takes a callback too (the table's CG): the identity gives CG's own iterations */
    {
        int64_t n16 = 16;
        nz_solve_options_t plain = opt, cb = opt;
        plain.method = cb.method = NZ_METHOD_CG;
        plain.precond = NZ_PRECOND_NONE;
        cb.precond = NZ_PRECOND_USER;
        cb.precond_apply = copy_callback;
        cb.precond_user = &n16;
        nz_solve_result_t r1, r2;
        double x1[16], x2[16];
        memset(x1, 0, sizeof x1);
        memset(x2, 0, sizeof x2);
        nz_matrix_t *L = NULL;
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &L, 4, 4, NZ_F64));
        nz_status_t s1 = nz_solve(ctx, L, b, x1, &plain, &r1);
        callback_calls = 0;
        nz_status_t s2 = nz_solve(ctx, L, b, x2, &cb, &r2);
        nz_matrix_destroy(&L);
        NZT_CHECK(s1 == NZ_SUCCESS && s2 == s1 && callback_calls > 0 &&
                      llabs((long long)(r1.iterations - r2.iterations)) <= 1,
                  "CG with a callback: status %d/%d its %lld/%lld calls %d", (int)s1, (int)s2,
                  (long long)r1.iterations, (long long)r2.iterations, callback_calls);
        nz_free(ctx, r1.history);
        nz_free(ctx, r2.history);
    }
    NZT_CHECK(strcmp(nz_method_name(NZ_METHOD_FGMRES), "fgmres") == 0 &&
                  strcmp(nz_method_name((nz_method_t)42), "unknown") == 0,
              "nz_method_name");
    /* options NULL: CG with the defaults (A is not symmetric but diagonally dominant enough
     * that CG is only asked to run; any status but an argument error) */
    nz_status_t st = nz_solve(ctx, A, b, x, NULL, &res);
    NZT_CHECK(st != NZ_ERR_INVALID_ARGUMENT && st != NZ_ERR_NULL_ARGUMENT && res.method == NZ_METHOD_CG,
              "NULL options: status %d", (int)st);
    nz_free(ctx, res.history);
    nz_matrix_destroy(&A);
    /* a rectangular matrix */
    char path[4096];
    snprintf(path, sizeof path, "%s/illc1033.mtx", nzt_data_dir());
    nz_matrix_t *R = NULL;
    NZT_OK(ctx, nz_matrix_read(ctx, &R, path, NZ_F64));
    NZT_CHECK(nz_solve(ctx, R, b, x, &opt, &res) == NZ_ERR_DIMENSION_MISMATCH, "rectangular A");
    nz_matrix_destroy(&R);
}

/* Fail the k-th allocation for k = 1, 2, ... until the solve succeeds: every failure is
 * NZ_ERR_OUT_OF_MEMORY with nothing leaked. */
static void test_alloc_failures(nz_context_t *ctx) {
    nz_matrix_t *A = convdiff2d(ctx, 8, 0.0, NZ_F64); /* symmetric: MINRES too */
    double b[64], x[64];
    for (int i = 0; i < 64; i++) b[i] = 1.0 + i % 3;
    for (int mi = 0; mi < 4; mi++) {
        nz_solve_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.method = mi < 3 ? krylov_methods[mi] : NZ_METHOD_MINRES;
        opt.precond = NZ_PRECOND_JACOBI;
        opt.record_history = 1;
        nz_status_t st = NZ_ERR_OUT_OF_MEMORY;
        int k;
        for (k = 1; k < 200 && st == NZ_ERR_OUT_OF_MEMORY; k++) {
            nz_alloc_stats_t before, after;
            nz_solve_result_t res;
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
            memset(x, 0, sizeof x);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            st = nz_solve(ctx, A, b, x, &opt, &res);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            nz_free(ctx, res.history);
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            NZT_CHECK(after.live_blocks == before.live_blocks,
                      "%s: allocation %d failed: %lld blocks leaked", nz_method_name(opt.method),
                      k, (long long)(after.live_blocks - before.live_blocks));
            NZT_CHECK(st == NZ_SUCCESS || st == NZ_ERR_OUT_OF_MEMORY,
                      "%s: allocation %d failed: status %d", nz_method_name(opt.method), k,
                      (int)st);
        }
        NZT_CHECK(st == NZ_SUCCESS && k > 3, "%s: no success after %d failures",
                  nz_method_name(opt.method), k);
    }
    nz_matrix_destroy(&A);
}

/* ---- MINRES on symmetric indefinite systems ----------------------------------------------- */

/* The 2-D Laplacian (Peclet 0) shifted by -sigma I: symmetric, indefinite for sigma between its
 * smallest and largest eigenvalues. MINRES converges (f64, f32), plain and Jacobi (a positive
 * constant diagonal here), 1 and 2 threads bitwise; with a Jacobi of negative entries (M not
 * positive definite) it breaks down; CG and MINRES agree on an SPD matrix up to a few
 * iterations. */
static nz_matrix_t *shifted_laplacian(nz_context_t *ctx, int64_t nx, double sigma,
                                      nz_value_type_t vt) {
    nz_matrix_t *L = convdiff2d(ctx, nx, 0.0, NZ_F64);
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, L));
    const int64_t n = nx * nx, nnz = ro[n];
    double *vals = (double *)nzt_malloc((size_t)nnz * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            vals[k] = ((const double *)v)[k] - (ci[k] == i ? sigma : 0.0);
    void *tv = nzt_malloc((size_t)nnz * nzi_value_size(vt));
    nzt_from_double(tv, vt, vals, nnz);
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, n, n, NZ_I64, ro, ci, vt, tv));
    free(vals);
    free(tv);
    nz_matrix_destroy(&L);
    return A;
}

static void test_minres(nz_context_t *ctx) {
    for (int vi = 0; vi < 2; vi++) {
        const nz_value_type_t vt = vi == 0 ? NZ_F64 : NZ_F32;
        const double rtol = vt == NZ_F64 ? 1e-9 : 1e-5;
        nz_matrix_t *A = shifted_laplacian(ctx, 20, 0.5, vt); /* eigenvalues in (-0.48, 7.5) */
        for (int pc = 0; pc < 2; pc++) {
            nz_solve_options_t opt;
            memset(&opt, 0, sizeof opt);
            opt.method = NZ_METHOD_MINRES;
            opt.rtol = rtol;
            opt.precond = pc ? NZ_PRECOND_JACOBI : NZ_PRECOND_NONE;
            opt.record_history = 1;
            run_t a = solve_run(ctx, A, &opt, nzt_seed + 60);
            const double slack = vt == NZ_F64 ? 1e-3 : 5e-2;
            NZT_CHECK(a.status == NZ_SUCCESS && a.relres <= rtol * (1 + slack) &&
                          a.res.history_length == a.res.iterations + 1 &&
                          a.res.history[a.res.history_length - 1] == a.res.residual_norm,
                      "minres %s precond %d: status %d relres %.3e: %s", nzt_vt_name(vt), pc,
                      (int)a.status, a.relres, nz_context_last_error(ctx));
            printf("  minres   %s shifted Laplacian %-6s: %3lld iterations, relres %.2e\n",
                   nzt_vt_name(vt), pc ? "jacobi" : "none", (long long)a.res.iterations, a.relres);
            /* GMRES without restarts minimises the same 2-norm (no preconditioner): the same
             * iterations in exact arithmetic; MINRES's short recurrences lose orthogonality on
             * an indefinite matrix and lag a few per cent behind */
            if (!pc && vt == NZ_F64) {
                opt.method = NZ_METHOD_GMRES;
                opt.restart = 1000;
                run_t g = solve_run(ctx, A, &opt, nzt_seed + 60);
                NZT_CHECK(g.status == NZ_SUCCESS && g.res.iterations <= a.res.iterations &&
                              a.res.iterations <= g.res.iterations + g.res.iterations / 10,
                          "MINRES %lld vs full GMRES %lld iterations",
                          (long long)a.res.iterations, (long long)g.res.iterations);
                run_free(ctx, &g);
            }
            run_free(ctx, &a);
        }
        nz_matrix_destroy(&A);
    }
    /* threads: bitwise */
    nz_matrix_t *B = shifted_laplacian(ctx, 200, 0.01, NZ_F64);
    nz_solve_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_MINRES;
    opt.max_iterations = 60;
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    run_t a = solve_run(ctx, B, &opt, nzt_seed + 61);
    NZT_OK(ctx, nz_context_set_threads(ctx, 2));
    run_t b = solve_run(ctx, B, &opt, nzt_seed + 61);
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    NZT_CHECK(a.status == NZ_MAX_ITERATIONS && b.status == a.status &&
                  a.res.iterations == 60 && b.res.iterations == 60 &&
                  memcmp(a.x, b.x, 200 * 200 * sizeof(double)) == 0,
              "minres: 1 and 2 threads differ or status %d/%d", (int)a.status, (int)b.status);
    run_free(ctx, &a);
    run_free(ctx, &b);
    nz_matrix_destroy(&B);
    /* Jacobi with a negative diagonal: M is not positive definite */
    nz_matrix_t *N = shifted_laplacian(ctx, 8, 5.0, NZ_F64); /* diagonal 4 - 5 = -1 */
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_MINRES;
    opt.precond = NZ_PRECOND_JACOBI;
    run_t c = solve_run(ctx, N, &opt, nzt_seed + 62);
    NZT_CHECK(c.status == NZ_ERR_BREAKDOWN && c.res.reason == NZ_SOLVE_BREAKDOWN_SINGULAR &&
                  isfinite(c.res.residual_norm),
              "minres with an indefinite Jacobi: status %d reason %d", (int)c.status,
              (int)c.res.reason);
    run_free(ctx, &c);
    /* ... while without it MINRES solves the indefinite system */
    opt.precond = NZ_PRECOND_NONE;
    c = solve_run(ctx, N, &opt, nzt_seed + 62);
    NZT_CHECK(c.status == NZ_SUCCESS, "minres on -I + Laplacian: status %d: %s", (int)c.status,
              nz_context_last_error(ctx));
    run_free(ctx, &c);
    nz_matrix_destroy(&N);
    /* the iteration limit */
    nz_matrix_t *S = shifted_laplacian(ctx, 16, 0.5, NZ_F64);
    opt.max_iterations = 2;
    c = solve_run(ctx, S, &opt, nzt_seed + 63);
    NZT_CHECK(c.status == NZ_MAX_ITERATIONS && c.res.iterations == 2 &&
                  fabs(c.res.relative_residual - c.relres) <= 1e-9 * c.relres,
              "minres max_iterations 2: status %d", (int)c.status);
    run_free(ctx, &c);
    /* f32 at an unattainable tolerance: a caveat, never success */
    nz_matrix_t *S32 = shifted_laplacian(ctx, 16, 0.5, NZ_F32);
    opt.max_iterations = 3000;
    opt.rtol = 1e-12;
    c = solve_run(ctx, S32, &opt, nzt_seed + 63);
    NZT_CHECK((c.status == NZ_STAGNATED || c.status == NZ_MAX_ITERATIONS) &&
                  c.res.relative_residual > 1e-12,
              "minres f32 rtol 1e-12: status %d", (int)c.status);
    printf("  f32 minres   rtol 1e-12: status %d (%s), %lld iterations, relres %.2e\n",
           (int)c.status, nz_status_string(c.status), (long long)c.res.iterations, c.relres);
    run_free(ctx, &c);
    nz_matrix_destroy(&S32);
    nz_matrix_destroy(&S);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    test_convdiff(ctx);
    test_restarts(ctx);
    test_threads(ctx);
    test_real(ctx);
    test_statuses(ctx);
    test_breakdowns(ctx);
    test_arguments(ctx);
    test_minres(ctx);
    test_alloc_failures(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_krylov");
}
