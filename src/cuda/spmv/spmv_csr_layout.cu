/* spmv_csr_layout.cu: CSR plans that run on their own layout of A: column panels, columns
 * renumbered by degree, 16-bit column steps (issue 19; flags NZ_PLAN_COLUMN_PANELS,
 * NZ_PLAN_REORDER, NZ_PLAN_COMPRESS_INDICES). */
#include "cuda_internal.h"

#include <cub/cub.cuh>

/*
 * Why: on gather-bound matrices the SpMV's cost is the gathers of x, not the matrix stream. When
 * x is larger than L2 (random 4M x 16 f64: 32 MB against the H100's 50 MB, shared with ~0.85 GB of
 * matrix data streaming through), most gathers miss. Three layouts attack that, each built once
 * at plan creation on the device and owned by the plan (A itself is never modified):
 *
 *  - Column panels: A = A_0 + A_1 + ... + A_{P-1} by column ranges [p w, (p + 1) w), with w
 *    chosen so that w entries of x fill at most a sixth of L2. Each panel is a CSR matrix of the
 *    same rows (copied: same total nonzeros, P (rows + 1) offsets); the plan runs the chosen
 *    algorithm on each in turn, the first with the caller's beta, the rest with beta = 1, so
 *    while a panel streams only its slice of x is gathered and it stays resident. Cost per SpMV:
 *    P - 1 more passes over y and the offsets. Sums are formed panel by panel (a different order
 *    of additions from the unsplit plan), reproducibly.
 *  - Reordering: columns renumbered by descending nonzero count (a stable radix sort, so ties
 *    keep their order and the result is deterministic); the plan keeps the renumbered column
 *    indices and perm (new -> old) and gathers x_new[j] = x[perm[j]] before each SpMV. On
 *    power-law graphs the heavily read columns of x then share cache lines. Rows keep their
 *    order, so y needs no permutation. The products and their order per row are the original
 *    ones: results identical to the plain plan.
 *  - Compressed indices (CSR-vector only): each row stores its first column in row_base and then
 *    16-bit steps col[k] - col[k - 1]; a row whose columns are unsorted or step by more than 65535
 *    keeps its 32-bit indices (row_base < 0 marks it). The kernel decodes a group of V lanes'
 *    steps with an inclusive shuffle scan plus the previous group's last column. 2 bytes less
 *    per nonzero (12 -> 10 in double, 8 -> 6 in single).
 * Layouts are for op N and one at a time; the dispatcher (spmv_cuda.cu) calls them for non-empty
 * matrices only, like the algorithms themselves.
 */

#define LAYOUT_BLOCK 256
#define LAYOUT_MAX_PANELS 8
/* A panel's slice of x: at most this fraction of L2, so x's slice, the lines of y being written
 * and the streaming matrix lines share L2 with room to spare. H100 (50 MB L2), random 4M x 16
 * f64 (x 32 MB), ncu with flushed caches: 2 panels 1.35 GB DRAM read / 870 us, 3 panels 1.23 GB /
 * 868 us, 4 panels 1.13 GB / 807 us (the issue's simpler probe kernel lost with four). */
#define LAYOUT_PANEL_L2_DIVISOR 6
/* Largest step a compressed column index can hold. */
#define LAYOUT_MAX_STEP 65535

typedef struct layout_state {
    unsigned layout;                                /* the one NZI_PLAN_LAYOUTS flag */
    int parts;                                      /* panels (1 for the other layouts) */
    nz_matrix_t views[LAYOUT_MAX_PANELS];           /* A's shape with the plan's arrays */
    nz_spmv_plan_t inner[LAYOUT_MAX_PANELS];        /* the algorithm's plan on each view */
    bool inner_ready[LAYOUT_MAX_PANELS];
    bool owns_arrays[LAYOUT_MAX_PANELS];            /* views[p]'s device arrays are the plan's */
    int32_t *perm;                                  /* reorder: new column -> old column */
    void *x_perm;                                   /* reorder: x in the new column order */
    int32_t *row_base;                              /* compress: first column, < 0: 32-bit row */
    uint16_t *steps;                                /* compress: column steps */
    int width;                                      /* compress: lanes per row */
} layout_state_t;

