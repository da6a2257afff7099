/* test_preconditioner.c: preconditioner objects (nz_precond_create / apply / info / destroy) of every kind against double references; nz_solve with one. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* ---- references ------------------------------------------------------------------------- */

/* z = r * 2 as a user callback (counts its calls). */
static int user_calls;
static nz_status_t user_double(void *user, const void *r, void *z) {
    const int64_t n = *(const int64_t *)user;
    for (int64_t i = 0; i < n; i++) ((double *)z)[i] = 2.0 * ((const double *)r)[i];
    user_calls++;
    return NZ_SUCCESS;
}

/* Inverse of the m x m row-major block a by Gauss-Jordan with partial pivoting (a test-side
 * algorithm, not the library's LU). */
static void gauss_jordan(double *a, double *inv, int m) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) inv[i * m + j] = i == j;
    for (int k = 0; k < m; k++) {
        int p = k;
        for (int i = k + 1; i < m; i++)
            if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
        for (int j = 0; j < m; j++) {
            double t = a[k * m + j];
            a[k * m + j] = a[p * m + j];
            a[p * m + j] = t;
            t = inv[k * m + j];
            inv[k * m + j] = inv[p * m + j];
            inv[p * m + j] = t;
        }
        const double d = a[k * m + k];
        for (int j = 0; j < m; j++) {
            a[k * m + j] /= d;
            inv[k * m + j] /= d;
        }
        for (int i = 0; i < m; i++) {
            if (i == k) continue;
            const double f = a[i * m + k];
            for (int j = 0; j < m; j++) {
                a[i * m + j] -= f * a[k * m + j];
                inv[i * m + j] -= f * inv[k * m + j];
            }
        }
    }
}

/* y = A x for the dense n x n row-major A. */
static void dense_mv(const double *A, int64_t n, const double *x, double *y) {
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < n; j++) s += A[i * n + j] * x[j];
        y[i] = s;
    }
}

/* The Chebyshev recurrence of docs/SOLVERS.md in double on the dense A. */
static void chebyshev_reference(const double *A, int64_t n, const double *r, int degree,
                                double lmin, double lmax, double *z) {
    double *res = nzt_malloc((size_t)n * sizeof(double)), *d = nzt_malloc((size_t)n * sizeof(double));
    double *w = nzt_malloc((size_t)n * sizeof(double));
    const double theta = 0.5 * (lmax + lmin), delta = 0.5 * (lmax - lmin), sigma = theta / delta;
    double rho = 1.0 / sigma;
    for (int64_t i = 0; i < n; i++) {
        res[i] = r[i] / A[i * n + i];
        d[i] = res[i] / theta;
        z[i] = d[i];
    }
    for (int step = 1; step < degree; step++) {
        const double rho_next = 1.0 / (2.0 * sigma - rho);
        dense_mv(A, n, d, w);
        for (int64_t i = 0; i < n; i++) {
            res[i] -= w[i] / A[i * n + i];
            d[i] = rho_next * rho * d[i] + 2.0 * rho_next / delta * res[i];
            z[i] += d[i];
        }
        rho = rho_next;
    }
    free(res);
    free(d);
    free(w);
}

