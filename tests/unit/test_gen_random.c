/* test_gen_random.c: random, rail, mixed and R-MAT generators: shapes, row lengths, order, determinism, skew. */
#include "testutil.h"
#include "../../src/gen/gen_internal.h"

#include <math.h>
#include <string.h>

typedef struct view {
    nz_matrix_info_t info;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    int64_t min_len, max_len;
    double min_val, max_val;
} view_t;

/* Read a host CSR matrix and check its structure: offsets monotone from 0 to nnz, columns in
 * range and strictly ascending (sorted, no duplicates). Records row-length and value ranges. */
static view_t inspect(nz_context_t *ctx, const nz_matrix_t *A, const char *what) {
    view_t w;
    memset(&w, 0, sizeof w);
    NZT_OK(ctx, nz_matrix_info(ctx, &w.info, A));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &w.ro, &w.ci, &w.v, A));
    NZT_CHECK(w.ro[0] == 0 && w.ro[w.info.rows] == w.info.nnz, "%s: offsets end at nnz", what);
    w.min_len = INT64_MAX;
    w.max_len = -1;
    w.min_val = INFINITY;
    w.max_val = -INFINITY;
    int bad = 0;
    for (int64_t i = 0; i < w.info.rows; i++) {
        int64_t len = w.ro[i + 1] - w.ro[i];
        if (len < w.min_len) w.min_len = len;
        if (len > w.max_len) w.max_len = len;
        for (int64_t k = w.ro[i]; k < w.ro[i + 1]; k++) {
            if (bad < 3 && (w.ci[k] < 0 || w.ci[k] >= w.info.cols ||
                            (k > w.ro[i] && w.ci[k] <= w.ci[k - 1]))) {
                NZT_CHECK(0, "%s: row %lld: column %d out of range, unsorted or duplicate", what,
                          (long long)i, w.ci[k]);
                bad++;
            }
            double x = w.info.value_type == NZ_F32 ? (double)((const float *)w.v)[k]
                                                   : ((const double *)w.v)[k];
            if (x < w.min_val) w.min_val = x;
            if (x > w.max_val) w.max_val = x;
        }
    }
    return w;
}

/* Bitwise equality of two host CSR matrices. */
static int same_matrix(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B) {
    nz_matrix_info_t a, b;
    const int64_t *ra, *rb;
    const int32_t *ca, *cb;
    const void *va, *vb;
    nz_matrix_info(ctx, &a, A);
    nz_matrix_info(ctx, &b, B);
    if (a.rows != b.rows || a.cols != b.cols || a.nnz != b.nnz || a.value_type != b.value_type)
        return 0;
    nz_matrix_csr_arrays(ctx, &ra, &ca, &va, A);
    nz_matrix_csr_arrays(ctx, &rb, &cb, &vb, B);
    size_t vs = a.value_type == NZ_F32 ? 4 : 8;
    return memcmp(ra, rb, (size_t)(a.rows + 1) * 8) == 0 &&
           memcmp(ca, cb, (size_t)a.nnz * 4) == 0 && memcmp(va, vb, (size_t)a.nnz * vs) == 0;
}

/* ---- internal helpers --------------------------------------------------------------------- */

static int compare_i32(const void *x, const void *y) {
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

static void test_sort(void) {
    nzi_rng_t rng;
    nzi_rng_seed(&rng, nzt_seed);
    const int64_t sizes[] = {0, 1, 2, 3, 24, 25, 26, 100, 1000, 5000};
    int32_t *a = nzt_malloc(5000 * 4), *b = nzt_malloc(5000 * 4);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int kind = 0; kind < 6; kind++) {
            int64_t n = sizes[s];
            for (int64_t i = 0; i < n; i++) {
                switch (kind) {
                case 0: a[i] = (int32_t)nzi_rng_next(&rng); break;   /* any int32 */
                case 1: a[i] = (int32_t)nzi_rng_below(&rng, 3); break; /* many duplicates */
                case 2: a[i] = (int32_t)i; break;                      /* sorted */
                case 3: a[i] = (int32_t)(n - i); break;                /* reversed */
                case 4: a[i] = 7; break;                               /* constant */
                default: a[i] = (int32_t)((i % 2) ? i : n - i); break; /* organ pipe */
                }
            }
            memcpy(b, a, (size_t)n * 4);
            nzi_gen_sort_i32(a, n);
            qsort(b, (size_t)n, 4, compare_i32);
            NZT_CHECK(memcmp(a, b, (size_t)n * 4) == 0, "sort n = %lld kind %d", (long long)n, kind);
        }
    free(a);
    free(b);
}

