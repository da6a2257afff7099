/* spgemm_hash.cu: GPU hash-based Gustavson SpGEMM with row binning, row panels streamed to host. */
#include "cuda_internal.h"
#include "spgemm_internal.h"

#include <stdio.h>
#include <string.h>

/*
 * C = A B on the GPU in two phases, after Nagasaka, Nukada & Matsuoka, "High-performance and
 * memory-saving sparse general matrix-matrix multiplication for NVIDIA Pascal GPU" (ICPP 2017),
 * with the row binning and dense long-row accumulation of the spECK / OpSparse line (Parger et
 * al., PPoPP 2020; Du et al., IEEE Access 2022):
 *   1. products per row (an upper bound on the row's length in C: min(products, cols of B));
 *   2. rows binned by that bound; symbolic phase per bin: a shared-memory hash table per row
 *      (open addressing, linear probing, keys inserted with atomicCAS) counts the distinct
 *      columns; small bins give a row to a group of 4..32 lanes (many rows per block), larger
 *      ones a group of up to 1024 threads; rows whose table would not fit in shared memory (and,
 *      by default, rows of more than 1365 products: symbolic_dense_from) are counted on a dense
 *      bitmap, in shared memory when it fits (see the dense section below);
 *   3. an inclusive scan of the counts gives C's row offsets (exact sizes, no over-allocation);
 *   4. numeric phase with the same binning on the exact row lengths: values accumulate in the
 *      table with shared-memory atomicAdd, the filled slots are compacted to the front of the
 *      table, and the first P slots (P the power of two at or above the block's longest row)
 *      are bitonic-sorted in shared memory (padding keys 0xffffffff as unsigned sort last), so
 *      the first nnz entries are the row in column order; in the three smallest bins each entry
 *      instead finds its place by counting the smaller keys of its row (no barriers; with
 *      NZ_TUNE_SPGEMM_RANK=2 also in bin 3, each lane holding its entries in registers and
 *      reading the row's keys once, see rank_sort_owned); rows
 *      whose sort would cost more than a pass over a dense bitmap, and rows too long for
 *      shared memory, take the dense path: columns in a shared bitmap, each column's rank from a
 *      prefix per pair of words, products added into C's values at their rank (no dense value
 *      array; B wider than ~1.1M columns: global bitmap and accumulator);
 *   small products (<= 4M products) bin once: the symbolic binning, by products with the
 *   numeric rules, also serves a single-panel numeric phase (small_product).
 * Thread mapping: a row belongs to one group; inside it, SWEEP = min(group, 32) lanes read one
 * row of B together (coalesced) while group / SWEEP such sweepers take successive entries of
 * A's row. NZ_TUNE_SPGEMM_SWEEP (sweep_width) narrows SWEEP in the bins of groups up to 32, so
 * that more sweepers share A's row when B's rows are shorter than the group; the width is then
 * a kernel argument (one extra kernel per small bin and phase), the products are the same.
 * Device matrices in give a device C (in core only: C and the temporaries must fit the budget),
 * with no transfers at all; host matrices in give a host C.
 * Out of core: A and B stay resident on the device; C's rows are produced in row panels sized
 * from the memory budget (nzi_spgemm_device_budget) into two device slots. While the GPU
 * computes panel p + 1 on the context's stream, the host drains panel p through two pinned
 * staging buffers (DMA on a second stream into one buffer while the host copies the other into
 * C), so transfer and computation overlap. Large in-core outputs are also split into four
 * panels for the same overlap.
 * Values are summed with atomics in a data-dependent order: not bitwise reproducible run to run
 * (the structure is). Cost: O(products) hash operations, O(P log^2 P) per row for the sort,
 * O(cols / 32) per dense row.
 */

/* Shared-memory bins: bin b holds rows whose table needs at most 32 << b entries. The need of a
 * row is 1.5 x its bound (load factor <= 2/3 keeps linear probing short). */
#define SHARED_BINS 10
#define HUGE_BIN SHARED_BINS
#define NUM_BINS (SHARED_BINS + 1)
#define DENSE_BLOCK 1024 /* one block per dense row: the bitmap scan uses every thread */
#define BIN_BLOCK 256
#define SCAN_BLOCK 512
#define SCAN_ITEMS 8
#define SCAN_TILE (SCAN_BLOCK * SCAN_ITEMS)
#define STAGE_HALF ((size_t)16 << 20) /* pinned staging halves: large DMAs, small footprint */
#define PIPELINE_MIN_BYTES ((size_t)64 << 20) /* in-core outputs above this go in 4 panels */
#define DENSE_FACTOR 4  /* see dense_from_bin */
#define DENSE_MIN_BIN 4
#define RANK_SORT 2     /* see rank_sort_mode: 2 measured 1.6x faster than 1 on random 10^6 x 8 (H100) */
#define SWEEP_DEFAULT 2 /* see sweep_width: 2 lanes per row of B, measured fastest (H100) */
#define NARROW_BINS 4   /* bins 0..3 (groups of 4..32 lanes) have a narrow-sweep variant */

/* Group size (threads per row) and block size of each shared bin: at most 24 KB of tables per
 * block up to bin 6 (several blocks per SM), then one row per block with up to 1024 threads. */
static const int bin_group[SHARED_BINS] = {4, 8, 16, 32, 64, 128, 256, 512, 1024, 1024};
static const int bin_block[SHARED_BINS] = {256, 256, 256, 256, 256, 256, 256, 512, 1024, 1024};

template <typename Value>
struct hash_args {
    const int64_t *a_off;
    const int32_t *a_col;
    const Value *a_val;
    const int64_t *b_off;
    const int32_t *b_col;
    const Value *b_val;
    int64_t *c_off;  /* symbolic: row counts go to c_off[row + 1]; numeric: C's row offsets */
    int64_t c_base;  /* numeric: C offset of the panel's first entry */
    int32_t *c_col;  /* numeric: the panel's slot */
    Value *c_val;
};

static size_t shared_bytes(int bin, bool numeric, size_t value_size) {
    size_t table = (size_t)32 << bin, rows = (size_t)(bin_block[bin] / bin_group[bin]);
    return rows * table * (sizeof(int32_t) + (numeric ? value_size : 0)) + (rows + 1) * sizeof(int);
}

/* ---- device helpers ------------------------------------------------------------------------- */

/* Exclusive prefix sum over the block (every thread calls it; blockDim.x a multiple of 32);
 * *total gets the block's sum. tmp: 32 shared slots. */
static __device__ long long block_exclusive_scan(long long value, long long *tmp, long long *total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    long long x = value;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        long long y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) tmp[warp] = x;
    __syncthreads();
    if (warp == 0) {
        long long t = lane < warps ? tmp[lane] : 0;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            long long y = __shfl_up_sync(0xffffffffu, t, o);
            if (lane >= o) t += y;
        }
        tmp[lane] = t;
    }
    __syncthreads();
    long long before = (warp > 0 ? tmp[warp - 1] : 0) + x - value;
    *total = tmp[warps - 1];
    __syncthreads();
    return before;
}

/* Insert column c (and add v) into a table of Table entries; keys never change once set, so a
 * plain read that sees a key is final and only an empty slot needs the atomicCAS. */
template <int Table, typename Value, bool Numeric>
static __device__ __forceinline__ void hash_insert(int32_t *keys, Value *vals, int32_t c, Value v) {
    unsigned h = ((unsigned)c * 107u) & (unsigned)(Table - 1);
    for (;;) {
        int32_t k = keys[h];
        if (k == -1) k = atomicCAS(&keys[h], -1, c);
        if (k == -1 || k == c) {
            if (Numeric) atomicAdd(&vals[h], v);
            return;
        }
        h = (h + 1) & (unsigned)(Table - 1);
    }
}

/* ---- kernels -------------------------------------------------------------------------------- */


/* The binning rule, shared by row_bin on the device and the host's count of the numeric
 * phase's dense rows: a row of v entries needs a table of 1.5 v slots (load factor <= 2/3);
 * needs above shared_need_limit go to the dense path (too long for shared memory, or in a bin
 * at or above dense_from). */
static constexpr __host__ __device__ __forceinline__ int64_t table_need(int64_t v) {
    return v + (v >> 1);
}
static __host__ __device__ __forceinline__ int64_t shared_need_limit(int max_bin, int dense_from) {
    const int top = max_bin < dense_from - 1 ? max_bin : dense_from - 1;
    return top >= 0 ? ((int64_t)32 << top) : 0;
}

/* Bin of a row of (at most) v entries: -1 (empty row, nothing to do), a shared bin, or HUGE_BIN
 * (too long for shared memory, or in a bin at or above dense_from, where the dense path is
 * cheaper than the sort). The one rule, for the device's binning and the host's counts. */
static __host__ __device__ __forceinline__ int bin_of_length(int64_t v, int max_bin,
                                                             int dense_from) {
    if (v <= 0) return -1;
    const int64_t need = table_need(v);
    if (need > shared_need_limit(max_bin, dense_from)) return HUGE_BIN;
    int b = 0;
    while (need > ((int64_t)32 << b)) b++;
    return b;
}

/* Bin of a row. Symbolic: from the products in c_off[row + 1] capped at B's columns; numeric:
 * from the exact length. */
template <bool Numeric>
static __device__ __forceinline__ int row_bin(const int64_t *c_off, int64_t row, int64_t cols,
                                              int max_bin, int dense_from) {
    const int64_t v = Numeric ? c_off[row + 1] - c_off[row] : c_off[row + 1];
    return bin_of_length(!Numeric && v > cols ? cols : v, max_bin, dense_from);
}

