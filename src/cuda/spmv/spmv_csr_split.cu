/* spmv_csr_split.cu: nonzero-split CSR SpMV on the GPU: equal runs of nonzeros a thread, row ends
 * as bit flags, a warp-wide segmented scan. */
#include "carry_fixup.cuh"

#include <cub/device/device_scan.cuh>


/*
 * The merge-path kernel (spmv_merge.cu) balances rows + nonzeros across threads, but to do so it
 * stages every tile's products and row ends in shared memory, searches the tile for each thread's
 * start and scans carries over the block: on the L2-resident power-law graphs it issues more per
 * nonzero than cuSPARSE's kernel (docs/dev/PERF_NOTES.md, "The real graphs under Nsight Compute").
 * This kernel balances nonzeros only, and keeps each thread's work in registers:
 *
 * - Setup marks the last nonzero of every non-empty row in a bit array `ends` (one bit per
 *   nonzero) and counts the marks of each warp's chunk of 32 x Items nonzeros (a thread per row),
 *   then scans the counts (CUB): chunk_seg[c] = the marks before chunk c = the index, among the
 *   non-empty rows, of the row chunk c starts in: its "segment". When A has empty rows, seg_row
 *   maps segments to rows and lists the empty rows (their y = beta y is written by extra blocks
 *   of the same launch).
 * - Execute: lane l of warp c takes the Items nonzeros from (32 c + l) Items: its columns and
 *   values in 16-byte vector loads, its Items gathers of x all in flight, its Items mark bits in
 *   one word. It learns its first segment from chunk_seg and a warp prefix sum of the marks'
 *   popcounts, then walks its products in registers: a row that starts and ends inside the lane
 *   is written at once (y = alpha sum + beta y); the lane's first finished row (head) and its open
 *   sum at the end (tail) wait for one warp-wide segmented inclusive scan of (segment, tail),
 *   which gives every lane the sum of the earlier lanes' part of its head row.
 * - The warp's open sum at its end is its carry; rows crossing chunks are finished by the fix-up
 *   of merge-path (carry_fixup.cuh), whose runs setup lists from the chunks' carry rows.
 *
 * No shared memory, no block barriers: a warp's work is a handful of loads, Items fused
 * multiply-adds, two 5-step shuffle scans and its row stores. Empty rows cost nothing in the main
 * pass (they own no nonzero) and one store each. Bitwise reproducible: the chunks, the per-lane
 * order, the scan tree and the fix-up order depend only on the structure. Column and value
 * arrays not 16-byte aligned (a user's device view at an odd offset) take scalar loads.
 * Setup: one device block, one memset, three O(rows + nnz) kernels (marks with counts and carry
 * rows, segment rows, carry runs) and CUB's scan, one copy back of three integers.
 */

#define SPLIT_BLOCK 256
#define SPLIT_WARPS (SPLIT_BLOCK / 32)

/* Nonzeros a lane (a power of two, 4 to 32: a lane's marks sit in one 32-bit word). 4 against 8
 * and 16, H100, same runs (bench/results/h100-2026-11-27-split-items.txt): 8 was 3-9% faster on
 * the banded generated matrices (laplace3d, fe3d), 4 was faster on every graph and scattered
 * matrix (dblp-2010 single 10.7 against 11.9 us, mdual double 12.8 against 14.8, random 4M x 16
 * double 1129 against 1296, rail double 74 against 97); 16 lost everywhere but cnr-2000 single.
 * Twice the warps of 8 for the same resident 64 warps an SM (32 registers either way): more
 * chunks in flight against the tail of the gathers. */
#define SPLIT_ITEMS 4

/* ---- execute -------------------------------------------------------------------------------- */

/* Items values from 16-byte aligned `p` (Items * sizeof(T) a multiple of 16); Stream: as
 * streaming loads (ld.global.cs), else through the read-only path. */
template <typename T, int Items, bool Stream>
static __device__ __forceinline__ void split_load_vec(const T *__restrict__ p, T (&out)[Items]) {
    constexpr int per = 16 / sizeof(T);
    const int4 *q = reinterpret_cast<const int4 *>(p);
#pragma unroll
    for (int j = 0; j < Items / per; j++) {
        const int4 v = nzi_ld_matrix<Stream>(q + j);
        const T *e = reinterpret_cast<const T *>(&v);
#pragma unroll
        for (int u = 0; u < per; u++) out[j * per + u] = e[u];
    }
}

