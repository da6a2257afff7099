/* hyspmm_host.c: hySpMM's CPU side: pre-processing, the memory-inequality panel split, the pipeline driver. */
#include "hyspmm.h"

#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/*
 * hySpMM, after Wu (Georgia State, 2015), "Optimizing Sparse Matrix-Matrix Multiplication on a
 * Heterogeneous CPU-GPU Platform", chapter 3. The five stages and where they run here:
 *   1. pre-processing (CPU, OpenMP): the multiplication-ordered structure of a row panel (repeat
 *      counts of A's nonzeros and B's rows duplicated in multiplication order; section 3.1,
 *      algorithm 2), written straight into pinned staging buffers;
 *   2. transfer (copy engine): H2D of the structure, later D2H of the panel's C;
 *   3. multiplication (GPU): product p = a[k(p)] * dup_values[p], contiguous (algorithm 3);
 *   4. partial sort (GPU): a one-key sort of each row's products by column (section 3.2);
 *   5. compression (GPU): duplicates within a row summed.
 * Panels come from the memory inequality (section 3.3.2) and go through a three-slot pipeline
 * (section 3.3.1): while the GPU multiplies panel p, the CPU pre-processes panel p + 1 on every
 * thread and the copy engine brings panel p - 1's C back (hyspmm_pipeline.c). See
 * docs/dev/SPGEMM.md for what differs from the thesis.
 */

void nzi_hyspmm_sizes(nz_value_type_t vt, nzi_hyspmm_sizes_t *sizes) {
    const double vs = (double)nzi_value_size(vt);
    /* A's value and its int32 product offset. */
    sizes->per_a_nonzero = vs + 4.0;
    /* Duplicated B (col + value), the sort's alternate buffers (col + value), and C's entries
     * (col + value) sized for the worst case of no duplicates. */
    sizes->per_product = 3.0 * (4.0 + vs);
    /* Row segment offsets and C's local row offsets (int32 each), plus the segmented sort's
     * per-segment bookkeeping (CUB's large/small segment partition, about 16 bytes). */
    sizes->per_row = 4.0 + 4.0 + 16.0;
}

void nzi_hyspmm_repeat_counts(const nz_matrix_t *A, const nz_matrix_t *B, int64_t k_begin,
                              int64_t k_end, int64_t *repeat) {
    const int32_t *a_cols = A->host.csr.col_indices;
    const int64_t *b_offsets = B->host.csr.row_offsets;
    for (int64_t k = k_begin; k < k_end; k++) {
        const int32_t j = a_cols[k];
        repeat[k - k_begin] = b_offsets[j + 1] - b_offsets[j];
    }
}

/* Software prefetch for the expansion of A's nonzero k: B's rows are gathered from random places
 * on graph-like products, one short row (tens of bytes) per nonzero of A, so the expansion waits
 * on memory latency unless several rows are in flight. Two stages ahead of the copy: the row
 * offsets of nonzero k + 2D's B row, then the columns and values of nonzero k + D's row (whose
 * offsets arrived meanwhile). Rows past `k_end` (the panel's end) are not touched. D = 32 is the
 * form measured on the H100 (random 1M x 8: expansion alone 57% of the host's copy rate). */
#define HYSPMM_PREFETCH_DISTANCE 32
static inline void prefetch_b_row(const int32_t *a_cols, const int64_t *b_offsets,
                                  const int32_t *b_cols, const char *b_values, size_t vs,
                                  int64_t k, int64_t k_end) {
#if defined(__GNUC__)
    const int64_t far = k + 2 * HYSPMM_PREFETCH_DISTANCE, near = k + HYSPMM_PREFETCH_DISTANCE;
    if (far < k_end) __builtin_prefetch(&b_offsets[a_cols[far]], 0, 0);
    if (near < k_end) {
        const int32_t j = a_cols[near];
        const int64_t start = b_offsets[j], end = b_offsets[j + 1];
        if (end > start) {
            __builtin_prefetch(b_cols + start, 0, 0);
            __builtin_prefetch(b_cols + end - 1, 0, 0);
            __builtin_prefetch(b_values + (size_t)start * vs, 0, 0);
            __builtin_prefetch(b_values + (size_t)end * vs - 1, 0, 0);
        }
    }
#else
    (void)a_cols;
    (void)b_offsets;
    (void)b_cols;
    (void)b_values;
    (void)vs;
    (void)k;
    (void)k_end;
#endif
}

