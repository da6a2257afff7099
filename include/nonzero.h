/* nonzero.h: the one public header of Nonzero, sparse linear algebra on NVIDIA GPUs and CPUs. */
#ifndef NONZERO_H
#define NONZERO_H

/*
 * Conventions
 * -----------
 * - Every function returns an nz_status_t (0 = success, > 0 = finished with a caveat, < 0 = error),
 *   except the few that return a string or a size and say so.
 * - Argument order: the first argument is the context (or the plan that carries it); then
 *   outputs; then inputs. Compute calls (execute, solve, spmv) keep BLAS order (x before y).
 *   Outputs that are handles come as a pointer to the handle. nz_*_destroy(&h) accepts NULL (and
 *   *h == NULL) and sets the handle to NULL.
 * - Caller arrays passed as `const` are never written. Functions named *_create_* COPY caller
 *   arrays; functions named *_wrap_* BORROW them (the caller keeps them alive and unchanged for the
 *   life of the handle). What the library allocates, the library frees.
 * - The library never prints and never exits. After an error, nz_context_last_error() names the
 *   object and the problem (for files: the path and the line).
 * - Indices: column (and COO row) indices are int32; row offsets are int64 on the host, and int32
 *   or int64 on the device. Matrices with more than 2^31 - 1 rows or columns are refused
 *   (NZ_ERR_UNSUPPORTED); more than 2^31 nonzeros are supported.
 * - Thread safety: a context and every matrix and plan made from it belong to one host thread at a
 *   time; calls on one context must not overlap (its allocation counters, last-error message and
 *   CUDA stream are not synchronised). Separate contexts may be used from separate threads at
 *   once: the library keeps no global mutable state. Exceptions: nz_spmv_execute on a CPU plan
 *   writes only y, so threads may execute plans of one context at the same time into distinct y
 *   (an error would race on the last-error message); nz_matrix_info and nz_matrix_csr_arrays
 *   (which write the context only on an error), nz_status_string, nz_*_name and nz_device_count
 *   may be called from any thread. Functions that take a const matrix never modify it.
 */

#include <stddef.h>
#include <stdint.h>

#include "nonzero_version.h" /* NZ_VERSION_MAJOR / _MINOR / _PATCH, NZ_VERSION_STRING */

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library actually loaded ("0.2.0"); compare with NZ_VERSION_STRING, the
 * version of the headers compiled against. Never fails. */
const char *nz_version(void);

/* ------------------------------------------------------------------------------------------ */
/* Status codes                                                                                */
/* ------------------------------------------------------------------------------------------ */

