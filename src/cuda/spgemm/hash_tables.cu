/* hash_tables.cu: the hash SpGEMM's shared-memory hash tables, one kernel per row bin, for both phases. */
#include "hash.cuh"

/* Dynamic shared memory a kernel gets without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize). */
#define DEFAULT_DYNAMIC_SHARED ((size_t)48 << 10)


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

/* Phases of hash_shared_kernel. A row's table is my_keys / my_vals (Table slots), worked on by
 * the Group lanes of group g = threadIdx.x / Group; lane = threadIdx.x % Group. The compaction
 * and the sort by counting stay in the kernel: as helpers they compile to other (equivalent)
 * machine code, with the same resources, in the rank-sort kernels. */

/* Empty tables (keys -1, values 0) for the block's R rows, and zero counts (counts[R] included). */
template <int R, int Table, int Block, typename Value, bool Numeric>
static __device__ __forceinline__ void clear_tables(int32_t *keys, Value *vals, int *counts) {
    for (int s = threadIdx.x; s < R * Table; s += Block) {
        keys[s] = -1;
        if (Numeric) vals[s] = Value(0);
    }
    if (threadIdx.x <= R) counts[threadIdx.x] = 0;
}

/* Every product of the row into its table, each by one lane (see hash_shared_kernel). */
template <int Group, int Table, typename Value, bool Numeric, bool Narrow>
static __device__ __forceinline__ void insert_row(const hash_args<Value> &args, int32_t row,
                                                  int lane, int sweep_log2, int32_t *my_keys,
                                                  Value *my_vals) {
    constexpr int SWEEP = Group < 32 ? Group : 32;
    constexpr int SWEEPERS = Group / SWEEP;
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

/* Symbolic: the row's filled slots (its length in C) to c_off[row + 1]. Every thread of the
 * block calls it (a barrier inside). */
template <int Group, int Table, typename Value>
static __device__ __forceinline__ void count_row(const hash_args<Value> &args, int32_t row, int g,
                                                 int lane, const int32_t *my_keys, int *counts) {
    int local = 0;
    for (int s = lane; s < Table; s += Group) local += my_keys[s] != -1;
    if (local != 0) atomicAdd(&counts[g], local);
    __syncthreads();
    if (row >= 0 && lane == 0) args.c_off[row + 1] = counts[g];
}

/* Rank 2: groups (of at most 32 lanes) lie inside a warp: pad the keys with INT32_MAX up to a
 * multiple of 4 (n <= OWN * Group <= Table, a multiple of 4: the padding stays in the table; the
 * slots past n are dead after the compaction), then sort with K = the warp's largest
 * ceil(n / Group). A row longer than the bin guarantees (never, but K must bound the registers)
 * is left to the sort by counting: returns whether the row was sorted here. Every lane of the
 * warp calls it (shuffles inside); g and lane are the calling thread's. */
template <int Group, int Table, typename Value>
static __device__ __forceinline__ bool rank_sort_row(const hash_args<Value> &args, int32_t row,
                                                     int n, int32_t *my_keys,
                                                     const Value *my_vals) {
    const int g = threadIdx.x / Group, lane = threadIdx.x % Group;
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
    return fits;
}

/* Bitonic sort of the first P slots of every table, P the power of two at or above the block's
 * longest row (empty keys, 0xffffffff as unsigned, pad and sort last): about half the work of
 * sorting whole tables, which are at least 1.5 x the row. Every thread of the block calls it
 * (barriers inside). */
template <int R, int Table, int Block, int Group, typename Value>
static __device__ __forceinline__ void bitonic_sort_tables(int n, int lane, int32_t *keys,
                                                           Value *vals, int32_t *my_keys,
                                                           int *counts) {
    if (lane == 0 && n > 0) atomicMax(&counts[R], n);
    __syncthreads();
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
}

/* The sorted row (the first n slots of its table) to its place in the panel's slot. */
template <int Group, typename Value>
static __device__ __forceinline__ void write_row(const hash_args<Value> &args, int32_t row, int n,
                                                 int lane, const int32_t *my_keys,
                                                 const Value *my_vals) {
    const int64_t begin = args.c_off[row], nnz = args.c_off[row + 1] - begin;
    int32_t *out_col = args.c_col + (begin - args.c_base);
    Value *out_val = args.c_val + (begin - args.c_base);
    for (int64_t s = lane; s < nnz && s < n; s += Group) {
        out_col[s] = my_keys[s];
        out_val[s] = my_vals[s];
    }
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
    extern __shared__ __align__(16) unsigned char shared_raw[];
    Value *vals = (Value *)shared_raw;
    int32_t *keys = (int32_t *)(shared_raw + (Numeric ? (size_t)R * Table * sizeof(Value) : 0));
    int *counts = (int *)(keys + R * Table);

    const int g = threadIdx.x / Group, lane = threadIdx.x % Group;
    const int64_t index = (int64_t)blockIdx.x * R + g;
    const int32_t row = index < count ? rows[index] : -1;
    int32_t *my_keys = keys + g * Table;
    Value *my_vals = vals + g * Table;

    clear_tables<R, Table, Block, Value, Numeric>(keys, vals, counts);
    __syncthreads();
    if (row >= 0)
        insert_row<Group, Table, Value, Numeric, Narrow>(args, row, lane, sweep_log2, my_keys,
                                                         my_vals);
    __syncthreads();

    if (!Numeric) {
        count_row<Group, Table, Value>(args, row, g, lane, my_keys, counts);
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
        if constexpr (Rank == 2)
            counted = rank_sort_row<Group, Table, Value>(args, row, n, my_keys, my_vals);
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
        bitonic_sort_tables<R, Table, Block, Group, Value>(n, lane, keys, vals, my_keys, counts);
        if (row >= 0) write_row<Group, Value>(args, row, n, lane, my_keys, my_vals);
    }
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
    if (smem > DEFAULT_DYNAMIC_SHARED)
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
nz_status_t hash_launch_bin(nz_context_t *ctx, cudaStream_t stream, int bin, int rank,
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


int hash_max_shared_bin(const nzi_cuda_state_t *cs, bool numeric, size_t value_size) {
    int best = -1;
    for (int b = 0; b < SHARED_BINS; b++)
        if (shared_bytes(b, numeric, value_size) <= cs->shared_per_block_optin &&
            shared_bytes(b, numeric, value_size) <= cs->shared_per_sm)
            best = b;
    return best;
}

template nz_status_t hash_launch_bin<float, false>(nz_context_t *, cudaStream_t, int, int, int,
                                                   const hash_args<float> &, const int32_t *,
                                                   int64_t);
template nz_status_t hash_launch_bin<float, true>(nz_context_t *, cudaStream_t, int, int, int,
                                                  const hash_args<float> &, const int32_t *,
                                                  int64_t);
template nz_status_t hash_launch_bin<double, false>(nz_context_t *, cudaStream_t, int, int, int,
                                                    const hash_args<double> &, const int32_t *,
                                                    int64_t);
template nz_status_t hash_launch_bin<double, true>(nz_context_t *, cudaStream_t, int, int, int,
                                                   const hash_args<double> &, const int32_t *,
                                                   int64_t);
