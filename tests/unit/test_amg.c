/* test_amg.c: the smoothed-aggregation AMG preconditioner: its cycle against a dense double reference built from the hierarchy, PCG iterations against Jacobi's, symmetry, determinism, re-setup, options, failures. */
#include "testutil.h"
#include "amg.h"

#include <math.h>
#include <string.h>

/* ---- dense reference of one cycle ------------------------------------------------------ */

typedef struct ref_level {
    int64_t n, nc;
    double *A, *P; /* dense row-major; P n x nc (NULL on the coarsest) */
    double rho;
} ref_level_t;

static void mv(const double *M, int64_t rows, int64_t cols, const double *x, double *y) {
    for (int64_t i = 0; i < rows; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < cols; j++) s += M[i * cols + j] * x[j];
        y[i] = s;
    }
}

/* y = M^T x */
static void mtv(const double *M, int64_t rows, int64_t cols, const double *x, double *y) {
    for (int64_t j = 0; j < cols; j++) y[j] = 0.0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) y[j] += M[i * cols + j] * x[i];
}

/* x = A^-1 b by Gaussian elimination with partial pivoting (a copy of A). */
static void dense_solve(const double *A, int64_t n, const double *b, double *x) {
    double *a = nzt_malloc((size_t)(n * n) * sizeof(double));
    memcpy(a, A, (size_t)(n * n) * sizeof(double));
    memcpy(x, b, (size_t)n * sizeof(double));
    for (int64_t k = 0; k < n; k++) {
        int64_t p = k;
        for (int64_t i = k + 1; i < n; i++)
            if (fabs(a[i * n + k]) > fabs(a[p * n + k])) p = i;
        for (int64_t j = 0; j < n; j++) {
            const double t = a[k * n + j];
            a[k * n + j] = a[p * n + j];
            a[p * n + j] = t;
        }
        const double t = x[k];
        x[k] = x[p];
        x[p] = t;
        for (int64_t i = k + 1; i < n; i++) {
            const double f = a[i * n + k] / a[k * n + k];
            for (int64_t j = k; j < n; j++) a[i * n + j] -= f * a[k * n + j];
            x[i] -= f * x[k];
        }
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (int64_t j = i + 1; j < n; j++) s -= a[i * n + j] * x[j];
        x[i] = s / a[i * n + i];
    }
    free(a);
}

/* x += the smoother of docs/SOLVERS.md on A x = b (zero: x = 0 on entry). Chebyshev of degree
 * k on D^-1 A over [1.1 rho / ratio, 1.1 rho]; l1-Jacobi: k sweeps of x += D_l1^-1 (b - A x). */
static void ref_smooth(const ref_level_t *L, const nz_amg_options_t *o, const double *b,
                       double *x, int zero) {
    const int64_t n = L->n;
    double *r = nzt_malloc((size_t)n * sizeof(double)), *Ad = nzt_malloc((size_t)n * sizeof(double));
    double *d = nzt_malloc((size_t)n * sizeof(double)), *s = nzt_malloc((size_t)n * sizeof(double));
    double *dg = nzt_malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        dg[i] = 0.0;
        for (int64_t j = 0; j < n; j++)
            dg[i] += o->smoother == NZ_AMG_SMOOTHER_L1_JACOBI ? fabs(L->A[i * n + j])
                                                             : (i == j ? L->A[i * n + j] : 0.0);
    }
    if (zero)
        for (int64_t i = 0; i < n; i++) x[i] = 0.0;
    if (o->smoother == NZ_AMG_SMOOTHER_L1_JACOBI) {
        for (int sweep = 0; sweep < o->smoother_degree; sweep++) {
            mv(L->A, n, n, x, Ad);
            for (int64_t i = 0; i < n; i++) x[i] += (b[i] - Ad[i]) / dg[i];
        }
    } else {
        const double lmax = 1.1 * L->rho, lmin = lmax / o->cheb_ratio;
        const double theta = 0.5 * (lmax + lmin), delta = 0.5 * (lmax - lmin);
        const double sigma = theta / delta;
        double rho = 1.0 / sigma;
        mv(L->A, n, n, x, Ad);
        for (int64_t i = 0; i < n; i++) {
            s[i] = (b[i] - Ad[i]) / dg[i]; /* the scaled residual */
            d[i] = s[i] / theta;
            x[i] += d[i];
        }
        for (int step = 1; step <= o->smoother_degree; step++) {
            const double rn = 1.0 / (2.0 * sigma - rho);
            mv(L->A, n, n, d, Ad);
            for (int64_t i = 0; i < n; i++) {
                s[i] -= Ad[i] / dg[i];
                d[i] = rn * rho * d[i] + 2.0 * rn / delta * s[i];
                x[i] += d[i];
            }
            rho = rn;
        }
    }
    free(r);
    free(Ad);
    free(d);
    free(s);
    free(dg);
}

