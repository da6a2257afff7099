/* nonzero/core.h: status codes, enumerations, context, tunables, memory. Part of <nonzero.h>. */
#ifndef NONZERO_CORE_H
#define NONZERO_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Status codes                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* The status every public function returns: NZ_SUCCESS (0), positive caveats (a result
 * with a warning, e.g. a solve that stopped short), negative errors; nz_status_string names
 * each, nz_context_last_error says what happened. */
typedef enum nz_status {
    NZ_SUCCESS = 0,
    /* Caveats (> 0): the call finished, read the caveat. */
    NZ_MAX_ITERATIONS = 1,          /* iterative solver stopped at its iteration limit */
    NZ_STAGNATED = 2,               /* iterative solver stopped where the true residual no longer
                                     * decreases (the attainable accuracy of the precision) above
                                     * the requested tolerance */

    /* Invalid arguments: -1 .. -19 */
    NZ_ERR_NULL_ARGUMENT = -1,      /* a required pointer was NULL */
    NZ_ERR_INVALID_ARGUMENT = -2,   /* a value out of its documented range */
    NZ_ERR_INVALID_HANDLE = -3,     /* freed, foreign or corrupted handle (bad magic) */
    NZ_ERR_DIMENSION_MISMATCH = -4, /* operand shapes do not agree */
    NZ_ERR_WRONG_LOCATION = -5,     /* host object where a device one is needed or vice versa */

    /* Invalid input data: -20 .. -39 */
    NZ_ERR_INVALID_MATRIX = -20,    /* structure is inconsistent (offsets, indices) */
    NZ_ERR_NOT_SORTED = -21,        /* an algorithm needs sorted column indices */

    /* Unsupported: -40 .. -59 */
    NZ_ERR_UNSUPPORTED = -40,       /* combination not implemented, or too large to represent */
    NZ_ERR_TOO_MUCH_PADDING = -41,  /* format conversion refused: padding exceeds the limit */
    NZ_ERR_NO_DEVICE = -42,         /* no CUDA device, or library built without CUDA */

    /* Resources: -60 .. -79 */
    NZ_ERR_OUT_OF_MEMORY = -60,     /* host allocation failed */
    NZ_ERR_DEVICE_OUT_OF_MEMORY = -61, /* device allocation failed */
    NZ_ERR_OVERFLOW = -62,          /* a size computation would overflow */

    /* Device errors: -80 .. -99 */
    NZ_ERR_DEVICE = -80,            /* a CUDA call or kernel launch failed */

    /* I/O and parsing: -100 .. -119 */
    NZ_ERR_IO = -100,               /* cannot open, read or write a file */
    NZ_ERR_PARSE = -101,            /* malformed file; the message names the line */

    /* Numerical: -120 .. -139 */
    NZ_ERR_BREAKDOWN = -120         /* solver breakdown (p'Ap <= 0, NaN) */
} nz_status_t;

/* A static string describing the status code (never NULL). */
const char *nz_status_string(nz_status_t status);

/* ------------------------------------------------------------------------------------------ */
/* Basic enumerations                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* Value types of matrices and vectors: float (NZ_F32) or double (NZ_F64). */
typedef enum nz_value_type { NZ_F32 = 1, NZ_F64 = 2 } nz_value_type_t;
/* Index widths. NZ_INDEX_AUTO (only where a function says so): 32-bit when the values fit,
 * else 64-bit. */
typedef enum nz_index_type { NZ_INDEX_AUTO = 0, NZ_I32 = 4, NZ_I64 = 8 } nz_index_type_t;

/* Sparse storage formats (nz_format_name / nz_format_from_name give their names). */
typedef enum nz_format {
    NZ_FORMAT_CSR = 0,
    NZ_FORMAT_CSC = 1,
    NZ_FORMAT_COO = 2,  /* sorted by row, then column; no duplicates */
    NZ_FORMAT_ELL = 3,  /* column-major, rows padded to the longest row */
    NZ_FORMAT_SELL = 4, /* SELL-C-sigma */
    NZ_FORMAT_HYB = 5,  /* ELL part + COO remainder */
    NZ_FORMAT_BSR = 6,  /* block CSR, square blocks of size b, blocks stored row-major */
    NZ_FORMAT_DIA = 7,  /* diagonals */
    NZ_FORMAT_COUNT = 8
} nz_format_t;

