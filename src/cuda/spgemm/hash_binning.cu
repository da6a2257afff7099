/* hash_binning.cu: the hash SpGEMM's row binning: products per row, rows listed per (panel, bin), every bin of a panel run. */
#include "hash.cuh"

#include <cub/block/block_scan.cuh>

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

/* Device counters of a binning with `pairs` (panel, bin) pairs: counts (then the fill's cursors)
 * in [0, pairs), their exclusive scan with the total in [pairs + 1, 2 pairs + 2), and in the
 * symbolic phase the product total in [2 pairs + 2]. */
size_t hash_counter_entries(int64_t pairs) { return (size_t)(2 * pairs + 3); }

/* One block: the exclusive scan of the counts into the cursors (in place) and into the copy the
 * host reads, with the total after it (CUB's block scan, tile after tile with a carry). */
__global__ void __launch_bounds__(SCAN_BLOCK) bin_starts_kernel(unsigned long long *counters,
                                                                int64_t pairs) {
    typedef cub::BlockScan<long long, SCAN_BLOCK> block_scan_t;
    __shared__ typename block_scan_t::TempStorage scan_storage;
    unsigned long long *copy = counters + pairs + 1;
    long long carry = 0;
    for (int64_t base = 0; base < pairs; base += SCAN_BLOCK) {
        const int64_t q = base + threadIdx.x;
        const long long v = q < pairs ? (long long)counters[q] : 0;
        long long before = 0, total = 0;
        block_scan_t(scan_storage).ExclusiveSum(v, before, total);
        __syncthreads(); /* the storage is reused by the next tile */
        if (q < pairs) counters[q] = copy[q] = (unsigned long long)(carry + before);
        carry += total;
    }
    if (threadIdx.x == 0) copy[pairs] = (unsigned long long)carry;
}

/* Products per row and the symbolic binning's counts in one kernel (its counting pass, which
 * the symbolic hash_bin_rows then skips); the product total in the last counter. */
nz_status_t hash_count_products(hash_state_t *st, const int64_t *a_off, const int32_t *a_col,
                                const int64_t *b_off, int64_t rows, int64_t cols, int max_bin,
                                int dense_from) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    unsigned long long *total = st->counters + 2 * NUM_BINS + 2;
    const int64_t blocks = nzi_cuda_grid_blocks(cs, BIN_BLOCK, 4, (rows + BIN_BLOCK - 1) / BIN_BLOCK);
    products_kernel<<<(unsigned)blocks, BIN_BLOCK, 0, cs->stream>>>(
        rows, cols, a_off, a_col, b_off, st->c_off, total, max_bin, dense_from, st->counters);
    NZI_CUDA_LAUNCH_CHECK(ctx);
    return NZ_SUCCESS;
}

/* Count rows per (panel, bin) pair, scan the counts on the device, fill the lists (laid out pair
 * after pair), then read the starts back: one synchronisation. On the host h_counts[0, pairs)
 * get the counts, h_counts[pairs, 2 pairs] the starts and the total; with `products`, also the
 * product total that products_kernel left in the last counter. */
template <bool Numeric>
nz_status_t hash_bin_rows(hash_state_t *st, int64_t rows, int64_t cols, int max_bin,
                            int dense_from, int64_t panels, unsigned long long *products) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t pairs = panels * NUM_BINS;
    st->pairs = pairs;
    const int64_t blocks = nzi_cuda_grid_blocks(cs, BIN_BLOCK, 4, (rows + BIN_BLOCK - 1) / BIN_BLOCK);
    if (products == NULL) { /* else products_kernel counted the rows (counters zeroed before) */
        NZI_TRY(nz_cuda_memset(ctx, st->counters, 0, (size_t)pairs * COUNTER_BYTES));
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
                           (size_t)(pairs + 1 + (products != NULL)) * COUNTER_BYTES, NZI_D2H));
    for (int64_t q = 0; q < pairs; q++) st->h_counts[q] = starts[q + 1] - starts[q];
    if (products != NULL) *products = (unsigned long long)starts[pairs + 1];
    return NZ_SUCCESS;
}


/* Launch every non-empty bin of one panel (symbolic: the only panel). The bins touch disjoint
 * rows (and only the dense bin the dense slots), so in small products (st->side_by_side) they
 * run side by side: the k-th non-empty bin on nzi_cuda_stream_for(k), between a fork and a join.
 * A product of a few thousand rows has five or six bins of a few blocks each, and serialised
 * their launch latencies were most of its time (H100, 125 real matrices: 1.15x faster); in
 * large ones the dense bin then shares the SMs and finishes later (R-MAT 18: symbolic 20 ->
 * 28 ms), so they stay serial. NZ_SPGEMM_PROFILE_BINS keeps them serial, timed one by one. */
template <typename Value, bool Numeric>
nz_status_t hash_run_bins(hash_state_t *st, const hash_args<Value> &args, int64_t panel,
                            int64_t cols, int64_t dense_count) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t pairs_before = panel * NUM_BINS;
    const int64_t *counts = st->h_counts, *starts = st->h_counts + st->pairs;
    int nonempty = 0, k = 0;
    for (int b = 0; b < NUM_BINS; b++) nonempty += counts[pairs_before + b] != 0;
    const bool side = nonempty > 1 && st->side_by_side && !st->profile_bins;
    if (side) NZI_TRY(nzi_cuda_fork(ctx));
    nz_status_t status = NZ_SUCCESS;
    for (int b = 0; b < NUM_BINS && status == NZ_SUCCESS; b++) {
        const int64_t count = counts[pairs_before + b];
        if (count == 0) continue;
        const int32_t *rows = st->lists + starts[pairs_before + b];
        cudaStream_t stream = side ? nzi_cuda_stream_for(cs, k++) : cs->stream;
        if (st->profile_bins) NZI_CUDA_TRY(ctx, cudaEventRecord(st->prof_start, stream));
        if (b < HUGE_BIN)
            status = hash_launch_bin<Value, Numeric>(ctx, stream, b, st->rank, st->sweep, args, rows, count);
        else
            status = hash_launch_dense<Value, Numeric>(st, stream, args, rows, count, cols, dense_count);
        if (status == NZ_SUCCESS && st->profile_bins) {
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

template nz_status_t hash_bin_rows<false>(hash_state_t *, int64_t, int64_t, int, int, int64_t,
                                          unsigned long long *);
template nz_status_t hash_bin_rows<true>(hash_state_t *, int64_t, int64_t, int, int, int64_t,
                                         unsigned long long *);
template nz_status_t hash_run_bins<float, false>(hash_state_t *, const hash_args<float> &, int64_t,
                                                 int64_t, int64_t);
template nz_status_t hash_run_bins<float, true>(hash_state_t *, const hash_args<float> &, int64_t,
                                                int64_t, int64_t);
template nz_status_t hash_run_bins<double, false>(hash_state_t *, const hash_args<double> &,
                                                  int64_t, int64_t, int64_t);
template nz_status_t hash_run_bins<double, true>(hash_state_t *, const hash_args<double> &,
                                                 int64_t, int64_t, int64_t);