static void ref_cycle(const ref_level_t *lv, int levels, int l, const nz_amg_options_t *o,
                      const double *b, double *x) {
    const ref_level_t *L = &lv[l];
    if (l == levels - 1) {
        dense_solve(L->A, L->n, b, x);
        return;
    }
    double *r = nzt_malloc((size_t)L->n * sizeof(double));
    double *bc = nzt_malloc((size_t)L->nc * sizeof(double));
    double *xc = nzt_malloc((size_t)L->nc * sizeof(double));
    double *e = nzt_malloc((size_t)L->n * sizeof(double));
    ref_smooth(L, o, b, x, 1);
    const int visits = o->cycle == NZ_AMG_CYCLE_W && l + 2 < levels ? 2 : 1;
    for (int v = 0; v < visits; v++) {
        mv(L->A, L->n, L->n, x, r);
        for (int64_t i = 0; i < L->n; i++) r[i] = b[i] - r[i];
        mtv(L->P, L->n, L->nc, r, bc);
        ref_cycle(lv, levels, l + 1, o, bc, xc);
        mv(L->P, L->n, L->nc, xc, e);
        for (int64_t i = 0; i < L->n; i++) x[i] += e[i];
    }
    ref_smooth(L, o, b, x, 0);
    free(r);
    free(bc);
    free(xc);
    free(e);
}

/* The hierarchy of M as dense double matrices; returns the level count. */
static int ref_hierarchy(nz_context_t *ctx, const nz_preconditioner_t *M, ref_level_t *lv,
                         nz_amg_options_t *o) {
    const nzi_amg_t *amg = nzi_precond_amg(M);
    int levels = 0;
    for (; levels < NZ_AMG_MAX_LEVELS; levels++) {
        const nz_matrix_t *A, *P;
        double rho;
        if (nzi_amg_level(amg, levels, &A, &P, &rho, o) != NZ_SUCCESS) break;
        int64_t r, c;
        lv[levels].A = nzt_dense_of(ctx, A, &r, &c);
        lv[levels].n = r;
        lv[levels].rho = rho;
        lv[levels].P = P != NULL ? nzt_dense_of(ctx, P, &r, &lv[levels].nc) : NULL;
    }
    return levels;
}

static void ref_free(ref_level_t *lv, int levels) {
    for (int l = 0; l < levels; l++) {
        free(lv[l].A);
        free(lv[l].P);
    }
}

/* ---- problems --------------------------------------------------------------------------- */

/* The 2-unknown-per-node system kron(L, K): L the 3-D Laplacian on m^3, K = [[2, -1], [-1, 2]]
 * (SPD), and its near-nullspace (the two constant-per-component vectors), column-major. */
static nz_matrix_t *two_component(nz_context_t *ctx, int64_t m, double **B) {
    nz_matrix_t *L = NULL, *A = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &L, m, m, m, NZ_F64));
    const nzi_csr_t *l = &L->host.csr;
    const int64_t n = 2 * L->rows;
    NZT_OK(ctx, nzi_csr_alloc(ctx, &A, NZ_F64, n, n, 4 * L->nnz));
    nzi_csr_t *a = &A->host.csr;
    const double K[2][2] = {{2.0, -1.0}, {-1.0, 2.0}};
    int64_t at = 0;
    a->row_offsets[0] = 0;
    for (int64_t i = 0; i < L->rows; i++)
        for (int c = 0; c < 2; c++) {
            for (int64_t k = l->row_offsets[i]; k < l->row_offsets[i + 1]; k++)
                for (int d = 0; d < 2; d++) {
                    a->col_indices[at] = 2 * l->col_indices[k] + d;
                    ((double *)a->values)[at++] = ((double *)l->values)[k] * K[c][d];
                }
            a->row_offsets[2 * i + c + 1] = at;
        }
    *B = nzt_malloc((size_t)(2 * n) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        (*B)[i] = i % 2 == 0;
        (*B)[n + i] = i % 2 == 1;
    }
    nz_matrix_destroy(&L);
    return A;
}

