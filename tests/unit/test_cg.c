/* test_cg.c: CPU conjugate gradients: convergence against dense Cholesky, FE order, Jacobi, single precision, breakdown, the iteration limit, the true-residual status and scaled right-hand sides. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------------ */

/* Solve D x = b by dense Cholesky (D SPD, destroyed). Returns 0 if D is not positive definite. */
static int cholesky_solve(double *D, int64_t n, const double *b, double *x) {
    for (int64_t j = 0; j < n; j++) {
        double d = D[j * n + j];
        for (int64_t k = 0; k < j; k++) d -= D[j * n + k] * D[j * n + k];
        if (!(d > 0)) return 0;
        d = sqrt(d);
        D[j * n + j] = d;
        for (int64_t i = j + 1; i < n; i++) {
            double s = D[i * n + j];
            for (int64_t k = 0; k < j; k++) s -= D[i * n + k] * D[j * n + k];
            D[i * n + j] = s / d;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        double s = b[i];
        for (int64_t k = 0; k < i; k++) s -= D[i * n + k] * x[k];
        x[i] = s / D[i * n + i];
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (int64_t k = i + 1; k < n; k++) s -= D[k * n + i] * x[k];
        x[i] = s / D[i * n + i];
    }
    return 1;
}

/* ||b - A x|| / ||b|| in double, from the matrix's own arrays (independent of the library's SpMV). */
static double true_relres(nz_context_t *ctx, const nz_matrix_t *A, const double *b, const double *x) {
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A);
    double rr = 0, bb = 0;
    for (int64_t i = 0; i < info.rows; i++) {
        double s = b[i];
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            s -= (info.value_type == NZ_F32 ? (double)((const float *)v)[k]
                                            : ((const double *)v)[k]) * x[ci[k]];
        rr += s * s;
        bb += b[i] * b[i];
    }
    return sqrt(rr / bb);
}

static double norm_diff(const double *a, const double *b, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

static double norm(const double *a, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * a[i];
    return sqrt(s);
}

/* Solve with CG from x = 0 and compare to Cholesky; checks the true residual against rtol. */
static void check_against_cholesky(nz_context_t *ctx, nz_matrix_t *A, const char *name,
                                   nz_precond_t precond, double rtol) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    const int64_t n = info.rows;
    double *b = (double *)nzt_malloc((size_t)n * sizeof(double));
    double *x = (double *)nzt_malloc((size_t)n * sizeof(double));
    double *xc = (double *)nzt_malloc((size_t)n * sizeof(double));
    nzt_random_vector(b, b, NZ_F64, n, nzt_seed);
    memset(x, 0, (size_t)n * sizeof(double));
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = rtol;
    opt.precond = precond;
    opt.max_iterations = 20 * n + 100;
    nz_cg_result_t res;
    nz_status_t st = nz_cg_solve(ctx, A, b, x, &opt, &res);
    NZT_CHECK(st == NZ_SUCCESS, "%s: status %d (%s) after %lld iterations: %s", name, (int)st,
              nz_status_string(st), (long long)res.iterations, nz_context_last_error(ctx));
    double relres = true_relres(ctx, A, b, x);
    NZT_CHECK(relres <= 1.5 * rtol, "%s: true relative residual %.3e > rtol %.1e", name, relres,
              rtol);
    NZT_CHECK(fabs(res.relative_residual - relres) <= 1e-2 * relres + 1e-14,
              "%s: reported relative residual %.6e, recomputed %.6e", name, res.relative_residual,
              relres);
    int64_t rows, cols;
    double *D = nzt_dense_of(ctx, A, &rows, &cols);
    if (cholesky_solve(D, n, b, xc)) {
        /* ||x - x*|| / ||x*|| <= cond(A) * relres; a generous cond bound of 1e7 for these. */
        double err = norm_diff(x, xc, n) / norm(xc, n);
        NZT_CHECK(err <= 1e7 * rtol + 1e-12, "%s: ||x - x_chol|| / ||x_chol|| = %.3e", name, err);
    } else {
        NZT_CHECK(0, "%s: reference Cholesky failed (matrix not SPD?)", name);
    }
    free(D);
    free(b);
    free(x);
    free(xc);
}