/* The double reference of M^-1 r for the kinds with a closed form (not Chebyshev, ILU0, IC0). */
static void reference(nz_precond_t kind, const double *A, int64_t n, int block, const double *r,
                      double *z) {
    switch (kind) {
    case NZ_PRECOND_JACOBI:
        for (int64_t i = 0; i < n; i++) z[i] = r[i] / A[i * n + i];
        break;
    case NZ_PRECOND_L1_JACOBI:
        for (int64_t i = 0; i < n; i++) {
            double s = 0.0;
            for (int64_t j = 0; j < n; j++) s += fabs(A[i * n + j]);
            z[i] = r[i] / s;
        }
        break;
    case NZ_PRECOND_USER:
        for (int64_t i = 0; i < n; i++) z[i] = 2.0 * r[i];
        break;
    case NZ_PRECOND_BLOCK_JACOBI: {
        double a[32 * 32], inv[32 * 32];
        for (int64_t r0 = 0; r0 < n; r0 += block) {
            const int m = (int)(n - r0 < block ? n - r0 : block);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++) a[i * m + j] = A[(r0 + i) * n + r0 + j];
            gauss_jordan(a, inv, m);
            for (int i = 0; i < m; i++) {
                double s = 0.0;
                for (int j = 0; j < m; j++) s += inv[i * m + j] * r[r0 + j];
                z[r0 + i] = s;
            }
        }
        break;
    }
    default:
        for (int64_t i = 0; i < n; i++) z[i] = r[i];
        break;
    }
}

static double max_rel_diff(nz_value_type_t vt, const void *z, const double *ref, int64_t n) {
    double diff = 0.0, scale = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double v = vt == NZ_F32 ? (double)((const float *)z)[i] : ((const double *)z)[i];
        if (fabs(v - ref[i]) > diff || v != v) diff = v != v ? INFINITY : fabs(v - ref[i]);
        if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
    }
    return diff / (scale > 0.0 ? scale : 1.0);
}

/* ---- every kind against its reference ------------------------------------------------------ */

static void check_kind(nz_context_t *ctx, const char *name, nz_matrix_t *A, nz_precond_t kind,
                       const nz_precond_options_t *opt) {
    nz_matrix_info_t mi;
    NZT_OK(ctx, nz_matrix_info(ctx, &mi, A));
    const int64_t n = mi.rows;
    const nz_value_type_t vt = mi.value_type;
    nz_matrix_t *Acsr = NULL;
    NZT_OK(ctx, nz_matrix_convert(ctx, &Acsr, A, NZ_FORMAT_CSR, NULL));
    int64_t rows, cols;
    double *D = nzt_dense_of(ctx, Acsr, &rows, &cols);
    double *rd = nzt_malloc((size_t)n * sizeof(double)), *ref = nzt_malloc((size_t)n * sizeof(double));
    void *r = nzt_malloc((size_t)n * 8), *z = nzt_malloc((size_t)n * 8);
    nzt_random_vector(rd, r, vt, n, 7);
    nzt_from_double(r, vt, rd, n); /* the reference sees r as the value type holds it */
    for (int64_t i = 0; i < n; i++) rd[i] = vt == NZ_F32 ? (double)((float *)r)[i] : ((double *)r)[i];
    nz_preconditioner_t *M = NULL;
    nz_status_t st = nz_precond_create(ctx, &M, A, kind, opt);
    NZT_CHECK(st == NZ_SUCCESS, "%s: create: %s", name, nz_context_last_error(ctx));
    if (st != NZ_SUCCESS) goto done;
    nz_precond_info_t info;
    NZT_OK(ctx, nz_precond_info(M, &info));
    NZT_CHECK(info.kind == kind && info.rows == n && info.value_type == vt &&
                  info.location == NZ_HOST && info.setup_seconds >= 0.0,
              "%s: info", name);
    nzt_poison(z, vt, n);
    nz_alloc_stats_t s0, s1;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
    NZT_OK(ctx, nz_precond_apply(M, r, z));
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
    NZT_CHECK(s1.total_allocs == s0.total_allocs, "%s: the apply allocated", name);
    double tol = vt == NZ_F32 ? 2e-5 : 1e-12;
    if (kind == NZ_PRECOND_CHEBYSHEV) {
        NZT_CHECK(info.degree == (opt != NULL && opt->degree ? opt->degree : 3), "%s: degree %d",
                  name, info.degree);
        NZT_CHECK(info.lambda_min > 0.0 && info.lambda_min < info.lambda_max, "%s: bounds %g %g",
                  name, info.lambda_min, info.lambda_max);
        if (opt == NULL || opt->lambda_max == 0.0) {
            NZT_CHECK(fabs(info.lambda_max - 1.1 * info.lambda_estimate) <= 1e-12 * info.lambda_max,
                      "%s: lambda_max %g vs 1.1 x estimate %g", name, info.lambda_max,
                      info.lambda_estimate);
            if (opt == NULL || opt->lambda_min == 0.0)
                NZT_CHECK(fabs(info.lambda_min - info.lambda_max / 30.0) <= 1e-12 * info.lambda_max,
                          "%s: lambda_min %g", name, info.lambda_min);
        }
        chebyshev_reference(D, n, rd, info.degree, info.lambda_min, info.lambda_max, ref);
        if (vt == NZ_F32) tol = 1e-4;
    } else if (kind == NZ_PRECOND_ILU0 || kind == NZ_PRECOND_IC0) {
        /* on a tridiagonal matrix ILU(0) / IC(0) have no fill to drop: M = A, so A z = r */
        NZT_CHECK(info.attempts == 1 && info.shift == 0.0, "%s: shift %g attempts %d", name,
                  info.shift, info.attempts);
        double *zd = nzt_malloc((size_t)n * sizeof(double));
        for (int64_t i = 0; i < n; i++) zd[i] = vt == NZ_F32 ? (double)((float *)z)[i] : ((double *)z)[i];
        dense_mv(D, n, zd, ref); /* A z, compared with r below */
        free(zd);
        double diff = 0.0, scale = 0.0;
        for (int64_t i = 0; i < n; i++) {
            diff = fmax(diff, fabs(ref[i] - rd[i]));
            scale = fmax(scale, fabs(rd[i]));
        }
        NZT_CHECK(diff <= (vt == NZ_F32 ? 1e-4 : 1e-11) * scale, "%s: ||A z - r|| %g", name, diff);
        goto done;
    } else {
        if (kind == NZ_PRECOND_BLOCK_JACOBI)
            NZT_CHECK(info.block_size == (opt != NULL && opt->block_size ? opt->block_size : 4),
                      "%s: block size %d", name, info.block_size);
        reference(kind, D, n, info.block_size, rd, ref);
    }
    const double diff = max_rel_diff(vt, z, ref, n);
    NZT_CHECK(diff <= tol, "%s: apply differs from the double reference by %g (tolerance %g)",
              name, diff, tol);
done:
    NZT_OK(ctx, nz_precond_destroy(&M));
    NZT_CHECK(M == NULL, "%s: destroy left the handle", name);
    free(D);
    free(rd);
    free(ref);
    free(r);
    free(z);
    nz_matrix_destroy(&Acsr);
}

