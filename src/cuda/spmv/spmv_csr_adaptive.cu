/* spmv_csr_adaptive.cu: CSR-Adaptive SpMV (CSR-Stream, CSR-Vector, CSR-VectorL) over host-built row blocks. */
/*
 * Design sources: J. L. Greathouse and M. Daga, "Efficient sparse matrix-vector multiplication
 * on GPUs using the CSR storage format", SC14 (row blocks, CSR-Stream, CSR-Vector), and M. Daga
 * and J. L. Greathouse, "Structural agnostic SpMV: adapting CSR-Adaptive for irregular
 * matrices", HiPC 2015 (several threads per row in CSR-Stream; CSR-VectorL for very long rows).
 *
 * Row blocks (setup, on the host, from one copy of the row offsets): consecutive rows are packed
 * into a block while their nonzeros fit `nnz_per_wg` (and at most nnz_per_wg rows, so runs of
 * empty rows stay bounded). nnz_per_wg is ADAPTIVE_NNZ_PER_THREAD entries per thread, lowered if
 * needed so that a full SM of these blocks (max threads per SM / ADAPTIVE_THREADS of them) fits
 * the SM's shared memory. A row longer than nnz_per_wg is a block of its own: CSR-Vector if it
 * has at most ADAPTIVE_VECTORL_FACTOR x nnz_per_wg nonzeros, else CSR-VectorL, split into pieces
 * of that many nonzeros, one block per piece.
 *
 * Which thread handles which data (ADAPTIVE_THREADS threads per block):
 *   - CSR-Stream (block of several rows): thread t streams products t, t + T, ... of the block
 *     (values[k] * x[col[k]], coalesced, four loads in flight) into shared memory; after a
 *     barrier, with r rows: if r > T / 2 each thread reduces whole rows serially (rows t, t + T,
 *     ...), else groups of g threads (g the largest power of two <= T / r, at most 32) reduce a
 *     row each and combine with shuffles. Row bounds come from the row offsets (cached, coalesced).
 *   - CSR-Vector (block of one row): thread t accumulates entries t, t + T, ... in a register,
 *     then a block reduction (shuffles within warps, then one warp over the warp sums).
 *   - CSR-VectorL (piece of a long row): as CSR-Vector over the piece. The original adds the
 *     pieces with atomics; here each piece writes a partial sum, takes a ticket with atomicAdd
 *     after a __threadfence, and the block holding the last ticket adds the row's partials in
 *     index order, writes y and resets the ticket: one kernel, no floating-point atomics.
 *
 * Tunable (nz_tunables_t, by the name nz_tunables_parse and the CLI give it; read once at plan
 * setup; NZ_TUNE_AUTO = the default):
 *   NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD=4|8|16|32   ADAPTIVE_NNZ_PER_THREAD (still capped by the
 *                                               shared memory of a full SM of blocks)
 *
 * Reproducibility: bitwise reproducible run to run (block table, entry-to-thread assignment and
 * reduction trees are fixed by the plan; the last VectorL block sums partials in a fixed order).
 */
#include "cuda_internal.h"
#include "row_blocks.cuh"

/* Threads per block (workgroup). 256 as in the SC14 implementation. */
#define ADAPTIVE_THREADS 256
/* Nonzeros staged per thread in a CSR-Stream block (before the shared-memory limit). */
#define ADAPTIVE_NNZ_PER_THREAD 16
/* Rows of up to this many x nnz_per_wg nonzeros use CSR-Vector (one block); longer rows use
 * CSR-VectorL with pieces of that length. */
#define ADAPTIVE_VECTORL_FACTOR 2
/* Bytes kept free for the kernel's static shared variables. */
#define ADAPTIVE_STATIC_SHARED 64

/* Block descriptor (one int4 per CUDA block):
 *   w == 1: rows [x, y) (y - x == 1: CSR-Vector, else CSR-Stream), z = 0;
 *   w  > 1: CSR-VectorL piece z of w of row x; y is the row's first slot in partials / tickets. */
typedef struct adaptive_state {
    /* first member (nzi_row_blocks_plan_release frees the state through it): the block table;
     * partials and tickets for long rows only */
    nzi_row_blocks_t rb;
    int nnz_per_wg;          /* products staged per CSR-Stream block */
    int piece;               /* nonzeros per CSR-VectorL piece */
    size_t shared_bytes;     /* dynamic shared memory per block */
} adaptive_state_t;

