/* plan_internal.h: the SpMV planner inside the library: rule thresholds, ranked candidates, tuning. */
#ifndef NZI_PLAN_INTERNAL_H
#define NZI_PLAN_INTERNAL_H

#include "nzi.h"
#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The planner turns cheap statistics of a matrix (nz_matrix_stats_t: rows, cols, nnz, row-length
 * mean / std / min / max, empty rows, bandwidths, diagonals, bytes per format) into a RANKED list
 * of algorithms for one format on one backend, best first, with the name of the rule that fired
 * and a one-line reason. Everything here except nzi_plan_row_stats and nzi_plan_auto is a pure
 * function of its arguments (no context, no device), so the decision table is unit-tested on
 * synthetic statistics.
 *
 * The ranked list holds every algorithm the backend supports for the format (the rule's favourites
 * first, the rest after), so NZ_PLAN_TUNE can time the head of the list and the plan can fall
 * back along it when a backend refuses a candidate for this particular matrix (NZ_ERR_UNSUPPORTED:
 * too many rows for int32, too little shared memory, a SELL chunk the SIMD kernel lacks...).
 */

/* Every threshold of the rules, in one table so they can be retuned from benchmark numbers
 * (docs/PLANNER.md says where each came from). */
typedef struct nzi_plan_thresholds {
    /* GPU, CSR */
    double device_threads;      /* threads resident at once on a GPU whose own count is unknown
                                   (nzi_plan_request_t.resident_threads 0) */
    double short_row_max;       /* longest row <= this: one thread per row (scalar) */
    double imbalance_ratio;     /* longest row's steps / balanced steps per thread above this ... */
    double imbalance_min_steps; /* ... and above this many steps: split long rows */
    double tiny_nnz;            /* fewer nonzeros: launch-bound, no host-side preprocessing */
    double few_rows_fraction;   /* rows x V below this fraction of device_threads: idle GPU */
    double empty_fraction;      /* empty rows above this fraction: pack rows by nonzeros */
    double variable_cv;         /* row_std / row_mean above this: pack rows by nonzeros */
    /* CPU */
    double cpu_serial_nnz;      /* fewer multiply-adds (SpMV: nonzeros; SpMM: nonzeros x k):
                                   serial, as the kernels then run on one thread anyway
                                   (NZI_CPU_SERIAL_WORK, src/cpu/cpu_kernels.h) */
    /* format advice */
    double format_gain;         /* another format must read <= this x the CSR bytes */
    /* tuning */
    int tune_candidates;        /* NZ_PLAN_TUNE times at most this many of the ranked list */
    int tune_runs_gpu;          /* timed executions per candidate (after one warm-up) */
    int tune_runs_cpu;
    double layout_window_min;   /* bytes of x a row range spans before GPU CSR loads the
                                   matrix as streaming (nzi_plan_layout_flags) */
    double compress_row_min;    /* mean row length above which CSR-vector candidates get
                                   compressed indices if they pay (nzi_plan_layout_flags) */
    double hot_share_min;       /* hot-columns rule: the NZ_STATS_HOT_COLUMNS most-read columns
                                   hold at least this share of the nonzeros ... */
    double hot_cols_min;        /* ... there are at least this many columns, and at least
                                   NZI_HOT_NNZ_MIN nonzeros: csr/atomic on reordered columns */
    double scattered_window;    /* uniform rows whose columns span more than this many: the
                                   row-block kernels first (x gathered from far apart) */
    double tiles_rows_min;      /* scattered-tiles rule: at least this many rows (and
                                   NZI_HOT_NNZ_MIN nonzeros) whose columns span more than
                                   scattered_window: csr/tiles */
    /* setup proportional to use (nzi_plan_reorder_pays; docs/PLANNER.md) */
    double default_calls;       /* products a plan is modelled to run without NZ_PLAN_REUSE */
    double reuse_calls;         /* ... and with NZ_PLAN_REUSE or NZ_PLAN_TUNE */
    double spmv_launch_seconds; /* modelled product: a launch plus its bytes at ... */
    double spmv_bytes_per_second; /* ... this rate */
    double reorder_fixed_seconds; /* modelled column renumbering: a fixed part plus ... */
    double reorder_nnz_seconds; /* ... this per nonzero (column counts, sort, relabel, rows) */
    double reorder_gain;        /* share of a product the renumbering saves where x and the
                                   matrix do not fit in L2 (none where they do) */
    double rowblocks_fixed_seconds; /* modelled row-block build (adaptive, ipcsr): a fixed
                                   part plus ... */
    double rowblocks_row_seconds; /* ... this per row */
    double rowblocks_gain;      /* share of a product the row blocks save over merge-path on
                                   irregular rows */
    double tiles_fixed_seconds; /* modelled csr/tiles build: a fixed part plus ... */
    double tiles_nnz_seconds;   /* ... this per nonzero (keys, a 32-bit radix sort, unpack) */
    double compress_fixed_seconds; /* modelled compressed-indices build (16-bit offsets): a
                                   fixed part, plus ... */
    double compress_nnz_seconds; /* ... this per nonzero, plus ... */
    double compress_step_seconds; /* ... this per entry of the longest row (one thread walks
                                   each row) */
    double compress_gain;       /* share of a CSR-vector product the 16-bit offsets save */
    double tiles_product_nnz_seconds; /* modelled csr/tiles product: a launch plus, per
                                   nonzero, this ... */
    double tiles_product_value_seconds; /* ... plus this per value byte */
    double split_hints_l2_share; /* csr/split: streaming loads above this share of L2 */
} nzi_plan_thresholds_t;

