/* spmv_csr_layout_build.cu: the column-panel and reordered layouts of a CSR plan, built on the device (csr_layout.cuh). */
#include "csr_layout.cuh"

#include <cub/cub.cuh>

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

int nzi_layout_panel_count(const nz_context_t *ctx, const nz_matrix_t *A) {
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const size_t slice = cs->l2_bytes > 0 ? cs->l2_bytes / LAYOUT_PANEL_L2_DIVISOR : (16u << 20);
    const size_t x_bytes = (size_t)A->cols * nzi_value_size(A->value_type);
    int64_t parts = (int64_t)((x_bytes + slice - 1) / slice);
    if (parts < 1) parts = 1;
    if (parts > LAYOUT_MAX_PANELS) parts = LAYOUT_MAX_PANELS;
    return nzi_tune_pick(ctx->tunables.column_panels, (int)parts);
}

template <typename Value, typename Offset>
static nz_status_t panels_build(nz_context_t *ctx, const nz_matrix_t *A, nzi_layout_state_t *st,
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

nz_status_t nzi_layout_panels_build(nz_context_t *ctx, const nz_matrix_t *A, nzi_layout_state_t *st,
                                    int parts, size_t *bytes) {
    const bool wide = A->device.offset_type == NZ_I64;
    if (A->value_type == NZ_F32)
        return wide ? panels_build<float, int64_t>(ctx, A, st, parts, bytes)
                    : panels_build<float, int32_t>(ctx, A, st, parts, bytes);
    return wide ? panels_build<double, int64_t>(ctx, A, st, parts, bytes)
                : panels_build<double, int32_t>(ctx, A, st, parts, bytes);
}

/* ---- reordering ---------------------------------------------------------------------------- */

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
/* *read = the number of columns with nonzeros: the end of the nonzero head of the counts sorted
 * in descending order (the thread whose count is the last nonzero one writes it). */
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    read_columns_kernel(int32_t n, const uint32_t *__restrict__ sorted, int32_t *__restrict__ read) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    for (int64_t j = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; j < n; j += stride)
        if (sorted[j] > 0 && (j + 1 == n || sorted[j + 1] == 0)) *read = (int32_t)(j + 1);
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

nz_status_t nzi_layout_reorder_gather(nz_context_t *ctx, const nz_matrix_t *A,
                                      const nzi_layout_state_t *st, const void *x) {
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const unsigned grid = (unsigned)nzi_cuda_grid_blocks(
        cs, LAYOUT_BLOCK, 4, ((int64_t)st->read_cols + LAYOUT_BLOCK - 1) / LAYOUT_BLOCK);
    if (st->read_cols == 0) return NZ_SUCCESS;
    if (A->value_type == NZ_F32)
        gather_kernel<float><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
            st->read_cols, st->perm, (const float *)x, (float *)st->x_perm);
    else
        gather_kernel<double><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
            st->read_cols, st->perm, (const double *)x, (double *)st->x_perm);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* One warp per row (grid-stride): its lanes write the row number over the row's range. */
template <typename Offset>
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    row_index_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                     int32_t *__restrict__ row_indices) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (LAYOUT_BLOCK / 32);
    for (int64_t r = (int64_t)blockIdx.x * (LAYOUT_BLOCK / 32) + (threadIdx.x >> 5); r < rows;
         r += warps) {
        const int64_t end = (int64_t)row_offsets[r + 1];
        for (int64_t k = (int64_t)row_offsets[r] + lane; k < end; k += 32)
            row_indices[k] = (int32_t)r;
    }
}

nz_status_t nzi_layout_rows_build(nz_context_t *ctx, const nz_matrix_t *A, nzi_layout_state_t *st,
                                  size_t *bytes) {
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const unsigned grid = (unsigned)nzi_cuda_grid_blocks(
        cs, LAYOUT_BLOCK, 4, (A->rows + LAYOUT_BLOCK / 32 - 1) / (LAYOUT_BLOCK / 32));
    size_t size;
    if (nzi_mul_overflow_size((size_t)A->nnz, sizeof(int32_t), &size))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "reordering: row indices of %lld nonzeros",
                         (long long)A->nnz);
    NZI_TRY(nz_cuda_malloc(ctx, (void **)&st->row_indices, size, "reordering: row indices"));
    if (A->device.offset_type == NZ_I64)
        row_index_kernel<int64_t><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, (const int64_t *)A->device.row_offsets, st->row_indices);
    else
        row_index_kernel<int32_t><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, (const int32_t *)A->device.row_offsets, st->row_indices);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    *bytes = size;
    return NZ_SUCCESS;
}

nz_status_t nzi_layout_reorder_build(nz_context_t *ctx, const nz_matrix_t *A,
                                     nzi_layout_state_t *st, size_t *bytes) {
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
    NZI_CHECK(nzi_cuda_column_counts(ctx, A, counts));
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
    /* the columns no nonzero reads come last in the new order: the gather skips them (R-MAT 20:
     * 48% of the columns); order[0], free after the sort, receives their start */
    NZI_CHECK(nz_cuda_memset(ctx, order, 0, sizeof(int32_t)));
    read_columns_kernel<<<grid_cols, LAYOUT_BLOCK, 0, cs->stream>>>(cols, sorted_counts, order);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CHECK(nz_cuda_memcpy(ctx, &st->read_cols, order, sizeof(int32_t), NZI_D2H));
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