/* Where a matrix or an array lives: host memory or the context's GPU; and the backend that
 * runs an operation (the CPU with OpenMP, or CUDA). */
typedef enum nz_location { NZ_HOST = 0, NZ_DEVICE = 1 } nz_location_t;
typedef enum nz_backend { NZ_BACKEND_CPU = 0, NZ_BACKEND_CUDA = 1 } nz_backend_t;

/* SpMV algorithms. Which (format, algorithm, backend) triples exist: nz_spmv_list(). */
typedef enum nz_alg {
    NZ_ALG_AUTO = 0,         /* let the planner choose */
    NZ_ALG_SERIAL = 1,       /* CPU: one thread, the reference */
    NZ_ALG_PARALLEL = 2,     /* CPU: OpenMP over rows / chunks / block rows */
    NZ_ALG_SIMD = 3,         /* CPU: SELL chunk kernel vectorised over the chunk (C = 4 or 8) */
    NZ_ALG_SCALAR = 10,      /* GPU: one thread per row (CSR, ELL, SELL, DIA) */
    NZ_ALG_VECTOR = 11,      /* GPU: V threads per row (Bell & Garland) */
    NZ_ALG_LIGHT_VECTOR = 12,/* GPU: LightSpMV, vector-level dynamic row distribution */
    NZ_ALG_LIGHT_WARP = 13,  /* GPU: LightSpMV, warp-level dynamic row distribution */
    NZ_ALG_IPCSR = 14,       /* GPU: improved perfect CSR, row blocks staged in shared memory */
    NZ_ALG_ADAPTIVE = 15,    /* GPU: CSR-Adaptive (stream / vector / vectorL) */
    NZ_ALG_MERGE = 16,       /* GPU: merge-path (Merrill & Garland) */
    NZ_ALG_ATOMIC = 17,      /* GPU: COO atomic scatter */
    NZ_ALG_SEGMENTED = 18,   /* GPU: COO (and HYB remainder) segmented reduction */
    NZ_ALG_BSR_ROW = 19,     /* GPU: BSR, a warp per block row, block by block */
    NZ_ALG_BSR_COL = 20,     /* GPU: BSR, a warp per block row, column by column */
    NZ_ALG_TILES = 21,       /* GPU: CSR in row tiles, each tile's nonzeros sorted by column and
                                its sums in shared memory (atomics: not bitwise reproducible) */
    NZ_ALG_SPLIT = 22        /* GPU: nonzero-split CSR: equal runs of nonzeros a thread, row ends
                                as bit flags, a warp segmented scan */
} nz_alg_t;

/* Short lower-case name ("light-warp", "ipcsr", ...) or "unknown". */
const char *nz_alg_name(nz_alg_t alg);
/* Parse a name from nz_alg_name() ("auto" too). */
nz_status_t nz_alg_from_name(nz_alg_t *alg, const char *name);
/* Short lower-case name ("csr", "sell", ...) or "unknown". */
const char *nz_format_name(nz_format_t format);
nz_status_t nz_format_from_name(nz_format_t *format, const char *name);

/* ------------------------------------------------------------------------------------------ */
/* Context                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* A context: the error message, allocation accounting, threads, the bound GPU and its stream.
 * Every call takes one; a context is used by one thread at a time. */
typedef struct nz_context nz_context_t;

/* A CPU context. All host allocations of objects made from it go through its allocator. */
nz_status_t nz_context_create(nz_context_t **ctx);
/* Frees the context. Matrices and plans made from it must be destroyed first. */
nz_status_t nz_context_destroy(nz_context_t **ctx);

/* Bind the context to CUDA device `device` and stream `stream` (a cudaStream_t, NULL = a stream
 * the context creates and owns). NZ_ERR_NO_DEVICE without a device or without CUDA support. */
nz_status_t nz_context_set_device(nz_context_t *ctx, int device, void *stream);
/* Number of CUDA devices visible (0 when built without CUDA or none present). Never fails. */
int nz_device_count(void);
/* One line describing the bound device ("NVIDIA H100 80GB HBM3, 132 SMs, 50 MB L2"), or "cpu". */
const char *nz_context_device_name(const nz_context_t *ctx);

/* Most OpenMP threads a context may ask for. libgomp creates every requested thread (each with
 * its own stack), so absurd counts crash it: 100000 threads died with SIGSEGV inside libgomp and
 * 10^9 aborted the process. 1024 is above the hardware threads of any current single host
 * (the largest two-socket servers have 512), so no real machine is limited by it. */
