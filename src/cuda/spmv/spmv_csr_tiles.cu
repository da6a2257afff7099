/* spmv_csr_tiles.cu: csr/tiles: row tiles whose nonzeros are sorted by column, each tile's part of y summed in shared memory. */
#include "cuda_internal.h"

#include <cub/cub.cuh>

/*
 * Why: on matrices whose columns are scattered uniformly (random 4M x 16, the mixed generator's
 * short rows) every CSR kernel spends about one L2 request per nonzero on the gathers of x, and
 * L2 is 85-95% busy serving them while moving a third of its sector bandwidth (ncu on an H200,
 * bench/results/h200-2026-11-26-s12-ncu-gather.txt). Gathers in row order cannot share lines:
 * a row's 16 columns lie 250,000 apart.
 *
 * What: the plan cuts A into tiles of R consecutive rows (R <= 65536) and stores each tile's
 * nonzeros sorted by column (ties by row): a 32-bit column, the row within the tile in 16 bits
 * and the value. One block of 1024 threads takes a tile: it zeroes R sums in shared memory, walks
 * the tile's entries in order (thread t takes entries t, t + 1024, ...; two in flight), gathers
 * x[col] and adds value * x[col] to its row's sum with a shared-memory atomic, then writes the
 * tile's rows of y once (y = alpha sum + beta y; beta = 0 never reads y). Consecutive entries read
 * neighbouring columns, so a warp's gathers share lines and L1 serves the repeats; all resident
 * blocks sweep x from its first column to its last at about the same pace, so x streams through
 * L2 as a narrow window. Probe on an H200 (`bench/results/h200-2026-11-26-s14-tiles-probe.txt`),
 * random 4M x 16, us: single 282 against cuSPARSE's 498, double 462 against 641.
 * The tile size fills a whole number of waves: R is chosen so that tiles = waves x SMs x blocks a
 * SM (two 1024-thread blocks an SM where two tiles' sums fit the SM's shared memory; one in double
 * precision where one block an SM covers every row in a single wave, tiles_shape), since a
 * partial last wave cost up to 1.3x in the probe.
 *
 * Rows of TILES_LONG_ROW nonzeros or more stay out of the tiles (their shared-memory sum would
 * serialise the atomics): a second kernel adds them to y in chunks of TILES_LONG_CHUNK nonzeros,
 * one block each, with one global atomic a chunk, after the tiles wrote those rows' beta y.
 *
 * Sums are formed in the order the atomics land: not bitwise reproducible run to run (like
 * csr/atomic; NZ_PLAN_DETERMINISTIC refuses it). Cost: the plan keeps its own copy of A's
 * entries (4 + 2 + value bytes a nonzero, against CSR's 4 + value) and builds it with one stable
 * radix sort of 32-bit keys (tile, column) paired with each nonzero's index (tiles_build): the
 * input is in row order, so entries of one tile and column keep their rows in order without row
 * bits in the key. Where tile and column bits exceed 32, the key keeps the column's high bits
 * (buckets of 2^drop neighbouring columns, rows in order inside a bucket). 18 bytes a nonzero of
 * temporary device memory, from the context's stream-ordered pool.
 */

#define TILES_BLOCK 1024
/* Two blocks an SM where the SM holds 2048 threads, else one (tiles_shape plans from the device's
 * own count). */
#define TILES_MIN_BLOCKS (NZI_SM_MAX_THREADS / TILES_BLOCK)
#define TILES_UNROLL 2
#define TILES_MAX_ROWS 65536
#define TILES_LONG_ROW 1024
#define TILES_LONG_CHUNK 4096
#define TILES_LONG_BLOCK 256
#define TILES_LONG_UNROLL 4
#define TILES_BUILD_BLOCK 256
/* shared memory the runtime reserves per block (cudaDevAttrReservedSharedMemoryPerBlock is 1 KB
 * on sm_80 and sm_90) */
#define TILES_SMEM_RESERVED 1024

