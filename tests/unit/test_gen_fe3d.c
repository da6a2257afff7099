/* test_gen_fe3d.c: the Q1 finite-element generator against an independent quadrature assembly. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

/* 1-D shape function of corner bit a on [0, h] and its derivative. */
static double psi(int a, double t, double h) { return a ? t / h : 1.0 - t / h; }
static double dpsi(int a, double h) { return a ? 1.0 / h : -1.0 / h; }

/* Element stiffness of the cube [0, h]^3 by 2 x 2 x 2 Gauss quadrature (exact: the integrand is
 * at most quadratic in each coordinate). Corner a = a0 + 2 a1 + 4 a2. */
static void element_matrix(double h, double K[8][8]) {
    const double g[2] = {0.5 * h * (1.0 - 1.0 / sqrt(3.0)), 0.5 * h * (1.0 + 1.0 / sqrt(3.0))};
    const double w = 0.5 * h;
    memset(K, 0, 64 * sizeof(double));
    for (int qx = 0; qx < 2; qx++)
        for (int qy = 0; qy < 2; qy++)
            for (int qz = 0; qz < 2; qz++) {
                double x[3] = {g[qx], g[qy], g[qz]};
                double grad[8][3];
                for (int a = 0; a < 8; a++) {
                    int bits[3] = {a & 1, (a >> 1) & 1, (a >> 2) & 1};
                    for (int d = 0; d < 3; d++) {
                        double v = dpsi(bits[d], h);
                        for (int e = 0; e < 3; e++)
                            if (e != d) v *= psi(bits[e], x[e], h);
                        grad[a][d] = v;
                    }
                }
                for (int a = 0; a < 8; a++)
                    for (int b = 0; b < 8; b++)
                        K[a][b] += w * w * w *
                                   (grad[a][0] * grad[b][0] + grad[a][1] * grad[b][1] +
                                    grad[a][2] * grad[b][2]);
            }
}

static int popcount3(int x) { return (x & 1) + ((x >> 1) & 1) + ((x >> 2) & 1); }

static void test_element_matrix(void) {
    const double hs[3] = {1.0, 0.25, 1.0 / 7.0};
    for (int t = 0; t < 3; t++) {
        double h = hs[t], K[8][8];
        element_matrix(h, K);
        /* the table in gen_fe3d.c, by the number of differing corner coordinates */
        const double table[4] = {h / 3.0, 0.0, -h / 12.0, -h / 12.0};
        for (int a = 0; a < 8; a++)
            for (int b = 0; b < 8; b++)
                NZT_CHECK(fabs(K[a][b] - table[popcount3(a ^ b)]) <= 1e-15,
                          "h = %g: K[%d][%d] = %.17g, table %.17g", h, a, b, K[a][b],
                          table[popcount3(a ^ b)]);
    }
}

typedef struct fe_problem {
    nz_matrix_t *A;
    void *b, *u;
    int64_t n, m, rows;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
} fe_problem_t;

static void fe_make(nz_context_t *ctx, fe_problem_t *p, int64_t n, nz_value_type_t vt) {
    memset(p, 0, sizeof *p);
    NZT_OK(ctx, nz_gen_fe3d(ctx, &p->A, &p->b, &p->u, n, vt));
    p->n = n;
    p->m = n - 1;
    p->rows = p->m * p->m * p->m;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &p->ro, &p->ci, &p->v, p->A));
}

static void fe_free(nz_context_t *ctx, fe_problem_t *p) {
    nz_matrix_destroy(&p->A);
    nz_free(ctx, p->b);
    nz_free(ctx, p->u);
}

/* Unknown index of interior node (i, j, k), 1 <= i, j, k <= n - 1, or -1 on the boundary. */
static int64_t unknown(int64_t n, int64_t i, int64_t j, int64_t k) {
    int64_t m = n - 1;
    if (i < 1 || j < 1 || k < 1 || i > m || j > m || k > m) return -1;
    return (i - 1) + m * ((j - 1) + m * (k - 1));
}

/* Assemble A and b from scratch (element loop, quadrature element matrix, 3 x 3 x 3 Gauss load)
 * and compare with the generator entry by entry, including which entries are stored. */
