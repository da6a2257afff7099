/* spmv_sell.cu: SELL-C-sigma SpMV on the GPU: the Uppsala scs kernel, one thread per slot of a chunk. */
#include "cuda_internal.h"

/*
 * SELL-C-sigma (Kreutzer et al., SIAM J. Sci. Comput. 36(5), 2014) with the GPU kernel of the
 * Uppsala project report (N. Wik, "Accelerator-based programming", 2021, the `scs` kernel): rows
 * are grouped into chunks of C slots, each chunk padded to its own longest row and stored
 * column-major, so entry k of slot s of chunk c sits at chunk_offsets[c] + k * C + s.
 * Thread g of the grid owns slot g: chunk g / C, slot g % C. C is a multiple of 32 on the GPU, so
 * a warp never straddles two chunks: its 32 threads share the chunk's width and, at every step
 * k, read 32 consecutive column indices and values (coalesced). Unlike the report's kernel (one
 * thread block of C threads per chunk), blocks are 256 threads whatever C is, so small C does not
 * starve the SM of resident threads.
 * sigma > 1 sorted the rows by length inside windows of sigma rows before chunking (fewer padding
 * entries); row_of_slot maps a slot back to its row, and the kernel reads x and writes
 * y[row_of_slot[g]] directly, so x and y stay in the caller's order (no permutation pass).
 * Slots past the last row (row_of_slot -1) do nothing. Each thread stops at its row's first
 * padding entry; padding is never multiplied. Every row is written once, by its slot's thread.
 * Bitwise reproducible (fixed sequential order per row, no atomics).
 * Cost: sum over chunks of C x width entries (index + value) read, nnz gathers from x, one
 * row_of_slot read per slot.
 */

/* 256 threads: 8 warps per block, a whole number of blocks fills an SM of 2048 threads. */
#define SELL_BLOCK 256
/* Entries loaded before the first is used (independent loads in flight per thread). */
#define SELL_UNROLL 4

template <typename Value, bool BetaZero>
__global__ void __launch_bounds__(SELL_BLOCK)
    sell_kernel(int64_t num_slots, int32_t chunk, const int64_t *__restrict__ chunk_offsets,
                const int32_t *__restrict__ chunk_widths, const int32_t *__restrict__ row_of_slot,
                const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                const Value *__restrict__ x, Value alpha, Value beta, Value *__restrict__ y) {
    const int64_t slot = (int64_t)blockIdx.x * SELL_BLOCK + threadIdx.x;
    if (slot >= num_slots) return;
    const int32_t row = __ldg(row_of_slot + slot);
    if (row < 0) return;
    const int64_t c = slot / chunk;
    const int64_t first = __ldg(chunk_offsets + c) + (slot - c * chunk);
    const Value sum = nzi_cuda_padded_row_sum<SELL_UNROLL, Value>(
        col_indices + first, values + first, chunk, __ldg(chunk_widths + c), x);
    y[row] = BetaZero ? alpha * sum : alpha * sum + beta * y[row];
}

template <typename Value>
static nz_status_t sell_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                               double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nzi_sell_t *s = &plan->A->host.sell;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    const int64_t num_slots = s->num_chunks * s->chunk;
    const unsigned blocks = (unsigned)((num_slots + SELL_BLOCK - 1) / SELL_BLOCK);
    const Value *values = (const Value *)s->values;
    if (beta == 0.0)
        sell_kernel<Value, true><<<blocks, SELL_BLOCK, 0, stream>>>(
            num_slots, s->chunk, s->chunk_offsets, s->chunk_widths, s->row_of_slot,
            s->col_indices, values, (const Value *)x, (Value)alpha, Value(0), (Value *)y);
    else
        sell_kernel<Value, false><<<blocks, SELL_BLOCK, 0, stream>>>(
            num_slots, s->chunk, s->chunk_offsets, s->chunk_widths, s->row_of_slot,
            s->col_indices, values, (const Value *)x, (Value)alpha, (Value)beta, (Value *)y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* No preprocessing: the chunk height was checked by the dispatcher (nzi_cuda_format_plan_check). */
static nz_status_t sell_setup(nz_spmv_plan_t *plan) {
    plan->state = NULL;
    plan->workspace_bytes = 0;
    plan->reproducible = 1;
    plan->vector_width = 1;
    return NZ_SUCCESS;
}

static nz_status_t sell_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                double beta, void *y) {
    return plan->A->value_type == NZ_F32 ? sell_launch<float>(plan, alpha, x, beta, y)
                                         : sell_launch<double>(plan, alpha, x, beta, y);
}

static void sell_release(nz_spmv_plan_t *plan) { plan->state = NULL; }

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_sell_scalar_ops = {NZ_ALG_SCALAR, sell_setup,
                                                                 sell_execute, sell_release};

template nz_status_t sell_launch<float>(const nz_spmv_plan_t *, double, const void *, double,
                                        void *);
template nz_status_t sell_launch<double>(const nz_spmv_plan_t *, double, const void *, double,
                                         void *);