static void test_sampling(void) {
    nzi_rng_t rng;
    nzi_rng_seed(&rng, nzt_seed + 1);
    int32_t out[4096];
    /* both paths (dense: selection; sparse: rejection), including k = 0 and k = n */
    const int64_t cases[][2] = {{0, 5}, {1, 1}, {5, 5}, {3, 10}, {10, 300}, {100, 1000},
                                {100, 1601}, {100, 100000}, {4096, 4096}, {4000, 2000000000}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t k = cases[c][0], n = cases[c][1];
        nzi_gen_sample_sorted(&rng, k, n, out);
        int ok = 1;
        for (int64_t i = 0; i < k; i++)
            ok &= out[i] >= 0 && out[i] < n && (i == 0 || out[i] > out[i - 1]);
        NZT_CHECK(ok, "sample %lld of %lld: sorted, distinct, in range", (long long)k, (long long)n);
    }
    /* uniformity: every element of [0, n) is chosen with probability k / n, on both paths */
    const int64_t uni[][2] = {{3, 12}, {2, 200}};
    for (int c = 0; c < 2; c++) {
        int64_t k = uni[c][0], n = uni[c][1], trials = 40000, hits[200] = {0};
        for (int64_t t = 0; t < trials; t++) {
            nzi_gen_sample_sorted(&rng, k, n, out);
            for (int64_t i = 0; i < k; i++) hits[out[i]]++;
        }
        double expect = (double)trials * (double)k / (double)n, worst = 0;
        for (int64_t j = 0; j < n; j++) worst = fmax(worst, fabs((double)hits[j] - expect));
        /* 6 standard deviations of a binomial count */
        NZT_CHECK(worst < 6 * sqrt(expect), "sample %lld of %lld: count off by %g (expect %g)",
                  (long long)k, (long long)n, worst, expect);
    }
}

/* ---- random ----------------------------------------------------------------------------- */

static void test_random(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *B = NULL;
    /* sparse rows (rejection path), mean 8: lengths uniform on 0..16 */
    NZT_OK(ctx, nz_gen_random(ctx, &A, 20000, 30000, 8.0, nzt_seed, NZ_F64));
    view_t w = inspect(ctx, A, "random");
    double mean = (double)w.info.nnz / 20000.0;
    NZT_CHECK(w.info.rows == 20000 && w.info.cols == 30000, "random shape");
    NZT_CHECK(w.min_len == 0 && w.max_len == 16, "random lengths [%lld, %lld], want [0, 16]",
              (long long)w.min_len, (long long)w.max_len);
    NZT_CHECK(fabs(mean - 8.0) < 0.25, "random mean row length %g", mean);
    NZT_CHECK(w.min_val >= -1.0 && w.max_val < 1.0 && w.min_val < -0.99 && w.max_val > 0.99,
              "random values in [-1, 1): [%g, %g]", w.min_val, w.max_val);
    /* columns spread evenly: 10 column bands within 5% of each other */
    int64_t band[10] = {0};
    for (int64_t k = 0; k < w.info.nnz; k++) band[w.ci[k] / 3000]++;
    for (int j = 0; j < 10; j++)
        NZT_CHECK(fabs((double)band[j] - (double)w.info.nnz / 10) < 0.05 * (double)w.info.nnz / 10,
                  "random column band %d has %lld of %lld", j, (long long)band[j],
                  (long long)w.info.nnz);
    /* determinism: same seed, other thread counts, identical; another seed differs */
    for (int threads = 1; threads <= 3; threads++) {
        NZT_OK(ctx, nz_context_set_threads(ctx, threads));
        NZT_OK(ctx, nz_gen_random(ctx, &B, 20000, 30000, 8.0, nzt_seed, NZ_F64));
        NZT_CHECK(same_matrix(ctx, A, B), "random with %d threads differs", threads);
        nz_matrix_destroy(&B);
    }
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    NZT_OK(ctx, nz_gen_random(ctx, &B, 20000, 30000, 8.0, nzt_seed + 1, NZ_F64));
    NZT_CHECK(!same_matrix(ctx, A, B), "another seed gives another matrix");
    nz_matrix_destroy(&B);
    /* f32 has the same pattern and rounded values */
    NZT_OK(ctx, nz_gen_random(ctx, &B, 20000, 30000, 8.0, nzt_seed, NZ_F32));
    view_t s = inspect(ctx, B, "random f32");
    int bad = s.info.nnz != w.info.nnz;
    for (int64_t k = 0; k < w.info.nnz && !bad; k++)
        bad = s.ci[k] != w.ci[k] || ((const float *)s.v)[k] != (float)((const double *)w.v)[k];
    NZT_CHECK(!bad, "random f32 matches f64");
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&A);

    /* dense rows (selection path): up to 30 of 32 columns; mean 0 gives an empty matrix */
    NZT_OK(ctx, nz_gen_random(ctx, &A, 500, 32, 15.0, nzt_seed, NZ_F32));
    w = inspect(ctx, A, "random dense");
    NZT_CHECK(w.min_len == 0 && w.max_len == 30, "dense lengths [%lld, %lld]",
              (long long)w.min_len, (long long)w.max_len);
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_random(ctx, &A, 50, 10, 0.0, nzt_seed, NZ_F64));
    w = inspect(ctx, A, "random empty");
    NZT_CHECK(w.info.nnz == 0, "mean 0: no entries");
    nz_matrix_destroy(&A);
    /* full rows allowed: mean = cols / 2 */
    NZT_OK(ctx, nz_gen_random(ctx, &A, 200, 6, 3.0, nzt_seed, NZ_F64));
    w = inspect(ctx, A, "random full");
    NZT_CHECK(w.max_len == 6, "rows up to the full width");
    nz_matrix_destroy(&A);
}