/* A host CSR matrix from a dense row-major array (only non-zeros stored). */
static nz_matrix_t *from_dense(nz_context_t *ctx, const double *D, int64_t n) {
    int64_t *ro = (int64_t *)nzt_malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *ci = (int32_t *)nzt_malloc((size_t)(n * n) * sizeof(int32_t));
    double *v = (double *)nzt_malloc((size_t)(n * n) * sizeof(double));
    int64_t k = 0;
    ro[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < n; j++)
            if (D[i * n + j] != 0 || (i == j)) {
                ci[k] = (int32_t)j;
                v[k++] = D[i * n + j];
            }
        ro[i + 1] = k;
    }
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, n, n, NZ_I64, ro, ci, NZ_F64, v));
    free(ro);
    free(ci);
    free(v);
    return A;
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_laplacians(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 12, 9, NZ_F64));
    check_against_cholesky(ctx, A, "laplace2d 12x9", NZ_PRECOND_NONE, 1e-10);
    check_against_cholesky(ctx, A, "laplace2d 12x9 jacobi", NZ_PRECOND_JACOBI, 1e-10);
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 6, 5, 7, NZ_F64));
    check_against_cholesky(ctx, A, "laplace3d 6x5x7", NZ_PRECOND_NONE, 1e-9);
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_fe3d(ctx, &A, NULL, NULL, 8, NZ_F64));
    check_against_cholesky(ctx, A, "fe3d 8", NZ_PRECOND_JACOBI, 1e-10);
    nz_matrix_destroy(&A);
}

static void test_real_matrices(nz_context_t *ctx) {
    const char *dir = nzt_matrix_dir();
    if (dir == NULL) {
        printf("NZ_MATRIX_DIR not set: real SPD matrices skipped\n");
        return;
    }
    const char *names[] = {"bcsstk01.mtx", "bcsstk05.mtx", "494_bus.mtx", "bcsstk04.mtx"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        FILE *f = fopen(path, "r");
        if (f == NULL) {
            printf("%s not present: skipped\n", names[k]);
            continue;
        }
        fclose(f);
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_mm_read(ctx, &A, path, NZ_F64));
        /* Stiffness matrices are badly scaled: Jacobi, and a tolerance their conditioning allows. */
        check_against_cholesky(ctx, A, names[k], NZ_PRECOND_JACOBI, 1e-9);
        nz_matrix_destroy(&A);
    }
}

/* Discrete L2 error of the FE solution, ||u_h - u|| h^(3/2), for n elements per side. */
static double fe_error(nz_context_t *ctx, int64_t n, int64_t *iterations) {
    nz_matrix_t *A = NULL;
    void *b = NULL, *u = NULL;
    NZT_OK(ctx, nz_gen_fe3d(ctx, &A, &b, &u, n, NZ_F64));
    const int64_t m = (n - 1) * (n - 1) * (n - 1);
    double *x = (double *)nzt_malloc((size_t)m * sizeof(double));
    /* b is a discrete eigenvector of A (sin x sin x sin), so from x = 0 CG would finish in one
     * step; a random start makes it work for its answer. */
    nzt_random_vector(x, x, NZ_F64, m, nzt_seed + 6);
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = 1e-12;
    nz_cg_result_t res;
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &res));
    *iterations = res.iterations;
    double h = 1.0 / (double)n, err = norm_diff(x, (const double *)u, m) * pow(h, 1.5);
    free(x);
    nz_free(ctx, b);
    nz_free(ctx, u);
    nz_matrix_destroy(&A);
    return err;
}

static void test_fe_order(nz_context_t *ctx) {
    int64_t it8, it16, it32;
    double e8 = fe_error(ctx, 8, &it8), e16 = fe_error(ctx, 16, &it16),
           e32 = fe_error(ctx, 32, &it32);
    double o1 = log2(e8 / e16), o2 = log2(e16 / e32);
    printf("FE Q1: n=8 err %.4e (%lld it), n=16 err %.4e (%lld it), n=32 err %.4e (%lld it); "
           "orders %.3f %.3f\n", e8, (long long)it8, e16, (long long)it16, e32, (long long)it32,
           o1, o2);
    /* Q1 elements: second order in the discrete L2 norm (see docs/CG.md). */
    NZT_CHECK(o1 > 1.8 && o1 < 2.3, "observed order 8 -> 16 is %.3f", o1);
    NZT_CHECK(o2 > 1.8 && o2 < 2.3, "observed order 16 -> 32 is %.3f", o2);
    /* CG on the FE matrix needs O(n) iterations (condition number O(n^2)). */
    NZT_CHECK(it32 > it16 && it16 > it8, "iterations %lld %lld %lld do not grow", (long long)it8,
              (long long)it16, (long long)it32);
}

