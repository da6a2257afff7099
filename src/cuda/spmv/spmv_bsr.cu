/* spmv_bsr.cu: BSR SpMV on the GPU: a warp per block row, working block by block or column by column. */
#include "cuda_internal.h"

/*
 * BSR with b x b blocks stored row-major, b = 2 .. 8 a template parameter. Both kernels give one
 * warp one block row (grid-stride over block rows), following the two mappings of Eberhardt and
 * Hoemmen, "Optimization of block sparse matrix-vector multiplication on shared-memory parallel
 * architectures" (IPDPSW 2016), as summarised in our sources (seeds/003):
 *
 * NZ_ALG_BSR_ROW ("block row per warp, operating by block"): the block row's values are one
 * contiguous run of num_blocks x b^2 values; the warp covers PER_STEP = max(1, 32 / b^2) whole
 * blocks per step (b^2 <= 32), or one block in PASSES = ceil(b^2 / 32) lane passes (b = 6, 7, 8),
 * lane l taking element l + 32 p of the step. Loads of values are fully coalesced; lanes of the
 * same block column read the same x entries.
 *
 * NZ_ALG_BSR_COL ("block row per warp, operating by column"): the block row is seen as
 * num_blocks x b columns; the warp covers 32 / b of them per step, lane l taking row l % b of
 * column l / b. The b lanes of a column read one x entry (a broadcast) and a column of a block
 * (stride b); consecutive columns are adjacent in memory.
 *
 * In both, a lane always accumulates into the same row of the block row (PASSES accumulators in
 * BSR_ROW for b > 5), then the warp's partial sums go to shared memory and lane r < b adds those
 * of row r in a fixed order and writes y. Block columns past the matrix's last column (the
 * padding of the last block column) are skipped, so x is never read out of range; inside the
 * matrix the zero fill of a block is multiplied like any stored value (a documented property of
 * BSR, as on the CPU and in cuSPARSE: 0 * Inf = NaN). Rows of the last block row past the matrix
 * are not written.
 * Bitwise reproducible: a fixed lane mapping, fixed per-lane order, fixed reduction order, no
 * atomics.
 * Cost: num_blocks x b^2 values and num_blocks indices read, num_blocks x b^2 x gathers (b per
 * block column, mostly cached); a warp per block row idles lanes when b^2 does not divide 32
 * (BSR_ROW) or b does not divide 32 (BSR_COL).
 */

/* 128 threads = 4 warps per block: 16 resident blocks fill an SM of 2048 threads, and the shared
 * scratch (4 x 64 values at most) stays tiny. */
#define BSR_BLOCK 128
#define BSR_WARPS (BSR_BLOCK / 32)
#define BSR_WAVES 4

/* Lane mapping of BSR_ROW for block size B. */
template <int B> struct bsr_row_map {
    static constexpr int area = B * B;
    static constexpr int per_step = area <= 32 ? 32 / area : 1; /* whole blocks per step */
    static constexpr int step_elems = per_step * area;           /* values covered per step */
    static constexpr int passes = (step_elems + 31) / 32;        /* lane passes per step */
};

/* y[row] = alpha sum + beta y[row] for a row inside the matrix (y not read when beta == 0). */
template <typename Value, bool BetaZero>
static __device__ __forceinline__ void bsr_finish(int64_t row, bool write, Value sum, Value alpha,
                                                  Value beta, Value *__restrict__ y) {
    if (write) y[row] = BetaZero ? alpha * sum : alpha * sum + beta * y[row];
}

