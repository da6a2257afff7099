/* hash_driver.cu: GPU hash-based Gustavson SpGEMM: the call, from the upload to C in row panels streamed to the host. */
#include "hash.cuh"

#include <cub/device/device_scan.cuh>

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
 * from the memory budget (nzi_device_memory_budget) into two device slots. While the GPU
 * computes panel p + 1 on the context's stream, the host drains panel p through two pinned
 * staging buffers (DMA on a second stream into one buffer while the host copies the other into
 * C), so transfer and computation overlap. Large in-core outputs are also split into four
 * panels for the same overlap.
 * Values are summed with atomics in a data-dependent order: not bitwise reproducible run to run
 * (the structure is). Cost: O(products) hash operations, O(P log^2 P) per row for the sort,
 * O(cols / 32) per dense row.
 */

#define PIPELINE_MIN_BYTES ((size_t)64 << 20) /* in-core outputs above this go in 4 panels */
#define PIPELINE_PANELS 4

/* A and B on the device: device operands as they are (int32 row offsets widened), host ones
 * uploaded (*upload_seconds: their transfer time). */
template <typename Value>
static nz_status_t attach_operands(hash_state_t *st, const nz_matrix_t *A, const nz_matrix_t *B,
                                   hash_args<Value> *args, double *upload_seconds) {
    nz_context_t *ctx = st->ctx;
    if (A->location == NZ_DEVICE) {
        NZI_TRY(hash_device_offsets(ctx, A, &args->a_off, &st->a_wide));
        if (B == A) args->b_off = args->a_off;
        else NZI_TRY(hash_device_offsets(ctx, B, &args->b_off, &st->b_wide));
        args->a_col = A->device.col_indices;
        args->a_val = (const Value *)A->device.values;
        args->b_col = B->device.col_indices;
        args->b_val = (const Value *)B->device.values;
        return NZ_SUCCESS;
    }
    NZI_TRY(hash_upload(ctx, &st->dA, A));
    *upload_seconds = st->dA->transfer_seconds;
    if (B == A) {
        st->dB = st->dA;
    } else {
        NZI_TRY(hash_upload(ctx, &st->dB, B));
        *upload_seconds += st->dB->transfer_seconds;
    }
    args->a_off = (const int64_t *)st->dA->device.row_offsets;
    args->a_col = st->dA->device.col_indices;
    args->a_val = (const Value *)st->dA->device.values;
    args->b_off = (const int64_t *)st->dB->device.row_offsets;
    args->b_col = st->dB->device.col_indices;
    args->b_val = (const Value *)st->dB->device.values;
    return NZ_SUCCESS;
}

/* CUB's workspace for the inclusive scan of m row counts (in place, int64). */
static nz_status_t scan_bytes(nz_context_t *ctx, int64_t m, size_t *bytes) {
    int64_t *none = NULL;
    *bytes = 0;
    NZI_CUDA_TRY(ctx, cub::DeviceScan::InclusiveSum(NULL, *bytes, none, none, m));
    return NZ_SUCCESS;
}

/* The symbolic phase: C's row offsets (st->c_off), its entries (*nnz) and the product count.
 * Binning by products (with the numeric rules when one_binning), the bins' tables or bitmaps,
 * then CUB's scan of the counts. Events time it from the product count to the scan. */
