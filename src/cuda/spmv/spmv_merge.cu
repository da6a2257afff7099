/* spmv_merge.cu: merge-path CSR SpMV on the GPU (Merrill & Garland, SC16). */
#include "carry_fixup.cuh"

#include <string.h>

/*
 * Merrill & Garland, "Merge-based parallel sparse matrix-vector multiplication" (SC16), in the
 * agent / kernel / dispatch layering of CUB's DeviceSpmv (before CCCL 3.0).
 *
 * The work is the merge of two sorted lists: A = the row end offsets row_offsets[1..rows] and
 * B = the nonzero indices 0..nnz-1. Walking the merge, taking B's k while k < A's current row end
 * (accumulate value[k] * x[col[k]]) and A's entry otherwise (the row is finished), visits
 * rows + nnz items. The walk is cut into tiles of TILE = MERGE_BLOCK * Items items, one per
 * thread block, and each tile into Items items per thread: every thread gets the same amount of
 * work whatever the row lengths (empty rows and one enormous row alike).
 *
 * Plan setup: a binary search on each tile's diagonal (merge_partition_kernel) finds where the
 * tile starts, as (rows finished, nonzeros consumed); stored on the device with the plan.
 * Execute, block b (merge_kernel):
 *   1. stage the tile's row ends (relative to the tile's first nonzero) and its products
 *      value[k] * x[col[k]] in shared memory, with coalesced loads of col_indices and values;
 *   2. each thread finds its own start by the same diagonal search inside the tile, then walks
 *      its Items items, keeping the sums of the rows it finishes and a running sum for the row it
 *      is in at the end (its carry);
 *   3. a block-wide segmented inclusive scan of the carries, keyed by row (keys never decrease),
 *      gives each thread the contributions of earlier threads to the first row it finishes;
 *   4. the tile's finished rows go to y through shared memory (coalesced, y = alpha sum + beta y)
 *      and the block's carry (the partial sum of its last, unfinished row tile_row[b + 1]) goes
 *      to carry_value[b].
 * nzi_carry_fixup_kernel (carry_fixup.cuh) then adds, for each run of consecutive blocks whose
 * carries fall in the same row, alpha times the run's sum to that row (whose y the later block
 * that finished it wrote). The runs depend only on the structure, so setup lists them
 * (nzi_carry_runs_build): a short run is summed by one thread, a longer one (a row spanning many
 * tiles) by a whole block.
 * Differences from CUB: 64-bit row offsets and empty matrices are handled (the dispatcher never
 * passes an empty matrix), and the fix-up uses the precomputed runs instead of a reduce-by-key.
 *
 * NZ_PLAN_CACHE_HINTS: step 1 loads row_offsets, col_indices and values as streaming
 * (ld.global.cs, evict-first; nzi_ld_matrix), so the matrix stream does not evict x from L2; x
 * stays on the read-only path. Same values loaded: results identical with and without.
 * Bitwise reproducible: the partition depends only on the structure, the per-thread order and
 * the scan tree are fixed, and no atomics are used.
 * Cost: one pass over A, nnz gathers from x, O(rows + nnz) balanced work; setup is one binary
 * search of log2(rows) steps per tile.
 */

/* 256 threads per block (8 warps); Items per thread picked so a tile's shared memory (row ends,
 * products, scan scratch) stays near 20 KB and 8 blocks (2048 threads) fit an SM. */
#define MERGE_BLOCK 256
#define MERGE_WARPS (MERGE_BLOCK / 32)

template <typename Value> struct merge_tuning;
template <> struct merge_tuning<float> { static constexpr int items = 9; };
template <> struct merge_tuning<double> { static constexpr int items = 7; };

/* Merge-path search: on diagonal `diagonal` of the merge of a[0..a_len) (row ends) with the
 * counting sequence 0..b_len-1, the number of a-items taken (rows finished); b-items taken is
 * diagonal minus that. Ties go to a (a row whose end equals k finishes before nonzero k). */