/* ---- column panels ------------------------------------------------------------------------- */

template <typename Value, typename Offset>
struct panel_arrays {
    Offset *row_offsets[LAYOUT_MAX_PANELS];
    int32_t *col_indices[LAYOUT_MAX_PANELS];
    Value *values[LAYOUT_MAX_PANELS];
};

/* One thread per row: how many of the row's nonzeros fall in each panel, into
 * counts[p * (rows + 1) + row] (the extra entry per panel stays 0 for the exclusive scan). */
template <typename Offset>
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    panel_count_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                       const int32_t *__restrict__ col_indices, int32_t panel_cols, int parts,
                       Offset *__restrict__ counts) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    for (int64_t row = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; row < rows;
         row += stride) {
        Offset c[LAYOUT_MAX_PANELS];
#pragma unroll
        for (int p = 0; p < LAYOUT_MAX_PANELS; p++) c[p] = 0;
        for (Offset k = row_offsets[row]; k < row_offsets[row + 1]; k++) {
            const int p = col_indices[k] / panel_cols;
#pragma unroll
            for (int q = 0; q < LAYOUT_MAX_PANELS; q++) c[q] += q == p;
        }
        for (int p = 0; p < parts; p++) counts[(int64_t)p * (rows + 1) + row] = c[p];
    }
}

/* One thread per row: copy the row's nonzeros into their panels, in the row's order. */
template <typename Value, typename Offset>
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    panel_scatter_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                         const int32_t *__restrict__ col_indices,
                         const Value *__restrict__ values, int32_t panel_cols,
                         panel_arrays<Value, Offset> out) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    for (int64_t row = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; row < rows;
         row += stride) {
        Offset next[LAYOUT_MAX_PANELS];
#pragma unroll
        for (int p = 0; p < LAYOUT_MAX_PANELS; p++)
            next[p] = out.row_offsets[p] != NULL ? out.row_offsets[p][row] : 0;
        for (Offset k = row_offsets[row]; k < row_offsets[row + 1]; k++) {
            const int32_t col = col_indices[k];
            const int p = col / panel_cols;
            /* p is data-dependent: select through the unrolled loop so next[] stays in registers */
#pragma unroll
            for (int q = 0; q < LAYOUT_MAX_PANELS; q++)
                if (q == p) {
                    out.col_indices[q][next[q]] = col;
                    out.values[q][next[q]] = values[k];
                    next[q]++;
                }
        }
    }
}

/* The panel count for A: enough panels that one panel's slice of x fits in L2 / 6
 * (the context's tunables.column_panels overrides, for sweeps and tests), at most
 * LAYOUT_MAX_PANELS. */
static int panel_count(const nz_context_t *ctx, const nz_matrix_t *A) {
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const size_t slice = cs->l2_bytes > 0 ? cs->l2_bytes / LAYOUT_PANEL_L2_DIVISOR : (16u << 20);
    const size_t x_bytes = (size_t)A->cols * nzi_value_size(A->value_type);
    int64_t parts = (int64_t)((x_bytes + slice - 1) / slice);
    if (parts < 1) parts = 1;
    if (parts > LAYOUT_MAX_PANELS) parts = LAYOUT_MAX_PANELS;
    return nzi_tune_pick(ctx->tunables.column_panels, (int)parts);
}

