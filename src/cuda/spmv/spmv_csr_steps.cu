/* spmv_csr_steps.cu: the compressed-index layout of a CSR plan: 16-bit column steps, built on the device, and CSR-vector over them. */
#include "csr_layout.cuh"

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
        Offset begin, end;
        nzi_cuda_vector_row_bounds<V, Hints>(row_offsets, row, active, &begin, &end);
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
        nzi_cuda_vector_store<V, BetaZero>(sum, active, row, alpha, beta, y);
    }
}

#define STEPS_UNROLL 4

template <typename Value, typename Offset, int V, bool Hints, typename Accum>
static void steps_launch_width(const nzi_cuda_state_t *cs, const nz_matrix_t *A,
                               const nzi_layout_state_t *st, Accum alpha, const Value *x, double beta,
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
    const nzi_layout_state_t *st = (const nzi_layout_state_t *)plan->state;
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

nz_status_t nzi_layout_compress_build(nz_context_t *ctx, const nz_matrix_t *A,
                                      nzi_layout_state_t *st, size_t *bytes) {
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

nz_status_t nzi_layout_steps_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                     double beta, void *y) {
    const nz_matrix_t *A = plan->A;
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