/* The pure-Neumann 3-D Laplacian on m^3 (rows sum to zero: singular, nullspace the constant). */
static nz_matrix_t *neumann3d(nz_context_t *ctx, int64_t m) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, m, m, m, NZ_F64));
    nzi_csr_t *a = &A->host.csr;
    for (int64_t i = 0; i < A->rows; i++) {
        double off = 0.0;
        int64_t dk = -1;
        for (int64_t k = a->row_offsets[i]; k < a->row_offsets[i + 1]; k++)
            if (a->col_indices[k] == i)
                dk = k;
            else
                off += ((double *)a->values)[k];
        ((double *)a->values)[dk] = -off;
    }
    return A;
}

/* ---- the cycle against the reference ---------------------------------------------------- */

static void check_reference(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                            const nz_amg_options_t *ao, int min_levels) {
    nz_preconditioner_t *M = NULL;
    nz_amg_options_t o;
    ref_level_t lv[NZ_AMG_MAX_LEVELS];
    NZT_OK(ctx, nzt_amg(ctx, &M, A, ao));
    const int levels = ref_hierarchy(ctx, M, lv, &o);
    nz_amg_info_t info;
    NZT_OK(ctx, nz_amg_info(M, &info));
    NZT_CHECK(levels == info.levels && levels >= min_levels, "%s: %d levels (info %d), want >= %d",
              what, levels, info.levels, min_levels);
    const int64_t n = A->rows;
    double *r = nzt_malloc((size_t)n * sizeof(double)), *z = nzt_malloc((size_t)n * sizeof(double));
    double *zr = nzt_malloc((size_t)n * sizeof(double));
    nzt_random_vector(r, r, NZ_F64, n, 11);
    nzt_poison(z, NZ_F64, n);
    NZT_OK(ctx, nz_precond_apply(M, r, z));
    ref_cycle(lv, levels, 0, &o, r, zr);
    const double d = nzt_rel_diff(z, zr, n);
    NZT_CHECK(d < 1e-10, "%s: cycle differs from the dense reference by %.3e", what, d);
    ref_free(lv, levels);
    free(r);
    free(z);
    free(zr);
    nz_precond_destroy(&M);
}

/* ---- PCG with AMG ----------------------------------------------------------------------- */

/* Iterations of CG (AMG or Jacobi) on A x = A 1 from 0 to 1e-8; the true residual checked here. */
static int64_t pcg(nz_context_t *ctx, const nz_matrix_t *A, const nz_preconditioner_t *M,
                   const char *what) {
    const int64_t n = A->rows;
    double *one = nzt_malloc((size_t)n * sizeof(double)), *b = nzt_malloc((size_t)n * sizeof(double));
    double *x = nzt_malloc((size_t)n * sizeof(double)), *r = nzt_malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) one[i] = 1.0, x[i] = 0.0;
    NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, one, 0.0, b));
    nz_solve_options_t so;
    memset(&so, 0, sizeof so);
    so.method = NZ_METHOD_CG;
    if (M != NULL)
        so.preconditioner = M;
    else
        so.precond = NZ_PRECOND_JACOBI;
    nz_solve_result_t res;
    const nz_status_t st = nz_solve(ctx, A, b, x, &so, &res);
    NZT_CHECK(st == NZ_SUCCESS, "%s: status %d: %s", what, (int)st, nz_context_last_error(ctx));
    memcpy(r, b, (size_t)n * sizeof(double));
    NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, -1.0, x, 1.0, r));
    double rn = 0.0, bn = 0.0;
    for (int64_t i = 0; i < n; i++) rn += r[i] * r[i], bn += b[i] * b[i];
    NZT_CHECK(sqrt(rn) <= 1e-8 * sqrt(bn) * (1 + 1e-12), "%s: true residual %.3e", what,
              sqrt(rn / bn));
    free(one);
    free(b);
    free(x);
    free(r);
    nz_free(ctx, res.history);
    return res.iterations;
}

