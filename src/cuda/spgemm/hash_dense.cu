/* hash_dense.cu: the hash SpGEMM's dense rows: a bitmap per row, ranks from popcounts, products added at their rank. */
#include "hash.cuh"

#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_scan.cuh>

/* ---- dense rows ----------------------------------------------------------------------------
 * Rows too long for shared memory (or cheaper dense than sorted) get a block of DENSE_BLOCK
 * threads each; block b takes rows b, b + grid, ... of the list. Every dense kernel walks a row's
 * products with dense_sweep: A's row DENSE_BLOCK entries at a time, a block scan of their B-row
 * lengths numbering the batch's products, thread t taking products t, t + DENSE_BLOCK, ... (its
 * entry of A by binary search over the batch's offsets), so that a row of A with a few entries
 * whose rows of B are long keeps every thread busy and consecutive threads read consecutive
 * entries of B. The row's columns are a bitmap of cols / 32 words.
 *  - hash_dense_ranked_kernel (numeric, when the bitmap and a prefix per pair of words fit in
 *    shared memory: up to about 1.1M columns): sweep 1 sets the bits; the prefix counts give
 *    every column its rank in the row, C's columns are written in order and C's values zeroed;
 *    sweep 2 adds each product into C's value at its column's rank (global atomics on the row's
 *    own output, which stays in L2). No dense value array, nothing random in DRAM.
 *  - hash_dense_kernel (symbolic; numeric for wider B): the bitmap in shared memory when it
 *    fits (SharedBits) or in global slot b; the numeric phase adds into a global accumulator of
 *    `cols` values (slot b, zero between rows), writes the columns in order, then gathers the
 *    values with the whole block, zeroing the accumulator behind it. */
#define SWEEP_BITS 0     /* set the column bits */
#define SWEEP_BITS_ACC 1 /* set the bits and add into the dense accumulator */
#define SWEEP_RANKED 2   /* add into C's values at the column's rank */

typedef cub::BlockScan<long long, DENSE_BLOCK> dense_block_scan_t;
typedef cub::WarpScan<long long> dense_warp_scan_t;
typedef cub::WarpScan<int> dense_lane_scan_t;

template <typename Value>
struct dense_shared {
    typename dense_block_scan_t::TempStorage block_scan;
    typename dense_warp_scan_t::TempStorage warp_scan;
    typename dense_lane_scan_t::TempStorage lane_scan[DENSE_BLOCK / WARP_LANES];
    long long first[DENSE_BLOCK]; /* the batch's product offsets (exclusive scan) */
    long long b_start[DENSE_BLOCK];
    Value a_value[DENSE_BLOCK];
    long long warp_base[WARP_LANES + 1];
};

template <typename Value, int Mode>
static __device__ __forceinline__ void dense_sweep(const hash_args<Value> &args, int32_t row,
                                                   uint32_t *bits, Value *acc,
                                                   const int32_t *prefix, Value *out,
                                                   dense_shared<Value> &sh) {
    const int tid = threadIdx.x;
    const int64_t a_begin = args.a_off[row], a_end = args.a_off[row + 1];
    for (int64_t kb = a_begin; kb < a_end; kb += DENSE_BLOCK) {
        const int n = a_end - kb < DENSE_BLOCK ? (int)(a_end - kb) : DENSE_BLOCK;
        long long len = 0, total = 0;
        if (tid < n) {
            const int32_t j = args.a_col[kb + tid];
            const int64_t b0 = args.b_off[j];
            len = args.b_off[j + 1] - b0;
            sh.b_start[tid] = b0;
            if (Mode != SWEEP_BITS) sh.a_value[tid] = args.a_val[kb + tid];
        }
        long long before = 0;
        /* the storage is free again: the previous batch ended with a barrier */
        dense_block_scan_t(sh.block_scan).ExclusiveSum(len, before, total);
        if (tid < n) sh.first[tid] = before;
        __syncthreads();
        int e = 0; /* the entry of A of product p: the last with first[e] <= p (p grows) */
        for (long long p = tid; p < total; p += DENSE_BLOCK) {
            int hi = n - 1;
            while (e < hi) {
                const int mid = (e + hi + 1) >> 1;
                if (sh.first[mid] <= p) e = mid; else hi = mid - 1;
            }
            const int64_t l = sh.b_start[e] + (p - sh.first[e]);
            const int32_t c = args.b_col[l];
            if (Mode != SWEEP_RANKED) atomicOr(&bits[c >> 5], 1u << (c & 31));
            if (Mode == SWEEP_BITS_ACC) atomicAdd(&acc[c], sh.a_value[e] * args.b_val[l]);
            if (Mode == SWEEP_RANKED) {
                const int w = c >> 5;
                int r = prefix[w >> 1] + __popc(bits[w] & ((1u << (c & 31)) - 1u));
                if (w & 1) r += __popc(bits[w - 1]);
                atomicAdd(&out[r], sh.a_value[e] * args.b_val[l]);
            }
        }
        __syncthreads();
    }
}