typedef struct tiles_state {
    int32_t tile_rows;   /* R */
    int32_t tiles;
    size_t smem;         /* R value-sized sums */
    int64_t entries;     /* nonzeros in the tiles (rows shorter than TILES_LONG_ROW) */
    int64_t *tile_ptr;   /* tiles + 1: tile t's entries are [tile_ptr[t], tile_ptr[t + 1]) */
    uint32_t *cols;      /* entries: column */
    uint16_t *lrows;     /* entries: row - t R */
    void *values;        /* entries: value */
    int64_t chunks;      /* long rows' chunks */
    int64_t *chunk_begin;/* chunk: first nonzero of A (it ends at the row's end or 4096 later) */
    int32_t *chunk_row;  /* chunk: its row */
} tiles_state_t;

/* ---- the product ------------------------------------------------------------------------------ */

/* Block b takes tile b (rows [b R, b R + R)). __launch_bounds__(1024, 2): at most 32 registers, so
 * two blocks fit an SM wherever two tiles' sums fit its shared memory. */
template <typename Value, bool BetaZero>
__global__ void __launch_bounds__(TILES_BLOCK, TILES_MIN_BLOCKS)
    tiles_kernel(int32_t rows, int32_t tile_rows, const int64_t *__restrict__ tile_ptr,
                 const uint32_t *__restrict__ cols, const uint16_t *__restrict__ lrows,
                 const Value *__restrict__ values, const Value *__restrict__ x, Value alpha,
                 Value beta, Value *__restrict__ y) {
    extern __shared__ __align__(16) unsigned char tiles_smem[];
    Value *sums = (Value *)tiles_smem;
    const int64_t first_row = (int64_t)blockIdx.x * tile_rows;
    const int n = (int)min((int64_t)tile_rows, (int64_t)rows - first_row);
    for (int i = threadIdx.x; i < n; i += TILES_BLOCK) sums[i] = Value(0);
    __syncthreads();
    const int64_t begin = tile_ptr[blockIdx.x], end = tile_ptr[blockIdx.x + 1];
    /* the walk starts at the aligned 32 entries holding `begin`, so each warp's loads cover whole
     * 32-entry segments (one line of columns, not two) */
    const int64_t start = begin & ~(int64_t)31;
    for (int64_t k0 = start + threadIdx.x; k0 < end; k0 += (int64_t)TILES_BLOCK * TILES_UNROLL) {
        uint32_t c[TILES_UNROLL];
        uint16_t r[TILES_UNROLL];
        Value v[TILES_UNROLL];
        bool in[TILES_UNROLL];
#pragma unroll
        for (int u = 0; u < TILES_UNROLL; u++) {
            const int64_t k = k0 + (int64_t)u * TILES_BLOCK;
            in[u] = k >= begin && k < end;
            v[u] = in[u] ? nzi_ld_no_l1(values + k) : Value(0);
            c[u] = in[u] ? nzi_ld_no_l1(cols + k) : 0u;
            r[u] = in[u] ? nzi_ld_no_l1(lrows + k) : (uint16_t)0;
        }
#pragma unroll
        for (int u = 0; u < TILES_UNROLL; u++)
            if (in[u]) atomicAdd(sums + r[u], v[u] * __ldg(x + c[u]));
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += TILES_BLOCK)
        y[first_row + i] = BetaZero ? alpha * sums[i] : alpha * sums[i] + beta * y[first_row + i];
}