extern const nzi_plan_thresholds_t nzi_plan_thresholds;

/* The GPU CSR plan flags NZ_ALG_AUTO adds for candidate alg (op N, caller set no layout):
 * NZ_PLAN_CACHE_HINTS, NZ_PLAN_COLUMN_PANELS, NZ_PLAN_COMPRESS_INDICES, NZ_PLAN_REORDER (csr/
 * atomic where the hot-columns rule holds, nzi_plan_hot_columns, and the renumbering pays
 * within the calls the caller's flags promise, nzi_plan_reorder_pays), from the statistics
 * (bandwidths, cols), the value size and the device's L2 bytes (0: unknown, nothing added).
 * Pure function of its arguments; unit-tested (tests/unit/test_planner.c). */
unsigned nzi_plan_layout_flags(const nz_matrix_stats_t *stats, nz_alg_t alg, unsigned flags,
                               size_t value_size, size_t l2_bytes);

/* The hot-columns rule's test on the statistics alone (hot_share, cols, nnz). */
bool nzi_plan_hot_columns(const nz_matrix_stats_t *stats);

/* Setup proportional to use: the products a plan is modelled to run (default_calls, or
 * reuse_calls with NZ_PLAN_REUSE or NZ_PLAN_TUNE). */
double nzi_plan_expected_calls(unsigned flags);

/* Modelled seconds of one plain product, and of the column renumbering (NZ_PLAN_REORDER), for
 * the statistics' rows, cols and nnz and the value size (0: 4 bytes). */
double nzi_plan_spmv_seconds(const nz_matrix_stats_t *stats, size_t value_size);
double nzi_plan_reorder_seconds(const nz_matrix_stats_t *stats);

/* The column renumbering pays back within the calls the flags promise: it saves reorder_gain
 * of a product only where the matrix and x do not fit in l2_bytes (0: unknown, taken as not
 * fitting), and reorder_gain x product x expected calls must exceed its set-up. Without
 * NZ_PLAN_REUSE (20 calls) this never holds: at most 0.25 x 20 = 5 products' saving against a
 * set-up of 15-100. Pure; hot_share is not read (nzi_plan_hot_columns is the other half). */
bool nzi_plan_reorder_pays(const nz_matrix_stats_t *stats, unsigned flags, size_t value_size,
                           size_t l2_bytes);