/* Panel of a row: binary search in panel_starts[0..panels]. */
static __device__ __forceinline__ int64_t panel_of(const int64_t *panel_starts, int64_t panels,
                                                   int64_t row) {
    int64_t lo = 0, hi = panels - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (panel_starts[mid] <= row) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* Count (Fill = false) or list (Fill = true) the rows of every (panel, bin) pair. Lanes of a warp
 * with the same pair are aggregated (__match_any_sync), so one atomic serves them all; a listed
 * row lands at cursor[pair] + its rank among them. Rows listed inside a pair are in no
 * particular order. */
template <bool Numeric, bool Fill>
__global__ void __launch_bounds__(BIN_BLOCK)
    bin_kernel(int64_t rows, int64_t cols, const int64_t *__restrict__ c_off, int max_bin,
               int dense_from, const int64_t *__restrict__ panel_starts, int64_t panels,
               unsigned long long *counters, int32_t *__restrict__ lists) {
    const int lane = threadIdx.x & 31;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < rows;
         base += (int64_t)gridDim.x * blockDim.x) {
        int64_t row = base + threadIdx.x;
        long long key = -1;
        if (row < rows) {
            int bin = row_bin<Numeric>(c_off, row, cols, max_bin, dense_from);
            if (bin >= 0)
                key = (long long)(Numeric ? panel_of(panel_starts, panels, row) : 0) * NUM_BINS + bin;
        }
        unsigned same = __match_any_sync(0xffffffffu, key);
        if (key < 0) continue;
        int leader = __ffs(same) - 1;
        unsigned long long first = 0;
        if (lane == leader) first = atomicAdd(&counters[key], (unsigned long long)__popc(same));
        if (Fill) {
            first = __shfl_sync(same, first, leader);
            unsigned rank = __popc(same & ((1u << lane) - 1u));
            lists[first + rank] = (int32_t)row;
        }
    }
}

/* Products per row (thread per row, grid-stride) into c_off[row + 1] (and 0 into c_off[0]),
 * their total into *total, and the symbolic binning's count of each row's bin (as bin_kernel's
 * counting pass, which the symbolic phase then skips). */
__global__ void __launch_bounds__(BIN_BLOCK)
    products_kernel(int64_t rows, int64_t cols, const int64_t *__restrict__ a_off,
                    const int32_t *__restrict__ a_col, const int64_t *__restrict__ b_off,
                    int64_t *__restrict__ c_off, unsigned long long *total, int max_bin,
                    int dense_from, unsigned long long *counters) {
    __shared__ unsigned long long block_total;
    if (threadIdx.x == 0) block_total = 0;
    if (blockIdx.x == 0 && threadIdx.x == 0) c_off[0] = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31;
    unsigned long long mine = 0;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < rows;
         base += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = base + threadIdx.x;
        long long key = -1;
        if (row < rows) {
            int64_t p = 0;
            for (int64_t k = a_off[row]; k < a_off[row + 1]; k++) {
                int32_t j = a_col[k];
                p += b_off[j + 1] - b_off[j];
            }
            c_off[row + 1] = p;
            mine += (unsigned long long)p;
            key = row_bin<false>(c_off, row, cols, max_bin, dense_from);
        }
        const unsigned same = __match_any_sync(0xffffffffu, key);
        const int leader = __ffs(same) - 1;
        if (key >= 0 && lane == leader) atomicAdd(&counters[key], (unsigned long long)__popc(same));
    }
    if (mine != 0) atomicAdd(&block_total, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_total != 0) atomicAdd(total, block_total);
}

/* The longest row a shared bin of `table` slots holds: the largest v with table_need(v) <= table
 * (21, 43, 85, 171 for tables of 32 .. 256). */
static constexpr __host__ __device__ int bin_row_max(int table) {
    int v = 0;
    while (table_need(v + 1) <= table) v++;
    return v;
}

/* Sort by counting with the entries in registers (NZ_TUNE_SPGEMM_RANK=2), K entries per lane:
 * lane `lane` owns entries lane, lane + Group, ... (at most K of them) of the row's n compacted
 * keys and values, reads the row's keys once, 4 at a time (keys4: the keys padded with INT32_MAX
 * to a multiple of 4, which count as smaller than nothing), comparing each with all its entries,
 * and writes entry e to out[rank e]. Keys of a row are distinct, so the ranks are a permutation
 * of 0 .. n - 1. The pass starts at quad `start` and wraps once (two straight loops). */
template <int K, int Group, typename Value>
static __device__ __forceinline__ void rank_sort_owned(const int32_t *my_keys, const Value *my_vals,
                                                       int n, int start, int lane, int64_t nnz,
                                                       int32_t *out_col, Value *out_val) {
    const int4 *keys4 = reinterpret_cast<const int4 *>(my_keys);
    const int n4 = (n + 3) >> 2;
    int32_t mine[K];
    int rank[K];
#pragma unroll
    for (int e = 0; e < K; e++) {
        const int i = lane + e * Group;
        mine[e] = i < n ? my_keys[i] : -1;
        rank[e] = 0;
    }
    for (int q = start; q < n4; q++) {
        const int4 k = keys4[q];
#pragma unroll
        for (int e = 0; e < K; e++)
            rank[e] += (k.x < mine[e]) + (k.y < mine[e]) + (k.z < mine[e]) + (k.w < mine[e]);
    }
    for (int q = 0; q < start; q++) {
        const int4 k = keys4[q];
#pragma unroll
        for (int e = 0; e < K; e++)
            rank[e] += (k.x < mine[e]) + (k.y < mine[e]) + (k.z < mine[e]) + (k.w < mine[e]);
    }
#pragma unroll
    for (int e = 0; e < K; e++) {
        const int i = lane + e * Group;
        if (i < n && rank[e] < nnz) {
            out_col[rank[e]] = mine[e];
            out_val[rank[e]] = my_vals[i];
        }
    }
}

/* rank_sort_owned with K = k, for k in [K, Max] (k uniform over the warp: no divergence). */
template <int K, int Max, int Group, typename Value>
static __device__ __forceinline__ void rank_sort_dispatch(int k, const int32_t *my_keys,
                                                          const Value *my_vals, int n, int start,
                                                          int lane, int64_t nnz, int32_t *out_col,
                                                          Value *out_val) {
    if (k == K) {
        rank_sort_owned<K, Group, Value>(my_keys, my_vals, n, start, lane, nnz, out_col, out_val);
        return;
    }
    if constexpr (K < Max)
        rank_sort_dispatch<K + 1, Max, Group, Value>(k, my_keys, my_vals, n, start, lane, nnz,
                                                     out_col, out_val);
}

/* One table per row in shared memory (see the file comment). Block: Block / Group rows of the
 * bin's list; symbolic writes each row's count to c_off[row + 1], numeric writes the sorted row
 * into the panel's slot at c_off[row] - c_base. Lane `lane` of a group is sweep lane
 * lane % SWEEP of sweeper lane / SWEEP, SWEEP = min(Group, 32); Narrow (groups up to 32 only):
 * SWEEP = 2^sweep_log2 < Group instead, read at run time (sweep_log2 is ignored otherwise).
 * Either way every product of the row is inserted once, by one lane; there are no shuffles and
 * no barriers inside the sweep, so any power-of-two width dividing Group is safe.
 * Rank (numeric, groups up to 32): 0 bitonic sort, 1 and 2 sort by counting (rank_sort_mode);
 * 2 asks for 6 blocks of 256 per SM, which caps it at 40 registers (44-46 unbounded, no spills
 * either way; 8 blocks, 32 registers, would spill). */
