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
 * thread and the copy engine brings panel p - 1's C back (run_pipeline). See docs/SPGEMM.md for
 * what differs from the thesis.
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
    const int64_t k_begin = a_offsets[row_begin], a_nnz = a_offsets[panel->row_end] - k_begin;
    int32_t *row_products = in->row_products, *product_offsets = in->product_offsets;
    int32_t *dup_cols = in->dup_cols;
    char *dup_values = (char *)in->dup_values, *in_a_values = (char *)in->a_values;
#ifdef _OPENMP
    const int nthreads = threads > 0 ? threads : omp_get_max_threads();
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
#ifdef _OPENMP
    const int nthreads = threads > 0 ? threads : omp_get_max_threads();
    const size_t chunk = (bytes + (size_t)nthreads - 1) / (size_t)nthreads;
#pragma omp parallel for num_threads(nthreads) schedule(static, 1)
    for (int t = 0; t < nthreads; t++) {
        const size_t begin = (size_t)t * chunk;
        if (begin < bytes)
            memcpy((char *)dst + begin, (const char *)src + begin,
                   bytes - begin < chunk ? bytes - begin : chunk);
    }
#else
    (void)threads;
    memcpy(dst, src, bytes);
#endif
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

/* ---- the pipeline driver (CUDA builds) ------------------------------------------------------ */

#ifdef NZ_HAVE_CUDA

/* Largest number of products of one row hySpMM accepts (the int32 offsets of a panel). */
#define HYSPMM_MAX_ROW_PRODUCTS ((int64_t)1 << 30)

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

/* Stage totals of a call, seconds; bytes the host stages wrote. */
typedef struct pipeline_times {
    double expand, h2d, multiply, d2h, copy_out;
    double expand_bytes, copy_out_bytes;
} pipeline_times_t;

/* Pre-process panel q into its slot's pinned input (all threads) and queue it on the GPU. */
static nz_status_t start_panel(nz_context_t *ctx, nzi_hyspmm_device_t *dev, const nz_matrix_t *A,
                               const nz_matrix_t *B, const nzi_spgemm_panel_t *panels,
                               const int64_t *products, int64_t q, int slots, int threads,
                               pipeline_times_t *pt) {
    const nzi_spgemm_panel_t *panel = &panels[q];
    const int64_t *a_offsets = A->host.csr.row_offsets;
    const int64_t rows = panel->row_end - panel->row_begin;
    const int64_t a_nnz = a_offsets[panel->row_end] - a_offsets[panel->row_begin];
    const int slot = (int)(q % slots);
    const double t = nzi_wtime();
    nzi_hyspmm_preprocess(A, B, panel, products + panel->row_begin, threads,
                          nzi_hyspmm_slot_input(dev, slot));
    pt->expand += nzi_wtime() - t;
    pt->expand_bytes += nzi_hyspmm_input_bytes(A->value_type, rows, a_nnz, panel->products);
    return nzi_hyspmm_enqueue(ctx, dev, slot, rows, a_nnz, panel->products);
}

/* Panel q's C: wait until it is in the slot's pinned output, then copy it into the chunks (all
 * threads). */
static nz_status_t finish_panel(nz_context_t *ctx, nzi_hyspmm_device_t *dev,
                                const nzi_spgemm_panel_t *panels, int64_t q, int slots,
                                nzi_spgemm_chunks_t *chunks, int64_t c_nnz, pipeline_times_t *pt) {
    const int slot = (int)(q % slots);
    const nzi_hyspmm_output_t *out = nzi_hyspmm_slot_output(dev, slot);
    nzi_hyspmm_times_t times;
    NZI_TRY(nzi_hyspmm_wait(ctx, dev, slot, &times));
    pt->h2d += times.h2d;
    pt->multiply += times.multiply;
    pt->d2h += times.d2h;
    const double t = nzi_wtime();
    NZI_TRY(nzi_spgemm_chunks_add(ctx, chunks, panels[q].row_begin, panels[q].row_end,
                                  out->row_offsets, out->col_indices, out->values));
    pt->copy_out += nzi_wtime() - t;
    pt->copy_out_bytes += (double)c_nnz * (double)(sizeof(int32_t) + nzi_value_size(chunks->value_type));
    return NZ_SUCCESS;
}

/* The pipeline (thesis section 3.3.1, its two levels) over NZI_HYSPMM_SLOTS slots. Before the
 * loop panel 0 is pre-processed and queued; iteration p then
 *   fetch(p - 1)        waits for panel p-1's entry count and queues the D2H of its C,
 *   start(p + 1)        pre-processes panel p+1 on every CPU thread into its slot's pinned input
 *                       and queues its H2D and GPU stages (its own stream),
 *   finish(p - 1)       waits for panel p-1's C and copies it into the chunks (all threads),
 * so while the CPU pre-processes p+1, the GPU multiplies / sorts / compresses p (queued one
 * iteration earlier) and the copy engine drains C of p-1; then the CPU's copy of p-1 overlaps
 * the H2D of p+1 and the GPU stages of p and p+1. Slot reuse: panel p+1 takes the slot of
 * p+1-3 = p-2, finished in iteration p-1. Every stage is timed (host wall clock or CUDA
 * events); stage_seconds_sum adds them all, so seconds / stage_seconds_sum < 1 measures the
 * overlap. */