/* Modelled seconds of the row-block build of csr/adaptive and csr/ipcsr, and whether it pays
 * back within the calls the flags promise: rowblocks_gain x product x expected calls > set-up.
 * Where it does not, the irregular-rows rules rank merge-path (set-up: one search per block)
 * first. Pure. */
double nzi_plan_rowblocks_seconds(const nz_matrix_stats_t *stats);
bool nzi_plan_rowblocks_pay(const nz_matrix_stats_t *stats, unsigned flags, size_t value_size);

/* Modelled seconds of the csr/tiles build and of one tiles product, and whether the build fits
 * the set-up budget of the calls the flags promise: set-up <= expected calls x product (20
 * products by default, issue 37's "setup within ~20 SpMVs"). Pure. */
double nzi_plan_tiles_seconds(const nz_matrix_stats_t *stats);
double nzi_plan_tiles_product_seconds(const nz_matrix_stats_t *stats, size_t value_size);
bool nzi_plan_tiles_fit(const nz_matrix_stats_t *stats, unsigned flags, size_t value_size);

/* Modelled seconds of the compressed-indices build (NZ_PLAN_COMPRESS_INDICES), and whether it
 * pays back within the calls the flags promise: compress_gain x product x expected calls >
 * set-up. Pure. */
double nzi_plan_compress_seconds(const nz_matrix_stats_t *stats);
bool nzi_plan_compress_pays(const nz_matrix_stats_t *stats, unsigned flags, size_t value_size);

/* The bytes a product reads and writes: the matrix, x and y (the planner's cost model). */
double nzi_plan_product_bytes(const nz_matrix_stats_t *stats, size_t value_size);
/* The matrix and x fit in l2_bytes (0: unknown, taken as not fitting). */
bool nzi_plan_fits_l2(const nz_matrix_stats_t *stats, size_t value_size, size_t l2_bytes);

#define NZI_PLAN_MAX_CANDIDATES 16
#define NZI_PLAN_WHY_SIZE 320

typedef struct nzi_plan_request {
    nz_backend_t backend;
    nz_format_t format;            /* the matrix's format, or NZ_FORMAT_COUNT: advise one */
    nz_operation_t op;
    unsigned flags;                /* NZ_PLAN_DETERMINISTIC filters the list; NZ_PLAN_REUSE
                                      and NZ_PLAN_TUNE allow preprocessing that pays back over
                                      many calls */
    /* Which (format, alg) pairs exist and which are reproducible: NULL asks the backend's own
     * table (nzi_backend_get); tests pass a table of their own (only spmv_supports and
     * spmv_reproducible are read). */
    const nzi_backend_t *table;
    size_t value_size;             /* bytes per value (0: unknown, 4 assumed) */
    size_t l2_bytes;               /* the device's L2 (0: unknown; nz_spmv_plan_choose) */
    int64_t resident_threads;      /* threads resident at once on the device, from the backend
                                      table's resident_threads (0: unknown, as in
                                      nz_spmv_plan_choose: device_threads, an H100's, assumed) */
} nzi_plan_request_t;

typedef struct nzi_plan_choice {
    nz_format_t format;                        /* the request's, or the advised one */
    int count;                                 /* candidates in algs (0: nothing usable) */
    nz_alg_t algs[NZI_PLAN_MAX_CANDIDATES];    /* ranked, best first, no duplicates */
    int timed;                                 /* NZ_PLAN_TUNE times only algs[0 .. timed):
                                                  1 where the others would run the same code
                                                  (cpu-tiny), else count */
    const char *rule;                          /* short name of the rule that fired */
    char why[NZI_PLAN_WHY_SIZE];               /* one line: the statistics that decided */
} nzi_plan_choice_t;

/* ---- between the planner's files (planner.c, plan_rules.c, plan_model.c) ---- */

/* A rule's answer: its name and its ranked list (the backend drops what it lacks). */
typedef struct nzi_plan_rule {
    const char *name;
    const nz_alg_t *rank;
    int count;
    int timed; /* candidates TUNE may time (0: all): 1 where the others run the same code */
} nzi_plan_rule_t;

