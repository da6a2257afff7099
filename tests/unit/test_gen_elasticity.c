/* test_gen_elasticity.c: the Q1 elasticity generator against an independent analytic assembly, its rigid-body modes and definiteness. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* ---- an independent element matrix ---------------------------------------------------------
 * The generator integrates B^T D B by Gauss quadrature; here the same matrix comes from the
 * Lame form K[3a+c][3b+d] = lambda I(c,d) + mu I(d,c) + mu delta_cd sum_e I(e,e), with
 * I(c,d)[a][b] = integral of dN_a/dx_c dN_b/dx_d over [0,h]^3, a product of exact 1-D integrals
 * of psi_0 = 1 - t/h, psi_1 = t/h: per axis e the stiffness (1/h)(+-1) if c = d = e, the
 * mixed integral of psi_a' psi_b = s_a / 2 (s = -1, +1) if only c = e, likewise with a and b
 * exchanged if only d = e, and the mass h (1/3 or 1/6) otherwise. */
static double axis_integral(int a, int b, int da, int db, double h) {
    double sa = a ? 1.0 : -1.0, sb = b ? 1.0 : -1.0;
    if (da && db) return sa * sb / h;
    if (da) return 0.5 * sa;
    if (db) return 0.5 * sb;
    return h * (a == b ? 1.0 / 3.0 : 1.0 / 6.0);
}

static double grad_integral(int a, int b, int c, int d, double h) {
    double v = 1.0;
    for (int e = 0; e < 3; e++) v *= axis_integral((a >> e) & 1, (b >> e) & 1, c == e, d == e, h);
    return v;
}

static void element_matrix(double h, double nu, double K[24][24]) {
    const double lambda = nu / ((1 + nu) * (1 - 2 * nu)), mu = 1 / (2 * (1 + nu));
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            for (int c = 0; c < 3; c++)
                for (int d = 0; d < 3; d++) {
                    double v = lambda * grad_integral(a, b, c, d, h) +
                               mu * grad_integral(a, b, d, c, h);
                    if (c == d)
                        for (int e = 0; e < 3; e++) v += mu * grad_integral(a, b, e, e, h);
                    K[3 * a + c][3 * b + d] = v;
                }
}

typedef struct el_problem {
    nz_matrix_t *A;
    void *b, *modes;
    int64_t n, rows;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
} el_problem_t;

static void el_make(nz_context_t *ctx, el_problem_t *p, int64_t n, double nu,
                    nz_value_type_t vt) {
    memset(p, 0, sizeof *p);
    NZT_OK(ctx, nz_gen_elasticity3d(ctx, &p->A, &p->b, &p->modes, n, nu, vt));
    p->n = n;
    p->rows = 3 * n * (n + 1) * (n + 1);
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &p->ro, &p->ci, &p->v, p->A));
}

static void el_free(nz_context_t *ctx, el_problem_t *p) {
    nz_matrix_destroy(&p->A);
    nz_free(ctx, p->b);
    nz_free(ctx, p->modes);
}

/* Node number of mesh node (i, j, k), or -1 if clamped (i = 0) or outside the mesh. */
static int64_t node_of(int64_t n, int64_t i, int64_t j, int64_t k) {
    if (i < 1 || j < 0 || k < 0 || i > n || j > n || k > n) return -1;
    return (i - 1) + n * (j + (n + 1) * k);
}

static double max_abs_entry(const el_problem_t *p) {
    double m = 0;
    for (int64_t k = 0; k < p->ro[p->rows]; k++) m = fmax(m, fabs(((const double *)p->v)[k]));
    return m;
}

/* The whole matrix and load assembled element by element from the analytic element matrix,
 * compared with the generator entry by entry, including which entries are stored (full 3 x 3
 * blocks of node pairs that share an element). */
