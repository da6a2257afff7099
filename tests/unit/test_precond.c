/* test_precond.c: nz_solve's l1-Jacobi, ILU(0) and IC(0) preconditioners: the factors against a dense reference, convergence against Jacobi and none, the diagonal shift, reproducibility, argument and allocation failures. */
#include "testutil.h"
#include "precond.h"

#include <math.h>
#include <string.h>

/* ---- the dense reference ------------------------------------------------------------------ */

/* The pattern of the factors (A's plus the diagonal) and A's values, dense n x n. */
static void dense_of(nz_context_t *ctx, const nz_matrix_t *A, double *a, int *mask) {
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A));
    const int64_t n = info.rows;
    memset(a, 0, (size_t)(n * n) * sizeof(double));
    memset(mask, 0, (size_t)(n * n) * sizeof(int));
    for (int64_t i = 0; i < n; i++) {
        mask[i * n + i] = 1;
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) {
            a[i * n + ci[k]] = info.value_type == NZ_F32 ? ((const float *)v)[k]
                                                          : ((const double *)v)[k];
            mask[i * n + ci[k]] = 1;
        }
    }
}

/* ILU(0) as Gaussian elimination (KIJ) that keeps only the entries of the pattern: the same
 * factors as the IKJ row form (Saad, Prop. 10.3). a is overwritten by L\U. */
static void dense_ilu0(double *a, const int *mask, int64_t n) {
    for (int64_t k = 0; k < n; k++)
        for (int64_t i = k + 1; i < n; i++) {
            if (!mask[i * n + k]) continue;
            a[i * n + k] /= a[k * n + k];
            for (int64_t j = k + 1; j < n; j++)
                if (mask[i * n + j] && mask[k * n + j]) a[i * n + j] -= a[i * n + k] * a[k * n + j];
        }
}

/* IC(0) as the right-looking Cholesky that keeps only the lower pattern; a's lower triangle is
 * overwritten by L. */
static void dense_ic0(double *a, const int *mask, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        a[k * n + k] = sqrt(a[k * n + k]);
        for (int64_t i = k + 1; i < n; i++)
            if (mask[i * n + k]) a[i * n + k] /= a[k * n + k];
        for (int64_t j = k + 1; j < n; j++)
            for (int64_t i = j; i < n; i++)
                if (mask[i * n + j] && mask[i * n + k] && mask[j * n + k])
                    a[i * n + j] -= a[i * n + k] * a[j * n + k];
    }
}

/* nzi_factor_compute's F against the dense reference on A (+ its shift on the diagonal). */
static void check_factor(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                         nz_precond_t kind, double expect_shift_positive) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    const int64_t n = info.rows;
    double *a = (double *)nzt_malloc((size_t)(n * n) * sizeof(double));
    int *mask = (int *)nzt_malloc((size_t)(n * n) * sizeof(int));
    nz_matrix_t *F = NULL;
    double shift;
    int attempts;
    NZT_OK(ctx, nzi_factor_compute(ctx, A, kind, &F, &shift, &attempts));
    NZT_CHECK((shift > 0.0) == (expect_shift_positive > 0.0) && attempts >= 1 &&
                  (shift > 0.0) == (attempts > 1),
              "%s: shift %g after %d attempts", what, shift, attempts);
    dense_of(ctx, A, a, mask);
    for (int64_t i = 0; i < n; i++) a[i * n + i] += shift;
    if (kind == NZ_PRECOND_IC0)
        dense_ic0(a, mask, n);
    else
        dense_ilu0(a, mask, n);
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, F));
    const double tol = info.value_type == NZ_F32 ? 1e-5 : 1e-12;
    int64_t bad = 0, entries = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) {
            const int64_t j = ci[k];
            if (kind == NZ_PRECOND_IC0 && j > i) continue;
            const double got = info.value_type == NZ_F32 ? ((const float *)v)[k]
                                                          : ((const double *)v)[k];
            const double want = a[i * n + j];
            entries++;
            if (!isfinite(got) || fabs(got - want) > tol * (1.0 + fabs(want))) {
                if (bad++ < 3) printf("  %s: F(%lld, %lld) = %.17g, reference %.17g\n", what,
                                      (long long)i + 1, (long long)j + 1, got, want);
            }
        }
    NZT_CHECK(bad == 0 && entries >= n, "%s: %lld of %lld factor entries differ", what,
              (long long)bad, (long long)entries);
    printf("  %-28s n %4lld: factor matches the reference (shift %.3e, %d attempts)\n", what,
           (long long)n, shift, attempts);
    nz_matrix_destroy(&F);
    free(a);
    free(mask);
}