#define NZ_MAX_THREADS 1024

/* OpenMP threads used by CPU kernels (0 = the OpenMP default). NZ_ERR_INVALID_ARGUMENT when
 * negative or above NZ_MAX_THREADS (the setting is then unchanged). A count above the machine's
 * online CPUs (sysconf(_SC_NPROCESSORS_ONLN)) is accepted and clamped to them: more threads never
 * speed a kernel up, and libgomp exits the process when it cannot create them (under an
 * address-space limit). The OpenMP default is clamped the same way. Small products run on one
 * thread whatever the setting (under 32768 multiply-adds: docs/PLANNER.md). */
nz_status_t nz_context_set_threads(nz_context_t *ctx, int threads);
/* The threads CPU kernels of the context use: the setting after clamping, or the (clamped)
 * OpenMP default for 0; 1 in a build without OpenMP. */
nz_status_t nz_context_get_threads(const nz_context_t *ctx, int *threads);

/* Performance tunables of the GPU kernels, one setting per context (read when a plan is made).
 * Each field is NZ_TUNE_AUTO (the library's own choice, the default) or one of the values listed;
 * a setting changes speed only: results stay correct, bitwise reproducible run to run where the
 * algorithm is, and may differ in the last bits between settings that change the summation order
 * (vector_width, vector_unroll, vector_warps). The spgemm_* fields choose variants of the hash
 * SpGEMM (docs/dev/SPGEMM.md says what each does and how the defaults were measured). */
#define NZ_TUNE_AUTO (-1)
typedef struct nz_tunables {
    int vector_width;            /* CSR-vector lanes per row: 2, 4, 8, 16, 32 (auto: from the mean
                                    row length) */
    int vector_unroll;           /* CSR-vector loads in flight per lane: 1, 2, 4, 8 (auto: 4, 8 on
                                    rows of mean >= 256; mixed precision always uses 4) */
    int adaptive_nnz_per_thread; /* CSR-Adaptive row-block nonzeros per thread: 4, 8, 16, 32
                                    (auto: 16; still capped by shared memory) */
    int spmm_long_row;           /* GPU SpMM rows at least this long are cut into pieces: 0 (no
                                    split), 16, 64, 256, 1024, 4096, 16384 (auto: from the work) */
    int column_panels;           /* NZ_PLAN_COLUMN_PANELS: panels 1..8 (auto: x's slice fits in
                                    a sixth of L2) */
    int spgemm_dense;            /* hash SpGEMM dense-row factor: 0 (only rows too long for shared
                                    memory go dense), 1, 2, 4, 8, 16, 32, 64 (auto: 4) */
    int spgemm_rank;             /* hash SpGEMM sort of the small numeric bins: 0 (bitonic), 1, 2
                                    (counting; auto: 2) */
    int spgemm_sweep;            /* hash SpGEMM sweep width of the small bins: 0, 1 (from B's mean
                                    row length), 2, 4, 8, 16, 32 (auto: 2) */
    int spgemm_symdense;         /* hash SpGEMM symbolic dense rule: 0, 1, 2 (auto: 1) */
    int spgemm_onebin;           /* hash SpGEMM one binning for small products: 0, 1 (auto: 1) */
    int vector_warps;            /* CSR-vector warps per row where 32 lanes run a row: 1, 2, 4, 8
                                    (auto: more than one only while the rows are too few to fill
                                    the device; mixed precision always uses 1) */
} nz_tunables_t;

/* *tunables = every field NZ_TUNE_AUTO. */
nz_status_t nz_tunables_default(nz_tunables_t *tunables);
/* Set one field from "NAME=value", NAME the field's environment-style name (NZ_TUNE_VECTOR_WIDTH,
 * NZ_TUNE_VECTOR_UNROLL, NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD, NZ_TUNE_SPMM_LONG, NZ_TUNE_PANELS,
 * NZ_TUNE_SPGEMM_DENSE, NZ_TUNE_SPGEMM_RANK, NZ_TUNE_SPGEMM_SWEEP, NZ_TUNE_SPGEMM_SYMDENSE,
 * NZ_TUNE_SPGEMM_ONEBIN, NZ_TUNE_VECTOR_WARPS) and value an allowed
 * number or "auto". NZ_ERR_INVALID_ARGUMENT for another name or value (*tunables unchanged). For
 * tools that map environment variables or options onto the tunables; the library reads no
 * environment. */
