/* row_blocks.cuh: what the row-block CSR algorithms share (CSR-Adaptive, IPCSR): plan setup and kernel pieces. */
#ifndef NZI_ROW_BLOCKS_CUH
#define NZI_ROW_BLOCKS_CUH

#include "cuda_internal.h"

/* ---- plan setup (row_blocks.cu) ------------------------------------------------------------ */

/* A row-block plan's device arrays: one int4 descriptor per CUDA block (see below), and, when a
 * row is split into pieces, a partial sum and a ticket per piece slot. */
typedef struct nzi_row_blocks {
    int4 *blocks;            /* device, num_blocks */
    void *partials;          /* device, num_slots values (split rows only) */
    unsigned int *tickets;   /* device, num_slots */
    int64_t num_blocks, num_slots;
} nzi_row_blocks_t;

/* The words of an algorithm's messages and allocation labels. */
typedef struct nzi_row_block_names {
    const char *plan;         /* message prefix, "CSR-Adaptive plan" */
    const char *host_offsets; /* label of the host copy of the row offsets */
    const char *blocks;       /* label of the block table (host and device) */
    const char *partials;     /* label of the pieces' partial sums */
    const char *tickets;      /* label of the pieces' tickets */
} nzi_row_block_names_t;

/* A row-block plan's start: checks what the kernels need (op = N, rows within int32, `threads`
 * threads per block allowed by the device), then plan->state = a zeroed state of state_bytes,
 * whose first member must be the nzi_row_blocks_t; the plan is reproducible, with no vector
 * width and no workspace yet. */
nz_status_t nzi_row_blocks_plan_start(nz_spmv_plan_t *plan, const char *plan_name, int threads,
                                      size_t state_bytes);
/* Free such a state (NULL allowed): its row blocks, then the state itself. */
void nzi_row_blocks_plan_release(nz_spmv_plan_t *plan);

/* Shared memory a block may stage into when `resident` blocks share an SM: the SM's shared
 * memory over them, less the per-block reservation, within the default per-block limit. */
nz_status_t nzi_row_blocks_shared_per_block(nz_context_t *ctx, int resident, size_t *per_block);

/* The block table of device CSR A, built on the host from one copy of its row offsets (count,
 * then fill) and uploaded; partial sums and tickets (zeroed) when a row is split. Consecutive
 * rows share a block while their nonzeros fit tile_nnz and they number at most max_rows; a longer
 * row is a block of its own if it has at most piece_length nonzeros, else pieces of piece_length
 * (piece_length >= tile_nnz). *workspace_bytes: the device bytes. On failure what was allocated
 * stays in rb for nzi_row_blocks_free. */
nz_status_t nzi_row_blocks_build(nz_context_t *ctx, const nz_matrix_t *A, int64_t tile_nnz,
                                 int64_t max_rows, int64_t piece_length,
                                 const nzi_row_block_names_t *names, nzi_row_blocks_t *rb,
                                 size_t *workspace_bytes);

/* Free the device arrays in rb that are set (A's value type sizes the partials). */
void nzi_row_blocks_free(nz_context_t *ctx, nz_value_type_t value_type, nzi_row_blocks_t *rb);

/* ---- kernel pieces ------------------------------------------------------------------------- */

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

/* Stage the products values[k] * x[cols[k]] of a block's n entries into products[k]: thread t
 * takes entries t, t + T, ... (coalesced), four loads in flight per step. The caller
 * synchronises the block before reading them. */
template <typename Value, int T>
static __device__ __forceinline__ void nzi_cuda_stage_products(const int32_t *__restrict__ cols,
                                                               const Value *__restrict__ vals,
                                                               int n, const Value *__restrict__ x,
                                                               Value *products) {
    int k = threadIdx.x;
    for (; n - k > 3 * T; k += 4 * T) {
        const int32_t c0 = __ldg(cols + k), c1 = __ldg(cols + k + T);
        const int32_t c2 = __ldg(cols + k + 2 * T), c3 = __ldg(cols + k + 3 * T);
        const Value v0 = __ldg(vals + k), v1 = __ldg(vals + k + T);
        const Value v2 = __ldg(vals + k + 2 * T), v3 = __ldg(vals + k + 3 * T);
        products[k] = v0 * __ldg(x + c0);
        products[k + T] = v1 * __ldg(x + c1);
        products[k + 2 * T] = v2 * __ldg(x + c2);
        products[k + 3 * T] = v3 * __ldg(x + c3);
    }
    for (; k < n; k += T) products[k] = __ldg(vals + k) * __ldg(x + __ldg(cols + k));
}

#endif /* NZI_ROW_BLOCKS_CUH */
