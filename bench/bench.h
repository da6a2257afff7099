/* bench.h: the SpMV benchmark behind `nz bench`: options, result rows, suite, CPU and GPU drivers. */
#ifndef NZ_BENCH_H
#define NZ_BENCH_H

#include "nonzero.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NZB_MAX_ALGS 32
#define NZB_NAME_SIZE 64
#define NZB_NOTE_SIZE 600 /* a prefix and a whole last-error message (512): never cut */

typedef enum nzb_size { NZB_SIZE_DEFAULT = 0, NZB_SIZE_QUICK, NZB_SIZE_SMALL, NZB_SIZE_FULL } nzb_size_t;

/* What `nz bench` was asked to do (filled by tools/nz/cmd_bench.c). */
typedef struct nzb_options {
    int backend;             /* -1: GPU when present, else CPU; or NZ_BACKEND_CPU / NZ_BACKEND_CUDA */
    nzb_size_t size;         /* DEFAULT: full on the GPU, small on the CPU */
    int real;                /* also every matrix in NZ_MATRIX_DIR and the large directory */
    const char *large_dir;   /* --large: the large real matrices (NULL: NZ_LARGE_MATRIX_DIR, else
                                ../shared/matrices-large from the current directory, then from
                                the source tree); skipped by --quick unless given here */
    int only_large;          /* only the large real matrices (and files named): no generated
                                suite, no NZ_MATRIX_DIR */
    int single, dbl;         /* precisions to run */
    int runs;                /* timed runs per kernel (0: 50 on the GPU, 10 on the CPU) */
    int offset_bits;         /* GPU row offsets: 32 (default) or 64 */
    int threads;             /* CPU threads (0: OpenMP default) */
    int markdown;            /* print the table as Markdown */
    const char *csv_path;    /* NULL: bench-out/bench-<backend>.csv */
    const char *png_path;    /* NULL: no chart */
    int num_filters;         /* --alg: kernel filters ("merge", "sell", "sell/simd"); 0 = all */
    const char *filters[NZB_MAX_ALGS];
    int num_files;           /* matrices named on the command line */
    char **files;
    const nz_tunables_t *tunables; /* the context's tunables (NULL: the library's defaults; nz
                                      maps the NZ_TUNE_* environment onto them) */
} nzb_options_t;

/* Run the benchmark; returns the process exit status (0: every kernel ran and verified). */
int nzb_run(const nzb_options_t *options);

/* ---- internals shared by the C and CUDA sources of bench/ ------------------------------- */

#ifdef _OPENMP
#define NZB_PRAGMA(x) _Pragma(#x)
/* OpenMP parallel for, static schedule, `threads` threads (> 0). */
#define NZB_OMP_FOR(threads) NZB_PRAGMA(omp parallel for schedule(static) num_threads(threads))
#else
#define NZB_OMP_FOR(threads)
#endif

typedef enum nzb_row_status {
    NZB_OK = 0,       /* timed and verified */
    NZB_REFUSED,      /* conversion or algorithm refused (padding limit, unsupported): not an error */
    NZB_FAILED        /* an error or a wrong result: makes the exit status non-zero */
} nzb_row_status_t;

/* One table / CSV row: a kernel on a matrix in one precision. */
typedef struct nzb_result {
    char matrix[NZB_NAME_SIZE];
    int generated;           /* 1: from a generator, 0: from a file */
    int large;               /* 1: from the large directory (own table; CSV source "large") */
    int64_t rows, cols, nnz;
    nz_value_type_t value_type;
    char kernel[NZB_NAME_SIZE]; /* "csr/merge", "cusparse/alg2", "sell/simd" */
    int is_cusparse;
    nzb_row_status_t status;
    char note[NZB_NOTE_SIZE];   /* whole, in the CSV; the table shortens long ones (a footnote) */
    nz_status_t reason;      /* the library's status behind a refusal or failure (0: none) */
    int runs, batch;         /* samples and kernel launches per sample */
    double median_seconds, min_seconds;
    double gflops;           /* 2 nnz / t */
    size_t bytes_min;        /* minimal CSR traffic: offsets + nnz (index + value) + x + y */
    size_t bytes_stored;     /* the format's stored arrays (nz_matrix_info.bytes) + x + y */
    double gbs_min, gbs_stored;
    double bandwidth_gbs;    /* the copy bandwidth measured in this run */
    double pct_bandwidth;    /* gbs_min / bandwidth_gbs x 100 */
    double plan_seconds;     /* nz_spmv_plan_info plan_seconds, or cuSPARSE preprocessing; the
                                report also gives it in SpMVs of the row's own kernel */
    double transfer_seconds; /* GPU: host-to-device copy of the matrix (0 = n/a) */
    double speedup;          /* GPU: best cuSPARSE time / this time (0 = n/a) */
    double max_error;        /* max_i |y_i - ref_i| / sum_j |a_ij x_j| */
    int checked;             /* 1 if the output was verified */
    int resident;            /* the minimal footprint fits the last-level cache (L2 on the GPU) */
    char advice[NZB_NAME_SIZE]; /* the planner's format/algorithm for this matrix and backend
                                   (nz_spmv_plan_choose, format NZ_FORMAT_COUNT); "" = none */
} nzb_result_t;