template <int Group, int Table, int Block, typename Value, bool Numeric, int Rank, bool Narrow>
__global__ void __launch_bounds__(Block, Rank == 2 ? 6 : 0)
    hash_shared_kernel(hash_args<Value> args, const int32_t *__restrict__ rows, int64_t count,
                       int sweep_log2) {
    static_assert(!Narrow || Group <= 32, "narrow sweeps are for groups of at most 32 lanes");
    constexpr int R = Block / Group;
    constexpr int SWEEP = Group < 32 ? Group : 32;
    constexpr int SWEEPERS = Group / SWEEP;
    extern __shared__ __align__(16) unsigned char shared_raw[];
    Value *vals = (Value *)shared_raw;
    int32_t *keys = (int32_t *)(shared_raw + (Numeric ? (size_t)R * Table * sizeof(Value) : 0));
    int *counts = (int *)(keys + R * Table);

    const int g = threadIdx.x / Group, lane = threadIdx.x % Group;
    const int64_t index = (int64_t)blockIdx.x * R + g;
    const int32_t row = index < count ? rows[index] : -1;
    int32_t *my_keys = keys + g * Table;
    Value *my_vals = vals + g * Table;

    for (int s = threadIdx.x; s < R * Table; s += Block) {
        keys[s] = -1;
        if (Numeric) vals[s] = Value(0);
    }
    if (threadIdx.x <= R) counts[threadIdx.x] = 0;
    __syncthreads();

    if (row >= 0) {
        const int sweep = Narrow ? 1 << sweep_log2 : SWEEP;
        const int sweepers = Narrow ? Group >> sweep_log2 : SWEEPERS;
        const int sweeper = Narrow ? lane >> sweep_log2 : lane / SWEEP;
        const int sweep_lane = Narrow ? lane & (sweep - 1) : lane % SWEEP;
        const int64_t a_end = args.a_off[row + 1];
        for (int64_t k = args.a_off[row] + sweeper; k < a_end; k += sweepers) {
            const int32_t j = args.a_col[k];
            const Value a = Numeric ? args.a_val[k] : Value(0);
            const int64_t b_end = args.b_off[j + 1];
            for (int64_t l = args.b_off[j] + sweep_lane; l < b_end; l += sweep)
                hash_insert<Table, Value, Numeric>(my_keys, my_vals, args.b_col[l],
                                                   Numeric ? a * args.b_val[l] : Value(0));
        }
    }
    __syncthreads();

    if (!Numeric) {
        int local = 0;
        for (int s = lane; s < Table; s += Group) local += my_keys[s] != -1;
        if (local != 0) atomicAdd(&counts[g], local);
        __syncthreads();
        if (row >= 0 && lane == 0) args.c_off[row + 1] = counts[g];
    } else {
        /* compaction: every lane takes its Table / Group slots into registers, then appends the
         * filled ones at the front of its row's table (in arbitrary order) */
        constexpr int PER = Table / Group;
        int32_t k_reg[PER];
        Value v_reg[PER];
#pragma unroll
        for (int s = 0; s < PER; s++) {
            k_reg[s] = my_keys[lane + s * Group];
            v_reg[s] = my_vals[lane + s * Group];
        }
        __syncthreads();
#pragma unroll
        for (int s = 0; s < PER; s++)
            if (k_reg[s] != -1) {
                const int pos = atomicAdd(&counts[g], 1);
                my_keys[pos] = k_reg[s];
                my_vals[pos] = v_reg[s];
            }
        __syncthreads();
        const int n = counts[g];
        bool counted = false; /* Rank == 2: the row was sorted with its entries in registers */
        if constexpr (Rank == 2) {
            /* groups (of at most 32 lanes) lie inside a warp: pad the keys with INT32_MAX up to
             * a multiple of 4 (n <= OWN * Group <= Table, a multiple of 4: the padding stays in
             * the table; the slots past n are dead after the compaction), then sort with K =
             * the warp's largest ceil(n / Group). A row longer than the bin guarantees (never,
             * but K must bound the registers) takes the loop below. */
            static_assert(Group <= 32 && Table % 4 == 0, "rank sort: groups inside a warp");
            constexpr int OWN = (bin_row_max(Table) + Group - 1) / Group;
            static_assert(OWN * Group <= Table, "rank sort: padding inside the table");
            const bool fits = row >= 0 && n <= OWN * Group;
            if (fits && lane < ((4 - (n & 3)) & 3)) my_keys[n + lane] = INT32_MAX;
            int k = fits ? (n + Group - 1) / Group : 0;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) k = max(k, __shfl_xor_sync(0xffffffffu, k, o));
            __syncwarp();
            if (fits && n > 0) {
                const int64_t begin = args.c_off[row], nnz = args.c_off[row + 1] - begin;
                rank_sort_dispatch<1, OWN, Group, Value>(
                    k, my_keys, my_vals, n, g % ((n + 3) >> 2), lane, nnz,
                    args.c_col + (begin - args.c_base), args.c_val + (begin - args.c_base));
            }
            counted = fits;
        }
        if (Rank != 0) {
            /* sort by counting (small rows): an entry's place is the number of smaller keys in
             * its row; groups of a warp start their sweep at different slots (no bank
             * conflicts: tables are multiples of 32 slots apart) */
            if (row >= 0 && !counted) {
                const int64_t begin = args.c_off[row], nnz = args.c_off[row + 1] - begin;
                int32_t *out_col = args.c_col + (begin - args.c_base);
                Value *out_val = args.c_val + (begin - args.c_base);
                for (int i = lane; i < n; i += Group) {
                    const int32_t key = my_keys[i];
                    int rank = 0, jj = g % n;
                    for (int j = 0; j < n; j++) {
                        rank += my_keys[jj] < key;
                        if (++jj == n) jj = 0;
                    }
                    if (rank < nnz) {
                        out_col[rank] = key;
                        out_val[rank] = my_vals[i];
                    }
                }
            }
            return;
        }
        if (lane == 0 && n > 0) atomicMax(&counts[R], n);
        __syncthreads();
        /* bitonic sort of the first P slots of every table, P the power of two at or above the
         * block's longest row (empty keys, 0xffffffff as unsigned, pad and sort last): about
         * half the work of sorting whole tables, which are at least 1.5 x the row */
        int P = 2;
        while (P < counts[R]) P <<= 1;
        for (int s = n + lane; s < P; s += Group) my_keys[s] = -1;
        __syncthreads();
        for (int size = 2; size <= P; size <<= 1) {
            for (int stride = size >> 1; stride > 0; stride >>= 1) {
                for (int p = threadIdx.x; p < R * (P / 2); p += Block) {
                    const int t = p / (P / 2), q = p % (P / 2);
                    const int i = ((q & ~(stride - 1)) << 1) | (q & (stride - 1));
                    const int x = t * Table + i, y = x + stride;
                    const bool up = (i & size) == 0;
                    const unsigned kx = (unsigned)keys[x], ky = (unsigned)keys[y];
                    if ((kx > ky) == up) {
                        keys[x] = (int32_t)ky;
                        keys[y] = (int32_t)kx;
                        Value v = vals[x];
                        vals[x] = vals[y];
                        vals[y] = v;
                    }
                }
                __syncthreads();
            }
        }
        if (row >= 0) {
            const int64_t begin = args.c_off[row], nnz = args.c_off[row + 1] - begin;
            int32_t *out_col = args.c_col + (begin - args.c_base);
            Value *out_val = args.c_val + (begin - args.c_base);
            for (int64_t s = lane; s < nnz && s < n; s += Group) {
                out_col[s] = my_keys[s];
                out_val[s] = my_vals[s];
            }
        }
    }
}

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

template <typename Value>
struct dense_shared {
    long long tmp[32];
    long long first[DENSE_BLOCK]; /* the batch's product offsets (exclusive scan) */
    long long b_start[DENSE_BLOCK];
    Value a_value[DENSE_BLOCK];
    long long warp_base[33];
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
        const long long before = block_exclusive_scan(len, sh.tmp, &total);
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
        const long long x = sh.warp_base[lane];
        long long t = x;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const long long y = __shfl_up_sync(0xffffffffu, t, o);
            if (lane >= o) t += y;
        }
        sh.warp_base[lane] = t - x;
        if (lane == 31) sh.warp_base[32] = t;
    }
    __syncthreads();
}

/* Inclusive sum over the warp (every lane calls it). */
static __device__ __forceinline__ int warp_inclusive_sum(int x, int lane) {
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    return x;
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
                const int incl = warp_inclusive_sum(cnt, lane);
                int64_t q = pos + incl - cnt;
                while (m != 0) {
                    args.c_col[q++] = (int32_t)(w * 32 + (__ffs(m) - 1));
                    m &= m - 1;
                }
                pos += __shfl_sync(0xffffffffu, incl, 31);
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
            const int incl = warp_inclusive_sum(cnt, lane);
            int q = pos + incl - cnt;
            if (u < u_end) prefix[u] = q;
            for (uint32_t x = m.x; x != 0; x &= x - 1) out_col[q++] = (int32_t)(u * 64 + (__ffs(x) - 1));
            for (uint32_t x = m.y; x != 0; x &= x - 1) out_col[q++] = (int32_t)(u * 64 + 32 + (__ffs(x) - 1));
            pos += __shfl_sync(0xffffffffu, incl, 31);
        }
        const int64_t nnz = sh.warp_base[32];
        for (int64_t i = tid; i < nnz; i += DENSE_BLOCK) out_val[i] = Value(0);
        __syncthreads(); /* prefixes and zeroed values visible to the block */
        dense_sweep<Value, SWEEP_RANKED>(args, row, bits, NULL, prefix, out_val, sh);
        for (int64_t w = tid; w < 2 * pairs; w += DENSE_BLOCK) bits[w] = 0;
        __syncthreads();
    }
}

/* How the dense rows of a phase run: DENSE_RANKED (numeric: bitmap and prefixes in shared
 * memory), DENSE_SHARED_BITS (symbolic: bitmap in shared memory), else DENSE_GLOBAL (bitmap in
 * global slots; numeric with a global accumulator). */
#define DENSE_GLOBAL 0
#define DENSE_SHARED_BITS 1
#define DENSE_RANKED 2

static int64_t dense_pairs(int64_t cols) { return ((cols + 31) / 32 + 1) / 2; }

static size_t dense_dynamic_bytes(int mode, int64_t cols) {
    if (mode == DENSE_RANKED) return (size_t)dense_pairs(cols) * 12; /* 2 words + a prefix */
    if (mode == DENSE_SHARED_BITS) return (size_t)((cols + 31) / 32) * 4;
    return 0;
}

template <typename Value>
static int dense_mode(const nzi_cuda_state_t *cs, int64_t cols, bool numeric) {
    const int mode = numeric ? DENSE_RANKED : DENSE_SHARED_BITS;
    const size_t bytes = dense_dynamic_bytes(mode, cols) + dense_static_bytes<Value>();
    return bytes <= cs->shared_per_block_optin && bytes <= cs->shared_per_sm ? mode : DENSE_GLOBAL;
}

/* Inclusive scan of x[0..len) in place, tile by tile: tile_sums[t] gets tile t's total. */
__global__ void __launch_bounds__(SCAN_BLOCK)
    scan_tiles_kernel(int64_t *x, int64_t len, int64_t *tile_sums) {
    __shared__ long long tile[SCAN_TILE];
    __shared__ long long tmp[32];
    const int64_t base = (int64_t)blockIdx.x * SCAN_TILE;
    for (int i = threadIdx.x; i < SCAN_TILE; i += SCAN_BLOCK)
        tile[i] = base + i < len ? x[base + i] : 0;
    __syncthreads();
    long long sum = 0;
    for (int i = 0; i < SCAN_ITEMS; i++) sum += tile[threadIdx.x * SCAN_ITEMS + i];
    long long total = 0;
    long long run = block_exclusive_scan(sum, tmp, &total);
    for (int i = 0; i < SCAN_ITEMS; i++) {
        run += tile[threadIdx.x * SCAN_ITEMS + i];
        tile[threadIdx.x * SCAN_ITEMS + i] = run;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < SCAN_TILE; i += SCAN_BLOCK)
        if (base + i < len) x[base + i] = tile[i];
    if (threadIdx.x == 0 && tile_sums != NULL) tile_sums[blockIdx.x] = total;
}

/* Add the inclusive scan of the tile totals of tiles 0..t-1 to tile t (t >= 1). */
__global__ void __launch_bounds__(SCAN_BLOCK)
    scan_add_kernel(int64_t *x, int64_t len, const int64_t *scanned_sums) {
    const int64_t tile = (int64_t)blockIdx.x + 1;
    const int64_t add = scanned_sums[tile - 1];
    for (int64_t i = tile * SCAN_TILE + threadIdx.x; i < len && i < (tile + 1) * SCAN_TILE;
         i += SCAN_BLOCK)
        x[i] += add;
}

/* ---- host side ------------------------------------------------------------------------------ */

static int64_t scan_work_entries(int64_t len) {
    int64_t total = 0;
    while (len > SCAN_TILE) {
        len = (len + SCAN_TILE - 1) / SCAN_TILE;
        total += len;
    }
    return total;
}