typedef enum nz_status {
    NZ_SUCCESS = 0,
    /* Caveats (> 0): the call finished, read the caveat. */
    NZ_MAX_ITERATIONS = 1,          /* iterative solver stopped at its iteration limit */

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

typedef enum nz_value_type { NZ_F32 = 1, NZ_F64 = 2 } nz_value_type_t;
/* Index widths. NZ_INDEX_AUTO (only where a function says so): 32-bit when the values fit,
 * else 64-bit. */
typedef enum nz_index_type { NZ_INDEX_AUTO = 0, NZ_I32 = 4, NZ_I64 = 8 } nz_index_type_t;

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
    NZ_ALG_BSR_COL = 20      /* GPU: BSR, a warp per block row, column by column */
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
 * negative or above NZ_MAX_THREADS (the setting is then unchanged). */
nz_status_t nz_context_set_threads(nz_context_t *ctx, int threads);

/* Performance tunables of the GPU kernels, one setting per context (read when a plan is made).
 * Each field is NZ_TUNE_AUTO (the library's own choice, the default) or one of the values listed;
 * a setting changes speed only: results stay correct, bitwise reproducible run to run where the
 * algorithm is, and may differ in the last bits between settings that change the summation order
 * (vector_width, vector_unroll). The spgemm_* fields choose variants of the hash SpGEMM
 * (docs/SPGEMM.md says what each does and how the defaults were measured). */
#define NZ_TUNE_AUTO (-1)
typedef struct nz_tunables {
    int vector_width;            /* CSR-vector lanes per row: 2, 4, 8, 16, 32 (auto: from the mean
                                    row length) */
    int vector_unroll;           /* CSR-vector loads in flight per lane: 1, 2, 4, 8 (auto: 4;
                                    mixed precision always uses 4) */
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
} nz_tunables_t;

/* *tunables = every field NZ_TUNE_AUTO. */
nz_status_t nz_tunables_default(nz_tunables_t *tunables);
/* Set one field from "NAME=value", NAME the field's environment-style name (NZ_TUNE_VECTOR_WIDTH,
 * NZ_TUNE_VECTOR_UNROLL, NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD, NZ_TUNE_SPMM_LONG, NZ_TUNE_PANELS,
 * NZ_TUNE_SPGEMM_DENSE, NZ_TUNE_SPGEMM_RANK, NZ_TUNE_SPGEMM_SWEEP, NZ_TUNE_SPGEMM_SYMDENSE,
 * NZ_TUNE_SPGEMM_ONEBIN) and value an allowed
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

/* ------------------------------------------------------------------------------------------ */
/* Matrices                                                                                    */
/* ------------------------------------------------------------------------------------------ */

typedef struct nz_matrix nz_matrix_t;

/* Create a host CSR matrix by COPYING caller arrays: row_offsets has rows + 1 entries of type
 * offset_type, col_indices and values have row_offsets[rows] entries. values may be NULL (all
 * ones, a pattern). The structure is validated (offsets monotone from 0, indices in range); the
 * error names the first bad row. Unsorted columns are sorted and duplicates summed. */
nz_status_t nz_matrix_create_csr(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                                 nz_index_type_t offset_type, const void *row_offsets,
                                 const int32_t *col_indices, nz_value_type_t value_type,
                                 const void *values);

/* Create a host CSR matrix from COO triplets (any order; duplicates summed; values NULL = ones). */
nz_status_t nz_matrix_create_coo(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                                 int64_t nnz, const int32_t *row_indices,
                                 const int32_t *col_indices, nz_value_type_t value_type,
                                 const void *values);

/* Wrap caller-owned host CSR arrays without copying them (O(rows) extra memory at most).
 * BORROWED: col_indices and values (row_offsets[rows] entries each), and row_offsets when
 * offset_type is NZ_I64, are never written and never freed; the caller keeps them alive and
 * unchanged while *A lives. NZ_I32 row offsets are widened into an owned int64 copy of rows + 1
 * entries (the library's host CSR keeps int64 offsets). The structure is validated in O(nnz):
 * offsets start at 0 and never decrease, column indices lie in [0, cols) (NZ_ERR_INVALID_MATRIX),
 * and columns must be strictly increasing within each row: unsorted columns or duplicates are
 * refused with NZ_ERR_NOT_SORTED (borrowed arrays cannot be sorted; nz_matrix_create_csr copies
 * and canonicalises). The message names the first bad row. values must be non-NULL when there
 * are nonzeros. *A behaves as any host CSR matrix: conversions, transposes and products make new
 * matrices that own their arrays. */
nz_status_t nz_matrix_wrap_csr(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                               nz_index_type_t offset_type, const void *row_offsets,
                               const int32_t *col_indices, nz_value_type_t value_type,
                               const void *values);

/* Wrap CSR arrays already on the context's device (BORROWED, never written, never freed).
 * Row offsets int32 or int64; column indices sorted within rows. Validation (a device-to-host
 * copy) is done only when `validate` is non-zero. */
nz_status_t nz_matrix_wrap_csr_device(nz_context_t *ctx, nz_matrix_t **A, int64_t rows,
                                      int64_t cols, int64_t nnz, nz_index_type_t offset_type,
                                      const void *row_offsets, const int32_t *col_indices,
                                      nz_value_type_t value_type, const void *values,
                                      int validate);

nz_status_t nz_matrix_destroy(nz_matrix_t **A);

/* A new matrix with the same contents in another value type. */
nz_status_t nz_matrix_convert_values(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                                     nz_value_type_t value_type);

/* Format conversion options. Zero-initialise, then set what you need; zero means default. */
typedef struct nz_format_options {
    int sell_chunk;            /* SELL chunk height C (default 32; 4 or 8 for the CPU SIMD kernel) */
    int sell_sigma;            /* SELL sorting window in rows (default 1 = sliced ELLPACK) */
    int bsr_block;             /* BSR block size b (default 4; 1..32) */
    int64_t hyb_ell_width;     /* HYB ELL width (default: from the row-length histogram;
                                  capped at the longest row) */
    double max_padding_ratio;  /* refuse if padded bytes > ratio x CSR bytes (default 3.0) */
} nz_format_options_t;

/* Convert a host matrix into another host format (any format to any format). The new matrix
 * holds its own copy. NZ_ERR_TOO_MUCH_PADDING when ELL/SELL/HYB/BSR/DIA padding exceeds the
 * limit; the message gives the padded and CSR sizes. COO, CSC, ELL, SELL and HYB keep the exact
 * CSR pattern (stored zeros too). BSR and DIA cannot tell a stored zero from their zero fill:
 * converting them back to another format drops every entry whose value is exactly 0 (nnz still
 * counts the original entries), and their SpMV multiplies the fill (0 * Inf = NaN). */
nz_status_t nz_matrix_convert(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                              nz_format_t format, const nz_format_options_t *options);

/* Transpose (host, any format in; CSR out). */
nz_status_t nz_matrix_transpose(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A);

/* Copy a host matrix to the context's device (pinned staging). offset_type: NZ_INDEX_AUTO =
 * 32-bit row offsets when they fit, else 64; NZ_I32 / NZ_I64 force the width (NZ_ERR_OVERFLOW
 * when nnz does not fit NZ_I32). The transfer time is recorded in
 * nz_matrix_info_t.transfer_seconds. CSR, COO, ELL, SELL, HYB, BSR and DIA: formats other than
 * CSR are copied as they are (convert on the host first; offset_type applies to CSR only). The
 * GPU kernels need SELL chunk heights that are multiples of 32 and BSR blocks of 2..8
 * (NZ_ERR_UNSUPPORTED otherwise); CSC is refused. */
nz_status_t nz_matrix_to_device(nz_context_t *ctx, nz_matrix_t **dA, const nz_matrix_t *A,
                                nz_index_type_t offset_type);
/* Copy a device CSR matrix (e.g. the C of a device nz_spgemm) back to a new host CSR matrix
 * (int64 row offsets). NZ_ERR_WRONG_LOCATION for a host matrix, NZ_ERR_UNSUPPORTED for other
 * device formats. */
nz_status_t nz_matrix_to_host(nz_context_t *ctx, nz_matrix_t **A, const nz_matrix_t *dA);

typedef struct nz_matrix_info {
    int64_t rows, cols;
    int64_t nnz;               /* logical nonzeros (without padding) */
    int64_t stored;            /* stored entries including padding */
    nz_format_t format;
    nz_value_type_t value_type;
    nz_index_type_t offset_type; /* width of row offsets (host CSR: NZ_I64) */
    nz_location_t location;
    size_t bytes;              /* bytes of the format's arrays */
    double transfer_seconds;   /* host-to-device copy time for device matrices, else 0 */
    /* Format parameters (0 when not applicable). */
    int sell_chunk, sell_sigma, bsr_block;
    int64_t ell_width;         /* ELL width, or the ELL part's width in HYB */
    int64_t num_diagonals;     /* DIA */
} nz_matrix_info_t;
/* Shape, format and storage of A (host or device). ctx must be a valid context (A's own, errors
 * are recorded on it). */
nz_status_t nz_matrix_info(nz_context_t *ctx, nz_matrix_info_t *info, const nz_matrix_t *A);

/* Read-only views of a host CSR matrix's arrays (valid while A lives; for a wrapped matrix, the
 * caller's own arrays, except widened int32 offsets). values is float* or double* per the value
 * type. Any of the three outputs may be NULL. ctx must be a valid context (A's own, errors are
 * recorded on it). */
nz_status_t nz_matrix_csr_arrays(nz_context_t *ctx, const int64_t **row_offsets,
                                 const int32_t **col_indices, const void **values,
                                 const nz_matrix_t *A);
/* The same for a device CSR matrix (e.g. the C of a device nz_spgemm): device pointers valid
 * while A lives, never to be freed by the caller; *offset_type is NZ_I32 or NZ_I64. Lets a
 * binding hand C to another library without a copy. NZ_ERR_WRONG_LOCATION for a host matrix. */
nz_status_t nz_matrix_csr_device_arrays(nz_context_t *ctx, const void **row_offsets,
                                        nz_index_type_t *offset_type,
                                        const int32_t **col_indices, const void **values,
                                        const nz_matrix_t *A);

/* Row-length statistics and structure (host matrices; any format). ctx must be a valid context
 * (A's own, errors are recorded on it). */
typedef struct nz_matrix_stats {
    int64_t rows, cols, nnz;
    int64_t row_min, row_max;  /* nonzeros per row */
    double row_mean, row_std;
    int64_t empty_rows;
    int64_t lower_bandwidth, upper_bandwidth; /* max (i - j), max (j - i) over nonzeros, >= 0 */
    int64_t num_diagonals;     /* distinct j - i */
    int symmetric;             /* 1: A == A^T (pattern and values), 0: not, -1: not square */
    size_t bytes[NZ_FORMAT_COUNT]; /* bytes per format with default options (0 = refused) */
} nz_matrix_stats_t;
nz_status_t nz_matrix_stats(nz_context_t *ctx, nz_matrix_stats_t *stats, const nz_matrix_t *A);

/* ------------------------------------------------------------------------------------------ */
/* Matrix Market and binary I/O                                                                */
/* ------------------------------------------------------------------------------------------ */

/* Longest line the Matrix Market readers accept (plain, gzip and buffer), newline excluded. A
 * longer line (an entry is under 100 bytes; a 2 GB line of spaces, /dev/zero) is refused with
 * NZ_ERR_PARSE naming the file and line, after reading at most one buffer of it. */
#define NZ_MM_MAX_LINE_BYTES ((size_t)1 << 20)

/* Read a Matrix Market file (.mtx or .mtx.gz) into a host CSR matrix of the given value type.
 * Coordinate or array; real, integer or pattern (complex refused); general, symmetric,
 * skew-symmetric and hermitian (real) expanded. Errors name the path and line; a NUL byte is
 * named as such. Values of any length are read (correctly rounded). What the header declares is
 * checked against the memory budget (nz_context_set_memory_budget) before allocating. */
nz_status_t nz_mm_read(nz_context_t *ctx, nz_matrix_t **A, const char *path,
                       nz_value_type_t value_type);
/* The same from a memory buffer (name is used in messages). */
nz_status_t nz_mm_read_buffer(nz_context_t *ctx, nz_matrix_t **A, const char *data, size_t size,
                              const char *name, nz_value_type_t value_type);
/* Write a host matrix (any format) to path as coordinate real general, round-trip precision. A
 * path ending in .gz is compressed.
 * Every writer (nz_mm_write, nz_mm_write_dense, nz_binary_write) writes a temporary file in the
 * target's directory and renames it over `path` only after a complete write, fsync and close; on
 * any failure only the temporary file is removed, so an existing file at `path` is left intact.
 * "-" is standard output; existing character devices and FIFOs are written in place and never
 * removed; a symbolic link is followed (the file it names is replaced). */
nz_status_t nz_mm_write(nz_context_t *ctx, const char *path, const nz_matrix_t *A);

/* Dense matrices / vectors in Matrix Market array format (column-major). nz_mm_read_dense reads
 * path into *data (allocated, free with nz_free), *rows and *cols; a coordinate file is accepted
 * and densified. nz_mm_write_dense writes the rows x cols array data to path. */
nz_status_t nz_mm_read_dense(nz_context_t *ctx, void **data, int64_t *rows, int64_t *cols,
                             const char *path, nz_value_type_t value_type);
nz_status_t nz_mm_write_dense(nz_context_t *ctx, const char *path, nz_value_type_t value_type,
                              int64_t rows, int64_t cols, const void *data);

/* Compact binary format (.nzb): a header, then the CSR arrays; reloads at memory speed.
 * nz_binary_write writes host matrix A (any format) to path. */
nz_status_t nz_binary_write(nz_context_t *ctx, const char *path, const nz_matrix_t *A);
nz_status_t nz_binary_read(nz_context_t *ctx, nz_matrix_t **A, const char *path);
/* Read .mtx, .mtx.gz or .nzb by extension (value_type applies to Matrix Market files; .nzb
 * files are converted if they hold the other type). */
nz_status_t nz_matrix_read(nz_context_t *ctx, nz_matrix_t **A, const char *path,
                           nz_value_type_t value_type);

/* ------------------------------------------------------------------------------------------ */
/* Generators (deterministic for a given seed; host CSR out)                                   */
/* ------------------------------------------------------------------------------------------ */

/* 2-D 5-point Laplacian on an nx x ny grid (Dirichlet, rows of 3..5). */
nz_status_t nz_gen_laplace2d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                             nz_value_type_t value_type);
/* 3-D 7-point Laplacian on an nx x ny x nz grid. */
nz_status_t nz_gen_laplace3d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                             int64_t nz, nz_value_type_t value_type);
/* Trilinear (Q1) finite-element Poisson stiffness matrix (outputs A, b, u_exact first), -Δu = f
 * on the unit cube with an n x n x n grid of hexahedral elements; Dirichlet nodes eliminated,
 * (n-1)^3 unknowns, rows of 8, 12, 18 and 27 nonzeros. If b / u_exact are non-NULL they receive (nz_malloc'ed) the load
 * vector for the manufactured solution u = sin(pi x) sin(pi y) sin(pi z) and its nodal values.
 * Scaling: A is the Galerkin matrix, h = 1/n times the 27-point stencil (centre 8/3, face
 * neighbours 0 (stored), edge neighbours -1/6, corner neighbours -1/12); b_i ~ h^3 f(x_i), so
 * A u_exact - b = O(h^5) entrywise. n >= 2. */
