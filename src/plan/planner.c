/* planner.c: the SpMV planner: algorithm and format choice from matrix statistics, AUTO and TUNE. */
#include "plan_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/*
 * The rules and where their numbers come from (docs/PLANNER.md has the full table):
 *
 * GPU, CSR. SpMV is bound by memory traffic, which every CSR kernel reads once, so what separates
 * the kernels is load balance and lane utilisation. Measured on an H200 (small, L2-resident
 * matrices, best kernel per matrix): 7-point Laplacian and Q1 FE matrices -> vector (adaptive and
 * ipcsr close); uniform random rows of mean 16 -> vector; R-MAT -> vector (single) / adaptive
 * (double); rail (few rows of thousands) -> vector / adaptive; short rows mixed with enormous ones
 * -> adaptive / ipcsr. Merge-path and LightSpMV were never the best there, so they rank behind.
 * The rules, in order:
 *   empty      no rows or no nonzeros: nothing to balance (scalar; the dispatcher only scales y)
 *   hot-columns  op N, at least 2^20 nonzeros over hot_cols_min columns or more, the
 *              NZ_STATS_HOT_COLUMNS most-read columns holding hot_share_min of them, and the caller
 *              asked for no determinism, mixed precision, hints or layout: the atomic scatter on
 *              columns renumbered by degree (nzi_plan_layout_flags adds NZ_PLAN_REORDER), which
 *              keeps the most-read entries of x in L1 (R-MAT 20 on an H200, session 13: 1.59x /
 *              1.35x faster than adaptive, single / double); only where the renumbering pays
 *              back within the calls the caller promised (nzi_plan_reorder_pays: NZ_PLAN_REUSE
 *              or NZ_PLAN_TUNE, and the matrix with x beyond L2)
 *   scattered-tiles  the same caller conditions, at least NZI_HOT_NNZ_MIN nonzeros in at least
 *              tiles_rows_min rows, columns spanning more than scattered_window: csr/tiles (row
 *              tiles sorted by column, sums in shared memory; spmv_csr_tiles.cu), whose gathers
 *              share lines where rows in order share none. H200, session 14 probe: random 4M x 16
 *              282 / 462 us (single / double) against cuSPARSE 498 / 641; mixed 2M 119 / 159
 *              against 161 / 190. Long rows are no obstacle (they go to a chunked pass), so
 *              the rule comes before long-rows. Not where the matrix and x fit in L2 (fits_l2)
 *   short      no row longer than short_row_max: one thread per row is enough (scalar)
 *   long-rows  the longest row needs row_max / V steps of a V-lane vector (V from the mean, as
 *              the CSR-vector kernel picks it) while a perfectly balanced kernel gives each
 *              resident thread nnz / device_threads entries: when the first exceeds
 *              imbalance_ratio times the second (and imbalance_min_steps), one vector holds the
 *              whole grid up: split long rows (adaptive, ipcsr, merge)
 *   tiny       fewer than tiny_nnz nonzeros: every kernel is launch-bound; vector needs no
 *              preprocessing
 *   few-rows   rows longer than 32 and rows x V below few_rows_fraction (1/2) of the resident
 *              threads: one vector per row fills less than half the device, so at least half
 *              of the resident threads would idle (adaptive gives a block to each long row).
 *              Measured on an H100: rail 4096 x 1M (rows x V = 131072 lanes, 0.48 of the
 *              device) ran 1.06x (single) / 1.10x (double) faster with adaptive than vector
 *              (bench/results/h100-2026-11-23-s4-bench.txt)
 *   empty-rows more than empty_fraction of the rows are empty: V from the mean is too narrow for
 *              the rows that have entries; row blocks packed by nonzeros skip empty runs
 *   variable   row_std / row_mean above variable_cv: one V cannot fit all rows
 *   scattered  otherwise, where a row's columns span more than scattered_window columns (x is
 *              gathered from far apart): adaptive, whose row blocks load the matrix in full
 *              lines (in double without allocating in L1) and leave the caches to x. H200,
 *              random 4M x 16 (session 13): adaptive 525.6 / 656.0 us (single / double)
 *              against CSR-vector with hints 550.3 / 702.3 and with panels 648.8 / 722.1
 *   uniform    everything else: vector
 * GPU, other formats: a fixed preference per format (COO and HYB: segmented before atomic; BSR:
 * block-row before column order; ELL, SELL, DIA: their one-thread-per-row kernel).
 * CPU: one thread for products under cpu_serial_nnz multiply-adds, the threshold at which the
 * kernels themselves drop to one thread (NZI_CPU_SERIAL_WORK, src/cpu/cpu_kernels.h: measured on
 * 2 cores, idle and busy; docs/PLANNER.md), so a parallel candidate would run the serial code and
 * TUNE does not time it against serial (only noise, or a loaded machine, would tell them apart);
 * the SIMD SELL kernel where the chunk allows it; otherwise the parallel kernel.
 * Format advice: the format whose SpMV reads the fewest bytes (nz_matrix_stats bytes[]), if that
 * is at most format_gain x the CSR bytes; otherwise CSR, which has the best-tuned kernels.
 */