/* Recursive tile scan; work holds scan_work_entries(len) entries. */
static nz_status_t device_inclusive_scan(nz_context_t *ctx, cudaStream_t stream, int64_t *x,
                                         int64_t len, int64_t *work) {
    if (len <= 0) return NZ_SUCCESS;
    const int64_t tiles = (len + SCAN_TILE - 1) / SCAN_TILE;
    scan_tiles_kernel<<<(unsigned)tiles, SCAN_BLOCK, 0, stream>>>(x, len, tiles > 1 ? work : NULL);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    if (tiles == 1) return NZ_SUCCESS;
    NZI_TRY(device_inclusive_scan(ctx, stream, work, tiles, work + tiles));
    scan_add_kernel<<<(unsigned)(tiles - 1), SCAN_BLOCK, 0, stream>>>(x, len, work);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

template <int Group, int Table, int Block, typename Value, bool Numeric, int Rank = 0,
          bool Narrow = false>
static nz_status_t launch_shared(nz_context_t *ctx, cudaStream_t stream, int bin,
                                 const hash_args<Value> &args, const int32_t *rows, int64_t count,
                                 int sweep_log2 = 0) {
    constexpr int R = Block / Group;
    const size_t smem = shared_bytes(bin, Numeric, sizeof(Value));
    void (*kernel)(hash_args<Value>, const int32_t *, int64_t, int) =
        hash_shared_kernel<Group, Table, Block, Value, Numeric, Rank, Narrow>;
    if (smem > ((size_t)48 << 10))
        NZI_CUDA_TRY(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)smem));
    const int64_t blocks = (count + R - 1) / R;
    kernel<<<(unsigned)blocks, Block, smem, stream>>>(args, rows, count, sweep_log2);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* The kernels of the small bins 0 .. NARROW_BINS - 1 (groups of 4 .. 32 lanes): numeric rows
 * sorted by counting in bins 0 .. 2 (rank 1) or 0 .. 3 (rank 2), else by the bitonic sort;
 * Narrow: sweeps of 2^sweep_log2 lanes, narrower than the group (see launch_bin). */
template <typename Value, bool Numeric, bool Narrow>
static nz_status_t launch_small(nz_context_t *ctx, cudaStream_t stream, int bin, int rank,
                                int sweep_log2, const hash_args<Value> &args, const int32_t *rows,
                                int64_t count) {
    if (Numeric && rank == 1) {
        switch (bin) {
        case 0: return launch_shared<4, 32, 256, Value, true, 1, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
        case 1: return launch_shared<8, 64, 256, Value, true, 1, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
        case 2: return launch_shared<16, 128, 256, Value, true, 1, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
        default: break;
        }
    }
    if (Numeric && rank == 2) {
        switch (bin) {
        case 0: return launch_shared<4, 32, 256, Value, true, 2, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
        case 1: return launch_shared<8, 64, 256, Value, true, 2, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
        case 2: return launch_shared<16, 128, 256, Value, true, 2, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
        case 3: return launch_shared<32, 256, 256, Value, true, 2, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
        default: break;
        }
    }
    switch (bin) {
    case 0: return launch_shared<4, 32, 256, Value, Numeric, 0, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
    case 1: return launch_shared<8, 64, 256, Value, Numeric, 0, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
    case 2: return launch_shared<16, 128, 256, Value, Numeric, 0, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
    case 3: return launch_shared<32, 256, 256, Value, Numeric, 0, Narrow>(ctx, stream, bin, args, rows, count, sweep_log2);
    default: return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_spgemm (hash): small bin %d", bin);
    }
}

/* sweep: the NZ_TUNE_SPGEMM_SWEEP width (0: today's mapping everywhere). A bin of NARROW_BINS
 * takes the narrow kernel only where min(sweep, group) is below the group; otherwise its
 * mapping, and so its kernel, is today's. */
template <typename Value, bool Numeric>
static nz_status_t launch_bin(nz_context_t *ctx, cudaStream_t stream, int bin, int rank,
                              int sweep, const hash_args<Value> &args, const int32_t *rows,
                              int64_t count) {
    if (bin < NARROW_BINS) {
        if (sweep != 0 && sweep < bin_group[bin]) {
            int sweep_log2 = 0;
            while ((2 << sweep_log2) <= sweep) sweep_log2++;
            return launch_small<Value, Numeric, true>(ctx, stream, bin, rank, sweep_log2, args,
                                                      rows, count);
        }
        return launch_small<Value, Numeric, false>(ctx, stream, bin, rank, 0, args, rows, count);
    }
    switch (bin) {
    case 4: return launch_shared<64, 512, 256, Value, Numeric>(ctx, stream, bin, args, rows, count);
    case 5: return launch_shared<128, 1024, 256, Value, Numeric>(ctx, stream, bin, args, rows, count);
    case 6: return launch_shared<256, 2048, 256, Value, Numeric>(ctx, stream, bin, args, rows, count);
    case 7: return launch_shared<512, 4096, 512, Value, Numeric>(ctx, stream, bin, args, rows, count);
    case 8: return launch_shared<1024, 8192, 1024, Value, Numeric>(ctx, stream, bin, args, rows, count);
    case 9: return launch_shared<1024, 16384, 1024, Value, Numeric>(ctx, stream, bin, args, rows, count);
    default: return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_spgemm (hash): bin %d", bin);
    }
}

/* The largest shared bin whose table fits the device's opt-in shared memory per block. */
static int max_shared_bin(const nzi_cuda_state_t *cs, bool numeric, size_t value_size) {
    int best = -1;
    for (int b = 0; b < SHARED_BINS; b++)
        if (shared_bytes(b, numeric, value_size) <= cs->shared_per_block_optin &&
            shared_bytes(b, numeric, value_size) <= cs->shared_per_sm)
            best = b;
    return best;
}

extern "C" nz_status_t nzi_spgemm_device_budget(nz_context_t *ctx, const nz_spgemm_options_t *opt,
                                                size_t *budget) {
    size_t free_bytes = 0, total_bytes = 0;
    NZI_TRY(nzi_cuda_enter(ctx));
    NZI_CUDA_TRY(ctx, cudaMemGetInfo(&free_bytes, &total_bytes));
    size_t usable = free_bytes - free_bytes / 16;
    *budget = opt->gpu_memory_limit != 0 && opt->gpu_memory_limit < usable ? opt->gpu_memory_limit
                                                                           : usable;
    return NZ_SUCCESS;
}

/* The first shared bin whose numeric rows go to the dense path instead: sorting a table of
 * P = 32 << b keys costs about P log2(P)^2 / 2 compare-exchanges with a barrier per step, the
 * dense path passes over cols / 32 bitmap words (plus a second sweep of the products and global
 * atomics into C's row, which the factor DENSE_FACTOR weighs; 4 measured best or level on R-MAT
 * 16-20 with the ranked dense path, docs/SPGEMM.md). Never below bin DENSE_MIN_BIN: short rows
 * waste a 1024-thread block. NZ_TUNE_SPGEMM_DENSE=0|1|2|4|8|16|32|64 sets the factor (0: only
 * rows too long for shared memory go dense). */
static int dense_from_bin(int64_t cols, int max_bin) {
    static const int factors[] = {0, 1, 2, 4, 8, 16, 32, 64};
    const int factor = nzi_cuda_tune("NZ_TUNE_SPGEMM_DENSE", factors, 8, DENSE_FACTOR);
    if (factor == 0) return SHARED_BINS;
    const double words = (double)((cols + 31) / 32);
    for (int b = DENSE_MIN_BIN; b <= max_bin; b++) {
        const double p = (double)(32 << b), lg = 5.0 + b;
        if (p * lg * lg / 2.0 > factor * words) return b;
    }
    return SHARED_BINS;
}

/* Sort of the small numeric bins, NZ_TUNE_SPGEMM_RANK=0|1|2 (default RANK_SORT): 0 the block's
 * bitonic sort; 1 by counting in bins 0 .. 2, every entry rescanning its row's keys; 2 by
 * counting in bins 0 .. 3 with each lane's entries in registers (rank_sort_owned), one pass over
 * the keys per lane. */
static int rank_sort_mode(void) {
    static const int choices[] = {0, 1, 2};
    return nzi_cuda_tune("NZ_TUNE_SPGEMM_RANK", choices, 3, RANK_SORT);
}

/* Sweep width of the small bins, NZ_TUNE_SPGEMM_SWEEP=0|1|2|4|8|16|32 (default SWEEP_DEFAULT):
 * 0 keeps SWEEP = min(group, 32) everywhere; w >= 2 gives the bins of groups up to 32 a sweep
 * of min(w, group) lanes and group / min(w, group) sweepers; 1 picks w as the power of two at
 * or above B's mean row length nnz(B) / rows(B) rounded to an integer (a mean of 8.001 is 8),
 * within [2, 32]. Why: rows of B of about 8 entries leave half of a 16-lane sweep idle in both
 * phases (uniform random A*A, mean 8, whose C rows fall mostly in bins 1 .. 3). */
static int sweep_width(const nz_matrix_t *B) {
    static const int choices[] = {0, 1, 2, 4, 8, 16, 32};
    int w = nzi_cuda_tune("NZ_TUNE_SPGEMM_SWEEP", choices, 7, SWEEP_DEFAULT);
    if (w == 1) {
        const int64_t mean = B->rows > 0 ? (B->nnz + B->rows / 2) / B->rows : 0;
        w = 2;
        while (w < 32 && w < mean) w <<= 1;
    }
    return w;
}

/* Everything one call holds, released in one place. */
typedef struct hash_state {
    nz_context_t *ctx;
    nz_matrix_t *dA, *dB;              /* device copies of host A, B (dB == dA when B is A) */
    int64_t *a_wide, *b_wide;          /* device A, B with int32 row offsets: widened copies */
    int64_t *c_off;                    /* rows + 1 */
    int32_t *lists;                    /* rows: the binned row lists */
    int64_t *scan_work;
    unsigned long long *counters;      /* counts, then cursors, of the (panel, bin) pairs; + total */
    size_t counters_bytes;
    int64_t pairs;                     /* (panel, bin) pairs of the current binning */
    int64_t *panel_starts;             /* device copy of h_panel_starts */
    uint32_t *bitmaps;                 /* dense slots */
    void *dense;
    void *slot_col[2], *slot_val[2];
    int64_t *h_counts, *h_panel_starts;
    unsigned char *staging;            /* 2 x STAGE_HALF, pinned (or NULL: pageable copies) */
    cudaStream_t copy_stream;          /* the drain's stream (the context's for one panel) */
    bool own_copy_stream;
    int rank;                          /* rank_sort_mode: small numeric rows sorted by counting */
    bool side_by_side;                 /* run_bins may overlap the bins (small products) */
    int sweep;                         /* sweep_width: 0, or 2 .. 32 lanes in bins < NARROW_BINS */
    cudaEvent_t computed[2], numeric_start[2], numeric_stop[2], staged[2], sym_start, sym_stop;
    /* NZ_SPGEMM_PROFILE=1: every bin's launch timed alone (synchronising after each, so the
     * drain no longer overlaps), summed per phase and bin, printed to stderr at the end */
    int profile;
    cudaEvent_t prof_start, prof_stop;
    /* NZ_SPGEMM_PROFILE=2: host wall-clock marks through the call instead (no extra
     * synchronisation), printed to stderr at the end */
    int timeline, marks;
    const char *mark_name[16];
    double mark_time[16];
    double prof_ms[2][NUM_BINS];
    int64_t prof_rows[2][NUM_BINS];
} hash_state_t;

