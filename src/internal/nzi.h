/* nzi.h: definitions shared inside the library: context, matrix and plan layouts, helpers. */
#ifndef NZI_H
#define NZI_H

#include "nonzero.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NZI_CONTEXT_MAGIC 0x4e5a435458000001ull /* "NZCTX" */
#define NZI_MATRIX_MAGIC  0x4e5a4d4154000001ull /* "NZMAT" */
#define NZI_PLAN_MAGIC    0x4e5a504c4e000001ull /* "NZPLN" */
#define NZI_DEAD_MAGIC    0xdeaddeaddeaddeadull

#define NZI_MESSAGE_SIZE 512

/* Every SpMV plan flag nz_spmv_plan_create and nz_spmv_plan_choose accept. */
#define NZI_SPMV_PLAN_FLAGS                                                                    \
    (NZ_PLAN_DETERMINISTIC | NZ_PLAN_TUNE | NZ_PLAN_MIXED | NZ_PLAN_CACHE_HINTS |               \
     NZ_PLAN_LIGHT_PER_ROW | NZ_PLAN_REUSE | NZI_PLAN_LAYOUTS)
/* Internal plan flag, never accepted from a caller: the planner added the layout itself, so the
 * backend refuses it (NZ_ERR_UNSUPPORTED) where its build shows it would not pay, and the planner
 * keeps the algorithm without it (compressed indices: too few segments fit 16 bits). */
#define NZI_PLAN_IF_PAYS 0x80000000u
/* Compressed indices (16-bit column offsets from a base per row, or per 32 nonzeros for
 * 32-lane rows) pay where at least this share of the nonzeros has them: the others cost their
 * 2-byte offsets on top of their 32-bit indices. */
#define NZI_SEGMENTS_MIN_NARROW_SHARE 0.8
/* Products with at least this many nonzeros (and hot_cols_min columns) get
 * nz_matrix_stats_t.hot_share in a device plan's statistics (nzi_plan_row_stats: a column count
 * and a sort, src/cuda/runtime/plan_timing.cu) and may get the planner's hot-columns rule
 * (src/plan/planner.c); smaller ones are launch-bound or L2-resident, where renumbering's extra
 * gather of x costs more than it saves. */
#define NZI_HOT_NNZ_MIN 1048576.0
/* The plan layouts (GPU csr, op N, one at a time): src/cuda/spmv/spmv_csr_layout.cu. */
#define NZI_PLAN_LAYOUTS (NZ_PLAN_COLUMN_PANELS | NZ_PLAN_REORDER | NZ_PLAN_COMPRESS_INDICES)

struct nz_context {
    uint64_t magic;
    char message[NZI_MESSAGE_SIZE];
    int threads;
    nz_tunables_t tunables; /* nz_context_set_tunables; read at plan setup */
    size_t memory_budget;  /* 0: the default (nz_context_set_memory_budget) */
    /* allocation accounting */
    int64_t live_blocks, live_bytes, total_allocs, failed_allocs;
    int64_t device_bytes, peak_device_bytes;
    int64_t fail_countdown; /* > 0: the allocation that brings it to 0 fails */
    /* seconds of the current nz_spgemm_profile call spent only on its profile's measurements
     * (probes of the host's rates): left out of its wall time (src/ops/spgemm.c) */
    double profile_probe_seconds;
    /* CUDA binding (device < 0: none) */
    int device;
    void *stream;          /* cudaStream_t */
    int owns_stream;
    void *cuda;            /* backend state (struct nzi_cuda_state), NULL when unbound */
    char device_name[160];
};

/* ---- errors ---------------------------------------------------------------------------- */

