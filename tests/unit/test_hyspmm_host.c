/* test_hyspmm_host.c: hySpMM's CPU pre-processing, memory-inequality panel split and panel assembly. */
#include "testutil.h"
#include "nzi.h"
#include "../../src/cuda/spgemm/hyspmm.h"

#include <math.h>
#include <string.h>

/* The example of the thesis's figure 3.1: A and B 4 x 4. */
static void figure_matrices(nz_context_t *ctx, nz_matrix_t **A, nz_matrix_t **B) {
    const int64_t a_offsets[] = {0, 1, 4, 5, 6};
    const int32_t a_cols[] = {0, 1, 2, 3, 3, 1};
    const double a_values[] = {10, 20, 30, 40, 50, 60};
    const int64_t b_offsets[] = {0, 1, 3, 5, 7};
    const int32_t b_cols[] = {0, 1, 3, 0, 1, 1, 3};
    const double b_values[] = {1, 2, 3, 4, 5, 6, 7};
    NZT_OK(ctx, nz_matrix_create_csr(ctx, A, 4, 4, NZ_I64, a_offsets, a_cols, NZ_F64, a_values));
    NZT_OK(ctx, nz_matrix_create_csr(ctx, B, 4, 4, NZ_I64, b_offsets, b_cols, NZ_F64, b_values));
}

/* Input buffers big enough for `products` products of a matrix with `rows` rows, `nnz` entries. */
typedef struct buffers {
    nzi_hyspmm_input_t in;
    double *a_values, *dup_values;
} buffers_t;

static void buffers_alloc(buffers_t *b, int64_t rows, int64_t nnz, int64_t products) {
    b->a_values = nzt_malloc((size_t)(nnz + 1) * sizeof(double));
    b->dup_values = nzt_malloc((size_t)(products + 1) * sizeof(double));
    b->in.a_values = b->a_values;
    b->in.dup_values = b->dup_values;
    b->in.product_offsets = nzt_malloc((size_t)(nnz + 1) * sizeof(int32_t));
    b->in.row_products = nzt_malloc((size_t)(rows + 1) * sizeof(int32_t));
    b->in.dup_cols = nzt_malloc((size_t)(products + 1) * sizeof(int32_t));
}

static void buffers_free(buffers_t *b) {
    free(b->a_values);
    free(b->dup_values);
    free(b->in.product_offsets);
    free(b->in.row_products);
    free(b->in.dup_cols);
}