/* ---- rail --------------------------------------------------------------------------------- */

static int compare_i64_desc(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a < b) - (a > b);
}

static void test_rail(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *B = NULL;
    const int64_t rows = 64, cols = 200000, len = 600;
    NZT_OK(ctx, nz_gen_rail(ctx, &A, rows, cols, len, nzt_seed, NZ_F64));
    view_t w = inspect(ctx, A, "rail");
    NZT_CHECK(w.info.rows == rows && w.info.cols == cols, "rail shape");
    NZT_CHECK(w.min_len >= len / 2 && w.max_len <= len + len / 2 && w.max_len - w.min_len > len / 2,
              "rail lengths [%lld, %lld]", (long long)w.min_len, (long long)w.max_len);
    NZT_CHECK(w.min_val >= -1.0 && w.max_val < 1.0, "rail values");
    /* clustered: after removing the 7 widest gaps, a row spans at most 4 x its length (its
     * windows); a uniform row of 600 in 200000 columns would span about 190000 */
    int64_t *gaps = nzt_malloc((size_t)len * 2 * sizeof(int64_t));
    int64_t widest_span = 0, total_span = 0;
    for (int64_t i = 0; i < rows; i++) {
        int64_t n = w.ro[i + 1] - w.ro[i], span = w.ci[w.ro[i + 1] - 1] - w.ci[w.ro[i]] + 1;
        for (int64_t k = 1; k < n; k++) gaps[k - 1] = w.ci[w.ro[i] + k] - w.ci[w.ro[i] + k - 1] - 1;
        qsort(gaps, (size_t)(n - 1), sizeof(int64_t), compare_i64_desc);
        for (int64_t g = 0; g < 7 && g < n - 1; g++) span -= gaps[g];
        NZT_CHECK(span <= 4 * n, "rail row %lld: clustered span %lld for %lld entries",
                  (long long)i, (long long)span, (long long)n);
        widest_span = span > widest_span ? span : widest_span;
        total_span += w.ci[w.ro[i + 1] - 1] - w.ci[w.ro[i]];
    }
    NZT_CHECK(total_span / rows > cols / 10, "rail rows are not all bunched at one place");
    free(gaps);
    for (int threads = 1; threads <= 3; threads += 2) {
        NZT_OK(ctx, nz_context_set_threads(ctx, threads));
        NZT_OK(ctx, nz_gen_rail(ctx, &B, rows, cols, len, nzt_seed, NZ_F64));
        NZT_CHECK(same_matrix(ctx, A, B), "rail with %d threads differs", threads);
        nz_matrix_destroy(&B);
    }
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    nz_matrix_destroy(&A);
    /* rows capped at cols; row_length 1 gives rows of exactly 1 */
    NZT_OK(ctx, nz_gen_rail(ctx, &A, 40, 50, 45, nzt_seed, NZ_F32));
    w = inspect(ctx, A, "rail capped");
    NZT_CHECK(w.min_len >= 22 && w.max_len == 50, "rail capped lengths [%lld, %lld]",
              (long long)w.min_len, (long long)w.max_len);
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_rail(ctx, &A, 40, 7, 1, nzt_seed, NZ_F64));
    w = inspect(ctx, A, "rail 1");
    NZT_CHECK(w.min_len == 1 && w.max_len == 1, "rail row_length 1");
    nz_matrix_destroy(&A);
}

/* ---- mixed --------------------------------------------------------------------------------- */

