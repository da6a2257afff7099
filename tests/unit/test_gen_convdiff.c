/* test_gen_convdiff.c: convection-diffusion generators: entries, Péclet 0, M-matrix, errors. */
#include "testutil.h"

#include <math.h>
#include <string.h>

typedef struct csr_view {
    nz_matrix_info_t info;
    const int64_t *row_offsets;
    const int32_t *col_indices;
    const void *values;
} csr_view_t;

static int view(nz_context_t *ctx, csr_view_t *v, const nz_matrix_t *A) {
    return nz_matrix_info(ctx, &v->info, A) == NZ_SUCCESS &&
           nz_matrix_csr_arrays(ctx, &v->row_offsets, &v->col_indices, &v->values, A) ==
               NZ_SUCCESS;
}

static double value_at(const csr_view_t *v, int64_t k) {
    return v->info.value_type == NZ_F32 ? (double)((const float *)v->values)[k]
                                        : ((const double *)v->values)[k];
}

/* Value of entry (i, j) or NAN if it is not stored. */
static double entry(const csr_view_t *v, int64_t i, int64_t j) {
    for (int64_t k = v->row_offsets[i]; k < v->row_offsets[i + 1]; k++)
        if (v->col_indices[k] == j) return value_at(v, k);
    return NAN;
}

/* Offsets from 0 to nnz, columns in range and strictly ascending: the number of problems. */
static int structure_problems(const csr_view_t *v) {
    int bad = v->row_offsets[0] != 0 || v->row_offsets[v->info.rows] != v->info.nnz;
    for (int64_t i = 0; i < v->info.rows; i++)
        for (int64_t k = v->row_offsets[i]; k < v->row_offsets[i + 1]; k++)
            bad += v->col_indices[k] < 0 || v->col_indices[k] >= v->info.cols ||
                   (k > v->row_offsets[i] && v->col_indices[k] <= v->col_indices[k - 1]);
    return bad;
}

/* 3 x 2 grid (rows 0 1 2 / 3 4 5) with P = sqrt(2): c = 2P/sqrt(2) = 2, so the diagonal is
 * 2 (2 + 2) = 8, the -x and -y neighbours -3, the +x and +y ones -1. Written out by hand. */
static void test_exact_2d(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    static const double expected[6][6] = {
        {8, -1, 0, -1, 0, 0},  {-3, 8, -1, 0, -1, 0},  {0, -3, 8, 0, 0, -1},
        {-3, 0, 0, 8, -1, 0},  {0, -3, 0, -3, 8, -1},  {0, 0, -3, 0, -3, 8}};
    for (int t = 0; t < 2; t++) {
        nz_value_type_t vt = t == 0 ? NZ_F64 : NZ_F32;
        double tol = t == 0 ? 1e-14 : 1e-6;
        nz_matrix_t *A = NULL;
        csr_view_t v;
        NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, 3, 2, sqrt(2.0), vt));
        NZT_CHECK(view(ctx, &v, A), "convdiff2d view");
        NZT_CHECK(v.info.rows == 6 && v.info.cols == 6 && v.info.nnz == 20 &&
                      v.info.value_type == vt,
                  "convdiff2d 3x2 shape %lld x %lld nnz %lld", (long long)v.info.rows,
                  (long long)v.info.cols, (long long)v.info.nnz);
        NZT_CHECK(structure_problems(&v) == 0, "convdiff2d structure");
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                double e = entry(&v, i, j);
                if (expected[i][j] == 0)
                    NZT_CHECK(isnan(e), "convdiff2d (%d,%d) should not be stored", i, j);
                else
                    NZT_CHECK(fabs(e - expected[i][j]) <= tol * 8,
                              "convdiff2d (%d,%d) = %.17g, want %g", i, j, e, expected[i][j]);
            }
        nz_matrix_destroy(&A);
    }
    nz_context_destroy(&ctx);
}

/* Grids of several shapes: rows = nx ny nz, nnz = N + 2 (links) where an axis of extent m
 * contributes (m - 1) N / m links; the pattern is the Laplacian's. */