static void test_against_assembly(nz_context_t *ctx, int64_t n) {
    fe_problem_t p;
    fe_make(ctx, &p, n, NZ_F64);
    const int64_t N = p.rows;
    const double h = 1.0 / (double)n;
    double *dense = nzt_malloc((size_t)(N * N) * sizeof(double));
    char *shares = nzt_malloc((size_t)(N * N));
    double *b = nzt_malloc((size_t)N * sizeof(double));
    memset(dense, 0, (size_t)(N * N) * sizeof(double));
    memset(shares, 0, (size_t)(N * N));
    memset(b, 0, (size_t)N * sizeof(double));
    double K[8][8];
    element_matrix(h, K);
    const double gp[3] = {-sqrt(0.6), 0.0, sqrt(0.6)}, gw[3] = {5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0};
    for (int64_t ez = 0; ez < n; ez++)
        for (int64_t ey = 0; ey < n; ey++)
            for (int64_t ex = 0; ex < n; ex++) {
                int64_t node[8];
                for (int a = 0; a < 8; a++)
                    node[a] = unknown(n, ex + (a & 1), ey + ((a >> 1) & 1), ez + ((a >> 2) & 1));
                for (int a = 0; a < 8; a++) {
                    if (node[a] < 0) continue;
                    for (int c = 0; c < 8; c++) {
                        if (node[c] < 0) continue;
                        dense[node[a] * N + node[c]] += K[a][c];
                        shares[node[a] * N + node[c]] = 1;
                    }
                    /* load: integral of f phi_a over the element, 27 points */
                    for (int qx = 0; qx < 3; qx++)
                        for (int qy = 0; qy < 3; qy++)
                            for (int qz = 0; qz < 3; qz++) {
                                double l[3] = {0.5 * h * (1 + gp[qx]), 0.5 * h * (1 + gp[qy]),
                                               0.5 * h * (1 + gp[qz])};
                                double x = (double)ex * h + l[0], y = (double)ey * h + l[1],
                                       z = (double)ez * h + l[2];
                                double f = 3 * pi * pi * sin(pi * x) * sin(pi * y) * sin(pi * z);
                                double phi = psi(a & 1, l[0], h) * psi((a >> 1) & 1, l[1], h) *
                                             psi((a >> 2) & 1, l[2], h);
                                b[node[a]] += gw[qx] * gw[qy] * gw[qz] * 0.125 * h * h * h * f * phi;
                            }
                }
            }
    int bad = 0;
    for (int64_t i = 0; i < N && bad < 5; i++) {
        int64_t k = p.ro[i];
        for (int64_t j = 0; j < N; j++) {
            int stored = k < p.ro[i + 1] && p.ci[k] == j;
            if (stored != shares[i * N + j]) {
                NZT_CHECK(0, "n = %lld: (%lld,%lld) stored %d, shares an element %d",
                          (long long)n, (long long)i, (long long)j, stored, shares[i * N + j]);
                bad++;
            }
            if (stored) {
                double a = ((const double *)p.v)[k];
                if (fabs(a - dense[i * N + j]) > 1e-15) {
                    NZT_CHECK(0, "n = %lld: A(%lld,%lld) = %.17g, assembled %.17g", (long long)n,
                              (long long)i, (long long)j, a, dense[i * N + j]);
                    bad++;
                }
                k++;
            }
        }
        double bi = ((const double *)p.b)[i];
        NZT_CHECK(fabs(bi - b[i]) <= 1e-14 * fabs(b[i]), "n = %lld: b[%lld] = %.17g, assembled %.17g",
                  (long long)n, (long long)i, bi, b[i]);
    }
    free(dense);
    free(shares);
    free(b);
    fe_free(ctx, &p);
}