/* Algorithm 2 of the thesis, by rows: the rows' products (given, or counted) are scanned into
 * the row segments, then, for every nonzero a_ij in row order, row j of B goes to the next free
 * place. Each row's destinations are known from the scan, so rows are independent: one parallel
 * region, dynamic schedule (row costs vary with the B rows they touch), every thread writing its
 * rows' A values, product offsets and duplicated B rows straight into `in`. The irregular
 * accesses of SpGEMM (gathering rows of B) all happen here, on the CPU with its large caches.
 * Cost: O(nnz_A(panel)) look-ups plus the copy of products(panel) entries of B. */
void nzi_hyspmm_preprocess(const nz_matrix_t *A, const nz_matrix_t *B,
                           const nzi_spgemm_panel_t *panel, const int64_t *row_products_in,
                           int threads, nzi_hyspmm_input_t *in) {
    const int64_t *a_offsets = A->host.csr.row_offsets, *b_offsets = B->host.csr.row_offsets;
    const int32_t *a_cols = A->host.csr.col_indices, *b_cols = B->host.csr.col_indices;
    const size_t vs = nzi_value_size(A->value_type);
    const char *a_values = (const char *)A->host.csr.values;
    const char *b_values = (const char *)B->host.csr.values;
    const int64_t row_begin = panel->row_begin, rows = panel->row_end - panel->row_begin;
    const int64_t k_begin = a_offsets[row_begin], k_end = a_offsets[panel->row_end];
    const int64_t a_nnz = k_end - k_begin;
    int32_t *row_products = in->row_products, *product_offsets = in->product_offsets;
    int32_t *dup_cols = in->dup_cols;
    char *dup_values = (char *)in->dup_values, *in_a_values = (char *)in->a_values;
#ifdef _OPENMP
    const int nthreads = nzi_resolve_threads(threads);
#else
    (void)threads;
#endif

#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads)
#endif
    {
        if (row_products_in == NULL) {
#ifdef _OPENMP
#pragma omp for schedule(static, 4096)
#endif
            for (int64_t i = 0; i < rows; i++) {
                int64_t count = 0;
                for (int64_t k = a_offsets[row_begin + i]; k < a_offsets[row_begin + i + 1]; k++)
                    count += b_offsets[a_cols[k] + 1] - b_offsets[a_cols[k]];
                row_products[i + 1] = (int32_t)count;
            }
        }
#ifdef _OPENMP
#pragma omp single
#endif
        { /* O(rows), serial: the offsets fit int32 (panel->products <= INT32_MAX) */
            row_products[0] = 0;
            for (int64_t i = 0; i < rows; i++)
                row_products[i + 1] = row_products[i] + (int32_t)(row_products_in != NULL
                                                                      ? row_products_in[i]
                                                                      : row_products[i + 1]);
        } /* implicit barrier: the segments are complete */
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 64)
#endif
        for (int64_t i = 0; i < rows; i++) {
            const int64_t k0 = a_offsets[row_begin + i], k1 = a_offsets[row_begin + i + 1];
            int64_t place = row_products[i];
            if (k1 > k0)
                memcpy(in_a_values + (size_t)(k0 - k_begin) * vs, a_values + (size_t)k0 * vs,
                       (size_t)(k1 - k0) * vs);
            for (int64_t k = k0; k < k1; k++) {
                prefetch_b_row(a_cols, b_offsets, b_cols, b_values, vs, k, k_end);
                const int32_t j = a_cols[k];
                const int64_t start = b_offsets[j], length = b_offsets[j + 1] - start;
                product_offsets[k - k_begin] = (int32_t)place;
                if (length > 0) {
                    memcpy(dup_cols + place, b_cols + start, (size_t)length * sizeof(int32_t));
                    memcpy(dup_values + (size_t)place * vs, b_values + (size_t)start * vs,
                           (size_t)length * vs);
                }
                place += length;
            }
        }
    }
    product_offsets[a_nnz] = row_products[rows];
}

double nzi_hyspmm_input_bytes(nz_value_type_t vt, int64_t rows, int64_t a_nnz, int64_t products) {
    const double vs = (double)nzi_value_size(vt), index = (double)sizeof(int32_t);
    return (double)a_nnz * (vs + index) + index + (double)(rows + 1) * index +
           (double)products * (index + vs);
}

double nzi_hyspmm_copy_rate(void *dst, const void *src, size_t bytes, int threads) {
    const double t0 = nzi_wtime();
    nzi_parallel_memcpy_threads(dst, src, bytes, threads);
    const double t = nzi_wtime() - t0;
    return t > 0.0 ? (double)bytes / t : 0.0;
}

/* Thesis eq. 5 with the exact sizes of each panel: the panel's A entries, its products (the
 * duplicated B and everything the GPU derives from it) and its rows must fit in
 * fraction x budget / slots bytes, since `slots` panels are resident at once. The shared
 * splitter (nzi_spgemm_split) under that cost; a single row that exceeds the product cap still
 * gets a panel of its own (the cap only bounds staging sizes); one that breaks the inequality
 * cannot be split by rows and is refused. O(rows). */