static void test_figure(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *B = NULL;
    figure_matrices(ctx, &A, &B);

    /* Repeat counts: nnz of B's row for each nonzero of A (figure 3.1: 1 2 2 2 2 2). */
    int64_t repeat[6];
    const int64_t repeat_expected[] = {1, 2, 2, 2, 2, 2};
    nzi_hyspmm_repeat_counts(A, B, 0, 6, repeat);
    for (int k = 0; k < 6; k++)
        NZT_CHECK(repeat[k] == repeat_expected[k], "repeat[%d] = %lld", k, (long long)repeat[k]);
    nzi_hyspmm_repeat_counts(A, B, 4, 6, repeat);
    NZT_CHECK(repeat[0] == 2 && repeat[1] == 2, "repeat counts of a sub-range");

    /* The whole matrix as one panel: duplicated B in multiplication order. */
    const int32_t offsets_expected[] = {0, 1, 3, 5, 7, 9, 11};
    const int32_t rows_expected[] = {0, 1, 7, 9, 11};
    const int32_t cols_expected[] = {0, 1, 3, 0, 1, 1, 3, 1, 3, 1, 3};
    const double values_expected[] = {1, 2, 3, 4, 5, 6, 7, 6, 7, 2, 3};
    buffers_t b;
    buffers_alloc(&b, 4, 6, 11);
    nzi_spgemm_panel_t whole = {0, 4, 11, 11};
    nzi_hyspmm_preprocess(A, B, &whole, NULL, 2, &b.in);
    for (int k = 0; k <= 6; k++)
        NZT_CHECK(b.in.product_offsets[k] == offsets_expected[k], "product_offsets[%d] = %d", k,
                  b.in.product_offsets[k]);
    for (int i = 0; i <= 4; i++)
        NZT_CHECK(b.in.row_products[i] == rows_expected[i], "row_products[%d] = %d", i,
                  b.in.row_products[i]);
    for (int p = 0; p < 11; p++) {
        NZT_CHECK(b.in.dup_cols[p] == cols_expected[p], "dup_cols[%d] = %d", p, b.in.dup_cols[p]);
        NZT_CHECK(b.dup_values[p] == values_expected[p], "dup_values[%d] = %g", p,
                  b.dup_values[p]);
    }
    for (int k = 0; k < 6; k++)
        NZT_CHECK(b.a_values[k] == 10.0 * (k + 1), "a_values[%d] = %g", k, b.a_values[k]);

    /* A panel of rows 1..2: offsets restart at 0 inside the panel. */
    const int32_t sub_offsets[] = {0, 2, 4, 6, 8};
    const int32_t sub_rows[] = {0, 6, 8};
    const int32_t sub_cols[] = {1, 3, 0, 1, 1, 3, 1, 3};
    const double sub_values[] = {2, 3, 4, 5, 6, 7, 6, 7};
    nzi_spgemm_panel_t middle = {1, 3, 8, 8};
    memset(b.in.dup_cols, 0xff, 11 * sizeof(int32_t));
    nzi_hyspmm_preprocess(A, B, &middle, NULL, 1, &b.in);
    for (int k = 0; k <= 4; k++)
        NZT_CHECK(b.in.product_offsets[k] == sub_offsets[k], "panel product_offsets[%d] = %d", k,
                  b.in.product_offsets[k]);
    for (int i = 0; i <= 2; i++)
        NZT_CHECK(b.in.row_products[i] == sub_rows[i], "panel row_products[%d] = %d", i,
                  b.in.row_products[i]);
    for (int p = 0; p < 8; p++)
        NZT_CHECK(b.in.dup_cols[p] == sub_cols[p] && b.dup_values[p] == sub_values[p],
                  "panel product %d: (%d, %g)", p, b.in.dup_cols[p], b.dup_values[p]);
    NZT_CHECK(b.in.dup_cols[8] == -1, "the panel wrote past its products");
    NZT_CHECK(b.a_values[0] == 20.0 && b.a_values[3] == 50.0, "panel a_values");
    buffers_free(&b);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
}

/* Panel split by the inequality, double values: per A entry 12 bytes, per product 36, per row
 * 24. Figure matrices: rows cost 72, 276, 108, 108 bytes (products 1, 6, 2, 2). */