static nz_matrix_t *csr_from_dense(nz_context_t *ctx, int64_t n, const double *d,
                                   nz_value_type_t vt) {
    int64_t *ro = (int64_t *)nzt_malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *ci = (int32_t *)nzt_malloc((size_t)(n * n) * sizeof(int32_t));
    double *vals = (double *)nzt_malloc((size_t)(n * n) * sizeof(double));
    void *tv = nzt_malloc((size_t)(n * n) * 8);
    int64_t at = 0;
    ro[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < n; j++)
            if (d[i * n + j] != 0.0) {
                ci[at] = (int32_t)j;
                vals[at++] = d[i * n + j];
            }
        ro[i + 1] = at;
    }
    nzt_from_double(tv, vt, vals, at);
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, n, n, NZ_I64, ro, ci, vt, tv));
    free(ro);
    free(ci);
    free(vals);
    free(tv);
    return A;
}

static void test_factors(nz_context_t *ctx) {
    /* by hand: IC(0) of the tridiagonal [4 -1; -1 4 -1; -1 4] is its Cholesky factor */
    const double tri[9] = {4, -1, 0, -1, 4, -1, 0, -1, 4};
    nz_matrix_t *T = csr_from_dense(ctx, 3, tri, NZ_F64);
    {
        nz_matrix_t *F = NULL;
        double shift;
        int attempts;
        NZT_OK(ctx, nzi_factor_compute(ctx, T, NZ_PRECOND_IC0, &F, &shift, &attempts));
        const int64_t *ro;
        const int32_t *ci;
        const void *v;
        NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, F));
        const double *f = (const double *)v;
        const double l22 = sqrt(3.75), l32 = -1.0 / sqrt(3.75), l33 = sqrt(4.0 - 1.0 / 3.75);
        /* rows: (0,0) (0,1) | (1,0) (1,1) (1,2) | (2,1) (2,2) */
        NZT_CHECK(fabs(f[0] - 2.0) < 1e-15 && fabs(f[2] + 0.5) < 1e-15 &&
                      fabs(f[3] - l22) < 1e-15 && fabs(f[5] - l32) < 1e-15 &&
                      fabs(f[6] - l33) < 1e-15 && shift == 0.0 && attempts == 1,
                  "IC(0) of the tridiagonal by hand: %g %g %g %g %g", f[0], f[2], f[3], f[5],
                  f[6]);
        nz_matrix_destroy(&F);
    }
    nz_matrix_destroy(&T);
    /* a non-symmetric 5 x 5 whose elimination would fill (1-based (3,2), (4,3), (5,2)...) */
    const double a5[25] = {4,  -1, 0,  -1, 0,  /* */
                           -2, 5,  -1, 0,  -1, /* */
                           -1, 0,  6,  -2, 0,  /* */
                           0,  -1, 0,  5,  -1, /* */
                           -1, 0,  -1, 0,  4};
    nz_matrix_t *A5 = csr_from_dense(ctx, 5, a5, NZ_F64);
    check_factor(ctx, "ILU(0) 5x5 non-symmetric", A5, NZ_PRECOND_ILU0, 0);
    nz_matrix_destroy(&A5);
    for (int vi = 0; vi < 2; vi++) {
        const nz_value_type_t vt = vi ? NZ_F32 : NZ_F64;
        nz_matrix_t *C = NULL, *L = NULL;
        NZT_OK(ctx, nz_gen_convdiff2d(ctx, &C, 6, 5, 2.0, vt));
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &L, 6, 5, vt));
        check_factor(ctx, vi ? "ILU(0) convdiff2d f32" : "ILU(0) convdiff2d f64", C,
                     NZ_PRECOND_ILU0, 0);
        check_factor(ctx, vi ? "IC(0) laplace2d f32" : "IC(0) laplace2d f64", L, NZ_PRECOND_IC0,
                     0);
        nz_matrix_destroy(&C);
        nz_matrix_destroy(&L);
    }
    /* symmetric indefinite (IC(0) meets a negative pivot) and SPD but not an M-matrix with
     * a zero pivot in ILU(0) (a(2,2) = 0 after eliminating row 1): both shifted */
    const double ind[9] = {1, 2, 0, 2, 1, 0, 0, 0, 3};
    nz_matrix_t *I3 = csr_from_dense(ctx, 3, ind, NZ_F64);
    check_factor(ctx, "IC(0) indefinite 3x3", I3, NZ_PRECOND_IC0, 1);
    const double zp[9] = {1, 1, 0, 1, 1, 1, 0, 1, 3};
    nz_matrix_t *Z3 = csr_from_dense(ctx, 3, zp, NZ_F64);
    check_factor(ctx, "ILU(0) zero pivot 3x3", Z3, NZ_PRECOND_ILU0, 1);
    nz_matrix_destroy(&I3);
    nz_matrix_destroy(&Z3);
    /* west0067: zero diagonal entries (missing from the pattern, added by the factor) */
    char path[4096];
    snprintf(path, sizeof path, "%s/west0067.mtx", nzt_data_dir());
    nz_matrix_t *W = NULL;
    NZT_OK(ctx, nz_matrix_read(ctx, &W, path, NZ_F64));
    check_factor(ctx, "ILU(0) west0067", W, NZ_PRECOND_ILU0, 1);
    nz_matrix_destroy(&W);
    /* a non-finite entry is refused, naming it */
    const double nanm[4] = {1, NAN, 0.5, 2};
    nz_matrix_t *N = csr_from_dense(ctx, 2, nanm, NZ_F64);
    nz_matrix_t *F = NULL;
    double shift;
    int attempts;
    NZT_CHECK(nzi_factor_compute(ctx, N, NZ_PRECOND_ILU0, &F, &shift, &attempts) ==
                      NZ_ERR_INVALID_MATRIX &&
                  F == NULL && strstr(nz_context_last_error(ctx), "(1, 2)") != NULL &&
                  strstr(nz_context_last_error(ctx), "ILU(0)") != NULL,
              "NaN entry: %s", nz_context_last_error(ctx));
    nz_matrix_destroy(&N);
}