nz_status_t nz_gen_fe3d(nz_context_t *ctx, nz_matrix_t **A, void **b, void **u_exact, int64_t n,
                        nz_value_type_t value_type);
/* The same Q1 problem assembled directly on the context's GPU (one thread per row; no host
 * arrays, no transfer): *dA is a device CSR matrix (int32 row offsets when they fit, else int64)
 * identical to nz_matrix_to_device(nz_gen_fe3d(...)); d_b / d_u_exact, if non-NULL, receive device
 * arrays (free with nz_device_free) equal to the host b / u_exact. */
nz_status_t nz_gen_fe3d_device(nz_context_t *ctx, nz_matrix_t **dA, void **d_b, void **d_u_exact,
                               int64_t n, nz_value_type_t value_type);
/* Kronecker / R-MAT power-law graph: 2^scale vertices, edge_factor x 2^scale edges drawn with
 * probabilities (a, b, c, 1-a-b-c) (Graph500: 0.57, 0.19, 0.19); duplicates merged, values in
 * (0, 1]. a = b = c = 0 selects the Graph500 parameters. Directed (row = source), self loops
 * kept, vertex labels scrambled by a seeded permutation as in Graph500. scale 1..30. */
nz_status_t nz_gen_rmat(nz_context_t *ctx, nz_matrix_t **A, int scale, int edge_factor, double a,
                        double b, double c, uint64_t seed, nz_value_type_t value_type);