static void test_split(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *B = NULL;
    nzi_hyspmm_sizes_t sizes;
    nzi_spgemm_panel_t *panels = NULL;
    int64_t count = 0;
    const int64_t products[] = {1, 6, 2, 2};
    figure_matrices(ctx, &A, &B);
    nzi_hyspmm_sizes(NZ_F64, &sizes);
    NZT_CHECK(sizes.per_a_nonzero == 12.0 && sizes.per_product == 36.0 && sizes.per_row == 24.0,
              "sizes %g %g %g", sizes.per_a_nonzero, sizes.per_product, sizes.per_row);
    nzi_hyspmm_sizes(NZ_F32, &sizes);
    NZT_CHECK(sizes.per_a_nonzero == 8.0 && sizes.per_product == 24.0, "f32 sizes");
    nzi_hyspmm_sizes(NZ_F64, &sizes);

    /* 0.9 x 800 / 2 = 360: rows 0-1 (348), rows 2-3 (216). */
    NZT_OK(ctx, nzi_hyspmm_split(ctx, A, products, &sizes, 800.0, 0.9, 2, 1000, &panels, &count));
    NZT_CHECK(count == 2, "count %lld", (long long)count);
    if (count == 2) {
        NZT_CHECK(panels[0].row_begin == 0 && panels[0].row_end == 2 && panels[0].products == 7,
                  "panel 0 [%lld, %lld) %lld", (long long)panels[0].row_begin,
                  (long long)panels[0].row_end, (long long)panels[0].products);
        NZT_CHECK(panels[1].row_begin == 2 && panels[1].row_end == 4 && panels[1].products == 4,
                  "panel 1");
    }
    nzi_free(ctx, panels);

    /* 0.9 x 620 / 2 = 279: row 1 (276) alone. */
    NZT_OK(ctx, nzi_hyspmm_split(ctx, A, products, &sizes, 620.0, 0.9, 2, 1000, &panels, &count));
    NZT_CHECK(count == 3 && panels[0].row_end == 1 && panels[1].row_end == 2 &&
                  panels[2].row_end == 4,
              "three panels expected, got %lld", (long long)count);
    nzi_free(ctx, panels);

    /* One slot doubles the room: 0.9 x 620 = 558 holds everything (564 does not: 72+276+108=456,
     * + 108 = 564 > 558). */
    NZT_OK(ctx, nzi_hyspmm_split(ctx, A, products, &sizes, 620.0, 0.9, 1, 1000, &panels, &count));
    NZT_CHECK(count == 2 && panels[0].row_end == 3, "one slot: %lld panels", (long long)count);
    nzi_free(ctx, panels);

    /* 0.9 x 400 / 2 = 180 < 276: row 1 cannot fit, refused with its size. */
    panels = NULL;
    nz_status_t s = nzi_hyspmm_split(ctx, A, products, &sizes, 400.0, 0.9, 2, 1000, &panels, &count);
    NZT_CHECK(s == NZ_ERR_DEVICE_OUT_OF_MEMORY, "status %d", (int)s);
    NZT_CHECK(strstr(nz_context_last_error(ctx), "row 1") != NULL &&
                  strstr(nz_context_last_error(ctx), "276") != NULL,
              "message: %s", nz_context_last_error(ctx));
    NZT_CHECK(panels == NULL, "no panels on failure");

    /* Product cap 3: a row over the cap gets a panel of its own. */
    NZT_OK(ctx, nzi_hyspmm_split(ctx, A, products, &sizes, 1e9, 0.9, 2, 3, &panels, &count));
    NZT_CHECK(count == 4, "cap: %lld panels", (long long)count);
    for (int64_t q = 0; q < count && count == 4; q++)
        NZT_CHECK(panels[q].row_begin == q && panels[q].row_end == q + 1, "cap panel %lld",
                  (long long)q);
    nzi_free(ctx, panels);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);

    /* No rows: one empty panel. */
    nz_matrix_t *E = NULL;
    const int64_t zero = 0;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &E, 0, 5, NZ_I64, &zero, NULL, NZ_F64, NULL));
    NZT_OK(ctx, nzi_hyspmm_split(ctx, E, NULL, &sizes, 100.0, 0.9, 2, 10, &panels, &count));
    NZT_CHECK(count == 1 && panels[0].row_begin == 0 && panels[0].row_end == 0, "empty A");
    nzi_free(ctx, panels);
    nz_matrix_destroy(&E);
}

/* The ramp: 60 rows of 1..5 products in 6 panels of 10 rows; the first and last panels come back
 * in pieces of at most a third of their products (plus one row), the middle ones untouched, all
 * rows covered once, products kept; fewer than NZI_HYSPMM_RAMP_MIN_PANELS panels stay as they
 * are; an injected allocation failure leaves the list unchanged. */