template <typename Index, typename RowEnd>
static __device__ __forceinline__ Index merge_path_search(Index diagonal, const RowEnd *a,
                                                          Index a_len, Index b_len) {
    Index low = diagonal > b_len ? diagonal - b_len : 0;
    Index high = diagonal < a_len ? diagonal : a_len;
    while (low < high) {
        const Index pivot = low + (high - low) / 2;
        if ((Index)a[pivot] <= diagonal - pivot - 1)
            low = pivot + 1;
        else
            high = pivot;
    }
    return low;
}

/* Thread t (t = 0 .. num_tiles) writes the start of tile t on the global merge path. */
template <typename Offset>
__global__ void merge_partition_kernel(int32_t rows, int64_t nnz, const Offset *__restrict__ row_offsets,
                                       int64_t num_tiles, int64_t tile_items,
                                       int32_t *__restrict__ tile_row,
                                       Offset *__restrict__ tile_nz) {
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t > num_tiles) return;
    const int64_t total = (int64_t)rows + nnz;
    const int64_t diagonal = t * tile_items < total ? t * tile_items : total;
    /* a[i] = row_offsets[i + 1]: the end of row i */
    const int64_t finished =
        merge_path_search<int64_t, Offset>(diagonal, row_offsets + 1, (int64_t)rows, nnz);
    tile_row[t] = (int32_t)finished;
    tile_nz[t] = (Offset)(diagonal - finished);
}

/* The blocks below, at most what the SM holds (NZI_SM_MAX_THREADS: 1536 threads on sm_86 / 89 /
 * 120, where asking for eight 256-thread blocks would be ignored with a ptxas warning). */
template <typename Value, typename Offset, typename Accum> constexpr int merge_min_blocks() {
    const int wanted = sizeof(Accum) == 8 && (sizeof(Offset) == 8 || sizeof(Value) == 4) ? 6 : 8;
    return wanted < NZI_SM_MAX_THREADS / MERGE_BLOCK ? wanted : NZI_SM_MAX_THREADS / MERGE_BLOCK;
}

/* Step 1 of merge_kernel: the tile's row ends (relative to its first nonzero nz0 and clamped to
 * tile_nnz) and its products value[k] * x[col[k]] into shared memory, with coalesced loads. */
template <typename Value, typename Offset, bool Hints, typename Accum>
static __device__ __forceinline__ void merge_stage(
    int32_t rows, const Offset *__restrict__ row_offsets, const int32_t *__restrict__ col_indices,
    const Value *__restrict__ values, const Value *__restrict__ x, int32_t row0, Offset nz0,
    int tile_rows, int tile_nnz, int *s_row_end, Accum *s_values) {
    const int tid = threadIdx.x;
    for (int i = tid; i <= tile_rows; i += MERGE_BLOCK) {
        const int64_t row = (int64_t)row0 + i;
        int end = tile_nnz;
        if (row < rows) {
            const Offset relative = nzi_ld_matrix<Hints>(row_offsets + row + 1) - nz0;
            if (relative < (Offset)tile_nnz) end = (int)relative;
        }
        s_row_end[i] = end;
    }
    for (int i = tid; i < tile_nnz; i += MERGE_BLOCK) {
        const Offset k = nz0 + i;
        s_values[i] = (Accum)nzi_ld_matrix<Hints>(values + k) *
                      (Accum)__ldg(x + nzi_ld_matrix<Hints>(col_indices + k));
    }
}

/* Step 3 of merge_kernel: segmented inclusive scan of (key, value) over the block; keys never
 * decrease. Returns the thread's scanned value; s_key / s_scan hold every thread's key and
 * scanned value. Every thread of the block calls it (barriers inside; after the first, every
 * thread is done reading s_values as products). */