template <typename Value, typename Offset>
static nz_status_t panels_build(nz_context_t *ctx, const nz_matrix_t *A, layout_state_t *st,
                                int parts, size_t *bytes) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t rows = A->rows;
    const int32_t panel_cols = (int32_t)((A->cols + parts - 1) / parts);
    Offset *counts = NULL;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    Offset totals[LAYOUT_MAX_PANELS];
    panel_arrays<Value, Offset> out;
    memset(&out, 0, sizeof out);
    const unsigned grid = (unsigned)nzi_cuda_grid_blocks(
        cs, LAYOUT_BLOCK, 4, (rows + LAYOUT_BLOCK - 1) / LAYOUT_BLOCK);
    const size_t offsets_bytes = ((size_t)rows + 1) * sizeof(Offset);

    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&counts, offsets_bytes * (size_t)parts,
                             "column panels: row counts"));
    NZI_CHECK(nz_cuda_memset(ctx, counts, 0, offsets_bytes * (size_t)parts));
    panel_count_kernel<Offset><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
        (int32_t)rows, nzi_dev_offsets<Offset>(A), A->device.col_indices, panel_cols, parts,
        counts);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(NULL, scratch_bytes, counts, counts,
                                                      rows + 1, cs->stream));
    NZI_CHECK(nz_cuda_malloc(ctx, &scratch, scratch_bytes, "column panels: scan scratch"));
    for (int p = 0; p < parts; p++) {
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&out.row_offsets[p], offsets_bytes,
                                 "column panels: row offsets"));
        st->views[p].device.row_offsets = out.row_offsets[p];
        st->owns_arrays[p] = true;
        NZI_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(
                                scratch, scratch_bytes, counts + (size_t)p * (rows + 1),
                                out.row_offsets[p], rows + 1, cs->stream));
        NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(&totals[p], out.row_offsets[p] + rows, sizeof(Offset),
                                            cudaMemcpyDeviceToHost, cs->stream));
    }
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
    *bytes = offsets_bytes * (size_t)parts;
    for (int p = 0; p < parts; p++) {
        /* a panel without nonzeros still gets one-element arrays, so every pointer is valid */
        const size_t n = totals[p] > 0 ? (size_t)totals[p] : 1;
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&out.col_indices[p], n * sizeof(int32_t),
                                 "column panels: column indices"));
        st->views[p].device.col_indices = out.col_indices[p];
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&out.values[p], n * sizeof(Value),
                                 "column panels: values"));
        st->views[p].device.values = out.values[p];
        st->views[p].nnz = (int64_t)totals[p];
        *bytes += n * (sizeof(int32_t) + sizeof(Value));
    }
    panel_scatter_kernel<Value, Offset><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
        (int32_t)rows, nzi_dev_offsets<Offset>(A), A->device.col_indices,
        (const Value *)A->device.values, panel_cols, out);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
cleanup:
    if (status < 0 && cudaStreamSynchronize(cs->stream) != cudaSuccess) (void)cudaGetLastError();
    nz_cuda_free(ctx, scratch, (size_t)-1);
    nz_cuda_free(ctx, counts, (size_t)-1);
    return status;
}

/* ---- reordering ---------------------------------------------------------------------------- */

__global__ void __launch_bounds__(LAYOUT_BLOCK)
    column_count_kernel(int64_t nnz, const int32_t *__restrict__ col_indices,
                        uint32_t *__restrict__ counts) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    for (int64_t k = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; k < nnz; k += stride)
        atomicAdd(counts + col_indices[k], 1u);
}

__global__ void __launch_bounds__(LAYOUT_BLOCK) iota32_kernel(int32_t n, int32_t *__restrict__ out) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    for (int64_t i = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; i < n; i += stride)
        out[i] = (int32_t)i;
}

/* inverse[perm[j]] = j */
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    invert_kernel(int32_t n, const int32_t *__restrict__ perm, int32_t *__restrict__ inverse) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    for (int64_t j = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; j < n; j += stride)
        inverse[perm[j]] = (int32_t)j;
}

__global__ void __launch_bounds__(LAYOUT_BLOCK)
    relabel_kernel(int64_t nnz, const int32_t *__restrict__ col_indices,
                   const int32_t *__restrict__ inverse, int32_t *__restrict__ out) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    for (int64_t k = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; k < nnz; k += stride)
        out[k] = inverse[col_indices[k]];
}