static void test_breakdown(nz_context_t *ctx) {
    /* Indefinite diag(1, -1, 2, -2, ...) with b = ones: p'Ap = 0 on the first step. */
    const int64_t n = 6;
    double D[36], b[6], x[6];
    memset(D, 0, sizeof D);
    for (int64_t i = 0; i < n; i++) {
        D[i * n + i] = (i % 2 ? -1.0 : 1.0) * (double)(i / 2 + 1);
        b[i] = 1;
        x[i] = 0;
    }
    nz_matrix_t *A = from_dense(ctx, D, n);
    nz_cg_result_t res;
    nz_status_t st = nz_cg_solve(ctx, A, b, x, NULL, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN, "indefinite: status %d (%s)", (int)st, nz_status_string(st));
    NZT_CHECK(strstr(nz_context_last_error(ctx), "breakdown") != NULL, "message: %s",
              nz_context_last_error(ctx));
    for (int64_t i = 0; i < n; i++) NZT_CHECK(isfinite(x[i]), "x[%lld] not finite", (long long)i);
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.precond = NZ_PRECOND_JACOBI;
    st = nz_cg_solve(ctx, A, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN, "indefinite + Jacobi: status %d", (int)st);
    nz_matrix_destroy(&A);

    /* Singular diag(1, 0): p'Ap = 0 at the second step. */
    double S[4] = {1, 0, 0, 0}, bs[2] = {1, 1}, xs[2] = {0, 0};
    A = from_dense(ctx, S, 2);
    st = nz_cg_solve(ctx, A, bs, xs, NULL, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN, "singular: status %d (%s)", (int)st, nz_status_string(st));
    NZT_CHECK(res.iterations == 1, "singular: breakdown after %lld iterations, expected 1",
              (long long)res.iterations);
    /* Jacobi on a zero diagonal is refused at setup. */
    st = nz_cg_solve(ctx, A, bs, xs, &opt, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN, "singular + Jacobi: status %d", (int)st);
    nz_matrix_destroy(&A);

    /* A NaN in A. */
    double N[4] = {2, NAN, NAN, 2}, xn[2] = {0, 0};
    A = from_dense(ctx, N, 2);
    st = nz_cg_solve(ctx, A, bs, xn, NULL, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN, "NaN matrix: status %d", (int)st);
    NZT_CHECK(isfinite(xn[0]) && isfinite(xn[1]), "NaN matrix: x became non-finite");
    nz_matrix_destroy(&A);
    /* NaN in b */
    double bn[2] = {NAN, 1};
    A = from_dense(ctx, S, 2);
    st = nz_cg_solve(ctx, A, bn, xs, NULL, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN, "NaN b: status %d", (int)st);
    nz_matrix_destroy(&A);
}