static void test_ramp(nz_context_t *ctx) {
    int64_t products[60];
    nzi_spgemm_panel_t *panels = NULL;
    int64_t count = 6, total = 0;
    for (int i = 0; i < 60; i++) products[i] = 1 + (i * 7) % 5;
    for (int i = 0; i < 60; i++) total += products[i];
    NZT_CHECK(nzi_alloc_array(ctx, (void **)&panels, 6, sizeof *panels, "test") == NZ_SUCCESS,
              "alloc");
    for (int q = 0; q < 6; q++) {
        panels[q].row_begin = 10 * q;
        panels[q].row_end = 10 * q + 10;
        panels[q].products = 0;
        for (int i = 10 * q; i < 10 * q + 10; i++) panels[q].products += products[i];
        panels[q].c_nnz = panels[q].products;
    }
    const int64_t first = panels[0].products, last = panels[5].products;
    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 1));
    nzi_spgemm_panel_t *before = panels;
    NZT_CHECK(nzi_hyspmm_ramp(ctx, products, &panels, &count) == NZ_ERR_OUT_OF_MEMORY &&
                  panels == before && count == 6,
              "injected failure: list unchanged (%lld panels)", (long long)count);
    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
    NZT_OK(ctx, nzi_hyspmm_ramp(ctx, products, &panels, &count));
    NZT_CHECK(count > 6, "ramp: %lld panels", (long long)count);
    int64_t row = 0, sum = 0;
    for (int64_t q = 0; q < count; q++) {
        int64_t p = 0;
        for (int64_t i = panels[q].row_begin; i < panels[q].row_end; i++) p += products[i];
        NZT_CHECK(panels[q].row_begin == row && panels[q].row_end > row && panels[q].products == p &&
                      panels[q].c_nnz == p,
                  "panel %lld [%lld, %lld) products %lld (rows hold %lld)", (long long)q,
                  (long long)panels[q].row_begin, (long long)panels[q].row_end,
                  (long long)panels[q].products, (long long)p);
        const bool edge = panels[q].row_end <= 10 || panels[q].row_begin >= 50;
        if (edge)
            NZT_CHECK(panels[q].products <= (panels[q].row_end <= 10 ? first : last) / 3 + 5,
                      "edge piece %lld has %lld products", (long long)q,
                      (long long)panels[q].products);
        else
            NZT_CHECK(panels[q].row_end - panels[q].row_begin == 10, "middle panel %lld changed",
                      (long long)q);
        row = panels[q].row_end;
        sum += p;
    }
    NZT_CHECK(row == 60 && sum == total, "covered %lld rows, %lld products", (long long)row,
              (long long)sum);
    nzi_free(ctx, panels);

    count = NZI_HYSPMM_RAMP_MIN_PANELS - 1;
    NZT_CHECK(nzi_alloc_array(ctx, (void **)&panels, (size_t)count, sizeof *panels, "test") ==
                  NZ_SUCCESS,
              "alloc");
    for (int64_t q = 0; q < count; q++) {
        panels[q].row_begin = 10 * q;
        panels[q].row_end = 10 * q + 10;
        panels[q].products = panels[q].c_nnz = 30;
    }
    before = panels;
    NZT_OK(ctx, nzi_hyspmm_ramp(ctx, products, &panels, &count));
    NZT_CHECK(panels == before && count == NZI_HYSPMM_RAMP_MIN_PANELS - 1, "few panels: unchanged");
    nzi_free(ctx, panels);
}

/* The one splitter of every algorithm (nzi_spgemm_split) on the figure's rows: C entries from
 * row offsets (the hash path), per row, or the bound min(products, b_cols) (ESC); a product cap;
 * a row alone above the budget refused with its bytes. */
static void test_shared_split(nz_context_t *ctx) {
    const int64_t products[] = {1, 6, 2, 2}, c_offsets[] = {0, 1, 5, 5, 7}, c_rows[] = {1, 4, 0, 2};
    nzi_spgemm_split_input_t in;
    nzi_spgemm_panel_cost_t cost;
    nzi_spgemm_panel_t *panels = NULL;
    int64_t count = 0;
    memset(&in, 0, sizeof in);
    memset(&cost, 0, sizeof cost);
    in.c_offsets = c_offsets;
    in.rows = 4;
    in.b_cols = 5;
    in.who = "test";
    cost.per_output = 12.0; /* index + double */
    /* 5 entries a panel: rows 0-2 (5, the empty row 2 joins), row 3 (2) */
    NZT_OK(ctx, nzi_spgemm_split(ctx, &in, &cost, 60.0, &panels, &count));
    NZT_CHECK(count == 2 && panels[0].row_end == 3 && panels[0].c_nnz == 5 &&
                  panels[1].row_begin == 3 && panels[1].c_nnz == 2,
              "offsets: %lld panels", (long long)count);
    nzi_free(ctx, panels);
    in.c_offsets = NULL;
    in.c_row_nnz = c_rows;
    NZT_OK(ctx, nzi_spgemm_split(ctx, &in, &cost, 60.0, &panels, &count));
    NZT_CHECK(count == 2 && panels[0].row_end == 3, "per row: %lld panels", (long long)count);
    nzi_free(ctx, panels);
    /* the bound: min(products, 5) = 1, 5, 2, 2, costed per product too; cap 6 products */
    in.c_row_nnz = NULL;
    in.products = products;
    in.max_products = 6;
    cost.per_product = 1.0;
    NZT_OK(ctx, nzi_spgemm_split(ctx, &in, &cost, 1000.0, &panels, &count));
    NZT_CHECK(count == 3 && panels[0].row_end == 1 && panels[1].row_end == 2 &&
                  panels[1].products == 6 && panels[1].c_nnz == 5 && panels[2].products == 4,
              "bound and cap: %lld panels", (long long)count);
    nzi_free(ctx, panels);
    panels = NULL;
    /* row 1 alone costs 6 + 60 = 66 bytes */
    nz_status_t s = nzi_spgemm_split(ctx, &in, &cost, 65.0, &panels, &count);
    NZT_CHECK(s == NZ_ERR_DEVICE_OUT_OF_MEMORY && panels == NULL &&
                  strstr(nz_context_last_error(ctx), "(test): row 1 alone needs 66 bytes") != NULL,
              "refusal: %s", nz_context_last_error(ctx));
}

