/* hyspmm_host.c: hySpMM's CPU side: pre-processing, the memory-inequality panel split, the pipeline driver. */
#include "hyspmm.h"

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
 * Panels come from the memory inequality (section 3.3.2) and go through a two-deep pipeline
 * (section 3.3.1): while the GPU multiplies panel p, the CPU pre-processes panel p + 1 and the
 * copy engine brings panel p - 1's C back. See docs/SPGEMM.md for what differs from the thesis.
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

/* Algorithm 2 of the thesis, by rows: one pass counts each row's products (a scan gives the row
 * segments), a second copies, for every nonzero a_ij in row order, row j of B to the next free
 * place. Each row's destinations are known from the scan, so rows are independent (OpenMP,
 * dynamic schedule: row costs vary with the B rows they touch). The irregular accesses of
 * SpGEMM (gathering rows of B) all happen here, on the CPU with its large caches.
 * Cost: O(nnz_A(panel)) look-ups plus the copy of products(panel) entries of B. */
void nzi_hyspmm_preprocess(const nz_matrix_t *A, const nz_matrix_t *B,
                           const nzi_spgemm_panel_t *panel, int threads, nzi_hyspmm_input_t *in) {
    const int64_t *a_offsets = A->host.csr.row_offsets, *b_offsets = B->host.csr.row_offsets;
    const int32_t *a_cols = A->host.csr.col_indices, *b_cols = B->host.csr.col_indices;
    const size_t vs = nzi_value_size(A->value_type);
    const char *b_values = (const char *)B->host.csr.values;
    const int64_t row_begin = panel->row_begin, rows = panel->row_end - panel->row_begin;
    const int64_t k_begin = a_offsets[row_begin], a_nnz = a_offsets[panel->row_end] - k_begin;
    int32_t *row_products = in->row_products, *product_offsets = in->product_offsets;
    int32_t *dup_cols = in->dup_cols;
    char *dup_values = (char *)in->dup_values;
#ifdef _OPENMP
    const int nthreads = threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
#endif

    if (a_nnz > 0)
        memcpy(in->a_values, (const char *)A->host.csr.values + (size_t)k_begin * vs,
               (size_t)a_nnz * vs);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static, 4096)
#endif
    for (int64_t i = 0; i < rows; i++) {
        int64_t count = 0;
        for (int64_t k = a_offsets[row_begin + i]; k < a_offsets[row_begin + i + 1]; k++)
            count += b_offsets[a_cols[k] + 1] - b_offsets[a_cols[k]];
        row_products[i + 1] = (int32_t)count;
    }
    row_products[0] = 0;
    for (int64_t i = 0; i < rows; i++) row_products[i + 1] += row_products[i];