static void test_iteration_limit_and_history(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 30, 30, NZ_F64));
    const int64_t n = 900;
    double *b = (double *)nzt_malloc(n * sizeof(double)), *x = (double *)nzt_malloc(n * sizeof(double));
    nzt_random_vector(b, b, NZ_F64, n, nzt_seed + 1);
    memset(x, 0, n * sizeof(double));
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.max_iterations = 5;
    opt.record_history = 1;
    nz_cg_result_t res;
    nz_status_t st = nz_cg_solve(ctx, A, b, x, &opt, &res);
    NZT_CHECK(st == NZ_MAX_ITERATIONS, "limit: status %d (%s)", (int)st, nz_status_string(st));
    NZT_CHECK(strstr(nz_context_last_error(ctx), "true relative residual") != NULL &&
                  strstr(nz_context_last_error(ctx), "tolerance 1.000e-08") != NULL,
              "limit: the message names neither the true residual nor the tolerance: %s",
              nz_context_last_error(ctx));
    NZT_CHECK(res.iterations == 5, "limit: %lld iterations", (long long)res.iterations);
    double relres = true_relres(ctx, A, b, x);
    NZT_CHECK(res.relative_residual > 1e-3 && fabs(res.relative_residual - relres) < 1e-10,
              "limit: reported residual %.6e, true %.6e", res.relative_residual, relres);
    NZT_CHECK(res.history_length == 6 && res.history != NULL, "limit: history length %lld",
              (long long)res.history_length);
    if (res.history_length == 6) {
        NZT_CHECK(fabs(res.history[0] - norm(b, n)) < 1e-12 * norm(b, n),
                  "history[0] %.6e != ||b|| %.6e", res.history[0], norm(b, n));
        NZT_CHECK(res.history[5] < res.history[0], "residual did not decrease");
        /* x took all five steps, the last one too (it is added after the update of r that
         * stopped the iteration): its true residual is the recursive one of step 5, not 4's */
        NZT_CHECK(fabs(res.residual_norm - res.history[5]) <= 1e-8 * res.history[5] &&
                      fabs(res.history[4] - res.history[5]) > 1e-3 * res.history[5],
                  "limit: true residual %.9e, recursive %.9e (step 4: %.9e)", res.residual_norm,
                  res.history[5], res.history[4]);
    }
    nz_free(ctx, res.history);

    /* Full solve with history: the last entry is under the tolerance. */
    memset(x, 0, n * sizeof(double));
    opt.max_iterations = 0;
    opt.rtol = 1e-9;
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &res));
    NZT_CHECK(res.history_length == res.iterations + 1, "history %lld vs %lld iterations",
              (long long)res.history_length, (long long)res.iterations);
    NZT_CHECK(res.history[res.history_length - 1] <= 1e-9 * norm(b, n), "last history %.3e",
              res.history[res.history_length - 1]);
    NZT_CHECK(res.history[res.history_length - 2] > 1e-9 * norm(b, n),
              "converged before the last iteration");
    /* the converging step reached x: the true residual is the last recursive one */
    NZT_CHECK(fabs(res.residual_norm - res.history[res.history_length - 1]) <=
                      1e-3 * res.history[res.history_length - 1] &&
                  res.history[res.history_length - 2] > 1.01 * res.history[res.history_length - 1],
              "converged: true residual %.9e, recursive %.9e (the step before: %.9e)",
              res.residual_norm, res.history[res.history_length - 1],
              res.history[res.history_length - 2]);
    nz_free(ctx, res.history);
    int64_t full = res.iterations;
    opt.record_history = 0;

    /* Warm start from the solution: converges in 0 or 1 iteration. */
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &res));
    NZT_CHECK(res.iterations <= 1, "warm start took %lld iterations (cold %lld)",
              (long long)res.iterations, (long long)full);

    /* b = 0: x = 0 immediately. */
    memset(b, 0, n * sizeof(double));
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &res));
    NZT_CHECK(res.iterations == 0 && norm(x, n) == 0.0, "b = 0: %lld iterations, ||x|| %g",
              (long long)res.iterations, norm(x, n));

    /* max_iterations larger than needed, atol only */
    nzt_random_vector(b, b, NZ_F64, n, nzt_seed + 2);
    memset(x, 0, n * sizeof(double));
    opt.rtol = 1e-30;
    opt.atol = 1e-6 * norm(b, n);
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &res));
    NZT_CHECK(res.residual_norm <= 1.01e-6 * norm(b, n), "atol: residual %.3e", res.residual_norm);
    free(b);
    free(x);
    nz_matrix_destroy(&A);
}