/* Uniform random rows x cols with row lengths uniform in [0, 2 * mean_row_length], distinct
 * uniform columns, values in [-1, 1). (Also for rail and mixed: values in [-1, 1).) */
nz_status_t nz_gen_random(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                          double mean_row_length, uint64_t seed, nz_value_type_t value_type);
/* Rail-like (crew scheduling LP): few rows, many columns, every row long (mean row_length,
 * +-50%), columns clustered. */
nz_status_t nz_gen_rail(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                        int64_t row_length, uint64_t seed, nz_value_type_t value_type);
/* Mixed: rows x rows, short rows (uniform in [1, 2 * short_length - 1]) plus long_rows rows of
 * long_length nonzeros spread over the matrix. */
nz_status_t nz_gen_mixed(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t short_length,
                         int64_t long_rows, int64_t long_length, uint64_t seed,
                         nz_value_type_t value_type);
/* Banded n x n with `lower` sub- and `upper` super-diagonals, diagonally dominant. */
nz_status_t nz_gen_banded(nz_context_t *ctx, nz_matrix_t **A, int64_t n, int64_t lower,
                          int64_t upper, nz_value_type_t value_type);

/* ------------------------------------------------------------------------------------------ */
/* SpMV: y = alpha op(A) x + beta y                                                            */
/* ------------------------------------------------------------------------------------------ */

typedef enum nz_operation { NZ_OP_N = 0, NZ_OP_T = 1 } nz_operation_t;