/* Shared memory: products[nnz_per_wg], warp_sums[32]. */
template <typename Value, typename Offset>
__global__ void __launch_bounds__(ADAPTIVE_THREADS)
adaptive_kernel(const int4 *__restrict__ blocks, const Offset *__restrict__ row_offsets,
                const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                const Value *__restrict__ x, Value *__restrict__ y, Value alpha, Value beta,
                int nnz_per_wg, int piece_length, Value *__restrict__ partials,
                unsigned int *__restrict__ tickets) {
    constexpr int T = ADAPTIVE_THREADS;
    extern __shared__ __align__(16) unsigned char adaptive_shared[];
    __shared__ int is_last;
    Value *products = (Value *)adaptive_shared;
    Value *warp_sums = products + nnz_per_wg;
    const int tid = threadIdx.x;
    const int4 d = blocks[blockIdx.x];
    Offset base;
    int n;
    /* CSR-VectorL (piece d.z of row d.x) and CSR-Vector (a block of one row) */
    if (nzi_cuda_row_block_simple<Value, Offset, T>(d, row_offsets, col_indices, values, x, y, alpha,
                                                    beta, piece_length, partials, tickets,
                                                    warp_sums, &is_last, &base, &n))
        return;
    const int row_begin = d.x;
    const int rows = d.y - d.x;

    /* CSR-Stream: stage the block's products. */
    nzi_cuda_stage_products<Value, T>(col_indices + base, values + base, n, x, products);
    __syncthreads();

    if (2 * rows > T) {
        /* Many rows: one thread per row, serially. */
        for (int r = tid; r < rows; r += T) {
            const int start = (int)(__ldg(row_offsets + row_begin + r) - base);
            const int end = (int)(__ldg(row_offsets + row_begin + r + 1) - base);
            Value sum = Value(0);
            for (int j = start; j < end; j++) sum += products[j];
            nzi_cuda_store_row(y, row_begin + r, sum, alpha, beta);
        }
        return;
    }
    /* Few rows: g threads per row (HiPC15), g * rows <= T, groups within a warp. */
    nzi_cuda_rows_from_products<Value, Offset, T>(row_begin, rows, 2, NULL, row_offsets, base,
                                                  products, y, alpha, beta);
}

/* nnz per workgroup: ADAPTIVE_NNZ_PER_THREAD per thread, within 1 / (blocks per SM) of the SM's
 * shared memory (less the per-block reservation) and the per-block limit. */
static nz_status_t adaptive_choose_sizes(nz_context_t *ctx, const nz_matrix_t *A,
                                         adaptive_state_t *state) {
    int blocks_per_sm = nzi_cuda(ctx)->max_threads_per_sm / ADAPTIVE_THREADS;
    if (blocks_per_sm < 1) blocks_per_sm = 1;
    size_t per_block = 0;
    NZI_TRY(nzi_row_blocks_shared_per_block(ctx, blocks_per_sm, &per_block));
    const size_t value_size = nzi_value_size(A->value_type);
    const size_t fixed = 32 * value_size + ADAPTIVE_STATIC_SHARED;
    size_t elements = per_block > fixed ? (per_block - fixed) / value_size : 0;
    const int nnz_per_thread =
        nzi_tune_pick(ctx->tunables.adaptive_nnz_per_thread, ADAPTIVE_NNZ_PER_THREAD);
    if (elements > (size_t)nnz_per_thread * ADAPTIVE_THREADS)
        elements = (size_t)nnz_per_thread * ADAPTIVE_THREADS;
    elements &= ~(size_t)31;
    if (elements < ADAPTIVE_THREADS)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "CSR-Adaptive plan: %zu bytes of shared memory per block are too few",
                         per_block);
    state->nnz_per_wg = (int)elements;
    state->piece = (int)elements * ADAPTIVE_VECTORL_FACTOR;
    state->shared_bytes = (elements + 32) * value_size;
    return NZ_SUCCESS;
}

template <typename Value, typename Offset>
static void adaptive_launch(const void *opaque, cudaStream_t stream, const nz_matrix_t *A,
                            const void *x, void *y, double alpha, double beta) {
    const adaptive_state_t *state = (const adaptive_state_t *)opaque;
    adaptive_kernel<Value, Offset><<<(unsigned)state->rb.num_blocks, ADAPTIVE_THREADS,
                                     state->shared_bytes, stream>>>(
        state->rb.blocks, nzi_dev_offsets<Offset>(A), A->device.col_indices,
        (const Value *)A->device.values, (const Value *)x, (Value *)y, (Value)alpha, (Value)beta,
        state->nnz_per_wg, state->piece, (Value *)state->rb.partials, state->rb.tickets);
}

static const nzi_row_blocks_launchers_t adaptive_launchers = {
    adaptive_launch<float, int32_t>, adaptive_launch<float, int64_t>, adaptive_launch<double, int32_t>,
    adaptive_launch<double, int64_t>};

/* Setup: the row blocks (nzi_row_blocks_build: one device-to-host copy of the row offsets, the
 * block scan, upload; partial sums and tickets only when some row needs CSR-VectorL). */
static nz_status_t adaptive_sizes(nz_context_t *ctx, const nz_matrix_t *A, void *opaque,
                                  int64_t *tile_nnz, int64_t *max_rows, int64_t *piece_length) {
    adaptive_state_t *state = (adaptive_state_t *)opaque;
    NZI_TRY(adaptive_choose_sizes(ctx, A, state));
    *tile_nnz = *max_rows = state->nnz_per_wg;
    *piece_length = state->piece;
    return NZ_SUCCESS;
}

static nz_status_t adaptive_setup(nz_spmv_plan_t *plan) {
    static const nzi_row_block_names_t names = {
        "CSR-Adaptive plan", "CSR-Adaptive host row offsets", "CSR-Adaptive row blocks",
        "CSR-VectorL partial sums", "CSR-VectorL tickets"};
    return nzi_row_blocks_setup(plan, &names, ADAPTIVE_THREADS, sizeof(adaptive_state_t),
                                adaptive_sizes, &adaptive_launchers);
}

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_adaptive_ops = {
    NZ_ALG_ADAPTIVE, adaptive_setup, nzi_row_blocks_execute, nzi_row_blocks_plan_release};