/* The warps' shares of a row: each warp's count of set bits over its `units` (words, or pairs
 * of words when Pairs) in [u_begin, u_end); warp_base[w] gets the exclusive scan, warp_base[32]
 * the row's total. Clear: zero the words as they are counted. */
template <bool Pairs, bool Clear, typename Value>
static __device__ __forceinline__ void dense_warp_counts(uint32_t *bits, int64_t u_begin,
                                                         int64_t u_end, dense_shared<Value> &sh) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    long long local = 0;
    for (int64_t u = u_begin + lane; u < u_end; u += 32) {
        if (Pairs) {
            const uint2 m = ((const uint2 *)bits)[u];
            local += __popc(m.x) + __popc(m.y);
        } else {
            local += __popc(bits[u]);
            if (Clear) bits[u] = 0;
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) local += __shfl_xor_sync(0xffffffffu, local, o);
    if (lane == 0) sh.warp_base[warp] = local;
    __syncthreads();
    if (warp == 0) {
        long long before = 0, total = 0;
        dense_warp_scan_t(sh.warp_scan).ExclusiveSum(sh.warp_base[lane], before, total);
        sh.warp_base[lane] = before;
        if (lane == 0) sh.warp_base[WARP_LANES] = total;
    }
    __syncthreads();
}

/* Static shared memory of the dense kernels (the dynamic part: the bitmap, and the prefixes). */
template <typename Value>
static constexpr size_t dense_static_bytes(void) {
    return sizeof(dense_shared<Value>);
}