/* x_new[j] = x[perm[j]]: once per SpMV, a pass over x in the new order. */
template <typename Value>
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    gather_kernel(int32_t n, const int32_t *__restrict__ perm, const Value *__restrict__ x,
                  Value *__restrict__ out) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    for (int64_t j = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; j < n; j += stride)
        out[j] = __ldg(x + __ldcs(perm + j));
}

static nz_status_t reorder_build(nz_context_t *ctx, const nz_matrix_t *A, layout_state_t *st,
                                 size_t *bytes) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int32_t cols = (int32_t)A->cols;
    const int64_t nnz = A->nnz;
    uint32_t *counts = NULL, *sorted_counts = NULL;
    int32_t *order = NULL, *inverse = NULL, *relabeled = NULL;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    const size_t vs = nzi_value_size(A->value_type);
    const unsigned grid_nnz = (unsigned)nzi_cuda_grid_blocks(
        cs, LAYOUT_BLOCK, 4, (nnz + LAYOUT_BLOCK - 1) / LAYOUT_BLOCK);
    const unsigned grid_cols = (unsigned)nzi_cuda_grid_blocks(
        cs, LAYOUT_BLOCK, 4, ((int64_t)cols + LAYOUT_BLOCK - 1) / LAYOUT_BLOCK);

    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&counts, (size_t)cols * sizeof(uint32_t),
                             "reordering: column counts"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&sorted_counts, (size_t)cols * sizeof(uint32_t),
                             "reordering: sorted counts"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&order, (size_t)cols * sizeof(int32_t),
                             "reordering: columns"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->perm, (size_t)cols * sizeof(int32_t),
                             "reordering: permutation"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&inverse, (size_t)cols * sizeof(int32_t),
                             "reordering: inverse permutation"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&relabeled, (size_t)nnz * sizeof(int32_t),
                             "reordering: column indices"));
    st->views[0].device.col_indices = relabeled;
    st->owns_arrays[0] = true; /* only col_indices: release frees that one for reorder */
    NZI_CHECK(nz_cuda_malloc(ctx, &st->x_perm, (size_t)cols * vs, "reordering: permuted x"));
    NZI_CHECK(nz_cuda_memset(ctx, counts, 0, (size_t)cols * sizeof(uint32_t)));
    column_count_kernel<<<grid_nnz, LAYOUT_BLOCK, 0, cs->stream>>>(nnz, A->device.col_indices,
                                                                    counts);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    iota32_kernel<<<grid_cols, LAYOUT_BLOCK, 0, cs->stream>>>(cols, order);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairsDescending(
                            NULL, scratch_bytes, counts, sorted_counts, order, st->perm, cols, 0,
                            32, cs->stream));
    NZI_CHECK(nz_cuda_malloc(ctx, &scratch, scratch_bytes, "reordering: sort scratch"));
    NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairsDescending(
                            scratch, scratch_bytes, counts, sorted_counts, order, st->perm, cols,
                            0, 32, cs->stream));
    invert_kernel<<<grid_cols, LAYOUT_BLOCK, 0, cs->stream>>>(cols, st->perm, inverse);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    relabel_kernel<<<grid_nnz, LAYOUT_BLOCK, 0, cs->stream>>>(nnz, A->device.col_indices, inverse,
                                                               relabeled);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
    *bytes = (size_t)nnz * sizeof(int32_t) + (size_t)cols * (sizeof(int32_t) + vs);
cleanup:
    if (status < 0 && cudaStreamSynchronize(cs->stream) != cudaSuccess) (void)cudaGetLastError();
    nz_cuda_free(ctx, scratch, (size_t)-1);
    nz_cuda_free(ctx, inverse, (size_t)-1);
    nz_cuda_free(ctx, order, (size_t)-1);
    nz_cuda_free(ctx, sorted_counts, (size_t)-1);
    nz_cuda_free(ctx, counts, (size_t)-1);
    return status;
}

/* ---- compressed column indices -------------------------------------------------------------- */