static void mark(hash_state_t *st, const char *name) {
    if (!st->timeline || st->marks == 16) return;
    st->mark_name[st->marks] = name;
    st->mark_time[st->marks++] = nzi_wtime();
}

static void print_timeline(const hash_state_t *st) {
    if (!st->timeline || st->marks == 0) return;
    fprintf(stderr, "nz_spgemm timeline (hash), us since the previous mark:");
    for (int i = 1; i < st->marks; i++)
        fprintf(stderr, " %s %.1f", st->mark_name[i], 1e6 * (st->mark_time[i] - st->mark_time[i - 1]));
    fprintf(stderr, " | total %.1f\n", 1e6 * (st->mark_time[st->marks - 1] - st->mark_time[0]));
}

static void free_device(nz_context_t *ctx, void **p) {
    nz_cuda_free(ctx, *p, (size_t)-1);
    *p = NULL;
}

static void hash_state_release(hash_state_t *st) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    /* copies may still be in flight after an error */
    if (cudaStreamSynchronize(cs->stream) != cudaSuccess) (void)cudaGetLastError();
    if (st->own_copy_stream && cudaStreamSynchronize(st->copy_stream) != cudaSuccess)
        (void)cudaGetLastError();
    if (st->dB != st->dA) nzi_matrix_free(st->dB);
    nzi_matrix_free(st->dA);
    free_device(ctx, (void **)&st->a_wide);
    free_device(ctx, (void **)&st->b_wide);
    free_device(ctx, (void **)&st->c_off);
    free_device(ctx, (void **)&st->lists);
    free_device(ctx, (void **)&st->scan_work);
    free_device(ctx, (void **)&st->counters);
    free_device(ctx, (void **)&st->panel_starts);
    free_device(ctx, (void **)&st->bitmaps);
    free_device(ctx, &st->dense);
    for (int s = 0; s < 2; s++) {
        free_device(ctx, &st->slot_col[s]);
        free_device(ctx, &st->slot_val[s]);
    }
    nzi_free(ctx, st->h_counts);
    nzi_free(ctx, st->h_panel_starts);
    if (st->staging != NULL) {
        cudaFreeHost(st->staging);
        nzi_account_free(ctx, 2 * STAGE_HALF, false);
    }
    cudaEvent_t *events[] = {&st->computed[0], &st->computed[1], &st->numeric_start[0],
                             &st->numeric_start[1], &st->numeric_stop[0], &st->numeric_stop[1],
                             &st->staged[0], &st->staged[1], &st->sym_start, &st->sym_stop,
                             &st->prof_start, &st->prof_stop};
    for (size_t e = 0; e < sizeof events / sizeof events[0]; e++)
        if (*events[e] != NULL) cudaEventDestroy(*events[e]);
    if (st->own_copy_stream) cudaStreamDestroy(st->copy_stream);
    (void)cudaGetLastError();
}

/* Device copy of a host CSR matrix with 64-bit row offsets (the kernels index with int64). */
static nz_status_t upload(nz_context_t *ctx, nz_matrix_t **dM, const nz_matrix_t *M) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *D = NULL;
    NZI_CHECK(nzi_matrix_new(ctx, &D, NZ_FORMAT_CSR, M->value_type, M->rows, M->cols, M->nnz));
    D->location = NZ_DEVICE;
    NZI_CHECK(nz_cuda_matrix_upload(ctx, D, M, 64));
    *dM = D;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(D);
    return status;
}

/* Copy count elements of `size` bytes from a device slot to host memory through the two pinned
 * halves: the DMA of one half (copy stream) overlaps the host's copy out of the other. */
static nz_status_t drain_array(hash_state_t *st, void *host, const void *device, int64_t count,
                               size_t size) {
    nz_context_t *ctx = st->ctx;
    const size_t bytes = (size_t)count * size;
    if (bytes == 0) return NZ_SUCCESS;
    if (st->staging == NULL) {
        NZI_CUDA_TRY(ctx, cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                                          st->copy_stream));
        NZI_CUDA_TRY(ctx, cudaStreamSynchronize(st->copy_stream));
        return NZ_SUCCESS;
    }
    size_t previous_offset = 0, previous_len = 0;
    int half = 0;
    for (size_t offset = 0; offset < bytes; offset += STAGE_HALF) {
        const size_t len = bytes - offset < STAGE_HALF ? bytes - offset : STAGE_HALF;
        NZI_CUDA_TRY(ctx, cudaMemcpyAsync(st->staging + (size_t)half * STAGE_HALF,
                                          (const unsigned char *)device + offset, len,
                                          cudaMemcpyDeviceToHost, st->copy_stream));
        NZI_CUDA_TRY(ctx, cudaEventRecord(st->staged[half], st->copy_stream));
        if (previous_len != 0) {
            NZI_CUDA_TRY(ctx, cudaEventSynchronize(st->staged[half ^ 1]));
            nzi_parallel_memcpy(ctx, (unsigned char *)host + previous_offset,
                                st->staging + (size_t)(half ^ 1) * STAGE_HALF, previous_len);
        }
        previous_offset = offset;
        previous_len = len;
        half ^= 1;
    }
    NZI_CUDA_TRY(ctx, cudaEventSynchronize(st->staged[half ^ 1]));
    nzi_parallel_memcpy(ctx, (unsigned char *)host + previous_offset,
                        st->staging + (size_t)(half ^ 1) * STAGE_HALF, previous_len);
    return NZ_SUCCESS;
}

static size_t round_up(size_t x) { return (x + 255) & ~(size_t)255; }

/* Dense slots for the HUGE_BIN rows: as many as help (one per SM: a 1024-thread dense block
 * with 40-60 registers is alone on its SM; never more than the rows), within `avail` bytes;
 * zeroed once. A slot holds the bitmap when it is in global memory, and for a numeric
 * DENSE_GLOBAL the accumulators (*slot_bytes: its bytes; 0 when both are in shared memory). */
template <typename Value>
static nz_status_t dense_slots(hash_state_t *st, int64_t huge_rows, int64_t cols, bool numeric,
                               size_t avail, int64_t *slots, size_t *slot_bytes) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const bool global_bits = dense_mode<Value>(cs, cols, numeric) == DENSE_GLOBAL;
    const size_t bitmap_bytes = global_bits ? round_up((size_t)((cols + 31) / 32) * 4) : 0;
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

/* Device counters of a binning with `pairs` (panel, bin) pairs: counts (then the fill's cursors)
 * in [0, pairs), their exclusive scan with the total in [pairs + 1, 2 pairs + 2), and in the
 * symbolic phase the product total in [2 pairs + 2]. */
static size_t counter_entries(int64_t pairs) { return (size_t)(2 * pairs + 3); }

/* One block: the exclusive scan of the counts into the cursors (in place) and into the copy the
 * host reads, with the total after it. */
__global__ void __launch_bounds__(SCAN_BLOCK) bin_starts_kernel(unsigned long long *counters,
                                                                int64_t pairs) {
    __shared__ long long tmp[32];
    unsigned long long *copy = counters + pairs + 1;
    long long carry = 0, total = 0;
    for (int64_t base = 0; base < pairs; base += SCAN_BLOCK) {
        const int64_t q = base + threadIdx.x;
        const long long v = q < pairs ? (long long)counters[q] : 0;
        const long long before = block_exclusive_scan(v, tmp, &total);
        if (q < pairs) counters[q] = copy[q] = (unsigned long long)(carry + before);
        carry += total;
    }
    if (threadIdx.x == 0) copy[pairs] = (unsigned long long)carry;
}

/* Count rows per (panel, bin) pair, scan the counts on the device, fill the lists (laid out pair
 * after pair), then read the starts back: one synchronisation. On the host h_counts[0, pairs)
 * get the counts, h_counts[pairs, 2 pairs] the starts and the total; with `products`, also the
 * product total that products_kernel left in the last counter. */
template <bool Numeric>
static nz_status_t bin_rows(hash_state_t *st, int64_t rows, int64_t cols, int max_bin,
                            int dense_from, int64_t panels, unsigned long long *products) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t pairs = panels * NUM_BINS;
    st->pairs = pairs;
    const int64_t blocks = nzi_cuda_grid_blocks(cs, BIN_BLOCK, 4, (rows + BIN_BLOCK - 1) / BIN_BLOCK);
    if (products == NULL) { /* else products_kernel counted the rows (counters zeroed before) */
        NZI_TRY(nz_cuda_memset(ctx, st->counters, 0, (size_t)pairs * sizeof(unsigned long long)));
        bin_kernel<Numeric, false><<<(unsigned)blocks, BIN_BLOCK, 0, cs->stream>>>(
            rows, cols, st->c_off, max_bin, dense_from, st->panel_starts, panels, st->counters,
            NULL);
        NZI_CUDA_LAUNCH_CHECK(ctx);
    }
    bin_starts_kernel<<<1, SCAN_BLOCK, 0, cs->stream>>>(st->counters, pairs);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    bin_kernel<Numeric, true><<<(unsigned)blocks, BIN_BLOCK, 0, cs->stream>>>(
        rows, cols, st->c_off, max_bin, dense_from, st->panel_starts, panels, st->counters,
        st->lists);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    int64_t *starts = st->h_counts + pairs;
    NZI_TRY(nz_cuda_memcpy(ctx, starts, st->counters + pairs + 1,
                           (size_t)(pairs + 1 + (products != NULL)) * sizeof(int64_t), NZI_D2H));
    for (int64_t q = 0; q < pairs; q++) st->h_counts[q] = starts[q + 1] - starts[q];
    if (products != NULL) *products = (unsigned long long)starts[pairs + 1];
    return NZ_SUCCESS;
}

/* The dense rows of a panel: at most dense_count blocks (the slots) and at most as many as are
 * resident at once (rows are dealt round robin, so a second wave would start late and finish
 * last). */