/* Plan flags */
#define NZ_PLAN_DETERMINISTIC 0x1u /* only bitwise run-to-run reproducible algorithms */
#define NZ_PLAN_TUNE          0x2u /* time the plausible candidates once and keep the fastest
                                       (NZ_ALG_AUTO only; plan_seconds includes the tuning) */
#define NZ_PLAN_MIXED         0x4u /* single-precision storage, double accumulation */
#define NZ_PLAN_CACHE_HINTS   0x8u /* GPU csr vector and merge: load the matrix arrays as
                                       streaming (ld.global.cs, evict-first) so they do not evict
                                       x from L2; x keeps the read-only path. Same results bit for
                                       bit; other algorithms ignore the flag. Off by default until
                                       measured on every suite matrix (docs/PERF_NOTES.md). */
#define NZ_PLAN_LIGHT_PER_ROW 0x10u /* GPU csr light-vector / light-warp: the paper's distribution,
                                       one atomic per row (vector level) or per warp step (warp
                                       level) and, at warp level, the paper's vector width,
                                       instead of the default chunks of rows per atomic (and
                                       about four nonzeros per lane at warp level); for
                                       comparisons. Both forms are bitwise
                                       reproducible; other algorithms ignore the flag. */
/* Plan layouts of a GPU CSR matrix (op N; one at a time; the plan builds them at creation, keeps
 * them in its workspace and leaves A untouched; docs/PERF_NOTES.md has the measurements): */
#define NZ_PLAN_COLUMN_PANELS 0x20u /* any GPU csr algorithm: A split by column ranges into panels
                                       whose slice of x fits in a sixth of the L2 cache, run one
                                       after another into y (gather-bound matrices whose x is
                                       larger than L2). Results are summed panel by panel: not
                                       bitwise equal to the unsplit plan, reproducible as the
                                       algorithm is. One panel (x fits): the plain plan. */
#define NZ_PLAN_REORDER       0x40u /* any GPU csr algorithm: columns renumbered by descending
                                       nonzero count, so the most-read entries of x share cache
                                       lines (power-law graphs); each execute first gathers x
                                       into the new order; the caller's x and y keep theirs. */
#define NZ_PLAN_COMPRESS_INDICES 0x80u /* GPU csr vector: column indices as 16-bit differences
                                       from the previous column of the row (rows where a step
                                       exceeds 65535 or columns are unsorted keep 32-bit ones):
                                       2 bytes less per nonzero. Same products, same order of
                                       summation as a width-V CSR-vector without unrolling. */

typedef struct nz_spmv_plan nz_spmv_plan_t;

/* Make a plan for A (host matrix: CPU backend; device matrix: CUDA backend) with algorithm alg
 * (NZ_ALG_AUTO: the planner). All preprocessing happens here and is timed; executing allocates
 * nothing. A must outlive the plan.
 * op = NZ_OP_T on the GPU (csr matrices): every csr algorithm except atomic builds A^T on the
 * device once, here (a stable radix sort; a second copy of A, counted in workspace_bytes), and
 * runs the op-N algorithm on it: atomic-free, as reproducible as op N. NZ_ALG_ATOMIC scatters
 * alpha a_ij x_i into y_j with atomics: no preprocessing or memory, not reproducible (for a
 * single product). nz_spmv_list lists the pairs for NZ_OP_N; all of its csr pairs accept NZ_OP_T.
 * NZ_PLAN_MIXED on the GPU: csr with scalar, vector or merge (others are refused); float
 * matrices keep float x and y but form products and sums in double; double matrices are
 * unchanged. */
nz_status_t nz_spmv_plan_create(nz_context_t *ctx, nz_spmv_plan_t **plan, const nz_matrix_t *A,
                                nz_operation_t op, nz_alg_t alg, unsigned flags);
/* y = alpha op(A) x + beta y. x and y are arrays of A's value type in A's location (host or
 * device). With beta == 0, y is not read (NaN in y does not propagate). x and y must not overlap
 * (x == y included): overlapping byte ranges are refused with NZ_ERR_INVALID_ARGUMENT (device
 * pointers are compared the same way, by address). */
nz_status_t nz_spmv_execute(nz_spmv_plan_t *plan, double alpha, const void *x, double beta,
                            void *y);
nz_status_t nz_spmv_plan_destroy(nz_spmv_plan_t **plan);

typedef struct nz_spmv_plan_info {
    nz_format_t format;
    nz_alg_t alg;              /* the algorithm actually chosen */
    nz_backend_t backend;
    int reproducible;          /* 1 if results are bitwise identical run to run */
    int vector_width;          /* threads per row where it applies (CSR-vector, LightSpMV) */
    double plan_seconds;       /* preprocessing time */
    size_t workspace_bytes;    /* bytes the plan holds beyond the matrix */
    unsigned flags;            /* the flags the plan runs with: the caller's, plus the layout
                                  and hint flags NZ_ALG_AUTO added (NZ_PLAN_CACHE_HINTS,
                                  NZ_PLAN_COLUMN_PANELS, ...) */
    int layout_parts;          /* column panels the plan runs (1 without NZ_PLAN_COLUMN_PANELS) */
} nz_spmv_plan_info_t;
nz_status_t nz_spmv_plan_info(const nz_spmv_plan_t *plan, nz_spmv_plan_info_t *info);