/* One thread per row: row_base[row] = its first column and steps[k] = col[k] - col[k - 1]
 * (steps[first] = 0) when every step is in [0, LAYOUT_MAX_STEP]; otherwise row_base[row] = -1 and
 * the kernel reads the row's 32-bit indices. Empty rows get 0. */
template <typename Offset>
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    compress_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                    const int32_t *__restrict__ col_indices, int32_t *__restrict__ row_base,
                    uint16_t *__restrict__ steps) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    for (int64_t row = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; row < rows;
         row += stride) {
        const Offset begin = row_offsets[row], end = row_offsets[row + 1];
        bool fits = true;
        for (Offset k = begin + 1; k < end && fits; k++) {
            const int64_t step = (int64_t)col_indices[k] - col_indices[k - 1];
            fits = step >= 0 && step <= LAYOUT_MAX_STEP;
        }
        row_base[row] = begin == end ? 0 : fits ? col_indices[begin] : -1;
        if (!fits) continue;
        for (Offset k = begin; k < end; k++)
            steps[k] = k == begin ? 0 : (uint16_t)(col_indices[k] - col_indices[k - 1]);
    }
}

/*
 * CSR-vector on compressed columns: V lanes per row as in spmv_csr_vector.cu, but every group
 * of V lanes works on V consecutive nonzeros at a time (lane l takes begin + s + l), because a
 * column is the previous group's last column plus an inclusive scan of the group's steps. The
 * steps scan over V lanes needs all 32 lanes at the shuffles, so the warp loops to its longest
 * row (rows in a warp of a regular matrix have about the same length; irregular ones should use
 * another layout). U groups are loaded before any is decoded, to keep U loads in flight.
 * Each row is summed by the same lanes in the same order every run: bitwise reproducible.
 */
template <typename Value, typename Offset, int V, int U, bool BetaZero, bool Hints,
          typename Accum>
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    csr_steps_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                     const int32_t *__restrict__ row_base, const uint16_t *__restrict__ steps,
                     const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                     const Value *__restrict__ x, Accum alpha, Accum beta,
                     Value *__restrict__ y) {
    constexpr int ROWS_PER_WARP = 32 / V;
    constexpr int WARPS = LAYOUT_BLOCK / 32;
    const int lane = threadIdx.x & 31;
    const int lane_in_vector = lane & (V - 1);
    const int vector_base = lane & ~(V - 1);
    const int64_t warp = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5);
    const int64_t warp_stride = (int64_t)gridDim.x * WARPS * ROWS_PER_WARP;

    for (int64_t first_row = warp * ROWS_PER_WARP; first_row < rows; first_row += warp_stride) {
        const int64_t row = first_row + lane / V;
        const bool active = row < rows;
        Offset bound = 0;
        if (active && lane_in_vector < 2)
            bound = nzi_ld_matrix<Hints>(row_offsets + row + lane_in_vector);
        const Offset begin = __shfl_sync(0xffffffffu, bound, vector_base);
        const Offset end = __shfl_sync(0xffffffffu, bound, vector_base + 1);
        const int32_t length = active ? (int32_t)(end - begin) : 0;
        int32_t longest = length;
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2)
            longest = max(longest, __shfl_xor_sync(0xffffffffu, longest, offset));
        int32_t carry = active && length > 0 ? nzi_ld_matrix<Hints>(row_base + row) : 0;
        const bool wide = carry < 0;
        Accum sum = Accum(0);
        for (int32_t s = 0; s < longest; s += V * U) {
            uint32_t step[U];
            Value val[U];
            int32_t col[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int32_t i = s + u * V + lane_in_vector;
                const bool in = i < length;
                step[u] = in && !wide ? nzi_ld_matrix<Hints>(steps + begin + i) : 0u;
                col[u] = in && wide ? nzi_ld_matrix<Hints>(col_indices + begin + i) : 0;
                val[u] = in ? nzi_ld_matrix<Hints>(values + begin + i) : Value(0);
            }
            /* the U groups' scans are independent (their shuffles pipeline); then each group's
             * total (its last lane) chains the carries in registers */
#pragma unroll
            for (int offset = 1; offset < V; offset *= 2)
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const uint32_t below = __shfl_up_sync(0xffffffffu, step[u], offset, V);
                    if (lane_in_vector >= offset) step[u] += below;
                }
            uint32_t total[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                total[u] = __shfl_sync(0xffffffffu, step[u], vector_base + V - 1);
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (!wide) col[u] = carry + (int32_t)step[u];
                carry += (int32_t)total[u];
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (s + u * V + lane_in_vector < length)
                    sum += (Accum)val[u] * (Accum)__ldg(x + col[u]);
        }
        sum = nzi_cuda_group_sum<V>(sum);
        if (active && lane_in_vector == 0)
            y[row] = (Value)(BetaZero ? alpha * sum : alpha * sum + beta * (Accum)y[row]);
    }
}