/* ---- solves ------------------------------------------------------------------------------- */

typedef struct solve_case {
    nz_status_t status;
    nz_solve_result_t res;
    double relres;       /* ||b - A x|| / ||b||, recomputed here */
    int finite;          /* every x_i finite */
} solve_case_t;

static solve_case_t run_solve(nz_context_t *ctx, const nz_matrix_t *A, nz_method_t method,
                              nz_precond_t precond, double rtol, double *x_out) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    const int64_t n = info.rows;
    double *bd = (double *)nzt_malloc((size_t)n * sizeof(double));
    double *y = (double *)nzt_malloc((size_t)n * sizeof(double));
    void *b = nzt_malloc((size_t)n * 8), *x = nzt_malloc((size_t)n * 8);
    nzt_random_vector(bd, b, info.value_type, n, nzt_seed + 11);
    memset(x, 0, (size_t)n * 8);
    nz_solve_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.method = method;
    opt.precond = precond;
    opt.rtol = rtol;
    opt.max_iterations = 20000;
    solve_case_t c;
    c.status = nz_solve(ctx, A, b, x, &opt, &c.res);
    double *xd = (double *)nzt_malloc((size_t)n * sizeof(double));
    c.finite = 1;
    for (int64_t i = 0; i < n; i++) {
        xd[i] = info.value_type == NZ_F32 ? ((float *)x)[i] : ((double *)x)[i];
        if (!isfinite(xd[i])) c.finite = 0;
    }
    double *bound = (double *)nzt_malloc((size_t)n * sizeof(double));
    int64_t *len = (int64_t *)nzt_malloc((size_t)n * sizeof(int64_t));
    nzt_reference_spmv(A, NZ_OP_N, 1.0, xd, 0.0, NULL, y, bound, len);
    free(bound);
    free(len);
    double rr = 0, bb = 0;
    for (int64_t i = 0; i < n; i++) {
        rr += (bd[i] - y[i]) * (bd[i] - y[i]);
        bb += bd[i] * bd[i];
    }
    c.relres = sqrt(rr / bb);
    if (x_out != NULL) memcpy(x_out, xd, (size_t)n * sizeof(double));
    nz_free(ctx, c.res.history);
    c.res.history = NULL;
    free(bd);
    free(y);
    free(b);
    free(x);
    free(xd);
    return c;
}

static const char *pc_name(nz_precond_t p) {
    static const char *names[] = {"none", "jacobi", "user", "l1-jacobi", "ilu0", "ic0"};
    return (int)p >= 0 && (int)p < 6 ? names[p] : "?";
}