/* Jacobi must pay off on a badly scaled matrix A = S L S, S = diag(10^u), u uniform in [-2, 2]. */
static void test_jacobi_scaling(nz_context_t *ctx) {
    nz_matrix_t *L = NULL, *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &L, 20, 20, NZ_F64));
    const int64_t n = 400;
    const int64_t *ro;
    const int32_t *ci;
    const void *vv;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &vv, L));
    double *scale = (double *)nzt_malloc(n * sizeof(double)), *u = (double *)nzt_malloc(n * sizeof(double));
    nzt_random_vector(u, u, NZ_F64, n, nzt_seed + 3);
    for (int64_t i = 0; i < n; i++) scale[i] = pow(10.0, 2.0 * u[i]);
    double *v = (double *)nzt_malloc((size_t)ro[n] * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            v[k] = scale[i] * ((const double *)vv)[k] * scale[ci[k]];
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, n, n, NZ_I64, ro, ci, NZ_F64, v));
    double *b = (double *)nzt_malloc(n * sizeof(double)), *x = (double *)nzt_malloc(n * sizeof(double));
    nzt_random_vector(b, b, NZ_F64, n, nzt_seed + 4);
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.max_iterations = 20000;
    nz_cg_result_t plain, jac;
    memset(x, 0, n * sizeof(double));
    nz_status_t st = nz_cg_solve(ctx, A, b, x, &opt, &plain);
    memset(x, 0, n * sizeof(double));
    opt.precond = NZ_PRECOND_JACOBI;
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, x, &opt, &jac));
    NZT_CHECK(true_relres(ctx, A, b, x) <= 1.5e-8, "Jacobi solution residual %.3e", true_relres(ctx, A, b, x));
    printf("badly scaled 400: plain %lld iterations (status %d), Jacobi %lld\n",
           (long long)plain.iterations, (int)st, (long long)jac.iterations);
    NZT_CHECK(2 * jac.iterations < plain.iterations, "Jacobi %lld vs plain %lld iterations",
              (long long)jac.iterations, (long long)plain.iterations);
    free(scale);
    free(u);
    free(v);
    free(b);
    free(x);
    nz_matrix_destroy(&L);
    nz_matrix_destroy(&A);
}

/* Single precision converges to a single-precision tolerance; threads do not change the bits. */
static void test_f32_and_threads(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    void *bv = NULL;
    NZT_OK(ctx, nz_gen_fe3d(ctx, &A, &bv, NULL, 12, NZ_F32));
    const int64_t n = 11 * 11 * 11;
    float *x1 = (float *)nzt_malloc(n * sizeof(float)), *x2 = (float *)nzt_malloc(n * sizeof(float));
    double *start = (double *)nzt_malloc(n * sizeof(double));
    nzt_random_vector(start, x1, NZ_F32, n, nzt_seed + 8);
    memcpy(x2, x1, n * sizeof(float));
    free(start);
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = 1e-5;
    nz_cg_result_t r1, r2;
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    NZT_OK(ctx, nz_cg_solve(ctx, A, bv, x1, &opt, &r1));
    NZT_OK(ctx, nz_context_set_threads(ctx, 3));
    NZT_OK(ctx, nz_cg_solve(ctx, A, bv, x2, &opt, &r2));
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    NZT_CHECK(r1.relative_residual <= 2e-5, "f32 residual %.3e", r1.relative_residual);
    NZT_CHECK(r1.iterations > 5, "f32: only %lld iterations", (long long)r1.iterations);
    NZT_CHECK(r1.iterations == r2.iterations && memcmp(x1, x2, n * sizeof(float)) == 0,
              "1 vs 3 threads differ (%lld vs %lld iterations)", (long long)r1.iterations,
              (long long)r2.iterations);
    free(x1);
    free(x2);
    nz_free(ctx, bv);
    nz_matrix_destroy(&A);
}

/* ||b - A x|| / ||b|| in double for b, x of A's value type, both divided by `unit` first, so that
 * vectors of 1e160 or 1e-170 neither overflow nor underflow the test's own sums. */
static double true_relres_unit(nz_context_t *ctx, const nz_matrix_t *A, const void *b,
                               const void *x, double unit) {
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    const int64_t n = info.rows;
    const int f32 = info.value_type == NZ_F32;
    double *bd = (double *)nzt_malloc((size_t)n * sizeof(double));
    double *xd = (double *)nzt_malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        bd[i] = (f32 ? (double)((const float *)b)[i] : ((const double *)b)[i]) / unit;
        xd[i] = (f32 ? (double)((const float *)x)[i] : ((const double *)x)[i]) / unit;
    }
    double r = true_relres(ctx, A, bd, xd);
    free(bd);
    free(xd);
    return r;
}

/* "Converged" means the TRUE residual meets the tolerance (issue 36): single precision cannot
 * reach rtol 1e-8 on the 100 x 100 Laplacian (cond ~ 6e3, attainable ~ 1e-5 .. 1e-4); the solve
 * stops honestly as NZ_STAGNATED (not at the iteration limit, after a few residual replacements)
 * and reports the true residual. Double at rtol 1e-14 either meets it truly or stagnates. */