static void test_structure(nz_context_t *ctx) {
    /* unknowns next to a boundary corner / edge / face / none have 8 / 12 / 18 / 27 entries;
     * with m = n - 1 unknowns per side there are 8, 12 (m-2), 6 (m-2)^2, (m-2)^3 of them */
    for (int64_t n = 3; n <= 6; n++) {
        fe_problem_t p;
        fe_make(ctx, &p, n, NZ_F64);
        int64_t hist[28] = {0}, m = p.m;
        for (int64_t i = 0; i < p.rows; i++) {
            int64_t len = p.ro[i + 1] - p.ro[i];
            if (len >= 0 && len <= 27) hist[len]++;
        }
        int64_t want8 = m >= 2 ? 8 : 0, want12 = m >= 2 ? 12 * (m - 2) : 0;
        int64_t want18 = m >= 2 ? 6 * (m - 2) * (m - 2) : 0, want27 = m >= 2 ? (m - 2) * (m - 2) * (m - 2) : 0;
        NZT_CHECK(hist[8] == want8 && hist[12] == want12 && hist[18] == want18 &&
                      hist[27] == want27 && want8 + want12 + want18 + want27 == p.rows,
                  "n = %lld: rows of 8/12/18/27: %lld %lld %lld %lld, want %lld %lld %lld %lld",
                  (long long)n, (long long)hist[8], (long long)hist[12], (long long)hist[18],
                  (long long)hist[27], (long long)want8, (long long)want12, (long long)want18,
                  (long long)want27);
        fe_free(ctx, &p);
    }
    /* n = 2: one unknown, the centre 8h/3 = 4/3 */
    fe_problem_t p;
    fe_make(ctx, &p, 2, NZ_F64);
    NZT_CHECK(p.rows == 1 && p.ro[1] == 1 && fabs(((const double *)p.v)[0] - 4.0 / 3.0) < 1e-15,
              "n = 2: single entry 4/3");
    fe_free(ctx, &p);

    /* symmetry, columns sorted, and zero row sums once the eliminated neighbours are added back */
    fe_make(ctx, &p, 7, NZ_F64);
    const double h = 1.0 / 7.0, stencil[4] = {8 * h / 3, 0, -h / 6, -h / 12};
    const double *v = p.v;
    for (int64_t i = 0; i < p.rows; i++) {
        int64_t x = 1 + i % p.m, y = 1 + (i / p.m) % p.m, z = 1 + i / (p.m * p.m);
        double sum = 0, removed = 0;
        for (int64_t k = p.ro[i]; k < p.ro[i + 1]; k++) {
            sum += v[k];
            NZT_CHECK(k == p.ro[i] || p.ci[k] > p.ci[k - 1], "row %lld sorted", (long long)i);
            int64_t j = p.ci[k], found = 0;
            for (int64_t kk = p.ro[j]; kk < p.ro[j + 1]; kk++)
                if (p.ci[kk] == i) found = v[kk] == v[k];
            NZT_CHECK(found, "symmetry at (%lld,%lld)", (long long)i, (long long)j);
        }
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    if (unknown(7, x + dx, y + dy, z + dz) < 0)
                        removed += stencil[(dx != 0) + (dy != 0) + (dz != 0)];
        NZT_CHECK(fabs(sum + removed) <= 1e-14, "row %lld: sum %g + removed %g != 0",
                  (long long)i, sum, removed);
        NZT_CHECK(sum >= -1e-15, "row %lld: boundary rows have a positive sum", (long long)i);
    }
    fe_free(ctx, &p);
}

