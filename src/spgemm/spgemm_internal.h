/* spgemm_internal.h: the contract every SpGEMM algorithm implements, and the helpers they share. */
#ifndef NZI_SPGEMM_INTERNAL_H
#define NZI_SPGEMM_INTERNAL_H

#include "nzi.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Algorithm entry points
 * ----------------------
 * Every algorithm computes C = A B with the same signature and contract. The dispatcher
 * (spgemm.c, nz_spgemm) has already checked, so an algorithm may assume:
 *   - A (m x k) and B (k x n) are host CSR matrices (nz_matrix_t, format NZ_FORMAT_CSR, location
 *     NZ_HOST) of ctx with the same value type, A->cols == B->rows, sorted columns without
 *     duplicates (the library's CSR invariant);
 *   - opt is never NULL and opt->alg is the algorithm being run (never NZ_SPGEMM_AUTO);
 *   - info is never NULL and zeroed; the dispatcher sets info->alg and info->seconds (wall
 *     time of the whole call) itself; the algorithm sets info->products (the exact count of
 *     scalar multiplications) and fills the rest it can (panels >= 1, symbolic / numeric /
 *     transfer seconds, stage_seconds_sum); the dispatcher measures info->peak_device_bytes (the
 *     high-water mark of the context's device bytes during the call, less those held before);
 *   - GPU algorithms are called only when ctx is bound to a device (ctx->cuda != NULL).
 * Exception: nzi_spgemm_hash also takes A and B as device CSR matrices (int32 or int64 row
 * offsets; the dispatcher sends device operands nowhere else) and then returns a device C
 * (int64 row offsets), in core only.
 * On success *C is a new host CSR matrix (rows m, cols n, sorted columns, no explicit
 * duplicates; numerically cancelled entries are kept as explicit zeros, like every structural
 * product). On failure *C is left untouched and everything the algorithm allocated is freed.
 * Errors carry a message naming the algorithm ("nz_spgemm (hash): ...").
 *
 * Symbols: nzi_spgemm_cpu always exists. nzi_spgemm_hash (src/cuda/spgemm_hash.cu) and
 * nzi_spgemm_esc (src/cuda/spgemm_esc.cu) exist only in CUDA builds (NZ_HAVE_CUDA); the
 * dispatcher references them only under #ifdef NZ_HAVE_CUDA. nzi_spgemm_hyspmm (src/spgemm/
 * hyspmm*.c with src/cuda/spgemm_hyspmm.cu) is likewise referenced only under NZ_HAVE_CUDA, so
 * its host files must compile without CUDA but need not define it there.
 */
typedef nz_status_t (*nzi_spgemm_fn)(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                                     const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                                     nz_spgemm_info_t *info);

nz_status_t nzi_spgemm_cpu(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                           const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                           nz_spgemm_info_t *info);
nz_status_t nzi_spgemm_hash(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                            const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                            nz_spgemm_info_t *info);
nz_status_t nzi_spgemm_esc(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                           const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                           nz_spgemm_info_t *info);
nz_status_t nzi_spgemm_hyspmm(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                              const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                              nz_spgemm_info_t *info);

/* ---- shared helpers (src/spgemm/spgemm_panels.c unless noted) ------------------------------ */

/* Products per row of A B: products[i] = sum over a_ij != 0 of nnz(row j of B), for rows
 * [row_begin, row_end) (products[0] belongs to row_begin). products may be NULL (count only).
 * *total (may be NULL) receives their sum. All in int64 with overflow checks (NZ_ERR_OVERFLOW,
 * message naming the row). OpenMP over rows; O(nnz of A's rows). */
nz_status_t nzi_spgemm_count_products(nz_context_t *ctx, const nz_matrix_t *A,
                                      const nz_matrix_t *B, int64_t row_begin, int64_t row_end,
                                      int64_t *products, int64_t *total);

/* The device-memory budget of a GPU SpGEMM in bytes: opt->gpu_memory_limit when non-zero,
 * else the device's free memory (cudaMemGetInfo) less a safety margin of 1/16 for the runtime
 * and fragmentation; never more than the free memory in either case. Defined in
 * src/cuda/spgemm_hash.cu (NZ_ERR_NO_DEVICE in builds without CUDA, from spgemm_panels.c). */
nz_status_t nzi_spgemm_device_budget(nz_context_t *ctx, const nz_spgemm_options_t *opt,
                                     size_t *budget);

/* Row panels: [row_begin, row_end) ranges of A processed one after another. */
typedef struct nzi_spgemm_panel {
    int64_t row_begin, row_end;
    int64_t products;   /* products of the panel's rows */
    int64_t c_nnz;      /* the panel's C entries, or an upper bound (see the splitter) */
} nzi_spgemm_panel_t;

/* The cost model of one panel, in bytes: fixed + per_row x rows + per_product x products
 * + per_output x c_nnz. Algorithms choose the coefficients for their own intermediate (ESC:
 * per_product = index + value + key bytes; hash: per_output = index + value bytes, ...). */
typedef struct nzi_spgemm_panel_cost {
    double fixed, per_row, per_product, per_output;
} nzi_spgemm_panel_cost_t;

/* Split rows [0, rows) into consecutive panels, greedily as long as possible, each costing at
 * most `budget` bytes under `cost`. products: per-row products (rows entries, required).
 * c_row_nnz: per-row C entries (exact, from a symbolic phase) or NULL, in which case the bound
 * min(products, B's columns) is used. A single row that alone exceeds the budget is refused
 * (NZ_ERR_DEVICE_OUT_OF_MEMORY naming the row and the bytes it needs). *panels is allocated with
 * nzi_malloc (free with nzi_free); *count >= 1 (one empty panel when rows == 0). O(rows). */
nz_status_t nzi_spgemm_split_panels(nz_context_t *ctx, const int64_t *products,
                                    const int64_t *c_row_nnz, int64_t rows, int64_t b_cols,
                                    const nzi_spgemm_panel_cost_t *cost, size_t budget,
                                    nzi_spgemm_panel_t **panels, int64_t *count);

/* A new host CSR C (rows x cols) whose row offsets are the prefix sums of row_nnz (rows
 * entries, int64) and whose index and value arrays have exactly the total size, uninitialised.
 * NZ_ERR_OVERFLOW if the sum overflows. */
nz_status_t nzi_spgemm_alloc_output(nz_context_t *ctx, nz_matrix_t **C, nz_value_type_t vt,
                                    int64_t rows, int64_t cols, const int64_t *row_nnz);

#ifdef __cplusplus
}
#endif

#endif /* NZI_SPGEMM_INTERNAL_H */
