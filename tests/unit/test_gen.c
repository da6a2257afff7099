/* test_gen.c: Laplacian and banded generators: exact entries, nnz formulas, argument errors, allocation failures. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* Structure of a host CSR matrix: offsets monotone from 0 to nnz, columns in range and strictly
 * ascending in every row. Returns the number of problems (the first few printed). */
static int check_csr(nz_context_t *ctx, const nz_matrix_t *A, const char *what) {
    nz_matrix_info_t info;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    int bad = 0;
    if (nz_matrix_info(ctx, &info, A) != NZ_SUCCESS || nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A) != NZ_SUCCESS)
        return 1;
    if (ro[0] != 0 || ro[info.rows] != info.nnz) bad++;
    for (int64_t i = 0; i < info.rows && bad < 5; i++) {
        if (ro[i + 1] < ro[i]) {
            fprintf(stderr, "%s: row %lld: offsets decrease\n", what, (long long)i);
            bad++;
            continue;
        }
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) {
            if (ci[k] < 0 || ci[k] >= info.cols || (k > ro[i] && ci[k] <= ci[k - 1])) {
                fprintf(stderr, "%s: row %lld: column %d out of range or order\n", what,
                        (long long)i, ci[k]);
                bad++;
                break;
            }
        }
    }
    return bad;
}

/* Value of entry (i, j) or NAN if it is not stored. */
static double entry(nz_context_t *ctx, const nz_matrix_t *A, int64_t i, int64_t j) {
    nz_matrix_info_t info;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    nz_matrix_info(ctx, &info, A);
    nz_matrix_csr_arrays(ctx, &ro, &ci, &v, A);
    for (int64_t k = ro[i]; k < ro[i + 1]; k++)
        if (ci[k] == j)
            return info.value_type == NZ_F32 ? (double)((const float *)v)[k] : ((const double *)v)[k];
    return NAN;
}

static void test_laplace2d_exact(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    /* 3 x 2 grid: rows 0 1 2 / 3 4 5. The dense matrix written out by hand. */
    static const double expected[6][6] = {
        {4, -1, 0, -1, 0, 0}, {-1, 4, -1, 0, -1, 0}, {0, -1, 4, 0, 0, -1},
        {-1, 0, 0, 4, -1, 0}, {0, -1, 0, -1, 4, -1}, {0, 0, -1, 0, -1, 4}};
    for (int t = 0; t < 2; t++) {
        nz_value_type_t vt = t == 0 ? NZ_F64 : NZ_F32;
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 3, 2, vt));
        nz_matrix_info_t info;
        NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
        NZT_CHECK(info.rows == 6 && info.cols == 6 && info.nnz == 20 && info.value_type == vt,
                  "laplace2d 3x2 shape %lld x %lld nnz %lld", (long long)info.rows,
                  (long long)info.cols, (long long)info.nnz);
        NZT_CHECK(check_csr(ctx, A, "laplace2d") == 0, "laplace2d structure");
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                double e = entry(ctx, A, i, j);
                if (expected[i][j] == 0)
                    NZT_CHECK(isnan(e), "laplace2d (%d,%d) should not be stored", i, j);
                else
                    NZT_CHECK(e == expected[i][j], "laplace2d (%d,%d) = %g, want %g", i, j, e,
                              expected[i][j]);
            }
        nz_matrix_destroy(&A);
    }
    /* 1 x 1 grid: a single 4 */
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 1, 1, NZ_F64));
    NZT_CHECK(entry(ctx, A, 0, 0) == 4.0, "1x1 laplace2d");
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