/* One-shot convenience: plan with alg, execute once, destroy. */
nz_status_t nz_spmv(nz_context_t *ctx, const nz_matrix_t *A, nz_alg_t alg, double alpha,
                    const void *x, double beta, void *y);

/* The index-th (format, algorithm) pair the backend accepts, into *format and *alg; index 0, 1,
 * ... until NZ_ERR_INVALID_ARGUMENT. */
nz_status_t nz_spmv_list(nz_format_t *format, nz_alg_t *alg, nz_backend_t backend, int index);

/* The planner's choice without making a plan (docs/PLANNER.md), into *chosen_format, *alg and
 * why: from statistics of A (nz_matrix_stats), the algorithm NZ_ALG_AUTO picks for op(A) = A in
 * `format` on `backend`, or, with format = NZ_FORMAT_COUNT, also the format to convert to (the
 * one whose SpMV reads the fewest bytes, from stats->bytes[], if it saves at least 10% over CSR; else CSR). flags:
 * NZ_PLAN_DETERMINISTIC restricts the choice to bitwise reproducible algorithms; NZ_PLAN_TUNE is
 * ignored (tuning needs the matrix: the plan's choice may then differ). The algorithm depends only
 * on rows, cols, nnz and the row-length statistics, which a device plan computes itself, so a
 * device CSR plan with NZ_ALG_AUTO picks the same algorithm. why (may be NULL) receives one line
 * naming the choice and the statistics behind it, truncated to why_size bytes.
 * NZ_ERR_UNSUPPORTED (with the reason in why) when the backend of this build has no (reproducible)
 * algorithm for the format. */
nz_status_t nz_spmv_plan_choose(nz_format_t *chosen_format, nz_alg_t *alg, char *why,
                                size_t why_size, const nz_matrix_stats_t *stats,
                                nz_backend_t backend, nz_format_t format, unsigned flags);

/* ------------------------------------------------------------------------------------------ */
/* Solvers                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef enum nz_precond { NZ_PRECOND_NONE = 0, NZ_PRECOND_JACOBI = 1 } nz_precond_t;

/* Conjugate gradient options. Zero-initialise, then set what you need; zero means default. */
typedef struct nz_cg_options {
    double rtol;               /* stop when ||r|| <= max(rtol ||b||, atol) (default rtol 1e-8) */
    double atol;               /* absolute tolerance on ||r|| (default 0) */
    int64_t max_iterations;    /* default max(n, 10000) */
    nz_precond_t precond;      /* NZ_PRECOND_JACOBI: z = D^-1 r (needs a positive diagonal) */
    nz_alg_t alg;              /* SpMV algorithm for the plan (NZ_ALG_AUTO: the planner, which
                                  for a host CSR matrix also picks the format: nz_cg_solve) */
    unsigned plan_flags;       /* NZ_PLAN_* flags for the SpMV plan */
    int record_history;        /* non-zero: return ||r_k|| for k = 0 .. iterations */
    int use_graph;             /* GPU: replay the loop body as a CUDA graph (falls back silently
                                  when the SpMV cannot be captured; see nz_cg_result_t.used_graph) */
    int check_interval;        /* GPU: read the convergence scalars back every k iterations
                                  (default 8; 1 = every iteration). Iteration counts and results do
                                  not depend on it: the device stops updating once converged. */
    int keep_format;           /* non-zero: run the SpMV on A as given, never on a copy in the
                                  planner's format */
} nz_cg_options_t;

typedef struct nz_cg_result {
    int64_t iterations;        /* iterations performed */
    double residual_norm;      /* true residual ||b - A x|| of the returned x */
    double relative_residual;  /* residual_norm / ||b|| (0 when b = 0) */
    double setup_seconds;      /* SpMV plan, workspace, Jacobi diagonal */
    double solve_seconds;      /* the iteration loop (initial and final residual included) */
    double seconds_per_iteration; /* solve_seconds / max(iterations, 1) */
    double spmv_seconds;       /* one SpMV with the solve's plan, timed separately after the solve */
    nz_alg_t alg;              /* the SpMV algorithm the plan used */
    int used_graph;            /* 1 if the GPU loop ran as a CUDA graph */
    int64_t history_length;    /* entries in history (iterations + 1), 0 without record_history */
    double *history;           /* ||r_k|| (recursive residual); free with nz_free */
    nz_format_t format;        /* the format the SpMV ran on: A's, or the planner's when the solve
                                  converted A (counted in setup_seconds) */
} nz_cg_result_t;

/* Solve A x = b for symmetric positive definite A by (Jacobi-preconditioned) conjugate gradients.
 * x holds the initial guess on input and the solution on output. A host matrix solves on the CPU
 * (b, x host arrays); a device matrix solves on the context's GPU (b, x device arrays). Values are
 * of A's value type; scalars (dots, alpha, beta) are accumulated in double. Every SpMV goes through
 * an SpMV plan, so any format / algorithm the backend accepts works. Dot products are bitwise
 * reproducible run to run (fixed-order block reductions, no atomics on values).
 * Format: with alg = NZ_ALG_AUTO and keep_format = 0, a host CSR matrix is converted in the setup
 * (counted in setup_seconds, the copy freed before returning) to the format the planner advises
 * for the CPU (nz_spmv_plan_choose with format NZ_FORMAT_COUNT, e.g. DIA for a stencil), when
 * that differs from A's and the conversion is accepted (a refusal, e.g. for padding, keeps A's
 * format; so is a matrix small enough for the CPU's one-thread CSR kernel); result->format says
 * which ran. A device matrix is used as it is (there is no device
 * format conversion): convert on the host before nz_matrix_to_device, as nz cg does.
 * Returns NZ_SUCCESS on convergence; NZ_MAX_ITERATIONS (a caveat) at the limit, with the achieved
 * residual in *result; NZ_ERR_BREAKDOWN when p'Ap <= 0, a NaN or Inf appears, or Jacobi meets a
 * non-positive diagonal (A is not SPD), with x the last finite iterate. b = 0 gives x = 0 at once.
 * result may be NULL; when given it is overwritten (free an earlier history first). b and x must
 * not overlap in memory (NZ_ERR_INVALID_ARGUMENT). */