static nz_status_t run_pipeline(nz_context_t *ctx, nzi_hyspmm_device_t *dev, const nz_matrix_t *A,
                                const nz_matrix_t *B, const nzi_spgemm_panel_t *panels,
                                int64_t count, const int64_t *products, int slots, int threads,
                                nzi_spgemm_chunks_t *chunks, pipeline_times_t *pt) {
    int64_t c_nnz = 0;
    if (count > 0) NZI_TRY(start_panel(ctx, dev, A, B, panels, products, 0, slots, threads, pt));
    for (int64_t p = 0; p <= count; p++) {
        if (p >= 1) NZI_TRY(nzi_hyspmm_fetch(ctx, dev, (int)((p - 1) % slots), &c_nnz));
        if (p + 1 < count)
            NZI_TRY(start_panel(ctx, dev, A, B, panels, products, p + 1, slots, threads, pt));
        if (p >= 1) NZI_TRY(finish_panel(ctx, dev, panels, p - 1, slots, chunks, c_nnz, pt));
    }
    return NZ_SUCCESS;
}

/* The host's own copy rate on the pipeline's pinned buffers (slot 0's duplicated B into slot
 * 1's, the size of the largest expansion up to HYSPMM_COPY_PROBE bytes): the reference for the
 * host stages' bandwidth, measured in the same call. */
#define HYSPMM_COPY_PROBE ((size_t)256 << 20)
static double host_copy_rate(nzi_hyspmm_device_t *dev, nz_value_type_t vt, int64_t max_products,
                             int slots, int threads) {
    size_t bytes = (size_t)max_products * nzi_value_size(vt);
    if (slots < 2 || bytes == 0) return 0.0;
    if (bytes > HYSPMM_COPY_PROBE) bytes = HYSPMM_COPY_PROBE;
    return nzi_hyspmm_copy_rate(nzi_hyspmm_slot_input(dev, 1)->dup_values,
                                nzi_hyspmm_slot_input(dev, 0)->dup_values, bytes, threads);
}

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
    pipeline_times_t pt;
    size_t budget = 0, device_bytes = 0;
    double t, t_start = nzi_wtime(), assemble = 0.0;
    nz_matrix_t *M = NULL;

    memset(&chunks, 0, sizeof chunks);
    memset(&pt, 0, sizeof pt);

    /* Symbolic part: products per row (all threads), the budget, the panels, the slots (device
     * blocks and pinned buffers allocated once for the whole call). */
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
        /* no rates measured yet: the fixed rule (nzi_hyspmm_panel_target) */
        const int64_t target =
            nzi_hyspmm_panel_target(total, 0.0, 0.0, 0.0, NZI_HYSPMM_MAX_PANEL_PRODUCTS);
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

    NZI_CHECK(run_pipeline(ctx, dev, A, B, panels, count, products, slots, opt->threads, &chunks,
                           &pt));
    t = nzi_wtime();
    NZI_CHECK(nzi_spgemm_chunks_finish(ctx, &chunks, &M));
    assemble = nzi_wtime() - t;

    nzi_spgemm_profile_stage(profile, "symbolic", info->symbolic_seconds);
    nzi_spgemm_profile_stage(profile, "expand", pt.expand);
    nzi_spgemm_profile_stage(profile, "h2d", pt.h2d);
    nzi_spgemm_profile_stage(profile, "multiply", pt.multiply);
    nzi_spgemm_profile_stage(profile, "d2h", pt.d2h);
    nzi_spgemm_profile_stage(profile, "copy-out", pt.copy_out);
    nzi_spgemm_profile_stage(profile, "assemble", assemble);
    if (profile != NULL && (profile->flags & NZ_SPGEMM_PROFILE_STAGES)) {
        profile->expand_bytes_per_second = pt.expand > 0.0 ? pt.expand_bytes / pt.expand : 0.0;
        profile->copy_out_bytes_per_second =
            pt.copy_out > 0.0 ? pt.copy_out_bytes / pt.copy_out : 0.0;
        profile->host_copy_bytes_per_second =
            host_copy_rate(dev, vt, max_products, slots, opt->threads);
    }
    info->numeric_seconds = pt.multiply;
    info->transfer_seconds = pt.h2d + pt.d2h;
    info->stage_seconds_sum = info->symbolic_seconds + pt.expand + pt.h2d + pt.multiply + pt.d2h +
                              pt.copy_out + assemble;
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
