/* spmv_ipcsr.cu: IPCSR (improved perfect CSR) SpMV: host-built row blocks staged in shared memory. */
/*
 * Design source: J. Gao, P. Qi, G. He, "Efficient CSR-based sparse matrix-vector multiplication
 * on GPU", Mathematical Problems in Engineering 2016 (IPCSR, improving Gao et al.'s PCSR):
 * Algorithm 4/6 (row blocks on the host), Algorithm 7 (one kernel: coalesced staging of the
 * products into shared memory, then a scalar or multiple-scalar reduction chosen by the block's
 * row count), Algorithms 8/9 (a block of a single row reduces the whole row with all threads).
 *
 * Row blocks (setup, on the host, from one copy of the row offsets): consecutive rows are packed
 * into a block while their nonzeros fit the shared-memory tile (`budget` products) and their
 * count stays <= IPCSR_THREADS. The tile size follows the paper's rule: the shared memory of an
 * SM divided among the blocks that can be resident on it (from the occupancy of this kernel),
 * less the per-block reservation, capped at the default per-block limit so that the rest of the
 * SM's unified L1 stays available for caching x. A row longer than the tile (which the paper
 * gives to one block) is split into pieces of `budget` nonzeros, one block per piece, so a row
 * of millions of nonzeros is spread over the whole device.
 *
 * Which thread handles which data (IPCSR_THREADS threads per block):
 *   - tile block (several rows): thread t stages products t, t + T, ... (values[k] * x[col[k]],
 *     fully coalesced, four loads in flight per thread) into shared memory; after a barrier, the
 *     rows are reduced by groups of g threads, g the largest power of two <= T / rows (at most
 *     32; g = 1 is the paper's scalar-style reduction, g > 1 its multiple scalar-style reduction,
 *     with the group's partial sums combined by shuffles instead of shared memory);
 *   - single-row block: thread t accumulates entries t, t + T, ... of the row in a register,
 *     then a block reduction (warp shuffles, then one warp over the warp sums);
 *   - piece of a split row: as a single-row block over the piece; the piece's sum goes to a
 *     partial-sum array, and the block that finishes last (a per-row atomic ticket after a
 *     __threadfence) adds the row's partials in a fixed order, writes y and resets the ticket.
 *
 * Reproducibility: bitwise reproducible run to run. The blocks, the assignment of entries to
 * threads and every reduction tree are fixed by the plan; only which block of a split row
 * finishes last varies, and that block sums the partials in index order regardless.
 */
#include "cuda_internal.h"
#include "row_blocks.cuh"

/* Threads per block. 512 lets a block hold up to 512 short rows (one per thread in the scalar
 * reduction) while four blocks fill a 2048-thread SM. */
#define IPCSR_THREADS 512
/* Bytes kept free for the kernel's static shared variables. */
#define IPCSR_STATIC_SHARED 64

/* Block descriptor (one int4 per CUDA block):
 *   pieces == 1: rows [x, y) (y - x == 1: the single-row path), z = 0, w = 1;
 *   pieces  > 1: piece z of w of row x; y is the row's first slot in partials / tickets. */
typedef struct ipcsr_state {
    /* first member (nzi_row_blocks_plan_release frees the state through it): the block table;
     * partials and tickets (one per piece) for split rows */
    nzi_row_blocks_t rb;
    int budget;              /* products per tile = nonzeros per piece of a split row */
    size_t shared_bytes;     /* dynamic shared memory per block */
} ipcsr_state_t;

/* One kernel for all three block kinds (the branch is uniform within a block). Shared memory:
 * products[budget], warp_sums[32], row_local[T + 1] (row starts relative to the tile). */
template <typename Value, typename Offset>
__global__ void __launch_bounds__(IPCSR_THREADS)
ipcsr_kernel(const int4 *__restrict__ blocks, const Offset *__restrict__ row_offsets,
             const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
             const Value *__restrict__ x, Value *__restrict__ y, Value alpha, Value beta,
             int budget, Value *__restrict__ partials, unsigned int *__restrict__ tickets) {
    constexpr int T = IPCSR_THREADS;
    extern __shared__ __align__(16) unsigned char ipcsr_shared[];
    __shared__ int is_last;
    Value *products = (Value *)ipcsr_shared;
    Value *warp_sums = products + budget;
    int *row_local = (int *)(warp_sums + 32);
    const int tid = threadIdx.x;
    const int4 d = blocks[blockIdx.x];
    Offset base;
    int n;
    /* a piece of a split row (at most `budget` entries), or a block of one row (Algorithm 8: all
     * threads on the row, no staging) */
    if (nzi_cuda_row_block_simple<Value, Offset, T>(d, row_offsets, col_indices, values, x, y, alpha,
                                                    beta, budget, partials, tickets, warp_sums,
                                                    &is_last, &base, &n))
        return;
    const int row_begin = d.x;
    const int rows = d.y - d.x;

    /* Stage 1: coalesced products into shared memory, row starts relative to the tile. */
    for (int r = tid; r <= rows; r += T) row_local[r] = (int)(__ldg(row_offsets + row_begin + r) - base);
    nzi_cuda_stage_products<Value, T>(col_indices + base, values + base, n, x, products);
    __syncthreads();

    /* Stage 2: the decision tree: g threads per row, g the largest power of two <= T / rows,
     * at most 32 (rows <= T, so g >= 1). */
    nzi_cuda_rows_from_products<Value, Offset, T>(row_begin, rows, 1, row_local, row_offsets, base,
                                                  products, y, alpha, beta);
}