/* One block a chunk of a long row: its partial sum times alpha, added to y with one atomic. */
template <typename Value, typename Offset>
__global__ void __launch_bounds__(TILES_LONG_BLOCK)
    tiles_long_kernel(const int64_t *__restrict__ chunk_begin, const int32_t *__restrict__ chunk_row,
                      const Offset *__restrict__ row_offsets,
                      const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                      const Value *__restrict__ x, Value alpha, Value *__restrict__ y) {
    __shared__ Value warp_sums[TILES_LONG_BLOCK / 32];
    const int32_t row = chunk_row[blockIdx.x];
    const int64_t begin = chunk_begin[blockIdx.x];
    const int64_t row_end = (int64_t)row_offsets[row + 1];
    const int64_t end = begin + TILES_LONG_CHUNK < row_end ? begin + TILES_LONG_CHUNK : row_end;
    /* TILES_LONG_UNROLL columns and values in flight a thread, then their gathers. One load
     * chain at a time left DRAM at 75% of its peak on mixed 2M (ncu, H100); four changed the
     * whole product by nothing measurable there (191.4 -> 191.5 us, H100,
     * bench/results/h100-2026-11-26-s15-spmv-5dbbe0f.txt -> ...-s15-light-quad-0e8452c.txt) */
    Value sum = Value(0);
    for (int64_t k0 = begin + threadIdx.x; k0 < end;
         k0 += (int64_t)TILES_LONG_BLOCK * TILES_LONG_UNROLL) {
        int32_t c[TILES_LONG_UNROLL];
        Value v[TILES_LONG_UNROLL];
#pragma unroll
        for (int u = 0; u < TILES_LONG_UNROLL; u++) {
            const int64_t k = k0 + (int64_t)u * TILES_LONG_BLOCK;
            c[u] = k < end ? nzi_ld_no_l1(col_indices + k) : -1;
            v[u] = k < end ? nzi_ld_no_l1(values + k) : Value(0);
        }
#pragma unroll
        for (int u = 0; u < TILES_LONG_UNROLL; u++)
            if (c[u] >= 0) sum += v[u] * __ldg(x + c[u]);
    }
    for (int d = 16; d > 0; d >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, d);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        sum = threadIdx.x < TILES_LONG_BLOCK / 32 ? warp_sums[threadIdx.x] : Value(0);
        for (int d = 16; d > 0; d >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, d);
        if (threadIdx.x == 0) atomicAdd(y + row, alpha * sum);
    }
}

template <typename Value>
static nz_status_t tiles_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const tiles_state_t *st = (const tiles_state_t *)plan->state;
    cudaStream_t stream = nzi_cuda(ctx)->stream;
    if (beta == 0.0)
        tiles_kernel<Value, true><<<(unsigned)st->tiles, TILES_BLOCK, st->smem, stream>>>(
            (int32_t)A->rows, st->tile_rows, st->tile_ptr, st->cols, st->lrows,
            (const Value *)st->values, (const Value *)x, (Value)alpha, Value(0), (Value *)y);
    else
        tiles_kernel<Value, false><<<(unsigned)st->tiles, TILES_BLOCK, st->smem, stream>>>(
            (int32_t)A->rows, st->tile_rows, st->tile_ptr, st->cols, st->lrows,
            (const Value *)st->values, (const Value *)x, (Value)alpha, (Value)beta, (Value *)y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    if (st->chunks == 0) return NZ_SUCCESS;
    if (A->device.offset_type == NZ_I64)
        tiles_long_kernel<Value, int64_t><<<(unsigned)st->chunks, TILES_LONG_BLOCK, 0, stream>>>(
            st->chunk_begin, st->chunk_row, (const int64_t *)A->device.row_offsets,
            A->device.col_indices, (const Value *)A->device.values, (const Value *)x,
            (Value)alpha, (Value *)y);
    else
        tiles_long_kernel<Value, int32_t><<<(unsigned)st->chunks, TILES_LONG_BLOCK, 0, stream>>>(
            st->chunk_begin, st->chunk_row, (const int32_t *)A->device.row_offsets,
            A->device.col_indices, (const Value *)A->device.values, (const Value *)x,
            (Value)alpha, (Value *)y);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* ---- the plan's build ------------------------------------------------------------------------- */

static int bits_for(uint64_t v) { /* bits to hold 0 .. v (at least 1) */
    int b = 1;
    while (b < 64 && (v >> b) != 0) b++;
    return b;
}

/* Every nonzero: its index, and the key of a long row's entry (tile = tiles, which sorts after
 * every tile), coalesced over all nonzeros; tiles_keys_kernel then overwrites the keys of the
 * rows in tiles. A warp per row would walk a long row alone (the mixed generator's rows of
 * hundreds of thousands), so long rows get no per-row work at all. */
template <typename Index>
__global__ void __launch_bounds__(TILES_BUILD_BLOCK)
    tiles_fill_kernel(int64_t nnz, uint32_t long_key, uint32_t *__restrict__ keys,
                      Index *__restrict__ index) {
    const int64_t stride = (int64_t)gridDim.x * TILES_BUILD_BLOCK;
    for (int64_t k = (int64_t)blockIdx.x * TILES_BUILD_BLOCK + threadIdx.x; k < nnz; k += stride) {
        keys[k] = long_key;
        index[k] = (Index)k;
    }
}

/* One warp a row shorter than TILES_LONG_ROW: the key (tile, column >> drop) of each of its
 * nonzeros and its row within the tile. */
template <typename Offset>
__global__ void __launch_bounds__(TILES_BUILD_BLOCK)
    tiles_keys_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                      const int32_t *__restrict__ col_indices, int32_t tile_rows, int drop,
                      int kept_bits, uint32_t *__restrict__ keys, uint16_t *__restrict__ lrow) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (TILES_BUILD_BLOCK / 32);
    for (int64_t r = (int64_t)blockIdx.x * (TILES_BUILD_BLOCK / 32) + (threadIdx.x >> 5); r < rows;
         r += warps) {
        const int64_t begin = (int64_t)row_offsets[r], end = (int64_t)row_offsets[r + 1];
        if (end - begin >= TILES_LONG_ROW) continue;
        const int64_t tile = r / tile_rows;
        const uint32_t high = (uint32_t)tile << kept_bits;
        const uint16_t local = (uint16_t)(r - tile * tile_rows);
        for (int64_t k = begin + lane; k < end; k += 32) {
            keys[k] = high | ((uint32_t)col_indices[k] >> drop);
            lrow[k] = local;
        }
    }
}

