/* row_blocks.cuh: what the row-block CSR algorithms share (CSR-Adaptive, IPCSR): plan setup and kernel pieces. */
#ifndef NZI_ROW_BLOCKS_CUH
#define NZI_ROW_BLOCKS_CUH

#include "cuda_internal.h"

/* ---- plan setup (row_blocks.cu) ------------------------------------------------------------ */

/* One algorithm's kernel launch for one (value, offset) type pair: the plan's state (whose first
 * member is the nzi_row_blocks_t), the context's stream, y = alpha A x + beta y. */
typedef void (*nzi_row_blocks_launch_fn)(const void *state, cudaStream_t stream,
                                         const nz_matrix_t *A, const void *x, void *y,
                                         double alpha, double beta);
typedef struct nzi_row_blocks_launchers {
    nzi_row_blocks_launch_fn f32_i32, f32_i64, f64_i32, f64_i64;
} nzi_row_blocks_launchers_t;
/* A row-block plan's device arrays: one int4 descriptor per CUDA block (see below), and, when a
 * row is split into pieces, a partial sum and a ticket per piece slot; the algorithm's launches. */
typedef struct nzi_row_blocks {
    int4 *blocks;            /* device, num_blocks */
    void *partials;          /* device, num_slots values (split rows only) */
    unsigned int *tickets;   /* device, num_slots */
    int64_t num_blocks, num_slots;
    const nzi_row_blocks_launchers_t *launch;
} nzi_row_blocks_t;

/* The words of an algorithm's messages and allocation labels. */
typedef struct nzi_row_block_names {
    const char *plan;         /* message prefix, "CSR-Adaptive plan" */
    const char *host_offsets; /* label of the host copy of the row offsets */
    const char *blocks;       /* label of the block table (host and device) */
    const char *partials;     /* label of the pieces' partial sums */
    const char *tickets;      /* label of the pieces' tickets */
} nzi_row_block_names_t;

/* An algorithm's part of the setup: its sizes (state fields it fills, e.g. shared memory) for
 * device CSR A, and the block table's tile_nnz, max_rows and piece_length (nzi_row_blocks_build). */
typedef nz_status_t (*nzi_row_blocks_sizes_fn)(nz_context_t *ctx, const nz_matrix_t *A,
                                               void *state, int64_t *tile_nnz, int64_t *max_rows,
                                               int64_t *piece_length);
/* A row-block plan's setup: checks what the kernels need (op = N, rows within int32, `threads`
 * threads per block allowed by the device), plan->state = a zeroed state of state_bytes whose
 * first member must be the nzi_row_blocks_t (its launches: `launch`), then (A not empty)
 * `sizes` and the block table;
 * the plan is reproducible, with no vector width. On failure the state is freed. */
nz_status_t nzi_row_blocks_setup(nz_spmv_plan_t *plan, const nzi_row_block_names_t *names,
                                 int threads, size_t state_bytes, nzi_row_blocks_sizes_fn sizes,
                                 const nzi_row_blocks_launchers_t *launch);
/* Free such a state (NULL allowed): its row blocks, then the state itself. */
void nzi_row_blocks_plan_release(nz_spmv_plan_t *plan);

/* The plans' execute (their ops tables name it): nothing for an empty block table, else the
 * plan's launch for A's value and offset types on the context's stream, checked. */
nz_status_t nzi_row_blocks_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                   double beta, void *y);

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

/* A staged load of the matrix arrays: in double without L1 allocation, so L1 keeps x's lines
 * (H200, `nz bench --no-real`, bench/results/h200-2026-11-26-s13-nol1-ab.txt: adaptive / ipcsr
 * on random 4M x 16 0.92x / 0.91x the time, every double case of the suite 0.86x-1.00x; in single
 * the Laplacian's adaptive ran 1.09x slower, so single keeps __ldg). */