template <bool BetaZero, typename Value, typename Accum>
static __device__ __forceinline__ void split_store(Value *__restrict__ y, int64_t row, Accum alpha,
                                                   Accum beta, Accum sum) {
    y[row] = (Value)(BetaZero ? alpha * sum : alpha * sum + beta * (Accum)y[row]);
}

/* Blocks [0, chunk_blocks): SPLIT_WARPS chunks each; the blocks after: empty rows (y = beta y),
 * listed at seg_row[rows - 1 - i]. Empty: A has empty rows, so segments map to rows through
 * seg_row. */
template <typename Value, int Items, bool BetaZero, bool Empty, bool Hints, typename Accum = Value>
__global__ void __launch_bounds__(SPLIT_BLOCK)
    split_kernel(int64_t nnz, int64_t num_chunks, unsigned chunk_blocks,
                 const int32_t *__restrict__ col_indices, const Value *__restrict__ values,
                 const Value *__restrict__ x, const uint32_t *__restrict__ ends,
                 const int32_t *__restrict__ chunk_seg, const int32_t *__restrict__ seg_row,
                 int32_t rows, int64_t num_empty, bool aligned, Accum alpha, Accum beta,
                 Value *__restrict__ y, Accum *__restrict__ carry_value) {
    if (blockIdx.x >= chunk_blocks) {
        if (!Empty) return;
        const int64_t stride = (int64_t)(gridDim.x - chunk_blocks) * SPLIT_BLOCK;
        for (int64_t i = (int64_t)(blockIdx.x - chunk_blocks) * SPLIT_BLOCK + threadIdx.x;
             i < num_empty; i += stride) {
            const int32_t row = seg_row[rows - 1 - i];
            y[row] = BetaZero ? Value(0) : (Value)(beta * (Accum)y[row]);
        }
        return;
    }
    const int lane = threadIdx.x & 31;
    const int64_t chunk = (int64_t)blockIdx.x * SPLIT_WARPS + (threadIdx.x >> 5);
    if (chunk >= num_chunks) return; /* whole warps */
    const int64_t k0 = chunk * (32 * Items) + (int64_t)lane * Items;

    Accum prod[Items];
    unsigned marks = 0;
    if (k0 < nnz) /* bits past nnz are zero */
        marks = (__ldg(ends + (k0 >> 5)) >> (k0 & 31)) &
                (Items == 32 ? 0xffffffffu : (1u << Items) - 1u);
    const int32_t chunk_first = __ldg(chunk_seg + chunk);
    if (aligned && k0 + Items <= nnz) {
        int32_t col[Items];
        Value val[Items];
        split_load_vec<int32_t, Items, Hints>(col_indices + k0, col);
        split_load_vec<Value, Items, Hints>(values + k0, val);
#pragma unroll
        for (int i = 0; i < Items; i++) prod[i] = (Accum)val[i] * (Accum)__ldg(x + col[i]);
    } else {
#pragma unroll
        for (int i = 0; i < Items; i++)
            prod[i] = k0 + i < nnz ? (Accum)__ldg(values + k0 + i) *
                                         (Accum)__ldg(x + __ldg(col_indices + k0 + i))
                                   : Accum(0);
    }

    /* the lane's first segment: the chunk's, plus the marks of the lanes before it */
    const int count = __popc(marks);
    int before = count;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const int other = __shfl_up_sync(0xffffffffu, before, offset);
        if (lane >= offset) before += other;
    }
    const int first = chunk_first + before - count;
    /* the rows of the lane's segments first .. first + count - 1, loaded while the gathers are in
     * flight: consecutive when no empty row falls between them (the common case), else each
     * looked up at its store */
    int32_t row_first = first;
    bool consecutive = true;
    if (Empty && count > 0) {
        row_first = __ldg(seg_row + first);
        consecutive = __ldg(seg_row + first + count - 1) - row_first == count - 1;
    }

    /* rows finished inside the lane: the first waits for the scan, the others are stored now */
    Accum run = Accum(0), head = Accum(0);
    int seg = first;
