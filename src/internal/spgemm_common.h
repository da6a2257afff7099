/* spgemm_common.h: what the SpGEMM algorithms of the CPU and CUDA backends share. */
#ifndef NZI_SPGEMM_COMMON_H
#define NZI_SPGEMM_COMMON_H

#include "nzi.h"
#include "backend.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * What the SpGEMM algorithms of both backends share: their contract, the row panels, the panel
 * results collected on the host, and the device budget. The public entry (src/ops/spgemm.c)
 * checks the operands and reaches an algorithm through the backend table (backend.h:
 * nzi_spgemm_entry_t, nz_cpu_spgemm, nz_cuda_spgemm); the algorithms live in their backends
 * (src/cpu/spgemm_cpu.c; src/cuda/spgemm/: hash, ESC, hySpMM with its host side
 * hyspmm_host.c and hyspmm_pipeline.c). The helpers below are host code of the layer under
 * both backends (src/spgemm/spgemm_panels.c, spgemm_chunks.c), which calls only src/format and
 * src/core; the budget is the device runtime's (src/cuda/runtime/device_budget.cu, stubbed in
 * src/core/cuda_absent.c). Calls go downward only: ops -> backend (cpu | cuda) -> this layer.
 *
 * Algorithm entry points
 * ----------------------
 * Every algorithm computes C = A B with the signature nzi_spgemm_entry_t and the same contract.
 * The entry (nz_spgemm, nz_spgemm_profile) has already checked, so an algorithm may assume:
 *   - A (m x k) and B (k x n) are host CSR matrices (nz_matrix_t, format NZ_FORMAT_CSR, location
 *     NZ_HOST) of ctx with the same value type, A->cols == B->rows, sorted columns without
 *     duplicates (the library's CSR invariant);
 *   - opt is never NULL and opt->alg is the algorithm being run (never NZ_SPGEMM_AUTO);
 *   - info is never NULL and zeroed; the entry sets info->alg and info->seconds (wall time of
 *     the whole call) itself; the algorithm sets info->products (the exact count of scalar
 *     multiplications) and fills the rest it can (panels >= 1, symbolic / numeric / transfer
 *     seconds, stage_seconds_sum); the entry measures info->peak_device_bytes (the high-water
 *     mark of the context's device bytes during the call, less those held before);
 *   - profile is NULL, or zeroed with alg and flags set by the entry (which also sets
 *     wall_seconds); the algorithm appends its stages (nzi_spgemm_profile_stage) when flags has
 *     NZ_SPGEMM_PROFILE_STAGES and fills what else it measures;
 *   - GPU algorithms are called only when ctx is bound to a device (ctx->cuda != NULL).
 * Exception: nzi_spgemm_hash also takes A and B as device CSR matrices (int32 or int64 row
 * offsets; the entry sends device operands nowhere else) and then returns a device C (int64 row
 * offsets), in core only.
 * On success *C is a new host CSR matrix (rows m, cols n, sorted columns, no explicit
 * duplicates; numerically cancelled entries are kept as explicit zeros, like every structural
 * product). On failure *C is left untouched and everything the algorithm allocated is freed.
 * Errors carry a message naming the algorithm ("nz_spgemm (hash): ...").
 *
 * Symbols: nzi_spgemm_cpu (src/cpu) always exists. nzi_spgemm_hash (hash_driver.cu) and
 * nzi_spgemm_esc (esc.cu) exist only in CUDA builds; nzi_spgemm_hyspmm (hyspmm_pipeline.c, host
 * C compiled in every build) runs only with them. The backend tables reach them only through
 * nz_cuda_spgemm (src/cuda/spgemm/spgemm_cuda.cu), which src/core/cuda_absent.c replaces in
 * builds without CUDA.
 */

/* Byte sizes of the index and offset types every algorithm moves (named, never a bare 4 or 8). */
#define NZI_INDEX_BYTES ((size_t)sizeof(int32_t))   /* a column index, a local (panel) offset */
#define NZI_OFFSET_BYTES ((size_t)sizeof(int64_t))  /* a global row offset, a product offset */

/* The algorithms (the signature nzi_spgemm_entry_t, backend.h; the contract above). */
nz_status_t nzi_spgemm_cpu(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                           const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                           nz_spgemm_info_t *info, nz_spgemm_profile_t *profile);
nz_status_t nzi_spgemm_hash(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                            const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                            nz_spgemm_info_t *info, nz_spgemm_profile_t *profile);
nz_status_t nzi_spgemm_esc(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                           const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                           nz_spgemm_info_t *info, nz_spgemm_profile_t *profile);
nz_status_t nzi_spgemm_hyspmm(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                              const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                              nz_spgemm_info_t *info, nz_spgemm_profile_t *profile);

/* ---- the CPU algorithms' threads (src/cpu/spgemm_cpu.c, spgemm_reuse_cpu.c) ---------------- */

/* The calling thread's number in the enclosing OpenMP parallel region (0 without OpenMP). */
static inline int nzi_cpu_thread_id(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* The threads of a CPU product: `requested` when positive, else the context's, clamped to the
 * online CPUs; 1 without OpenMP. */
static inline int nzi_cpu_spgemm_threads(nz_context_t *ctx, int requested) {
#ifdef _OPENMP
    int t = nzi_resolve_threads(requested > 0 ? requested : ctx->threads);
    return t < 1 ? 1 : t;
#else
    (void)ctx;
    (void)requested;
    return 1;
#endif
}

/* Append a stage (name: a string literal) to the profile; NULL profile or a full list: nothing. */
void nzi_spgemm_profile_stage(nz_spgemm_profile_t *profile, const char *name, double seconds);

/* ---- the device budget (src/cuda/runtime/device_budget.cu) ------------------------------- */

/* The device-memory budget of a call in bytes: `limit` when non-zero, else the device's free
 * memory (cudaMemGetInfo) less a margin of 1/NZI_DEVICE_BUDGET_MARGIN for the runtime and
 * fragmentation; never more than that in either case. NZ_ERR_NO_DEVICE in builds without CUDA
 * (src/core/cuda_absent.c). */
#define NZI_DEVICE_BUDGET_MARGIN 16
nz_status_t nzi_device_memory_budget(nz_context_t *ctx, size_t limit, size_t *budget);

/* ---- products and row panels (src/spgemm/spgemm_panels.c) ------------------------------ */

/* Products per row of A B: products[i] = sum over a_ij != 0 of nnz(row j of B), for rows
 * [row_begin, row_end) (products[0] belongs to row_begin). products may be NULL (count only).
 * *total (may be NULL) receives their sum. All in int64 with overflow checks (NZ_ERR_OVERFLOW,
 * message naming the row). OpenMP over rows; O(nnz of A's rows). */
nz_status_t nzi_spgemm_count_products(nz_context_t *ctx, const nz_matrix_t *A,
                                      const nz_matrix_t *B, int64_t row_begin, int64_t row_end,
                                      int64_t *products, int64_t *total);

/* Row panels: [row_begin, row_end) ranges of A processed one after another. */
typedef struct nzi_spgemm_panel {
    int64_t row_begin, row_end;
    int64_t products;   /* products of the panel's rows */
    int64_t c_nnz;      /* the panel's C entries, or an upper bound (see the splitter) */
} nzi_spgemm_panel_t;

/* The cost model of one panel, in bytes: fixed + per_row x rows + per_a_nonzero x nnz_A(rows)
 * + per_product x products + per_output x c_nnz. Algorithms choose the coefficients for their
 * own intermediate (ESC: per_product = 2 x (key + value); hash: per_output = index + value;
 * hySpMM: the thesis's inequality, per_a_nonzero, per_product and per_row). */
typedef struct nzi_spgemm_panel_cost {
    double fixed, per_row, per_a_nonzero, per_product, per_output;
} nzi_spgemm_panel_cost_t;

/* What to split: rows [0, rows) with their products (NULL: none counted), C entries per row
 * (exact, from a symbolic phase; or C's row offsets, rows + 1 entries, in c_offsets; or neither:
 * the bound min(products, b_cols)), A's row offsets (needed only when cost->per_a_nonzero != 0),
 * and a cap on a panel's products (0: none; a single row above the cap still gets a panel of its
 * own). `who` names the algorithm in messages ("hash", "esc", ...). */
typedef struct nzi_spgemm_split_input {
    const int64_t *products;
    const int64_t *c_row_nnz;
    const int64_t *c_offsets;
    const int64_t *a_offsets;
    int64_t rows, b_cols;
    int64_t max_products;
    const char *who;
} nzi_spgemm_split_input_t;

/* The one row-panel splitter of every algorithm: consecutive panels, greedily as long as
 * possible, each costing at most `budget` bytes under `cost`. A row that alone exceeds the budget
 * is refused (NZ_ERR_DEVICE_OUT_OF_MEMORY naming the row and the bytes it needs). *panels from
 * nzi_malloc (free with nzi_free); *count >= 1 (one empty panel when rows == 0). Two passes
 * (count, then fill), O(rows). */
nz_status_t nzi_spgemm_split(nz_context_t *ctx, const nzi_spgemm_split_input_t *in,
                             const nzi_spgemm_panel_cost_t *cost, double budget,
                             nzi_spgemm_panel_t **panels, int64_t *count);

/* A new host CSR C (rows x cols) whose row offsets are the prefix sums of row_nnz (rows
 * entries, int64) and whose index and value arrays have exactly the total size, uninitialised.
 * NZ_ERR_OVERFLOW if the sum overflows. */
nz_status_t nzi_spgemm_alloc_output(nz_context_t *ctx, nz_matrix_t **C, nz_value_type_t vt,
                                    int64_t rows, int64_t cols, const int64_t *row_nnz);

/* ---- panel results collected on the host, assembled into C (src/spgemm/spgemm_chunks.c) ---- */

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

#ifdef __cplusplus
}
#endif

#endif /* NZI_SPGEMM_COMMON_H */