template <typename Value, int B, bool BetaZero>
__global__ void __launch_bounds__(BSR_BLOCK)
    bsr_row_kernel(int64_t rows, int64_t cols, int64_t block_rows,
                   const int64_t *__restrict__ block_row_offsets,
                   const int32_t *__restrict__ block_col_indices, const Value *__restrict__ values,
                   const Value *__restrict__ x, Value alpha, Value beta, Value *__restrict__ y) {
    typedef bsr_row_map<B> map;
    __shared__ Value partial[BSR_WARPS][map::passes * 32];
    const int lane = threadIdx.x & 31, warp_in_block = threadIdx.x >> 5;
    /* this lane's elements of a step: block slot, row and column inside the block */
    int slot[map::passes], bcol[map::passes];
    bool used[map::passes];
#pragma unroll
    for (int p = 0; p < map::passes; p++) {
        const int e = lane + 32 * p;
        used[p] = e < map::step_elems;
        slot[p] = e / map::area;
        bcol[p] = e % B;
    }
    const int64_t warp_stride = (int64_t)gridDim.x * BSR_WARPS;
    for (int64_t br = (int64_t)blockIdx.x * BSR_WARPS + warp_in_block; br < block_rows;
         br += warp_stride) {
        const int64_t begin = __ldg(block_row_offsets + br), end = __ldg(block_row_offsets + br + 1);
        Value acc[map::passes];
#pragma unroll
        for (int p = 0; p < map::passes; p++) acc[p] = Value(0);
        for (int64_t q0 = begin; q0 < end; q0 += map::per_step) {
#pragma unroll
            for (int p = 0; p < map::passes; p++) {
                const int64_t q = q0 + slot[p];
                if (!used[p] || q >= end) continue;
                const int64_t col = (int64_t)__ldg(block_col_indices + q) * B + bcol[p];
                if (col < cols)
                    acc[p] += __ldg(values + q0 * map::area + lane + 32 * p) * __ldg(x + col);
            }
        }
#pragma unroll
        for (int p = 0; p < map::passes; p++) partial[warp_in_block][lane + 32 * p] = acc[p];
        __syncwarp();
        /* lane r < B: row r's partial sums, over the step's blocks q and their columns c */
        if (lane < B) {
            Value sum = Value(0);
#pragma unroll
            for (int q = 0; q < map::per_step; q++)
#pragma unroll
                for (int c = 0; c < B; c++) sum += partial[warp_in_block][q * map::area + lane * B + c];
            const int64_t row = br * B + lane;
            bsr_finish<Value, BetaZero>(row, row < rows, sum, alpha, beta, y);
        }
        __syncwarp();
    }
}

template <typename Value, int B, bool BetaZero>
__global__ void __launch_bounds__(BSR_BLOCK)
    bsr_col_kernel(int64_t rows, int64_t cols, int64_t block_rows,
                   const int64_t *__restrict__ block_row_offsets,
                   const int32_t *__restrict__ block_col_indices, const Value *__restrict__ values,
                   const Value *__restrict__ x, Value alpha, Value beta, Value *__restrict__ y) {
    constexpr int PER_STEP = 32 / B; /* block-row columns per step */
    __shared__ Value partial[BSR_WARPS][32];
    const int lane = threadIdx.x & 31, warp_in_block = threadIdx.x >> 5;
    const int slot = lane / B, r = lane % B;
    const bool used = slot < PER_STEP;
    const int64_t warp_stride = (int64_t)gridDim.x * BSR_WARPS;
    for (int64_t br = (int64_t)blockIdx.x * BSR_WARPS + warp_in_block; br < block_rows;
         br += warp_stride) {
        const int64_t begin = __ldg(block_row_offsets + br), end = __ldg(block_row_offsets + br + 1);
        const int64_t num_columns = (end - begin) * B;
        Value acc = Value(0);
        if (used)
            for (int64_t k = slot; k < num_columns; k += PER_STEP) {
                const int64_t q = begin + k / B;
                const int c = (int)(k % B);
                const int64_t col = (int64_t)__ldg(block_col_indices + q) * B + c;
                if (col < cols) acc += __ldg(values + q * (B * B) + r * B + c) * __ldg(x + col);
            }
        partial[warp_in_block][lane] = acc;
        __syncwarp();
        /* lane r < B: row r's partial sums, over the column slots q */
        if (lane < B) {
            Value sum = Value(0);
#pragma unroll
            for (int q = 0; q < PER_STEP; q++) sum += partial[warp_in_block][q * B + lane];
            const int64_t row = br * B + lane;
            bsr_finish<Value, BetaZero>(row, row < rows, sum, alpha, beta, y);
        }
        __syncwarp();
    }
}

