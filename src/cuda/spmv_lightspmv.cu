/* spmv_lightspmv.cu: LightSpMV CSR SpMV, vector- and warp-level dynamic row distribution. */
/*
 * Design source: Y. Liu and B. Schmidt, "LightSpMV: faster CSR-based sparse matrix-vector
 * multiplication on CUDA-enabled GPUs", ASAP 2015 (and the GTC poster P5267 by Liu,
 * Gonzalez-Dominguez and Schmidt).
 *
 * Which thread handles which data: the warp is split into vectors of V lanes (V = 2, 4, 8 or
 * 32). A vector takes the next unprocessed row from a global row counter (an unsigned int in
 * device memory, reset with cudaMemsetAsync before every launch):
 *   - vector level (light-vector): lane 0 of each vector does atomicAdd(counter, 1) and
 *     broadcasts the row to its V lanes with a width-V __shfl_sync;
 *   - warp level (light-warp): lane 0 of each warp does atomicAdd(counter, 32 / V) and
 *     broadcasts the base to the whole warp; vector j of the warp takes base + j.
 * Within a row, lane l accumulates the entries row_start + l, row_start + l + V, ... (for V = 32
 * the start is rounded down to a multiple of 32 so that every warp-wide load is aligned), then
 * the V partial sums are combined by a fixed shuffle tree and lane 0 writes
 * y[row] = alpha * sum + beta * y[row] (y is not read when beta == 0).
 *
 * Reproducibility: bitwise reproducible run to run. Which vector takes a row changes from run to
 * run, but a row's sum depends only on the row's start offset, V and the fixed shuffle tree, and
 * V is fixed for the plan.
 *
 * Launch: thread blocks of the device's maximum block size, grid = SMs x (max threads per SM /
 * threads per block), as in the paper's host driver; V from the rounded mean row length with the
 * driver's thresholds (mean <= 2: 2, <= 4: 4, <= 64: 8, else 32), which are those of the
 * LightSpMV 1.0 source release.
 */
#include "cuda_internal.h"

#include <math.h>

/* Per-plan device state: only the row counter. */
typedef struct light_state {
    unsigned int *row_counter; /* device */
} light_state_t;

/* The largest block size the kernels are compiled for (launch bounds); the launch uses
 * min(device maximum, this). */
#define LIGHT_MAX_THREADS 1024

/* Mask of the V lanes of the vector the calling lane belongs to (V divides 32). */
template <int V>
__device__ __forceinline__ unsigned light_vector_mask(int lane_in_warp) {
    return (0xffffffffu >> (32 - V)) << (lane_in_warp & ~(V - 1));
}

/* Dot product of one row by the V lanes of a vector, reduced to lane 0 of the vector (other lanes
 * return partial garbage). The V lanes must be converged with `mask` naming exactly them. */
template <typename Value, typename Offset, int V>
__device__ __forceinline__ Value light_row_dot(Offset row_start, Offset row_end, int lane,
                                               unsigned mask,
                                               const int32_t *__restrict__ col_indices,
                                               const Value *__restrict__ values,
                                               const Value *__restrict__ x) {
    /* 64-bit positions: with 32-bit offsets near INT32_MAX, k + V must not overflow. */
    const int64_t start = (int64_t)row_start, end = (int64_t)row_end;
    Value sum = Value(0);
    if (V == 32 && end - start > 32) {
        /* Align the warp's loads to 32-entry boundaries; the first step skips entries before the
         * row. */
        int64_t k = start - (start & 31) + lane;
        if (k >= start) sum += __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
        for (k += 32; k < end; k += 32) sum += __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
    } else {
#pragma unroll 4
        for (int64_t k = start + lane; k < end; k += V)
            sum += __ldg(values + k) * __ldg(x + __ldg(col_indices + k));
    }
#pragma unroll
    for (int delta = V / 2; delta > 0; delta >>= 1) sum += __shfl_down_sync(mask, sum, delta, V);
    return sum;
}

template <typename Value>
__device__ __forceinline__ void light_store(Value *__restrict__ y, int64_t row, Value sum,
                                            Value alpha, Value beta) {
    if (beta == Value(0))
        y[row] = alpha * sum;
    else
        y[row] = alpha * sum + beta * y[row];
}

/* Vector level: each vector fetches one row at a time. A vector leaves the loop on its own, so
 * every shuffle names only the vector's lanes. */