static void check_pcg(nz_context_t *ctx) {
    /* fe3d n = 17 (4096 unknowns) and 33 (32768), laplace3d 16^3 and 32^3: at most 13 / 14
     * iterations (1.3x PETSc GAMG's counts on this problem family), and far fewer than Jacobi */
    const struct {
        const char *name;
        int fe;
        int64_t n;
        int64_t max_iterations;
    } cases[] = {{"fe3d 17", 1, 17, 13}, {"fe3d 33", 1, 33, 13}, {"laplace3d 16", 0, 16, 14},
                 {"laplace3d 32", 0, 32, 14}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nz_matrix_t *A = NULL;
        nz_preconditioner_t *M = NULL;
        if (cases[c].fe)
            NZT_OK(ctx, nz_gen_fe3d(ctx, &A, NULL, NULL, cases[c].n, NZ_F64));
        else
            NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, cases[c].n, cases[c].n, cases[c].n, NZ_F64));
        NZT_OK(ctx, nzt_amg(ctx, &M, A, NULL));
        const int64_t it_amg = pcg(ctx, A, M, cases[c].name);
        const int64_t it_jac = pcg(ctx, A, NULL, cases[c].name);
        nz_amg_info_t info;
        NZT_OK(ctx, nz_amg_info(M, &info));
        printf("%-13s AMG-PCG %2lld iterations, Jacobi-PCG %3lld; %d levels, operator complexity "
               "%.3f\n", cases[c].name, (long long)it_amg, (long long)it_jac, info.levels,
               info.operator_complexity);
        NZT_CHECK(it_amg <= cases[c].max_iterations && 3 * it_amg < it_jac,
                  "%s: AMG-PCG %lld iterations (at most %lld), Jacobi %lld", cases[c].name,
                  (long long)it_amg, (long long)cases[c].max_iterations, (long long)it_jac);
        NZT_CHECK(info.operator_complexity >= 1.0 && info.operator_complexity <= 1.6,
                  "%s: operator complexity %.3f", cases[c].name, info.operator_complexity);
        NZT_CHECK(info.smoother == NZ_AMG_SMOOTHER_CHEBYSHEV, "%s: auto smoother %d for SPD A",
                  cases[c].name, (int)info.smoother);
        nz_precond_destroy(&M);
        nz_matrix_destroy(&A);
    }
}

/* ---- properties ------------------------------------------------------------------------ */

static void check_properties(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *A2 = NULL, *Ash = NULL;
    nz_preconditioner_t *M = NULL, *M2 = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 20, 20, 20, NZ_F64));
    const int64_t n = A->rows;
    double *u = nzt_malloc((size_t)n * 8), *v = nzt_malloc((size_t)n * 8);
    double *Mu = nzt_malloc((size_t)n * 8), *Mv = nzt_malloc((size_t)n * 8);
    double *z1 = nzt_malloc((size_t)n * 8), *z2 = nzt_malloc((size_t)n * 8);
    nzt_random_vector(u, u, NZ_F64, n, 3);
    nzt_random_vector(v, v, NZ_F64, n, 4);
    NZT_OK(ctx, nzt_amg(ctx, &M, A, NULL));
    /* symmetric: u'M v = v'M u */
    NZT_OK(ctx, nz_precond_apply(M, u, Mu));
    NZT_OK(ctx, nz_precond_apply(M, v, Mv));
    double uMv = 0.0, vMu = 0.0, uMu = 0.0;
    for (int64_t i = 0; i < n; i++) uMv += u[i] * Mv[i], vMu += v[i] * Mu[i], uMu += u[i] * Mu[i];
    NZT_CHECK(fabs(uMv - vMu) <= 1e-12 * fabs(uMu), "symmetry: u'Mv %.17g v'Mu %.17g", uMv, vMu);
    NZT_CHECK(uMu > 0.0, "u'Mu = %g is not positive", uMu);
    /* deterministic: a second hierarchy, built on one thread, gives the same bits */
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    NZT_OK(ctx, nzt_amg(ctx, &M2, A, NULL));
    NZT_OK(ctx, nz_precond_apply(M2, u, z1));
    NZT_CHECK(memcmp(z1, Mu, (size_t)n * 8) == 0, "one thread vs the default: different bits");
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    nz_precond_destroy(&M2);
    /* re-setup: 2A gives exactly half of M u (powers of two scale every operation exactly) */
    A2 = nzt_new_values(ctx, A, 1);
    for (int64_t k = 0; k < A->nnz; k++)
        ((double *)A2->host.csr.values)[k] = 2.0 * ((double *)A->host.csr.values)[k];
    NZT_OK(ctx, nz_precond_update(M, A2));
    NZT_OK(ctx, nz_precond_apply(M, u, z2));
    int half = 1;
    for (int64_t i = 0; i < n; i++) half &= z2[i] == 0.5 * Mu[i];
    NZT_CHECK(half, "update with 2A: M u is not half the original");
    nz_amg_info_t info;
    NZT_OK(ctx, nz_amg_info(M, &info));
    NZT_CHECK(info.update_seconds > 0.0, "update_seconds %g", info.update_seconds);
    /* ... equal to a fresh hierarchy of 2A */
    NZT_OK(ctx, nzt_amg(ctx, &M2, A2, NULL));
    NZT_OK(ctx, nz_precond_apply(M2, u, z1));
    NZT_CHECK(memcmp(z1, z2, (size_t)n * 8) == 0, "update differs from a fresh set-up");
    nz_precond_destroy(&M2);
    /* another pattern is refused, and the object refuses to apply until updated again */
    Ash = nzt_shifted_pattern(ctx, A, 1);
    NZT_CHECK(nz_precond_update(M, Ash) == NZ_ERR_INVALID_ARGUMENT, "another pattern accepted");
    NZT_CHECK(nz_precond_apply(M, u, z1) == NZ_ERR_INVALID_ARGUMENT,
              "apply after a failed update succeeded");
    NZT_OK(ctx, nz_precond_update(M, A));
    NZT_OK(ctx, nz_precond_apply(M, u, z1));
    NZT_CHECK(memcmp(z1, Mu, (size_t)n * 8) == 0, "update back to A: different bits");
    /* update of another kind builds it again */
    NZT_OK(ctx, nz_precond_create(ctx, &M2, A, NZ_PRECOND_JACOBI, NULL));
    NZT_OK(ctx, nz_precond_update(M2, A2));
    NZT_OK(ctx, nz_precond_apply(M2, u, z1));
    NZT_CHECK(z1[0] == u[0] * (1.0 / 12.0), "jacobi update: %g vs %g", z1[0], u[0] / 12.0);
    nz_precond_destroy(&M2);
    free(u);
    free(v);
    free(Mu);
    free(Mv);
    free(z1);
    free(z2);
    nz_precond_destroy(&M);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&A2);
    nz_matrix_destroy(&Ash);
}