/* tile_ptr[t] = the first sorted key of tile t or later (t = 0 .. tiles; tile_ptr[tiles] is the
 * number of entries in tiles). */
__global__ void __launch_bounds__(TILES_BUILD_BLOCK)
    tiles_bounds_kernel(int32_t tiles, int shift, const uint32_t *__restrict__ keys, int64_t n,
                        int64_t *__restrict__ tile_ptr) {
    const int64_t t = (int64_t)blockIdx.x * TILES_BUILD_BLOCK + threadIdx.x;
    if (t > tiles) return;
    tile_ptr[t] = nzi_lower_bound(keys, n, (uint64_t)t, shift);
}

/* Sorted entry j is A's nonzero index[j]: its column, row in the tile and value. */
template <typename Value, typename Index>
__global__ void __launch_bounds__(TILES_BUILD_BLOCK)
    tiles_unpack_kernel(int64_t n, const uint32_t *__restrict__ keys, uint32_t col_mask,
                        const Index *__restrict__ index, const int32_t *__restrict__ a_cols,
                        const uint16_t *__restrict__ a_lrow, const Value *__restrict__ a_values,
                        uint32_t *__restrict__ cols, uint16_t *__restrict__ lrows,
                        Value *__restrict__ values) {
    const int64_t stride = (int64_t)gridDim.x * TILES_BUILD_BLOCK;
    for (int64_t j = (int64_t)blockIdx.x * TILES_BUILD_BLOCK + threadIdx.x; j < n; j += stride) {
        const int64_t k = (int64_t)index[j];
        /* the key holds the whole column where no bits were dropped (col_mask != 0): read in
         * order instead of gathered */
        cols[j] = col_mask != 0 ? keys[j] & col_mask : (uint32_t)a_cols[k];
        lrows[j] = a_lrow[k];
        values[j] = a_values[k];
    }
}

/* counts[r] = chunks of row r (0 for rows shorter than TILES_LONG_ROW); counts[rows] = 0. */
template <typename Offset>
__global__ void __launch_bounds__(TILES_BUILD_BLOCK)
    tiles_chunk_count_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                             int64_t *__restrict__ counts) {
    const int64_t stride = (int64_t)gridDim.x * TILES_BUILD_BLOCK;
    for (int64_t r = (int64_t)blockIdx.x * TILES_BUILD_BLOCK + threadIdx.x; r <= rows; r += stride) {
        const int64_t len = r < rows ? (int64_t)row_offsets[r + 1] - (int64_t)row_offsets[r] : 0;
        counts[r] = len >= TILES_LONG_ROW ? (len + TILES_LONG_CHUNK - 1) / TILES_LONG_CHUNK : 0;
    }
}