#pragma unroll
    for (int i = 0; i < Items; i++) {
        run += prod[i];
        if (marks & (1u << i)) {
            if (seg == first)
                head = run;
            else
                split_store<BetaZero>(y, consecutive ? (int64_t)row_first + (seg - first)
                                                     : (int64_t)__ldg(seg_row + seg),
                                      alpha, beta, run);
            run = Accum(0);
            seg++;
        }
    }

    /* segmented inclusive scan of (seg, run) over the warp; keys never decrease */
    Accum value = run;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const int other_seg = __shfl_up_sync(0xffffffffu, seg, offset);
        const Accum other = __shfl_up_sync(0xffffffffu, value, offset);
        if (lane >= offset && other_seg == seg) value += other;
    }
    /* lane l - 1's open segment is lane l's first: its scanned value is the carry into the head */
    const Accum carry_in = __shfl_up_sync(0xffffffffu, value, 1);
    if (count > 0)
        split_store<BetaZero>(y, (int64_t)row_first, alpha, beta,
                              head + (lane > 0 ? carry_in : Accum(0)));
    if (lane == 31) carry_value[chunk] = value;
}

/* ---- setup ---------------------------------------------------------------------------------- */

/* One thread per row (ends and counts zeroed first): the mark of the row's last nonzero in
 * `ends` and in its chunk's count (counts[c + 1]); for every chunk whose last nonzero lies in the
 * row, the row its open sum belongs to (carry_row[c] = the row, or -1 where that nonzero ends
 * the row: every entry is written once, by the row holding that nonzero; the last chunk's is the
 * last non-empty row's end). */
template <typename Offset>
__global__ void split_marks_kernel(int32_t rows, const Offset *__restrict__ row_offsets, int64_t nnz,
                                   int64_t chunk_items, uint32_t *__restrict__ ends,
                                   int32_t *__restrict__ counts, int32_t *__restrict__ carry_row) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
        const int64_t begin = (int64_t)row_offsets[r], end = (int64_t)row_offsets[r + 1];
        if (end == begin) continue;
        const int64_t k = end - 1;
        atomicOr(ends + (k >> 5), 1u << (k & 31));
        atomicAdd(counts + k / chunk_items + 1, 1);
        for (int64_t c = begin / chunk_items; (c + 1) * chunk_items - 1 <= k; c++)
            carry_row[c] = (c + 1) * chunk_items - 1 == k ? -1 : (int32_t)r;
        if (k == nnz - 1) carry_row[k / chunk_items] = -1;
    }
}

/* The marks before nonzero position p (p <= nnz). */
static __device__ __forceinline__ int split_marks_before(int64_t p, int words_per_chunk,
                                                         const uint32_t *__restrict__ ends,
                                                         const int32_t *__restrict__ chunk_seg) {
    const int64_t chunk = p / (32 * words_per_chunk);
    int count = chunk_seg[chunk];
    for (int64_t w = chunk * words_per_chunk; w < (p >> 5); w++) count += __popc(ends[w]);
    if (p & 31) count += __popc(ends[p >> 5] & ((1u << (p & 31)) - 1u));
    return count;
}

/* seg_row[segment] = row for the non-empty rows; the i-th empty row at seg_row[rows - 1 - i]
 * (the rows buffer holds both: the segments first, the empty rows from its end). */
template <typename Offset>
__global__ void split_rows_kernel(int32_t rows, const Offset *__restrict__ row_offsets,
                                  int words_per_chunk, const uint32_t *__restrict__ ends,
                                  const int32_t *__restrict__ chunk_seg, int32_t *__restrict__ seg_row) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
        const int64_t begin = (int64_t)row_offsets[r], end = (int64_t)row_offsets[r + 1];
        if (end > begin)
            seg_row[split_marks_before(end - 1, words_per_chunk, ends, chunk_seg)] = (int32_t)r;
        else
            seg_row[rows - 1 - (r - split_marks_before(begin, words_per_chunk, ends, chunk_seg))] =
                (int32_t)r;
    }
}