#define STEPS_UNROLL 4

template <typename Value, typename Offset, int V, bool Hints, typename Accum>
static void steps_launch_width(const nzi_cuda_state_t *cs, const nz_matrix_t *A,
                               const layout_state_t *st, Accum alpha, const Value *x, double beta,
                               Value *y) {
    const int64_t rows_per_block = LAYOUT_BLOCK / V;
    const int64_t needed = (A->rows + rows_per_block - 1) / rows_per_block;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(cs, LAYOUT_BLOCK, 4, needed);
    if (beta == 0.0)
        csr_steps_kernel<Value, Offset, V, STEPS_UNROLL, true, Hints, Accum>
            <<<blocks, LAYOUT_BLOCK, 0, cs->stream>>>(
                (int32_t)A->rows, nzi_dev_offsets<Offset>(A), st->row_base, st->steps,
                A->device.col_indices, (const Value *)A->device.values, x, alpha, Accum(0), y);
    else
        csr_steps_kernel<Value, Offset, V, STEPS_UNROLL, false, Hints, Accum>
            <<<blocks, LAYOUT_BLOCK, 0, cs->stream>>>(
                (int32_t)A->rows, nzi_dev_offsets<Offset>(A), st->row_base, st->steps,
                A->device.col_indices, (const Value *)A->device.values, x, alpha, (Accum)beta, y);
}

template <typename Value, typename Offset, typename Accum>
static nz_status_t steps_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                double beta, void *y) {
    const nzi_cuda_state_t *cs = nzi_cuda(plan->ctx);
    const layout_state_t *st = (const layout_state_t *)plan->state;
    const nz_matrix_t *A = plan->A;
    const Accum a = (Accum)alpha;
    const Value *xv = (const Value *)x;
    Value *yv = (Value *)y;
    const bool h = (plan->flags & NZ_PLAN_CACHE_HINTS) != 0;
#define STEPS_WIDTH(W)                                                                          \
    (h ? steps_launch_width<Value, Offset, W, true, Accum>(cs, A, st, a, xv, beta, yv)         \
       : steps_launch_width<Value, Offset, W, false, Accum>(cs, A, st, a, xv, beta, yv))
    switch (st->width) {
    case 2: STEPS_WIDTH(2); break;
    case 4: STEPS_WIDTH(4); break;
    case 8: STEPS_WIDTH(8); break;
    case 16: STEPS_WIDTH(16); break;
    default: STEPS_WIDTH(32); break;
    }
#undef STEPS_WIDTH
    NZI_CUDA_LAUNCH_CHECK(plan->ctx);
    return NZ_SUCCESS;
}