static void test_mixed(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *B = NULL;
    const int64_t rows = 10000;
    NZT_OK(ctx, nz_gen_mixed(ctx, &A, rows, 4, 5, 3000, nzt_seed, NZ_F64));
    view_t w = inspect(ctx, A, "mixed");
    NZT_CHECK(w.info.rows == rows && w.info.cols == rows, "mixed is square");
    int64_t longs = 0, short_sum = 0, short_min = INT64_MAX, short_max = 0;
    for (int64_t i = 0; i < rows; i++) {
        int64_t len = w.ro[i + 1] - w.ro[i];
        int is_long = i % 2000 == 1000; /* floor((2k + 1) 10000 / 10) */
        if (is_long) {
            NZT_CHECK(len == 3000, "long row %lld has %lld entries", (long long)i, (long long)len);
            longs++;
        } else {
            short_sum += len;
            short_min = len < short_min ? len : short_min;
            short_max = len > short_max ? len : short_max;
        }
    }
    NZT_CHECK(longs == 5, "5 long rows");
    NZT_CHECK(short_min == 1 && short_max == 7, "short rows in [%lld, %lld], want [1, 7]",
              (long long)short_min, (long long)short_max);
    NZT_CHECK(fabs((double)short_sum / (double)(rows - 5) - 4.0) < 0.1, "short mean %g",
              (double)short_sum / (double)(rows - 5));
    for (int threads = 1; threads <= 2; threads++) {
        NZT_OK(ctx, nz_context_set_threads(ctx, threads));
        NZT_OK(ctx, nz_gen_mixed(ctx, &B, rows, 4, 5, 3000, nzt_seed, NZ_F64));
        NZT_CHECK(same_matrix(ctx, A, B), "mixed with %d threads differs", threads);
        nz_matrix_destroy(&B);
    }
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    nz_matrix_destroy(&A);
    /* long_length beyond the width is capped: dense rows; uneven spacing stays distinct */
    NZT_OK(ctx, nz_gen_mixed(ctx, &A, 97, 1, 13, 1000, nzt_seed, NZ_F32));
    w = inspect(ctx, A, "mixed capped");
    int64_t full = 0, ones = 0;
    for (int64_t i = 0; i < 97; i++) {
        int64_t len = w.ro[i + 1] - w.ro[i];
        full += len == 97;
        ones += len == 1;
    }
    NZT_CHECK(full == 13 && ones == 84, "13 full rows (%lld), 84 rows of 1 (%lld)",
              (long long)full, (long long)ones);
    nz_matrix_destroy(&A);
    /* every row long; no long rows */
    NZT_OK(ctx, nz_gen_mixed(ctx, &A, 50, 2, 50, 10, nzt_seed, NZ_F64));
    w = inspect(ctx, A, "mixed all long");
    NZT_CHECK(w.min_len == 10 && w.max_len == 10, "all rows long");
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_gen_mixed(ctx, &A, 50, 2, 0, 0, nzt_seed, NZ_F64));
    w = inspect(ctx, A, "mixed no long");
    NZT_CHECK(w.min_len >= 1 && w.max_len <= 3, "no long rows");
    nz_matrix_destroy(&A);
}

/* ---- R-MAT --------------------------------------------------------------------------------- */