static void test_kinds(nz_context_t *ctx) {
    for (int v = 0; v < 2; v++) {
        const nz_value_type_t vt = v ? NZ_F32 : NZ_F64;
        nz_matrix_t *cd = NULL, *lap = NULL, *tri = NULL, *cd_sell = NULL;
        NZT_OK(ctx, nz_gen_convdiff2d(ctx, &cd, 12, 12, 1.0, vt));
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &lap, 12, 11, vt));
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &tri, 40, 1, vt));
        NZT_OK(ctx, nz_matrix_convert(ctx, &cd_sell, cd, NZ_FORMAT_SELL, NULL));
        char name[96];
        const nz_precond_t simple[] = {NZ_PRECOND_NONE, NZ_PRECOND_JACOBI, NZ_PRECOND_L1_JACOBI};
        for (int k = 0; k < 3; k++) {
            snprintf(name, sizeof name, "%s convdiff %s", nz_precond_name(simple[k]), nzt_vt_name(vt));
            check_kind(ctx, name, cd, simple[k], NULL);
            snprintf(name, sizeof name, "%s convdiff sell %s", nz_precond_name(simple[k]),
                     nzt_vt_name(vt));
            check_kind(ctx, name, cd_sell, simple[k], NULL);
        }
        if (vt == NZ_F64) {
            int64_t n = 144;
            nz_precond_options_t uo;
            memset(&uo, 0, sizeof uo);
            uo.apply = user_double;
            uo.user = &n;
            user_calls = 0;
            check_kind(ctx, "user f64", cd, NZ_PRECOND_USER, &uo);
            NZT_CHECK(user_calls == 1, "user: %d calls", user_calls);
        }
        snprintf(name, sizeof name, "ilu0 tridiagonal %s", nzt_vt_name(vt));
        check_kind(ctx, name, tri, NZ_PRECOND_ILU0, NULL);
        snprintf(name, sizeof name, "ic0 tridiagonal %s", nzt_vt_name(vt));
        check_kind(ctx, name, tri, NZ_PRECOND_IC0, NULL);
        const int blocks[] = {0, 1, 3, 4, 7, 32};
        for (int k = 0; k < 6; k++) {
            nz_precond_options_t bo;
            memset(&bo, 0, sizeof bo);
            bo.block_size = blocks[k];
            snprintf(name, sizeof name, "block-jacobi b=%d convdiff %s", blocks[k], nzt_vt_name(vt));
            check_kind(ctx, name, cd, NZ_PRECOND_BLOCK_JACOBI, k == 0 ? NULL : &bo);
            snprintf(name, sizeof name, "block-jacobi b=%d convdiff sell %s", blocks[k],
                     nzt_vt_name(vt));
            check_kind(ctx, name, cd_sell, NZ_PRECOND_BLOCK_JACOBI, &bo);
        }
        const int degrees[] = {0, 1, 2, 5};
        for (int k = 0; k < 4; k++) {
            nz_precond_options_t co;
            memset(&co, 0, sizeof co);
            co.degree = degrees[k];
            snprintf(name, sizeof name, "chebyshev k=%d laplace %s", degrees[k], nzt_vt_name(vt));
            check_kind(ctx, name, lap, NZ_PRECOND_CHEBYSHEV, &co);
        }
        nz_precond_options_t co;
        memset(&co, 0, sizeof co);
        co.degree = 4;
        co.lambda_min = 0.05;
        co.lambda_max = 2.0;
        snprintf(name, sizeof name, "chebyshev given bounds %s", nzt_vt_name(vt));
        check_kind(ctx, name, lap, NZ_PRECOND_CHEBYSHEV, &co);
        nz_matrix_destroy(&cd);
        nz_matrix_destroy(&lap);
        nz_matrix_destroy(&tri);
        nz_matrix_destroy(&cd_sell);
    }
}