const nzi_plan_thresholds_t nzi_plan_thresholds = {
    .device_threads = 132.0 * 2048.0, /* H100 SXM / H200: 132 SMs x 2048 threads */
    .short_row_max = 2.0,
    .imbalance_ratio = 8.0,
    .imbalance_min_steps = 32.0,
    .tiny_nnz = 16384.0,
    .few_rows_fraction = 0.5, /* one vector per row fills less than half the device */
    .empty_fraction = 0.5,
    .variable_cv = 1.0,
    .cpu_serial_nnz = 32768.0, /* = NZI_CPU_SERIAL_WORK (tests/unit/test_cpu_threads.c checks) */
    .format_gain = 0.9,
    .tune_candidates = 4,
    .tune_runs_gpu = 7,
    .tune_runs_cpu = 3,
    .layout_window_min = 4.0 * 1024 * 1024, /* 4 MB of x between a row's first and last column */
    .compress_row_min = 64.0, /* CSR-vector's 32-lane rows (4 nonzeros per lane and more) */
    .hot_share_min = 0.25,    /* R-MAT 20: 0.58; uniform random columns 4M wide: 0.004 */
    .hot_cols_min = 8.0 * NZ_STATS_HOT_COLUMNS, /* x well beyond what L1 holds */
    .scattered_window = 524288.0, /* 4 MB of x in double, the hints' layout_window_min */
    .tiles_rows_min = 262144.0, /* tiles of ~1000 rows and more on 2 x 132 resident blocks */
    .default_calls = 20.0, /* issue 37: setup within ~20 products unless the caller reuses */
    .reuse_calls = 1000.0,
    .spmv_launch_seconds = 5e-6,
    .spmv_bytes_per_second = 2.0e12, /* H100, s17: 1.4-2.6 TB/s over the suite's csr kernels */
    .reorder_fixed_seconds = 1.2e-4, /* H100, s16: csr/atomic:reorder on 27K-260K nonzeros */
    .reorder_nnz_seconds = 8.6e-11,  /* H100, s17: R-MAT 20 (16.1M) 1.51 ms */
    .reorder_gain = 0.25, /* R-MAT 20: atomic on renumbered columns 1.3-1.6x adaptive */
    /* H100, 2026-11-27 (bench/results/h100-2026-11-27-spmv-large-base-a9d848f.csv.gz): the
     * csr/adaptive plan took 0.75 ms on cnr-2000 (326K rows), 1.13 / 1.28 ms on dblp-2010 (326K),
     * 7.8 ms on mixed-2M (2.1M), 9.8 ms on random-4M-16 (4.2M), 17.6 ms on laplace3d-200 (8M):
     * 2.3-3.9 ns a row */
    .rowblocks_fixed_seconds = 0.0, /* rail-4096x1M: 0.06 ms, as merge-path's own set-up */
    .rowblocks_row_seconds = 3.0e-9,
    /* the same run, merge-path (with hints) against adaptive on the two irregular real graphs:
     * 0.79x, 0.94x (cnr-2000 single, double), 1.10x, 1.25x (dblp-2010): at most ~20% saved */
    .rowblocks_gain = 0.2,
};

#define T nzi_plan_thresholds
#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- reproducibility --------------------------------------------------------------------- */

int nzi_plan_reproducible(nz_backend_t backend, nz_format_t format, nz_alg_t alg,
                          nz_operation_t op) {
    const nzi_backend_t *table = nzi_backend_get(backend);
    if (table == NULL) return -1;
    return table->spmv_reproducible(format, alg, op);
}

/* ---- ranked lists -------------------------------------------------------------------------- */

static const nz_alg_t rank_uniform[] = {NZ_ALG_VECTOR, NZ_ALG_ADAPTIVE,     NZ_ALG_IPCSR,
                                        NZ_ALG_LIGHT_VECTOR, NZ_ALG_MERGE, NZ_ALG_SCALAR,
                                        NZ_ALG_LIGHT_WARP};
static const nz_alg_t rank_irregular[] = {NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,      NZ_ALG_MERGE,
                                          NZ_ALG_VECTOR,   NZ_ALG_LIGHT_WARP, NZ_ALG_LIGHT_VECTOR,
                                          NZ_ALG_SCALAR};
/* irregular rows where the row blocks' build does not pay within the expected calls */
static const nz_alg_t rank_irregular_light[] = {NZ_ALG_MERGE, NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,
                                                NZ_ALG_VECTOR, NZ_ALG_LIGHT_WARP,
                                                NZ_ALG_LIGHT_VECTOR, NZ_ALG_SCALAR};
static const nz_alg_t rank_short[] = {NZ_ALG_SCALAR, NZ_ALG_VECTOR,       NZ_ALG_ADAPTIVE,
                                      NZ_ALG_IPCSR,  NZ_ALG_LIGHT_VECTOR, NZ_ALG_MERGE,
                                      NZ_ALG_LIGHT_WARP};
static const nz_alg_t rank_tiny[] = {NZ_ALG_VECTOR,   NZ_ALG_SCALAR, NZ_ALG_LIGHT_VECTOR,
                                     NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,  NZ_ALG_MERGE,
                                     NZ_ALG_LIGHT_WARP};
static const nz_alg_t rank_scattered[] = {NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR, NZ_ALG_VECTOR,
                                          NZ_ALG_MERGE, NZ_ALG_LIGHT_VECTOR, NZ_ALG_SCALAR,
                                          NZ_ALG_LIGHT_WARP};
static const nz_alg_t rank_hot[] = {NZ_ALG_ATOMIC, NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,
                                    NZ_ALG_MERGE,  NZ_ALG_VECTOR,   NZ_ALG_LIGHT_WARP,
                                    NZ_ALG_LIGHT_VECTOR, NZ_ALG_SCALAR};
static const nz_alg_t rank_tiles[] = {NZ_ALG_TILES, NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,
                                      NZ_ALG_MERGE, NZ_ALG_VECTOR,   NZ_ALG_LIGHT_WARP,
                                      NZ_ALG_LIGHT_VECTOR, NZ_ALG_SCALAR};
static const nz_alg_t rank_segmented[] = {NZ_ALG_SEGMENTED, NZ_ALG_SCALAR, NZ_ALG_ATOMIC};
static const nz_alg_t rank_bsr[] = {NZ_ALG_BSR_ROW, NZ_ALG_BSR_COL};
static const nz_alg_t rank_per_row[] = {NZ_ALG_SCALAR, NZ_ALG_VECTOR};
static const nz_alg_t rank_cpu_serial[] = {NZ_ALG_SERIAL, NZ_ALG_PARALLEL};
static const nz_alg_t rank_cpu_parallel[] = {NZ_ALG_PARALLEL, NZ_ALG_SIMD, NZ_ALG_SERIAL};
static const nz_alg_t rank_cpu_sell[] = {NZ_ALG_SIMD, NZ_ALG_PARALLEL, NZ_ALG_SERIAL};

typedef struct rule {
    const char *name;
    const nz_alg_t *rank;
    int count;
    int timed; /* candidates TUNE may time (0: all): 1 where the others run the same code */
} rule_t;

#define RULE(n, list) ((rule_t){(n), (list), COUNT_OF(list), 0})
#define RULE_UNTIMED(n, list) ((rule_t){(n), (list), COUNT_OF(list), 1})

int nzi_plan_vector_width(double row_mean) {
    int width = 2;
    while (width < 32 && (double)width < row_mean) width *= 2;
    return width;
}