/* ---- small, singular, block, single precision ------------------------------------------------ */

static void check_special(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    nz_preconditioner_t *M = NULL;
    /* A at most max_coarse rows: one level, the apply is the exact solve */
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 12, 10, NZ_F64));
    NZT_OK(ctx, nzt_amg(ctx, &M, A, NULL));
    {
        const int64_t n = A->rows;
        double *r = nzt_malloc((size_t)n * 8), *z = nzt_malloc((size_t)n * 8);
        double *Az = nzt_malloc((size_t)n * 8);
        nzt_random_vector(r, r, NZ_F64, n, 5);
        NZT_OK(ctx, nz_precond_apply(M, r, z));
        NZT_OK(ctx, nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, z, 0.0, Az));
        NZT_CHECK(nzt_rel_diff(Az, r, n) < 1e-12, "one level: A M r != r (%.3e)", nzt_rel_diff(Az, r, n));
        nz_amg_info_t info;
        NZT_OK(ctx, nz_amg_info(M, &info));
        NZT_CHECK(info.levels == 1 && info.coarse_direct, "one level: %d levels", info.levels);
        free(r);
        free(z);
        free(Az);
    }
    nz_precond_destroy(&M);
    nz_matrix_destroy(&A);
    /* 0 x 0: an empty hierarchy */
    NZT_OK(ctx, nzi_csr_alloc(ctx, &A, NZ_F64, 0, 0, 0));
    A->host.csr.row_offsets[0] = 0;
    NZT_OK(ctx, nzt_amg(ctx, &M, A, NULL));
    {
        double r0 = 1.0, z0 = 2.0;
        NZT_OK(ctx, nz_precond_apply(M, &r0, &z0));
        NZT_CHECK(z0 == 2.0, "0 x 0: the apply wrote %g", z0);
    }
    nz_precond_destroy(&M);
    nz_matrix_destroy(&A);
    /* a singular operator (pure Neumann): the coarsest LU needs a shift; PCG on a consistent b */
    A = neumann3d(ctx, 14);
    NZT_OK(ctx, nzt_amg(ctx, &M, A, NULL));
    {
        nz_amg_info_t info;
        NZT_OK(ctx, nz_amg_info(M, &info));
        NZT_CHECK(info.levels >= 2 && info.coarse_shift > 0.0,
                  "neumann: %d levels, coarse shift %g", info.levels, info.coarse_shift);
        const int64_t n = A->rows;
        double *b = nzt_malloc((size_t)n * 8), *x = nzt_malloc((size_t)n * 8);
        double mean = 0.0;
        nzt_random_vector(b, b, NZ_F64, n, 9);
        for (int64_t i = 0; i < n; i++) mean += b[i] / (double)n;
        for (int64_t i = 0; i < n; i++) b[i] -= mean, x[i] = 0.0;
        nz_solve_options_t so;
        memset(&so, 0, sizeof so);
        so.preconditioner = M;
        so.rtol = 1e-8;
        nz_solve_result_t res;
        const nz_status_t st = nz_solve(ctx, A, b, x, &so, &res);
        NZT_CHECK(st == NZ_SUCCESS && res.iterations <= 30, "neumann: status %d, %lld iterations",
                  (int)st, (long long)res.iterations);
        nz_free(ctx, res.history);
        free(b);
        free(x);
    }
    nz_precond_destroy(&M);
    nz_matrix_destroy(&A);
    /* two unknowns a node with the caller's near-nullspace */
    {
        double *B = NULL;
        A = two_component(ctx, 12, &B);
        nz_amg_options_t ao;
        memset(&ao, 0, sizeof ao);
        ao.block_size = 2;
        ao.nullspace_dim = 2;
        ao.near_nullspace = B;
        NZT_OK(ctx, nzt_amg(ctx, &M, A, &ao));
        nz_amg_info_t info;
        NZT_OK(ctx, nz_amg_info(M, &info));
        NZT_CHECK(info.levels >= 2 && info.block_size[0] == 2 && info.block_size[1] == 2,
                  "block: %d levels, blocks %d %d", info.levels, info.block_size[0],
                  info.block_size[1]);
        const int64_t it = pcg(ctx, A, M, "two components");
        NZT_CHECK(it <= 15, "two components: %lld iterations", (long long)it);
        nz_precond_destroy(&M);
        ao.max_coarse = 40;
        ao.max_levels = 3;
        check_reference(ctx, "two components, reference", A, &ao, 3);
        free(B);
        nz_matrix_destroy(&A);
    }
    /* single precision: a float hierarchy, PCG to 1e-5 */
    {
        NZT_OK(ctx, nz_gen_fe3d(ctx, &A, NULL, NULL, 17, NZ_F32));
        NZT_OK(ctx, nzt_amg(ctx, &M, A, NULL));
        const int64_t n = A->rows;
        float *b = nzt_malloc((size_t)n * 4), *x = nzt_malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) b[i] = 1.0f, x[i] = 0.0f;
        nz_solve_options_t so;
        memset(&so, 0, sizeof so);
        so.preconditioner = M;
        so.rtol = 1e-5;
        nz_solve_result_t res;
        const nz_status_t st = nz_solve(ctx, A, b, x, &so, &res);
        NZT_CHECK(st == NZ_SUCCESS && res.iterations <= 10, "f32: status %d, %lld iterations",
                  (int)st, (long long)res.iterations);
        nz_free(ctx, res.history);
        free(b);
        free(x);
        nz_precond_destroy(&M);
        nz_matrix_destroy(&A);
    }
}