static void test_laplace3d(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    /* cube n: nnz = 7 n^3 - 6 n^2 (each of 3 axes loses 2 n^2 links at the faces) */
    for (int64_t n = 1; n <= 9; n++) {
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, n, n, n, NZ_F64));
        nz_matrix_info_t info;
        NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
        NZT_CHECK(info.rows == n * n * n && info.nnz == 7 * n * n * n - 6 * n * n,
                  "laplace3d cube %lld: nnz %lld", (long long)n, (long long)info.nnz);
        NZT_CHECK(check_csr(ctx, A, "laplace3d") == 0, "laplace3d structure n=%lld", (long long)n);
        nz_matrix_destroy(&A);
    }
    /* box 4 x 3 x 2: nnz = N + 2 [(nx-1) ny nz + nx (ny-1) nz + nx ny (nz-1)] */
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 4, 3, 2, NZ_F64));
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    NZT_CHECK(info.nnz == 24 + 2 * (3 * 3 * 2 + 4 * 2 * 2 + 4 * 3 * 1), "box nnz %lld",
              (long long)info.nnz);
    /* point (1, 1, 1) = row 1 + 4 (1 + 3) = 17 is interior in x, y; z neighbour only below */
    NZT_CHECK(entry(ctx, A, 17, 17) == 6.0, "diagonal 6");
    NZT_CHECK(entry(ctx, A, 17, 16) == -1.0 && entry(ctx, A, 17, 18) == -1.0, "x neighbours");
    NZT_CHECK(entry(ctx, A, 17, 13) == -1.0 && entry(ctx, A, 17, 21) == -1.0, "y neighbours");
    NZT_CHECK(entry(ctx, A, 17, 5) == -1.0 && isnan(entry(ctx, A, 17, 29)), "z neighbour below only");
    /* x = 3 row 3 has no +x neighbour (no wrap-around to row 4) */
    NZT_CHECK(isnan(entry(ctx, A, 3, 4)) && entry(ctx, A, 3, 2) == -1.0, "no wrap-around");
    /* symmetric, rows sum to 6 - (#neighbours), i.e. >= 0 */
    const int64_t *ro;
    const int32_t *ci;
    const void *vv;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &vv, A));
    const double *v = vv;
    for (int64_t i = 0; i < info.rows; i++) {
        double sum = 0;
        for (int64_t k = ro[i]; k < ro[i + 1]; k++) {
            sum += v[k];
            NZT_CHECK(entry(ctx, A, ci[k], i) == v[k], "laplace3d symmetric at (%lld,%d)",
                      (long long)i, ci[k]);
        }
        NZT_CHECK(sum == 6.0 - (double)(ro[i + 1] - ro[i] - 1), "row sum %lld", (long long)i);
    }
    nz_matrix_destroy(&A);
    /* nz = 1 reproduces the 2-D structure with diagonal 6 */
    nz_matrix_t *B = NULL, *C = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &B, 5, 7, 1, NZ_F64));
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &C, 5, 7, NZ_F64));
    const int64_t *ro2;
    const int32_t *ci2;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, NULL, B));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro2, &ci2, NULL, C));
    NZT_CHECK(memcmp(ro, ro2, 36 * sizeof(int64_t)) == 0 &&
                  memcmp(ci, ci2, (size_t)ro[35] * sizeof(int32_t)) == 0,
              "3-D with nz = 1 has the 2-D pattern");
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&C);
    nz_context_destroy(&ctx);
}

static void test_banded(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    struct { int64_t n, lower, upper; } cases[] = {{1, 0, 0}, {5, 0, 0}, {6, 1, 1}, {10, 2, 3},
                                                   {7, 6, 0}, {7, 0, 6}, {9, 8, 8}, {50, 4, 4}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        int64_t n = cases[t].n, lo = cases[t].lower, up = cases[t].upper;
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_gen_banded(ctx, &A, n, lo, up, NZ_F64));
        NZT_CHECK(check_csr(ctx, A, "banded") == 0, "banded structure");
        nz_matrix_info_t info;
        NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
        int64_t nnz = 0;
        for (int64_t i = 0; i < n; i++) {
            double off = 0;
            for (int64_t j = 0; j < n; j++) {
                double e = entry(ctx, A, i, j);
                int in_band = j - i <= up && i - j <= lo;
                NZT_CHECK(in_band == !isnan(e), "banded n=%lld (%lld,%lld) stored %d", (long long)n,
                          (long long)i, (long long)j, !isnan(e));
                if (!in_band) continue;
                nnz++;
                if (i != j) {
                    double want = -1.0 / (1.0 + fabs((double)(j - i)));
                    NZT_CHECK(e == want, "banded off-diagonal (%lld,%lld) = %g", (long long)i,
                              (long long)j, e);
                    off += fabs(e);
                }
            }
            double d = entry(ctx, A, i, i);
            NZT_CHECK(fabs(d - (1.0 + off)) <= 1e-14 * d && d > off, "banded diagonal row %lld",
                      (long long)i);
        }
        NZT_CHECK(info.nnz == nnz, "banded nnz %lld, want %lld", (long long)info.nnz,
                  (long long)nnz);
        nz_matrix_destroy(&A);
    }
    nz_context_destroy(&ctx);
}