template <typename Value>
static nz_status_t symbolic_phase(hash_state_t *st, const hash_args<Value> &args, int64_t m,
                                  int64_t n, int max_bin, int dense_from, size_t avail,
                                  int64_t *nnz, int64_t *symbolic_huge, nz_spgemm_info_t *info) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    unsigned long long products = 0;
    int64_t dense_count = 0;
    size_t scan = st->scan_bytes;
    float ms = 0.0f;
    NZI_CUDA_TRY(ctx, cudaEventRecord(st->sym_start, cs->stream));
    NZI_TRY(nz_cuda_memset(ctx, st->counters, 0, st->counters_bytes)); /* c_off[0]: the kernel */
    NZI_TRY(hash_count_products(st, args.a_off, args.a_col, args.b_off, m, n, max_bin, dense_from));
    NZI_TRY(hash_bin_rows<false>(st, m, n, max_bin, dense_from, 1, &products));
    info->products = (int64_t)products;
    st->side_by_side = products <= (unsigned long long)ONEBIN_MAX_PRODUCTS;
    mark(st, "binned");
    *symbolic_huge = st->h_counts[HUGE_BIN];
    if (st->h_counts[HUGE_BIN] > 0)
        NZI_TRY(hash_dense_slots<Value>(st, st->h_counts[HUGE_BIN], n, false, avail, &dense_count,
                                        NULL));
    NZI_TRY((hash_run_bins<Value, false>(st, args, 0, n, dense_count)));
    free_device(ctx, (void **)&st->bitmaps);
    if (m > 0)
        NZI_CUDA_TRY(ctx, cub::DeviceScan::InclusiveSum(st->scan_work, scan, st->c_off + 1,
                                                        st->c_off + 1, m, cs->stream));
    NZI_CUDA_TRY(ctx, cudaEventRecord(st->sym_stop, cs->stream));
    NZI_TRY(nz_cuda_memcpy(ctx, nnz, st->c_off + m, NZI_OFFSET_BYTES, NZI_D2H));
    NZI_CUDA_TRY(ctx, cudaEventElapsedTime(&ms, st->sym_start, st->sym_stop));
    info->symbolic_seconds = 1e-3 * (double)ms;
    return NZ_SUCCESS;
}

/* The panels of a host C: each panel's C (columns and values) goes into a device slot, two
 * slots when there are several panels. cap: entries per slot, from what the budget leaves after
 * the dense slots; a large in-core output still goes in about PIPELINE_PANELS panels so its
 * transfer overlaps the computation, when two such panels fit. The shared splitter then cuts
 * C's rows at cap entries (a row of more than cap entries is refused). */
template <typename Value>
static nz_status_t plan_panels(hash_state_t *st, const int64_t *off, int64_t m, int64_t n,
                               int64_t nnz, int max_bin, int dense_from, bool one_binning,
                               int64_t symbolic_huge, size_t avail, int64_t *dense_count,
                               int64_t *panels, int64_t *cap) {
    nz_context_t *ctx = st->ctx;
    const size_t entry_bytes = NZI_INDEX_BYTES + sizeof(Value);
    nzi_spgemm_panel_t *list = NULL;
    nzi_spgemm_split_input_t in;
    nzi_spgemm_panel_cost_t cost;
    int64_t huge = 0, longest = 0, count = 0;
    nz_status_t status = NZ_SUCCESS;
    /* the rows the numeric binning sends to the dense path */
    for (int64_t i = 0; i < m; i++) {
        const int64_t len = off[i + 1] - off[i];
        if (bin_of_length(len, max_bin, dense_from) == HUGE_BIN) huge++;
        if (len > longest) longest = len;
    }
    if (one_binning && symbolic_huge > huge) huge = symbolic_huge; /* the lists kept */
    if (huge > 0) {
        size_t slot_bytes = 0;
        NZI_TRY(hash_dense_slots<Value>(st, huge, n, true, avail / 2, dense_count, &slot_bytes));
        avail -= (size_t)*dense_count * slot_bytes;
    }
    const size_t c_bytes = (size_t)nnz * entry_bytes;
    if (c_bytes + BUDGET_SLACK_BYTES <= avail) {
        const int64_t share = (nnz + PIPELINE_PANELS - 1) / PIPELINE_PANELS;
        const int64_t quarter = share > longest ? share : longest;
        *cap = nnz;
        if (c_bytes > PIPELINE_MIN_BYTES &&
            2 * (size_t)quarter * entry_bytes + BUDGET_SLACK_BYTES <= avail)
            *cap = quarter;
    } else {
        *cap = (int64_t)((avail > BUDGET_SLACK_BYTES ? avail - BUDGET_SLACK_BYTES : 0) / 2 /
                         entry_bytes);
    }
    if (*cap < 1) *cap = 1;
    memset(&in, 0, sizeof in);
    memset(&cost, 0, sizeof cost);
    in.c_offsets = off;
    in.rows = m;
    in.b_cols = n;
    in.who = "hash";
    cost.per_output = (double)entry_bytes;
    NZI_CHECK(nzi_spgemm_split(ctx, &in, &cost, (double)*cap * (double)entry_bytes, &list, &count));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&st->h_panel_starts, (size_t)count + 1,
                              sizeof(int64_t), "nz_spgemm (hash): panels"));
    for (int64_t q = 0; q < count; q++) st->h_panel_starts[q] = list[q].row_begin;
    st->h_panel_starts[count] = m;
    *panels = count;
    if (count == 1) *cap = nnz;
