/* spmv_csr_segments.cu: the compressed-index layout of a CSR plan: 16-bit column offsets from a base per row or per 32 nonzeros, built on the device; CSR-vector reads them. */
#include "csr_layout.cuh"

/*
 * Layout (nzi_col_segments_t, cuda_internal.h): 16-bit offsets for every nonzero from a 32-bit
 * base per row (CSR-vector with V < 32 lanes per row) or per aligned segment of 32 nonzeros
 * (V == 32, whose warps walk long rows in aligned steps of 32); base -1 where the row's or
 * segment's columns span more than 65535 (the kernel reads A's 32-bit indices there). The kernel
 * loads base and offset side by side, so the column is known one load after the row starts, as
 * with 32-bit indices. Earlier forms measured slower: 16-bit steps from the previous column,
 * decoded by a shuffle scan (log2 V dependent shuffles before the gather of x; 16-42% slower on
 * the stencils, H100, bench/results/h100-2026-11-25-s8-spmv.txt), and a segment base per
 * nonzero for every V (76.5 M -> 107.1 M instructions on fe3d single, 7-10% slower; H200,
 * docs/dev/PERF_NOTES.md, "Compressed indices, redone").
 * What fits: banded rows with a window up to 64K columns (FE meshes in natural order, most of
 * the real collection) and long rows of clustered columns (rail: 2500 columns out of 1M, ~400
 * apart, per segment); not random or power-law columns.
 */

/* One thread per row: base = the row's smallest column if its columns span <= 65535, else -1;
 * counts the nonzeros of rows that fit. */
template <typename Offset>
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    row_bases_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                     const int32_t *__restrict__ col_indices, int32_t *__restrict__ base,
                     uint16_t *__restrict__ offsets, unsigned long long *__restrict__ narrow) {
    const int64_t stride = (int64_t)gridDim.x * LAYOUT_BLOCK;
    unsigned long long fits_here = 0;
    for (int64_t row = (int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x; row < rows;
         row += stride) {
        const Offset begin = row_offsets[row], end = row_offsets[row + 1];
        int32_t lo = INT32_MAX, hi = INT32_MIN;
        for (Offset k = begin; k < end; k++) {
            lo = min(lo, col_indices[k]);
            hi = max(hi, col_indices[k]);
        }
        const bool fits = begin < end && (int64_t)hi - (int64_t)lo <= NZI_SEGMENT_MAX_SPAN;
        base[row] = fits ? lo : -1;
        for (Offset k = begin; k < end; k++)
            offsets[k] = fits ? (uint16_t)(col_indices[k] - lo) : (uint16_t)0;
        if (fits) fits_here += (unsigned long long)(end - begin);
    }
    if (fits_here > 0) atomicAdd(narrow, fits_here);
}

/* One warp per segment: the segment's smallest and largest column by shuffles, lane 0 writes
 * the base; every lane writes its offset and counts itself if the segment fits. */
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    segment_bases_kernel(int64_t nnz, const int32_t *__restrict__ col_indices,
                         int32_t *__restrict__ base, uint16_t *__restrict__ offsets,
                         unsigned long long *__restrict__ narrow) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (LAYOUT_BLOCK / 32);
    const int64_t segments = (nnz + NZI_SEGMENT - 1) / NZI_SEGMENT;
    unsigned long long fits_here = 0;
    /* the loop bound is the warp's, so all 32 lanes reach the shuffles together */
    for (int64_t s = ((int64_t)blockIdx.x * LAYOUT_BLOCK + threadIdx.x) / 32; s < segments;
         s += warps) {
        const int64_t k = s * NZI_SEGMENT + lane;
        const bool in = k < nnz;
        const int32_t col = in ? col_indices[k] : 0;
        int32_t lo = in ? col : INT32_MAX, hi = in ? col : INT32_MIN;
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) {
            lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, offset));
            hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, offset));
        }
        const bool fits = (int64_t)hi - (int64_t)lo <= NZI_SEGMENT_MAX_SPAN;
        if (in) offsets[k] = fits ? (uint16_t)(col - lo) : (uint16_t)0;
        if (lane == 0) base[s] = fits ? lo : -1;
        fits_here += in && fits;
    }
    if (fits_here > 0) atomicAdd(narrow, fits_here);
}

nz_status_t nzi_layout_compress_build(nz_context_t *ctx, const nz_matrix_t *A,
                                      nzi_layout_state_t *st, size_t *bytes) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    unsigned long long *narrow = NULL, narrow_host = 0;
    const bool per_row = st->width < 32;
    const int64_t bases = per_row ? A->rows : (A->nnz + NZI_SEGMENT - 1) / NZI_SEGMENT;
    const int64_t per_block = per_row ? LAYOUT_BLOCK : LAYOUT_BLOCK / 32;
    const unsigned grid = (unsigned)nzi_cuda_grid_blocks(cs, LAYOUT_BLOCK, 4,
                                                         (bases + per_block - 1) / per_block);
    size_t base_bytes, offset_bytes;
    if (nzi_mul_overflow_size((size_t)bases, sizeof(int32_t), &base_bytes) ||
        nzi_mul_overflow_size((size_t)A->nnz, sizeof(uint16_t), &offset_bytes))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "compressed indices: %lld nonzeros",
                         (long long)A->nnz);
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->seg_base, base_bytes,
                             "compressed indices: bases"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->seg_offsets, offset_bytes,
                             "compressed indices: 16-bit offsets"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&narrow, sizeof *narrow,
                             "compressed indices: nonzero count"));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(narrow, 0, sizeof *narrow, cs->stream));
    if (!per_row)
        segment_bases_kernel<<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
            A->nnz, A->device.col_indices, st->seg_base, st->seg_offsets, narrow);
    else if (A->device.offset_type == NZ_I64)
        row_bases_kernel<int64_t><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, (const int64_t *)A->device.row_offsets, A->device.col_indices,
            st->seg_base, st->seg_offsets, narrow);
    else
        row_bases_kernel<int32_t><<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, (const int32_t *)A->device.row_offsets, A->device.col_indices,
            st->seg_base, st->seg_offsets, narrow);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(&narrow_host, narrow, sizeof narrow_host,
                                        cudaMemcpyDeviceToHost, cs->stream));
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
    st->narrow_nnz = (int64_t)narrow_host;
    *bytes = base_bytes + offset_bytes;
cleanup:
    nz_cuda_free(ctx, narrow, sizeof *narrow);
    return status;
}

nz_status_t nzi_layout_segments_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                        double beta, void *y) {
    const nzi_layout_state_t *st = (const nzi_layout_state_t *)plan->state;
    const nzi_col_segments_t seg = {st->seg_base, st->seg_offsets};
    return nzi_cuda_csr_vector_segments(plan, st->width, seg, alpha, x, beta, y);
}