template <typename Value, typename Offset, int V>
__global__ void __launch_bounds__(LIGHT_MAX_THREADS)
light_vector_kernel(unsigned int *__restrict__ row_counter, unsigned int rows,
                    const Offset *__restrict__ row_offsets, const int32_t *__restrict__ col_indices,
                    const Value *__restrict__ values, const Value *__restrict__ x,
                    Value *__restrict__ y, Value alpha, Value beta) {
    const int lane_in_warp = threadIdx.x & 31;
    const int lane = threadIdx.x & (V - 1);
    const unsigned mask = light_vector_mask<V>(lane_in_warp);
    for (;;) {
        unsigned int row = 0;
        if (lane == 0) row = atomicAdd(row_counter, 1u);
        row = __shfl_sync(mask, row, 0, V);
        if (row >= rows) break;
        const Offset row_start = __ldg(row_offsets + row);
        const Offset row_end = __ldg(row_offsets + row + 1);
        Value sum = light_row_dot<Value, Offset, V>(row_start, row_end, lane, mask, col_indices,
                                                    values, x);
        if (lane == 0) light_store(y, (int64_t)row, sum, alpha, beta);
    }
}

/* Warp level: lane 0 of the warp fetches 32 / V rows at once. The loop condition depends only on
 * the broadcast base, so the whole warp runs the same number of iterations and the full-warp
 * shuffle at the top is always reached by all 32 lanes. */
template <typename Value, typename Offset, int V>
__global__ void __launch_bounds__(LIGHT_MAX_THREADS)
light_warp_kernel(unsigned int *__restrict__ row_counter, unsigned int rows,
                  const Offset *__restrict__ row_offsets, const int32_t *__restrict__ col_indices,
                  const Value *__restrict__ values, const Value *__restrict__ x,
                  Value *__restrict__ y, Value alpha, Value beta) {
    const int lane_in_warp = threadIdx.x & 31;
    const int lane = threadIdx.x & (V - 1);
    const unsigned vector_in_warp = (unsigned)(lane_in_warp / V);
    const unsigned mask = light_vector_mask<V>(lane_in_warp);
    for (;;) {
        unsigned int base = 0;
        __syncwarp();
        if (lane_in_warp == 0) base = atomicAdd(row_counter, 32u / V);
        base = __shfl_sync(0xffffffffu, base, 0);
        if (base >= rows) break;
        const unsigned int row = base + vector_in_warp;
        if (row < rows) {
            const Offset row_start = __ldg(row_offsets + row);
            const Offset row_end = __ldg(row_offsets + row + 1);
            Value sum = light_row_dot<Value, Offset, V>(row_start, row_end, lane, mask,
                                                        col_indices, values, x);
            if (lane == 0) light_store(y, (int64_t)row, sum, alpha, beta);
        }
    }
}

/* The paper's host driver rule: V from rint(nnz / rows). */
static int light_vector_width(int64_t rows, int64_t nnz) {
    if (rows <= 0) return 2;
    double mean = rint((double)nnz / (double)rows);
    if (mean <= 2.0) return 2;
    if (mean <= 4.0) return 4;
    if (mean <= 64.0) return 8;
    return 32;
}

static nz_status_t light_setup(nz_spmv_plan_t *plan) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    light_state_t *state = NULL;
    if (plan->op != NZ_OP_N) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                           "LightSpMV plan: only op = N is implemented (matrix %lld x %lld)",
                           (long long)A->rows, (long long)A->cols);
        goto cleanup;
    }
    if (A->rows > (int64_t)INT32_MAX) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED, "LightSpMV plan: %lld rows exceed int32",
                           (long long)A->rows);
        goto cleanup;
    }
    state = (light_state_t *)nzi_calloc(ctx, 1, sizeof *state);
    if (state == NULL) {
        status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "LightSpMV plan: cannot allocate the state");
        goto cleanup;
    }
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&state->row_counter, sizeof(unsigned int),
                             "LightSpMV row counter"));
    plan->state = state;
    plan->reproducible = 1;
    plan->vector_width = light_vector_width(A->rows, A->nnz);
    plan->workspace_bytes = sizeof(unsigned int);
    state = NULL;
cleanup:
    if (state != NULL) nzi_free(ctx, state);
    return status;
}

static void light_release(nz_spmv_plan_t *plan) {
    light_state_t *state = (light_state_t *)plan->state;
    if (state == NULL) return;
    if (state->row_counter != NULL)
        nz_cuda_free(plan->ctx, state->row_counter, sizeof(unsigned int));
    nzi_free(plan->ctx, state);
    plan->state = NULL;
}

template <typename Value, typename Offset, int V>
static void light_launch(bool warp_level, dim3 grid, dim3 block, cudaStream_t stream,
                         unsigned int *counter, unsigned int rows, const nz_matrix_t *A,
                         const void *x, void *y, Value alpha, Value beta) {
    const Offset *row_offsets = nzi_dev_offsets<Offset>(A);
    const Value *values = (const Value *)A->device.values;
    if (warp_level)
        light_warp_kernel<Value, Offset, V><<<grid, block, 0, stream>>>(
            counter, rows, row_offsets, A->device.col_indices, values, (const Value *)x,
            (Value *)y, alpha, beta);
    else
        light_vector_kernel<Value, Offset, V><<<grid, block, 0, stream>>>(
            counter, rows, row_offsets, A->device.col_indices, values, (const Value *)x,
            (Value *)y, alpha, beta);
}