/* The estimate: lambda_max(D^-1 A) of the 2-D Laplacian on an n x n grid is
 * 1 + cos(pi / (n + 1)); the power iteration approaches it from below, within 10% here. */
static void test_estimate(nz_context_t *ctx) {
    nz_matrix_t *lap = NULL;
    nz_preconditioner_t *M = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &lap, 20, 20, NZ_F64));
    NZT_OK(ctx, nz_precond_create(ctx, &M, lap, NZ_PRECOND_CHEBYSHEV, NULL));
    nz_precond_info_t info;
    NZT_OK(ctx, nz_precond_info(M, &info));
    const double pi = 3.14159265358979323846;
    const double exact = 1.0 + cos(pi / 21.0);
    NZT_CHECK(info.lambda_estimate <= exact * (1 + 1e-12) && info.lambda_estimate >= 0.9 * exact,
              "chebyshev: estimate %g, exact lambda_max %g", info.lambda_estimate, exact);
    nz_precond_destroy(&M);
    nz_matrix_destroy(&lap);
}

/* ---- breakdowns and arguments ------------------------------------------------------------ */

static void test_breakdowns(nz_context_t *ctx) {
    /* 8 x 8: identity, except rows 5 and 6 (1-based) equal inside their block of 4 */
    const int64_t ro[9] = {0, 1, 2, 3, 4, 6, 8, 9, 10};
    const int32_t ci[10] = {0, 1, 2, 3, 4, 5, 4, 5, 6, 7};
    const double va[10] = {1, 1, 1, 1, 2, 3, 2, 3, 1, 1};
    nz_matrix_t *S = NULL;
    nz_preconditioner_t *M = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &S, 8, 8, NZ_I64, ro, ci, NZ_F64, va));
    nz_status_t st = nz_precond_create(ctx, &M, S, NZ_PRECOND_BLOCK_JACOBI, NULL);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && M == NULL, "singular block: status %d", (int)st);
    NZT_CHECK(strstr(nz_context_last_error(ctx), "rows 5 .. 8") != NULL,
              "singular block not named: %s", nz_context_last_error(ctx));
    /* block size 1 on the same matrix is the (non-singular) Jacobi */
    nz_precond_options_t o;
    memset(&o, 0, sizeof o);
    o.block_size = 1;
    NZT_OK(ctx, nz_precond_create(ctx, &M, S, NZ_PRECOND_BLOCK_JACOBI, &o));
    nz_precond_destroy(&M);
    /* block size 2: rows 5..6 singular */
    o.block_size = 2;
    st = nz_precond_create(ctx, &M, S, NZ_PRECOND_BLOCK_JACOBI, &o);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && strstr(nz_context_last_error(ctx), "rows 5 .. 6") != NULL,
              "block 2: %d %s", (int)st, nz_context_last_error(ctx));
    nz_matrix_destroy(&S);
    /* a zero diagonal: Jacobi and Chebyshev name it */
    const int64_t ro2[4] = {0, 2, 4, 6};
    const int32_t ci2[6] = {0, 1, 0, 2, 1, 2};
    const double va2[6] = {2, 1, 1, 1, 1, 2};
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &S, 3, 3, NZ_I64, ro2, ci2, NZ_F64, va2));
    st = nz_precond_create(ctx, &M, S, NZ_PRECOND_JACOBI, NULL);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && strstr(nz_context_last_error(ctx), "(2, 2)") != NULL,
              "jacobi zero diagonal: %d %s", (int)st, nz_context_last_error(ctx));
    st = nz_precond_create(ctx, &M, S, NZ_PRECOND_CHEBYSHEV, NULL);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && strstr(nz_context_last_error(ctx), "(2, 2)") != NULL,
              "chebyshev zero diagonal: %d %s", (int)st, nz_context_last_error(ctx));
    NZT_CHECK(M == NULL, "handle set on failure");
    nz_matrix_destroy(&S);
}