template <typename Offset>
__global__ void __launch_bounds__(TILES_BUILD_BLOCK)
    tiles_chunk_fill_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                            const int64_t *__restrict__ first, int64_t *__restrict__ chunk_begin,
                            int32_t *__restrict__ chunk_row) {
    const int64_t stride = (int64_t)gridDim.x * TILES_BUILD_BLOCK;
    for (int64_t r = (int64_t)blockIdx.x * TILES_BUILD_BLOCK + threadIdx.x; r < rows; r += stride) {
        const int64_t count = first[r + 1] - first[r];
        for (int64_t c = 0; c < count; c++) {
            chunk_begin[first[r] + c] = (int64_t)row_offsets[r] + c * TILES_LONG_CHUNK;
            chunk_row[first[r] + c] = (int32_t)r;
        }
    }
}

static void tiles_release(nz_spmv_plan_t *plan) {
    tiles_state_t *st = (tiles_state_t *)plan->state;
    nz_context_t *ctx = plan->ctx;
    if (st == NULL) return;
    nz_cuda_free(ctx, st->tile_ptr, (size_t)-1);
    nz_cuda_free(ctx, st->cols, (size_t)-1);
    nz_cuda_free(ctx, st->lrows, (size_t)-1);
    nz_cuda_free(ctx, st->values, (size_t)-1);
    nz_cuda_free(ctx, st->chunk_begin, (size_t)-1);
    nz_cuda_free(ctx, st->chunk_row, (size_t)-1);
    nzi_free(ctx, st);
    plan->state = NULL;
}

/* Rows of sums one block can hold with per_sm blocks an SM (each 1024 threads), at most
 * TILES_MAX_ROWS. */
static int64_t tiles_max_rows(const nzi_cuda_state_t *cs, int per_sm, size_t value_size) {
    size_t smem = cs->shared_per_sm / (size_t)per_sm;
    smem = smem > TILES_SMEM_RESERVED ? smem - TILES_SMEM_RESERVED : 0;
    if (smem > cs->shared_per_block_optin) smem = cs->shared_per_block_optin;
    int64_t max_rows = (int64_t)(smem / value_size);
    if (max_rows > TILES_MAX_ROWS) max_rows = TILES_MAX_ROWS;
    return max_rows > 1 ? max_rows : 1;
}

/* R and the blocks an SM: two 1024-thread blocks an SM when each can hold a useful tile, and R
 * such that the tiles fill whole waves of resident blocks. In double precision, where one block
 * an SM covers every row in a single wave, one block an SM with tiles twice as tall: H100, `nz
 * bench --runs 10 --alg tiles`, two blocks / one block an SM, us: mixed 2M 191.7 / 182.7, R-MAT
 * 20 157.8 / 143.6; random 4M x 16 (two waves either way) 537.1 / 560.0, so two stay there
 * (bench/results/h100-2026-11-26-s15-tiles-ab-c99fbba.txt). Single precision keeps two (the H200
 * probe above, h200-2026-11-26-s14-tiles-probe.txt: random 4M single 282 us with two, 349 with
 * one). */
static void tiles_shape(const nzi_cuda_state_t *cs, int64_t rows, size_t value_size,
                        tiles_state_t *st) {
    const int64_t sms = cs->sm_count > 0 ? cs->sm_count : 1;
    int per_sm = cs->max_threads_per_sm >= 2 * TILES_BLOCK ? 2 : 1;
    if (per_sm == 2 && tiles_max_rows(cs, 2, value_size) < 1024) per_sm = 1;
    if (per_sm == 2 && value_size == 8 && rows <= sms * tiles_max_rows(cs, 1, value_size))
        per_sm = 1;
    const int64_t max_rows = tiles_max_rows(cs, per_sm, value_size);
    const int64_t slots = sms * per_sm;
    const int64_t fewest = (rows + max_rows - 1) / max_rows;
    const int64_t tiles = (fewest + slots - 1) / slots * slots;
    int64_t tile_rows = (rows + tiles - 1) / tiles;
    if (tile_rows < 1) tile_rows = 1;
    st->tile_rows = (int32_t)tile_rows;
    st->tiles = (int32_t)((rows + tile_rows - 1) / tile_rows);
    st->smem = (size_t)tile_rows * value_size;
}

/* The build's temporaries: sort keys and nonzero indices (double-buffered; [0] holds the sorted
 * result), each nonzero's row within its tile, CUB's scratch. */
template <typename Index> struct tiles_scratch {
    uint32_t *keys[2];
    Index *index[2];
    uint16_t *lrow;
    void *temp;
    size_t temp_bytes;
};