nz_status_t nzi_hyspmm_split(nz_context_t *ctx, const nz_matrix_t *A, const int64_t *products,
                             const nzi_hyspmm_sizes_t *sizes, double budget, double fraction,
                             int slots, int64_t max_products, nzi_spgemm_panel_t **panels,
                             int64_t *count) {
    nzi_spgemm_split_input_t in;
    nzi_spgemm_panel_cost_t cost;
    memset(&in, 0, sizeof in);
    memset(&cost, 0, sizeof cost);
    in.products = products;
    in.a_offsets = A->host.csr.row_offsets;
    in.rows = A->rows;
    in.b_cols = INT64_MAX; /* c_nnz: the products themselves (no duplicates, the upper bound) */
    in.max_products = max_products;
    in.who = "hyspmm";
    cost.per_row = sizes->per_row;
    cost.per_a_nonzero = sizes->per_a_nonzero;
    cost.per_product = sizes->per_product;
    return nzi_spgemm_split(ctx, &in, &cost, fraction * budget / (double)(slots > 0 ? slots : 1),
                            panels, count);
}

int64_t nzi_hyspmm_panel_target(int64_t total, double expand_rate, double multiply_rate,
                                double overhead_seconds, int64_t max_panel) {
    int64_t target = total / NZI_HYSPMM_MIN_PANELS;
    if (expand_rate > 0.0 && multiply_rate > 0.0 && overhead_seconds > 0.0 && total > 0) {
        const double edge = 1.0 / expand_rate + 1.0 / multiply_rate; /* seconds per product */
        const double best = sqrt(overhead_seconds * (double)total / edge);
        target = best >= (double)INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)best;
    }
    if (target < NZI_HYSPMM_MIN_PANEL_PRODUCTS) target = NZI_HYSPMM_MIN_PANEL_PRODUCTS;
    if (max_panel > 0 && target > max_panel) target = max_panel;
    return target;
}


/* Panel `panel` split again by rows under a cap of `cap` products into *pieces (nzi_malloc). */
static nz_status_t resplit(nz_context_t *ctx, const int64_t *products,
                           const nzi_spgemm_panel_t *panel, int64_t cap,
                           nzi_spgemm_panel_t **pieces, int64_t *count) {
    nzi_spgemm_split_input_t in;
    nzi_spgemm_panel_cost_t cost;
    const int64_t b = panel->row_begin;
    memset(&in, 0, sizeof in);
    memset(&cost, 0, sizeof cost); /* the panel met the budget already: only the cap splits */
    in.products = products + b;
    in.rows = panel->row_end - b;
    in.b_cols = INT64_MAX;
    in.max_products = cap;
    in.who = "hyspmm";
    NZI_TRY(nzi_spgemm_split(ctx, &in, &cost, 1.0, pieces, count));
    for (int64_t i = 0; i < *count; i++) {
        (*pieces)[i].row_begin += b;
        (*pieces)[i].row_end += b;
    }
    return NZ_SUCCESS;
}

nz_status_t nzi_hyspmm_ramp(nz_context_t *ctx, const int64_t *products,
                            nzi_spgemm_panel_t **panels, int64_t *count) {
    nz_status_t status = NZ_SUCCESS;
    nzi_spgemm_panel_t *head = NULL, *tail = NULL, *list = NULL;
    int64_t n_head = 0, n_tail = 0, n = *count;
    const nzi_spgemm_panel_t *old = *panels;
    if (n < NZI_HYSPMM_RAMP_MIN_PANELS) return NZ_SUCCESS;
    NZI_CHECK(resplit(ctx, products, &old[0],
                      old[0].products / NZI_HYSPMM_RAMP_PIECES + 1, &head, &n_head));
    NZI_CHECK(resplit(ctx, products, &old[n - 1],
                      old[n - 1].products / NZI_HYSPMM_RAMP_PIECES + 1, &tail, &n_tail));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&list, (size_t)(n - 2 + n_head + n_tail), sizeof *list,
                              "nz_spgemm (hyspmm): row panels"));
    memcpy(list, head, (size_t)n_head * sizeof *list);
    memcpy(list + n_head, old + 1, (size_t)(n - 2) * sizeof *list);
    memcpy(list + n_head + n - 2, tail, (size_t)n_tail * sizeof *list);
    nzi_free(ctx, *panels);
    *panels = list;
    *count = n - 2 + n_head + n_tail;
    list = NULL;
cleanup:
    nzi_free(ctx, list);
    nzi_free(ctx, tail);
    nzi_free(ctx, head);
    return status;
}