static void test_arguments(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_matrix_t *A = NULL;
    void *b = NULL;
#define EXPECT(call, want)                                                                      \
    do {                                                                                        \
        nz_status_t s_ = (call);                                                                \
        NZT_CHECK(s_ == (want) && A == NULL, "%s returned %d (%s), want %d", #call, (int)s_,     \
                  nz_context_last_error(ctx), (int)(want));                                     \
        if (s_ < 0 && (want) != NZ_ERR_NULL_ARGUMENT)                                           \
            NZT_CHECK(strncmp(nz_context_last_error(ctx), "nz_gen_", 7) == 0,                   \
                      "message names the generator: %s", nz_context_last_error(ctx));           \
        nz_matrix_destroy(&A);                                                                  \
    } while (0)
    EXPECT(nz_gen_laplace2d(NULL, &A, 3, 3, NZ_F64), NZ_ERR_NULL_ARGUMENT);
    EXPECT(nz_gen_laplace2d(ctx, NULL, 3, 3, NZ_F64), NZ_ERR_NULL_ARGUMENT);
    EXPECT(nz_gen_laplace2d(ctx, &A, 3, 3, (nz_value_type_t)3), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_laplace2d(ctx, &A, 0, 3, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_laplace2d(ctx, &A, 3, -1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_laplace2d(ctx, &A, 50000, 50000, NZ_F64), NZ_ERR_UNSUPPORTED);
    EXPECT(nz_gen_laplace3d(ctx, &A, 3, 3, 0, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_laplace3d(ctx, &A, 2000, 2000, 2000, NZ_F64), NZ_ERR_UNSUPPORTED);
    EXPECT(nz_gen_laplace3d(ctx, &A, INT64_MAX / 2, 4, 4, NZ_F64), NZ_ERR_OVERFLOW);
    EXPECT(nz_gen_fe3d(ctx, &A, &b, NULL, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_fe3d(ctx, &A, NULL, NULL, 0, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_fe3d(ctx, &A, NULL, NULL, 2000, NZ_F64), NZ_ERR_UNSUPPORTED);
    EXPECT(nz_gen_fe3d(ctx, &A, NULL, NULL, INT64_MAX / 4, NZ_F64), NZ_ERR_OVERFLOW);
    NZT_CHECK(b == NULL, "b untouched on failure");
    EXPECT(nz_gen_banded(ctx, &A, 0, 0, 0, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_banded(ctx, &A, 5, 5, 0, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_banded(ctx, &A, 5, 0, -1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_banded(ctx, &A, (int64_t)INT32_MAX + 1, 0, 0, NZ_F64), NZ_ERR_UNSUPPORTED);
    EXPECT(nz_gen_random(ctx, &A, 0, 10, 2.0, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_random(ctx, &A, 10, 0, 2.0, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_random(ctx, &A, 10, 10, -1.0, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_random(ctx, &A, 10, 10, NAN, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_random(ctx, &A, 10, 10, INFINITY, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_random(ctx, &A, 10, 10, 5.5, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_random(ctx, &A, (int64_t)INT32_MAX + 1, 10, 1.0, 1, NZ_F64), NZ_ERR_UNSUPPORTED);
    EXPECT(nz_gen_rail(ctx, &A, 4, 100, 0, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_rail(ctx, &A, 4, 100, 101, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_rail(ctx, &A, -4, 100, 10, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_mixed(ctx, &A, 100, 0, 1, 10, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_mixed(ctx, &A, 100, 51, 1, 10, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_mixed(ctx, &A, 100, 4, 101, 10, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_mixed(ctx, &A, 100, 4, -1, 10, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_mixed(ctx, &A, 100, 4, 2, 0, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_rmat(ctx, &A, 0, 16, 0, 0, 0, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_rmat(ctx, &A, 31, 16, 0, 0, 0, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_rmat(ctx, &A, 10, 0, 0, 0, 0, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_rmat(ctx, &A, 10, 16, 0.6, 0.3, 0.2, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_rmat(ctx, &A, 10, 16, -0.1, 0.3, 0.2, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_rmat(ctx, &A, 10, 16, NAN, 0.3, 0.2, 1, NZ_F64), NZ_ERR_INVALID_ARGUMENT);
    EXPECT(nz_gen_rmat(ctx, &A, 10, 16, 0.5, 0.2, 0.2, 1, (nz_value_type_t)0), NZ_ERR_INVALID_ARGUMENT);
#undef EXPECT
    /* the boundaries of the accepted ranges work */
    NZT_OK(ctx, nz_gen_mixed(ctx, &A, 100, 50, 100, 100, 1, NZ_F64));
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_random(ctx, &A, 10, 10, 5.0, 1, NZ_F64));
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_rail(ctx, &A, 3, 100, 100, 1, NZ_F64));
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 1, 1, 0.5, 0.25, 0.25, 1, NZ_F64));
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

/* Fail the k-th allocation for k = 1, 2, ... until the call succeeds: every failure must be
 * NZ_ERR_OUT_OF_MEMORY with a message, leave *A NULL and leak nothing. */
static void test_allocation_failures(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    for (int which = 0; which < 8; which++) {
        nz_alloc_stats_t before, after;
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
        int succeeded = 0;
        for (int64_t k = 1; k < 50 && !succeeded; k++) {
            nz_matrix_t *A = NULL;
            void *b = NULL, *u = NULL;
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            nz_status_t s = NZ_SUCCESS;
            switch (which) {
            case 0: s = nz_gen_laplace2d(ctx, &A, 9, 7, NZ_F64); break;
            case 1: s = nz_gen_laplace3d(ctx, &A, 5, 4, 3, NZ_F32); break;
            case 2: s = nz_gen_fe3d(ctx, &A, &b, &u, 6, NZ_F64); break;
            case 3: s = nz_gen_rmat(ctx, &A, 8, 8, 0, 0, 0, 3, NZ_F64); break;
            case 4: s = nz_gen_random(ctx, &A, 100, 80, 6, 3, NZ_F32); break;
            case 5: s = nz_gen_rail(ctx, &A, 10, 5000, 100, 3, NZ_F64); break;
            case 6: s = nz_gen_mixed(ctx, &A, 300, 3, 2, 200, 3, NZ_F64); break;
            default: s = nz_gen_banded(ctx, &A, 40, 3, 2, NZ_F64); break;
            }
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            if (s == NZ_SUCCESS) {
                succeeded = 1;
                NZT_CHECK(A != NULL, "generator %d: success without a matrix", which);
                NZT_CHECK(which != 2 || (b != NULL && u != NULL), "fe3d vectors returned");
                nz_matrix_destroy(&A);
                nz_free(ctx, b);
                nz_free(ctx, u);
            } else {
                NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY && A == NULL && b == NULL && u == NULL,
                          "generator %d, failing allocation %lld: status %d, A %p", which,
                          (long long)k, (int)s, (void *)A);
                NZT_CHECK(strlen(nz_context_last_error(ctx)) > 0, "generator %d: no message",
                          which);
            }
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            NZT_CHECK(after.live_blocks == before.live_blocks &&
                          after.live_bytes == before.live_bytes,
                      "generator %d, failing allocation %lld: leaked %lld blocks", which,
                      (long long)k, (long long)(after.live_blocks - before.live_blocks));
        }
        NZT_CHECK(succeeded, "generator %d never succeeded", which);
    }
    nz_context_destroy(&ctx);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_laplace2d_exact();
    test_laplace3d();
    test_banded();
    test_arguments();
    test_allocation_failures();
    return nzt_finish("test_gen");
}