static void test_convergence(nz_context_t *ctx) {
    /* ILU(0) against Jacobi on the non-symmetric convection-diffusion systems */
    const double peclets[] = {0.5, 2.0, 10.0};
    const nz_method_t methods[] = {NZ_METHOD_BICGSTAB, NZ_METHOD_GMRES, NZ_METHOD_FGMRES};
    for (int vi = 0; vi < 2; vi++) {
        const nz_value_type_t vt = vi ? NZ_F32 : NZ_F64;
        const double rtol = vi ? 1e-5 : 1e-9;
        for (int pi = 0; pi < 3; pi++) {
            nz_matrix_t *A = NULL;
            NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, 32, 32, peclets[pi], vt));
            for (int mi = 0; mi < 3; mi++) {
                solve_case_t j = run_solve(ctx, A, methods[mi], NZ_PRECOND_JACOBI, rtol, NULL);
                solve_case_t l = run_solve(ctx, A, methods[mi], NZ_PRECOND_L1_JACOBI, rtol, NULL);
                solve_case_t u = run_solve(ctx, A, methods[mi], NZ_PRECOND_ILU0, rtol, NULL);
                NZT_CHECK(j.status == NZ_SUCCESS && l.status == NZ_SUCCESS &&
                              u.status == NZ_SUCCESS && u.relres <= 1.01 * rtol &&
                              l.relres <= 1.01 * rtol && u.res.iterations < j.res.iterations &&
                              u.res.precond_shift == 0.0 && u.res.precond_attempts == 1,
                          "%s %s Pe %g: jacobi %d/%lld, l1 %d/%lld, ilu0 %d/%lld relres %.2e",
                          nz_method_name(methods[mi]), nzt_vt_name(vt), peclets[pi],
                          (int)j.status, (long long)j.res.iterations, (int)l.status,
                          (long long)l.res.iterations, (int)u.status,
                          (long long)u.res.iterations, u.relres);
                printf("  %-8s %s Pe %4.1f: jacobi %4lld, l1-jacobi %4lld, ilu0 %4lld iterations\n",
                       nz_method_name(methods[mi]), nzt_vt_name(vt), peclets[pi],
                       (long long)j.res.iterations, (long long)l.res.iterations,
                       (long long)u.res.iterations);
            }
            nz_matrix_destroy(&A);
        }
    }
    /* IC(0) on the SPD Laplacian: MINRES and GMRES, fewer iterations than without */
    nz_matrix_t *L = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &L, 32, 32, NZ_F64));
    const nz_method_t sym[] = {NZ_METHOD_MINRES, NZ_METHOD_GMRES, NZ_METHOD_BICGSTAB};
    for (int mi = 0; mi < 3; mi++) {
        solve_case_t none = run_solve(ctx, L, sym[mi], NZ_PRECOND_NONE, 1e-9, NULL);
        solve_case_t ic = run_solve(ctx, L, sym[mi], NZ_PRECOND_IC0, 1e-9, NULL);
        NZT_CHECK(none.status == NZ_SUCCESS && ic.status == NZ_SUCCESS && ic.relres <= 1.01e-9 &&
                      ic.res.iterations < none.res.iterations && ic.res.precond_attempts == 1,
                  "%s laplace2d: none %d/%lld, ic0 %d/%lld", nz_method_name(sym[mi]),
                  (int)none.status, (long long)none.res.iterations, (int)ic.status,
                  (long long)ic.res.iterations);
        printf("  %-8s laplace2d 32x32: none %4lld, ic0 %4lld iterations\n",
               nz_method_name(sym[mi]), (long long)none.res.iterations,
               (long long)ic.res.iterations);
    }
    nz_matrix_destroy(&L);
}

/* l1-Jacobi is z_i = r_i / sum_j |a_ij|: the same solve as a callback doing exactly that
 * (bitwise), and not the same as Jacobi on a matrix whose rows are not just their diagonal. */
typedef struct l1_user { const double *dinv; int64_t n; } l1_user_t;
static nz_status_t l1_callback(void *user, const void *r_, void *z_) {
    const l1_user_t *u = (const l1_user_t *)user;
    const double *r = (const double *)r_;
    double *z = (double *)z_;
    for (int64_t i = 0; i < u->n; i++) z[i] = u->dinv[i] * r[i];
    return NZ_SUCCESS;
}