cleanup:
    nzi_free(ctx, list);
    return status;
}

/* The numeric phase of a host C: panel by panel into the two device slots, draining panel
 * p - 2 (its DMA on the copy stream through the pinned halves) before its slot is reused, so
 * the drain of one panel overlaps the computation of the next. */
template <typename Value>
static nz_status_t numeric_panels(hash_state_t *st, nz_matrix_t *M, hash_args<Value> args,
                                  int64_t panels, int64_t n, int64_t dense_count,
                                  double *numeric_seconds, double *drain_seconds) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int slots = panels > 1 ? 2 : 1;
    const int64_t *off = M->host.csr.row_offsets;
    int64_t next_drain = 0;
    float ms = 0.0f;
    for (int64_t p = 0; p <= panels; p++) {
        if (p >= slots || p == panels) {
            /* drain every panel that is complete and whose slot is needed (or at the end) */
            const int64_t last = p == panels ? panels - 1 : p - slots;
            for (; next_drain <= last; next_drain++) {
                const int s = (int)(next_drain % slots);
                const int64_t r0 = st->h_panel_starts[next_drain];
                const int64_t r1 = st->h_panel_starts[next_drain + 1];
                NZI_CUDA_TRY(ctx, cudaEventSynchronize(st->computed[s]));
                NZI_CUDA_TRY(ctx, cudaEventElapsedTime(&ms, st->numeric_start[s], st->numeric_stop[s]));
                *numeric_seconds += 1e-3 * (double)ms;
                const double t = nzi_wtime();
                NZI_TRY(hash_drain_array(st, M->host.csr.col_indices + off[r0], st->slot_col[s],
                                    off[r1] - off[r0], NZI_INDEX_BYTES));
                NZI_TRY(hash_drain_array(st, (Value *)M->host.csr.values + off[r0], st->slot_val[s],
                                    off[r1] - off[r0], sizeof(Value)));
                *drain_seconds += nzi_wtime() - t;
            }
        }
        if (p == panels) break;
        const int s = (int)(p % slots);
        args.c_base = off[st->h_panel_starts[p]];
        args.c_col = (int32_t *)st->slot_col[s];
        args.c_val = (Value *)st->slot_val[s];
        NZI_CUDA_TRY(ctx, cudaEventRecord(st->numeric_start[s], cs->stream));
        NZI_TRY((hash_run_bins<Value, true>(st, args, p, n, dense_count)));
        NZI_CUDA_TRY(ctx, cudaEventRecord(st->numeric_stop[s], cs->stream));
        NZI_CUDA_TRY(ctx, cudaEventRecord(st->computed[s], cs->stream));
        NZI_CUDA_TRY(ctx, cudaStreamWaitEvent(st->copy_stream, st->computed[s], 0));
    }
    return NZ_SUCCESS;
}

/* Device bytes held for the whole call: A and B (host ones uploaded; device ones already count
 * as used memory, except widened row offsets), C's row offsets, the row lists, the scan's
 * workspace, the symbolic counters. */
static size_t resident_bytes(const nz_matrix_t *A, const nz_matrix_t *B, size_t entry_bytes,
                             size_t scan) {
    const bool on_device = A->location == NZ_DEVICE;
    const int64_t m = A->rows;
    size_t a_bytes = (size_t)(m + 1) * NZI_OFFSET_BYTES + (on_device ? 0 : (size_t)A->nnz * entry_bytes);
    size_t b_bytes = B == A ? 0
                            : (size_t)(B->rows + 1) * NZI_OFFSET_BYTES +
                                  (on_device ? 0 : (size_t)B->nnz * entry_bytes);
    if (on_device && A->device.offset_type == NZ_I64) a_bytes = 0;
    if (on_device && B->device.offset_type == NZ_I64) b_bytes = 0;
    return a_bytes + b_bytes + (size_t)(m + 1) * NZI_OFFSET_BYTES + (size_t)m * NZI_INDEX_BYTES +
           scan + RESIDENT_SLACK_BYTES;
}