static void test_against_assembly(nz_context_t *ctx, int64_t n, double nu) {
    el_problem_t p;
    el_make(ctx, &p, n, nu, NZ_F64);
    const int64_t N = p.rows;
    const double h = 1.0 / (double)n;
    double *dense = nzt_malloc((size_t)(N * N) * sizeof(double));
    char *shares = nzt_malloc((size_t)(N * N));
    double *b = nzt_malloc((size_t)N * sizeof(double));
    memset(dense, 0, (size_t)(N * N) * sizeof(double));
    memset(shares, 0, (size_t)(N * N));
    memset(b, 0, (size_t)N * sizeof(double));
    double K[24][24];
    element_matrix(h, nu == 0 ? 0.3 : nu, K);
    for (int64_t ez = 0; ez < n; ez++)
        for (int64_t ey = 0; ey < n; ey++)
            for (int64_t ex = 0; ex < n; ex++) {
                int64_t node[8];
                for (int a = 0; a < 8; a++)
                    node[a] = node_of(n, ex + (a & 1), ey + ((a >> 1) & 1), ez + ((a >> 2) & 1));
                for (int a = 0; a < 8; a++) {
                    if (node[a] < 0) continue;
                    b[3 * node[a] + 2] -= h * h * h / 8; /* integral of N_a times f_z = -1 */
                    for (int c = 0; c < 8; c++) {
                        if (node[c] < 0) continue;
                        for (int r = 0; r < 3; r++)
                            for (int s = 0; s < 3; s++) {
                                int64_t at = (3 * node[a] + r) * N + 3 * node[c] + s;
                                dense[at] += K[3 * a + r][3 * c + s];
                                shares[at] = 1;
                            }
                    }
                }
            }
    const double scale = max_abs_entry(&p);
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
                if (fabs(a - dense[i * N + j]) > 1e-14 * scale) {
                    NZT_CHECK(0, "n = %lld nu = %g: A(%lld,%lld) = %.17g, assembled %.17g",
                              (long long)n, nu, (long long)i, (long long)j, a, dense[i * N + j]);
                    bad++;
                }
                k++;
            }
        }
        double bi = ((const double *)p.b)[i];
        NZT_CHECK(fabs(bi - b[i]) <= 1e-15 * h * h * h, "n = %lld: b[%lld] = %.17g, assembled %.17g",
                  (long long)n, (long long)i, bi, b[i]);
    }
    free(dense);
    free(shares);
    free(b);
    el_free(ctx, &p);
}

/* Dimensions, nnz = 9 (3n-2)(3n+1)^2, row lengths 3 cx cy cz, sorted unique columns, exact
 * symmetry, positive diagonal, and the load's total. */
static void test_structure(nz_context_t *ctx) {
    for (int64_t n = 1; n <= 6; n++) {
        el_problem_t p;
        el_make(ctx, &p, n, 0.0, NZ_F64);
        nz_matrix_info_t info;
        NZT_OK(ctx, nz_matrix_info(ctx, &info, p.A));
        const int64_t want_nnz = 9 * (3 * n - 2) * (3 * n + 1) * (3 * n + 1);
        NZT_CHECK(info.rows == p.rows && info.cols == p.rows && info.nnz == want_nnz,
                  "n = %lld: %lld x %lld with %lld nonzeros, want %lld x %lld with %lld",
                  (long long)n, (long long)info.rows, (long long)info.cols, (long long)info.nnz,
                  (long long)p.rows, (long long)p.rows, (long long)want_nnz);
        const double *v = p.v, *b = p.b;
        int64_t full_rows = 0, bad = 0;
        double load = 0;
        for (int64_t r = 0; r < p.rows; r++) {
            int64_t node = r / 3, i = 1 + node % n, j = (node / n) % (n + 1),
                    k = node / (n * (n + 1));
            int64_t cx = 1 + (i > 1) + (i < n), cy = 1 + (j > 0) + (j < n),
                    cz = 1 + (k > 0) + (k < n);
            int64_t len = p.ro[r + 1] - p.ro[r];
            if (len != 3 * cx * cy * cz) bad++;
            full_rows += len == 81;
            double diagonal = 0;
            for (int64_t e = p.ro[r]; e < p.ro[r + 1]; e++) {
                if (e > p.ro[r] && p.ci[e] <= p.ci[e - 1]) bad++;
                int64_t c = p.ci[e], found = 0;
                if (c == r) diagonal = v[e];
                for (int64_t f = p.ro[c]; f < p.ro[c + 1]; f++)
                    if (p.ci[f] == r) found = v[f] == v[e];
                if (!found) bad++;
            }
            NZT_CHECK(diagonal > 0, "n = %lld: A(%lld,%lld) = %g not positive", (long long)n,
                      (long long)r, (long long)r, diagonal);
            load += b[r];
            if (r % 3 != 2) NZT_CHECK(b[r] == 0, "n = %lld: b[%lld] = %g", (long long)n, (long long)r, b[r]);
        }
        NZT_CHECK(bad == 0, "n = %lld: %lld row length, order or symmetry defects", (long long)n,
                  (long long)bad);
        /* nodes with i in 2..n-1 and j, k in 1..n-1 have all 27 neighbours unknown */
        int64_t want_full = n >= 3 ? 3 * (n - 2) * (n - 1) * (n - 1) : 0;
        NZT_CHECK(full_rows == want_full, "n = %lld: %lld rows of 81, want %lld", (long long)n,
                  (long long)full_rows, (long long)want_full);
        /* the unit load over the cube less the clamped nodes' share, h/2 */
        double h = 1.0 / (double)n;
        NZT_CHECK(fabs(load + (1 - h / 2)) <= 1e-14, "n = %lld: total load %.17g, want %.17g",
                  (long long)n, load, -(1 - h / 2));
        el_free(ctx, &p);
    }
}