template <typename Accum>
static __device__ __forceinline__ Accum merge_segmented_scan(int key, Accum value, int *s_key,
                                                             Accum *s_scan, int *s_warp_key,
                                                             Accum *s_warp_value) {
    const int tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const int other_key = __shfl_up_sync(0xffffffffu, key, offset);
        const Accum other_value = __shfl_up_sync(0xffffffffu, value, offset);
        if (lane >= offset && other_key == key) value += other_value;
    }
    if (lane == 31) {
        s_warp_key[warp] = key;
        s_warp_value[warp] = value;
    }
    __syncthreads();
    /* an earlier warp ending in this row: all of it is in this row (keys are monotone), so its
     * last lane's inclusive value is its whole contribution */
    for (int w = warp - 1; w >= 0 && s_warp_key[w] == key; w--) value += s_warp_value[w];
    s_key[tid] = key;
    s_scan[tid] = value;
    __syncthreads();
    return value;
}

/* 8 resident blocks (2048 threads) per SM fit in 32 registers per thread without spilling, except
 * for double values with 64-bit offsets, which get 6 blocks (42 registers), and float values
 * with double sums (NZ_PLAN_MIXED), which also get 6; at most what the SM holds
 * (merge_min_blocks).
 * Accum is the type of products, sums, carries and alpha / beta: Value, or double for mixed
 * precision (float storage; y is rounded once, and once more for a row whose sum crosses tiles). */
template <typename Value, typename Offset, int Items, bool BetaZero, bool Hints,
          typename Accum = Value>
__global__ void __launch_bounds__(MERGE_BLOCK, merge_min_blocks<Value, Offset, Accum>())
    merge_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                 const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                 const Value *__restrict__ x, Accum alpha, Accum beta, Value *__restrict__ y,
                 const int32_t *__restrict__ tile_row, const Offset *__restrict__ tile_nz,
                 Accum *__restrict__ carry_value) {
    constexpr int TILE = MERGE_BLOCK * Items;
    /* row ends of the tile's rows, relative to its first nonzero and clamped to tile_nnz */
    __shared__ int s_row_end[TILE + 1];
    /* the tile's products; after step 2 the finished rows' sums */
    __shared__ Accum s_values[TILE];
    __shared__ int s_key[MERGE_BLOCK];
    __shared__ Accum s_scan[MERGE_BLOCK];
    __shared__ int s_warp_key[MERGE_WARPS];
    __shared__ Accum s_warp_value[MERGE_WARPS];

    const int tid = threadIdx.x;
    const int64_t tile = blockIdx.x;
    const int32_t row0 = tile_row[tile];
    const Offset nz0 = tile_nz[tile];
    const int tile_rows = tile_row[tile + 1] - row0;   /* rows finished in this tile */
    const int tile_nnz = (int)(tile_nz[tile + 1] - nz0); /* nonzeros consumed in this tile */
    const int tile_items = tile_rows + tile_nnz;

    /* 1. stage (coalesced) */
    merge_stage<Value, Offset, Hints, Accum>(rows, row_offsets, col_indices, values, x, row0, nz0,
                                             tile_rows, tile_nnz, s_row_end, s_values);
    __syncthreads();

    /* 2. this thread's share of the tile's merge path */
    const int diagonal = tid * Items < tile_items ? tid * Items : tile_items;
    const int start_row = merge_path_search<int, int>(diagonal, s_row_end, tile_rows, tile_nnz);
    int row = start_row;
    int nz = diagonal - start_row;
    Accum running = Accum(0);
    Accum finished[Items];
    unsigned finished_mask = 0;
#pragma unroll
    for (int item = 0; item < Items; item++) {
        finished[item] = Accum(0);
        if (diagonal + item < tile_items) {
            if (nz < s_row_end[row]) {
                running += s_values[nz];
                nz++;
            } else {
                finished[item] = running;
                finished_mask |= 1u << item;
                running = Accum(0);
                row++;
            }
        }
    }

    /* 3. segmented inclusive scan of (row, running) over the block */
    const Accum value =
        merge_segmented_scan<Accum>(row, running, s_key, s_scan, s_warp_key, s_warp_value);

    /* 4. finished rows to shared memory, the first with the carry of the threads before */
    Accum carry_in = (tid > 0 && s_key[tid - 1] == start_row) ? s_scan[tid - 1] : Accum(0);
    int out_row = start_row;
#pragma unroll
    for (int item = 0; item < Items; item++) {
        if (finished_mask & (1u << item)) {
            s_values[out_row] = finished[item] + carry_in;
            carry_in = Accum(0);
            out_row++;
        }
    }
    __syncthreads();
    for (int i = tid; i < tile_rows; i += MERGE_BLOCK) {
        const int64_t r = (int64_t)row0 + i;
        y[r] = (Value)(BetaZero ? alpha * s_values[i] : alpha * s_values[i] + beta * (Accum)y[r]);
    }
    /* the last thread's key is tile_rows: its scan value is the carry of row tile_row[tile + 1] */
    if (tid == MERGE_BLOCK - 1) carry_value[tile] = value;
}