template <typename Index>
static void tiles_scratch_free(nz_context_t *ctx, tiles_scratch<Index> *w) {
    nz_cuda_free(ctx, w->temp, (size_t)-1);
    nz_cuda_free(ctx, w->lrow, (size_t)-1);
    for (int b = 0; b < 2; b++) {
        nz_cuda_free(ctx, w->keys[b], (size_t)-1);
        nz_cuda_free(ctx, w->index[b], (size_t)-1);
    }
}

/* Phase 1: keys (tile, column >> drop) and indices of all nonzeros, stably sorted by key. */
template <typename Offset, typename Index>
static nz_status_t tiles_sort(nz_context_t *ctx, const nz_matrix_t *A, const tiles_state_t *st,
                              int drop, int kept_bits, int key_bits, tiles_scratch<Index> *w) {
    nz_status_t status = NZ_SUCCESS;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t nnz = A->nnz;
    const unsigned grid_rows = (unsigned)nzi_cuda_grid_blocks(
        cs, TILES_BUILD_BLOCK, 4, (A->rows + TILES_BUILD_BLOCK / 32) / (TILES_BUILD_BLOCK / 32) + 1);
    const unsigned grid_nnz = (unsigned)nzi_cuda_grid_blocks(
        cs, TILES_BUILD_BLOCK, 4, (nnz + TILES_BUILD_BLOCK - 1) / TILES_BUILD_BLOCK);
    for (int b = 0; b < 2; b++) {
        NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&w->keys[b], (size_t)nnz * sizeof(uint32_t),
                                        "csr/tiles: sort keys"));
        NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&w->index[b], (size_t)nnz * sizeof(Index),
                                        "csr/tiles: sort indices"));
    }
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&w->lrow, (size_t)nnz * sizeof(uint16_t),
                                    "csr/tiles: rows in tiles"));
    tiles_fill_kernel<Index><<<grid_nnz, TILES_BUILD_BLOCK, 0, cs->stream>>>(
        nnz, (uint32_t)st->tiles << kept_bits, w->keys[0], w->index[0]);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    tiles_keys_kernel<Offset><<<grid_rows, TILES_BUILD_BLOCK, 0, cs->stream>>>(
        (int32_t)A->rows, (const Offset *)A->device.row_offsets, A->device.col_indices,
        st->tile_rows, drop, kept_bits, w->keys[0], w->lrow);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    {
        cub::DoubleBuffer<uint32_t> k(w->keys[0], w->keys[1]);
        cub::DoubleBuffer<Index> v(w->index[0], w->index[1]);
        NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(NULL, w->temp_bytes, k, v, nnz, 0,
                                                            key_bits, cs->stream));
        NZI_CHECK(nzi_cuda_malloc_async(ctx, &w->temp, w->temp_bytes > 0 ? w->temp_bytes : 1,
                                        "csr/tiles: sort scratch"));
        NZI_CUDA_CHECK(ctx, cub::DeviceRadixSort::SortPairs(w->temp, w->temp_bytes, k, v, nnz, 0,
                                                            key_bits, cs->stream));
        if (k.Current() != w->keys[0]) {
            uint32_t *t = w->keys[0]; w->keys[0] = w->keys[1]; w->keys[1] = t;
        }
        if (v.Current() != w->index[0]) {
            Index *t = w->index[0]; w->index[0] = w->index[1]; w->index[1] = t;
        }
    }
cleanup:
    return status;
}