template <typename Value, typename Offset>
static const void *ipcsr_kernel_ptr(void) {
    return (const void *)ipcsr_kernel<Value, Offset>;
}

/* The tile size from the device limits: SM shared memory over resident blocks, less the
 * per-block reservation, within the default per-block limit. */
static nz_status_t ipcsr_choose_budget(nz_context_t *ctx, const nz_matrix_t *A, int *budget,
                                       size_t *shared_bytes) {
    bool f64 = A->value_type == NZ_F64, o64 = A->device.offset_type == NZ_I64;
    const void *kernel = f64 ? (o64 ? ipcsr_kernel_ptr<double, int64_t>() : ipcsr_kernel_ptr<double, int32_t>())
                             : (o64 ? ipcsr_kernel_ptr<float, int64_t>() : ipcsr_kernel_ptr<float, int32_t>());
    int resident = 0;
    NZI_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel,
                                                                     IPCSR_THREADS, 0));
    if (resident < 1) resident = 1;
    size_t per_block = 0;
    NZI_TRY(nzi_row_blocks_shared_per_block(ctx, resident, &per_block));
    const size_t value_size = nzi_value_size(A->value_type);
    const size_t fixed = 32 * value_size + (IPCSR_THREADS + 1) * sizeof(int) + IPCSR_STATIC_SHARED;
    size_t elements = per_block > fixed ? (per_block - fixed) / value_size : 0;
    elements &= ~(size_t)31;
    if (elements < IPCSR_THREADS)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "IPCSR plan: %zu bytes of shared memory per block are too few",
                         per_block);
    *budget = (int)elements;
    *shared_bytes = elements * value_size + 32 * value_size + (IPCSR_THREADS + 1) * sizeof(int);
    return NZ_SUCCESS;
}

template <typename Value, typename Offset>
static void ipcsr_launch(const void *opaque, cudaStream_t stream, const nz_matrix_t *A,
                         const void *x, void *y, double alpha, double beta) {
    const ipcsr_state_t *state = (const ipcsr_state_t *)opaque;
    ipcsr_kernel<Value, Offset><<<(unsigned)state->rb.num_blocks, IPCSR_THREADS,
                                  state->shared_bytes, stream>>>(
        state->rb.blocks, nzi_dev_offsets<Offset>(A), A->device.col_indices,
        (const Value *)A->device.values, (const Value *)x, (Value *)y, (Value)alpha, (Value)beta,
        state->budget, (Value *)state->rb.partials, state->rb.tickets);
}

static const nzi_row_blocks_launchers_t ipcsr_launchers = {
    ipcsr_launch<float, int32_t>, ipcsr_launch<float, int64_t>, ipcsr_launch<double, int32_t>,
    ipcsr_launch<double, int64_t>};

/* Setup: the block table (nzi_row_blocks_build, Algorithm 4 with the long-row case of Algorithm
 * 6 split into pieces of `budget` nonzeros: a tile holds at most IPCSR_THREADS rows); partial
 * sums and tickets only when some row is split. */
static nz_status_t ipcsr_sizes(nz_context_t *ctx, const nz_matrix_t *A, void *opaque,
                               int64_t *tile_nnz, int64_t *max_rows, int64_t *piece_length) {
    ipcsr_state_t *state = (ipcsr_state_t *)opaque;
    NZI_TRY(ipcsr_choose_budget(ctx, A, &state->budget, &state->shared_bytes));
    *tile_nnz = *piece_length = state->budget;
    *max_rows = IPCSR_THREADS;
    return NZ_SUCCESS;
}

static nz_status_t ipcsr_setup(nz_spmv_plan_t *plan) {
    static const nzi_row_block_names_t names = {
        "IPCSR plan", "IPCSR host row offsets", "IPCSR block table",
        "IPCSR split-row partial sums", "IPCSR split-row tickets"};
    return nzi_row_blocks_setup(plan, &names, IPCSR_THREADS, sizeof(ipcsr_state_t), ipcsr_sizes,
                                &ipcsr_launchers);
}

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_ipcsr_ops = {
    NZ_ALG_IPCSR, ipcsr_setup, nzi_row_blocks_execute, nzi_row_blocks_plan_release};
