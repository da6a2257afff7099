/* carry_fixup.cuh: the fix-up of tiled CSR kernels whose tiles end inside a row (csr/merge,
 * csr/split): each tile leaves the partial sum of its last, unfinished row (its carry), and a
 * second launch adds, for every run of consecutive tiles whose carries go to the same row, alpha
 * times the run's sum to that row, in a fixed order (bitwise reproducible). */
#ifndef NZ_CUDA_CARRY_FIXUP_CUH
#define NZ_CUDA_CARRY_FIXUP_CUH

#include "cuda_internal.h"

#define NZI_FIXUP_BLOCK 256

/* Blocks below short_blocks: thread t adds the short run of carries starting at t (run_length[t]
 * carries, 0 when t heads no short run) to its row carry_row[t], in order. Each block above
 * handles one long run (start, length, row in long_runs): its threads sum strided carries, then a
 * fixed shuffle / shared-memory tree combines them. Every row is touched by one thread only, after
 * the tile kernel wrote it. */
template <typename Value, typename Accum = Value>
__global__ void __launch_bounds__(NZI_FIXUP_BLOCK)
    nzi_carry_fixup_kernel(int64_t num_tiles, unsigned short_blocks,
                           const int32_t *__restrict__ carry_row,
                           const int32_t *__restrict__ run_length,
                           const int32_t *__restrict__ long_runs,
                           const Accum *__restrict__ carry_value, Accum alpha,
                           Value *__restrict__ y) {
    __shared__ Accum s_partial[NZI_FIXUP_BLOCK / 32];
    if (blockIdx.x < short_blocks) {
        const int64_t t = (int64_t)blockIdx.x * NZI_FIXUP_BLOCK + threadIdx.x;
        if (t >= num_tiles) return;
        const int length = run_length[t];
        if (length == 0) return;
        Accum sum = carry_value[t];
        for (int u = 1; u < length; u++) sum += carry_value[t + u];
        Value *target = y + carry_row[t];
        *target = (Value)((Accum)*target + alpha * sum);
        return;
    }
    const int32_t *run = long_runs + 3 * (int64_t)(blockIdx.x - short_blocks);
    const int64_t start = run[0];
    const int length = run[1];
    Accum sum = Accum(0);
    for (int u = threadIdx.x; u < length; u += NZI_FIXUP_BLOCK) sum += carry_value[start + u];
    sum = nzi_cuda_group_sum<32>(sum);
    if ((threadIdx.x & 31) == 0) s_partial[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        Accum total = s_partial[0];
        for (int w = 1; w < NZI_FIXUP_BLOCK / 32; w++) total += s_partial[w];
        y[run[2]] = (Value)((Accum)y[run[2]] + alpha * total);
    }
}

/* The launch over a plan's runs (nothing when no tile leaves a carry). carry_row is the device
 * copy of the rows the runs were listed from. */
template <typename Value, typename Accum>
static nz_status_t nzi_carry_fixup_launch(nz_context_t *ctx, const nzi_carry_runs_t *runs,
                                          int64_t num_tiles, const int32_t *carry_row,
                                          const Accum *carry_value, Accum alpha, Value *y) {
    if (runs->num_short + runs->num_long == 0) return NZ_SUCCESS;
    const unsigned short_blocks =
        runs->num_short > 0 ? (unsigned)((num_tiles + NZI_FIXUP_BLOCK - 1) / NZI_FIXUP_BLOCK) : 0;
    nzi_carry_fixup_kernel<Value, Accum>
        <<<short_blocks + (unsigned)runs->num_long, NZI_FIXUP_BLOCK, 0, nzi_cuda(ctx)->stream>>>(
            num_tiles, short_blocks, carry_row, runs->run_length, runs->long_runs, carry_value,
            alpha, y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

#endif