/* Phase 2: each tile's first sorted entry, then the tiles' entries in sorted order. */
template <typename Value, typename Index>
static nz_status_t tiles_unpack(nz_context_t *ctx, const nz_matrix_t *A, tiles_state_t *st,
                                int kept_bits, bool whole_columns, const tiles_scratch<Index> *w) {
    nz_status_t status = NZ_SUCCESS;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const unsigned grid_nnz = (unsigned)nzi_cuda_grid_blocks(
        cs, TILES_BUILD_BLOCK, 4, (A->nnz + TILES_BUILD_BLOCK - 1) / TILES_BUILD_BLOCK);
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->tile_ptr, ((size_t)st->tiles + 1) * sizeof(int64_t),
                             "csr/tiles: tile offsets"));
    tiles_bounds_kernel<<<(unsigned)((st->tiles + TILES_BUILD_BLOCK) / TILES_BUILD_BLOCK),
                          TILES_BUILD_BLOCK, 0, cs->stream>>>(st->tiles, kept_bits, w->keys[0],
                                                              A->nnz, st->tile_ptr);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CHECK(nz_cuda_memcpy(ctx, &st->entries, st->tile_ptr + st->tiles, sizeof(int64_t),
                             NZI_D2H));
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
    if (st->entries == 0) return NZ_SUCCESS;
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->cols, (size_t)st->entries * sizeof(uint32_t),
                             "csr/tiles: columns"));
    NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->lrows, (size_t)st->entries * sizeof(uint16_t),
                             "csr/tiles: rows"));
    NZI_CHECK(nz_cuda_malloc(ctx, &st->values, (size_t)st->entries * sizeof(Value),
                             "csr/tiles: values"));
    tiles_unpack_kernel<Value, Index><<<grid_nnz, TILES_BUILD_BLOCK, 0, cs->stream>>>(
        st->entries, w->keys[0], whole_columns ? (uint32_t)((1ull << kept_bits) - 1) : 0u,
        w->index[0], A->device.col_indices, w->lrow, (const Value *)A->device.values,
        st->cols, st->lrows, (Value *)st->values);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
cleanup:
    return status;
}

/* Phase 3: the long rows' chunks (rows of TILES_LONG_ROW nonzeros or more, outside the tiles). */
template <typename Offset>
static nz_status_t tiles_chunks(nz_context_t *ctx, const nz_matrix_t *A, tiles_state_t *st) {
    nz_status_t status = NZ_SUCCESS;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int32_t rows = (int32_t)A->rows;
    const Offset *offsets = (const Offset *)A->device.row_offsets;
    int64_t *first = NULL;
    void *temp = NULL;
    size_t temp_bytes = 0;
    const unsigned grid_rows = (unsigned)nzi_cuda_grid_blocks(
        cs, TILES_BUILD_BLOCK, 4, ((int64_t)rows + TILES_BUILD_BLOCK) / TILES_BUILD_BLOCK);
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&first, ((size_t)rows + 1) * sizeof(int64_t),
                                    "csr/tiles: long-row chunks"));
    tiles_chunk_count_kernel<Offset><<<grid_rows, TILES_BUILD_BLOCK, 0, cs->stream>>>(rows, offsets,
                                                                                     first);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(NULL, temp_bytes, first, first,
                                                      (int64_t)rows + 1, cs->stream));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, &temp, temp_bytes > 0 ? temp_bytes : 1,
                                    "csr/tiles: scan scratch"));
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::ExclusiveSum(temp, temp_bytes, first, first,
                                                      (int64_t)rows + 1, cs->stream));
    NZI_CHECK(nz_cuda_memcpy(ctx, &st->chunks, first + rows, sizeof(int64_t), NZI_D2H));
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
    if (st->chunks > 0) {
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->chunk_begin,
                                 (size_t)st->chunks * sizeof(int64_t), "csr/tiles: chunks"));
        NZI_CHECK(nz_cuda_malloc(ctx, (void **)&st->chunk_row, (size_t)st->chunks * sizeof(int32_t),
                                 "csr/tiles: chunks"));
        tiles_chunk_fill_kernel<Offset><<<grid_rows, TILES_BUILD_BLOCK, 0, cs->stream>>>(
            rows, offsets, first, st->chunk_begin, st->chunk_row);
        NZI_CUDA_CHECK(ctx, cudaGetLastError());
    }
cleanup:
    nz_cuda_free(ctx, temp, (size_t)-1);
    nz_cuda_free(ctx, first, (size_t)-1);
    return status;
}

/* The plan's entries: sort, unpack, chunk the long rows. The key holds the tile (tile_bits) and
 * the column's top kept_bits bits, at most 32 in all. */