/* C when there are no products: nothing for the GPU. */
static nz_status_t empty_result(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                                int64_t n) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *M = NULL;
    const int64_t m = A->rows;
    if (A->location == NZ_DEVICE) {
        NZI_CHECK(hash_device_result(ctx, &M, A->value_type, m, n, 0, NULL));
        NZI_CHECK(nz_cuda_memset(ctx, M->device.row_offsets, 0, (size_t)(m + 1) * NZI_OFFSET_BYTES));
        NZI_CUDA_CHECK(ctx, cudaStreamSynchronize(nzi_cuda(ctx)->stream));
    } else {
        NZI_CHECK(nzi_csr_alloc(ctx, &M, A->value_type, m, n, 0));
        memset(M->host.csr.row_offsets, 0, (size_t)(m + 1) * sizeof(int64_t));
    }
    *C = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

/* The call's scratch on the device: C's row offsets (a device C keeps them), the row lists, the
 * scan's workspace, the bin counters (and their host copy). */
static nz_status_t alloc_scratch(hash_state_t *st, int64_t m) {
    nz_context_t *ctx = st->ctx;
    NZI_TRY(nzi_cuda_malloc_async(ctx, (void **)&st->c_off, (size_t)(m + 1) * NZI_OFFSET_BYTES,
                                  "nz_spgemm (hash): C row offsets"));
    NZI_TRY(nzi_cuda_malloc_async(ctx, (void **)&st->lists, (size_t)m * NZI_INDEX_BYTES,
                                  "nz_spgemm (hash): row bins"));
    NZI_TRY(nzi_cuda_malloc_async(ctx, &st->scan_work, st->scan_bytes > 0 ? st->scan_bytes : 1,
                                  "nz_spgemm (hash): scan"));
    st->counters_bytes = hash_counter_entries(NUM_BINS) * COUNTER_BYTES;
    NZI_TRY(nzi_cuda_malloc_async(ctx, (void **)&st->counters, st->counters_bytes,
                                  "nz_spgemm (hash): bin counters"));
    return nzi_alloc_array(ctx, (void **)&st->h_counts, hash_counter_entries(NUM_BINS),
                           sizeof(int64_t), "nz_spgemm (hash): bin counts");
}

/* What the panels of a host C need on the device: the copy stream of their own when there are
 * several (the drain of panel p overlaps the computation of panel p + 1); without one binning,
 * the panel starts and counters for a binning per (panel, bin) pair; the slots of cap entries. */
template <typename Value>
static nz_status_t alloc_panels(hash_state_t *st, int64_t panels, int64_t cap, bool one_binning) {
    nz_context_t *ctx = st->ctx;
    if (panels > 1) {
        NZI_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&st->copy_stream, cudaStreamNonBlocking));
        st->own_copy_stream = true;
    }
    if (!one_binning) {
        NZI_TRY(nzi_cuda_malloc_async(ctx, (void **)&st->panel_starts,
                                      (size_t)(panels + 1) * NZI_OFFSET_BYTES,
                                      "nz_spgemm (hash): panels"));
        NZI_TRY(nz_cuda_memcpy(ctx, st->panel_starts, st->h_panel_starts,
                               (size_t)(panels + 1) * NZI_OFFSET_BYTES, NZI_H2D));
        free_device(ctx, (void **)&st->counters);
        nzi_free(ctx, st->h_counts);
        st->h_counts = NULL;
        st->counters_bytes = hash_counter_entries(panels * NUM_BINS) * COUNTER_BYTES;
        NZI_TRY(nzi_cuda_malloc_async(ctx, (void **)&st->counters, st->counters_bytes,
                                      "nz_spgemm (hash): bin counters"));
        NZI_TRY(nzi_alloc_array(ctx, (void **)&st->h_counts,
                                hash_counter_entries(panels * NUM_BINS), sizeof(int64_t),
                                "nz_spgemm (hash): bin counts"));
    }
    for (int s = 0; s < (panels > 1 ? 2 : 1); s++) {
        NZI_TRY(nzi_cuda_malloc_async(ctx, &st->slot_col[s], (size_t)cap * NZI_INDEX_BYTES,
                                      "nz_spgemm (hash): C panel"));
        NZI_TRY(nzi_cuda_malloc_async(ctx, &st->slot_val[s], (size_t)cap * sizeof(Value),
                                      "nz_spgemm (hash): C panel"));
    }
    return NZ_SUCCESS;
}