/* A matrix of the suite, loaded in one precision, with its input vector and reference result. */
typedef struct nzb_case {
    const char *name;
    int generated;
    int large;               /* see nzb_result_t.large */
    nz_context_t *ctx;       /* A's context */
    const nz_matrix_t *A;    /* host CSR */
    nz_value_type_t value_type;
    const void *x;           /* cols values of value_type */
    const double *y_ref;     /* A x in double from the same (rounded) values */
    const double *bound;     /* per row: sum_j |a_ij x_j| */
    const int64_t *row_length;
    char advice[NZB_NAME_SIZE]; /* see nzb_result_t.advice */
} nzb_case_t;

/* Fill c->advice for the backend that runs the case ("" if the planner has none). */
void nzb_case_advice(nz_context_t *ctx, nzb_case_t *c, nz_backend_t backend);

/* The planner's pick for the csr/auto row's note: "planner chose <alg>[+hints][+panels]...". */
void nzb_plan_choice_note(char *note, size_t size, const nz_spmv_plan_info_t *info);

/* Fill a result's identity fields from a case. */
void nzb_result_init(nzb_result_t *r, const nzb_case_t *c, const char *kernel);
/* Compute rates from median_seconds, bytes_min / bytes_stored and bandwidth_gbs. */
void nzb_result_rates(nzb_result_t *r);

/* Check y (value_type, rows entries) against the case's reference: sets r->max_error and
 * r->checked; on a mismatch sets r->status = NZB_FAILED with the first bad row in the note. */
void nzb_verify(nzb_result_t *r, const nzb_case_t *c, const void *y);
/* Fill n values of value_type with NaN so a kernel that skips a row is caught. */
void nzb_poison(void *y, nz_value_type_t value_type, int64_t n);

/* Bytes of one value, and entry i of a float or double array as a double (and back). */
static inline size_t nzb_value_size(nz_value_type_t value_type) {
    return value_type == NZ_F32 ? sizeof(float) : sizeof(double);
}
static inline double nzb_value_get(const void *values, nz_value_type_t value_type, int64_t i) {
    return value_type == NZ_F32 ? (double)((const float *)values)[i] : ((const double *)values)[i];
}
static inline void nzb_value_set(void *values, nz_value_type_t value_type, int64_t i, double v) {
    if (value_type == NZ_F32)
        ((float *)values)[i] = (float)v;
    else
        ((double *)values)[i] = v;
}

/* Monotonic wall-clock seconds (CLOCK_MONOTONIC). */
double nzb_wtime(void);
/* Minimal CSR bytes of one SpMV (y = A x, beta = 0): row offsets (rows + 1) x offset_width +
 * nnz x (4 + value size) + cols x value size (x read once) + rows x value size (y written once). */
size_t nzb_min_bytes(int64_t rows, int64_t cols, int64_t nnz, size_t offset_width,
                     nz_value_type_t value_type);

/* Median of n doubles (sorts the array). */
double nzb_median(double *values, int n);

/* True if the kernel (format, alg) passes the --alg filters. */
int nzb_selected(const nzb_options_t *options, nz_format_t format, nz_alg_t alg);