/* The carry runs on the device (nzi_carry_runs_t's form, built without a trip to the host): the
 * head t of each run of chunks with the same carry row finds the run's length (a short scan, then
 * a binary search over the run, whose entries are the only ones equal to its row); short runs
 * get run_length[t], long ones an entry of long_runs at an atomic slot (their order does not
 * matter: each is summed by a block of its own in a fixed order). counters[0] = 1 when any short
 * run exists, counters[1] = the long runs. */
__global__ void split_runs_kernel(int64_t num_chunks, const int32_t *__restrict__ carry_row,
                                  int32_t *__restrict__ run_length, int32_t *__restrict__ long_runs,
                                  int32_t *__restrict__ counters) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < num_chunks; t += stride) {
        const int32_t row = carry_row[t];
        run_length[t] = 0;
        if (row < 0 || (t > 0 && carry_row[t - 1] == row)) continue;
        int64_t length = 1;
        while (length <= NZI_FIXUP_SHORT_RUN && t + length < num_chunks && carry_row[t + length] == row)
            length++;
        if (length <= NZI_FIXUP_SHORT_RUN) {
            run_length[t] = (int32_t)length;
            counters[0] = 1;
            continue;
        }
        int64_t low = t + length, high = num_chunks; /* the first index past the run */
        while (low < high) {
            const int64_t mid = low + (high - low) / 2;
            if (carry_row[mid] == row)
                low = mid + 1;
            else
                high = mid;
        }
        const int slot = atomicAdd(counters + 1, 1);
        long_runs[3 * slot] = (int32_t)t;
        long_runs[3 * slot + 1] = (int32_t)(low - t);
        long_runs[3 * slot + 2] = row;
    }
}

typedef struct split_state {
    int64_t num_chunks;   /* warps' chunks of 32 x SPLIT_ITEMS nonzeros */
    int64_t num_empty;    /* empty rows */
    void *buffer;         /* one device allocation for the arrays below */
    uint32_t *ends;       /* ceil(nnz / 32) words: bit k = nonzero k ends its row */
    int32_t *chunk_seg;   /* num_chunks + 1: marks before each chunk; then the two run counters */
    int32_t *seg_row;     /* rows: the non-empty rows in order, then the empty ones from the end */
    int32_t *carry_row;   /* num_chunks: the row of each chunk's carry (-1: none) */
    void *carry_value;    /* num_chunks, Value (double for NZ_PLAN_MIXED) */
    bool aligned;         /* columns and values 16-byte aligned: vector loads */
    nzi_carry_runs_t runs; /* in the buffer */
} split_state_t;

static void split_release(nz_spmv_plan_t *plan) {
    split_state_t *st = (split_state_t *)plan->state;
    if (st == NULL) return;
    nz_cuda_free(plan->ctx, st->buffer, (size_t)-1);
    nzi_free(plan->ctx, st);
    plan->state = NULL;
}

/* Bytes of `count` elements of `size` bytes, rounded up to 256 (each array of the buffer aligned). */
static size_t split_part(int64_t count, size_t size) {
    return ((size_t)count * size + 255) & ~(size_t)255;
}

/* Setup: one device block; the marks, counts and carry rows (a thread per row), CUB's scan of the
 * counts, the segment rows and the carry runs; one copy back of three integers (segments, whether
 * short runs exist, long runs). */