#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 64)
#endif
    for (int64_t i = 0; i < rows; i++) {
        int64_t place = row_products[i];
        for (int64_t k = a_offsets[row_begin + i]; k < a_offsets[row_begin + i + 1]; k++) {
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
    product_offsets[a_nnz] = row_products[rows];
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

/* ---- the pipeline driver (CUDA builds) ------------------------------------------------------ */

#ifdef NZ_HAVE_CUDA

/* Largest number of products of one row hySpMM accepts (the int32 offsets of a panel). */
#define HYSPMM_MAX_ROW_PRODUCTS ((int64_t)1 << 30)
/* Panels are aimed at no more than 1/HYSPMM_MIN_PANELS of the products (but at least
 * HYSPMM_MIN_PANEL_PRODUCTS), so a product that fits the budget in one piece still goes through
 * the pipeline in several and the stages can overlap. */
#define HYSPMM_MIN_PANELS 8
#define HYSPMM_MIN_PANEL_PRODUCTS ((int64_t)1 << 20)

/* Largest rows, nonzeros of A and products over the panels (the slots' sizes). */
static void panel_maxima(const nz_matrix_t *A, const nzi_spgemm_panel_t *panels, int64_t count,
                         int64_t *max_rows, int64_t *max_a_nnz, int64_t *max_products) {
    const int64_t *a_offsets = A->host.csr.row_offsets;
    *max_rows = *max_a_nnz = *max_products = 0;
    for (int64_t q = 0; q < count; q++) {
        const int64_t rows = panels[q].row_end - panels[q].row_begin;
        const int64_t a_nnz = a_offsets[panels[q].row_end] - a_offsets[panels[q].row_begin];
        if (rows > *max_rows) *max_rows = rows;
        if (a_nnz > *max_a_nnz) *max_a_nnz = a_nnz;
        if (panels[q].products > *max_products) *max_products = panels[q].products;
    }
}

/* The pipeline (thesis section 3.3.1), two slots, iteration p:
 *   enqueue(p)            H2D of panel p's structure + GPU stages, on stream p % 2
 *   fetch(p - 1)          wait for panel p-1's entry count, queue its D2H on stream (p-1) % 2
 *   preprocess(p + 1)     CPU, into the pinned input of slot (p+1) % 2 (panel p-1's H2D is
 *                         done: its count came back after it)
 *   wait(p - 1), copy     panel p-1's C into host chunks
 * so the CPU prepares p + 1 while the GPU multiplies p and the copy engine returns p - 1.
 * Every stage is timed (host wall clock or CUDA events); stage_seconds_sum adds them all, so
 * seconds / stage_seconds_sum < 1 measures the overlap. */
nz_status_t nzi_spgemm_hyspmm(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                              const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                              nz_spgemm_info_t *info, nz_spgemm_profile_t *profile) {
    nz_status_t status = NZ_SUCCESS;
    const nz_value_type_t vt = A->value_type;
    const int64_t rows = A->rows;
    const int slots = NZI_HYSPMM_SLOTS;
    int64_t *products = NULL, total = 0, count = 0, max_row = 0;
    int64_t max_rows = 0, max_a_nnz = 0, max_products = 0;
    nzi_spgemm_panel_t *panels = NULL;
    nzi_spgemm_chunks_t chunks;
    nzi_hyspmm_device_t *dev = NULL;
    nzi_hyspmm_sizes_t sizes;
    size_t budget = 0, device_bytes = 0;
    double t, t_start = nzi_wtime(), stage_sum = 0.0;
    double prep_seconds = 0.0, h2d = 0.0, d2h = 0.0, multiply = 0.0;
    nz_matrix_t *M = NULL;

    memset(&chunks, 0, sizeof chunks);

    /* Symbolic part: products per row, the budget, the panels. */
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&products, (size_t)rows, sizeof(int64_t),
                              "nz_spgemm (hyspmm): products per row"));
    NZI_CHECK(nzi_spgemm_count_products(ctx, A, B, 0, rows, products, &total));
    info->products = total;
    for (int64_t i = 0; i < rows; i++)
        if (products[i] > max_row) max_row = products[i];
    if (max_row > HYSPMM_MAX_ROW_PRODUCTS) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                           "nz_spgemm (hyspmm): a row of A B has %lld products, more than the "
                           "%lld one panel can index",
                           (long long)max_row, (long long)HYSPMM_MAX_ROW_PRODUCTS);
        goto cleanup;
    }
    NZI_CHECK(nzi_device_memory_budget(ctx, opt->gpu_memory_limit, &budget));
    nzi_hyspmm_sizes(vt, &sizes);
    {
        int64_t target = total / HYSPMM_MIN_PANELS;
        if (target < HYSPMM_MIN_PANEL_PRODUCTS) target = HYSPMM_MIN_PANEL_PRODUCTS;
        if (target > NZI_HYSPMM_MAX_PANEL_PRODUCTS) target = NZI_HYSPMM_MAX_PANEL_PRODUCTS;
        /* The inequality's per-entry sizes leave out CUB's workspace; if the exact device bytes
         * of the chosen slots exceed the budget, split again against a proportionally smaller
         * budget (a few rounds at most). */
        double plan_budget = (double)budget;
        for (int round = 0;; round++) {
            size_t exact = 0;
            nzi_free(ctx, panels);
            panels = NULL;
            NZI_CHECK(nzi_hyspmm_split(ctx, A, products, &sizes, plan_budget,
                                       NZI_HYSPMM_BUDGET_FRACTION, slots, target, &panels,
                                       &count));
            panel_maxima(A, panels, count, &max_rows, &max_a_nnz, &max_products);
            NZI_CHECK(nzi_hyspmm_device_bytes(ctx, vt, slots, max_rows, max_a_nnz, max_products,
                                              &exact));
            if (exact <= budget) break;
            if (round == 4) {
                status = nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                                   "nz_spgemm (hyspmm): the pipeline needs %zu bytes of device "
                                   "memory, more than the budget of %zu bytes",
                                   exact, budget);
                goto cleanup;
            }
            plan_budget *= 0.95 * (double)budget / (double)exact;
        }
    }
    info->panels = count;
    NZI_CHECK(nzi_spgemm_chunks_init(ctx, &chunks, vt, rows, B->cols, count));
    NZI_CHECK(nzi_hyspmm_device_create(ctx, &dev, vt, slots, max_rows, max_a_nnz, max_products,
                                       &device_bytes));
    info->symbolic_seconds = nzi_wtime() - t_start;
    stage_sum += info->symbolic_seconds;

    t = nzi_wtime();
    nzi_hyspmm_preprocess(A, B, &panels[0], opt->threads, nzi_hyspmm_slot_input(dev, 0));
    prep_seconds += nzi_wtime() - t;
    for (int64_t p = 0; p <= count; p++) {
        const int slot = (int)(p % slots), prev = (int)((p + slots - 1) % slots);
        if (p < count) {
            const nzi_spgemm_panel_t *q = &panels[p];
            const int64_t *a_offsets = A->host.csr.row_offsets;
            NZI_CHECK(nzi_hyspmm_enqueue(ctx, dev, slot, q->row_end - q->row_begin,
                                         a_offsets[q->row_end] - a_offsets[q->row_begin],
                                         q->products));
        }
        if (p >= 1) {
            int64_t c_nnz = 0;
            NZI_CHECK(nzi_hyspmm_fetch(ctx, dev, prev, &c_nnz));
        }
        if (p + 1 < count) {
            t = nzi_wtime();
            nzi_hyspmm_preprocess(A, B, &panels[p + 1], opt->threads,
                                  nzi_hyspmm_slot_input(dev, (int)((p + 1) % slots)));
            prep_seconds += nzi_wtime() - t;
        }
        if (p >= 1) {
            nzi_hyspmm_times_t times;
            const nzi_hyspmm_output_t *out = nzi_hyspmm_slot_output(dev, prev);
            NZI_CHECK(nzi_hyspmm_wait(ctx, dev, prev, &times));
            h2d += times.h2d;
            multiply += times.multiply;
            d2h += times.d2h;
            t = nzi_wtime();
            NZI_CHECK(nzi_spgemm_chunks_add(ctx, &chunks, panels[p - 1].row_begin,
                                            panels[p - 1].row_end, out->row_offsets,
                                            out->col_indices, out->values));
            stage_sum += nzi_wtime() - t;
        }
    }
    t = nzi_wtime();
    NZI_CHECK(nzi_spgemm_chunks_finish(ctx, &chunks, &M));
    stage_sum += nzi_wtime() - t + prep_seconds + h2d + multiply + d2h;

    nzi_spgemm_profile_stage(profile, "symbolic", info->symbolic_seconds);
    nzi_spgemm_profile_stage(profile, "expand", prep_seconds);
    nzi_spgemm_profile_stage(profile, "h2d", h2d);
    nzi_spgemm_profile_stage(profile, "multiply", multiply);
    nzi_spgemm_profile_stage(profile, "d2h", d2h);
    info->numeric_seconds = multiply;
    info->transfer_seconds = h2d + d2h;
    info->stage_seconds_sum = stage_sum;
    *C = M;
    M = NULL;
cleanup:
    nzi_hyspmm_device_destroy(ctx, &dev);
    nzi_spgemm_chunks_free(ctx, &chunks);
    nzi_free(ctx, panels);
    nzi_free(ctx, products);
    (void)device_bytes;
    return status;
}

#endif /* NZ_HAVE_CUDA */
