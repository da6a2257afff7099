/* hyspmm.h: hySpMM's host pre-processing, panel split and device pipeline interface; panel output chunks. */
#ifndef NZI_HYSPMM_H
#define NZI_HYSPMM_H

#include "spgemm_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * hySpMM (Wu, Georgia State 2015) splits ESC's expansion into a CPU pre-processing stage and a
 * GPU element-wise multiplication. For a row panel [row_begin, row_end) of A the CPU builds the
 * multiplication-ordered structure (thesis section 3.1, figure 3.1):
 *   - for each nonzero a_ij of the panel its repeat count r = nnz(row j of B), kept here in
 *     prefix form: product_offsets[k] = sum of the repeat counts of the panel's nonzeros before
 *     k (k local to the panel, product_offsets[nnz] = products);
 *   - the duplicated B: row j of B copied to dup_cols / dup_values at product_offsets[k], so
 *     product p is a[k] * dup_values[p] with column dup_cols[p], read contiguously;
 *   - a_values: the panel's values of A (contiguous slice of A's values);
 *   - row_products: prefix sums of products per row of the panel (rows + 1 entries), the
 *     segments of the GPU's per-row (one-key) partial sort.
 * All indices are int32: a panel never holds more than NZI_HYSPMM_MAX_PANEL_PRODUCTS products.
 */

/* Upper limit of products in one panel: keeps the int32 offsets valid and the pinned staging
 * buffers (two slots, input and output) to a few GB of host memory. */
#define NZI_HYSPMM_MAX_PANEL_PRODUCTS ((int64_t)1 << 26)
/* Fraction of the budget the inequality may plan for (thesis eq. 3-5: 0.9 M). */
#define NZI_HYSPMM_BUDGET_FRACTION 0.9
/* Pipeline depth: panels in flight at once (double buffering; np in the thesis's eq. 5). */
#define NZI_HYSPMM_SLOTS 2

/* One panel's pre-processed input, in (pinned) host buffers sized for the largest panel. */
typedef struct nzi_hyspmm_input {
    void *a_values;            /* a_nnz values of A */
    int32_t *product_offsets;  /* a_nnz + 1: repeat counts in prefix form */
    int32_t *row_products;     /* rows + 1: first product of each row of the panel */
    int32_t *dup_cols;         /* products: duplicated B columns, in multiplication order */
    void *dup_values;          /* products: duplicated B values */
} nzi_hyspmm_input_t;

/* One panel's result in (pinned) host buffers: C's rows of the panel with local offsets. */
typedef struct nzi_hyspmm_output {
    int32_t *row_offsets;      /* rows + 1, local (row_offsets[0] = 0) */
    int32_t *col_indices;      /* c_nnz */
    void *values;              /* c_nnz */
    int32_t *c_nnz;            /* one int32: the panel's C entries */
} nzi_hyspmm_output_t;

/* Per-entry device bytes of the design (used by the split and by the unit test). */
typedef struct nzi_hyspmm_sizes {
    double per_a_nonzero;      /* a value + its product offset */
    double per_product;        /* duplicated B (col, value), sort buffers, C upper bound */
    double per_row;            /* row segment offsets, C's local row offsets, sort bookkeeping */
} nzi_hyspmm_sizes_t;
void nzi_hyspmm_sizes(nz_value_type_t vt, nzi_hyspmm_sizes_t *sizes);

/* Repeat counts of A's nonzeros k in [k_begin, k_end): repeat[k - k_begin] = nnz(row
 * col_indices[k] of B). */
void nzi_hyspmm_repeat_counts(const nz_matrix_t *A, const nz_matrix_t *B, int64_t k_begin,
                              int64_t k_end, int64_t *repeat);

/* Build panel `panel`'s input (the multiplication-ordered structure above) into `in`, whose
 * buffers hold at least the panel's sizes. OpenMP over rows (threads = 0: the default).
 * The caller guarantees panel->products <= INT32_MAX. */
void nzi_hyspmm_preprocess(const nz_matrix_t *A, const nz_matrix_t *B,
                           const nzi_spgemm_panel_t *panel, int threads, nzi_hyspmm_input_t *in);

/* Split A's rows into panels by the thesis's memory inequality (eq. 5, with exact per-panel
 * sizes instead of its dense upper bound):
 *     per_a_nonzero nnz_A(panel) + per_product products(panel) + per_row rows(panel)
 *         <= fraction x budget / slots,
 * and products(panel) <= max_products. products: per-row products of A B (A->rows entries).
 * A row that alone breaks the inequality is refused (NZ_ERR_DEVICE_OUT_OF_MEMORY, naming the
 * row and the bytes it needs). *panels from nzi_malloc; *count >= 1 (one empty panel when A has
 * no rows). O(rows). */