template <typename Value, bool Numeric>
static nz_status_t launch_dense(hash_state_t *st, cudaStream_t stream, const hash_args<Value> &args,
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
        const int64_t words = (int64_t)(round_up((size_t)((cols + 31) / 32) * 4) / 4);
        kernel<<<(unsigned)grid, DENSE_BLOCK, 0, stream>>>(args, rows, count, words, st->bitmaps,
                                                           (Value *)st->dense, value_stride);
    }
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* Launch every non-empty bin of one panel (symbolic: the only panel). The bins touch disjoint
 * rows (and only the dense bin the dense slots), so in small products (st->side_by_side) they
 * run side by side: the k-th non-empty bin on nzi_cuda_stream_for(k), between a fork and a join.
 * A product of a few thousand rows has five or six bins of a few blocks each, and serialised
 * their launch latencies were most of its time (H100, 125 real matrices: 1.15x faster); in
 * large ones the dense bin then shares the SMs and finishes later (R-MAT 18: symbolic 20 ->
 * 28 ms), so they stay serial. NZ_SPGEMM_PROFILE=1 keeps them serial, timed one by one. */
template <typename Value, bool Numeric>
static nz_status_t run_bins(hash_state_t *st, const hash_args<Value> &args, int64_t panel,
                            int64_t cols, int64_t dense_count) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t pairs_before = panel * NUM_BINS;
    const int64_t *counts = st->h_counts, *starts = st->h_counts + st->pairs;
    int nonempty = 0, k = 0;
    for (int b = 0; b < NUM_BINS; b++) nonempty += counts[pairs_before + b] != 0;
    const bool side = nonempty > 1 && st->side_by_side && !st->profile;
    if (side) NZI_TRY(nzi_cuda_fork(ctx));
    nz_status_t status = NZ_SUCCESS;
    for (int b = 0; b < NUM_BINS && status == NZ_SUCCESS; b++) {
        const int64_t count = counts[pairs_before + b];
        if (count == 0) continue;
        const int32_t *rows = st->lists + starts[pairs_before + b];
        cudaStream_t stream = side ? nzi_cuda_stream_for(cs, k++) : cs->stream;
        if (st->profile) NZI_CUDA_TRY(ctx, cudaEventRecord(st->prof_start, stream));
        if (b < HUGE_BIN)
            status = launch_bin<Value, Numeric>(ctx, stream, b, st->rank, st->sweep, args, rows, count);
        else
            status = launch_dense<Value, Numeric>(st, stream, args, rows, count, cols, dense_count);
        if (status == NZ_SUCCESS && st->profile) {
            float ms = 0.0f;
            NZI_CUDA_TRY(ctx, cudaEventRecord(st->prof_stop, stream));
            NZI_CUDA_TRY(ctx, cudaEventSynchronize(st->prof_stop));
            NZI_CUDA_TRY(ctx, cudaEventElapsedTime(&ms, st->prof_start, st->prof_stop));
            st->prof_ms[Numeric][b] += (double)ms;
            st->prof_rows[Numeric][b] += count;
        }
    }
    /* join even after a failed launch: nothing may be left running on a side stream */
    if (side) {
        nz_status_t joined = nzi_cuda_join(ctx);
        if (status == NZ_SUCCESS) status = joined;
    }
    return status;
}

/* NZ_SPGEMM_PROFILE: the time and rows of every bin, per phase (and, for the numeric phase,
 * C's entries in the bin, from the host's row offsets by row_bin's rule). */
static void print_profile(const hash_state_t *st, const int64_t *off, int64_t m, int max_bin,
                          int dense_from) {
    int64_t entries[NUM_BINS] = {0};
    for (int64_t i = 0; off != NULL && i < m; i++) {
        const int b = bin_of_length(off[i + 1] - off[i], max_bin, dense_from);
        if (b >= 0) entries[b] += off[i + 1] - off[i];
    }
    fprintf(stderr, "nz_spgemm profile (hash): dense_from bin %d, max shared bin %d\n", dense_from,
            max_bin);
    fprintf(stderr, "  bin  group  sym rows    sym ms  num rows   C entries    num ms\n");
    for (int b = 0; b < NUM_BINS; b++) {
        if (st->prof_rows[0][b] == 0 && st->prof_rows[1][b] == 0) continue;
        fprintf(stderr, "  %3d %6d %9lld %9.3f %9lld %11lld %9.3f\n", b,
                b < SHARED_BINS ? bin_group[b] : DENSE_BLOCK, (long long)st->prof_rows[0][b],
                st->prof_ms[0][b], (long long)st->prof_rows[1][b], (long long)entries[b],
                st->prof_ms[1][b]);
    }
}

/* ---- device A, B in, device C out ---------------------------------------------------------- */

__global__ void __launch_bounds__(BIN_BLOCK)
    widen_kernel(int64_t count, const int32_t *__restrict__ in, int64_t *__restrict__ out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

/* The row offsets of device matrix M as int64 (the kernels index with int64): M's own, or a
 * widened copy of its int32 ones in *wide (temporary, the caller frees it). */
static nz_status_t device_offsets(nz_context_t *ctx, const nz_matrix_t *M, const int64_t **off,
                                  int64_t **wide) {
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    if (M->device.offset_type == NZ_I64) {
        *off = (const int64_t *)M->device.row_offsets;
        return NZ_SUCCESS;
    }
    const int64_t count = M->rows + 1;
    NZI_TRY(nzi_cuda_malloc_async(ctx, (void **)wide, (size_t)count * 8,
                                  "nz_spgemm (hash): widened row offsets"));
    const int64_t blocks = nzi_cuda_grid_blocks(cs, BIN_BLOCK, 4, (count + BIN_BLOCK - 1) / BIN_BLOCK);
    widen_kernel<<<(unsigned)blocks, BIN_BLOCK, 0, cs->stream>>>(
        count, (const int32_t *)M->device.row_offsets, *wide);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    *off = *wide;
    return NZ_SUCCESS;
}

/* A new device CSR matrix for C (int64 row offsets): c_off, when given, becomes its row offsets
 * (on success only: on failure the caller still owns it), else they are allocated; columns and
 * values for nnz entries. Its arrays come from the context's pool (repeated products reuse the
 * memory; nz_matrix_destroy returns them in order on the context's stream). */
static nz_status_t device_result(nz_context_t *ctx, nz_matrix_t **C, nz_value_type_t vt,
                                 int64_t m, int64_t n, int64_t nnz, int64_t *c_off) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    NZI_CHECK(nzi_matrix_new(ctx, &M, NZ_FORMAT_CSR, vt, m, n, nnz));
    M->location = NZ_DEVICE;
    M->device.offset_type = NZ_I64;
    M->device.borrowed = false;
    if (c_off == NULL)
        NZI_CHECK(nzi_cuda_malloc_async(ctx, &M->device.row_offsets, (size_t)(m + 1) * 8,
                                        "nz_spgemm (hash): C row offsets"));
    if (nnz > 0) {
        NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&M->device.col_indices, (size_t)nnz * 4,
                                        "nz_spgemm (hash): C column indices"));
        NZI_CHECK(nzi_cuda_malloc_async(ctx, &M->device.values, (size_t)nnz * nzi_value_size(vt),
                                        "nz_spgemm (hash): C values"));
    }
    if (c_off != NULL) M->device.row_offsets = c_off;
    *C = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* The numeric phase of a device C, after the symbolic one: C must fit in core (its columns and
 * values, the dense slots, with what is resident); the numeric binning (unless the symbolic
 * one serves, one_binning), then every bin straight into C's arrays. C takes st->c_off. */
template <typename Value>
static nz_status_t device_numeric(hash_state_t *st, nz_matrix_t **C, const nz_matrix_t *A,
                                  int64_t n, int64_t nnz, size_t budget, size_t used,
                                  bool one_binning, int max_bin, int dense_from,
                                  hash_args<Value> args, double *numeric_seconds) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t m = A->rows;
    const size_t c_bytes = (size_t)nnz * (sizeof(int32_t) + sizeof(Value));
    size_t avail = budget - used;
    int64_t dense_count = 0;
    float ms = 0.0f;
    if (c_bytes + 65536 > avail)
        return nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                         "nz_spgemm (hash): C has %lld entries (%zu bytes), more than the %zu bytes "
                         "left in the device memory budget of %zu bytes; a device C must fit in "
                         "device memory (pass host matrices to stream C to the host in row panels)",
                         (long long)nnz, c_bytes, avail, budget);
    avail -= c_bytes;
    NZI_CUDA_TRY(ctx, cudaEventRecord(st->numeric_start[0], cs->stream));
    if (!one_binning) NZI_TRY(bin_rows<true>(st, m, n, max_bin, dense_from, 1, NULL));
    if (st->h_counts[HUGE_BIN] > 0)
        NZI_TRY(dense_slots<Value>(st, st->h_counts[HUGE_BIN], n, true, avail, &dense_count, NULL));
    mark(st, "numeric-binned");
    NZI_TRY(device_result(ctx, C, A->value_type, m, n, nnz, st->c_off));
    st->c_off = NULL; /* C's now */
    mark(st, "C-allocated");
    args.c_base = 0;
    args.c_col = (*C)->device.col_indices;
    args.c_val = (Value *)(*C)->device.values;
    nz_status_t status = run_bins<Value, true>(st, args, 0, n, dense_count);
    if (status == NZ_SUCCESS) {
        cudaError_t err = cudaEventRecord(st->numeric_stop[0], cs->stream);
        if (err == cudaSuccess) err = cudaEventSynchronize(st->numeric_stop[0]);
        if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, st->numeric_start[0], st->numeric_stop[0]);
        if (err != cudaSuccess) status = nzi_cuda_status(ctx, err, "nz_spgemm (hash): numeric phase", __FILE__, __LINE__);
    }
    if (status != NZ_SUCCESS) {
        (void)cudaStreamSynchronize(cs->stream);
        (void)cudaGetLastError();
        nzi_matrix_free(*C);
        *C = NULL;
        return status;
    }
    *numeric_seconds = 1e-3 * (double)ms;
    return NZ_SUCCESS;
}

/* The symbolic phase's dense rule, NZ_TUNE_SPGEMM_SYMDENSE=0|1|2 (default 1): 0 sends only the
 * rows too long for shared memory to the dense path; 2 applies the numeric phase's rule
 * (dense_from_bin) to the rows' products; 1 the same but never below bin SYM_DENSE_MIN_BIN
 * (products above 1365). Measured on an H100 (symbolic ms, 0 -> 2): R-MAT 20 (ef 4) 30.2 -> 18.6,
 * R-MAT 18 33.8 -> 23.9, R-MAT 16 11.0 -> 8.3, but FE 64^3 6.2 -> 10.3, random 5.6 -> 7.2,
 * Laplacian 5.3 -> 6.1: products overstate the length of rows that compress (FE: ~700 products,
 * ~120 entries), whose hash tables stay small; the floor keeps such rows hashed. */