template <typename Offset>
static nz_status_t split_setup_typed(nz_spmv_plan_t *plan) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const nz_matrix_t *A = plan->A;
    const int64_t rows = A->rows, nnz = A->nnz;
    const int items = SPLIT_ITEMS;
    const int64_t chunk_items = 32 * (int64_t)items;
    const int64_t num_chunks = (nnz + chunk_items - 1) / chunk_items;
    const int64_t num_words = (nnz + 31) / 32;
    const int64_t max_long = num_chunks / (NZI_FIXUP_SHORT_RUN + 1) + 1;
    const size_t carry_size = (plan->flags & NZ_PLAN_MIXED) || A->value_type == NZ_F64
                                  ? sizeof(double) : sizeof(float);
    const Offset *offsets = nzi_dev_offsets<Offset>(A);
    const unsigned row_blocks = (unsigned)nzi_cuda_grid_blocks(cs, 256, 2, (rows + 255) / 256);
    const unsigned chunk_blocks = (unsigned)nzi_cuda_grid_blocks(cs, 256, 2, (num_chunks + 255) / 256);
    split_state_t *st = NULL;
    int32_t counters[3]; /* segments, short runs exist, long runs */
    size_t scan_bytes = 0;
    char *p;

    if (num_chunks / SPLIT_WARPS >= INT32_MAX / 2)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "nonzero-split plan: %lld chunks exceed the grid "
                         "limit", (long long)num_chunks);
    st = (split_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "nonzero-split plan: cannot allocate the state");
    plan->state = st;
    st->num_chunks = num_chunks;
    st->aligned = ((uintptr_t)A->device.col_indices % 16 == 0) &&
                  ((uintptr_t)A->device.values % 16 == 0);
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(NULL, scan_bytes, (int32_t *)NULL,
                                                      (int32_t *)NULL, (int)num_chunks, cs->stream));
    plan->workspace_bytes = split_part(num_words, sizeof(uint32_t)) +
                            split_part(num_chunks + 3, sizeof(int32_t)) +
                            split_part(num_chunks, sizeof(int32_t)) +
                            split_part(rows, sizeof(int32_t)) + split_part(num_chunks, carry_size) +
                            split_part(num_chunks, sizeof(int32_t)) +
                            split_part(3 * max_long, sizeof(int32_t)) +
                            split_part((int64_t)scan_bytes, 1);
    NZI_CHECK(nz_cuda_malloc(ctx, &st->buffer, plan->workspace_bytes, "nonzero-split plan"));
    p = (char *)st->buffer;
    st->ends = (uint32_t *)p;
    p += split_part(num_words, sizeof(uint32_t));
    st->chunk_seg = (int32_t *)p; /* [num_chunks]: segments; [+1], [+2]: the run counters */
    p += split_part(num_chunks + 3, sizeof(int32_t));
    st->carry_row = (int32_t *)p;
    p += split_part(num_chunks, sizeof(int32_t));
    st->seg_row = (int32_t *)p;
    p += split_part(rows, sizeof(int32_t));
    st->carry_value = p;
    p += split_part(num_chunks, carry_size);
    st->runs.run_length = (int32_t *)p;
    p += split_part(num_chunks, sizeof(int32_t));
    st->runs.long_runs = (int32_t *)p;
    p += split_part(3 * max_long, sizeof(int32_t));

    /* ends and chunk_seg (with the run counters after it) are adjacent: one memset */
    NZI_CHECK(nz_cuda_memset(ctx, st->ends, 0, (size_t)((char *)st->carry_row - (char *)st->ends)));
    split_marks_kernel<Offset><<<row_blocks, 256, 0, cs->stream>>>(
        (int32_t)rows, offsets, nnz, chunk_items, st->ends, st->chunk_seg, st->carry_row);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    NZI_CUDA_CHECK(ctx, cub::DeviceScan::InclusiveSum(p, scan_bytes, st->chunk_seg + 1,
                                                      st->chunk_seg + 1, (int)num_chunks,
                                                      cs->stream));
    split_rows_kernel<Offset><<<row_blocks, 256, 0, cs->stream>>>((int32_t)rows, offsets, items,
                                                                  st->ends, st->chunk_seg,
                                                                  st->seg_row);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    split_runs_kernel<<<chunk_blocks, 256, 0, cs->stream>>>(num_chunks, st->carry_row,
                                                            st->runs.run_length,
                                                            st->runs.long_runs,
                                                            st->chunk_seg + num_chunks + 1);
    NZI_CUDA_CHECK(ctx, cudaGetLastError());
    /* synchronises: surfaces faults of the kernels above */
    NZI_CHECK(nz_cuda_memcpy(ctx, counters, st->chunk_seg + num_chunks, sizeof counters, NZI_D2H));
    st->num_empty = rows - counters[0];
    st->runs.num_short = counters[1];
    st->runs.num_long = counters[2];
    if (st->runs.num_long == 0) st->runs.long_runs = NULL;
    plan->reproducible = 1;
    plan->vector_width = 0;

cleanup:
    if (status < 0) {
        split_release(plan);
        plan->workspace_bytes = 0;
    }
    return status;
}