template <typename Value, typename Offset, typename Index>
static nz_status_t tiles_build(nz_context_t *ctx, const nz_matrix_t *A, tiles_state_t *st,
                               size_t *bytes) {
    nz_status_t status = NZ_SUCCESS;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int col_bits = bits_for((uint64_t)(A->cols > 0 ? A->cols - 1 : 0));
    const int tile_bits = bits_for((uint64_t)st->tiles);
    const int drop = tile_bits + col_bits > 32 ? tile_bits + col_bits - 32 : 0;
    const int kept_bits = col_bits - drop;
    tiles_scratch<Index> w;
    memset(&w, 0, sizeof w);
    if (kept_bits < 1 || tile_bits > 31)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "csr/tiles: %d tiles over %lld columns leave "
                         "no column bits in a 32-bit key", st->tiles, (long long)A->cols);
    NZI_CHECK((tiles_sort<Offset, Index>(ctx, A, st, drop, kept_bits, tile_bits + kept_bits, &w)));
    NZI_CHECK((tiles_unpack<Value, Index>(ctx, A, st, kept_bits, drop == 0, &w)));
    if (st->entries < A->nnz) NZI_CHECK(tiles_chunks<Offset>(ctx, A, st));
    NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
    *bytes = ((size_t)st->tiles + 1) * sizeof(int64_t) +
             (size_t)st->entries * (sizeof(uint32_t) + sizeof(uint16_t) + sizeof(Value)) +
             (size_t)st->chunks * (sizeof(int64_t) + sizeof(int32_t));
cleanup:
    if (status < 0 && cudaStreamSynchronize(cs->stream) != cudaSuccess) (void)cudaGetLastError();
    tiles_scratch_free<Index>(ctx, &w);
    return status;
}

/* Lets the kernels take up to the device's opt-in maximum of dynamic shared memory. Always that
 * maximum, never this plan's own size: the attribute belongs to the function on the device, so a
 * later plan setting a smaller limit would make an earlier, larger plan's launches fail. */
template <typename Value>
static nz_status_t tiles_allow_smem(nz_context_t *ctx, size_t smem) {
    const size_t optin = nzi_cuda(ctx)->shared_per_block_optin;
    if (smem <= 48 * 1024) return NZ_SUCCESS;
    NZI_CUDA_TRY(ctx, cudaFuncSetAttribute(tiles_kernel<Value, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)optin));
    NZI_CUDA_TRY(ctx, cudaFuncSetAttribute(tiles_kernel<Value, false>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)optin));
    return NZ_SUCCESS;
}

static nz_status_t tiles_setup(nz_spmv_plan_t *plan) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const bool wide = A->device.offset_type == NZ_I64;
    const bool dbl = A->value_type == NZ_F64;
    const bool big = A->nnz > INT32_MAX;
    nz_status_t status = NZ_SUCCESS;
    size_t bytes = 0;
    tiles_state_t *st = (tiles_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "csr/tiles: cannot allocate the plan state");
    plan->state = st;
    plan->reproducible = 0; /* shared-memory atomics land in no fixed order */
    plan->vector_width = 0;
    tiles_shape(nzi_cuda(ctx), A->rows, nzi_value_size(A->value_type), st);
    NZI_CHECK(dbl ? tiles_allow_smem<double>(ctx, st->smem) : tiles_allow_smem<float>(ctx, st->smem));
#define TILES_BUILD(V, O)                                                                          \
    (big ? tiles_build<V, O, int64_t>(ctx, A, st, &bytes) : tiles_build<V, O, int32_t>(ctx, A, st, &bytes))
    if (dbl) NZI_CHECK(wide ? TILES_BUILD(double, int64_t) : TILES_BUILD(double, int32_t));
    else NZI_CHECK(wide ? TILES_BUILD(float, int64_t) : TILES_BUILD(float, int32_t));
#undef TILES_BUILD
    plan->workspace_bytes = bytes;
    return NZ_SUCCESS;
cleanup:
    tiles_release(plan);
    return status;
}

static nz_status_t tiles_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                 double beta, void *y) {
    if (plan->state == NULL)
        return nzi_error(plan->ctx, NZ_ERR_INVALID_HANDLE, "nz_spmv_execute: the plan has no tiles");
    return plan->A->value_type == NZ_F32 ? tiles_launch<float>(plan, alpha, x, beta, y)
                                         : tiles_launch<double>(plan, alpha, x, beta, y);
}

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_tiles_ops = {NZ_ALG_TILES, tiles_setup,
                                                              tiles_execute, tiles_release};