static void test_sizes(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    static const int64_t grids[][3] = {{1, 1, 1}, {1, 1, 5}, {4, 3, 2}, {2, 7, 1}, {6, 6, 6},
                                       {9, 1, 4}};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        const int64_t nx = grids[g][0], ny = grids[g][1], nz = grids[g][2], n = nx * ny * nz;
        const int64_t links = (nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1);
        nz_matrix_t *A = NULL, *L = NULL;
        csr_view_t a, l;
        NZT_OK(ctx, nz_gen_convdiff3d(ctx, &A, nx, ny, nz, 2.5, NZ_F64));
        NZT_OK(ctx, nz_gen_laplace3d(ctx, &L, nx, ny, nz, NZ_F64));
        NZT_CHECK(view(ctx, &a, A) && view(ctx, &l, L), "views");
        NZT_CHECK(a.info.rows == n && a.info.cols == n && a.info.nnz == n + 2 * links,
                  "convdiff3d %lldx%lldx%lld: %lld x %lld, nnz %lld, want %lld", (long long)nx,
                  (long long)ny, (long long)nz, (long long)a.info.rows, (long long)a.info.cols,
                  (long long)a.info.nnz, (long long)(n + 2 * links));
        NZT_CHECK(structure_problems(&a) == 0, "convdiff3d structure");
        const size_t offsets_bytes = (size_t)(n + 1) * sizeof(int64_t);
        const size_t columns_bytes = (size_t)a.info.nnz * sizeof(int32_t);
        NZT_CHECK(a.info.nnz == l.info.nnz &&
                      memcmp(a.row_offsets, l.row_offsets, offsets_bytes) == 0 &&
                      memcmp(a.col_indices, l.col_indices, columns_bytes) == 0,
                  "convdiff3d %lldx%lldx%lld: pattern differs from the Laplacian's", (long long)nx,
                  (long long)ny, (long long)nz);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&L);
        if (nz != 1) continue;
        NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, nx, ny, 2.5, NZ_F32));
        NZT_CHECK(view(ctx, &a, A), "view");
        NZT_CHECK(a.info.rows == n && a.info.nnz == n + 2 * links, "convdiff2d %lldx%lld nnz %lld",
                  (long long)nx, (long long)ny, (long long)a.info.nnz);
        nz_matrix_destroy(&A);
    }
    nz_context_destroy(&ctx);
}

/* peclet = 0 (and -0) reproduces the Laplacian generators bit for bit, in both precisions. */
static void test_peclet_zero(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    for (int t = 0; t < 4; t++) {
        const nz_value_type_t vt = t % 2 == 0 ? NZ_F64 : NZ_F32;
        const double peclet = t < 2 ? 0.0 : -0.0;
        nz_matrix_t *A = NULL, *L = NULL;
        csr_view_t a, l;
        for (int d = 2; d <= 3; d++) {
            if (d == 3) {
                NZT_OK(ctx, nz_gen_convdiff3d(ctx, &A, 5, 4, 3, peclet, vt));
                NZT_OK(ctx, nz_gen_laplace3d(ctx, &L, 5, 4, 3, vt));
            } else {
                NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, 7, 6, peclet, vt));
                NZT_OK(ctx, nz_gen_laplace2d(ctx, &L, 7, 6, vt));
            }
            NZT_CHECK(view(ctx, &a, A) && view(ctx, &l, L), "views");
            const size_t value_size = vt == NZ_F32 ? sizeof(float) : sizeof(double);
            NZT_CHECK(a.info.rows == l.info.rows && a.info.nnz == l.info.nnz &&
                          memcmp(a.row_offsets, l.row_offsets,
                                 (size_t)(a.info.rows + 1) * sizeof(int64_t)) == 0 &&
                          memcmp(a.col_indices, l.col_indices,
                                 (size_t)a.info.nnz * sizeof(int32_t)) == 0 &&
                          memcmp(a.values, l.values, (size_t)a.info.nnz * value_size) == 0,
                      "convdiff%dd with peclet %g (%s) is not the Laplacian", d, peclet,
                      vt == NZ_F32 ? "f32" : "f64");
            nz_matrix_destroy(&A);
            nz_matrix_destroy(&L);
        }
    }
    nz_context_destroy(&ctx);
}

/* For several P on a 4 x 3 x 5 box (and a 2-D grid): positive diagonal 2d + d c, off-diagonals
 * -1 - c below the diagonal (the upwind -x/-y/-z neighbours) and -1 above, so the matrix is not
 * symmetric for P > 0 though its pattern is; each row sums to the missing (Dirichlet)
 * neighbours' weights, (1 + c) per missing -e_i and 1 per missing +e_i: zero in the interior,
 * > 0 on the boundary (diagonal dominance, strict there). c = 2P / sqrt(d). */