/* Append printf text to why (truncating; why stays terminated). */
static void say(char *why, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void say(char *why, size_t size, const char *fmt, ...) {
    size_t used = strlen(why);
    if (used + 1 >= size) return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(why + used, size - used, fmt, args);
    va_end(args);
}

/* AUTO adds its own layouts and hints only to op-N plans whose caller asked for none (a GPU CSR
 * plan also needs the device's L2 size: nzi_plan_auto). */
static bool planner_adds_layouts(nz_operation_t op, unsigned flags) {
    return op == NZ_OP_N && !(flags & (NZI_PLAN_LAYOUTS | NZ_PLAN_CACHE_HINTS));
}

/* The rules that pick an atomic kernel on a layout of its own (hot-columns, scattered-tiles) apply
 * only where the caller left that to the planner: op N, no layout or hints asked for, and neither
 * bitwise reproducibility nor mixed precision (which those kernels lack). */
static bool planner_may_pick_atomics(const nzi_plan_request_t *r) {
    return planner_adds_layouts(r->op, r->flags) &&
           !(r->flags & (NZ_PLAN_DETERMINISTIC | NZ_PLAN_MIXED));
}

bool nzi_plan_hot_columns(const nz_matrix_stats_t *s) {
    return (double)s->nnz >= NZI_HOT_NNZ_MIN && (double)s->cols >= T.hot_cols_min &&
           s->hot_share >= T.hot_share_min;
}

/*
 * Setup proportional to use (issue 37). A plan's preprocessing is worth its time only over the
 * products the caller runs: without NZ_PLAN_REUSE the planner models default_calls (20) of
 * them, with NZ_PLAN_REUSE or NZ_PLAN_TUNE reuse_calls (1000). The model, in seconds:
 *   product       spmv_launch_seconds + (nnz (4 + vs) + rows (4 + vs) + cols vs) /
 *                 spmv_bytes_per_second: the bytes every csr kernel moves (column index and
 *                 value per nonzero, offset and y per row, x once);
 *   renumbering   reorder_fixed_seconds + nnz reorder_nnz_seconds: a column count (one atomic
 *                 per nonzero), a sort of cols keys, relabelled indices and a row index per
 *                 nonzero, allocations and one host synchronisation (spmv_csr_layout_build.cu);
 *   saving        reorder_gain x product, and only where the matrix and x together exceed L2:
 *                 renumbering keeps the most-read entries of x in L1 and shared lines, which
 *                 pays where x comes from DRAM (R-MAT 20, 16M nonzeros, 8 MB of x beside a
 *                 190 MB matrix) and not where everything stays in L2 (issue 37, H100:
 *                 cnr-2000 and dblp-2010 ran 0.81x / 0.69x cuSPARSE with it, 3.2M / 1.6M
 *                 nonzeros, their set-up 3.2 / 1.7 ms = ~95 products).
 * The renumbering pays when saving x expected calls > its set-up. With 20 calls that needs a
 * set-up below 5 products, which the model never gives (the fixed part alone is 24 launches),
 * so the default plan never renumbers; with reuse it pays on every matrix beyond L2.
 */
double nzi_plan_expected_calls(unsigned flags) {
    return (flags & (NZ_PLAN_REUSE | NZ_PLAN_TUNE)) ? T.reuse_calls : T.default_calls;
}

static double bytes_of_product(const nz_matrix_stats_t *s, size_t value_size) {
    const double vs = value_size > 0 ? (double)value_size : 4.0;
    return (double)s->nnz * (4.0 + vs) + (double)s->rows * (4.0 + vs) + (double)s->cols * vs;
}

double nzi_plan_spmv_seconds(const nz_matrix_stats_t *s, size_t value_size) {
    return T.spmv_launch_seconds + bytes_of_product(s, value_size) / T.spmv_bytes_per_second;
}

double nzi_plan_reorder_seconds(const nz_matrix_stats_t *s) {
    return T.reorder_fixed_seconds + (double)s->nnz * T.reorder_nnz_seconds;
}

/* The row blocks of csr/adaptive and csr/ipcsr balance irregular rows better than merge-path's
 * even split of rows + nonzeros, but their build (2-4 ns a row beyond merge-path's own set-up on the
 * H100) costs 30-90 products on the real graphs of issue 37, where merge-path's costs ~3: over
 * the default 20 calls merge-path finishes first on both (cnr-2000 single: 0.75 + 20 x 0.0226
 * ms against 0.06 + 20 x 0.0178; dblp-2010 double: 1.28 + 20 x 0.0133 against 0.06 + 20 x
 * 0.0166). */
double nzi_plan_rowblocks_seconds(const nz_matrix_stats_t *s) {
    return T.rowblocks_fixed_seconds + (double)(s->rows > 0 ? s->rows : 0) * T.rowblocks_row_seconds;
}

bool nzi_plan_rowblocks_pay(const nz_matrix_stats_t *s, unsigned flags, size_t value_size) {
    const double saving = T.rowblocks_gain * nzi_plan_spmv_seconds(s, value_size);
    return saving * nzi_plan_expected_calls(flags) > nzi_plan_rowblocks_seconds(s);
}

/* The matrix and x fit in L2 (l2_bytes 0: unknown, taken as not fitting). */
static bool fits_l2(const nz_matrix_stats_t *s, size_t value_size, size_t l2_bytes) {
    return l2_bytes > 0 && bytes_of_product(s, value_size) <= (double)l2_bytes;
}

bool nzi_plan_reorder_pays(const nz_matrix_stats_t *s, unsigned flags, size_t value_size,
                           size_t l2_bytes) {
    if (s->nnz <= 0 || fits_l2(s, value_size, l2_bytes)) return false;
    const double saving = T.reorder_gain * nzi_plan_spmv_seconds(s, value_size);
    return saving * nzi_plan_expected_calls(flags) > nzi_plan_reorder_seconds(s);
}

/* An irregular-rows rule: the row-block kernels first where their build pays within the
 * expected calls (nzi_plan_rowblocks_pay), else merge-path first, with the reason. */
static rule_t irregular_rule(const char *name, bool rowblocks, const nz_matrix_stats_t *s,
                             unsigned flags, char *why, size_t size) {
    if (rowblocks) return RULE(name, rank_irregular);
    say(why, size, "; merge-path first: the row blocks' build (%.2f ms modelled) does not pay "
        "back within %.0f calls", 1e3 * nzi_plan_rowblocks_seconds(s),
        nzi_plan_expected_calls(flags));
    return RULE(name, rank_irregular_light);
}

/* The GPU CSR rules (see the top of the file). */
static rule_t cuda_csr_rule(const nz_matrix_stats_t *s, const nzi_plan_request_t *r, char *why,
                            size_t size) {
    double rows = (double)s->rows, nnz = (double)s->nnz;
    if (s->rows <= 0 || s->nnz <= 0) {
        say(why, size, "no nonzeros: y = beta y, nothing to balance");
        return RULE("empty", rank_short);
    }
    if (planner_may_pick_atomics(r) && nzi_plan_hot_columns(s) &&
        nzi_plan_reorder_pays(s, r->flags, r->value_size, r->l2_bytes)) {
        say(why, size, "the %d most-read of %lld columns hold %.0f%% of the nonzeros: columns "
            "renumbered by degree, atomic scatter (pays over %.0f calls)", NZ_STATS_HOT_COLUMNS,
            (long long)s->cols, 100.0 * s->hot_share, nzi_plan_expected_calls(r->flags));
        return RULE("hot-columns", rank_hot);
    }
    const double window = (double)(s->lower_bandwidth + s->upper_bandwidth + 1);
    /* like the renumbering, tiles buy x's gathers locality, which pays nothing where the
     * matrix and x stay in L2 (their set-up, 15-38 products on the H100 suite, for nothing) */
    if (planner_may_pick_atomics(r) && nnz >= NZI_HOT_NNZ_MIN && rows >= T.tiles_rows_min &&
        window > T.scattered_window && !fits_l2(s, r->value_size, r->l2_bytes)) {
        say(why, size, "%lld rows reading columns over a window of %.0f: row tiles sorted by "
            "column, sums in shared memory", (long long)s->rows, window);
        return RULE("scattered-tiles", rank_tiles);
    }
    /* the irregular-rows rules: row blocks first where their build pays within the calls */
    const bool rowblocks = nzi_plan_rowblocks_pay(s, r->flags, r->value_size);
#define IRREGULAR(n) irregular_rule((n), rowblocks, s, r->flags, why, size)
    double mean = nnz / rows;
    int width = nzi_plan_vector_width(mean);
    double steps = (double)s->row_max / width;
    double balanced = fmax(1.0, nnz / T.device_threads);
    double cv = s->row_std / mean;
    double empty = (double)s->empty_rows / rows;
    if ((double)s->row_max <= T.short_row_max) {
        say(why, size, "no row longer than %lld: one thread per row", (long long)s->row_max);
        return RULE("short", rank_short);
    }
    if (steps > T.imbalance_min_steps && steps > T.imbalance_ratio * balanced) {
        say(why, size,
            "longest row %lld = %.0f steps of a %d-lane vector vs %.1f per thread if balanced: "
            "split long rows", (long long)s->row_max, steps, width, balanced);
        return IRREGULAR("long-rows");
    }
    if (nnz < T.tiny_nnz) {
        say(why, size, "%lld nonzeros: launch-bound, no preprocessing", (long long)s->nnz);
        return RULE("tiny", rank_tiny);
    }
    if (mean > 32.0 && rows * width < T.few_rows_fraction * T.device_threads) {
        /* even long rows: CSR-vector, eight loads in flight per lane on rows this long and each
         * row split over several warps while the rows cannot fill the device (rail 4096 x 1M,
         * H200: session 11, one warp a row, with hints 34.7 / 48.6 us single / double, adaptive
         * 42.2 / 51.2; session 12, eight warps a row, 33.0 / 44.2); uneven ones: adaptive
         * splits them */
        const bool even = cv <= T.variable_cv;
        say(why, size,
            "%lld rows of mean %.0f: one vector per row fills less than half the device%s",
            (long long)s->rows, mean, even ? "; rows even: 32 lanes per row" : "");
        return even ? RULE("few-rows", rank_uniform) : IRREGULAR("few-rows");
    }
    if (empty > T.empty_fraction) {
        say(why, size, "%.0f%% of the rows empty: pack rows by nonzeros", 100.0 * empty);
        return IRREGULAR("empty-rows");
    }
    if (cv > T.variable_cv) {
        say(why, size, "row lengths vary (mean %.1f, std %.1f, max %lld): pack rows by nonzeros",
            mean, s->row_std, (long long)s->row_max);
        return IRREGULAR("variable");
    }
    if (window > T.scattered_window) {
        say(why, size, "uniform rows (mean %.1f, std %.1f, max %lld) over a window of %.0f "
            "columns: x gathered from far apart, products staged by row blocks", mean,
            s->row_std, (long long)s->row_max, window);
        return RULE("scattered", rank_scattered);
    }
    say(why, size, "uniform rows (mean %.1f, std %.1f, max %lld): %d lanes per row", mean,
        s->row_std, (long long)s->row_max, width);
    return RULE("uniform", rank_uniform);
#undef IRREGULAR
}

static rule_t cuda_rule(const nz_matrix_stats_t *s, const nzi_plan_request_t *r,
                        nz_format_t format, char *why, size_t size) {
    switch (format) {
    case NZ_FORMAT_CSR: return cuda_csr_rule(s, r, why, size);
    case NZ_FORMAT_COO:
    case NZ_FORMAT_HYB:
        say(why, size, "segmented reduction: balanced and reproducible");
        return RULE("segmented", rank_segmented);
    case NZ_FORMAT_BSR:
        say(why, size, "a warp per block row");
        return RULE("bsr", rank_bsr);
    default:
        say(why, size, "one thread per row of the padded layout");
        return RULE("per-row", rank_per_row);
    }
}

static rule_t cpu_rule(const nz_matrix_stats_t *s, const nzi_plan_request_t *r,
                       nz_format_t format, char *why, size_t size) {
    (void)r;
    if (format == NZ_FORMAT_SELL) {
        say(why, size, "SIMD over the chunk when its height allows");
        return RULE("cpu-sell", rank_cpu_sell);
    }
    if ((double)s->nnz < T.cpu_serial_nnz) {
        say(why, size, "%lld nonzeros: one thread (the parallel kernels run this on one thread "
            "too)", (long long)s->nnz);
        return RULE_UNTIMED("cpu-tiny", rank_cpu_serial);
    }
    say(why, size, "OpenMP over rows");
    return RULE("cpu-parallel", rank_cpu_parallel);
}

/* ---- format advice ------------------------------------------------------------------------- */

/* The backend has an algorithm for the format (a reproducible one under NZ_PLAN_DETERMINISTIC). */
static bool format_usable(const nzi_plan_request_t *r, const nzi_backend_t *t, nz_format_t format) {
    for (int i = 1; nzi_alg_at(i) != NZ_ALG_AUTO; i++)
        if (t->spmv_supports(format, nzi_alg_at(i)) &&
            (!(r->flags & NZ_PLAN_DETERMINISTIC) ||
             t->spmv_reproducible(format, nzi_alg_at(i), r->op) == 1))
            return true;
    return false;
}

/* The fewest bytes read wins if it saves at least 1 - format_gain over CSR. The formats tried
 * are the backend policy's (the GPU list has ELL and HYB, whose column-major layout the CPU
 * kernels walk with a large stride). */
static nz_format_t advise_format(const nz_matrix_stats_t *s, const nzi_plan_request_t *r,
                                 const nzi_backend_t *t, const nz_format_t *list, int n,
                                 char *why, size_t size) {
    double csr = (double)s->bytes[NZ_FORMAT_CSR];
    if (s->nnz <= 0 || csr <= 0) {
        say(why, size, "format csr (%s); ", s->nnz <= 0 ? "no nonzeros" : "no size information");
        return NZ_FORMAT_CSR;
    }
    nz_format_t best = NZ_FORMAT_CSR;
    double best_bytes = csr;
    char sizes[160] = "";
    for (int i = 0; i < n; i++) {
        nz_format_t f = list[i];
        if (!format_usable(r, t, f)) continue;
        if (s->bytes[f] == 0) {
            say(sizes, sizeof sizes, "%s%s refused", sizes[0] ? ", " : "", nz_format_name(f));
            continue;
        }
        double b = (double)s->bytes[f];
        say(sizes, sizeof sizes, "%s%s %.2f", sizes[0] ? ", " : "", nz_format_name(f), b / csr);
        if (b <= T.format_gain * csr && b < best_bytes) {
            best = f;
            best_bytes = b;
        }
    }
    if (best == NZ_FORMAT_CSR && !format_usable(r, t, NZ_FORMAT_CSR)) {
        say(why, size, "format csr (nothing else saves traffic, but the backend lacks csr); ");
        return NZ_FORMAT_CSR;
    }
    if (best == NZ_FORMAT_CSR)
        say(why, size, "format csr (no format reads <= %.2fx its bytes: %s); ", T.format_gain,
            sizes[0] ? sizes : "none usable");
    else
        say(why, size, "format %s (reads %.2fx the csr bytes: %s); ", nz_format_name(best),
            best_bytes / csr, sizes);
    return best;
}

/* ---- the choice ------------------------------------------------------------------------------ */

/* What the planner does differently per backend: the rules, the formats format advice tries,
 * the timed runs per tuning candidate. Indexed by nz_backend_t; which (format, algorithm) pairs
 * exist and are reproducible is the backend table's answer, not the planner's. */
typedef rule_t (*rule_fn)(const nz_matrix_stats_t *s, const nzi_plan_request_t *r,
                          nz_format_t format, char *why, size_t size);
static const nz_format_t gpu_formats[] = {NZ_FORMAT_DIA, NZ_FORMAT_BSR, NZ_FORMAT_ELL,
                                          NZ_FORMAT_SELL, NZ_FORMAT_HYB};
static const nz_format_t cpu_formats[] = {NZ_FORMAT_DIA, NZ_FORMAT_BSR, NZ_FORMAT_SELL};
static const struct policy {
    rule_fn rule;
    const nz_format_t *advice_formats;
    int advice_count;
    const int *tune_runs; /* timed executions per candidate */
    const double *serial_work; /* fewer multiply-adds run on one thread (NULL: no such rule) */
} policies[] = {
    [NZ_BACKEND_CPU] = {cpu_rule, cpu_formats, COUNT_OF(cpu_formats), &T.tune_runs_cpu,
                        &T.cpu_serial_nnz},
    [NZ_BACKEND_CUDA] = {cuda_rule, gpu_formats, COUNT_OF(gpu_formats), &T.tune_runs_gpu, NULL},
};

nz_alg_t nzi_plan_spmm_alg(const nzi_backend_t *table, const nz_matrix_t *A, int64_t k) {
    const double *serial_work = policies[table->id].serial_work;
    if (serial_work != NULL && (double)A->nnz * (double)k < *serial_work &&
        table->spmm_supports(A->format, NZ_ALG_SERIAL))
        return NZ_ALG_SERIAL;
    return table->spmm_default_alg(A->format);
}

/* Append alg to the choice if the backend has it, it is not there yet and, under
 * NZ_PLAN_DETERMINISTIC, the backend says it is reproducible. */
static void add_candidate(nzi_plan_choice_t *c, const nzi_plan_request_t *r,
                          const nzi_backend_t *t, nz_alg_t alg) {
    if (c->count >= NZI_PLAN_MAX_CANDIDATES || !t->spmv_supports(c->format, alg)) return;
    if ((r->flags & NZ_PLAN_DETERMINISTIC) && t->spmv_reproducible(c->format, alg, r->op) != 1)
        return;
    for (int i = 0; i < c->count; i++)
        if (c->algs[i] == alg) return;
    c->algs[c->count++] = alg;
}

nz_status_t nzi_plan_choose(const nz_matrix_stats_t *stats, const nzi_plan_request_t *request,
                            nzi_plan_choice_t *choice) {
    if (stats == NULL || request == NULL || choice == NULL) return NZ_ERR_NULL_ARGUMENT;
    const nzi_plan_request_t *r = request;
    if (nzi_backend_get(r->backend) == NULL) return NZ_ERR_INVALID_ARGUMENT;
    const nzi_backend_t *t = r->table != NULL ? r->table : nzi_backend_get(r->backend);
    const struct policy *policy = &policies[r->backend];
    if ((int)r->format < 0 || (int)r->format > NZ_FORMAT_COUNT) return NZ_ERR_INVALID_ARGUMENT;
    if (r->op != NZ_OP_N && r->op != NZ_OP_T) return NZ_ERR_INVALID_ARGUMENT;

    memset(choice, 0, sizeof *choice);
    choice->format = r->format;
    if (r->format == NZ_FORMAT_COUNT)
        choice->format = advise_format(stats, r, t, policy->advice_formats, policy->advice_count,
                                       choice->why, sizeof choice->why);
    say(choice->why, sizeof choice->why, "%s on the %s: ", nz_format_name(choice->format),
        t->name);
    size_t head = strlen(choice->why);
    rule_t rule = policy->rule(stats, r, choice->format, choice->why, sizeof choice->why);
    choice->rule = rule.name;
    for (int i = 0; i < rule.count; i++) add_candidate(choice, r, t, rule.rank[i]);
    for (int i = 1; nzi_alg_at(i) != NZ_ALG_AUTO; i++) add_candidate(choice, r, t, nzi_alg_at(i));
    choice->timed = rule.timed > 0 && rule.timed < choice->count ? rule.timed : choice->count;

    /* Name the winner in front of the reason: "csr on the GPU: vector (uniform rows ...)". */
    char reason[NZI_PLAN_WHY_SIZE];
    snprintf(reason, sizeof reason, "%s", choice->why + head);
    choice->why[head] = '\0';
    if (choice->count == 0)
        say(choice->why, sizeof choice->why, "no %salgorithm available (%s)",
            (r->flags & NZ_PLAN_DETERMINISTIC) ? "bitwise reproducible " : "", reason);
    else
        say(choice->why, sizeof choice->why, "%s (%s)", nz_alg_name(choice->algs[0]), reason);
    return NZ_SUCCESS;
}

nz_status_t nz_spmv_plan_choose(nz_format_t *chosen_format, nz_alg_t *alg, char *why,
                                size_t why_size, const nz_matrix_stats_t *stats,
                                nz_backend_t backend, nz_format_t format, unsigned flags) {
    nzi_plan_choice_t choice;
    if (why != NULL && why_size > 0) why[0] = '\0';
    if (stats == NULL || chosen_format == NULL || alg == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (flags & ~NZI_SPMV_PLAN_FLAGS)
        return NZ_ERR_INVALID_ARGUMENT;
    nzi_plan_request_t request = {backend, format, NZ_OP_N, flags, NULL, 0, 0};
    NZI_TRY(nzi_plan_choose(stats, &request, &choice));
    if (why != NULL && why_size > 0) snprintf(why, why_size, "%s", choice.why);
    if (choice.count == 0) return NZ_ERR_UNSUPPORTED;
    *chosen_format = choice.format;
    *alg = choice.algs[0];
    return NZ_SUCCESS;
}

/* ---- statistics for a plan ----------------------------------------------------------------- */

/* request NULL: hot_share wherever the rule's size thresholds hold; otherwise only where the
 * renumbering could also pay for that request (a column count and a sort, ~1-1.5 ms on an H100
 * at 10M nonzeros: 30 products of rail 4096 x 1M, which a default plan no longer spends). */
static nz_status_t row_stats(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                             const nzi_plan_request_t *request, nz_matrix_stats_t *stats) {
    nz_matrix_stats_t s;
    if (A->format == NZ_FORMAT_CSR) {
        const nzi_backend_t *b = nzi_backend_of(A);
        NZI_TRY(b->csr_row_stats(ctx, A, op, stats));
        /* the column counts only where the hot-columns rule could hold (its other thresholds) */
        if (b->csr_hot_share != NULL && op == NZ_OP_N && (double)stats->nnz >= NZI_HOT_NNZ_MIN &&
            (double)stats->cols >= T.hot_cols_min &&
            (request == NULL || (planner_may_pick_atomics(request) &&
                                 nzi_plan_reorder_pays(stats, request->flags,
                                                       request->value_size, request->l2_bytes))))
            return b->csr_hot_share(ctx, A, &stats->hot_share);
        return NZ_SUCCESS;
    }
    memset(&s, 0, sizeof s);
    s.rows = op == NZ_OP_N ? A->rows : A->cols;
    s.cols = op == NZ_OP_N ? A->cols : A->rows;
    s.nnz = A->nnz;
    if (s.rows > 0) s.row_mean = (double)A->nnz / (double)s.rows;
    *stats = s;
    return NZ_SUCCESS;
}

nz_status_t nzi_plan_row_stats(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                               nz_matrix_stats_t *stats) {
    return row_stats(ctx, A, op, NULL, stats);
}

/* ---- AUTO and TUNE ------------------------------------------------------------------------- */

static nz_status_t backend_setup(nz_spmv_plan_t *plan) {
    plan->state = NULL;
    plan->impl = NULL;
    plan->workspace_bytes = 0;
    plan->vector_width = 0;
    plan->vector_warps = 0;
    plan->reproducible = 0;
    return plan->ops->spmv_plan_setup(plan);
}

static void backend_release(nz_spmv_plan_t *plan) {
    if (plan->state == NULL) return;
    plan->ops->spmv_plan_release(plan);
    plan->state = NULL;
}

/*
 * GPU CSR layouts and hints (issue 19; measurements in docs/PERF_NOTES.md). x's "window" is the
 * span of columns a run of rows reads, (lower + upper bandwidth) x value size:
 *   hints     the window exceeds layout_window_min (x is gathered from far apart, so the matrix
 *             stream would evict x's lines between their reuses): vector and merge load the
 *             matrix as streaming. Banded matrices (Laplacian, FE) keep their window in L1/L2
 *             anyway and measured 1-3% slower with hints.
 *   panels    vector and merge, x and its window both exceed L2 / 2: split the columns so each
 *             panel's x fits (H100, random 4M x 16 f64: vector 1089 -> 871 us, merge 1854 -> 913
 *             us; DRAM read 2.49 -> 1.13 GB with four panels). Not for the row-block kernels,
 *             where panels were never measured to pay.
 *   compressed  CSR-vector without panels, not tiny, rows of mean > compress_row_min (32 lanes
 *             per row): 16-bit column offsets, asked for with NZI_PLAN_IF_PAYS, so the build
 *             refuses them when fewer than 80% of the nonzeros fit 16 bits (random and
 *             power-law columns) and the candidate runs plain (try_candidate). H200, session 11,
 *             rail against plain CSR-vector: 1.14x / 1.16x faster (single / double) with four
 *             loads in flight per lane, 0.98x / 1.07x with the eight it now runs on such rows;
 *             on shorter rows (fe3d, V = 8) 1.01x / 0.88x: fewer bytes, more instructions, so
 *             not asked for there. Where CSR-vector splits rows over warps they run four loads
 *             in flight, eight blocks an SM in single, each warp a contiguous share of its row
 *             (H100, session 16, rail with hints: 37.6 -> 35.0 us single, 50.3 -> 49.6 double;
 *             before that form they lost to plain rows split over warps, session 12).
 *   reorder   csr/atomic under the hot-columns rule (nzi_plan_hot_columns): columns renumbered
 *             by degree, so the most-read entries of x share lines and stay in L1, and COO's
 *             scatter on a row index array (spmv_csr_layout.cu). H200, R-MAT 20, session 13:
 *             87.9 / 112.3 us (single / double) against coo/atomic 122.6 / 129.5, the planner's
 *             earlier adaptive 139.6 / 152.0 and cuSPARSE 120.7 / 126.6. Never for the other
 *             algorithms: with them it measured slower on every suite matrix (session 8; merge
 *             on R-MAT 136 -> 161 us in session 12). Only where it pays back within the calls
 *             the caller promised (nzi_plan_reorder_pays: never without NZ_PLAN_REUSE or
 *             NZ_PLAN_TUNE, never where the matrix and x fit in L2).
 */
unsigned nzi_plan_layout_flags(const nz_matrix_stats_t *s, nz_alg_t alg, unsigned caller_flags,
                               size_t value_size, size_t l2_bytes) {
    unsigned flags = 0;
    if (l2_bytes == 0 || s->rows <= 0 || s->nnz <= 0) return 0;
    const double window = (double)(s->lower_bandwidth + s->upper_bandwidth + 1) * (double)value_size;
    const double x_bytes = (double)s->cols * (double)value_size;
    const double half_l2 = 0.5 * (double)l2_bytes;
    if (alg == NZ_ALG_ATOMIC)
        return nzi_plan_hot_columns(s) &&
                       nzi_plan_reorder_pays(s, caller_flags, value_size, l2_bytes)
                   ? NZ_PLAN_REORDER
                   : 0;
    if ((alg == NZ_ALG_VECTOR || alg == NZ_ALG_MERGE) && window > T.layout_window_min)
        flags |= NZ_PLAN_CACHE_HINTS;
    if ((alg == NZ_ALG_VECTOR || alg == NZ_ALG_MERGE) && x_bytes > half_l2 && window > half_l2 &&
        (double)s->nnz >= T.tiny_nnz)
        flags |= NZ_PLAN_COLUMN_PANELS;
    else if (alg == NZ_ALG_VECTOR && (double)s->nnz >= T.tiny_nnz &&
             (double)s->nnz > T.compress_row_min * (double)s->rows)
        flags |= NZ_PLAN_COMPRESS_INDICES | NZI_PLAN_IF_PAYS;
    return flags;
}

/* Set the plan up with alg; a plan that is not reproducible under NZ_PLAN_DETERMINISTIC is
 * released and refused (NZ_ERR_UNSUPPORTED, so the caller moves on to the next candidate).
 * With layout_stats (GPU CSR, op N, the caller chose no layout), the candidate runs with the
 * layout and hint flags nzi_plan_layout_flags gives it, on top of the caller's flags; a layout
 * asked for only if it pays (NZI_PLAN_IF_PAYS) that the backend refuses is dropped and the
 * candidate set up without it. */
static nz_status_t try_candidate(nz_spmv_plan_t *plan, nz_alg_t alg, unsigned caller_flags,
                                 const nz_matrix_stats_t *layout_stats) {
    plan->alg = alg;
    plan->flags = caller_flags;
    if (layout_stats != NULL)
        plan->flags |= nzi_plan_layout_flags(layout_stats, alg, caller_flags,
                                             nzi_value_size(plan->A->value_type),
                                             plan->ops->l2_bytes(plan->ctx));
    nz_status_t status = backend_setup(plan);
    if (status == NZ_ERR_UNSUPPORTED && (plan->flags & NZI_PLAN_IF_PAYS)) {
        backend_release(plan);
        plan->flags &= ~(NZI_PLAN_LAYOUTS | NZI_PLAN_IF_PAYS);
        status = backend_setup(plan);
    }
    plan->flags &= ~NZI_PLAN_IF_PAYS;
    if (status < 0) {
        backend_release(plan);
        return status;
    }
    if ((plan->flags & NZ_PLAN_DETERMINISTIC) && !plan->reproducible) {
        backend_release(plan);
        return nzi_error(plan->ctx, NZ_ERR_UNSUPPORTED,
                         "nz_spmv_plan_create: %s is not bitwise reproducible for this matrix",
                         nz_alg_name(alg));
    }
    return NZ_SUCCESS;
}

/* Out of host or device memory: a candidate that fails so gives way to the next one on the list,
 * whose plan may need less (csr/tiles builds with about 38 bytes a nonzero of device memory,
 * CSR-vector with none), instead of failing the whole plan. The first such failure is kept (its
 * status and message) for when no candidate fits. */
typedef struct oom_note {
    nz_status_t status; /* NZ_SUCCESS until a candidate runs out of memory */
    char message[NZI_MESSAGE_SIZE];
} oom_note_t;

/* true (and the first failure noted) when status is out of host or device memory */
static bool note_out_of_memory(oom_note_t *note, nz_status_t status, const nz_context_t *ctx) {
    if (status != NZ_ERR_OUT_OF_MEMORY && status != NZ_ERR_DEVICE_OUT_OF_MEMORY) return false;
    if (note->status == NZ_SUCCESS) {
        note->status = status;
        snprintf(note->message, sizeof note->message, "%s", ctx->message);
    }
    return true;
}

static nz_status_t no_candidate_fits(nz_context_t *ctx, const oom_note_t *note) {
    return nzi_error(ctx, note->status, "nz_spmv_plan_create: no candidate fits in memory (the "
                     "first: %s)", note->message);
}

/* Median seconds of a set-up candidate: CUDA events on the GPU, the wall clock on the CPU (one
 * warm-up run either way). */
static nz_status_t time_candidate(const nz_spmv_plan_t *plan, const void *x, void *y,
                                  double *seconds) {
    return plan->ops->spmv_time(plan, x, y, *policies[plan->backend].tune_runs, seconds);
}

/* Zeroed scratch of n values where the plan's backend keeps its vectors. */
static nz_status_t scratch_alloc(nz_spmv_plan_t *plan, void **ptr, int64_t n, const char *what) {
    size_t bytes;
    if (nzi_mul_overflow_size((size_t)(n > 0 ? n : 1), nzi_value_size(plan->A->value_type), &bytes))
        return nzi_error(plan->ctx, NZ_ERR_OVERFLOW, "plan tuning: %s of %lld entries", what,
                         (long long)n);
    NZI_TRY(plan->ops->mem_alloc(plan->ctx, ptr, bytes, what));
    return plan->ops->mem_set(plan->ctx, *ptr, 0, bytes);
}

static void scratch_free(nz_spmv_plan_t *plan, void *ptr) {
    if (ptr != NULL) plan->ops->mem_free(plan->ctx, ptr, (size_t)-1);
}

/*
 * NZ_PLAN_TUNE: walk the ranked list, set up each candidate on a copy of the plan, time it on
 * zero scratch vectors (y = A x, beta 0), keep the fastest plan's state and release the others,
 * until tune_candidates candidates have been timed. Candidates the backend refuses, or that run
 * out of memory, are skipped; when no candidate could be set up and one ran out of memory, the
 * first out-of-memory status is returned.
 * Cost: tune_candidates set-ups plus (runs + 1) products each. A backend's plan state must not
 * point into the plan object itself: the winner's state moves into `plan`.
 */
static nz_status_t tune(nz_spmv_plan_t *plan, const nzi_plan_choice_t *choice,
                        const nz_matrix_stats_t *layout_stats) {
    const unsigned caller_flags = plan->flags;
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    void *x = NULL, *y = NULL;
    nz_spmv_plan_t best, trial;
    bool have_best = false;
    double best_seconds = 0;
    int timed = 0;
    char last[NZI_MESSAGE_SIZE] = "";
    oom_note_t oom = {NZ_SUCCESS, ""};
    int64_t xlen = plan->op == NZ_OP_N ? A->cols : A->rows;
    int64_t ylen = plan->op == NZ_OP_N ? A->rows : A->cols;
    memset(&best, 0, sizeof best);
    NZI_CHECK(scratch_alloc(plan, &x, xlen, "tuning x"));
    NZI_CHECK(scratch_alloc(plan, &y, ylen, "tuning y"));
    for (int i = 0; i < choice->timed && timed < T.tune_candidates; i++) {
        trial = *plan;
        status = try_candidate(&trial, choice->algs[i], caller_flags, layout_stats);
        if (status == NZ_ERR_UNSUPPORTED) {
            snprintf(last, sizeof last, "%s", ctx->message);
            status = NZ_SUCCESS;
            continue;
        }
        if (note_out_of_memory(&oom, status, ctx)) {
            status = NZ_SUCCESS;
            continue;
        }
        if (status < 0) goto cleanup;
        double seconds = 0;
        status = time_candidate(&trial, x, y, &seconds);
        if (status < 0) {
            backend_release(&trial);
            goto cleanup;
        }
        timed++;
        if (!have_best || seconds < best_seconds) {
            if (have_best) backend_release(&best);
            best = trial;
            best_seconds = seconds;
            have_best = true;
        } else {
            backend_release(&trial);
        }
    }
    if (!have_best && oom.status != NZ_SUCCESS) {
        status = no_candidate_fits(ctx, &oom);
        goto cleanup;
    }
    if (!have_best) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                           "nz_spmv_plan_create: tuning found no usable algorithm for %s on the "
                           "%s (last refusal: %s)", nz_format_name(A->format),
                           plan->ops->name, last);
        goto cleanup;
    }
    plan->alg = best.alg;
    plan->flags = best.flags;
    plan->layout_parts = best.layout_parts;
    plan->impl = best.impl;
    plan->state = best.state;
    plan->reproducible = best.reproducible;
    plan->vector_width = best.vector_width;
    plan->vector_warps = best.vector_warps;
    plan->workspace_bytes = best.workspace_bytes;
    have_best = false;
    nzi_clear_error(ctx);
cleanup:
    if (have_best) backend_release(&best);
    scratch_free(plan, x);
    scratch_free(plan, y);
    return status;
}