/* ---- options and failures ------------------------------------------------------------------ */

static void check_refusals(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *Z = NULL;
    nz_preconditioner_t *M = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 9, 9, 9, NZ_F64));
    nz_amg_options_t ao;
    const struct {
        const char *what;
        int field;
        nz_status_t want;
    } bad[] = {{"threshold 1", 0, NZ_ERR_INVALID_ARGUMENT},
               {"reserved", 1, NZ_ERR_INVALID_ARGUMENT},
               {"block size 2 of 729 rows", 2, NZ_ERR_DIMENSION_MISMATCH},
               {"nullspace_dim 2 without vectors", 3, NZ_ERR_NULL_ARGUMENT},
               {"max_coarse 5000", 4, NZ_ERR_INVALID_ARGUMENT},
               {"smoother 7", 5, NZ_ERR_INVALID_ARGUMENT},
               {"omega 2", 6, NZ_ERR_INVALID_ARGUMENT}};
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        memset(&ao, 0, sizeof ao);
        switch (bad[c].field) {
        case 0: ao.threshold = 1.0; break;
        case 1: ao.reserved[2] = 1; break;
        case 2: ao.block_size = 2; break;
        case 3: ao.nullspace_dim = 2; break;
        case 4: ao.max_coarse = 5000; break;
        case 5: ao.smoother = (nz_amg_smoother_t)7; break;
        case 6: ao.omega = 2.0; break;
        }
        const nz_status_t st = nzt_amg(ctx, &M, A, &ao);
        NZT_CHECK(st == bad[c].want && M == NULL, "%s: status %d", bad[c].what, (int)st);
    }
    /* a zero diagonal entry is a breakdown naming its row */
    Z = nzt_new_values(ctx, A, 2);
    memcpy(Z->host.csr.values, A->host.csr.values, (size_t)A->nnz * 8);
    for (int64_t k = Z->host.csr.row_offsets[100]; k < Z->host.csr.row_offsets[101]; k++)
        if (Z->host.csr.col_indices[k] == 100) ((double *)Z->host.csr.values)[k] = 0.0;
    const nz_status_t st = nzt_amg(ctx, &M, Z, NULL);
    NZT_CHECK(st == NZ_ERR_BREAKDOWN && strstr(nz_context_last_error(ctx), "101") != NULL,
              "zero diagonal: status %d: %s", (int)st, nz_context_last_error(ctx));
    NZT_CHECK(nz_amg_info(NULL, NULL) == NZ_ERR_NULL_ARGUMENT, "nz_amg_info(NULL)");
    NZT_OK(ctx, nz_precond_create(ctx, &M, A, NZ_PRECOND_JACOBI, NULL));
    nz_amg_info_t info;
    NZT_CHECK(nz_amg_info(M, &info) == NZ_ERR_INVALID_ARGUMENT, "nz_amg_info of jacobi");
    nz_precond_destroy(&M);
    /* allocation failures at every point of the set-up: an error, nothing leaked, no object */
    int64_t k = 1;
    for (;; k++) {
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        const nz_status_t s = nzt_amg(ctx, &M, A, NULL);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        if (s == NZ_SUCCESS) break;
        NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY && M == NULL, "allocation %lld failed: status %d",
                  (long long)k, (int)s);
    }
    NZT_CHECK(k > 20, "the set-up made only %lld allocations", (long long)k);
    nz_precond_destroy(&M);
    nz_matrix_destroy(&Z);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_matrix_t *A = NULL;
    nz_amg_options_t ao;
    /* the cycle against the dense reference: V and W, Chebyshev and l1-Jacobi, three levels */
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 11, 10, 9, NZ_F64));
    memset(&ao, 0, sizeof ao);
    ao.max_coarse = 30;
    check_reference(ctx, "laplace3d V chebyshev", A, &ao, 3);
    ao.cycle = NZ_AMG_CYCLE_W;
    check_reference(ctx, "laplace3d W chebyshev", A, &ao, 3);
    ao.smoother = NZ_AMG_SMOOTHER_L1_JACOBI;
    ao.smoother_degree = 3;
    check_reference(ctx, "laplace3d W l1-jacobi", A, &ao, 3);
    ao.cycle = NZ_AMG_CYCLE_V;
    ao.smoother = NZ_AMG_SMOOTHER_CHEBYSHEV;
    ao.threshold = 0.1;
    ao.cheb_ratio = 30.0;
    check_reference(ctx, "laplace3d V theta 0.1 ratio 30", A, &ao, 2);
    nz_matrix_destroy(&A);
    /* non-symmetric: the auto smoother is l1-Jacobi */
    NZT_OK(ctx, nz_gen_convdiff3d(ctx, &A, 10, 10, 10, 2.0, NZ_F64));
    memset(&ao, 0, sizeof ao);
    ao.max_coarse = 30;
    check_reference(ctx, "convdiff3d auto", A, &ao, 2);
    {
        nz_preconditioner_t *M = NULL;
        nz_amg_info_t info;
        NZT_OK(ctx, nzt_amg(ctx, &M, A, NULL));
        NZT_OK(ctx, nz_amg_info(M, &info));
        NZT_CHECK(info.smoother == NZ_AMG_SMOOTHER_L1_JACOBI, "convdiff: auto smoother %d",
                  (int)info.smoother);
        nz_precond_destroy(&M);
    }
    nz_matrix_destroy(&A);
    check_pcg(ctx);
    check_properties(ctx);
    check_special(ctx);
    check_refusals(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_amg");
}