static void test_arguments(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *R = NULL;
    nz_preconditioner_t *M = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 4, 4, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &R, 5, 7, 2.0, 1, NZ_F64));
    nz_precond_options_t o;
    memset(&o, 0, sizeof o);
    NZT_CHECK(nz_precond_create(ctx, NULL, A, NZ_PRECOND_JACOBI, NULL) == NZ_ERR_NULL_ARGUMENT,
              "NULL M");
    NZT_CHECK(nz_precond_create(ctx, &M, NULL, NZ_PRECOND_JACOBI, NULL) < 0, "NULL A");
    NZT_CHECK(nz_precond_create(ctx, &M, R, NZ_PRECOND_JACOBI, NULL) == NZ_ERR_DIMENSION_MISMATCH,
              "not square");
    NZT_CHECK(nz_precond_create(ctx, &M, A, (nz_precond_t)9, NULL) == NZ_ERR_INVALID_ARGUMENT,
              "kind 9");
    NZT_CHECK(nz_precond_create(ctx, &M, A, (nz_precond_t)-1, NULL) == NZ_ERR_INVALID_ARGUMENT,
              "kind -1");
    o.block_size = 33;
    NZT_CHECK(nz_precond_create(ctx, &M, A, NZ_PRECOND_BLOCK_JACOBI, &o) == NZ_ERR_INVALID_ARGUMENT,
              "block 33");
    o.block_size = 0;
    o.degree = -1;
    NZT_CHECK(nz_precond_create(ctx, &M, A, NZ_PRECOND_CHEBYSHEV, &o) == NZ_ERR_INVALID_ARGUMENT,
              "degree -1");
    o.degree = 0;
    o.lambda_min = 2.0;
    o.lambda_max = 1.0;
    NZT_CHECK(nz_precond_create(ctx, &M, A, NZ_PRECOND_CHEBYSHEV, &o) == NZ_ERR_INVALID_ARGUMENT,
              "lambda_min > lambda_max");
    o.lambda_min = 100.0; /* above the estimate */
    o.lambda_max = 0.0;
    NZT_CHECK(nz_precond_create(ctx, &M, A, NZ_PRECOND_CHEBYSHEV, &o) == NZ_ERR_INVALID_ARGUMENT,
              "lambda_min above the estimate");
    o.lambda_min = 0.0;
    o.reserved[2] = 1;
    NZT_CHECK(nz_precond_create(ctx, &M, A, NZ_PRECOND_JACOBI, &o) == NZ_ERR_INVALID_ARGUMENT,
              "reserved");
    o.reserved[2] = 0;
    NZT_CHECK(nz_precond_create(ctx, &M, A, NZ_PRECOND_USER, &o) == NZ_ERR_NULL_ARGUMENT,
              "user without apply");
    NZT_CHECK(M == NULL, "handle set by a refused create");
    NZT_OK(ctx, nz_precond_create(ctx, &M, A, NZ_PRECOND_BLOCK_JACOBI, NULL));
    double r[16], z[16];
    for (int i = 0; i < 16; i++) r[i] = i;
    NZT_CHECK(nz_precond_apply(M, r, r + 1) == NZ_ERR_INVALID_ARGUMENT, "overlap");
    NZT_CHECK(nz_precond_apply(M, NULL, z) == NZ_ERR_NULL_ARGUMENT, "NULL r");
    NZT_CHECK(nz_precond_apply(NULL, r, z) == NZ_ERR_NULL_ARGUMENT, "NULL M apply");
    NZT_CHECK(nz_precond_info(M, NULL) == NZ_ERR_NULL_ARGUMENT, "NULL info");
    NZT_CHECK(nz_precond_apply((const nz_preconditioner_t *)A, r, z) == NZ_ERR_INVALID_HANDLE,
              "a matrix is not a preconditioner");
    NZT_OK(ctx, nz_precond_destroy(&M));
    NZT_OK(ctx, nz_precond_destroy(&M));
    NZT_OK(ctx, nz_precond_destroy(NULL));
    NZT_CHECK(strcmp(nz_precond_name(NZ_PRECOND_CHEBYSHEV), "chebyshev") == 0 &&
                  strcmp(nz_precond_name(NZ_PRECOND_BLOCK_JACOBI), "block-jacobi") == 0 &&
                  strcmp(nz_precond_name((nz_precond_t)99), "unknown") == 0,
              "names");
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&R);
}