template <typename Value, bool Numeric, bool SharedBits>
__global__ void __launch_bounds__(DENSE_BLOCK, 1)
    hash_dense_kernel(hash_args<Value> args, const int32_t *__restrict__ rows, int64_t count,
                      int64_t words, uint32_t *bitmaps, Value *dense, int64_t cols) {
    static_assert(!(Numeric && SharedBits), "numeric rows with a shared bitmap are ranked");
    extern __shared__ __align__(16) unsigned char dense_raw[];
    __shared__ dense_shared<Value> sh;
    uint32_t *bits = SharedBits ? (uint32_t *)dense_raw : bitmaps + (size_t)blockIdx.x * (size_t)words;
    Value *acc = Numeric ? dense + (size_t)blockIdx.x * (size_t)cols : NULL;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int64_t per_warp = ((words + 31) / 32 + 31) & ~(int64_t)31; /* words per warp, lanes aligned */
    const int64_t w_begin = (int64_t)warp * per_warp;
    const int64_t w_end = w_begin + per_warp < words ? w_begin + per_warp : words;

    if (SharedBits) {
        for (int64_t w = tid; w < words; w += DENSE_BLOCK) bits[w] = 0;
        __syncthreads();
    }
    for (int64_t index = blockIdx.x; index < count; index += gridDim.x) {
        const int32_t row = rows[index];
        dense_sweep<Value, Numeric ? SWEEP_BITS_ACC : SWEEP_BITS>(args, row, bits, acc, NULL, NULL, sh);
        /* the symbolic phase clears the bits as it counts */
        dense_warp_counts<false, !Numeric>(bits, w_begin, w_end, sh);
        if (!Numeric) {
            if (tid == 0) args.c_off[row + 1] = sh.warp_base[32];
        } else {
            const int64_t begin = args.c_off[row] - args.c_base;
            int64_t pos = begin + sh.warp_base[warp];
            for (int64_t w0 = w_begin; w0 < w_end; w0 += 32) {
                const int64_t w = w0 + lane;
                uint32_t m = 0;
                if (w < w_end) {
                    m = bits[w];
                    if (m != 0) bits[w] = 0;
                }
                const int cnt = __popc(m);
                int incl = 0, warp_total = 0; /* every lane of the warp takes part */
                dense_lane_scan_t(sh.lane_scan[warp]).InclusiveSum(cnt, incl, warp_total);
                int64_t q = pos + incl - cnt;
                while (m != 0) {
                    args.c_col[q++] = (int32_t)(w * 32 + (__ffs(m) - 1));
                    m &= m - 1;
                }
                pos += warp_total;
            }
            __syncthreads(); /* the row's columns, written by the warps, visible to the block */
            const int64_t nnz = sh.warp_base[32];
            const int32_t *cc = args.c_col + begin;
            Value *cv = args.c_val + begin;
            for (int64_t i = tid; i < nnz; i += DENSE_BLOCK) {
                const int32_t c = cc[i];
                cv[i] = acc[c];
                acc[c] = Value(0);
            }
        }
        __syncthreads();
    }
}

/* Numeric dense rows with the bitmap (2 * pairs words) and one int32 prefix per pair of words
 * in shared memory: see the section's comment. */
template <typename Value>
__global__ void __launch_bounds__(DENSE_BLOCK, 1)
    hash_dense_ranked_kernel(hash_args<Value> args, const int32_t *__restrict__ rows,
                             int64_t count, int64_t pairs) {
    extern __shared__ __align__(16) unsigned char dense_raw[];
    __shared__ dense_shared<Value> sh;
    uint32_t *bits = (uint32_t *)dense_raw;
    int32_t *prefix = (int32_t *)(bits + 2 * pairs);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int64_t per_warp = ((pairs + 31) / 32 + 31) & ~(int64_t)31;
    const int64_t u_begin = (int64_t)warp * per_warp;
    const int64_t u_end = u_begin + per_warp < pairs ? u_begin + per_warp : pairs;

    for (int64_t w = tid; w < 2 * pairs; w += DENSE_BLOCK) bits[w] = 0;
    __syncthreads();
    for (int64_t index = blockIdx.x; index < count; index += gridDim.x) {
        const int32_t row = rows[index];
        dense_sweep<Value, SWEEP_BITS>(args, row, bits, NULL, NULL, NULL, sh);
        dense_warp_counts<true, false>(bits, u_begin, u_end, sh);
        const int64_t begin = args.c_off[row] - args.c_base;
        int32_t *out_col = args.c_col + begin;
        Value *out_val = args.c_val + begin;
        int pos = (int)sh.warp_base[warp]; /* a row of C has fewer than 2^31 entries (cols) */
        for (int64_t u0 = u_begin; u0 < u_end; u0 += 32) {
            const int64_t u = u0 + lane;
            uint2 m = make_uint2(0u, 0u);
            if (u < u_end) m = ((const uint2 *)bits)[u];
            const int cnt = __popc(m.x) + __popc(m.y);
            int incl = 0, warp_total = 0;
            dense_lane_scan_t(sh.lane_scan[warp]).InclusiveSum(cnt, incl, warp_total);
            int q = pos + incl - cnt;
            if (u < u_end) prefix[u] = q;
            for (uint32_t x = m.x; x != 0; x &= x - 1) out_col[q++] = (int32_t)(u * 64 + (__ffs(x) - 1));
            for (uint32_t x = m.y; x != 0; x &= x - 1) out_col[q++] = (int32_t)(u * 64 + 32 + (__ffs(x) - 1));
            pos += warp_total;
        }
        const int64_t nnz = sh.warp_base[32];
        for (int64_t i = tid; i < nnz; i += DENSE_BLOCK) out_val[i] = Value(0);
        __syncthreads(); /* prefixes and zeroed values visible to the block */
        dense_sweep<Value, SWEEP_RANKED>(args, row, bits, NULL, prefix, out_val, sh);
        for (int64_t w = tid; w < 2 * pairs; w += DENSE_BLOCK) bits[w] = 0;
        __syncthreads();
    }
}