/* The numeric phase's binning of the rows by their exact lengths, per panel; its time counts as
 * numeric time (*numeric_seconds, timed with the symbolic phase's events). */
static nz_status_t numeric_binning(hash_state_t *st, int64_t m, int64_t n, int max_bin,
                                   int dense_from, int64_t panels, double *numeric_seconds) {
    nz_context_t *ctx = st->ctx;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    float ms = 0.0f;
    NZI_CUDA_TRY(ctx, cudaEventRecord(st->sym_start, cs->stream));
    NZI_TRY(hash_bin_rows<true>(st, m, n, max_bin, dense_from, panels, NULL));
    NZI_CUDA_TRY(ctx, cudaEventRecord(st->sym_stop, cs->stream));
    NZI_CUDA_TRY(ctx, cudaEventSynchronize(st->sym_stop));
    NZI_CUDA_TRY(ctx, cudaEventElapsedTime(&ms, st->sym_start, st->sym_stop));
    *numeric_seconds += 1e-3 * (double)ms;
    return NZ_SUCCESS;
}

/* A host C after the symbolic phase: *M with C's row offsets, the panels planned in what the
 * budget leaves (avail), their buffers, the numeric phase panel by panel with the drains; the
 * call's times into info (upload_seconds: the operands' transfer). *M is the caller's to free
 * after an error. */
template <typename Value>
static nz_status_t host_output(hash_state_t *st, nz_matrix_t **M, const nz_matrix_t *A,
                               int64_t n, int64_t nnz, size_t avail, bool one_binning,
                               int max_bin, int dense_from, int64_t symbolic_huge,
                               hash_args<Value> args, double upload_seconds,
                               nz_spgemm_info_t *info) {
    nz_context_t *ctx = st->ctx;
    const int64_t m = A->rows;
    const size_t entry_bytes = NZI_INDEX_BYTES + sizeof(Value);
    int64_t panels = 1, dense_count = 0, cap = 0;
    double drain_seconds = 0.0, numeric_seconds = 0.0;
    NZI_TRY(nzi_csr_alloc(ctx, M, A->value_type, m, n, nnz));
    {
        const double t = nzi_wtime();
        NZI_TRY(nz_cuda_memcpy(ctx, (*M)->host.csr.row_offsets, st->c_off,
                               (size_t)(m + 1) * NZI_OFFSET_BYTES, NZI_D2H));
        drain_seconds += nzi_wtime() - t;
    }
    NZI_TRY(plan_panels<Value>(st, (*M)->host.csr.row_offsets, m, n, nnz, max_bin, dense_from,
                               one_binning, symbolic_huge, avail, &dense_count, &panels, &cap));
    info->panels = panels;
    one_binning = one_binning && panels == 1;
    NZI_TRY(alloc_panels<Value>(st, panels, cap, one_binning));
    mark(st, "output+slots");
    NZI_TRY(hash_staging_alloc(st, (size_t)nnz * entry_bytes));
    if (!one_binning)
        NZI_TRY(numeric_binning(st, m, n, max_bin, dense_from, panels, &numeric_seconds));
    NZI_TRY(numeric_panels<Value>(st, *M, args, panels, n, dense_count, &numeric_seconds,
                                  &drain_seconds));
    mark(st, "numeric+drain");
    info->numeric_seconds = numeric_seconds;
    info->transfer_seconds = upload_seconds + drain_seconds;
    info->stage_seconds_sum =
        upload_seconds + info->symbolic_seconds + numeric_seconds + drain_seconds;
    return NZ_SUCCESS;
}

/* The call: the budget and what stays resident, the operands on the device, the symbolic phase,
 * then C on the device (in core) or on the host (in panels). */