static void test_rmat(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *B = NULL;
    const int scale = 13, edge_factor = 16;
    const int64_t n = 1 << scale, edges = (int64_t)edge_factor << scale;
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, scale, edge_factor, 0, 0, 0, nzt_seed, NZ_F64));
    view_t w = inspect(ctx, A, "rmat");
    NZT_CHECK(w.info.rows == n && w.info.cols == n, "rmat shape");
    NZT_CHECK(w.info.nnz < edges && w.info.nnz > edges / 2, "rmat nnz %lld of %lld edges",
              (long long)w.info.nnz, (long long)edges);
    NZT_CHECK(w.min_val > 0.0 && w.max_val <= 1.0, "rmat values in (0, 1]: [%g, %g]", w.min_val,
              w.max_val);
    double mean = (double)w.info.nnz / (double)n;
    int64_t empty = 0;
    for (int64_t i = 0; i < n; i++) empty += w.ro[i + 1] == w.ro[i];
    printf("rmat scale %d: nnz %lld, mean degree %.1f, max %lld, empty rows %lld\n", scale,
           (long long)w.info.nnz, mean, (long long)w.max_len, (long long)empty);
    NZT_CHECK((double)w.max_len > 20 * mean, "skewed: max degree %lld, mean %.1f",
              (long long)w.max_len, mean);
    NZT_CHECK(empty > n / 10, "power law leaves many isolated vertices (%lld)", (long long)empty);
    /* the heaviest rows are scrambled away from row 0 */
    int64_t heaviest = 0;
    for (int64_t i = 0; i < n; i++)
        if (w.ro[i + 1] - w.ro[i] == w.max_len) heaviest = i;
    NZT_CHECK(w.ro[1] - w.ro[0] < w.max_len || heaviest != 0, "vertex labels scrambled");
    /* thread counts and repeated runs give the same matrix (the scatter order varies) */
    for (int threads = 1; threads <= 3; threads++) {
        NZT_OK(ctx, nz_context_set_threads(ctx, threads));
        NZT_OK(ctx, nz_gen_rmat(ctx, &B, scale, edge_factor, 0.57, 0.19, 0.19, nzt_seed, NZ_F64));
        NZT_CHECK(same_matrix(ctx, A, B), "rmat with %d threads (explicit Graph500 a, b, c) differs",
                  threads);
        nz_matrix_destroy(&B);
    }
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    NZT_OK(ctx, nz_gen_rmat(ctx, &B, scale, edge_factor, 0, 0, 0, nzt_seed + 1, NZ_F64));
    NZT_CHECK(!same_matrix(ctx, A, B), "another seed gives another graph");
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&A);

    /* scale 16: buckets of 4 rows (scale 13 has one row per bucket); row sums of the values
     * and the degree sequence must not depend on the thread count either */
    NZT_OK(ctx, nz_context_set_threads(ctx, 1));
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 16, 4, 0, 0, 0, nzt_seed, NZ_F64));
    NZT_OK(ctx, nz_context_set_threads(ctx, 3));
    NZT_OK(ctx, nz_gen_rmat(ctx, &B, 16, 4, 0, 0, 0, nzt_seed, NZ_F64));
    NZT_OK(ctx, nz_context_set_threads(ctx, 0));
    w = inspect(ctx, A, "rmat scale 16");
    NZT_CHECK(same_matrix(ctx, A, B), "rmat scale 16 with 1 and 3 threads differs");
    NZT_CHECK(w.info.nnz > (4 << 16) / 2 && w.info.nnz < (4 << 16) && w.max_len > 20 * 4,
              "rmat scale 16: nnz %lld, max degree %lld", (long long)w.info.nnz,
              (long long)w.max_len);
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&A);

    /* a = b = c = d = 1/4: uniform (Erdos-Renyi-like), no heavy rows */
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, scale, edge_factor, 0.25, 0.25, 0.25, nzt_seed, NZ_F64));
    w = inspect(ctx, A, "rmat uniform");
    NZT_CHECK(w.max_len < 3 * edge_factor, "uniform R-MAT max degree %lld", (long long)w.max_len);
    nz_matrix_destroy(&A);
    /* a = 1: every edge is (0, 0) before scrambling: a single diagonal entry */
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 6, 4, 1.0, 0.0, 0.0, nzt_seed, NZ_F32));
    w = inspect(ctx, A, "rmat a=1");
    NZT_CHECK(w.info.nnz == 1, "a = 1: one entry, got %lld", (long long)w.info.nnz);
    for (int64_t i = 0; i < 64 && w.info.nnz == 1; i++)
        if (w.ro[i + 1] > w.ro[i]) NZT_CHECK(w.ci[w.ro[i]] == i, "a = 1: a self loop");
    nz_matrix_destroy(&A);
    /* b = 1: every edge is row 0 -> column 2^scale - 1 before scrambling */
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 5, 2, 0.0, 1.0, 0.0, nzt_seed, NZ_F64));
    w = inspect(ctx, A, "rmat b=1");
    NZT_CHECK(w.info.nnz == 1, "b = 1: one entry");
    nz_matrix_destroy(&A);
    /* d = 1 - a - b - c may be 0, scale 1 works */
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 1, 8, 0.5, 0.25, 0.25, nzt_seed, NZ_F64));
    w = inspect(ctx, A, "rmat scale 1");
    NZT_CHECK(w.info.rows == 2 && w.info.nnz >= 1 && w.info.nnz <= 3, "scale 1, d = 0: nnz %lld",
              (long long)w.info.nnz);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    test_sort();
    test_sampling();
    test_random(ctx);
    test_rail(ctx);
    test_mixed(ctx);
    test_rmat(ctx);
    nz_alloc_stats_t stats;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &stats));
    NZT_CHECK(stats.live_blocks == 0, "%lld blocks leaked", (long long)stats.live_blocks);
    nz_context_destroy(&ctx);
    return nzt_finish("test_gen_random");
}
