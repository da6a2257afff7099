/* spmv_csr_vector.cu: CSR-vector SpMV on the GPU: V threads per row (Bell & Garland, CUSP). */
#include "cuda_internal.h"

/*
 * Bell & Garland, "Implementing sparse matrix-vector multiplication on throughput-oriented
 * processors" (SC09), CSR (vector) kernel, with CUSP's refinements: a warp is split into 32 / V
 * aligned vectors of V lanes; vector j of the warp owns one row at a time and its lane l reads
 * the row's nonzeros l, l + V, l + 2V, ... (consecutive lanes read consecutive elements, so the
 * loads of col_indices and values coalesce). The V partial sums are combined by a fixed shuffle
 * tree and the vector's first lane writes y. Warps stride over the rows (grid-stride), so the
 * grid is sized to the device, not to the matrix.
 * When V == 32 and a row is longer than 32, the loop starts at the row start rounded down to a
 * multiple of 32 elements (lanes before the row start skip the first step) so every later load
 * is aligned to a 32-element (128 / 256-byte) segment.
 * V is the smallest power of two >= the mean row length, clamped to [2, 32] (chosen in setup).
 * Each row is summed by the same lanes in the same order every run: bitwise reproducible.
 * Cost: one pass over A, nnz gathers from x; rows much longer than V * 32 leave a warp busy
 * while others idle (merge-path balances those).
 */

/* 256 threads = 8 warps: enough independent warps per block to hide latency, and 8 blocks fill
 * an SM of 2048 threads. */
#define VECTOR_BLOCK 256
#define VECTOR_WARPS (VECTOR_BLOCK / 32)
/* Grid-stride grid: this many times what the device holds at once, to smooth the tail. */
#define VECTOR_WAVES 4

template <typename Value, typename Offset, int V, bool BetaZero>
__global__ void __launch_bounds__(VECTOR_BLOCK)
    csr_vector_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                      const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                      const Value *__restrict__ x, Value alpha, Value beta,
                      Value *__restrict__ y) {
    constexpr int ROWS_PER_WARP = 32 / V;
    const int lane = threadIdx.x & 31;
    const int lane_in_vector = lane & (V - 1);
    const int vector_base = lane & ~(V - 1);
    const int64_t warp = (int64_t)blockIdx.x * VECTOR_WARPS + (threadIdx.x >> 5);
    const int64_t warp_stride = (int64_t)gridDim.x * VECTOR_WARPS * ROWS_PER_WARP;

    /* The loop bound is uniform over the warp, so all 32 lanes reach the shuffles together. */
    for (int64_t first_row = warp * ROWS_PER_WARP; first_row < rows; first_row += warp_stride) {
        const int64_t row = first_row + lane / V;
        const bool active = row < rows;
        /* lanes 0 and 1 of each vector load the row's two offsets; the others get them by shuffle */
        Offset bound = 0;
        if (active && lane_in_vector < 2) bound = __ldg(row_offsets + row + lane_in_vector);
        const Offset begin = __shfl_sync(0xffffffffu, bound, vector_base);
        const Offset end = __shfl_sync(0xffffffffu, bound, vector_base + 1);

        Value sum = Value(0);
        if (V == 32 && end - begin > 32) {
            Offset k = begin - (begin & 31) + lane_in_vector;
            if (k >= begin) sum = __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
#pragma unroll 4
            for (k += 32; k < end; k += 32) sum += __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
        } else {
#pragma unroll 4
            for (Offset k = begin + lane_in_vector; k < end; k += V)
                sum += __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
        }
        sum = nzi_cuda_group_sum<V>(sum);
        if (active && lane_in_vector == 0) y[row] = BetaZero ? alpha * sum : alpha * sum + beta * y[row];
    }
}

template <typename Value, typename Offset, int V>
static void csr_vector_launch_width(const nzi_cuda_state_t *cs, const nz_matrix_t *A, Value alpha,
                                    const Value *x, double beta, Value *y) {
    const int64_t rows_per_block = VECTOR_BLOCK / V;
    const int64_t needed = (A->rows + rows_per_block - 1) / rows_per_block;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(cs, VECTOR_BLOCK, VECTOR_WAVES, needed);
    const Offset *offsets = nzi_dev_offsets<Offset>(A);
    const Value *values = (const Value *)A->device.values;
    if (beta == 0.0)
        csr_vector_kernel<Value, Offset, V, true><<<blocks, VECTOR_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, offsets, A->device.col_indices, values, x, alpha, Value(0), y);
    else
        csr_vector_kernel<Value, Offset, V, false><<<blocks, VECTOR_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, offsets, A->device.col_indices, values, x, alpha, (Value)beta, y);
}

template <typename Value, typename Offset>
static nz_status_t csr_vector_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                     double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const nz_matrix_t *A = plan->A;
    const Value a = (Value)alpha;
    const Value *xv = (const Value *)x;
    Value *yv = (Value *)y;
    switch (plan->vector_width) {
    case 2: csr_vector_launch_width<Value, Offset, 2>(cs, A, a, xv, beta, yv); break;
    case 4: csr_vector_launch_width<Value, Offset, 4>(cs, A, a, xv, beta, yv); break;
    case 8: csr_vector_launch_width<Value, Offset, 8>(cs, A, a, xv, beta, yv); break;
    case 16: csr_vector_launch_width<Value, Offset, 16>(cs, A, a, xv, beta, yv); break;
    case 32: csr_vector_launch_width<Value, Offset, 32>(cs, A, a, xv, beta, yv); break;
    default:
        return nzi_error(ctx, NZ_ERR_INVALID_HANDLE, "CSR-vector plan has vector width %d",
                         plan->vector_width);
    }
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* V = smallest power of two >= nnz / rows, clamped to [2, 32]: rows then fill most of their
 * vector's lanes without leaving many lanes idle on short rows. */
static nz_status_t csr_vector_setup(nz_spmv_plan_t *plan) {
    const nz_matrix_t *A = plan->A;
    const double mean = (double)A->nnz / (double)A->rows;
    int width = 2;
    while (width < 32 && (double)width < mean) width *= 2;
    plan->state = NULL;
    plan->workspace_bytes = 0;
    plan->reproducible = 1;
    plan->vector_width = width;
    return NZ_SUCCESS;
}

static nz_status_t csr_vector_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                      double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    const bool wide = A->device.offset_type == NZ_I64;
    if (A->value_type == NZ_F32)
        return wide ? csr_vector_launch<float, int64_t>(plan, alpha, x, beta, y)
                    : csr_vector_launch<float, int32_t>(plan, alpha, x, beta, y);
    return wide ? csr_vector_launch<double, int64_t>(plan, alpha, x, beta, y)
                : csr_vector_launch<double, int32_t>(plan, alpha, x, beta, y);
}

static void csr_vector_release(nz_spmv_plan_t *plan) { plan->state = NULL; }

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_vector_ops = {
    NZ_ALG_VECTOR, csr_vector_setup, csr_vector_execute, csr_vector_release};

template nz_status_t csr_vector_launch<float, int32_t>(const nz_spmv_plan_t *, double, const void *,
                                                       double, void *);
template nz_status_t csr_vector_launch<float, int64_t>(const nz_spmv_plan_t *, double, const void *,
                                                       double, void *);
template nz_status_t csr_vector_launch<double, int32_t>(const nz_spmv_plan_t *, double,
                                                        const void *, double, void *);
template nz_status_t csr_vector_launch<double, int64_t>(const nz_spmv_plan_t *, double,
                                                        const void *, double, void *);