nz_status_t nz_tunables_parse(nz_tunables_t *tunables, const char *assignment);
/* The context's tunables (new contexts: all NZ_TUNE_AUTO). Set checks every field and changes
 * nothing when one is not allowed (NZ_ERR_INVALID_ARGUMENT, the message names it); plans made
 * before keep the setting they were made with. */
nz_status_t nz_context_set_tunables(nz_context_t *ctx, const nz_tunables_t *tunables);
nz_status_t nz_context_get_tunables(const nz_context_t *ctx, nz_tunables_t *tunables);

/* Memory budget for allocations driven by declared sizes: readers (Matrix Market, .nzb) and
 * generators check what a matrix would need (8 (rows + 1) bytes of row offsets plus
 * (4 + value size) per nonzero, a dense array rows x cols x value size, and the reader's
 * temporary copy of the entries) against it BEFORE allocating, and refuse with
 * NZ_ERR_OUT_OF_MEMORY and a message giving the bytes needed, so an 86-byte header declaring
 * 10^9 rows cannot allocate gigabytes. bytes = 0 restores the default: 3/4 of the physical
 * memory (sysconf(_SC_PHYS_PAGES) x sysconf(_SC_PAGESIZE)). SIZE_MAX means no limit. Other
 * allocations (conversions, plans, products) are not checked against it. */
nz_status_t nz_context_set_memory_budget(nz_context_t *ctx, size_t bytes);
/* The budget in effect (the default resolved to bytes); 0 for an invalid context. */
size_t nz_context_memory_budget(const nz_context_t *ctx);

/* The message of the last error on this context ("" if none). Valid until the next call. */
const char *nz_context_last_error(const nz_context_t *ctx);
/* Set the context's last-error message (truncated to the context's buffer) and return status:
 * for layers built on this API (nonzero_dist) that report errors through the context. */
nz_status_t nz_context_set_error(nz_context_t *ctx, nz_status_t status, const char *message);

/* Allocation accounting and failure injection (for tests). fail_after = k > 0 makes the k-th
 * allocation from now on (host or device) fail; 0 turns injection off. */
typedef struct nz_alloc_stats {
    int64_t live_blocks;      /* host + device blocks currently allocated */
    int64_t live_bytes;       /* their bytes */
    int64_t total_allocs;     /* allocations made since the context was created */
    int64_t failed_allocs;    /* allocations that failed (injected or real) */
    int64_t peak_device_bytes;/* high-water mark of device bytes */
} nz_alloc_stats_t;
nz_status_t nz_context_alloc_stats(const nz_context_t *ctx, nz_alloc_stats_t *stats);
nz_status_t nz_context_fail_alloc_after(nz_context_t *ctx, int64_t fail_after);

/* Memory the caller may use for vectors. nz_malloc / nz_free: host memory from the context's
 * allocator (also frees arrays the library returns, e.g. from nz_mm_read_dense). nz_device_*:
 * device memory on the context's device (NZ_ERR_NO_DEVICE on an unbound context):
 * nz_device_malloc / nz_device_free allocate and free, nz_device_memset sets bytes,
 * nz_device_copy_from_host copies host -> device and nz_device_copy_to_host device -> host
 * (destination first, as in memcpy; both return when the copy is complete). nz_device_copy
 * copies device -> device; like nz_device_memset it is queued on the context's stream, ordered
 * with the library's later work there (nz_context_synchronize waits for it). */
nz_status_t nz_malloc(nz_context_t *ctx, void **ptr, size_t bytes);
nz_status_t nz_free(nz_context_t *ctx, void *ptr);
nz_status_t nz_device_malloc(nz_context_t *ctx, void **ptr, size_t bytes);
nz_status_t nz_device_free(nz_context_t *ctx, void *ptr);
nz_status_t nz_device_memset(nz_context_t *ctx, void *dst, int byte, size_t bytes);
nz_status_t nz_device_copy_from_host(nz_context_t *ctx, void *device_dst, const void *host_src,
                                     size_t bytes);
nz_status_t nz_device_copy_to_host(nz_context_t *ctx, void *host_dst, const void *device_src,
                                   size_t bytes);
nz_status_t nz_device_copy(nz_context_t *ctx, void *device_dst, const void *device_src,
                           size_t bytes);
/* Wait for all work queued on the context's stream. */
nz_status_t nz_context_synchronize(nz_context_t *ctx);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_CORE_H */