/* e(n) = max_i |(A u_exact - b)_i| / h^3 must fall at least like h^2. */
static void test_consistency(nz_context_t *ctx) {
    double err[3];
    const int64_t ns[3] = {8, 16, 32};
    for (int t = 0; t < 3; t++) {
        fe_problem_t p;
        fe_make(ctx, &p, ns[t], NZ_F64);
        const double h = 1.0 / (double)ns[t], *v = p.v, *u = p.u, *b = p.b;
        double emax = 0, umax = 0;
        for (int64_t i = 0; i < p.rows; i++) {
            double au = 0;
            for (int64_t k = p.ro[i]; k < p.ro[i + 1]; k++) au += v[k] * u[p.ci[k]];
            emax = fmax(emax, fabs(au - b[i]));
            /* u_exact is the nodal interpolant */
            int64_t x = 1 + i % p.m, y = 1 + (i / p.m) % p.m, z = 1 + i / (p.m * p.m);
            double want = sin(pi * x * h) * sin(pi * y * h) * sin(pi * z * h);
            umax = fmax(umax, fabs(u[i] - want));
            /* b is about h^3 f */
            NZT_CHECK(fabs(b[i] / (h * h * h) - 3 * pi * pi * want) <= 0.5 * pi * pi * pi * pi * h * h * 3,
                      "n = %lld: b[%lld] / h^3 = %g far from f = %g", (long long)ns[t],
                      (long long)i, b[i] / (h * h * h), 3 * pi * pi * want);
        }
        NZT_CHECK(umax <= 1e-15, "n = %lld: u_exact off by %g", (long long)ns[t], umax);
        err[t] = emax / (h * h * h);
        fe_free(ctx, &p);
    }
    printf("fe3d consistency: max |A u - b| / h^3 = %.3e (n=8) %.3e (n=16) %.3e (n=32), ratios %.2f %.2f\n",
           err[0], err[1], err[2], err[0] / err[1], err[1] / err[2]);
    NZT_CHECK(err[0] / err[1] > 3.5 && err[1] / err[2] > 3.5,
              "second-order consistency: errors %g %g %g", err[0], err[1], err[2]);
    NZT_CHECK(err[2] * 32 * 32 < 60, "consistency error constant at n = 32 is %g", err[2] * 32 * 32);
}

static void test_types_and_options(nz_context_t *ctx) {
    fe_problem_t d, s;
    fe_make(ctx, &d, 9, NZ_F64);
    fe_make(ctx, &s, 9, NZ_F32);
    NZT_CHECK(memcmp(d.ro, s.ro, (size_t)(d.rows + 1) * sizeof(int64_t)) == 0 &&
                  memcmp(d.ci, s.ci, (size_t)d.ro[d.rows] * sizeof(int32_t)) == 0,
              "f32 and f64 patterns agree");
    int bad = 0;
    for (int64_t k = 0; k < d.ro[d.rows]; k++)
        bad += ((const float *)s.v)[k] != (float)((const double *)d.v)[k];
    for (int64_t i = 0; i < d.rows; i++) {
        bad += ((const float *)s.b)[i] != (float)((const double *)d.b)[i];
        bad += ((const float *)s.u)[i] != (float)((const double *)d.u)[i];
    }
    NZT_CHECK(bad == 0, "f32 values are the rounded f64 values (%d differ)", bad);
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, s.A));
    NZT_CHECK(info.value_type == NZ_F32, "f32 matrix");

    /* thread counts do not change anything */
    nz_matrix_t *A = NULL;
    void *b = NULL;
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    NZT_OK(ctx, nz_gen_fe3d(ctx, &A, &b, NULL, 9, NZ_F64));
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    const void *v;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, NULL, NULL, &v, A));
    NZT_CHECK(memcmp(v, d.v, (size_t)d.ro[d.rows] * sizeof(double)) == 0 &&
                  memcmp(b, d.b, (size_t)d.rows * sizeof(double)) == 0,
              "one thread gives the same matrix and load");
    nz_matrix_destroy(&A);
    nz_free(ctx, b);

    /* only u requested; nothing requested */
    void *u = NULL;
    NZT_OK(ctx, nz_gen_fe3d(ctx, &A, NULL, &u, 9, NZ_F64));
    NZT_CHECK(u != NULL && memcmp(u, d.u, (size_t)d.rows * sizeof(double)) == 0, "u alone");
    nz_matrix_destroy(&A);
    nz_free(ctx, u);
    NZT_OK(ctx, nz_gen_fe3d(ctx, &A, NULL, NULL, 9, NZ_F64));
    nz_matrix_destroy(&A);
    fe_free(ctx, &d);
    fe_free(ctx, &s);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    test_element_matrix();
    test_against_assembly(ctx, 4);
    test_against_assembly(ctx, 5);
    test_structure(ctx);
    test_consistency(ctx);
    test_types_and_options(ctx);
    nz_alloc_stats_t stats;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &stats));
    NZT_CHECK(stats.live_blocks == 0, "%lld blocks leaked", (long long)stats.live_blocks);
    nz_context_destroy(&ctx);
    return nzt_finish("test_gen_fe3d");
}