/* Bitmap words of a row of `cols` columns, and pairs of words. */
static int64_t dense_words(int64_t cols) { return (cols + BITMAP_WORD_BITS - 1) / BITMAP_WORD_BITS; }
static int64_t dense_pairs(int64_t cols) { return (dense_words(cols) + 1) / 2; }

static size_t dense_dynamic_bytes(int mode, int64_t cols) {
    if (mode == DENSE_RANKED) /* 2 words and an int32 prefix per pair */
        return (size_t)dense_pairs(cols) * (2 * WORD_BYTES + sizeof(int32_t));
    if (mode == DENSE_SHARED_BITS) return (size_t)dense_words(cols) * WORD_BYTES;
    return 0;
}

template <typename Value>
static int dense_mode(const nzi_cuda_state_t *cs, int64_t cols, bool numeric) {
    const int mode = numeric ? DENSE_RANKED : DENSE_SHARED_BITS;
    const size_t bytes = dense_dynamic_bytes(mode, cols) + dense_static_bytes<Value>();
    return bytes <= cs->shared_per_block_optin && bytes <= cs->shared_per_sm ? mode : DENSE_GLOBAL;
}

/* Dense slots for the HUGE_BIN rows: as many as help (one per SM: a 1024-thread dense block
 * with 40-60 registers is alone on its SM; never more than the rows), within `avail` bytes;
 * zeroed once. A slot holds the bitmap when it is in global memory, and for a numeric
 * DENSE_GLOBAL the accumulators (*slot_bytes: its bytes; 0 when both are in shared memory). */
template <typename Value>
nz_status_t hash_dense_slots(hash_state_t *st, int64_t huge_rows, int64_t cols, bool numeric,
                               size_t avail, int64_t *slots, size_t *slot_bytes) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const bool global_bits = dense_mode<Value>(cs, cols, numeric) == DENSE_GLOBAL;
    const size_t bitmap_bytes = global_bits ? round_up((size_t)dense_words(cols) * WORD_BYTES) : 0;
    const size_t value_bytes = global_bits && numeric ? round_up((size_t)cols * sizeof(Value)) : 0;
    const size_t per_slot = bitmap_bytes + value_bytes;
    int64_t n = huge_rows < (int64_t)cs->sm_count ? huge_rows : (int64_t)cs->sm_count;
    if (per_slot > 0 && (int64_t)(avail / per_slot) < n) n = (int64_t)(avail / per_slot);
    if (n < 1)
        return nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                         "nz_spgemm (hash): a dense accumulator for %lld columns needs %zu bytes, "
                         "more than the %zu bytes left in the device memory budget",
                         (long long)cols, per_slot, avail);
    if (global_bits) {
        NZI_TRY(nzi_cuda_malloc_async(ctx, (void **)&st->bitmaps, (size_t)n * bitmap_bytes,
                               "nz_spgemm (hash): dense bitmaps"));
        NZI_TRY(nz_cuda_memset(ctx, st->bitmaps, 0, (size_t)n * bitmap_bytes));
    }
    if (value_bytes > 0) {
        NZI_TRY(nzi_cuda_malloc_async(ctx, &st->dense, (size_t)n * value_bytes,
                               "nz_spgemm (hash): dense accumulators"));
        NZI_TRY(nz_cuda_memset(ctx, st->dense, 0, (size_t)n * value_bytes));
    }
    *slots = n;
    if (slot_bytes != NULL) *slot_bytes = per_slot;
    return NZ_SUCCESS;
}