/* (a) A times each rigid-body mode vanishes in every row of a node with i >= 2 (no clamped
 * neighbour), and not in the rows next to the clamped face (so the check can fail); the modes
 * are the motions the header names, about the cube's centre. */
static void test_rigid_body_modes(nz_context_t *ctx) {
    const double nus[3] = {0.0, 0.1, 0.45};
    for (int64_t n = 1; n <= 5; n++)
        for (int t = 0; t < 3; t++) {
            el_problem_t p;
            el_make(ctx, &p, n, nus[t], NZ_F64);
            const double *v = p.v, *modes = p.modes, h = 1.0 / (double)n;
            const double tol = 1e-12 * max_abs_entry(&p);
            for (int m = 0; m < 6; m++) {
                const double *r = modes + m * p.rows;
                double worst_free = 0, largest_face = 0;
                int wrong = 0;
                for (int64_t row = 0; row < p.rows; row++) {
                    int64_t node = row / 3, i = 1 + node % n, j = (node / n) % (n + 1),
                            k = node / (n * (n + 1));
                    double x = i * h - 0.5, y = j * h - 0.5, z = k * h - 0.5;
                    const double want[6][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1},
                                               {-y, x, 0}, {0, -z, y}, {z, 0, -x}};
                    wrong += r[row] != want[m][row % 3];
                    double ar = 0;
                    for (int64_t e = p.ro[row]; e < p.ro[row + 1]; e++) ar += v[e] * r[p.ci[e]];
                    if (i >= 2)
                        worst_free = fmax(worst_free, fabs(ar));
                    else
                        largest_face = fmax(largest_face, fabs(ar));
                }
                NZT_CHECK(wrong == 0, "n = %lld: mode %d differs from its formula in %d rows",
                          (long long)n, m, wrong);
                NZT_CHECK(worst_free <= tol,
                          "n = %lld nu = %g: |A r_%d| = %.3g away from the clamped face (tol %.3g)",
                          (long long)n, nus[t], m, worst_free, tol);
                NZT_CHECK(largest_face > 1e3 * tol,
                          "n = %lld nu = %g: A r_%d vanishes next to the clamped face too (%.3g)",
                          (long long)n, nus[t], m, largest_face);
            }
            el_free(ctx, &p);
        }
}

/* (e) Positive definite: dense Cholesky succeeds (every pivot positive), and the solution of
 * A u = b sags (u_z < 0 at the free end) with positive energy u^T A u = b^T u. */
static void test_definite(nz_context_t *ctx) {
    const double nus[2] = {0.0, 0.49};
    for (int64_t n = 1; n <= 3; n++)
        for (int t = 0; t < 2; t++) {
            el_problem_t p;
            el_make(ctx, &p, n, nus[t], NZ_F64);
            const int64_t N = p.rows;
            double *L = nzt_malloc((size_t)(N * N) * sizeof(double));
            double *u = nzt_malloc((size_t)N * sizeof(double));
            memset(L, 0, (size_t)(N * N) * sizeof(double));
            for (int64_t r = 0; r < N; r++)
                for (int64_t e = p.ro[r]; e < p.ro[r + 1]; e++)
                    L[r * N + p.ci[e]] = ((const double *)p.v)[e];
            int ok = 1;
            double min_pivot = INFINITY;
            for (int64_t j = 0; j < N && ok; j++) {
                double d = L[j * N + j];
                for (int64_t k = 0; k < j; k++) d -= L[j * N + k] * L[j * N + k];
                min_pivot = fmin(min_pivot, d);
                if (!(d > 0)) {
                    ok = 0;
                    break;
                }
                L[j * N + j] = sqrt(d);
                for (int64_t i = j + 1; i < N; i++) {
                    double s = L[i * N + j];
                    for (int64_t k = 0; k < j; k++) s -= L[i * N + k] * L[j * N + k];
                    L[i * N + j] = s / L[j * N + j];
                }
            }
            NZT_CHECK(ok, "n = %lld nu = %g: Cholesky breaks down (pivot %g)", (long long)n,
                      nus[t], min_pivot);
            if (ok) {
                const double *b = p.b;
                for (int64_t i = 0; i < N; i++) {
                    double s = b[i];
                    for (int64_t k = 0; k < i; k++) s -= L[i * N + k] * u[k];
                    u[i] = s / L[i * N + i];
                }
                for (int64_t i = N - 1; i >= 0; i--) {
                    double s = u[i];
                    for (int64_t k = i + 1; k < N; k++) s -= L[k * N + i] * u[k];
                    u[i] = s / L[i * N + i];
                }
                double energy = 0, tip = 0;
                for (int64_t i = 0; i < N; i++) energy += b[i] * u[i];
                for (int64_t row = 2; row < N; row += 3)
                    if ((row / 3) % n == n - 1) tip = fmin(tip, u[row]);
                NZT_CHECK(energy > 0 && tip < 0, "n = %lld nu = %g: energy %g, tip sag %g",
                          (long long)n, nus[t], energy, tip);
            }
            free(L);
            free(u);
            el_free(ctx, &p);
        }
}