template <typename Value>
static nz_status_t hash_spgemm(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                               const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                               nz_spgemm_info_t *info, nz_spgemm_profile_t *profile) {
    nz_status_t status = NZ_SUCCESS;
    nzi_cuda_state_t *cs = nzi_cuda(ctx);
    const int64_t m = A->rows, n = B->cols;
    const size_t vs = sizeof(Value), entry_bytes = NZI_INDEX_BYTES + vs;
    nz_matrix_t *M = NULL;
    const bool on_device = A->location == NZ_DEVICE; /* device A, B in: device C out */
    hash_state_t st;
    hash_args<Value> args;
    size_t budget = 0, used = 0;
    int64_t nnz = 0, symbolic_huge = 0;
    bool one_binning = false;
    double upload_seconds = 0.0, numeric_seconds = 0.0;
    const int max_bin_sym = hash_max_shared_bin(cs, false, vs);
    const int max_bin_num = hash_max_shared_bin(cs, true, vs);
    const int dense_from = hash_dense_from_bin(ctx, n, max_bin_num);

    memset(&st, 0, sizeof st);
    memset(&args, 0, sizeof args);
    st.ctx = ctx;
    st.rank = hash_rank_sort_mode(ctx);
    st.sweep = hash_sweep_width(ctx, B);
    st.profile = profile;
    st.timeline = profile != NULL && (profile->flags & NZ_SPGEMM_PROFILE_STAGES);
    st.profile_bins = profile != NULL && (profile->flags & NZ_SPGEMM_PROFILE_BINS);
    mark(&st, "start");
    info->panels = 1;
    if (m == 0 || n == 0 || A->nnz == 0 || B->nnz == 0) return empty_result(ctx, C, A, n);
    NZI_CHECK(nzi_device_memory_budget(ctx, opt->gpu_memory_limit, &budget));
    NZI_CHECK(scan_bytes(ctx, m, &st.scan_bytes));
    mark(&st, "budget");
    used = resident_bytes(A, B, entry_bytes, st.scan_bytes);
    if (used > budget) {
        status = nzi_error(ctx, NZ_ERR_DEVICE_OUT_OF_MEMORY,
                           "nz_spgemm (hash): A, B and C's row offsets need %zu bytes on the "
                           "device, more than the budget of %zu bytes",
                           used, budget);
        goto cleanup;
    }
    st.copy_stream = cs->stream; /* a stream of its own once there are panels to overlap */
    NZI_CHECK(hash_create_events(&st));
    mark(&st, "events");
    NZI_CHECK(attach_operands<Value>(&st, A, B, &args, &upload_seconds));
    mark(&st, "operands");
    NZI_CHECK(alloc_scratch(&st, m));
    args.c_off = st.c_off;
    one_binning = hash_small_product(ctx, A, B);
    mark(&st, "scratch");
    NZI_CHECK(symbolic_phase<Value>(&st, args, m, n, one_binning ? max_bin_num : max_bin_sym,
                                    one_binning ? dense_from : hash_symbolic_dense_from(ctx, dense_from),
                                    budget - used, &nnz, &symbolic_huge, info));
    mark(&st, "symbolic");

    if (on_device) {
        NZI_CHECK((hash_device_numeric<Value>(&st, &M, A, n, nnz, budget, used, one_binning,
                                              max_bin_num, dense_from, args, &numeric_seconds)));
        mark(&st, "numeric");
        info->numeric_seconds = numeric_seconds;
        info->transfer_seconds = 0.0;
        info->stage_seconds_sum = info->symbolic_seconds + numeric_seconds;
    } else {
        NZI_CHECK(host_output<Value>(&st, &M, A, n, nnz, budget - used, one_binning, max_bin_num,
                                     dense_from, symbolic_huge, args, upload_seconds, info));
    }
    *C = M;
    M = NULL;

cleanup:
    hash_state_release(&st);
    mark(&st, "release");
    if (status == NZ_SUCCESS)
        hash_fill_profile(&st, on_device ? NULL : (*C)->host.csr.row_offsets, m, max_bin_num, dense_from);
    nzi_matrix_free(M);
    return status;
}

extern "C" nz_status_t nzi_spgemm_hash(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                                       const nz_matrix_t *B, const nz_spgemm_options_t *opt,
                                       nz_spgemm_info_t *info, nz_spgemm_profile_t *profile) {
    NZI_TRY(nzi_cuda_enter(ctx));
    if (A->value_type == NZ_F32) return hash_spgemm<float>(ctx, C, A, B, opt, info, profile);
    return hash_spgemm<double>(ctx, C, A, B, opt, info, profile);
}