/* Random rectangular A, B: every panel's structure multiplied out row by row (dense row
 * accumulator) gives the same C as a direct Gustavson product. */
static void test_random(nz_context_t *ctx, uint64_t seed) {
    nz_matrix_t *A = NULL, *B = NULL;
    const int64_t m = 157, k = 91, n = 203;
    NZT_OK(ctx, nz_gen_random(ctx, &A, m, k, 6.0, seed, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &B, k, n, 5.0, seed + 1, NZ_F64));
    const int64_t *ao = A->host.csr.row_offsets, *bo = B->host.csr.row_offsets;
    const int32_t *ac = A->host.csr.col_indices, *bc = B->host.csr.col_indices;
    const double *av = A->host.csr.values, *bv = B->host.csr.values;
    int64_t *products = nzt_malloc((size_t)m * sizeof(int64_t)), total = 0;
    for (int64_t i = 0; i < m; i++) {
        products[i] = 0;
        for (int64_t q = ao[i]; q < ao[i + 1]; q++) products[i] += bo[ac[q] + 1] - bo[ac[q]];
        total += products[i];
    }
    nzi_hyspmm_sizes_t sizes;
    nzi_hyspmm_sizes(NZ_F64, &sizes);
    nzi_spgemm_panel_t *panels = NULL;
    int64_t count = 0;
    /* Room for about a tenth of the work per slot. */
    const double budget = 2.0 * (sizes.per_product * (double)total + sizes.per_row * (double)m +
                                 sizes.per_a_nonzero * (double)A->nnz) / 10.0 / 0.9;
    NZT_OK(ctx, nzi_hyspmm_split(ctx, A, products, &sizes, budget, 0.9, 2, INT32_MAX, &panels,
                                 &count));
    NZT_CHECK(count >= 8 && count <= 14, "%lld panels for a tenth of the work", (long long)count);

    buffers_t b, b2;
    buffers_alloc(&b, m, A->nnz, total);
    buffers_alloc(&b2, m, A->nnz, total);
    double *dense = nzt_malloc((size_t)n * sizeof(double)), *direct = nzt_malloc((size_t)n * sizeof(double));
    int64_t covered = 0, bad = 0;
    for (int64_t q = 0; q < count; q++) {
        const nzi_spgemm_panel_t *pq = &panels[q];
        NZT_CHECK(pq->row_begin == covered, "panels are consecutive");
        covered = pq->row_end;
        double bytes = 0.0;
        for (int64_t i = pq->row_begin; i < pq->row_end; i++)
            bytes += sizes.per_product * (double)products[i] + sizes.per_row +
                     sizes.per_a_nonzero * (double)(ao[i + 1] - ao[i]);
        NZT_CHECK(bytes <= 0.9 * budget / 2.0, "panel %lld breaks the inequality", (long long)q);
        /* the driver's way (the symbolic products, 3 threads) and the self-counting one (1
         * thread) must write the same bytes */
        nzi_hyspmm_preprocess(A, B, pq, products + pq->row_begin, 3, &b.in);
        nzi_hyspmm_preprocess(A, B, pq, NULL, 1, &b2.in);
        {
            const int64_t rows = pq->row_end - pq->row_begin, nnz = ao[pq->row_end] - ao[pq->row_begin];
            NZT_CHECK(memcmp(b.in.row_products, b2.in.row_products, (size_t)(rows + 1) * 4) == 0 &&
                          memcmp(b.in.product_offsets, b2.in.product_offsets, (size_t)(nnz + 1) * 4) == 0 &&
                          memcmp(b.a_values, b2.a_values, (size_t)nnz * sizeof(double)) == 0 &&
                          memcmp(b.in.dup_cols, b2.in.dup_cols, (size_t)pq->products * 4) == 0 &&
                          memcmp(b.dup_values, b2.dup_values, (size_t)pq->products * sizeof(double)) == 0,
                      "panel %lld: given and counted products differ (seed %llu)", (long long)q,
                      (unsigned long long)seed);
        }
        for (int64_t i = pq->row_begin; i < pq->row_end; i++) {
            const int64_t r = i - pq->row_begin, kb = ao[pq->row_begin];
            memset(dense, 0, (size_t)n * sizeof(double));
            memset(direct, 0, (size_t)n * sizeof(double));
            for (int64_t q2 = ao[i]; q2 < ao[i + 1]; q2++) {
                /* multiplication stage, as the GPU does it: a[k] * dup[p] over k's range */
                for (int32_t p = b.in.product_offsets[q2 - kb]; p < b.in.product_offsets[q2 - kb + 1]; p++) {
                    if (p < b.in.row_products[r] || p >= b.in.row_products[r + 1]) bad++;
                    dense[b.in.dup_cols[p]] += b.a_values[q2 - kb] * b.dup_values[p];
                }
                for (int64_t t = bo[ac[q2]]; t < bo[ac[q2] + 1]; t++) direct[bc[t]] += av[q2] * bv[t];
            }
            for (int64_t j = 0; j < n; j++)
                if (dense[j] != direct[j]) bad++;
        }
    }
    NZT_CHECK(covered == m, "panels cover %lld of %lld rows", (long long)covered, (long long)m);
    NZT_CHECK(bad == 0, "%lld mismatches between the structure and a direct product", (long long)bad);
    free(dense);
    free(direct);
    buffers_free(&b);
    buffers_free(&b2);
    free(products);
    nzi_free(ctx, panels);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
}

