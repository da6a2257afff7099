/* spmv_csr_segments.cu: the compressed-index layout of a CSR plan: 16-bit column offsets from a base per 32 nonzeros, built on the device; CSR-vector reads them. */
#include "csr_layout.cuh"

/*
 * Layout (nzi_col_segments_t, cuda_internal.h): segment s holds nonzeros [32 s, 32 s + 32) of
 * the whole matrix, across row boundaries. base[s] = the smallest column of the segment when its
 * columns span at most 65535, else -1; offsets[k] = col[k] - base[s] (0 in a wide segment). The
 * kernel loads base and offset side by side and adds them, so the column is known one load after
 * the row starts, as with 32-bit indices; the earlier form (16-bit steps from the previous
 * column, decoded by a shuffle scan) put log2 V dependent shuffles between the index load and
 * the gather of x and ran 16-42% slower than plain CSR-vector on the stencils
 * (docs/PERF_NOTES.md, session 8).
 * Which matrices fit: those whose 32 consecutive nonzeros stay within 65536 columns, i.e. banded
 * ones with a window up to ~64K columns (FE meshes in natural order, most of the real
 * collection) and long rows of clustered columns (rail: 2500 columns out of 1M, 400 apart);
 * not random or power-law columns, whose segments are nearly all wide.
 */

/* One warp per segment: the segment's smallest and largest column by shuffles, lane 0 writes
 * the base and counts the segment if it fits; every lane writes its offset. */
__global__ void __launch_bounds__(LAYOUT_BLOCK)
    segments_kernel(int64_t nnz, const int32_t *__restrict__ col_indices,
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
        if (lane == 0) {
            base[s] = fits ? lo : -1;
            fits_here += fits;
        }
    }
    if (lane == 0 && fits_here > 0) atomicAdd(narrow, fits_here);
}

nz_status_t nzi_layout_compress_build(nz_context_t *ctx, const nz_matrix_t *A,
                                      nzi_layout_state_t *st, size_t *bytes) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    unsigned long long *narrow = NULL, narrow_host = 0;
    const int64_t segments = (A->nnz + NZI_SEGMENT - 1) / NZI_SEGMENT;
    const int64_t segments_per_block = LAYOUT_BLOCK / 32;
    const unsigned grid = (unsigned)nzi_cuda_grid_blocks(
        cs, LAYOUT_BLOCK, 4, (segments + segments_per_block - 1) / segments_per_block);
    size_t base_bytes, offset_bytes;
    if (nzi_mul_overflow_size((size_t)segments, sizeof(int32_t), &base_bytes) ||
        nzi_mul_overflow_size((size_t)A->nnz, sizeof(uint16_t), &offset_bytes))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "compressed indices: %lld nonzeros",
                         (long long)A->nnz);
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->seg_base, base_bytes,
                             "compressed indices: segment bases"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->seg_offsets, offset_bytes,
                             "compressed indices: 16-bit offsets"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&narrow, sizeof *narrow,
                             "compressed indices: segment count"));
    NZI_CUDA_CHECK(ctx, cudaMemsetAsync(narrow, 0, sizeof *narrow, cs->stream));
    segments_kernel<<<grid, LAYOUT_BLOCK, 0, cs->stream>>>(A->nnz, A->device.col_indices,
                                                           st->seg_base, st->seg_offsets, narrow);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cudaMemcpyAsync(&narrow_host, narrow, sizeof narrow_host,
                                        cudaMemcpyDeviceToHost, cs->stream));
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
    st->segments = segments;
    st->narrow_segments = (int64_t)narrow_host;
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