static void check_m_matrix(nz_context_t *ctx, int d, double peclet, nz_value_type_t vt) {
    const int64_t nx = 4, ny = 3, nz = d == 3 ? 5 : 1;
    const double c = 2.0 * peclet / sqrt((double)d);
    const double tol = (vt == NZ_F32 ? 1e-6 : 1e-14) * (2.0 * d + d * c);
    nz_matrix_t *A = NULL;
    csr_view_t v;
    if (d == 3)
        NZT_OK(ctx, nz_gen_convdiff3d(ctx, &A, nx, ny, nz, peclet, vt));
    else
        NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, nx, ny, peclet, vt));
    if (A == NULL || !view(ctx, &v, A)) {
        NZT_CHECK(0, "convdiff%dd P = %g: no matrix", d, peclet);
        nz_matrix_destroy(&A);
        return;
    }
    int bad = 0, interior_rows = 0;
    int64_t asymmetric = 0;
    for (int64_t i = 0; i < v.info.rows && bad < 5; i++) {
        const int64_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
        const int missing_minus = (x == 0) + (y == 0) + (d == 3 && z == 0);
        const int missing_plus = (x == nx - 1) + (y == ny - 1) + (d == 3 && z == nz - 1);
        double sum = 0.0, off_magnitude = 0.0, diagonal = NAN;
        for (int64_t k = v.row_offsets[i]; k < v.row_offsets[i + 1]; k++) {
            const int64_t j = v.col_indices[k];
            const double a = value_at(&v, k);
            sum += a;
            if (j == i) {
                diagonal = a;
                continue;
            }
            off_magnitude += fabs(a);
            const double want = j < i ? -1.0 - c : -1.0;
            const double transposed = entry(&v, j, i);
            if (!(a <= 0.0) || fabs(a - want) > tol || isnan(transposed)) {
                fprintf(stderr, "convdiff%dd P = %g: (%lld, %lld) = %g, want %g (transpose %g)\n",
                        d, peclet, (long long)i, (long long)j, a, want, transposed);
                bad++;
            }
            asymmetric += transposed != a;
        }
        const double want_sum = missing_minus * (1.0 + c) + missing_plus;
        if (!(diagonal > 0.0) || fabs(diagonal - (2.0 * d + d * c)) > tol ||
            fabs(sum - want_sum) > tol || diagonal < off_magnitude - tol ||
            (want_sum > 0.0 && !(diagonal > off_magnitude))) {
            fprintf(stderr, "convdiff%dd P = %g: row %lld: diagonal %.17g, row sum %.17g (want "
                    "%.17g), off-diagonal magnitudes %.17g\n", d, peclet, (long long)i, diagonal,
                    sum, want_sum, off_magnitude);
            bad++;
        }
        interior_rows += want_sum == 0.0;
    }
    NZT_CHECK(bad == 0, "convdiff%dd P = %g (%s): not the upwind M-matrix", d, peclet,
              vt == NZ_F32 ? "f32" : "f64");
    NZT_CHECK(interior_rows == (d == 3 ? 2 * 1 * 3 : 2 * 1), "convdiff%dd: %d interior rows", d,
              interior_rows);
    NZT_CHECK(peclet > 0.0 ? asymmetric == v.info.nnz - v.info.rows : asymmetric == 0,
              "convdiff%dd P = %g: %lld of %lld off-diagonals differ from their transpose", d,
              peclet, (long long)asymmetric, (long long)(v.info.nnz - v.info.rows));
    nz_matrix_destroy(&A);
}

static void test_m_matrix(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    static const double pecl[] = {0.0, 1e-3, 0.5, 1.0, 7.25, 1e4};
    for (size_t p = 0; p < sizeof pecl / sizeof pecl[0]; p++)
        for (int d = 2; d <= 3; d++) {
            check_m_matrix(ctx, d, pecl[p], NZ_F64);
            check_m_matrix(ctx, d, pecl[p], NZ_F32);
        }
    nz_context_destroy(&ctx);
}