/* The host-stage bandwidth helpers: the bytes a panel's pre-processing writes (figure: 4 rows,
 * 6 nonzeros, 11 products, double: 6 x 12 + 4 + 5 x 4 + 11 x 12 = 228), and the reference copy
 * (it copies, and reports a positive rate). */
static void test_bandwidth_helpers(void) {
    const double bytes = nzi_hyspmm_input_bytes(NZ_F64, 4, 6, 11);
    NZT_CHECK(bytes == 228.0, "input bytes %g", bytes);
    NZT_CHECK(nzi_hyspmm_input_bytes(NZ_F32, 4, 6, 11) == 6 * 8 + 4 + 5 * 4 + 11 * 8,
              "f32 input bytes");
    const size_t n = (size_t)3 << 20;
    unsigned char *src = nzt_malloc(n), *dst = nzt_malloc(n);
    for (size_t i = 0; i < n; i++) {
        src[i] = (unsigned char)(i * 7 + 3);
        dst[i] = 0;
    }
    double rate = nzi_hyspmm_copy_rate(dst, src, n, 3);
    NZT_CHECK(rate > 0.0 && memcmp(dst, src, n) == 0, "copy rate %g", rate);
    rate = nzi_hyspmm_copy_rate(dst, src, 5, 4); /* fewer bytes than threads */
    NZT_CHECK(rate >= 0.0 && memcmp(dst, src, n) == 0, "tiny copy");
    /* nzi_parallel_memcpy_threads (the copy-out's copy): every byte, nothing past the end, any
     * thread count */
    const size_t lengths[] = {0, 1, ((size_t)1 << 20) - 1, (size_t)1 << 20, n - 17};
    for (int threads = 0; threads <= 5; threads++)
        for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
            memset(dst, 0xEE, n);
            nzi_parallel_memcpy_threads(dst, src, lengths[k], threads);
            size_t beyond = 0;
            for (size_t i = lengths[k]; i < n; i++) beyond += dst[i] != 0xEE;
            NZT_CHECK(memcmp(dst, src, lengths[k]) == 0 && beyond == 0,
                      "nzi_parallel_memcpy_threads of %zu bytes on %d threads: %zu bytes past the end",
                      lengths[k], threads, beyond);
        }
    free(src);
    free(dst);
}

