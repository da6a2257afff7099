/* hash.cuh: the hash SpGEMM's shared definitions: bins and their rules, the call's state, the phases' entry points. */
#ifndef NZI_SPGEMM_HASH_CUH
#define NZI_SPGEMM_HASH_CUH

#include "cuda_internal.h"
#include "spgemm_common.h"

/*
 * The hash algorithm (designed in the comment that opens hash_driver.cu) in six files:
 *   hash_binning.cu   products per row, rows binned per (panel, bin), every bin of a panel run;
 *   hash_tables.cu    the shared-memory hash tables of both phases (symbolic counts, numeric
 *                     accumulate-compact-sort), one kernel template per bin;
 *   hash_dense.cu     rows too long for shared memory (or cheaper dense): bitmaps and ranks;
 *   hash_device_c.cu  device A, B in, device C out (in core, no transfers);
 *   hash_choices.cu   the kernel variants: dense rule, row sort, sweep width, one binning;
 *   hash_driver.cu    the call: upload, symbolic phase, panels, numeric phase, drain.
 */

/* Shared-memory bins: bin b holds rows whose table needs at most 32 << b entries. The need of a
 * row is 1.5 x its bound (load factor <= 2/3 keeps linear probing short). */
#define SHARED_BINS 10
#define HUGE_BIN SHARED_BINS
#define NUM_BINS (SHARED_BINS + 1)
#define DENSE_BLOCK 1024 /* one block per dense row: the bitmap scan uses every thread */
#define BIN_BLOCK 256
#define SCAN_BLOCK 512   /* the one block that scans the (panel, bin) counts */
#define NARROW_BINS 4    /* bins 0..3 (groups of 4..32 lanes) have a narrow-sweep variant */
#define WARP_LANES 32
#define BITMAP_WORD_BITS 32 /* a dense bitmap is an array of uint32 words */
/* Device bytes of a hash table slot's key, of a bitmap word, of a counter. */
#define KEY_BYTES ((size_t)sizeof(int32_t))
#define WORD_BYTES ((size_t)sizeof(uint32_t))
#define COUNTER_BYTES ((size_t)sizeof(unsigned long long))
/* Allocation granularity of the device slots (a multiple of every element size, and of the
 * 256-byte alignment cudaMalloc gives). */
#define SLOT_ALIGN ((size_t)256)
/* Budget slack: room the panel sizing leaves for what it does not model one by one (CUB's
 * workspace of the offset scan, counters, the pool's rounding), and room for the resident
 * small allocations. */
#define BUDGET_SLACK_BYTES ((size_t)64 << 10)
#define RESIDENT_SLACK_BYTES ((size_t)4 << 10)

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

/* Device bytes of a row bin's tables (keys, and values in the numeric phase) and counts. */
static inline size_t shared_bytes(int bin, bool numeric, size_t value_size) {
    size_t table = (size_t)32 << bin, rows = (size_t)(bin_block[bin] / bin_group[bin]);
    return rows * table * (KEY_BYTES + (numeric ? value_size : 0)) + (rows + 1) * sizeof(int);
}


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

/* How the dense rows of a phase run: DENSE_RANKED (numeric: bitmap and prefixes in shared
 * memory), DENSE_SHARED_BITS (symbolic: bitmap in shared memory), else DENSE_GLOBAL (bitmap in
 * global slots; numeric with a global accumulator). */
#define DENSE_GLOBAL 0
#define DENSE_SHARED_BITS 1
#define DENSE_RANKED 2

static inline size_t round_up(size_t x) { return (x + SLOT_ALIGN - 1) & ~(SLOT_ALIGN - 1); }

#define HASH_MARKS 16

/* Everything one call holds, released in one place (hash_driver.cu, hash_state_release). */
typedef struct hash_state {
    nz_context_t *ctx;
    nz_matrix_t *dA, *dB;              /* device copies of host A, B (dB == dA when B is A) */
    int64_t *a_wide, *b_wide;          /* device A, B with int32 row offsets: widened copies */
    int64_t *c_off;                    /* rows + 1 */
    int32_t *lists;                    /* rows: the binned row lists */
    void *scan_work;                   /* CUB's workspace of the row-offset scan */
    size_t scan_bytes;
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
    /* the caller's profile (nz_spgemm_profile), or NULL */
    nz_spgemm_profile_t *profile;
    /* NZ_SPGEMM_PROFILE_BINS: every bin's launch timed alone (synchronising after each, so the
     * drain no longer overlaps), summed per phase and bin into the profile at the end */
    bool profile_bins;
    cudaEvent_t prof_start, prof_stop;
    double prof_ms[2][NUM_BINS];
    int64_t prof_rows[2][NUM_BINS];
    /* NZ_SPGEMM_PROFILE_STAGES: host wall-clock marks through the call (no extra
     * synchronisation); stage i of the profile is the time from mark i - 1 to mark i */
    bool timeline;
    int marks;
    const char *mark_name[HASH_MARKS];
    double mark_time[HASH_MARKS];
} hash_state_t;

static inline void mark(hash_state_t *st, const char *name) {
    if (!st->timeline || st->marks == HASH_MARKS) return;
    st->mark_name[st->marks] = name;
    st->mark_time[st->marks++] = nzi_wtime();
}