nz_status_t nz_cg_solve(nz_context_t *ctx, const nz_matrix_t *A, const void *b, void *x,
                        const nz_cg_options_t *options, nz_cg_result_t *result);

/* ------------------------------------------------------------------------------------------ */
/* Many right-hand sides: Y = alpha op(A) X + beta Y                                           */
/* ------------------------------------------------------------------------------------------ */

typedef enum nz_dense_layout { NZ_COL_MAJOR = 0, NZ_ROW_MAJOR = 1 } nz_dense_layout_t;

typedef struct nz_spmm_plan nz_spmm_plan_t;

typedef struct nz_spmm_plan_info {
    nz_format_t format;        /* A's format */
    nz_alg_t alg;              /* the algorithm actually chosen */
    nz_backend_t backend;
    nz_operation_t op;
    int64_t k;                 /* right-hand sides */
    nz_dense_layout_t layout;  /* layout of X and Y */
    int reproducible;          /* 1 if results are bitwise identical run to run */
    int vector_width;          /* lanes per row where it applies (GPU vector) */
    double plan_seconds;       /* preprocessing time */
    size_t workspace_bytes;    /* bytes the plan holds beyond the matrix */
} nz_spmm_plan_info_t;

/* Plan Y = alpha op(A) X + beta Y for X with k columns (1..64) in the given layout; X is
 * (op(A) cols) x k and Y (op(A) rows) x k with leading dimensions ldx, ldy (elements). A host
 * matrix runs on the CPU, a device matrix on the GPU (CSR and SELL). At execution, X and Y must
 * not overlap (the byte ranges from their first to their last element): NZ_ERR_INVALID_ARGUMENT. */
nz_status_t nz_spmm_plan_create(nz_context_t *ctx, nz_spmm_plan_t **plan, const nz_matrix_t *A,
                                nz_operation_t op, int64_t k, nz_dense_layout_t layout,
                                nz_alg_t alg, unsigned flags);
nz_status_t nz_spmm_execute(nz_spmm_plan_t *plan, double alpha, const void *X, int64_t ldx,
                            double beta, void *Y, int64_t ldy);
nz_status_t nz_spmm_plan_destroy(nz_spmm_plan_t **plan);
/* Algorithms: CPU serial / parallel for any host format (non-CSR formats through a CSR copy made
 * by the plan; op T through A^T built by the plan); GPU vector for csr (a group of lanes per row:
 * lanes over the right-hand sides for row-major X, over the row's nonzeros with a chunk of
 * columns in registers for column-major X; op T through a device transpose) and scalar for sell
 * (a thread per slot, op N only). NZ_ALG_AUTO picks these. NZ_PLAN_MIXED as for SpMV. All are
 * bitwise reproducible. ld = minimal plus 0 or more; beta == 0 never reads Y. */
nz_status_t nz_spmm_plan_info(const nz_spmm_plan_t *plan, nz_spmm_plan_info_t *info);

/* ------------------------------------------------------------------------------------------ */
/* SpGEMM: C = A B                                                                             */
/* ------------------------------------------------------------------------------------------ */

typedef enum nz_spgemm_alg {
    NZ_SPGEMM_AUTO = 0,
    NZ_SPGEMM_CPU = 1,      /* CPU Gustavson (OpenMP), the reference and fallback */
    NZ_SPGEMM_ESC = 2,      /* GPU expand, sort, compress (CUSP) */
    NZ_SPGEMM_HYSPMM = 3,   /* hybrid CPU-GPU pipelined design (Wu, Georgia State 2015) */
    NZ_SPGEMM_HASH = 4      /* GPU hash-based Gustavson with row binning (default on the GPU) */
} nz_spgemm_alg_t;

typedef struct nz_spgemm_options {
    nz_spgemm_alg_t alg;
    size_t gpu_memory_limit;   /* bytes of device memory to use (0 = the free device memory) */
    int threads;               /* CPU threads (0 = default) */
} nz_spgemm_options_t;

typedef struct nz_spgemm_info {
    nz_spgemm_alg_t alg;       /* the algorithm that ran */
    int64_t products;          /* scalar multiplications (flop = 2 x products) */
    int64_t panels;            /* row panels processed (1 = in core) */
    double seconds;            /* total, including symbolic phase and output allocation */
    /* symbolic_seconds: hash, device events of the symbolic kernels; ESC and hySpMM, host wall
     * clock of their set-up (uploads, product counts, panels, allocations). numeric_seconds:
     * hash and hySpMM, device events of the numeric kernels; ESC, host wall clock of each panel's
     * kernels and its copy back. */
    double symbolic_seconds, numeric_seconds, transfer_seconds;
    double stage_seconds_sum;  /* sum of the pipelined stages' times (overlap = seconds / this) */
    int64_t peak_device_bytes;
} nz_spgemm_info_t;