nz_status_t nzi_plan_auto(nz_spmv_plan_t *plan) {
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    const char *where = plan->ops->name;
    nz_matrix_stats_t stats;
    nzi_plan_choice_t choice;
    nzi_plan_request_t request = {plan->backend, A->format, plan->op, plan->flags, NULL,
                                  nzi_value_size(A->value_type),
                                  plan->ops->l2_bytes != NULL ? plan->ops->l2_bytes(ctx) : 0};
    char last[NZI_MESSAGE_SIZE] = "";
    oom_note_t oom = {NZ_SUCCESS, ""};
    NZI_TRY(row_stats(ctx, A, plan->op, &request, &stats));
    nz_status_t status = nzi_plan_choose(&stats, &request, &choice);
    if (status < 0)
        return nzi_error(ctx, status, "nz_spmv_plan_create: the planner cannot handle this request");
    if (choice.count == 0)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_spmv_plan_create: no %salgorithm for %s matrices on the %s",
                         (plan->flags & NZ_PLAN_DETERMINISTIC) ? "bitwise reproducible " : "",
                         nz_format_name(A->format), where);
    /* GPU CSR, op N, no layout asked for: each candidate gets the layout and hints the rule
     * gives it (nzi_plan_layout_flags) */
    const nz_matrix_stats_t *layout_stats =
        plan->ops->l2_bytes != NULL && A->format == NZ_FORMAT_CSR &&
                planner_adds_layouts(plan->op, plan->flags)
            ? &stats
            : NULL;
    const unsigned caller_flags = plan->flags;
    if ((plan->flags & NZ_PLAN_TUNE) && choice.timed > 1 && A->rows > 0 && A->cols > 0 &&
        A->nnz > 0)
        return tune(plan, &choice, layout_stats);
    for (int i = 0; i < choice.count; i++) {
        status = try_candidate(plan, choice.algs[i], caller_flags, layout_stats);
        if (status == NZ_SUCCESS) {
            nzi_clear_error(ctx);
            return NZ_SUCCESS;
        }
        if (note_out_of_memory(&oom, status, ctx)) continue; /* the next may need less */
        if (status != NZ_ERR_UNSUPPORTED) return status;
        snprintf(last, sizeof last, "%s", ctx->message);
    }
    if (oom.status != NZ_SUCCESS) return no_candidate_fits(ctx, &oom);
    return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                     "nz_spmv_plan_create: the %s refused every candidate for %s (last: %s)",
                     where, nz_format_name(A->format), last);
}