static inline void free_device(nz_context_t *ctx, void **p) {
    nz_cuda_free(ctx, *p, (size_t)-1);
    *p = NULL;
}

/* Small products (hash_small_product): at most ONEBIN_MAX_PRODUCTS products, counted on the host
 * when nnz(A) <= ONEBIN_MAX_NNZ; their bins also run side by side (hash_run_bins). */
#define ONEBIN_MAX_NNZ ((int64_t)1 << 18)
#define ONEBIN_MAX_PRODUCTS ((int64_t)1 << 22)

/* hash_choices.cu: the kernel variants (measured defaults, overridden by the context's
 * tunables spgemm_*, named NZ_TUNE_SPGEMM_* by nz_tunables_parse). */
int hash_dense_from_bin(const nz_context_t *ctx, int64_t cols, int max_bin);
int hash_rank_sort_mode(const nz_context_t *ctx);
int hash_sweep_width(const nz_context_t *ctx, const nz_matrix_t *B);
int hash_symbolic_dense_from(const nz_context_t *ctx, int dense_from);
bool hash_small_product(const nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B);

/* ---- the phases' entry points (explicitly instantiated for float and double) ------------- */

/* The call's state (hash_state.cu): release (streams drained first), a host operand's upload,
 * the events, the pinned staging halves (only where C is large enough to pay for pinning) and
 * the drain of a device array through them, the caller's profile. */
void hash_state_release(hash_state_t *st);
nz_status_t hash_upload(nz_context_t *ctx, nz_matrix_t **dM, const nz_matrix_t *M);
nz_status_t hash_create_events(hash_state_t *st);
nz_status_t hash_staging_alloc(hash_state_t *st, size_t c_bytes);
nz_status_t hash_drain_array(hash_state_t *st, void *host, const void *device, int64_t count,
                             size_t size);
void hash_fill_profile(const hash_state_t *st, const int64_t *off, int64_t m, int max_bin,
                       int dense_from);

/* hash_binning.cu: products per row of A B into c_off[row + 1] (c_off[0] = 0), their total
 * into the last counter, and the count of each row's bin under (max_bin, dense_from) into the
 * counters (zeroed by the caller). */
nz_status_t hash_count_products(hash_state_t *st, const int64_t *a_off, const int32_t *a_col,
                                const int64_t *b_off, int64_t rows, int64_t cols, int max_bin,
                                int dense_from);
/* hash_binning.cu: entries of the device counters of a binning with `pairs` (panel, bin) pairs. */
size_t hash_counter_entries(int64_t pairs);
/* hash_binning.cu: count rows per (panel, bin) pair, scan, fill the lists, read the counts and
 * starts back into st->h_counts (one synchronisation); `products` (symbolic phase): the total
 * that hash_count_products left. */
template <bool Numeric>
nz_status_t hash_bin_rows(hash_state_t *st, int64_t rows, int64_t cols, int max_bin,
                          int dense_from, int64_t panels, unsigned long long *products);
/* hash_binning.cu: launch every non-empty bin of one panel. */
template <typename Value, bool Numeric>
nz_status_t hash_run_bins(hash_state_t *st, const hash_args<Value> &args, int64_t panel,
                          int64_t cols, int64_t dense_count);
/* hash_tables.cu: one shared-memory bin's kernel. */
template <typename Value, bool Numeric>
nz_status_t hash_launch_bin(nz_context_t *ctx, cudaStream_t stream, int bin, int rank, int sweep,
                            const hash_args<Value> &args, const int32_t *rows, int64_t count);
/* hash_tables.cu: the largest shared bin whose table fits the device's shared memory. */
int hash_max_shared_bin(const nzi_cuda_state_t *cs, bool numeric, size_t value_size);
/* hash_dense.cu: the dense rows' slots (global bitmaps, accumulators) within `avail` bytes. */
template <typename Value>
nz_status_t hash_dense_slots(hash_state_t *st, int64_t huge_rows, int64_t cols, bool numeric,
                             size_t avail, int64_t *slots, size_t *slot_bytes);
/* hash_dense.cu: the dense rows of a panel. */
template <typename Value, bool Numeric>
nz_status_t hash_launch_dense(hash_state_t *st, cudaStream_t stream, const hash_args<Value> &args,
                              const int32_t *rows, int64_t count, int64_t cols,
                              int64_t dense_count);
/* hash_device_c.cu: device operands' int64 row offsets, and the device C's numeric phase. */
nz_status_t hash_device_offsets(nz_context_t *ctx, const nz_matrix_t *M, const int64_t **off,
                                int64_t **wide);
nz_status_t hash_device_result(nz_context_t *ctx, nz_matrix_t **C, nz_value_type_t vt, int64_t m,
                               int64_t n, int64_t nnz, int64_t *c_off);
template <typename Value>
nz_status_t hash_device_numeric(hash_state_t *st, nz_matrix_t **C, const nz_matrix_t *A,
                                int64_t n, int64_t nnz, size_t budget, size_t used,
                                bool one_binning, int max_bin, int dense_from,
                                hash_args<Value> args, double *numeric_seconds);

#endif /* NZI_SPGEMM_HASH_CUH */