/* (d) argument checks: n >= 1, 0 <= nu < 0.5, overflow; outputs untouched on failure. */
static void test_arguments(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    void *b = NULL, *modes = NULL;
#define EXPECT(call, want)                                                                       \
    do {                                                                                        \
        nz_status_t s_ = (call);                                                                \
        NZT_CHECK(s_ == (want), "%s: status %d (%s), want %d", #call, (int)s_,                  \
                  nz_context_last_error(ctx), (int)(want));                                     \
        if (s_ < 0 && (want) != NZ_ERR_NULL_ARGUMENT)                                           \
            NZT_CHECK(strncmp(nz_context_last_error(ctx), "nz_gen_elasticity3d", 19) == 0,      \
                      "message names the generator: %s", nz_context_last_error(ctx));           \
        NZT_CHECK(A == NULL && b == NULL && modes == NULL, "%s: outputs written", #call);       \
    } while (0)
    EXPECT(nz_gen_elasticity3d(NULL, &A, &b, &modes, 2, 0.3, NZ_F64), NZ_ERR_NULL_ARGUMENT);
    EXPECT(nz_gen_elasticity3d(ctx, NULL, &b, &modes, 2, 0.3, NZ_F64), NZ_ERR_NULL_ARGUMENT);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, 2, 0.3, (nz_value_type_t)7),
           NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, 0, 0.3, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, -3, 0.3, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, 2, 0.5, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, 2, 0.7, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, 2, -0.1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, 2, NAN, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, 2, INFINITY, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    /* 3 n (n+1)^2 past 2^31 - 1 (n = 894 is the first; 3e9 for n = 1000), and past INT64_MAX */
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, 894, 0.3, NZ_F64), NZ_ERR_UNSUPPORTED);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, 1000, 0.3, NZ_F64), NZ_ERR_UNSUPPORTED);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, INT64_MAX / 4, 0.3, NZ_F64), NZ_ERR_OVERFLOW);
    EXPECT(nz_gen_elasticity3d(ctx, &A, &b, &modes, INT64_MAX, 0.3, NZ_F64), NZ_ERR_OVERFLOW);
#undef EXPECT
    /* n = 1, 2 work; nu = 0 is the default 0.3, bit for bit; nu just below 0.5 works */
    for (int64_t n = 1; n <= 2; n++) {
        el_problem_t p0, p3;
        el_make(ctx, &p0, n, 0.0, NZ_F64);
        el_make(ctx, &p3, n, 0.3, NZ_F64);
        NZT_CHECK(p0.ro[p0.rows] == p3.ro[p3.rows] &&
                      memcmp(p0.v, p3.v, (size_t)p0.ro[p0.rows] * sizeof(double)) == 0,
                  "n = %lld: nu = 0 is not the default 0.3", (long long)n);
        el_free(ctx, &p0);
        el_free(ctx, &p3);
    }
    NZT_OK(ctx, nz_gen_elasticity3d(ctx, &A, NULL, NULL, 2, nextafter(0.5, 0.0), NZ_F64));
    nz_matrix_destroy(&A);
}

/* (f) single precision is the double values rounded, pattern and vectors included; the thread
 * count and which outputs are requested change nothing. */