/* Record a formatted message on ctx (ctx may be NULL) and return status. */
nz_status_t nzi_error(nz_context_t *ctx, nz_status_t status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void nzi_clear_error(nz_context_t *ctx);

/* Validate a context handle: NZ_ERR_NULL_ARGUMENT / NZ_ERR_INVALID_HANDLE. */
nz_status_t nzi_check_context(const nz_context_t *ctx);

/* Propagate: evaluate, return the status if it is an error. For functions without cleanup. */
#define NZI_TRY(expr)                                                                           \
    do {                                                                                        \
        nz_status_t nzi_try_status_ = (expr);                                                   \
        if (nzi_try_status_ < 0) return nzi_try_status_;                                        \
    } while (0)

/* With a cleanup label: `status` and `cleanup:` must exist in the function. */
#define NZI_CHECK(expr)                                                                         \
    do {                                                                                        \
        status = (expr);                                                                        \
        if (status < 0) goto cleanup;                                                           \
    } while (0)

/* ---- CUDA architectures ------------------------------------------------------------------- */

/* 2: arch_list (CMAKE_CUDA_ARCHITECTURES syntax) has machine code for compute capability
 * major.minor, 1: only PTX the driver can JIT, 0: nothing that runs there, -1: unreadable list
 * ("native", "all"). Pure host logic (cuda_arch.c), unit-tested without a GPU. */
int nzi_cuda_arch_code(const char *arch_list, int major, int minor);

/* ---- allocation (all host memory of library objects goes through these) ---------------- */

/* Threads for a parallel loop: the context's setting, else OpenMP's default (1 without OpenMP),
 * clamped to nzi_thread_limit(). */
int nzi_context_threads(const nz_context_t *ctx);
/* The most threads a parallel region may use: the online CPUs (sysconf(_SC_NPROCESSORS_ONLN),
 * read once), at most NZ_MAX_THREADS (context.c). */
int nzi_thread_limit(void);
/* A thread setting (0: OpenMP's default, omp_get_max_threads) clamped to 1 .. nzi_thread_limit(). */
int nzi_resolve_threads(int threads);

void *nzi_malloc(nz_context_t *ctx, size_t bytes);
void *nzi_calloc(nz_context_t *ctx, size_t count, size_t size);
void nzi_free(nz_context_t *ctx, void *ptr);
/* Resize a block from nzi_malloc (contents kept); NULL on failure, the old block untouched. */
void *nzi_realloc(nz_context_t *ctx, void *ptr, size_t bytes);
/* memcpy of `bytes` split over up to 8 OpenMP threads (the context's thread setting, 0 = the
 * OpenMP default) when it is large: the first touch of fresh destination pages (page faults)
 * and the copy itself then proceed in parallel. One thread below 8 MB. */
void nzi_parallel_memcpy(const nz_context_t *ctx, void *dst, const void *src, size_t bytes);
/* The same copy on exactly `threads` OpenMP threads (<= 0: OpenMP's default), each a contiguous
 * page-rounded part; one thread below 1 MB. For callers that split the threads themselves. */
void nzi_parallel_memcpy_threads(void *dst, const void *src, size_t bytes, int threads);
/* Allocate count x size bytes into *ptr. Returns NZ_ERR_OVERFLOW or NZ_ERR_OUT_OF_MEMORY (with a
 * message naming `what`) and leaves *ptr untouched on failure. */
nz_status_t nzi_alloc_array(nz_context_t *ctx, void **ptr, size_t count, size_t size, const char *what);
/* Called by the device allocator so injection and accounting cover device memory too.
 * Returns false if this allocation must fail (injected). */
bool nzi_account_alloc(nz_context_t *ctx, size_t bytes, bool device);
void nzi_account_free(nz_context_t *ctx, size_t bytes, bool device);

/* Refuse (NZ_ERR_OUT_OF_MEMORY, message naming `what` and the bytes needed and how to raise the
 * budget) when `bytes` (computed in floating point, so it cannot overflow) exceeds the
 * context's memory budget. Call before allocating from declared dimensions. */
nz_status_t nzi_check_budget(nz_context_t *ctx, double bytes, const char *what);

/* ---- overflow-checked size arithmetic -------------------------------------------------- */

static inline bool nzi_mul_overflow_size(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a) return true;
    *out = a * b;
    return false;
}
static inline bool nzi_mul_overflow_i64(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return true;
    if (a != 0 && b > INT64_MAX / a) return true;
    *out = a * b;
    return false;
}
static inline bool nzi_add_overflow_i64(int64_t a, int64_t b, int64_t *out) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return true;
    *out = a + b;
    return false;
}

/* True if the byte ranges [a, a + a_bytes) and [b, b + b_bytes) overlap (empty ranges never do).
 * Host and device pointers alike: compared as addresses, no CUDA call. */