/* The panel sizing rule: without rates the fixed max(total / 16, 2^20) (capped), with rates the
 * minimum of the pipeline-time model; hand-computed cases. */
static void test_panel_target(void) {
    const int64_t M = NZI_HYSPMM_MIN_PANEL_PRODUCTS, cap = NZI_HYSPMM_MAX_PANEL_PRODUCTS;
    NZT_CHECK(nzi_hyspmm_panel_target(0, 0.0, 0.0, 0.0, cap) == M, "no products: the floor");
    NZT_CHECK(nzi_hyspmm_panel_target(1000, 0.0, 0.0, 0.0, cap) == M, "few products: the floor");
    NZT_CHECK(nzi_hyspmm_panel_target(80 * M, 0.0, 0.0, 0.0, cap) == 5 * M, "total / 16");
    NZT_CHECK(nzi_hyspmm_panel_target(80 * cap, 0.0, 0.0, 0.0, cap) == cap, "capped");
    NZT_CHECK(nzi_hyspmm_panel_target(80 * cap, 0.0, 0.0, 0.0, 0) == 5 * cap, "no cap");
    NZT_CHECK(nzi_hyspmm_panel_target(80 * M, 1e9, 0.0, 1e-4, cap) == 5 * M,
              "one rate missing: the fixed rule");
    /* rates 1e9 and 1e9 products/s (2e-9 s per product at the edges), 1e-3 s per panel,
     * 2^32 products: sqrt(1e-3 x 2^32 / 2e-9) = sqrt(2^31 x 1e6), about 46341 x 1000 */
    int64_t p = nzi_hyspmm_panel_target((int64_t)1 << 32, 1e9, 1e9, 1e-3, cap);
    NZT_CHECK(p == (int64_t)sqrt(1e-3 * 4294967296.0 / 2e-9), "model optimum %lld", (long long)p);
    NZT_CHECK(p > 46340000 && p < 46342000, "model optimum about 4.634e7: %lld", (long long)p);
    /* a slower stage makes the edges dearer: smaller panels (more overlap) */
    const int64_t q = nzi_hyspmm_panel_target((int64_t)1 << 32, 1e8, 1e9, 1e-3, cap);
    NZT_CHECK(q < p && q >= M, "slower expansion: smaller panels (%lld < %lld)", (long long)q,
              (long long)p);
    /* a dearer panel: larger panels, still within the cap */
    NZT_CHECK(nzi_hyspmm_panel_target((int64_t)1 << 32, 1e9, 1e9, 1.0, cap) == cap,
              "large overhead: capped");
    NZT_CHECK(nzi_hyspmm_panel_target((int64_t)1 << 20, 1e12, 1e12, 1e-9, cap) == M,
              "tiny optimum: the floor");
}

/* Panels' rows collected and assembled into C; allocation failures leave nothing behind. */
static nz_status_t assemble(nz_context_t *ctx, nz_matrix_t **C) {
    nz_status_t status;
    nzi_spgemm_chunks_t chunks;
    const int32_t off0[] = {0, 2, 2}, cols0[] = {1, 4};
    const double vals0[] = {1.5, -2.0};
    const int32_t off1[] = {0, 0}, off2[] = {0, 3}, cols2[] = {0, 2, 3};
    const double vals2[] = {7.0, 8.0, 9.0};
    status = nzi_spgemm_chunks_init(ctx, &chunks, NZ_F64, 4, 5, 3);
    if (status < 0) return status;
    if ((status = nzi_spgemm_chunks_add(ctx, &chunks, 0, 2, off0, cols0, vals0)) >= 0 &&
        (status = nzi_spgemm_chunks_add(ctx, &chunks, 2, 3, off1, NULL, NULL)) >= 0 &&
        (status = nzi_spgemm_chunks_add(ctx, &chunks, 3, 4, off2, cols2, vals2)) >= 0)
        status = nzi_spgemm_chunks_finish(ctx, &chunks, C);
    nzi_spgemm_chunks_free(ctx, &chunks);
    return status;
}