/* The dense rows of a panel: at most dense_count blocks (the slots) and at most as many as are
 * resident at once (rows are dealt round robin, so a second wave would start late and finish
 * last). */
template <typename Value, bool Numeric>
nz_status_t hash_launch_dense(hash_state_t *st, cudaStream_t stream, const hash_args<Value> &args,
                                const int32_t *rows, int64_t count, int64_t cols,
                                int64_t dense_count) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t value_stride = (int64_t)(round_up((size_t)cols * sizeof(Value)) / sizeof(Value));
    int64_t grid = count < dense_count ? count : dense_count;
    const int mode = dense_mode<Value>(cs, cols, Numeric);
    const size_t smem = dense_dynamic_bytes(mode, cols);
    void (*kernel)(hash_args<Value>, const int32_t *, int64_t, int64_t, uint32_t *, Value *,
                   int64_t) = hash_dense_kernel<Value, Numeric, false>;
    if constexpr (!Numeric) /* numeric rows with a shared bitmap are ranked instead */
        if (mode == DENSE_SHARED_BITS) kernel = hash_dense_kernel<Value, false, true>;
    void (*ranked)(hash_args<Value>, const int32_t *, int64_t, int64_t) =
        hash_dense_ranked_kernel<Value>;
    const void *fn = mode == DENSE_RANKED ? (const void *)ranked : (const void *)kernel;
    int resident = 0;
    if (smem > 0)
        NZI_CUDA_TRY(ctx, cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)smem));
    NZI_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, fn, DENSE_BLOCK, smem));
    if (resident < 1) resident = 1;
    if (grid > (int64_t)resident * cs->sm_count) grid = (int64_t)resident * cs->sm_count;
    if (mode == DENSE_RANKED) {
        ranked<<<(unsigned)grid, DENSE_BLOCK, smem, stream>>>(args, rows, count, dense_pairs(cols));
    } else if (mode == DENSE_SHARED_BITS) {
        kernel<<<(unsigned)grid, DENSE_BLOCK, smem, stream>>>(args, rows, count, (cols + 31) / 32,
                                                              NULL, NULL, 0);
    } else {
        const int64_t words = (int64_t)(round_up((size_t)dense_words(cols) * WORD_BYTES) / WORD_BYTES);
        kernel<<<(unsigned)grid, DENSE_BLOCK, 0, stream>>>(args, rows, count, words, st->bitmaps,
                                                           (Value *)st->dense, value_stride);
    }
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

template nz_status_t hash_dense_slots<float>(hash_state_t *, int64_t, int64_t, bool, size_t,
                                             int64_t *, size_t *);
template nz_status_t hash_dense_slots<double>(hash_state_t *, int64_t, int64_t, bool, size_t,
                                              int64_t *, size_t *);
template nz_status_t hash_launch_dense<float, false>(hash_state_t *, cudaStream_t,
                                                     const hash_args<float> &, const int32_t *,
                                                     int64_t, int64_t, int64_t);
template nz_status_t hash_launch_dense<float, true>(hash_state_t *, cudaStream_t,
                                                    const hash_args<float> &, const int32_t *,
                                                    int64_t, int64_t, int64_t);
template nz_status_t hash_launch_dense<double, false>(hash_state_t *, cudaStream_t,
                                                      const hash_args<double> &, const int32_t *,
                                                      int64_t, int64_t, int64_t);
template nz_status_t hash_launch_dense<double, true>(hash_state_t *, cudaStream_t,
                                                     const hash_args<double> &, const int32_t *,
                                                     int64_t, int64_t, int64_t);