static inline bool nzi_ranges_overlap(const void *a, size_t a_bytes, const void *b, size_t b_bytes) {
    if (a == NULL || b == NULL || a_bytes == 0 || b_bytes == 0) return false;
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

static inline size_t nzi_value_size(nz_value_type_t t) { return t == NZ_F32 ? 4u : 8u; }
static inline bool nzi_valid_value_type(int t) { return t == NZ_F32 || t == NZ_F64; }

/* ---- matrices --------------------------------------------------------------------------- */

/* Host layouts. Padding entries (ELL, SELL, HYB's ELL part) have column index -1, value 0. */
typedef struct nzi_csr {
    int64_t *row_offsets;   /* rows + 1 */
    int32_t *col_indices;   /* nnz, sorted within each row, no duplicates */
    void *values;           /* nnz */
} nzi_csr_t;

typedef struct nzi_coo {
    int32_t *row_indices, *col_indices; /* sorted by (row, col) */
    void *values;
} nzi_coo_t;

typedef struct nzi_ell {
    int64_t width;          /* entries per row */
    int32_t *col_indices;   /* rows x width, column-major: entry k of row i at k * rows + i */
    void *values;
} nzi_ell_t;

typedef struct nzi_sell {
    int chunk;              /* C */
    int sigma;              /* sorting window (rows); 1 = no sorting */
    int64_t num_chunks;     /* ceil(rows / C) */
    int64_t *chunk_offsets; /* num_chunks + 1: start of each chunk in col_indices / values */
    int32_t *chunk_widths;  /* num_chunks */
    int32_t *row_of_slot;   /* num_chunks * C: original row for each slot (-1 past the end) */
    int32_t *col_indices;   /* within a chunk column-major: entry k of slot s at off + k*C + s */
    void *values;
} nzi_sell_t;

typedef struct nzi_hyb {
    nzi_ell_t ell;          /* first ell.width entries of each row */
    int64_t coo_nnz;        /* the rest, COO sorted by row */
    nzi_coo_t coo;
} nzi_hyb_t;

typedef struct nzi_bsr {
    int block;              /* b */
    int64_t block_rows, block_cols, num_blocks;
    int64_t *block_row_offsets; /* block_rows + 1 */
    int32_t *block_col_indices; /* num_blocks */
    void *values;           /* num_blocks x b x b, each block row-major */
} nzi_bsr_t;

typedef struct nzi_dia {
    int64_t num_diagonals;
    int64_t *offsets;       /* j - i of each diagonal, ascending */
    void *values;           /* num_diagonals x rows: diagonal d, row i at d * rows + i */
} nzi_dia_t;

/* Device CSR (the CUDA backend may add more formats through `extra`). */
typedef struct nzi_device_csr {
    nz_index_type_t offset_type;
    void *row_offsets;      /* int32 or int64 */
    int32_t *col_indices;
    void *values;
    bool borrowed;          /* wrapped caller arrays: never freed */
} nzi_device_csr_t;

struct nz_matrix {
    uint64_t magic;
    nz_context_t *ctx;
    nz_format_t format;
    nz_value_type_t value_type;
    nz_location_t location;
    int64_t rows, cols, nnz;
    double transfer_seconds;
    union {
        nzi_csr_t csr;      /* CSR; CSC uses the same arrays for the transpose */
        nzi_coo_t coo;
        nzi_ell_t ell;
        nzi_sell_t sell;
        nzi_hyb_t hyb;
        nzi_bsr_t bsr;
        nzi_dia_t dia;
    } host;
    /* location == NZ_DEVICE: CSR lives in `device`; every other format keeps the host layout
     * of the union above with DEVICE pointers in it (same struct, same meaning), allocated and
     * freed by the CUDA backend. */
    nzi_device_csr_t device;
    void *device_extra;         /* backend-owned extras (e.g. a cached transpose) */
    int64_t device_stored;      /* device SELL: chunk_offsets[num_chunks], which lives on the
                                   device (nz_matrix_info reads this instead) */
    /* nz_matrix_wrap_csr: host.csr.col_indices and values are the caller's (never written, never
     * freed); so is host.csr.row_offsets when host_offsets_borrowed (int64 offsets wrapped as
     * they are; int32 offsets are widened into an owned copy). */
    bool host_borrowed;
    bool host_offsets_borrowed;
    /* A number no other matrix of this process had (nzi_matrix_new): how a plan knows the C it
     * made when the caller hands it back, even where a freed matrix's address is reused. */
    uint64_t serial;
};

/* Validate a matrix handle (and optionally its location). */
nz_status_t nzi_check_matrix(nz_context_t *ctx, const nz_matrix_t *A, const char *name);

/* Allocate an empty matrix object (zeroed arrays) of the given kind. */
nz_status_t nzi_matrix_new(nz_context_t *ctx, nz_matrix_t **A, nz_format_t format,
                           nz_value_type_t value_type, int64_t rows, int64_t cols, int64_t nnz);
/* Allocate CSR arrays for (rows, nnz) on a new host CSR matrix. */
nz_status_t nzi_csr_alloc(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t value_type,
                          int64_t rows, int64_t cols, int64_t nnz);
/* Free the host arrays of a matrix (any format) and the object. */
void nzi_matrix_free(nz_matrix_t *A);

/* Check dims are representable (rows, cols <= INT32_MAX, >= 0). */
nz_status_t nzi_check_dims(nz_context_t *ctx, int64_t rows, int64_t cols, const char *what);
/* What every constructor of a matrix checks first (matrix.c; the generators too): a valid
 * context, its last error then cleared, a non-NULL output handle A, a valid value type. */
nz_status_t nzi_check_new_matrix(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t value_type,
                                 const char *what);
/* The Q1 FE problem's unknowns for n elements per side, (n - 1)^3, into *rows: n >= 2, no
 * overflow, within nzi_check_dims (gen_fe3d.c; the host and the GPU assembly check alike). */
nz_status_t nzi_fe3d_unknowns(nz_context_t *ctx, int64_t n, const char *what, int64_t *rows);

/* Sort columns within each row and sum duplicates of a host CSR matrix in place (the library's
 * own arrays only). nnz may shrink. */
nz_status_t nzi_csr_canonicalize(nz_context_t *ctx, nz_matrix_t *A);

/* ---- format conversion helpers (src/format/convert*.c, transpose.c) ---------------------- */

/* *csr = A itself when A is a host CSR matrix; otherwise a new host CSR copy, also returned in
 * *owned for the caller to free with nzi_matrix_free (*owned = NULL when A is used directly). */
nz_status_t nzi_as_csr(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t **csr,
                       nz_matrix_t **owned);
/* Re-compress a host CSR or CSC matrix along its other dimension (counting sort, O(nnz + rows +
 * cols), indices come out sorted): CSR A -> CSR of A^T (format NZ_FORMAT_CSR) or CSC of A
 * (NZ_FORMAT_CSC); CSC A -> CSR of A (NZ_FORMAT_CSR). */
nz_status_t nzi_compressed_transpose(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                                     nz_format_t format);
/* A^T of a host matrix of any format as a new host CSR matrix (CSC: a copy of its arrays). */
nz_status_t nzi_host_transpose(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A);

/* Value access helpers for code that handles both types at run time (not for hot loops). */
static inline double nzi_get(const void *values, nz_value_type_t t, int64_t k) {
    return t == NZ_F32 ? (double)((const float *)values)[k] : ((const double *)values)[k];
}
static inline void nzi_set(void *values, nz_value_type_t t, int64_t k, double v) {
    if (t == NZ_F32)
        ((float *)values)[k] = (float)v;
    else
        ((double *)values)[k] = v;
}

/* ---- timing ------------------------------------------------------------------------------ */
double nzi_wtime(void); /* monotonic seconds */

/* ---- algorithm names (src/core/alg_names.c) ------------------------------------------------ */
/* The index-th algorithm of the name table (0: NZ_ALG_AUTO, then every algorithm in enum order);
 * NZ_ALG_AUTO past the end, so `for (i = 1; nzi_alg_at(i) != NZ_ALG_AUTO; i++)` visits each. */
nz_alg_t nzi_alg_at(int index);

/* ---- deterministic random numbers (splitmix64 seeding xoshiro256**) --------------------- */
typedef struct nzi_rng { uint64_t s[4]; } nzi_rng_t;
void nzi_rng_seed(nzi_rng_t *rng, uint64_t seed);
uint64_t nzi_rng_next(nzi_rng_t *rng);
double nzi_rng_uniform(nzi_rng_t *rng);              /* [0, 1) */
int64_t nzi_rng_below(nzi_rng_t *rng, int64_t bound); /* [0, bound) */

#ifdef __cplusplus
}
#endif

#endif /* NZI_H */