static void test_true_residual(nz_context_t *ctx) {
    for (int pass = 0; pass < 2; pass++) {
        const nz_value_type_t vt = pass == 0 ? NZ_F32 : NZ_F64;
        const double rtol = pass == 0 ? 1e-8 : 1e-14;
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 100, 100, vt));
        const int64_t n = 10000;
        const size_t vs = vt == NZ_F32 ? sizeof(float) : sizeof(double);
        double *scratch = (double *)nzt_malloc((size_t)n * sizeof(double));
        void *b = nzt_malloc((size_t)n * vs), *x = nzt_malloc((size_t)n * vs);
        void *ones = nzt_malloc((size_t)n * vs);
        for (int64_t i = 0; i < n; i++) scratch[i] = 1.0;
        nzt_from_double(ones, vt, scratch, n);
        NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, ones, 0.0, b)); /* b = A ones, as nz cg */
        memset(x, 0, (size_t)n * vs);
        nz_cg_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.rtol = rtol;
        nz_cg_result_t res;
        nz_status_t st = nz_cg_solve(ctx, A, b, x, &opt, &res);
        double relres = true_relres_unit(ctx, A, b, x, 1.0);
        printf("%s rtol %.0e: status %d (%s), %lld iterations, reported %.3e, true %.3e\n",
               nzt_vt_name(vt), rtol, (int)st, nz_status_string(st), (long long)res.iterations,
               res.relative_residual, relres);
        NZT_CHECK(st == NZ_STAGNATED || st == NZ_SUCCESS, "%s rtol %.0e: status %d (%s): %s",
                  nzt_vt_name(vt), rtol, (int)st, nz_status_string(st),
                  nz_context_last_error(ctx));
        NZT_CHECK(st != NZ_SUCCESS || relres <= 1.05 * rtol,
                  "%s rtol %.0e: NZ_SUCCESS with true relative residual %.3e", nzt_vt_name(vt),
                  rtol, relres);
        if (pass == 0)
            NZT_CHECK(st == NZ_STAGNATED, "f32 rtol 1e-8: status %d, expected NZ_STAGNATED",
                      (int)st);
        /* the reported residual is the true one of the returned x; the test sums it in double,
         * the library from A x rounded to the value type, so they differ by about
         * eps ||A|| ||x|| / ||b|| (1e-7 in single precision: a few percent of 3e-6) */
        NZT_CHECK(fabs(res.relative_residual - relres) <= (pass == 0 ? 0.1 : 1e-2) * relres,
                  "%s: reported relative residual %.6e, true %.6e", nzt_vt_name(vt),
                  res.relative_residual, relres);
        NZT_CHECK(res.iterations < 5000, "%s: %lld iterations (stagnation not detected)",
                  nzt_vt_name(vt), (long long)res.iterations);
        if (st == NZ_STAGNATED) {
            const char *msg = nz_context_last_error(ctx);
            char tol_text[32];
            snprintf(tol_text, sizeof tol_text, "%.3e", rtol);
            NZT_CHECK(strstr(msg, "true relative residual") != NULL &&
                          strstr(msg, tol_text) != NULL,
                      "stagnation message names neither the true residual nor the tolerance: %s",
                      msg);
            NZT_CHECK(relres < 1e-3, "%s: stagnated at %.3e, far from the attainable accuracy",
                      nzt_vt_name(vt), relres);
        }
        free(scratch);
        free(b);
        free(x);
        free(ones);
        nz_matrix_destroy(&A);
    }
}

/* b of 1e160 (||b||^2 overflows a double) and of 1e-170 (it underflows to 0) are solved as the
 * scaled problems they are: x = scale * x(ones), the relative residual at the tolerance. A
 * non-finite b is still refused. */