static void test_l1_jacobi(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *coo = NULL;
    NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, 12, 12, 3.0, NZ_F64));
    const int64_t n = 144;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A));
    double dinv[144];
    int differs = 0;
    for (int64_t i = 0; i < n; i++) {
        double s = 0, d = 0;
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) {
            s += fabs(((const double *)v)[k]);
            if (ci[k] == i) d = ((const double *)v)[k];
        }
        dinv[i] = 1.0 / s;
        if (s != fabs(d)) differs = 1;
    }
    NZT_CHECK(differs, "l1 norms equal the diagonal: the test cannot tell them apart");
    l1_user_t u = {dinv, n};
    double b[144], x1[144], x2[144], x3[144];
    for (int64_t i = 0; i < n; i++) b[i] = 1.0 + (double)(i % 7);
    nz_solve_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.method = NZ_METHOD_GMRES;
    opt.precond = NZ_PRECOND_L1_JACOBI;
    nz_solve_result_t r1, r2, r3;
    memset(x1, 0, sizeof x1);
    NZT_OK(ctx, nz_solve(ctx, A, b, x1, &opt, &r1));
    opt.precond = NZ_PRECOND_USER;
    opt.precond_apply = l1_callback;
    opt.precond_user = &u;
    memset(x2, 0, sizeof x2);
    NZT_OK(ctx, nz_solve(ctx, A, b, x2, &opt, &r2));
    opt.precond = NZ_PRECOND_JACOBI;
    memset(x3, 0, sizeof x3);
    NZT_OK(ctx, nz_solve(ctx, A, b, x3, &opt, &r3));
    NZT_CHECK(memcmp(x1, x2, sizeof x1) == 0 && r1.iterations == r2.iterations,
              "l1-Jacobi differs from z_i = r_i / sum_j |a_ij| (%lld vs %lld iterations)",
              (long long)r1.iterations, (long long)r2.iterations);
    NZT_CHECK(memcmp(x1, x3, sizeof x1) != 0, "l1-Jacobi gave Jacobi's solution bitwise");
    /* A in COO: converted to CSR for the preconditioner; the same solve */
    NZT_OK(ctx, nz_matrix_convert(ctx, &coo, A, NZ_FORMAT_COO, NULL));
    opt.precond = NZ_PRECOND_L1_JACOBI;
    memset(x3, 0, sizeof x3);
    NZT_OK(ctx, nz_solve(ctx, coo, b, x3, &opt, &r3));
    NZT_CHECK(r3.iterations == r1.iterations && r3.precond_attempts == 0,
              "l1-Jacobi on COO: %lld iterations, CSR %lld", (long long)r3.iterations,
              (long long)r1.iterations);
    opt.precond = NZ_PRECOND_ILU0;
    memset(x3, 0, sizeof x3);
    NZT_OK(ctx, nz_solve(ctx, coo, b, x3, &opt, &r3));
    /* a zero row: refused by name */
    const double zr[4] = {1, 0, 0, 0};
    nz_matrix_t *Z = csr_from_dense(ctx, 2, zr, NZ_F64);
    memset(x3, 0, sizeof x3);
    NZT_CHECK(nz_solve(ctx, Z, b, x3, &opt, &r3) != NZ_SUCCESS, "zero row ILU0");
    opt.precond = NZ_PRECOND_L1_JACOBI;
    NZT_CHECK(nz_solve(ctx, Z, b, x3, &opt, &r3) == NZ_ERR_BREAKDOWN &&
                  strstr(nz_context_last_error(ctx), "row 2") != NULL,
              "zero row l1-Jacobi: %s", nz_context_last_error(ctx));
    nz_matrix_destroy(&Z);
    nz_matrix_destroy(&coo);
    nz_matrix_destroy(&A);
}