/* The report: the table on stdout and in bench-out/bench-<backend>.txt, and the CSV. */
typedef struct nzb_report nzb_report_t;
void nzb_printf(nzb_report_t *rep, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The text copy of the table next to the CSV: csv_path without ".csv", plus ".md" (markdown) or
 * ".txt"; the `nz bench` parser checks it with the other outputs. */
void nzb_table_path(char *out, size_t size, const char *csv_path, int markdown);
/* Open the report: the text copy at txt_path and the CSV at csv_path (directories created).
 * gpu: add the transfer and cuSPARSE columns. NULL (message on stderr) if a file cannot be opened. */
nzb_report_t *nzb_report_open(const char *txt_path, const char *csv_path, int markdown, int gpu);
/* Print the table's column header (after the preamble lines written with nzb_printf, and again
 * under its title for the large real matrices' table); name_width: the longest matrix name. */
void nzb_report_header(nzb_report_t *rep, int name_width);
/* What the summary needs to know about the run. */
typedef struct nzb_summary_info {
    const char *backend;     /* "gpu" / "cpu" */
    const char *device;      /* device or CPU description */
    const char *date;
    double copy_gbs, triad_gbs;
    int threads;
    size_t cache_bytes;      /* last-level cache (CPU) or L2 (GPU); 0 = unknown */
} nzb_summary_info_t;
/* Print the deferred notes and the summary, close the files, free the report. Returns the
 * number of failed rows. */
int nzb_report_finish(nzb_report_t **rep, const nzb_summary_info_t *info);
/* Record and print one row; rows are kept for the summary. */
void nzb_report_row(nzb_report_t *rep, const nzb_result_t *r);
/* A one-line note: echoed to stderr now, printed under the table at the end (not in the CSV). */
void nzb_report_note(nzb_report_t *rep, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- CPU driver (bench_cpu.c) -------------------------------------------------------------- */

/* STREAM-like copy and triad over arrays several times the last-level cache; threads 0 = the
 * OpenMP default. The _limited form caps each array at max_array_bytes (0: no cap). */
void nzb_cpu_stream(int threads, int reps, double *copy_gbs, double *triad_gbs, size_t *array_bytes);
void nzb_cpu_stream_limited(int threads, int reps, size_t max_array_bytes, double *copy_gbs,
                            double *triad_gbs, size_t *array_bytes);
/* Last-level cache size in bytes (sysfs), or 0 if unknown. */
size_t nzb_cpu_llc_bytes(void);
/* Every CPU (format, alg) pair on one case, one report row each (a failed row makes the exit
 * status non-zero); returns the number of failed rows. */
int nzb_cpu_case(nz_context_t *ctx, nzb_report_t *rep, const nzb_options_t *options,
                 const nzb_case_t *c, int runs, double copy_gbs, size_t llc_bytes);

/* ---- GPU driver (bench_cuda.cu; absent without CUDA) ---------------------------------------- */

typedef struct nzb_gpu nzb_gpu_t;
/* Create a stream, bind ctx to device 0 on it, create the cuSPARSE handle. On failure returns
 * non-zero with a one-line reason in msg. */
int nzb_gpu_open(nzb_gpu_t **gpu, nz_context_t *ctx, char *msg, size_t msg_size);
void nzb_gpu_close(nzb_gpu_t **gpu);
/* "NVIDIA H100 ..., driver 12.8, runtime 13.0" */
const char *nzb_gpu_description(const nzb_gpu_t *gpu);
size_t nzb_gpu_l2_bytes(const nzb_gpu_t *gpu);
/* Device-to-device cudaMemcpy of a large buffer, bytes = 2 x size, median of reps; 0 on error. */
double nzb_gpu_copy_bandwidth(nzb_gpu_t *gpu, int reps, size_t *buffer_bytes);
/* cuSPARSE ALG1/ALG2 and every CUDA CSR algorithm on one case, one report row each; returns
 * non-zero if the case could not be set up on the device (also reported as a failed row). */
int nzb_gpu_case(nzb_gpu_t *gpu, nzb_report_t *rep, const nzb_options_t *options,
                 const nzb_case_t *c, int runs, double copy_gbs);

#ifdef __cplusplus
}
#endif

#endif /* NZ_BENCH_H */