template <typename Value, typename T>
static __device__ __forceinline__ T nzi_cuda_stage_load(const T *address) {
    if (sizeof(Value) == 8) return nzi_ld_no_l1(address);
    return __ldg(address);
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
        const int32_t c0 = nzi_cuda_stage_load<Value>(cols + k);
        const int32_t c1 = nzi_cuda_stage_load<Value>(cols + k + T);
        const int32_t c2 = nzi_cuda_stage_load<Value>(cols + k + 2 * T);
        const int32_t c3 = nzi_cuda_stage_load<Value>(cols + k + 3 * T);
        const Value v0 = nzi_cuda_stage_load<Value>(vals + k);
        const Value v1 = nzi_cuda_stage_load<Value>(vals + k + T);
        const Value v2 = nzi_cuda_stage_load<Value>(vals + k + 2 * T);
        const Value v3 = nzi_cuda_stage_load<Value>(vals + k + 3 * T);
        products[k] = v0 * __ldg(x + c0);
        products[k + T] = v1 * __ldg(x + c1);
        products[k + 2 * T] = v2 * __ldg(x + c2);
        products[k + 3 * T] = v3 * __ldg(x + c3);
    }
    for (; k < n; k += T)
        products[k] = nzi_cuda_stage_load<Value>(vals + k) *
                      __ldg(x + nzi_cuda_stage_load<Value>(cols + k));
}

/* The two kinds of block both kernels handle alike: a piece of a split row (d.w > 1) and a block
 * of one row. Returns true when the block is done; else *base (the block's first entry) and *n
 * (its entry count) for the kernel's own path over rows d.x .. d.y - 1. */
template <typename Value, typename Offset, int T>
static __device__ __forceinline__ bool nzi_cuda_row_block_simple(
    const int4 d, const Offset *__restrict__ row_offsets, const int32_t *__restrict__ col_indices,
    const Value *__restrict__ values, const Value *__restrict__ x, Value *__restrict__ y,
    Value alpha, Value beta, int piece_length, Value *__restrict__ partials,
    unsigned int *__restrict__ tickets, Value *warp_sums, int *is_last, Offset *base, int *n) {
    if (d.w > 1) {
        nzi_cuda_row_piece<Value, Offset, T>(d, row_offsets, col_indices, values, x, y, alpha, beta,
                                             piece_length, partials, tickets, warp_sums, is_last);
        return true;
    }
    *base = __ldg(row_offsets + d.x);
    *n = (int)(__ldg(row_offsets + d.y) - *base);
    if (d.y - d.x == 1) {
        nzi_cuda_row_whole<Value, T>(col_indices + *base, values + *base, *n, x, y, d.x, alpha, beta,
                                     warp_sums);
        return true;
    }
    return false;
}

/* Rows row_begin .. row_begin + rows - 1 from their staged products (the caller synchronised
 * the block): g threads per row, g the largest power of two from min_group with g x 2 rows <= T,
 * at most 32, so groups never straddle a warp; each group sums its row's products with a stride
 * of g and a shuffle tree. A row's products start at row_local[r] when row_local is given (the
 * row starts staged in shared memory), else at row_offsets[row_begin + r] - base. */
template <typename Value, typename Offset, int T>
static __device__ __forceinline__ void nzi_cuda_rows_from_products(
    int row_begin, int rows, int min_group, const int *row_local,
    const Offset *__restrict__ row_offsets, Offset base, const Value *products,
    Value *__restrict__ y, Value alpha, Value beta) {
    int group_size = min_group;
    while (group_size < 32 && group_size * 2 * rows <= T) group_size *= 2;
    const int group = threadIdx.x / group_size;
    const int lane = threadIdx.x & (group_size - 1);
    Value sum = Value(0);
    if (group < rows) {
        const int start = row_local != NULL ? row_local[group]
                                            : (int)(__ldg(row_offsets + row_begin + group) - base);
        const int end = row_local != NULL
                            ? row_local[group + 1]
                            : (int)(__ldg(row_offsets + row_begin + group + 1) - base);
        for (int j = start + lane; j < end; j += group_size) sum += products[j];
    }
    for (int delta = group_size >> 1; delta > 0; delta >>= 1)
        sum += __shfl_down_sync(0xffffffffu, sum, delta, group_size);
    if (lane == 0 && group < rows) nzi_cuda_store_row(y, row_begin + group, sum, alpha, beta);
}

#endif /* NZI_ROW_BLOCKS_CUH */