static void test_arguments(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_matrix_t *A = NULL;
#define EXPECT(call, want)                                                                      \
    do {                                                                                        \
        nz_status_t s_ = (call);                                                                \
        NZT_CHECK(s_ == (want) && A == NULL, "%s returned %d (%s), want %d", #call, (int)s_,     \
                  nz_context_last_error(ctx), (int)(want));                                     \
        if (s_ < 0 && (want) != NZ_ERR_NULL_ARGUMENT)                                           \
            NZT_CHECK(strncmp(nz_context_last_error(ctx), "nz_gen_convdiff", 15) == 0,          \
                      "message names the generator: %s", nz_context_last_error(ctx));           \
        nz_matrix_destroy(&A);                                                                  \
    } while (0)
    EXPECT(nz_gen_convdiff2d(NULL, &A, 3, 3, 1.0, NZ_F64), NZ_ERR_NULL_ARGUMENT);
    EXPECT(nz_gen_convdiff2d(ctx, NULL, 3, 3, 1.0, NZ_F64), NZ_ERR_NULL_ARGUMENT);
    EXPECT(nz_gen_convdiff3d(NULL, &A, 3, 3, 3, 1.0, NZ_F64), NZ_ERR_NULL_ARGUMENT);
    EXPECT(nz_gen_convdiff3d(ctx, NULL, 3, 3, 3, 1.0, NZ_F64), NZ_ERR_NULL_ARGUMENT);
    EXPECT(nz_gen_convdiff2d(ctx, &A, 3, 3, 1.0, (nz_value_type_t)3), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff3d(ctx, &A, 3, 3, 3, 1.0, (nz_value_type_t)0), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff2d(ctx, &A, 0, 3, 1.0, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff2d(ctx, &A, 3, -1, 1.0, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff3d(ctx, &A, 3, 3, 0, 1.0, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff3d(ctx, &A, -2, 3, 3, 1.0, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff2d(ctx, &A, 3, 3, -1.0, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff2d(ctx, &A, 3, 3, -1e-300, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff3d(ctx, &A, 3, 3, 3, NAN, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff3d(ctx, &A, 3, 3, 3, INFINITY, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff3d(ctx, &A, 3, 3, 3, -INFINITY, NZ_F32), NZ_ERR_INVALID_ARGUMENT);
    /* entries that overflow the value type: 3 (2 + 2P/sqrt 3) > FLT_MAX or DBL_MAX */
    EXPECT(nz_gen_convdiff3d(ctx, &A, 3, 3, 3, 1e38, NZ_F32), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff3d(ctx, &A, 3, 3, 3, 1e308, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_convdiff2d(ctx, &A, 3, 3, 1e308, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    /* too many rows, and a point count that overflows int64 */
    EXPECT(nz_gen_convdiff2d(ctx, &A, 50000, 50000, 1.0, NZ_F64), NZ_ERR_UNSUPPORTED);
    EXPECT(nz_gen_convdiff3d(ctx, &A, 2000, 2000, 2000, 1.0, NZ_F64), NZ_ERR_UNSUPPORTED);
    EXPECT(nz_gen_convdiff3d(ctx, &A, INT64_MAX / 2, 4, 4, 1.0, NZ_F64), NZ_ERR_OVERFLOW);
    EXPECT(nz_gen_convdiff2d(ctx, &A, INT64_MAX / 2, 3, 1.0, NZ_F32), NZ_ERR_OVERFLOW);
#undef EXPECT
    /* large but representable P is accepted */
    NZT_OK(ctx, nz_gen_convdiff3d(ctx, &A, 2, 2, 2, 1e37, NZ_F32));
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_convdiff2d(ctx, &A, 2, 2, 1e300, NZ_F64));
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

/* The same arguments give the same bytes, whatever the thread count. */
static void test_deterministic(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_matrix_t *A = NULL, *B = NULL;
    csr_view_t a, b;
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    NZT_OK(ctx, nz_gen_convdiff3d(ctx, &A, 13, 11, 9, 3.0, NZ_F64));
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    NZT_OK(ctx, nz_gen_convdiff3d(ctx, &B, 13, 11, 9, 3.0, NZ_F64));
    NZT_CHECK(view(ctx, &a, A) && view(ctx, &b, B), "views");
    NZT_CHECK(a.info.nnz == b.info.nnz &&
                  memcmp(a.row_offsets, b.row_offsets, (size_t)(a.info.rows + 1) * 8) == 0 &&
                  memcmp(a.col_indices, b.col_indices, (size_t)a.info.nnz * 4) == 0 &&
                  memcmp(a.values, b.values, (size_t)a.info.nnz * 8) == 0,
              "convdiff3d depends on the thread count");
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
    nz_context_destroy(&ctx);
}

/* Fail the k-th allocation for k = 1, 2, ... until the call succeeds: NZ_ERR_OUT_OF_MEMORY,
 * *A left NULL, nothing leaked. */
static void test_allocation_failures(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    for (int which = 0; which < 2; which++) {
        nz_alloc_stats_t before, after;
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
        int succeeded = 0;
        for (int64_t k = 1; k < 50 && !succeeded; k++) {
            nz_matrix_t *A = NULL;
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            nz_status_t s = which == 0 ? nz_gen_convdiff2d(ctx, &A, 9, 7, 2.0, NZ_F64)
                                       : nz_gen_convdiff3d(ctx, &A, 5, 4, 3, 2.0, NZ_F32);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            if (s == NZ_SUCCESS) {
                succeeded = 1;
                nz_matrix_destroy(&A);
            } else {
                NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY && A == NULL,
                          "convdiff %d, failing allocation %lld: status %d", which, (long long)k,
                          (int)s);
            }
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            NZT_CHECK(after.live_blocks == before.live_blocks &&
                          after.live_bytes == before.live_bytes,
                      "convdiff %d, failing allocation %lld: leaked", which, (long long)k);
        }
        NZT_CHECK(succeeded, "convdiff %d never succeeded", which);
    }
    nz_context_destroy(&ctx);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_exact_2d();
    test_sizes();
    test_peclet_zero();
    test_m_matrix();
    test_arguments();
    test_deterministic();
    test_allocation_failures();
    return nzt_finish("test_gen_convdiff");
}