static void test_scaled_rhs(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 30, 30, NZ_F64));
    const int64_t n = 900;
    double *b = (double *)nzt_malloc(n * sizeof(double)), *x = (double *)nzt_malloc(n * sizeof(double));
    double *xref = (double *)nzt_malloc(n * sizeof(double));
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = 1e-10;
    nz_cg_result_t res;
    for (int64_t i = 0; i < n; i++) {
        b[i] = 1.0;
        xref[i] = 0.0;
    }
    NZT_OK(ctx, nz_cg_solve(ctx, A, b, xref, &opt, &res));
    const double scales[3] = {1e160, 1e-170, 1e300};
    for (int k = 0; k < 3; k++) {
        const double scale = scales[k];
        for (int64_t i = 0; i < n; i++) {
            b[i] = scale;
            x[i] = k == 2 ? 0.5 * scale : 0.0; /* a non-zero guess too (scaled alike) */
        }
        opt.record_history = 1;
        nz_status_t st = nz_cg_solve(ctx, A, b, x, &opt, &res);
        NZT_CHECK(st == NZ_SUCCESS, "b = %g ones: status %d (%s): %s", scale, (int)st,
                  nz_status_string(st), nz_context_last_error(ctx));
        double relres = true_relres_unit(ctx, A, b, x, scale);
        double diff = 0.0, ref = 0.0;
        for (int64_t i = 0; i < n; i++) {
            diff += (x[i] / scale - xref[i]) * (x[i] / scale - xref[i]);
            ref += xref[i] * xref[i];
        }
        NZT_CHECK(relres <= 1.05e-10 && res.relative_residual <= 1e-10 && res.iterations > 0,
                  "b = %g ones: true relative residual %.3e, reported %.3e, %lld iterations",
                  scale, relres, res.relative_residual, (long long)res.iterations);
        NZT_CHECK(sqrt(diff / ref) <= 1e-8, "b = %g ones: x / %g differs from x(ones) by %.3e",
                  scale, scale, sqrt(diff / ref));
        /* residual_norm and the history are in b's units: ||b|| = 30 scale */
        NZT_CHECK(fabs(res.residual_norm / (30.0 * scale) - res.relative_residual) <=
                      1e-6 * res.relative_residual,
                  "b = %g ones: residual_norm %.6e vs relative %.6e", scale, res.residual_norm,
                  res.relative_residual);
        NZT_CHECK(res.history_length > 1 && isfinite(res.history[0]) && res.history[0] > 0.0,
                  "b = %g ones: history[0] = %g", scale,
                  res.history_length > 0 ? res.history[0] : -1.0);
        if (k < 2 && res.history_length > 0)
            NZT_CHECK(fabs(res.history[0] / (30.0 * scale) - 1.0) <= 1e-12,
                      "b = %g ones: history[0] %.6e, expected ||b|| = %.6e", scale,
                      res.history[0], 30.0 * scale);
        nz_free(ctx, res.history);
        opt.record_history = 0;
    }
    /* single precision near the bottom of its range */
    {
        nz_matrix_t *A32 = NULL;
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &A32, 30, 30, NZ_F32));
        float *b32 = (float *)nzt_malloc(n * sizeof(float)), *x32 = (float *)nzt_malloc(n * sizeof(float));
        for (int64_t i = 0; i < n; i++) {
            b32[i] = 1e-30f;
            x32[i] = 0.0f;
        }
        opt.rtol = 1e-5;
        NZT_OK(ctx, nz_cg_solve(ctx, A32, b32, x32, &opt, &res));
        double relres = true_relres_unit(ctx, A32, b32, x32, 1e-30);
        NZT_CHECK(relres <= 1.05e-5 && fabs(x32[0] / 1e-30 - xref[0]) <= 1e-3 * fabs(xref[0]),
                  "f32 b = 1e-30 ones: true relative residual %.3e, x0 %g (expected %g)", relres,
                  (double)x32[0] / 1e-30, xref[0]);
        free(b32);
        free(x32);
        nz_matrix_destroy(&A32);
        opt.rtol = 1e-10;
    }
    /* non-finite b: refused, whatever the scale of its other entries */
    for (int64_t i = 0; i < n; i++) {
        b[i] = 1e160;
        x[i] = 0.0;
    }
    b[7] = INFINITY;
    nz_status_t st = nz_cg_solve(ctx, A, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && strstr(nz_context_last_error(ctx), "NaN or Inf") != NULL,
              "b with an Inf: status %d (%s)", (int)st, nz_context_last_error(ctx));
    b[7] = NAN;
    st = nz_cg_solve(ctx, A, b, x, &opt, &res);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN, "b with a NaN among 1e160: status %d", (int)st);
    free(b);
    free(x);
    free(xref);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    test_laplacians(ctx);
    test_real_matrices(ctx);
    test_fe_order(ctx);
    test_breakdown(ctx);
    test_iteration_limit_and_history(ctx);
    test_jacobi_scaling(ctx);
    test_f32_and_threads(ctx);
    test_true_residual(ctx);
    test_scaled_rhs(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_cg");
}