#define SYM_DENSE_MIN_BIN 7
static int symbolic_dense_from(int dense_from) {
    static const int choices[] = {0, 1, 2};
    const int rule = nzi_cuda_tune("NZ_TUNE_SPGEMM_SYMDENSE", choices, 3, 1);
    if (rule == 0) return SHARED_BINS;
    if (rule == 1 && dense_from < SYM_DENSE_MIN_BIN) return SYM_DENSE_MIN_BIN;
    return dense_from;
}

/* Small products (NZ_TUNE_SPGEMM_ONEBIN=1, the default): the symbolic phase bins rows by their
 * products with the numeric phase's bins and dense rule, and a single-panel numeric phase runs
 * on those lists, skipping its own binning (a memset, three kernels and a synchronisation: a
 * fifth of the time of a product of a few thousand rows). The tables are then sized by the
 * products rather than the exact lengths, which only costs where rows compress a lot, so only
 * below ONEBIN_MAX_PRODUCTS (counted on the host when nnz(A) <= ONEBIN_MAX_NNZ). */
#define ONEBIN_MAX_NNZ ((int64_t)1 << 18)
#define ONEBIN_MAX_PRODUCTS ((int64_t)1 << 22)
static bool small_product(const nz_matrix_t *A, const nz_matrix_t *B) {
    static const int choices[] = {0, 1};
    if (nzi_cuda_tune("NZ_TUNE_SPGEMM_ONEBIN", choices, 2, 1) != 1 || A->nnz > ONEBIN_MAX_NNZ)
        return false;
    if (A->location == NZ_DEVICE) /* no host arrays to count: B's mean row length instead */
        return (double)A->nnz * ((double)B->nnz / (double)(B->rows > 0 ? B->rows : 1)) <=
               (double)ONEBIN_MAX_PRODUCTS;
    const int32_t *a_col = A->host.csr.col_indices;
    const int64_t *b_off = B->host.csr.row_offsets;
    int64_t products = 0;
    for (int64_t k = 0; k < A->nnz && products <= ONEBIN_MAX_PRODUCTS; k++)
        products += b_off[a_col[k] + 1] - b_off[a_col[k]];
    return products <= ONEBIN_MAX_PRODUCTS;
}