static void test_types_and_options(nz_context_t *ctx) {
    el_problem_t d, s;
    el_make(ctx, &d, 5, 0.25, NZ_F64);
    el_make(ctx, &s, 5, 0.25, NZ_F32);
    const int64_t nnz = d.ro[d.rows];
    NZT_CHECK(memcmp(d.ro, s.ro, (size_t)(d.rows + 1) * sizeof(int64_t)) == 0 &&
                  memcmp(d.ci, s.ci, (size_t)nnz * sizeof(int32_t)) == 0,
              "f32 and f64 patterns agree");
    int64_t bad = 0;
    for (int64_t k = 0; k < nnz; k++)
        bad += ((const float *)s.v)[k] != (float)((const double *)d.v)[k];
    for (int64_t i = 0; i < d.rows; i++)
        bad += ((const float *)s.b)[i] != (float)((const double *)d.b)[i];
    for (int64_t i = 0; i < 6 * d.rows; i++)
        bad += ((const float *)s.modes)[i] != (float)((const double *)d.modes)[i];
    NZT_CHECK(bad == 0, "f32 values are the rounded f64 values (%lld differ)", (long long)bad);
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, s.A));
    NZT_CHECK(info.value_type == NZ_F32, "f32 matrix");

    nz_matrix_t *A = NULL;
    void *b = NULL, *modes = NULL;
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    NZT_OK(ctx, nz_gen_elasticity3d(ctx, &A, &b, NULL, 5, 0.25, NZ_F64));
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    const void *v;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, NULL, NULL, &v, A));
    NZT_CHECK(memcmp(v, d.v, (size_t)nnz * sizeof(double)) == 0 &&
                  memcmp(b, d.b, (size_t)d.rows * sizeof(double)) == 0,
              "one thread gives the same matrix and load");
    nz_matrix_destroy(&A);
    nz_free(ctx, b);
    NZT_OK(ctx, nz_gen_elasticity3d(ctx, &A, NULL, &modes, 5, 0.25, NZ_F64));
    NZT_CHECK(modes != NULL && memcmp(modes, d.modes, (size_t)(6 * d.rows) * sizeof(double)) == 0,
              "modes alone");
    nz_matrix_destroy(&A);
    nz_free(ctx, modes);
    NZT_OK(ctx, nz_gen_elasticity3d(ctx, &A, NULL, NULL, 5, 0.25, NZ_F64));
    nz_matrix_destroy(&A);
    el_free(ctx, &d);
    el_free(ctx, &s);
}

/* Fail the k-th allocation for k = 1, 2, ... until the call succeeds: NZ_ERR_OUT_OF_MEMORY with
 * a message, no output written, nothing leaked. */
static void test_allocation_failures(nz_context_t *ctx) {
    nz_alloc_stats_t before, after;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
    int succeeded = 0;
    for (int64_t k = 1; k < 50 && !succeeded; k++) {
        nz_matrix_t *A = NULL;
        void *b = NULL, *modes = NULL;
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t s = nz_gen_elasticity3d(ctx, &A, &b, &modes, 3, 0.3, NZ_F32);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        if (s == NZ_SUCCESS) {
            succeeded = 1;
            NZT_CHECK(A != NULL && b != NULL && modes != NULL, "success without every output");
        } else {
            NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY && A == NULL && b == NULL && modes == NULL,
                      "failing allocation %lld: status %d", (long long)k, (int)s);
            NZT_CHECK(strlen(nz_context_last_error(ctx)) > 0, "failing allocation %lld: no message",
                      (long long)k);
        }
        nz_matrix_destroy(&A);
        nz_free(ctx, b);
        nz_free(ctx, modes);
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
        NZT_CHECK(after.live_blocks == before.live_blocks && after.live_bytes == before.live_bytes,
                  "failing allocation %lld: leaked %lld blocks", (long long)k,
                  (long long)(after.live_blocks - before.live_blocks));
    }
    NZT_CHECK(succeeded, "never succeeded");
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    test_against_assembly(ctx, 1, 0.0);
    test_against_assembly(ctx, 2, 0.0);
    test_against_assembly(ctx, 3, 0.45);
    test_structure(ctx);
    test_rigid_body_modes(ctx);
    test_definite(ctx);
    test_arguments(ctx);
    test_types_and_options(ctx);
    test_allocation_failures(ctx);
    nz_alloc_stats_t stats;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &stats));
    NZT_CHECK(stats.live_blocks == 0, "%lld blocks leaked", (long long)stats.live_blocks);
    nz_context_destroy(&ctx);
    return nzt_finish("test_gen_elasticity");
}