nz_status_t nzi_hyspmm_split(nz_context_t *ctx, const nz_matrix_t *A, const int64_t *products,
                             const nzi_hyspmm_sizes_t *sizes, double budget, double fraction,
                             int slots, int64_t max_products, nzi_spgemm_panel_t **panels,
                             int64_t *count);

/* ---- panel results collected on the host, assembled into C at the end (ESC and hySpMM) ---- */

typedef struct nzi_spgemm_chunks {
    nz_value_type_t value_type;
    int64_t rows, cols;
    int64_t *row_nnz;          /* rows: C entries per row, filled panel by panel */
    int64_t count, capacity;   /* chunks stored / allocated */
    int32_t **col_indices;     /* per chunk */
    void **values;             /* per chunk */
    int64_t *nnz;              /* per chunk */
} nzi_spgemm_chunks_t;

/* Prepare for up to `capacity` panels of C (rows x cols). On failure nothing is left allocated. */
nz_status_t nzi_spgemm_chunks_init(nz_context_t *ctx, nzi_spgemm_chunks_t *chunks,
                                   nz_value_type_t vt, int64_t rows, int64_t cols,
                                   int64_t capacity);
/* Copy one panel's rows [row_begin, row_end) of C: local_offsets has row_end - row_begin + 1
 * entries starting at 0, col_indices / values local_offsets[rows] entries. */
nz_status_t nzi_spgemm_chunks_add(nz_context_t *ctx, nzi_spgemm_chunks_t *chunks,
                                  int64_t row_begin, int64_t row_end,
                                  const int32_t *local_offsets, const int32_t *col_indices,
                                  const void *values);
/* Assemble C from the chunks (added in row order, covering all rows). */
nz_status_t nzi_spgemm_chunks_finish(nz_context_t *ctx, nzi_spgemm_chunks_t *chunks,
                                     nz_matrix_t **C);
void nzi_spgemm_chunks_free(nz_context_t *ctx, nzi_spgemm_chunks_t *chunks);

/* ---- the device side of the pipeline (src/cuda/spgemm_hyspmm.cu, CUDA builds only) --------- */

typedef struct nzi_hyspmm_device nzi_hyspmm_device_t;

/* Stage times of one panel, seconds (CUDA events on the panel's stream). */
typedef struct nzi_hyspmm_times {
    double h2d, multiply, d2h;
} nzi_hyspmm_times_t;

/* Device bytes nzi_hyspmm_device_create would hold for these sizes (CUB workspace included). */
nz_status_t nzi_hyspmm_device_bytes(nz_context_t *ctx, nz_value_type_t vt, int slots,
                                    int64_t max_rows, int64_t max_a_nnz, int64_t max_products,
                                    size_t *bytes);
/* Create the pipeline: `slots` CUDA streams, and per slot device buffers and pinned host
 * input / output buffers sized for panels of at most max_rows rows, max_a_nnz nonzeros of A
 * and max_products products. *device_bytes receives the device memory it holds. */
nz_status_t nzi_hyspmm_device_create(nz_context_t *ctx, nzi_hyspmm_device_t **dev,
                                     nz_value_type_t vt, int slots, int64_t max_rows,
                                     int64_t max_a_nnz, int64_t max_products,
                                     size_t *device_bytes);
void nzi_hyspmm_device_destroy(nz_context_t *ctx, nzi_hyspmm_device_t **dev);
/* The pinned buffers of a slot: the CPU writes the input, reads the output. */
nzi_hyspmm_input_t *nzi_hyspmm_slot_input(nzi_hyspmm_device_t *dev, int slot);
nzi_hyspmm_output_t *nzi_hyspmm_slot_output(nzi_hyspmm_device_t *dev, int slot);
/* Queue on the slot's stream: H2D of the input, multiplication, per-row sort, compression, and
 * the D2H of C's row offsets and entry count. Returns at once. */
nz_status_t nzi_hyspmm_enqueue(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                               int64_t rows, int64_t a_nnz, int64_t products);
/* Wait for the slot's entry count, then queue the D2H of C's entries. Returns the count. */
nz_status_t nzi_hyspmm_fetch(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                             int64_t *c_nnz);
/* Wait until the slot's output is in host memory; the panel's stage times. */
nz_status_t nzi_hyspmm_wait(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                            nzi_hyspmm_times_t *times);

#ifdef __cplusplus
}
#endif

#endif /* NZI_HYSPMM_H */