static nz_status_t compress_build(nz_context_t *ctx, const nz_matrix_t *A, layout_state_t *st,
                                  size_t *bytes) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const unsigned grid = (unsigned)nzi_cuda_grid_blocks(
        cs, LAYOUT_BLOCK, 4, (A->rows + LAYOUT_BLOCK - 1) / LAYOUT_BLOCK);
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->row_base, (size_t)A->rows * sizeof(int32_t),
                             "compressed indices: row bases"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->steps, (size_t)A->nnz * sizeof(uint16_t),
                             "compressed indices: steps"));
    if (A->device.offset_type == NZ_I64)
        compress_kernel<int64_t><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, (const int64_t *)A->device.row_offsets, A->device.col_indices,
            st->row_base, st->steps);
    else
        compress_kernel<int32_t><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, (const int32_t *)A->device.row_offsets, A->device.col_indices,
            st->row_base, st->steps);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
    *bytes = (size_t)A->rows * sizeof(int32_t) + (size_t)A->nnz * sizeof(uint16_t);
cleanup:
    return status;
}

/* ---- the layout entry points (spmv_cuda.cu) ---------------------------------------------------- */

void nzi_cuda_layout_release(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops) {
    layout_state_t *st = (layout_state_t *)plan->state;
    nz_context_t *ctx = plan->ctx;
    if (st == NULL) return;
    for (int p = 0; p < LAYOUT_MAX_PANELS; p++) {
        if (st->inner_ready[p] && st->inner[p].state != NULL) ops->release(&st->inner[p]);
        if (!st->owns_arrays[p]) continue;
        if (st->layout == NZ_PLAN_COLUMN_PANELS) {
            nz_cuda_free(ctx, st->views[p].device.row_offsets, (size_t)-1);
            nz_cuda_free(ctx, st->views[p].device.values, (size_t)-1);
        }
        nz_cuda_free(ctx, st->views[p].device.col_indices, (size_t)-1);
    }
    nz_cuda_free(ctx, st->perm, (size_t)-1);
    nz_cuda_free(ctx, st->x_perm, (size_t)-1);
    nz_cuda_free(ctx, st->row_base, (size_t)-1);
    nz_cuda_free(ctx, st->steps, (size_t)-1);
    nzi_free(ctx, st);
    plan->state = NULL;
}

/* The algorithm's plan on view p (flags without the layout; reproducible as it says). */
static nz_status_t inner_setup(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops,
                               layout_state_t *st, int p) {
    nz_spmv_plan_t *in = &st->inner[p];
    in->magic = NZI_PLAN_MAGIC;
    in->ctx = plan->ctx;
    in->A = &st->views[p];
    in->op = NZ_OP_N;
    in->alg = plan->alg;
    in->flags = plan->flags & ~NZI_PLAN_LAYOUTS;
    in->backend = NZ_BACKEND_CUDA;
    in->reproducible = 1;
    st->inner_ready[p] = true;
    if (st->views[p].nnz == 0) return NZ_SUCCESS; /* an empty panel: nothing to set up */
    return ops->setup(in);
}

