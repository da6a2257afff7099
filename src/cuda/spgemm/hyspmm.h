/* hyspmm.h: hySpMM's host pre-processing, panel split and device pipeline interface; panel output chunks. */
#ifndef NZI_HYSPMM_H
#define NZI_HYSPMM_H

#include "hyspmm_device.h"

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
 * buffers hold at least the panel's sizes: every OpenMP thread writes its rows' part of every
 * array (A's values, product offsets, duplicated B) straight into `in` (pinned upload buffers in
 * the pipeline), with no intermediate copy. row_products: the panel's products per row (rows
 * entries, from the symbolic count) or NULL (counted here, one more pass over A's rows).
 * threads = 0: the default. The caller guarantees panel->products <= INT32_MAX. */
void nzi_hyspmm_preprocess(const nz_matrix_t *A, const nz_matrix_t *B,
                           const nzi_spgemm_panel_t *panel, const int64_t *row_products,
                           int threads, nzi_hyspmm_input_t *in);
/* Bytes a panel's pre-processing writes (A's values, product offsets, row segments, duplicated
 * B), for its bandwidth. */
double nzi_hyspmm_input_bytes(nz_value_type_t vt, int64_t rows, int64_t a_nnz, int64_t products);
/* Bytes per second of a plain host copy of `bytes` (at least 1) from src to dst with `threads`
 * OpenMP threads (0: the default), each copying a contiguous part: the reference the host stages
 * are compared with, measured on the caller's buffers. */
double nzi_hyspmm_copy_rate(void *dst, const void *src, size_t bytes, int threads);

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

/* Panels are aimed at no more than 1/NZI_HYSPMM_MIN_PANELS of the products (but at least
 * NZI_HYSPMM_MIN_PANEL_PRODUCTS), so a product that fits the budget in one piece still goes
 * through the pipeline in several and the stages can overlap. 16 rather than 8: a context's
 * first call (no measured rates yet) allocates the pinned staging for these panels, and
 * cudaMallocHost runs at about 3 GB/s (0.66 s of FE 64^3's 0.77 s first call with 8). */
#define NZI_HYSPMM_MIN_PANELS 16
#define NZI_HYSPMM_MIN_PANEL_PRODUCTS ((int64_t)1 << 20)

/* Products per pipeline panel (the cap handed to nzi_hyspmm_split, which still applies the
 * memory inequality on top: bounded memory does not depend on this choice). Without measured
 * rates (expand_rate or multiply_rate <= 0, or overhead_seconds <= 0): the fixed rule
 * max(total / NZI_HYSPMM_MIN_PANELS, NZI_HYSPMM_MIN_PANEL_PRODUCTS). With rates (products per
 * second of the host expansion and of the GPU multiply, e.g. timed on a first panel) and a fixed
 * cost per panel (overhead_seconds): the pipeline's time is about
 *     total / min(rates) + P (1 / expand_rate + 1 / multiply_rate) + overhead x total / P
 * (the slowest stage paces the steady state; the first panel's expansion and the last panel's
 * multiply do not overlap anything; each panel pays the fixed cost), least at
 *     P = sqrt(overhead x total / (1 / expand_rate + 1 / multiply_rate)),
 * which is taken, not below NZI_HYSPMM_MIN_PANEL_PRODUCTS. Either way at most max_panel
 * (when > 0). Pure; O(1). */
int64_t nzi_hyspmm_panel_target(int64_t total, double expand_rate, double multiply_rate,
                                double overhead_seconds, int64_t max_panel);

/* Ramp the pipeline up and down: the first and the last panel of *panels (when there are at
 * least NZI_HYSPMM_RAMP_MIN_PANELS) are split again by rows into pieces of about
 * 1/NZI_HYSPMM_RAMP_PIECES of their products, so the stages that cannot overlap anything (the
 * first panel's expansion, the last panel's GPU stages and copy-out) are short. The pieces are
 * no larger than the panel they come from, so they fit its memory bound and the slots. *panels
 * is replaced (nzi_malloc), *count updated; unchanged on failure. O(rows of the two panels). */
#define NZI_HYSPMM_RAMP_MIN_PANELS 4
#define NZI_HYSPMM_RAMP_PIECES 3
nz_status_t nzi_hyspmm_ramp(nz_context_t *ctx, const int64_t *products,
                            nzi_spgemm_panel_t **panels, int64_t *count);

#ifdef __cplusplus
}
#endif

#endif /* NZI_HYSPMM_H */