template <typename Value, typename Offset>
static void light_dispatch(int V, bool warp_level, dim3 grid, dim3 block, cudaStream_t stream,
                           unsigned int *counter, unsigned int rows, const nz_matrix_t *A,
                           const void *x, void *y, double alpha, double beta) {
    Value a = (Value)alpha, b = (Value)beta;
    switch (V) {
    case 2: light_launch<Value, Offset, 2>(warp_level, grid, block, stream, counter, rows, A, x, y, a, b); break;
    case 4: light_launch<Value, Offset, 4>(warp_level, grid, block, stream, counter, rows, A, x, y, a, b); break;
    case 8: light_launch<Value, Offset, 8>(warp_level, grid, block, stream, counter, rows, A, x, y, a, b); break;
    default: light_launch<Value, Offset, 32>(warp_level, grid, block, stream, counter, rows, A, x, y, a, b); break;
    }
}

/* Reset the counter on the stream, then one kernel over all rows. */
static nz_status_t light_execute_common(const nz_spmv_plan_t *plan, bool warp_level, double alpha,
                                        const void *x, double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const light_state_t *state = (const light_state_t *)plan->state;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    if (A->rows == 0) return NZ_SUCCESS;
    int threads = cs->max_threads_per_block < LIGHT_MAX_THREADS ? cs->max_threads_per_block
                                                                : LIGHT_MAX_THREADS;
    threads &= ~31;
    if (threads < 32) threads = 32;
    int blocks_per_sm = cs->max_threads_per_sm / threads;
    if (blocks_per_sm < 1) blocks_per_sm = 1;
    int64_t grid_blocks = (int64_t)cs->sm_count * blocks_per_sm;
    /* No more vectors than rows: tiny matrices need only a few blocks. */
    int64_t vectors_per_block = threads / plan->vector_width;
    int64_t needed = (A->rows + vectors_per_block - 1) / vectors_per_block;
    if (grid_blocks > needed) grid_blocks = needed;
    if (grid_blocks < 1) grid_blocks = 1;
    NZI_CUDA_TRY(ctx, cudaMemsetAsync(state->row_counter, 0, sizeof(unsigned int), cs->stream));
    dim3 grid((unsigned)grid_blocks), block((unsigned)threads);
    unsigned int rows = (unsigned int)A->rows;
    bool f64 = A->value_type == NZ_F64, o64 = A->device.offset_type == NZ_I64;
    int V = plan->vector_width;
    if (f64 && o64)
        light_dispatch<double, int64_t>(V, warp_level, grid, block, cs->stream, state->row_counter, rows, A, x, y, alpha, beta);
    else if (f64)
        light_dispatch<double, int32_t>(V, warp_level, grid, block, cs->stream, state->row_counter, rows, A, x, y, alpha, beta);
    else if (o64)
        light_dispatch<float, int64_t>(V, warp_level, grid, block, cs->stream, state->row_counter, rows, A, x, y, alpha, beta);
    else
        light_dispatch<float, int32_t>(V, warp_level, grid, block, cs->stream, state->row_counter, rows, A, x, y, alpha, beta);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

static nz_status_t light_vector_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                        double beta, void *y) {
    return light_execute_common(plan, false, alpha, x, beta, y);
}

static nz_status_t light_warp_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                      double beta, void *y) {
    return light_execute_common(plan, true, alpha, x, beta, y);
}

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_light_vector_ops = {
    NZ_ALG_LIGHT_VECTOR, light_setup, light_vector_execute, light_release};
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_light_warp_ops = {
    NZ_ALG_LIGHT_WARP, light_setup, light_warp_execute, light_release};

/* Explicit instantiations: value type x offset type x vector width, both distributions. */
#define LIGHT_INSTANTIATE(Value, Offset, V)                                                     \
    template __global__ void light_vector_kernel<Value, Offset, V>(                             \
        unsigned int *, unsigned int, const Offset *, const int32_t *, const Value *,           \
        const Value *, Value *, Value, Value);                                                  \
    template __global__ void light_warp_kernel<Value, Offset, V>(                               \
        unsigned int *, unsigned int, const Offset *, const int32_t *, const Value *,           \
        const Value *, Value *, Value, Value);
#define LIGHT_INSTANTIATE_V(Value, Offset)                                                      \
    LIGHT_INSTANTIATE(Value, Offset, 2)                                                         \
    LIGHT_INSTANTIATE(Value, Offset, 4)                                                         \
    LIGHT_INSTANTIATE(Value, Offset, 8)                                                         \
    LIGHT_INSTANTIATE(Value, Offset, 32)
LIGHT_INSTANTIATE_V(float, int32_t)
LIGHT_INSTANTIATE_V(float, int64_t)
LIGHT_INSTANTIATE_V(double, int32_t)
LIGHT_INSTANTIATE_V(double, int64_t)