/* ---- nz_solve with objects ------------------------------------------------------------------ */

static int64_t solve_iterations(nz_context_t *ctx, const nz_matrix_t *A, const double *b,
                                nz_solve_options_t *o, double *x, nz_status_t *status) {
    nz_solve_result_t res;
    memset(x, 0, (size_t)400 * sizeof(double));
    *status = nz_solve(ctx, A, b, x, o, &res);
    return res.iterations;
}

static void test_solve(nz_context_t *ctx) {
    nz_matrix_t *lap = NULL, *cd = NULL, *small = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &lap, 20, 20, NZ_F64));
    NZT_OK(ctx, nz_gen_convdiff2d(ctx, &cd, 20, 20, 2.0, NZ_F64));
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &small, 5, 5, NZ_F64));
    double b[400], x[400], x2[400];
    for (int i = 0; i < 400; i++) b[i] = sin(0.37 * i) + 0.1;
    nz_status_t st, st2;
    const nz_method_t methods[] = {NZ_METHOD_MINRES, NZ_METHOD_GMRES};
    for (int m = 0; m < 2; m++) {
        nz_solve_options_t o;
        memset(&o, 0, sizeof o);
        o.method = methods[m];
        o.rtol = 1e-10;
        o.restart = 50;
        const int64_t plain = solve_iterations(ctx, lap, b, &o, x, &st);
        NZT_CHECK(st == NZ_SUCCESS, "%s none: %s", nz_method_name(o.method), nz_context_last_error(ctx));
        o.precond = NZ_PRECOND_CHEBYSHEV;
        const int64_t cheb = solve_iterations(ctx, lap, b, &o, x, &st);
        NZT_CHECK(st == NZ_SUCCESS, "%s chebyshev: %s", nz_method_name(o.method),
                  nz_context_last_error(ctx));
        NZT_CHECK(2 * cheb < plain, "%s: chebyshev %lld iterations, none %lld",
                  nz_method_name(o.method), (long long)cheb, (long long)plain);
        /* the same through an object: bitwise the same x */
        nz_preconditioner_t *M = NULL;
        NZT_OK(ctx, nz_precond_create(ctx, &M, lap, NZ_PRECOND_CHEBYSHEV, NULL));
        o.precond = NZ_PRECOND_NONE; /* ignored with an object */
        o.preconditioner = M;
        const int64_t obj = solve_iterations(ctx, lap, b, &o, x2, &st2);
        NZT_CHECK(st2 == NZ_SUCCESS && obj == cheb && memcmp(x, x2, sizeof x) == 0,
                  "%s: object %lld vs kind %lld iterations", nz_method_name(o.method),
                  (long long)obj, (long long)cheb);
        nz_precond_destroy(&M);
    }
    /* block-Jacobi and IC(0) / ILU(0) objects give the kind's solve bitwise */
    const nz_precond_t kinds[] = {NZ_PRECOND_BLOCK_JACOBI, NZ_PRECOND_ILU0, NZ_PRECOND_JACOBI};
    for (int k = 0; k < 3; k++) {
        nz_solve_options_t o;
        memset(&o, 0, sizeof o);
        o.method = NZ_METHOD_BICGSTAB;
        o.precond = kinds[k];
        const int64_t by_kind = solve_iterations(ctx, cd, b, &o, x, &st);
        NZT_CHECK(st == NZ_SUCCESS, "%s: %s", nz_precond_name(kinds[k]), nz_context_last_error(ctx));
        nz_preconditioner_t *M = NULL;
        NZT_OK(ctx, nz_precond_create(ctx, &M, cd, kinds[k], NULL));
        o.precond = NZ_PRECOND_NONE;
        o.preconditioner = M;
        nz_solve_result_t res;
        memset(x2, 0, sizeof x2);
        st2 = nz_solve(ctx, cd, b, x2, &o, &res);
        NZT_CHECK(st2 == NZ_SUCCESS && res.iterations == by_kind && memcmp(x, x2, sizeof x) == 0,
                  "%s object: %lld vs %lld iterations", nz_precond_name(kinds[k]),
                  (long long)res.iterations, (long long)by_kind);
        if (kinds[k] == NZ_PRECOND_ILU0)
            NZT_CHECK(res.precond_attempts == 1, "ilu0 object: attempts %d", res.precond_attempts);
        /* a matrix of another dimension is refused */
        o.method = NZ_METHOD_GMRES;
        NZT_CHECK(nz_solve(ctx, small, b, x2, &o, NULL) == NZ_ERR_DIMENSION_MISMATCH,
                  "object of another dimension");
        nz_precond_destroy(&M);
    }
    /* CG takes the new kinds (the table's CG) on the SPD Laplacian */
    nz_solve_options_t o;
    memset(&o, 0, sizeof o);
    const nz_precond_t cg_kinds[] = {NZ_PRECOND_BLOCK_JACOBI, NZ_PRECOND_CHEBYSHEV};
    for (int k = 0; k < 2; k++) {
        o.precond = cg_kinds[k];
        nz_solve_result_t cres;
        memset(x, 0, sizeof x);
        nz_status_t cst = nz_solve(ctx, lap, b, x, &o, &cres);
        NZT_CHECK(cst == NZ_SUCCESS && cres.reason == NZ_SOLVE_CONVERGED &&
                      cres.relative_residual <= 1e-8,
                  "cg %s: status %d relres %g: %s", nz_precond_name(cg_kinds[k]), (int)cst,
                  cres.relative_residual, nz_context_last_error(ctx));
        nz_free(ctx, cres.history);
    }
    o.precond = NZ_PRECOND_BLOCK_JACOBI;
    o.method = NZ_METHOD_GMRES;
    o.block_size = 40;
    NZT_CHECK(nz_solve(ctx, lap, b, x, &o, NULL) == NZ_ERR_INVALID_ARGUMENT, "block_size 40");
    o.block_size = 8;
    NZT_CHECK(nz_solve(ctx, lap, b, x, &o, NULL) == NZ_SUCCESS, "gmres block 8: %s",
              nz_context_last_error(ctx));
    nz_matrix_destroy(&lap);
    nz_matrix_destroy(&cd);
    nz_matrix_destroy(&small);
}