/* ---- host side ------------------------------------------------------------------------------ */

typedef struct merge_state {
    int64_t num_tiles;
    int32_t *tile_row;   /* num_tiles + 1: rows finished before each tile */
    void *tile_nz;       /* num_tiles + 1, Offset: nonzeros consumed before each tile */
    void *carry_value;   /* num_tiles, Value (double for NZ_PLAN_MIXED) */
    nzi_carry_runs_t runs; /* tile t's carry goes to row tile_row[t + 1] */
} merge_state_t;

static void merge_release(nz_spmv_plan_t *plan) {
    merge_state_t *st = (merge_state_t *)plan->state;
    if (st == NULL) return;
    nz_context_t *ctx = plan->ctx;
    nz_cuda_free(ctx, st->tile_row, (size_t)-1);
    nz_cuda_free(ctx, st->tile_nz, (size_t)-1);
    nz_cuda_free(ctx, st->carry_value, (size_t)-1);
    nzi_carry_runs_free(ctx, &st->runs);
    nzi_free(ctx, st);
    plan->state = NULL;
}

/* At most one long run per NZI_FIXUP_SHORT_RUN + 1 tiles. */
static int64_t carry_runs_max_long(int64_t num_tiles) {
    return num_tiles / (NZI_FIXUP_SHORT_RUN + 1) + 1;
}

nz_status_t nzi_carry_runs_build(nz_context_t *ctx, int64_t num_tiles, int64_t rows,
                                 const int32_t *host_row, nzi_carry_runs_t *runs) {
    nz_status_t status = NZ_SUCCESS;
    int32_t *host = NULL, *host_long; /* run_length, then the long runs */
    int64_t t, length, count;
    memset(runs, 0, sizeof *runs);
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&host,
                              (size_t)(num_tiles + 3 * carry_runs_max_long(num_tiles)),
                              sizeof(int32_t), "carry runs"));
    host_long = host + num_tiles;
    for (t = 0; t < num_tiles; t = t + (length > 0 ? length : 1)) {
        const int32_t row = host_row[t];
        length = 0;
        host[t] = 0;
        if (row >= rows) continue;
        length = 1;
        while (t + length < num_tiles && host_row[t + length] == row) {
            host[t + length] = 0;
            length++;
        }
        if (length <= NZI_FIXUP_SHORT_RUN) {
            host[t] = (int32_t)length;
            runs->num_short++;
        } else {
            host_long[3 * runs->num_long] = (int32_t)t;
            host_long[3 * runs->num_long + 1] = (int32_t)length;
            host_long[3 * runs->num_long + 2] = row;
            runs->num_long++;
        }
    }
    if (runs->num_short + runs->num_long == 0) goto cleanup;
    count = num_tiles + 3 * runs->num_long;
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&runs->owned, (size_t)count * sizeof(int32_t),
                             "carry runs"));
    runs->bytes = (size_t)count * sizeof(int32_t);
    NZI_CHECK(nz_cuda_memcpy(ctx, runs->owned, host, (size_t)count * sizeof(int32_t), NZI_H2D));
    runs->run_length = runs->owned;
    runs->long_runs = runs->num_long > 0 ? runs->owned + num_tiles : NULL;
cleanup:
    nzi_free(ctx, host);
    if (status < 0) nzi_carry_runs_free(ctx, runs);
    return status;
}