static void test_chunks(nz_context_t *ctx) {
    nz_matrix_t *C = NULL;
    NZT_OK(ctx, assemble(ctx, &C));
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, C));
    const int64_t ro_expected[] = {0, 2, 2, 2, 5};
    const int32_t ci_expected[] = {1, 4, 0, 2, 3};
    const double v_expected[] = {1.5, -2.0, 7.0, 8.0, 9.0};
    for (int i = 0; i <= 4; i++) NZT_CHECK(ro[i] == ro_expected[i], "row offset %d", i);
    for (int q = 0; q < 5; q++)
        NZT_CHECK(ci[q] == ci_expected[q] && ((const double *)v)[q] == v_expected[q], "entry %d", q);
    nz_matrix_destroy(&C);

    nz_alloc_stats_t before, after;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
    int failures = 0;
    for (int64_t k = 1; k < 100; k++) {
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t s = assemble(ctx, &C);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        if (s == NZ_SUCCESS) {
            nz_matrix_destroy(&C);
            break;
        }
        failures++;
        NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY, "failure %lld: status %d", (long long)k, (int)s);
        NZT_CHECK(C == NULL, "C set on failure");
    }
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
    NZT_CHECK(failures >= 8, "only %d allocation points", failures);
    NZT_CHECK(after.live_blocks == before.live_blocks && after.live_bytes == before.live_bytes,
              "leak: %lld blocks", (long long)(after.live_blocks - before.live_blocks));
}

/* Panels large enough for the multi-threaded copies (nzi_parallel_memcpy splits above 8 MB):
 * three panels of 2.1 M + 7 entries each (odd sizes, so chunk edges fall mid-page), every
 * entry checked after the assembly. */
static void test_large_chunks(nz_context_t *ctx) {
    const int64_t per = 2100007, panels = 3;
    nzi_spgemm_chunks_t chunks;
    int32_t *cols = malloc((size_t)per * sizeof *cols);
    double *vals = malloc((size_t)per * sizeof *vals);
    NZT_CHECK(cols != NULL && vals != NULL, "out of host memory");
    if (cols == NULL || vals == NULL) goto done;
    NZT_OK(ctx, nzi_spgemm_chunks_init(ctx, &chunks, NZ_F64, panels, per, panels));
    for (int64_t q = 0; q < panels; q++) {
        const int32_t off[2] = {0, (int32_t)per};
        for (int64_t e = 0; e < per; e++) {
            cols[e] = (int32_t)e;
            vals[e] = (double)(q * per + e);
        }
        NZT_OK(ctx, nzi_spgemm_chunks_add(ctx, &chunks, q, q + 1, off, cols, vals));
    }
    nz_matrix_t *C = NULL;
    NZT_OK(ctx, nzi_spgemm_chunks_finish(ctx, &chunks, &C));
    nzi_spgemm_chunks_free(ctx, &chunks);
    if (C != NULL) {
        const int64_t *ro;
        const int32_t *ci;
        const void *v;
        NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ro, &ci, &v, C));
        int64_t bad = -1;
        for (int64_t k = 0; k < panels * per && bad < 0; k++)
            if (ci[k] != (int32_t)(k % per) || ((const double *)v)[k] != (double)k) bad = k;
        NZT_CHECK(bad < 0, "large panels: entry %lld wrong after assembly", (long long)bad);
        NZT_CHECK(ro[panels] == panels * per, "large panels: %lld entries", (long long)ro[panels]);
        nz_matrix_destroy(&C);
    }
done:
    free(cols);
    free(vals);
}

int main(int argc, char **argv) {
    nz_context_t *ctx = NULL;
    nzt_init(argc, argv);
    NZT_OK(ctx, nz_context_create(&ctx));
    test_figure(ctx);
    test_split(ctx);
    test_shared_split(ctx);
    test_ramp(ctx);
    test_bandwidth_helpers();
    test_panel_target();
    for (uint64_t s = 0; s < 3; s++) test_random(ctx, nzt_seed + s);
    test_chunks(ctx);
    test_large_chunks(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_hyspmm_host");
}