/* ---- allocation failures ------------------------------------------------------------------- */

static void test_alloc_failures(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *Asell = NULL;
    NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, 7, 6, 1.0, NZ_F64));
    NZT_OK(ctx, nz_matrix_convert(ctx, &Asell, A, NZ_FORMAT_SELL, NULL));
    int64_t n = 42;
    for (int kind = NZ_PRECOND_NONE; kind <= NZ_PRECOND_CHEBYSHEV; kind++) {
        for (int sell = 0; sell < 2; sell++) {
            nz_precond_options_t o;
            memset(&o, 0, sizeof o);
            o.apply = user_double;
            o.user = &n;
            int done = 0;
            for (int64_t k = 1; k < 10000 && !done; k++) {
                nz_preconditioner_t *M = NULL;
                nz_alloc_stats_t s0, s1;
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
                nz_status_t st = nz_precond_create(ctx, &M, sell ? Asell : A, (nz_precond_t)kind, &o);
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
                if (st == NZ_SUCCESS) {
                    double r[42], z[42];
                    for (int i = 0; i < 42; i++) r[i] = 1.0 + i;
                    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 1));
                    NZT_CHECK(nz_precond_apply(M, r, z) == NZ_SUCCESS,
                              "%s: the apply needs an allocation", nz_precond_name(kind));
                    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
                    nz_precond_destroy(&M);
                    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
                    NZT_CHECK(s1.live_blocks == s0.live_blocks, "%s: leak after success",
                              nz_precond_name(kind));
                    done = s1.failed_allocs == s0.failed_allocs;
                    continue;
                }
                NZT_CHECK(st == NZ_ERR_OUT_OF_MEMORY && M == NULL &&
                              s1.live_blocks == s0.live_blocks,
                          "%s%s k=%lld: status %d, %lld blocks leak: %s", nz_precond_name(kind),
                          sell ? " sell" : "", (long long)k, (int)st,
                          (long long)(s1.live_blocks - s0.live_blocks), nz_context_last_error(ctx));
                if (st != NZ_ERR_OUT_OF_MEMORY) break;
            }
            NZT_CHECK(done, "%s: never succeeded", nz_precond_name(kind));
        }
    }
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&Asell);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    test_kinds(ctx);
    test_estimate(ctx);
    test_breakdowns(ctx);
    test_arguments(ctx);
    test_solve(ctx);
    test_alloc_failures(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_preconditioner");
}
