/* row_blocks.cuh: the device pieces the row-block CSR kernels share (CSR-Adaptive, IPCSR). */
#ifndef NZI_ROW_BLOCKS_CUH
#define NZI_ROW_BLOCKS_CUH

#include "cuda_internal.h"

/*
 * Both kernels take one int4 descriptor d per block. d.w > 1: piece d.z of row d.x, which is
 * split into d.w pieces of at most piece_length entries (CSR-VectorL in CSR-Adaptive, the split
 * rows of IPCSR); d.y is the row's first slot in `partials` and its ticket in `tickets`. Else
 * rows d.x .. d.y - 1, and a block of one row is summed by all T threads without staging.
 * Each function is called by every thread of the block, replaces the kernel's own code line for
 * line, and keeps its summation order: the results stay bitwise identical and reproducible.
 */

/* Piece d.z of row d.x: the block's strided dot over the piece, its partial into
 * partials[slot + piece], a ticket after a __threadfence, and the block holding the last ticket
 * adds the row's partials in index order (a fixed order), writes y[row] and resets the ticket for
 * the next execution: one kernel, no floating-point atomics. is_last is the caller's __shared__
 * flag, warp_sums its 32-entry block_sum scratch. */
template <typename Value, typename Offset, int T>
static __device__ __forceinline__ void nzi_cuda_row_piece(
    const int4 d, const Offset *__restrict__ row_offsets, const int32_t *__restrict__ col_indices,
    const Value *__restrict__ values, const Value *__restrict__ x, Value *__restrict__ y,
    Value alpha, Value beta, int piece_length, Value *__restrict__ partials,
    unsigned int *__restrict__ tickets, Value *warp_sums, int *is_last) {
    const int tid = threadIdx.x;
    const int row = d.x, slot = d.y, piece = d.z, pieces = d.w;
    const Offset row_start = __ldg(row_offsets + row);
    const Offset row_end = __ldg(row_offsets + row + 1);
    const Offset begin = row_start + (Offset)piece * (Offset)piece_length;
    const Offset remaining = row_end - begin;
    const int n = remaining < (Offset)piece_length ? (int)remaining : piece_length;
    Value sum = nzi_cuda_strided_dot<Value, T>(col_indices + begin, values + begin, n, x);
    sum = nzi_cuda_block_sum<Value, T>(sum, warp_sums);
    if (tid == 0) {
        partials[slot + piece] = sum;
        __threadfence();
        const unsigned int ticket = atomicAdd(tickets + slot, 1u);
        *is_last = ticket == (unsigned int)(pieces - 1);
    }
    __syncthreads();
    if (*is_last) {
        __threadfence();
        Value total = Value(0);
        for (int p = tid; p < pieces; p += T) total += __ldcg(partials + slot + p);
        total = nzi_cuda_block_sum<Value, T>(total, warp_sums);
        if (tid == 0) {
            tickets[slot] = 0u;
            nzi_cuda_store_row(y, row, total, alpha, beta);
        }
    }
}

/* A block of one row (CSR-Vector in CSR-Adaptive, Algorithm 8 in IPCSR): all T threads on the n
 * entries at cols / vals, no staging. */
template <typename Value, int T>
static __device__ __forceinline__ void nzi_cuda_row_whole(const int32_t *__restrict__ cols,
                                                          const Value *__restrict__ vals, int n,
                                                          const Value *__restrict__ x,
                                                          Value *__restrict__ y, int row,
                                                          Value alpha, Value beta,
                                                          Value *warp_sums) {
    Value sum = nzi_cuda_strided_dot<Value, T>(cols, vals, n, x);
    sum = nzi_cuda_block_sum<Value, T>(sum, warp_sums);
    if (threadIdx.x == 0) nzi_cuda_store_row(y, row, sum, alpha, beta);
}

#endif /* NZI_ROW_BLOCKS_CUH */