static nz_status_t split_setup(nz_spmv_plan_t *plan) {
    if (plan->A->device.offset_type == NZ_I64) return split_setup_typed<int64_t>(plan);
    return split_setup_typed<int32_t>(plan);
}

template <typename Value, bool BetaZero, bool Empty, bool Hints, typename Accum>
static void split_kernel_launch(const nz_spmv_plan_t *plan, unsigned chunk_blocks,
                                unsigned empty_blocks, Accum alpha, Accum beta, const Value *x,
                                Value *y) {
    const split_state_t *st = (const split_state_t *)plan->state;
    const nz_matrix_t *A = plan->A;
    split_kernel<Value, SPLIT_ITEMS, BetaZero, Empty, Hints, Accum>
        <<<chunk_blocks + empty_blocks, SPLIT_BLOCK, 0, nzi_cuda(plan->ctx)->stream>>>(
            A->nnz, st->num_chunks, chunk_blocks, A->device.col_indices,
            (const Value *)A->device.values, x, st->ends, st->chunk_seg, st->seg_row,
            (int32_t)A->rows, st->num_empty, st->aligned, alpha, beta, y,
            (Accum *)st->carry_value);
}

template <typename Value, bool Hints, typename Accum>
static void split_dispatch(const nz_spmv_plan_t *plan, unsigned chunk_blocks, unsigned empty_blocks,
                           Accum alpha, double beta, const Value *x, Value *y) {
    const bool empty = empty_blocks > 0;
    if (beta == 0.0 && empty)
        split_kernel_launch<Value, true, true, Hints>(plan, chunk_blocks, empty_blocks, alpha,
                                                      Accum(0), x, y);
    else if (beta == 0.0)
        split_kernel_launch<Value, true, false, Hints>(plan, chunk_blocks, 0, alpha, Accum(0), x, y);
    else if (empty)
        split_kernel_launch<Value, false, true, Hints>(plan, chunk_blocks, empty_blocks, alpha,
                                                       (Accum)beta, x, y);
    else
        split_kernel_launch<Value, false, false, Hints>(plan, chunk_blocks, 0, alpha, (Accum)beta,
                                                        x, y);
}

/* The chunks' kernel (with the empty rows' blocks), then the carries' fix-up. */
template <typename Value, typename Accum = Value>
static nz_status_t split_launch(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                double beta, void *y) {
    nz_context_t *ctx = plan->ctx;
    const split_state_t *st = (const split_state_t *)plan->state;
    const unsigned chunk_blocks = (unsigned)((st->num_chunks + SPLIT_WARPS - 1) / SPLIT_WARPS);
    const unsigned empty_blocks =
        st->num_empty > 0 ? (unsigned)nzi_cuda_grid_blocks(nzi_cuda(ctx), SPLIT_BLOCK, 1,
                                                           (st->num_empty + SPLIT_BLOCK - 1) /
                                                               SPLIT_BLOCK)
                          : 0u;
    const Accum a = (Accum)alpha;
    const Value *xv = (const Value *)x;
    Value *yv = (Value *)y;
    if (plan->flags & NZ_PLAN_CACHE_HINTS)
        split_dispatch<Value, true, Accum>(plan, chunk_blocks, empty_blocks, a, beta, xv, yv);
    else
        split_dispatch<Value, false, Accum>(plan, chunk_blocks, empty_blocks, a, beta, xv, yv);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return nzi_carry_fixup_launch<Value, Accum>(ctx, &st->runs, st->num_chunks, st->carry_row,
                                                (const Accum *)st->carry_value, a, yv);
}

static nz_status_t split_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                 double beta, void *y) {
    if (plan->state == NULL)
        return nzi_error(plan->ctx, NZ_ERR_INVALID_HANDLE, "nonzero-split plan has no state");
    if (plan->A->value_type == NZ_F32 && (plan->flags & NZ_PLAN_MIXED))
        return split_launch<float, double>(plan, alpha, x, beta, y);
    if (plan->A->value_type == NZ_F32) return split_launch<float>(plan, alpha, x, beta, y);
    return split_launch<double>(plan, alpha, x, beta, y);
}

extern "C" const nzi_cuda_spmv_ops_t nzi_cuda_csr_split_ops = {NZ_ALG_SPLIT, split_setup,
                                                               split_execute, split_release};