/* The rules of each backend for a format (plan_rules.c): the rule that fires, its reason
 * appended to why. */
nzi_plan_rule_t nzi_plan_cuda_rule(const nz_matrix_stats_t *stats, const nzi_plan_request_t *r,
                                   nz_format_t format, char *why, size_t size);
nzi_plan_rule_t nzi_plan_cpu_rule(const nz_matrix_stats_t *stats, const nzi_plan_request_t *r,
                                  nz_format_t format, char *why, size_t size);

/* Append printf text to why (truncating; why stays terminated). */
void nzi_plan_say(char *why, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* AUTO adds its own layouts and hints only to op-N plans whose caller asked for none (a GPU CSR
 * plan also needs the device's L2 size: nzi_plan_auto). */
bool nzi_plan_adds_layouts(nz_operation_t op, unsigned flags);

/* The rules that pick an atomic kernel on a layout of its own (hot-columns, scattered-tiles) apply
 * only where the caller left that to the planner: op N, no layout or hints asked for, and neither
 * bitwise reproducibility nor mixed precision (which those kernels lack). */
bool nzi_plan_may_pick_atomics(const nzi_plan_request_t *r);

/* NZ_ALG_AUTO for an SpMM plan of A with k right-hand sides on the backend of `table`: serial
 * on the CPU under cpu_serial_nnz multiply-adds (nnz x k), where the parallel kernel would run
 * on one thread anyway; otherwise the backend's default (spmm_default_alg). */
nz_alg_t nzi_plan_spmm_alg(const nzi_backend_t *table, const nz_matrix_t *A, int64_t k);

/* Rank the algorithms for the request. Returns NZ_ERR_INVALID_ARGUMENT for a bad backend or
 * format (no context: the caller words the message); count == 0 when the backend has nothing
 * usable for the format (under NZ_PLAN_DETERMINISTIC: nothing reproducible). */
nz_status_t nzi_plan_choose(const nz_matrix_stats_t *stats, const nzi_plan_request_t *request,
                            nzi_plan_choice_t *choice);

/* Bitwise run-to-run reproducibility of (format, alg, op) on a backend, as its table says:
 * 1 reproducible, 0 not, -1 a pair the backend does not have (treated as not reproducible when
 * NZ_PLAN_DETERMINISTIC is asked for). tests/gpu/test_planner.c checks it against what plans
 * report. */
int nzi_plan_reproducible(nz_backend_t backend, nz_format_t format, nz_alg_t alg,
                          nz_operation_t op);

/* The CSR vector width V the CSR-vector kernel derives from the mean row length (power of two,
 * 2..32); the rules reason with it. */
int nzi_plan_vector_width(double row_mean);

/* Cheap statistics of op(A) for the algorithm rules: rows, cols, nnz, row_min / row_max /
 * row_mean / row_std, empty_rows. CSR: the backend's csr_row_stats (device: op T gives the rows
 * of A^T, which the cached-transpose plans run on, and op N also the bandwidths; host: op N one
 * pass over the row offsets, no allocation), and hot_share for op N where the hot-columns rule's
 * nonzero and column thresholds hold and the backend computes it (csr_hot_share; else 0);
 * otherwise rows, cols, nnz and the mean only (the CPU rules need no more). Diagonals, symmetry
 * and bytes[] are left 0 (nz_matrix_stats computes those). */
nz_status_t nzi_plan_row_stats(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                               nz_matrix_stats_t *stats);

/* Resolve NZ_ALG_AUTO for a plan whose ctx, A, op, flags and backend are set: statistics, ranked
 * candidates, then either the first candidate the backend accepts, or (NZ_PLAN_TUNE) the fastest
 * of the first tune_candidates, timed on scratch vectors freed before returning. On success the
 * plan is set up (plan->alg, state, reproducible, vector_width, workspace_bytes); on failure
 * nothing is held. */
nz_status_t nzi_plan_auto(nz_spmv_plan_t *plan);

#ifdef __cplusplus
}
#endif

#endif /* NZI_PLAN_INTERNAL_H */