nz_status_t nzi_cuda_layout_setup(nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const unsigned layout = plan->flags & NZI_PLAN_LAYOUTS;
    const char *what = "nz_spmv_plan_create";
    layout_state_t *st = NULL;
    size_t bytes = 0;
    int parts = 1;

    if (layout != NZ_PLAN_COLUMN_PANELS && layout != NZ_PLAN_REORDER &&
        layout != NZ_PLAN_COMPRESS_INDICES)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: one plan layout at a time "
                         "(column panels, reordering or compressed indices), flags 0x%x", what,
                         layout);
    if (layout == NZ_PLAN_COMPRESS_INDICES && plan->alg != NZ_ALG_VECTOR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: compressed indices are implemented for "
                         "csr/vector, not csr/%s", what, nz_alg_name(plan->alg));
    if (layout == NZ_PLAN_COLUMN_PANELS) parts = panel_count(ctx, A);

    st = (layout_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the layout state", what);
    plan->state = st;
    st->layout = layout;
    st->parts = parts;
    for (int p = 0; p < parts; p++) st->views[p] = *A; /* shape, types; arrays replaced below */

    if (layout == NZ_PLAN_COLUMN_PANELS && parts > 1) {
        const bool wide = A->device.offset_type == NZ_I64;
        if (A->value_type == NZ_F32)
            NZI_CHECK((wide ? panels_build<float, int64_t>(ctx, A, st, parts, &bytes)
                            : panels_build<float, int32_t>(ctx, A, st, parts, &bytes)));
        else
            NZI_CHECK((wide ? panels_build<double, int64_t>(ctx, A, st, parts, &bytes)
                            : panels_build<double, int32_t>(ctx, A, st, parts, &bytes)));
    } else if (layout == NZ_PLAN_REORDER) {
        NZI_CHECK(reorder_build(ctx, A, st, &bytes));
    } else if (layout == NZ_PLAN_COMPRESS_INDICES) {
        NZI_CHECK(compress_build(ctx, A, st, &bytes));
        st->width = nzi_cuda_vector_width(ctx, A); /* CSR-vector's V */
        plan->vector_width = st->width;
        plan->layout_parts = 1;
        plan->workspace_bytes = bytes;
        return NZ_SUCCESS; /* its own kernel: no inner plan; reproducible */
    }
    plan->reproducible = 1;
    plan->workspace_bytes = bytes;
    for (int p = 0; p < parts; p++) {
        NZI_CHECK(inner_setup(plan, ops, st, p));
        plan->reproducible &= st->inner[p].reproducible;
        plan->workspace_bytes += st->inner[p].workspace_bytes;
        if (st->inner[p].vector_width > plan->vector_width)
            plan->vector_width = st->inner[p].vector_width;
    }
    plan->layout_parts = parts;
cleanup:
    if (status < 0) nzi_cuda_layout_release(plan, ops);
    return status;
}

nz_status_t nzi_cuda_layout_execute(const nz_spmv_plan_t *plan, const nzi_cuda_spmv_ops_t *ops,
                                    double alpha, const void *x, double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const layout_state_t *st = (const layout_state_t *)plan->state;
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "nz_spmv_execute: the plan has no layout");
    if (st->layout == NZ_PLAN_COMPRESS_INDICES) {
        const bool wide = A->device.offset_type == NZ_I64;
        const bool mixed = (plan->flags & NZ_PLAN_MIXED) != 0;
        if (A->value_type == NZ_F32 && mixed)
            return wide ? steps_launch<float, int64_t, double>(plan, alpha, x, beta, y)
                        : steps_launch<float, int32_t, double>(plan, alpha, x, beta, y);
        if (A->value_type == NZ_F32)
            return wide ? steps_launch<float, int64_t, float>(plan, alpha, x, beta, y)
                        : steps_launch<float, int32_t, float>(plan, alpha, x, beta, y);
        return wide ? steps_launch<double, int64_t, double>(plan, alpha, x, beta, y)
                    : steps_launch<double, int32_t, double>(plan, alpha, x, beta, y);
    }
    if (st->layout == NZ_PLAN_REORDER) {
        const nzi_cuda_state_t *cs = nzi_cuda(ctx);
        const unsigned grid = (unsigned)nzi_cuda_grid_blocks(
            cs, LAYOUT_BLOCK, 4, (A->cols + LAYOUT_BLOCK - 1) / LAYOUT_BLOCK);
        if (A->value_type == NZ_F32)
            gather_kernel<float><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
                (int32_t)A->cols, st->perm, (const float *)x, (float *)st->x_perm);
        else
            gather_kernel<double><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
                (int32_t)A->cols, st->perm, (const double *)x, (double *)st->x_perm);
        NZI_CUDA_LAUNCH_CHECK(ctx);
        return ops->execute(&st->inner[0], alpha, st->x_perm, beta, y);
    }
    /* column panels: the first non-empty panel applies beta, the others add */
    bool first = true;
    for (int p = 0; p < st->parts; p++) {
        if (st->views[p].nnz == 0) continue;
        NZI_TRY(ops->execute(&st->inner[p], alpha, x, first ? beta : 1.0, y));
        first = false;
    }
    return first ? nzi_cuda_scale(ctx, A->value_type, A->rows, beta, y) : NZ_SUCCESS;
}