void nzi_carry_runs_free(nz_context_t *ctx, nzi_carry_runs_t *runs) {
    nz_cuda_free(ctx, runs->owned, (size_t)-1);
    memset(runs, 0, sizeof *runs);
}

/* Partition on the device (one diagonal search per tile), then list the carry runs on the host
 * from the tile rows: tile t's carry belongs to row tile_row[t + 1] (nzi_carry_runs_build).
 * O(num_tiles) host work and transfers. */
template <typename Value, typename Offset>
static nz_status_t merge_setup_typed(nz_spmv_plan_t *plan) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const nz_matrix_t *A = plan->A;
    const int64_t rows = A->rows;
    const int64_t tile_items = (int64_t)MERGE_BLOCK * merge_tuning<Value>::items;
    const int64_t num_tiles = (rows + A->nnz + tile_items - 1) / tile_items;
    const int64_t partition_blocks = (num_tiles + 1 + 255) / 256;
    const size_t carry_size = (plan->flags & NZ_PLAN_MIXED) ? sizeof(double) : sizeof(Value);
    merge_state_t *st = NULL;
    int32_t *host_row = NULL;

    if (num_tiles >= INT32_MAX)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "merge-path plan: %lld tiles exceed the grid limit",
                         (long long)num_tiles);
    st = (merge_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "merge-path plan: cannot allocate the state");
    plan->state = st;
    st->num_tiles = num_tiles;
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->tile_row, (size_t)(num_tiles + 1) * sizeof(int32_t),
                             "merge-path plan: tile rows"));
    NZI_CHECK(nz_cuda_malloc(ctx, &st->tile_nz, (size_t)(num_tiles + 1) * sizeof(Offset),
                             "merge-path plan: tile nonzeros"));
    NZI_CHECK(nz_cuda_malloc(ctx, &st->carry_value, (size_t)num_tiles * carry_size,
                             "merge-path plan: carry values"));
    plan->workspace_bytes = (size_t)(num_tiles + 1) * (sizeof(int32_t) + sizeof(Offset)) +
                            (size_t)num_tiles * carry_size;
    merge_partition_kernel<Offset><<<(unsigned)partition_blocks, 256, 0, cs->stream>>>(
        (int32_t)rows, A->nnz, nzi_dev_offsets<Offset>(A), num_tiles, tile_items, st->tile_row,
        (Offset *)st->tile_nz);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());

    /* the carry runs (nz_cuda_memcpy synchronises, which also surfaces partition faults) */
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&host_row, (size_t)num_tiles + 1, sizeof(int32_t),
                              "merge-path plan: tile rows copy"));
    NZI_CHECK(nz_cuda_memcpy(ctx, host_row, st->tile_row, (size_t)(num_tiles + 1) * sizeof(int32_t),
                             NZI_D2H));
    NZI_CHECK(nzi_carry_runs_build(ctx, num_tiles, rows, host_row + 1, &st->runs));
    plan->workspace_bytes += st->runs.bytes;
    plan->reproducible = 1;
    plan->vector_width = 0;

cleanup:
    nzi_free(ctx, host_row);
    if (status < 0) {
        merge_release(plan);
        plan->workspace_bytes = 0;
    }
    return status;
}

static nz_status_t merge_setup(nz_spmv_plan_t *plan) {
    const nz_matrix_t *A = plan->A;
    const bool wide = A->device.offset_type == NZ_I64;
    if (A->value_type == NZ_F32)
        return wide ? merge_setup_typed<float, int64_t>(plan) : merge_setup_typed<float, int32_t>(plan);
    return wide ? merge_setup_typed<double, int64_t>(plan) : merge_setup_typed<double, int32_t>(plan);
}