/* Matrices that need a shift: a finite x and a reported shift, never NaN. */
static void test_shifts(nz_context_t *ctx) {
    /* the 2-D Laplacian minus 3 I: symmetric indefinite (IC(0) meets a negative pivot) */
    nz_matrix_t *L = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &L, 10, 10, NZ_F64));
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, L));
    double *d = (double *)nzt_malloc(100 * 100 * sizeof(double));
    memset(d, 0, 100 * 100 * sizeof(double));
    for (int64_t i = 0; i < 100; i++)
        for (int64_t k = ro[i]; k < ro[i + 1]; k++)
            d[i * 100 + ci[k]] = ((const double *)v)[k] - (ci[k] == i ? 3.0 : 0.0);
    nz_matrix_t *S = csr_from_dense(ctx, 100, d, NZ_F64);
    free(d);
    nz_matrix_destroy(&L);
    solve_case_t c = run_solve(ctx, S, NZ_METHOD_GMRES, NZ_PRECOND_IC0, 1e-8, NULL);
    NZT_CHECK(c.res.precond_shift > 0.0 && c.res.precond_attempts > 1 && c.finite &&
                  isfinite(c.res.residual_norm) && c.status == NZ_SUCCESS,
              "IC(0) indefinite: status %d shift %g attempts %d", (int)c.status,
              c.res.precond_shift, c.res.precond_attempts);
    printf("  gmres ic0 laplace2d - 3I: shift %.3e (%d attempts), %lld iterations, relres %.2e\n",
           c.res.precond_shift, c.res.precond_attempts, (long long)c.res.iterations, c.relres);
    nz_matrix_destroy(&S);
    /* west0067: zero diagonal entries */
    char path[4096];
    snprintf(path, sizeof path, "%s/west0067.mtx", nzt_data_dir());
    nz_matrix_t *W = NULL;
    NZT_OK(ctx, nz_matrix_read(ctx, &W, path, NZ_F64));
    const nz_method_t methods[] = {NZ_METHOD_GMRES, NZ_METHOD_BICGSTAB};
    for (int mi = 0; mi < 2; mi++) {
        c = run_solve(ctx, W, methods[mi], NZ_PRECOND_ILU0, 1e-8, NULL);
        NZT_CHECK(c.res.precond_shift > 0.0 && c.finite && isfinite(c.res.residual_norm) &&
                      (c.status == NZ_SUCCESS || c.status > 0 || c.status == NZ_ERR_BREAKDOWN),
                  "ILU(0) west0067 %s: status %d shift %g", nz_method_name(methods[mi]),
                  (int)c.status, c.res.precond_shift);
        printf("  %-8s ilu0 west0067: status %d, shift %.3e (%d attempts), %lld iterations, "
               "relres %.2e\n", nz_method_name(methods[mi]), (int)c.status, c.res.precond_shift,
               c.res.precond_attempts, (long long)c.res.iterations, c.relres);
    }
    nz_matrix_destroy(&W);
}

/* 1 and 2 threads: bitwise the same x and iteration counts (level-scheduled SpSV, fixed-order
 * reductions). */
static void test_threads(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *L = NULL;
    NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, 96, 96, 1.0, NZ_F64));
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &L, 96, 96, NZ_F64));
    const int64_t n = 96 * 96;
    double *x1 = (double *)nzt_malloc((size_t)n * sizeof(double));
    double *x2 = (double *)nzt_malloc((size_t)n * sizeof(double));
    const nz_precond_t pcs[] = {NZ_PRECOND_ILU0, NZ_PRECOND_IC0, NZ_PRECOND_L1_JACOBI};
    for (int p = 0; p < 3; p++) {
        const nz_matrix_t *M = pcs[p] == NZ_PRECOND_IC0 ? L : A;
        NZT_OK(ctx, nz_context_set_threads(ctx, 1));
        solve_case_t a = run_solve(ctx, M, NZ_METHOD_BICGSTAB, pcs[p], 1e-9, x1);
        NZT_OK(ctx, nz_context_set_threads(ctx, 2));
        solve_case_t b = run_solve(ctx, M, NZ_METHOD_BICGSTAB, pcs[p], 1e-9, x2);
        NZT_CHECK(a.status == NZ_SUCCESS && b.status == NZ_SUCCESS &&
                      a.res.iterations == b.res.iterations &&
                      memcmp(x1, x2, (size_t)n * sizeof(double)) == 0,
                  "%s: 1 and 2 threads differ (%lld, %lld iterations)", pc_name(pcs[p]),
                  (long long)a.res.iterations, (long long)b.res.iterations);
    }
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    free(x1);
    free(x2);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&L);
}