/* C = A B with A, B of the same value type (C: CSR, sorted columns, no explicit duplicates).
 * Host A, B (any host format): C is a host matrix; GPU algorithms need a context bound to a
 * device; products too large for the memory budget are processed in row panels with C streamed
 * back to host memory. Device CSR A, B (int32 or int64 row offsets): the hash algorithm (alg
 * AUTO or HASH) computes a device C (int64 row offsets) with no host transfer of A, B or C;
 * it must fit in the device memory budget (NZ_ERR_DEVICE_OUT_OF_MEMORY otherwise: pass host
 * matrices for products larger than the GPU). A host and a device operand: NZ_ERR_WRONG_LOCATION.
 * info may be NULL. */
nz_status_t nz_spgemm(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                      const nz_matrix_t *B, const nz_spgemm_options_t *options,
                      nz_spgemm_info_t *info);

/* Flags of nz_spgemm_profile. */
#define NZ_SPGEMM_PROFILE_STAGES 1u /* the call's stages, host wall clock (no extra synchronisation) */
#define NZ_SPGEMM_PROFILE_BINS 2u   /* hash: also time each row bin's kernels alone, per phase (the
                                     * bins then run one after another, synchronised: slower) */
#define NZ_SPGEMM_PROFILE_MAX_STAGES 32
#define NZ_SPGEMM_PROFILE_MAX_BINS 16

/* Where the time of one nz_spgemm call went: data for the caller (the library prints nothing;
 * `nz spgemm --profile` prints it). Stages are in the order they ran; names are static strings.
 * Hash: stage i is the host wall-clock time since stage i - 1 ended (budget, events, operands,
 * scratch, binned, symbolic, ..., release). hySpMM: its symbolic part by step (count, split,
 * reserve-c, slots), then per-stage totals over the panels (expand, h2d, multiply, d2h, copy-out,
 * assemble); since stages overlap, wall_seconds may be less than their sum. ESC: setup, then per
 * panel stages summed. */
typedef struct nz_spgemm_profile {
    nz_spgemm_alg_t alg;       /* the algorithm that ran */
    unsigned flags;            /* the flags the call was made with */
    double wall_seconds;       /* the whole call, host wall clock */
    int stage_count;
    const char *stage_names[NZ_SPGEMM_PROFILE_MAX_STAGES];
    double stage_seconds[NZ_SPGEMM_PROFILE_MAX_STAGES];
    /* hash with NZ_SPGEMM_PROFILE_BINS: per row bin (the last one is the dense path) */
    int bin_count, dense_from_bin, max_shared_bin;
    int bin_threads[NZ_SPGEMM_PROFILE_MAX_BINS];          /* threads per row */
    int64_t symbolic_rows[NZ_SPGEMM_PROFILE_MAX_BINS], numeric_rows[NZ_SPGEMM_PROFILE_MAX_BINS];
    int64_t numeric_entries[NZ_SPGEMM_PROFILE_MAX_BINS];  /* C's entries in the bin (host C) */
    double symbolic_bin_seconds[NZ_SPGEMM_PROFILE_MAX_BINS];
    double numeric_bin_seconds[NZ_SPGEMM_PROFILE_MAX_BINS];
    /* hySpMM: bytes per second of its host stages in the pipeline (expansion and copy-out run
     * side by side, each on its share of the threads), and, measured after the pipeline on all
     * the call's threads: one panel's expansion again (expand_alone) and a plain host copy over
     * the same buffers, so the expansion compares directly with the host's copy bandwidth.
     * The measurements after the pipeline are left out of wall_seconds. */
    double expand_bytes_per_second, copy_out_bytes_per_second, host_copy_bytes_per_second;
    double expand_alone_bytes_per_second;
} nz_spgemm_profile_t;

/* nz_spgemm, also filling *profile (zeroed first) as `flags` asks (NZ_SPGEMM_PROFILE_*). */
nz_status_t nz_spgemm_profile(nz_context_t *ctx, nz_matrix_t **C, nz_spgemm_profile_t *profile,
                              const nz_matrix_t *A, const nz_matrix_t *B,
                              const nz_spgemm_options_t *options, unsigned flags,
                              nz_spgemm_info_t *info);
const char *nz_spgemm_alg_name(nz_spgemm_alg_t alg);
nz_status_t nz_spgemm_alg_from_name(nz_spgemm_alg_t *alg, const char *name);
/* The backend that runs SpGEMM algorithm alg: NZ_SPGEMM_CPU the CPU; esc, hyspmm and hash the
 * GPU (even in a build without CUDA, where nz_spgemm refuses them); NZ_SPGEMM_AUTO the GPU when
 * this machine has one (nz_device_count() > 0: what nz_spgemm's AUTO picks once the context is
 * bound to it), else the CPU. For tools that bind a device only when the algorithm needs one.
 * NZ_ERR_INVALID_ARGUMENT for an unknown algorithm. */
nz_status_t nz_spgemm_alg_backend(nz_backend_t *backend, nz_spgemm_alg_t alg);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_H */