template <typename Value>
static nz_status_t hash_spgemm(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                               const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                               nz_spgemm_info_t *info) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t m = A->rows, n = B->cols;
    const size_t vs = sizeof(Value), entry_bytes = sizeof(int32_t) + vs;
    nz_matrix_t *M = NULL;
    const bool on_device = A->location == NZ_DEVICE; /* device A, B in: device C out */
    hash_state_t st;
    hash_args<Value> args;
    size_t budget = 0, used = 0;
    int64_t nnz = 0, panels = 1, dense_count = 0, slots = 1, cap = 0, symbolic_huge = 0;
    bool one_binning = false;
    double upload_seconds = 0.0, drain_seconds = 0.0, numeric_seconds = 0.0;
    float ms = 0.0f;
    const int max_bin_sym = max_shared_bin(cs, false, vs), max_bin_num = max_shared_bin(cs, true, vs);
    const int dense_from = dense_from_bin(n, max_bin_num);

    memset(&st, 0, sizeof st);
    memset(&args, 0, sizeof args);
    st.ctx = ctx;
    st.rank = rank_sort_mode();
    st.sweep = sweep_width(B);
    {
        const char *p = getenv("NZ_SPGEMM_PROFILE");
        st.timeline = p != NULL && strcmp(p, "2") == 0;
        st.profile = p != NULL && p[0] != '\0' && strcmp(p, "0") != 0 && !st.timeline;
        mark(&st, "start");
    }
    info->panels = 1;
    if (m == 0 || n == 0 || A->nnz == 0 || B->nnz == 0) { /* no products: nothing for the GPU */
        if (on_device) {
            NZI_CHECK(device_result(ctx, &M, A->value_type, m, n, 0, NULL));
            NZI_CHECK(nz_cuda_memset(ctx, M->device.row_offsets, 0, (size_t)(m + 1) * 8));
            NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(cs->stream));
        } else {
            NZI_CHECK(nzi_csr_alloc(ctx, &M, A->value_type, m, n, 0));
            memset(M->host.csr.row_offsets, 0, (size_t)(m + 1) * sizeof(int64_t));
        }
        *C = M;
        return NZ_SUCCESS;
    }
    NZI_CHECK(nzi_spgemm_device_budget(ctx, opt, &budget));
    mark(&st, "budget");
    {
        /* resident: A, B (host ones uploaded; device ones already count as used memory, except
         * widened row offsets), C's row offsets, the row lists, scan work, symbolic counters */
        size_t a_bytes = (size_t)(m + 1) * 8 + (on_device ? 0 : (size_t)A->nnz * entry_bytes);
        size_t b_bytes = B == A ? 0 : (size_t)(B->rows + 1) * 8 + (on_device ? 0 : (size_t)B->nnz * entry_bytes);
        if (on_device && A->device.offset_type == NZ_I64) a_bytes = 0;
        if (on_device && B->device.offset_type == NZ_I64) b_bytes = 0;
        used = a_bytes + b_bytes + (size_t)(m + 1) * 8 + (size_t)m * 4 +
               (size_t)scan_work_entries(m) * 8 + 4096;
        if (used > budget) {
            status = nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                               "nz_spgemm (hash): A, B and C's row offsets need %zu bytes on the "
                               "device, more than the budget of %zu bytes",
                               used, budget);
            goto cleanup;
        }
    }
    st.copy_stream = cs->stream; /* a stream of its own once there are panels to overlap */
    for (int s = 0; s < 2; s++) {
        NZI_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&st.computed[s], cudaEventDisableTiming));
        NZI_CUDA_CHECK(ctx, cudaEventCreateWithFlags(&st.staged[s], cudaEventDisableTiming));
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&st.numeric_start[s]));
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&st.numeric_stop[s]));
    }
    NZI_CUDA_CHECK(ctx, cudaEventCreate(&st.sym_start));
    NZI_CUDA_CHECK(ctx, cudaEventCreate(&st.sym_stop));
    if (st.profile) {
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&st.prof_start));
        NZI_CUDA_CHECK(ctx, cudaEventCreate(&st.prof_stop));
    }

    mark(&st, "events");
    /* ---- upload (host A, B) and symbolic phase ---- */
    if (on_device) {
        NZI_CHECK(device_offsets(ctx, A, &args.a_off, &st.a_wide));
        if (B == A) args.b_off = args.a_off;
        else NZI_CHECK(device_offsets(ctx, B, &args.b_off, &st.b_wide));
        args.a_col = A->device.col_indices;
        args.a_val = (const Value *)A->device.values;
        args.b_col = B->device.col_indices;
        args.b_val = (const Value *)B->device.values;
    } else {
        NZI_CHECK(upload(ctx, &st.dA, A));
        upload_seconds = st.dA->transfer_seconds;
        if (B == A) {
            st.dB = st.dA;
        } else {
            NZI_CHECK(upload(ctx, &st.dB, B));
            upload_seconds += st.dB->transfer_seconds;
        }
        args.a_off = (const int64_t *)st.dA->device.row_offsets;
        args.a_col = st.dA->device.col_indices;
        args.a_val = (const Value *)st.dA->device.values;
        args.b_off = (const int64_t *)st.dB->device.row_offsets;
        args.b_col = st.dB->device.col_indices;
        args.b_val = (const Value *)st.dB->device.values;
    }

    mark(&st, "operands");
    /* C's row offsets (a device C keeps them) */
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&st.c_off, (size_t)(m + 1) * 8, "nz_spgemm (hash): C row offsets"));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&st.lists, (size_t)m * 4, "nz_spgemm (hash): row bins"));
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&st.scan_work,
                             (size_t)scan_work_entries(m) * 8, "nz_spgemm (hash): scan"));
    st.counters_bytes = counter_entries(NUM_BINS) * 8;
    NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&st.counters, st.counters_bytes,
                             "nz_spgemm (hash): bin counters"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&st.h_counts, counter_entries(NUM_BINS),
                              sizeof(int64_t), "nz_spgemm (hash): bin counts"));
    args.c_off = st.c_off;

    one_binning = small_product(A, B);
    mark(&st, "scratch");
    NZI_CUDA_CHECK(ctx, cudaEventRecord(st.sym_start, cs->stream));
    {
        /* the product total goes to the last counter and comes back with the bin counts */
        unsigned long long *total = st.counters + 2 * NUM_BINS + 2;
        unsigned long long products = 0;
        NZI_CHECK(nz_cuda_memset(ctx, st.counters, 0, st.counters_bytes)); /* c_off[0]: the kernel */
        const int64_t blocks = nzi_cuda_grid_blocks(cs, BIN_BLOCK, 4, (m + BIN_BLOCK - 1) / BIN_BLOCK);
        const int sym_max_bin = one_binning ? max_bin_num : max_bin_sym;
        const int sym_dense_from = one_binning ? dense_from : symbolic_dense_from(dense_from);
        products_kernel<<<(unsigned)blocks, BIN_BLOCK, 0, cs->stream>>>(
            m, n, args.a_off, args.a_col, args.b_off, st.c_off, total, sym_max_bin,
            sym_dense_from, st.counters);
        NZI_CUDA_LAUNCH_CHECK(ctx);
        NZI_CHECK(bin_rows<false>(&st, m, n, sym_max_bin, sym_dense_from, 1, &products));
        info->products = (int64_t)products;
        st.side_by_side = products <= (unsigned long long)ONEBIN_MAX_PRODUCTS;
        mark(&st, "binned");
    }
    symbolic_huge = st.h_counts[HUGE_BIN];
    if (st.h_counts[HUGE_BIN] > 0)
        NZI_CHECK(dense_slots<Value>(&st, st.h_counts[HUGE_BIN], n, false, budget - used, &dense_count,
                                      NULL));
    NZI_CHECK((run_bins<Value, false>(&st, args, 0, n, dense_count)));
    free_device(ctx, (void **)&st.bitmaps);
    NZI_CHECK(device_inclusive_scan(ctx, cs->stream, st.c_off + 1, m, st.scan_work));
    NZI_CUDA_CHECK(ctx, cudaEventRecord(st.sym_stop, cs->stream));
    NZI_CHECK(nz_cuda_memcpy(ctx, &nnz, st.c_off + m, 8, NZI_D2H));
    NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, st.sym_start, st.sym_stop));
    info->symbolic_seconds = 1e-3 * (double)ms;
    mark(&st, "symbolic");

    if (on_device) {
        NZI_CHECK((device_numeric<Value>(&st, &M, A, n, nnz, budget, used, one_binning, max_bin_num,
                                         dense_from, args, &numeric_seconds)));
        mark(&st, "numeric");
        if (st.profile) print_profile(&st, NULL, m, max_bin_num, dense_from);
        info->numeric_seconds = numeric_seconds;
        info->transfer_seconds = 0.0;
        info->stage_seconds_sum = info->symbolic_seconds + numeric_seconds;
        *C = M;
        M = NULL;
        goto cleanup;
    }

    /* ---- output, panels ---- */
    NZI_CHECK(nzi_csr_alloc(ctx, &M, A->value_type, m, n, nnz));
    {
        double t = nzi_wtime();
        NZI_CHECK(nz_cuda_memcpy(ctx, M->host.csr.row_offsets, st.c_off, (size_t)(m + 1) * 8, NZI_D2H));
        drain_seconds += nzi_wtime() - t;
    }
    {
        const int64_t *off = M->host.csr.row_offsets;
        /* the rows the numeric binning sends to the dense path */
        int64_t huge = 0, longest = 0;
        for (int64_t i = 0; i < m; i++) {
            const int64_t len = off[i + 1] - off[i];
            if (bin_of_length(len, max_bin_num, dense_from) == HUGE_BIN) huge++;
            if (len > longest) longest = len;
        }
        if (one_binning && symbolic_huge > huge) huge = symbolic_huge; /* the lists kept */
        size_t avail = budget - used;
        if (huge > 0) {
            size_t slot_bytes = 0;
            NZI_CHECK(dense_slots<Value>(&st, huge, n, true, avail / 2, &dense_count, &slot_bytes));
            avail -= (size_t)dense_count * slot_bytes;
        }
        const size_t c_bytes = (size_t)nnz * entry_bytes;
        if (c_bytes + 65536 <= avail) {
            /* in core; a large output still goes in about four panels so its transfer overlaps
             * the computation, when two such panels fit */
            const int64_t quarter = (nnz + 3) / 4 > longest ? (nnz + 3) / 4 : longest;
            cap = nnz;
            if (c_bytes > PIPELINE_MIN_BYTES && 2 * (size_t)quarter * entry_bytes + 65536 <= avail)
                cap = quarter;
        } else {
            cap = (int64_t)((avail > 65536 ? avail - 65536 : 0) / 2 / entry_bytes);
        }
        if (cap < 1) cap = 1;
        /* greedy panels: each ends at the last row whose entries still fit `cap` */
        for (int pass = 0; pass < 2; pass++) {
            int64_t count = 0, r0 = 0;
            while (r0 < m) {
                int64_t lo = r0 + 1, hi = m; /* largest r1 in [r0+1, m] with off[r1]-off[r0] <= cap */
                if (off[r0 + 1] - off[r0] > cap) {
                    status = nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                                       "nz_spgemm (hash): row %lld of C has %lld entries, more than "
                                       "a panel of %lld entries fits in the device memory budget "
                                       "of %zu bytes",
                                       (long long)r0, (long long)(off[r0 + 1] - off[r0]),
                                       (long long)cap, budget);
                    goto cleanup;
                }
                while (lo < hi) {
                    int64_t mid = (lo + hi + 1) / 2;
                    if (off[mid] - off[r0] <= cap) lo = mid; else hi = mid - 1;
                }
                if (pass == 1) st.h_panel_starts[count] = r0;
                count++;
                r0 = lo;
            }
            if (pass == 0) {
                panels = count;
                NZI_CHECK(nzi_alloc_array(ctx, (void **)&st.h_panel_starts, (size_t)panels + 1,
                                          sizeof(int64_t), "nz_spgemm (hash): panels"));
            }
        }
        st.h_panel_starts[panels] = m;
        slots = panels > 1 ? 2 : 1;
        if (panels == 1) cap = nnz;
    }
    info->panels = panels;
    one_binning = one_binning && panels == 1;
    if (panels > 1) { /* the drain of panel p overlaps the computation of panel p + 1 */
        NZI_CUDA_CHECK(ctx, cudaStreamCreateWithFlags(&st.copy_stream, cudaStreamNonBlocking));
        st.own_copy_stream = true;
    }
    if (!one_binning) { /* a new binning per (panel, bin) pair: its counters */
        NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&st.panel_starts, (size_t)(panels + 1) * 8,
                                 "nz_spgemm (hash): panels"));
        NZI_CHECK(nz_cuda_memcpy(ctx, st.panel_starts, st.h_panel_starts, (size_t)(panels + 1) * 8, NZI_H2D));
        free_device(ctx, (void **)&st.counters);
        nzi_free(ctx, st.h_counts);
        st.h_counts = NULL;
        st.counters_bytes = counter_entries(panels * NUM_BINS) * 8;
        NZI_CHECK(nzi_cuda_malloc_async(ctx, (void **)&st.counters, st.counters_bytes, "nz_spgemm (hash): bin counters"));
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&st.h_counts, counter_entries(panels * NUM_BINS),
                                  sizeof(int64_t), "nz_spgemm (hash): bin counts"));
    }
    for (int s = 0; s < slots; s++) {
        NZI_CHECK(nzi_cuda_malloc_async(ctx, &st.slot_col[s], (size_t)cap * 4, "nz_spgemm (hash): C panel"));
        NZI_CHECK(nzi_cuda_malloc_async(ctx, &st.slot_val[s], (size_t)cap * vs, "nz_spgemm (hash): C panel"));
    }
    mark(&st, "output+slots");
    /* pinned staging only where it pays: a small C comes back in one pageable copy (pinning
     * 32 MB costs milliseconds, more than such a copy) */
    if ((size_t)nnz * entry_bytes <= STAGE_HALF) {
        st.staging = NULL;
    } else if (nzi_account_alloc(ctx, 2 * STAGE_HALF, false)) {
        if (cudaMallocHost((void **)&st.staging, 2 * STAGE_HALF) != cudaSuccess) {
            (void)cudaGetLastError();
            nzi_account_free(ctx, 2 * STAGE_HALF, false);
            ctx->failed_allocs++;
            st.staging = NULL; /* pageable copies instead: slower, still correct */
        }
    } else {
        status = nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY,
                           "nz_spgemm (hash): cannot allocate the pinned staging buffers (injected)");
        goto cleanup;
    }

    /* ---- numeric phase, panel by panel, draining panel p - 2 before reusing its slot ---- */
    /* the numeric binning counts as numeric time (timed with the symbolic phase's events) */
    if (!one_binning) {
        NZI_CUDA_CHECK(ctx, cudaEventRecord(st.sym_start, cs->stream));
        NZI_CHECK(bin_rows<true>(&st, m, n, max_bin_num, dense_from, panels, NULL));
        NZI_CUDA_CHECK(ctx, cudaEventRecord(st.sym_stop, cs->stream));
        NZI_CUDA_CHECK(ctx, cudaEventSynchronize(st.sym_stop));
        NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, st.sym_start, st.sym_stop));
        numeric_seconds += 1e-3 * (double)ms;
    }
    {
        const int64_t *off = M->host.csr.row_offsets;
        int64_t next_drain = 0;
        for (int64_t p = 0; p <= panels; p++) {
            if (p >= slots || p == panels) {
                /* drain every panel that is complete and whose slot is needed (or at the end) */
                int64_t last = p == panels ? panels - 1 : p - slots;
                for (; next_drain <= last; next_drain++) {
                    const int s = (int)(next_drain % slots);
                    const int64_t r0 = st.h_panel_starts[next_drain], r1 = st.h_panel_starts[next_drain + 1];
                    NZI_CUDA_CHECK(ctx, cudaEventSynchronize(st.computed[s]));
                    NZI_CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, st.numeric_start[s], st.numeric_stop[s]));
                    numeric_seconds += 1e-3 * (double)ms;
                    double t = nzi_wtime();
                    NZI_CHECK(drain_array(&st, M->host.csr.col_indices + off[r0], st.slot_col[s],
                                          off[r1] - off[r0], 4));
                    NZI_CHECK(drain_array(&st, (Value *)M->host.csr.values + off[r0], st.slot_val[s],
                                          off[r1] - off[r0], vs));
                    drain_seconds += nzi_wtime() - t;
                }
            }
            if (p == panels) break;
            const int s = (int)(p % slots);
            args.c_base = off[st.h_panel_starts[p]];
            args.c_col = (int32_t *)st.slot_col[s];
            args.c_val = (Value *)st.slot_val[s];
            NZI_CUDA_CHECK(ctx, cudaEventRecord(st.numeric_start[s], cs->stream));
            NZI_CHECK((run_bins<Value, true>(&st, args, p, n, dense_count)));
            NZI_CUDA_CHECK(ctx, cudaEventRecord(st.numeric_stop[s], cs->stream));
            NZI_CUDA_CHECK(ctx, cudaEventRecord(st.computed[s], cs->stream));
            NZI_CUDA_CHECK(ctx, cudaStreamWaitEvent(st.copy_stream, st.computed[s], 0));
        }
    }
    mark(&st, "numeric+drain");
    if (st.profile) print_profile(&st, M->host.csr.row_offsets, m, max_bin_num, dense_from);
    info->numeric_seconds = numeric_seconds;
    info->transfer_seconds = upload_seconds + drain_seconds;
    info->stage_seconds_sum = upload_seconds + info->symbolic_seconds + numeric_seconds + drain_seconds;
    *C = M;
    M = NULL;

cleanup:
    hash_state_release(&st);
    mark(&st, "release");
    print_timeline(&st);
    nzi_matrix_free(M);
    return status;
}

extern "C" nz_status_t nzi_spgemm_hash(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                                       const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                                       nz_spgemm_info_t *info) {
    NZI_TRY(nzi_cuda_enter(ctx));
    if (A->value_type == NZ_F32) return hash_spgemm<float>(ctx, C, A, B, opt, info);
    return hash_spgemm<double>(ctx, C, A, B, opt, info);
}