static void test_arguments(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 4, 4, NZ_F64));
    double b[16], x[16];
    for (int i = 0; i < 16; i++) b[i] = 1.0;
    nz_solve_options_t opt;
    memset(&opt, 0, sizeof opt);
    nz_solve_result_t res;
    const nz_precond_t pcs[] = {NZ_PRECOND_L1_JACOBI, NZ_PRECOND_ILU0, NZ_PRECOND_IC0};
    for (int p = 0; p < 3; p++) {
        opt.method = NZ_METHOD_CG;
        opt.precond = pcs[p];
        memset(x, 0, sizeof x);
        /* nz_solve's CG takes them through the table's CG (cg_table.c) */
        nz_status_t st = nz_solve(ctx, A, b, x, &opt, &res);
        NZT_CHECK(st == NZ_SUCCESS && res.reason == NZ_SOLVE_CONVERGED &&
                      res.relative_residual <= 1e-8 && res.iterations <= 16,
                  "CG with %s: status %d its %lld relres %g: %s", pc_name(pcs[p]), (int)st,
                  (long long)res.iterations, res.relative_residual, nz_context_last_error(ctx));
        nz_cg_options_t cg;
        memset(&cg, 0, sizeof cg);
        cg.precond = pcs[p];
        NZT_CHECK(nz_cg_solve(ctx, A, b, x, &cg, NULL) < 0, "nz_cg_solve with %s",
                  pc_name(pcs[p]));
    }
    opt.method = NZ_METHOD_GMRES;
    opt.precond = (nz_precond_t)9; /* the first value past NZ_PRECOND_AMG */
    NZT_CHECK(nz_solve(ctx, A, b, x, &opt, &res) == NZ_ERR_INVALID_ARGUMENT, "precond 9");
    opt.precond = (nz_precond_t)-1;
    NZT_CHECK(nz_solve(ctx, A, b, x, &opt, &res) == NZ_ERR_INVALID_ARGUMENT, "precond -1");
    /* b = 0 with ILU(0): x = 0, the shift still reported */
    opt.precond = NZ_PRECOND_ILU0;
    memset(b, 0, sizeof b);
    NZT_OK(ctx, nz_solve(ctx, A, b, x, &opt, &res));
    NZT_CHECK(res.precond_attempts == 1 && x[3] == 0.0, "b = 0 with ILU(0)");
    nz_matrix_destroy(&A);
}

/* Fail the k-th allocation for k = 1, 2, ... until the solve succeeds: every failure is
 * NZ_ERR_OUT_OF_MEMORY with nothing leaked. */
static void test_alloc_failures(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *coo = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 8, 8, NZ_F64));
    NZT_OK(ctx, nz_matrix_convert(ctx, &coo, A, NZ_FORMAT_COO, NULL));
    double b[64], x[64];
    for (int i = 0; i < 64; i++) b[i] = 1.0 + i % 3;
    const nz_precond_t pcs[] = {NZ_PRECOND_L1_JACOBI, NZ_PRECOND_ILU0, NZ_PRECOND_IC0};
    const nz_method_t methods[] = {NZ_METHOD_GMRES, NZ_METHOD_BICGSTAB, NZ_METHOD_MINRES};
    for (int p = 0; p < 6; p++) {
        nz_solve_options_t opt;
        memset(&opt, 0, sizeof opt);
        opt.method = methods[p % 3];
        opt.precond = pcs[p % 3];
        const nz_matrix_t *M = p < 3 ? A : coo;
        nz_status_t st = NZ_ERR_OUT_OF_MEMORY;
        int k;
        for (k = 1; k < 300 && st == NZ_ERR_OUT_OF_MEMORY; k++) {
            nz_alloc_stats_t before, after;
            nz_solve_result_t res;
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
            memset(x, 0, sizeof x);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            st = nz_solve(ctx, M, b, x, &opt, &res);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            nz_free(ctx, res.history);
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            NZT_CHECK(after.live_blocks == before.live_blocks,
                      "%s: allocation %d failed: %lld blocks leaked", pc_name(opt.precond), k,
                      (long long)(after.live_blocks - before.live_blocks));
            NZT_CHECK(st == NZ_SUCCESS || st == NZ_ERR_OUT_OF_MEMORY,
                      "%s: allocation %d failed: status %d", pc_name(opt.precond), k, (int)st);
        }
        NZT_CHECK(st == NZ_SUCCESS && k > 3, "%s: no success after %d failures",
                  pc_name(opt.precond), k);
    }
    nz_matrix_destroy(&coo);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    test_factors(ctx);
    test_convergence(ctx);
    test_l1_jacobi(ctx);
    test_shifts(ctx);
    test_threads(ctx);
    test_arguments(ctx);
    test_alloc_failures(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_precond");
}