/* One merge_kernel launch over the plan's tiles (beta == 0 and the cache hints as template flags). */
template <typename Value, typename Offset, bool BetaZero, bool Hints, typename Accum>
static void merge_tile_launch(const nzi_cuda_state_t *cs, const merge_state_t *st,
                              const nz_matrix_t *A, Accum alpha, Accum beta, const Value *x,
                              Value *y) {
    constexpr int ITEMS = merge_tuning<Value>::items;
    merge_kernel<Value, Offset, ITEMS, BetaZero, Hints, Accum>
        <<<(unsigned)st->num_tiles, MERGE_BLOCK, 0, cs->stream>>>(
            (int32_t)A->rows, nzi_dev_offsets<Offset>(A), A->device.col_indices,
            (const Value *)A->device.values, x, alpha, beta, y, st->tile_row,
            (const Offset *)st->tile_nz, (Accum *)st->carry_value);
}

template <typename Value, typename Offset, typename Accum = Value>
static nz_status_t merge_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const nz_matrix_t *A = plan->A;
    const merge_state_t *st = (const merge_state_t *)plan->state;
    const Accum a = (Accum)alpha;
    const bool hints = (plan->flags & NZ_PLAN_CACHE_HINTS) != 0;
    const Value *xv = (const Value *)x;
    if (beta == 0.0 && hints)
        merge_tile_launch<Value, Offset, true, true>(cs, st, A, a, Accum(0), xv, (Value *)y);
    else if (beta == 0.0)
        merge_tile_launch<Value, Offset, true, false>(cs, st, A, a, Accum(0), xv, (Value *)y);
    else if (hints)
        merge_tile_launch<Value, Offset, false, true>(cs, st, A, a, (Accum)beta, xv, (Value *)y);
    else
        merge_tile_launch<Value, Offset, false, false>(cs, st, A, a, (Accum)beta, xv, (Value *)y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return nzi_carry_fixup_launch<Value, Accum>(ctx, &st->runs, st->num_tiles, st->tile_row + 1,
                                                (const Accum *)st->carry_value, a, (Value *)y);
}

static nz_status_t merge_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                 double beta, void *y) {
    const nz_matrix_t *A = plan->A;
    if (plan->state == NULL)
        return nzi_error(plan->ctx, NZ_ERR_INVALID_HANDLE, "merge-path plan has no partition");
    const bool wide = A->device.offset_type == NZ_I64;
    if (A->value_type == NZ_F32 && (plan->flags & NZ_PLAN_MIXED))
        return wide ? merge_launch<float, int64_t, double>(plan, alpha, x, beta, y)
                    : merge_launch<float, int32_t, double>(plan, alpha, x, beta, y);
    if (A->value_type == NZ_F32)
        return wide ? merge_launch<float, int64_t>(plan, alpha, x, beta, y)
                    : merge_launch<float, int32_t>(plan, alpha, x, beta, y);
    return wide ? merge_launch<double, int64_t>(plan, alpha, x, beta, y)
                : merge_launch<double, int32_t>(plan, alpha, x, beta, y);
}

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_merge_ops = {NZ_ALG_MERGE, merge_setup,
                                                               merge_execute, merge_release};

template nz_status_t merge_setup_typed<float, int32_t>(nz_spmv_plan_t *);
template nz_status_t merge_setup_typed<float, int64_t>(nz_spmv_plan_t *);
template nz_status_t merge_setup_typed<double, int32_t>(nz_spmv_plan_t *);
template nz_status_t merge_setup_typed<double, int64_t>(nz_spmv_plan_t *);
template nz_status_t merge_launch<float, int32_t>(const nz_spmv_plan_t *, double, const void *,
                                                  double, void *);
template nz_status_t merge_launch<float, int64_t>(const nz_spmv_plan_t *, double, const void *,
                                                  double, void *);
template nz_status_t merge_launch<double, int32_t>(const nz_spmv_plan_t *, double, const void *,
                                                   double, void *);
template nz_status_t merge_launch<double, int64_t>(const nz_spmv_plan_t *, double, const void *,
                                                   double, void *);
template nz_status_t merge_launch<float, int32_t, double>(const nz_spmv_plan_t *, double,
                                                          const void *, double, void *);
template nz_status_t merge_launch<float, int64_t, double>(const nz_spmv_plan_t *, double,
                                                          const void *, double, void *);