template <typename Value, int B>
static nz_status_t bsr_launch_block(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                    double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const nz_matrix_t *A = plan->A;
    const nzi_bsr_t *m = &A->host.bsr;
    const unsigned blocks = (unsigned)nzi_cuda_grid_blocks(
        cs, BSR_BLOCK, BSR_WAVES, (m->block_rows + BSR_WARPS - 1) / BSR_WARPS);
    const Value *values = (const Value *)m->values;
    const Value *xv = (const Value *)x;
    Value *yv = (Value *)y;
    const bool by_row = plan->alg == NZ_ALG_BSR_ROW;
    if (beta == 0.0) {
        if (by_row)
            bsr_row_kernel<Value, B, true><<<blocks, BSR_BLOCK, 0, cs->stream>>>(
                A->rows, A->cols, m->block_rows, m->block_row_offsets, m->block_col_indices,
                values, xv, (Value)alpha, Value(0), yv);
        else
            bsr_col_kernel<Value, B, true><<<blocks, BSR_BLOCK, 0, cs->stream>>>(
                A->rows, A->cols, m->block_rows, m->block_row_offsets, m->block_col_indices,
                values, xv, (Value)alpha, Value(0), yv);
    } else {
        if (by_row)
            bsr_row_kernel<Value, B, false><<<blocks, BSR_BLOCK, 0, cs->stream>>>(
                A->rows, A->cols, m->block_rows, m->block_row_offsets, m->block_col_indices,
                values, xv, (Value)alpha, (Value)beta, yv);
        else
            bsr_col_kernel<Value, B, false><<<blocks, BSR_BLOCK, 0, cs->stream>>>(
                A->rows, A->cols, m->block_rows, m->block_row_offsets, m->block_col_indices,
                values, xv, (Value)alpha, (Value)beta, yv);
    }
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

template <typename Value>
static nz_status_t bsr_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                              double beta, void *y) {
    switch (plan->A->host.bsr.block) {
    case 2: return bsr_launch_block<Value, 2>(plan, alpha, x, beta, y);
    case 3: return bsr_launch_block<Value, 3>(plan, alpha, x, beta, y);
    case 4: return bsr_launch_block<Value, 4>(plan, alpha, x, beta, y);
    case 5: return bsr_launch_block<Value, 5>(plan, alpha, x, beta, y);
    case 6: return bsr_launch_block<Value, 6>(plan, alpha, x, beta, y);
    case 7: return bsr_launch_block<Value, 7>(plan, alpha, x, beta, y);
    case 8: return bsr_launch_block<Value, 8>(plan, alpha, x, beta, y);
    default:
        return nzi_error(plan->ctx, NZ_ERR_UNSUPPORTED,
                         "nz_spmv_execute: BSR block size %d is not supported on the GPU (2..8)",
                         plan->A->host.bsr.block);
    }
}

/* No preprocessing: the block size was checked by the dispatcher (nzi_cuda_format_plan_check). */
static nz_status_t bsr_setup(nz_spmv_plan_t *plan) {
    plan->state = NULL;
    plan->workspace_bytes = 0;
    plan->reproducible = 1;
    plan->vector_width = 32;
    return NZ_SUCCESS;
}

static nz_status_t bsr_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                               double beta, void *y) {
    return plan->A->value_type == NZ_F32 ? bsr_launch<float>(plan, alpha, x, beta, y)
                                         : bsr_launch<double>(plan, alpha, x, beta, y);
}

static void bsr_release(nz_spmv_plan_t *plan) { plan->state = NULL; }

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_bsr_row_ops = {NZ_ALG_BSR_ROW, bsr_setup, bsr_execute,
                                                             bsr_release};
extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_bsr_col_ops = {NZ_ALG_BSR_COL, bsr_setup, bsr_execute,
                                                             bsr_release};

template nz_status_t bsr_launch<float>(const nz_spmv_plan_t *, double, const void *, double,
                                       void *);
template nz_status_t bsr_launch<double>(const nz_spmv_plan_t *, double, const void *, double,
                                        void *);
