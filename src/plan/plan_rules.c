/* plan_rules.c: the planner's rules: ranked algorithms per backend and format, GPU CSR layouts. */
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
 *              keeps the most-read entries of x in L1 (R-MAT 20 on an H200: 1.59x / 1.35x
 *              faster than adaptive, single / double; bench/results/h200-2026-11-26-s13-spmv.txt);
 *              only where the renumbering pays
 *              back within the calls the caller promised (nzi_plan_reorder_pays: NZ_PLAN_REUSE
 *              or NZ_PLAN_TUNE, and the matrix with x beyond L2)
 *   scattered-tiles  the same caller conditions, at least NZI_HOT_NNZ_MIN nonzeros in at least
 *              tiles_rows_min rows, columns spanning more than scattered_window: csr/tiles (row
 *              tiles sorted by column, sums in shared memory; spmv_csr_tiles.cu), whose gathers
 *              share lines where rows in order share none. H200 probe
 *              (bench/results/h200-2026-11-26-s14-tiles-probe.txt): random 4M x 16 282 / 462 us
 *              (single / double) against cuSPARSE 498 / 641; mixed 2M 119 / 159 against 161 /
 *              190. Long rows are no obstacle (they go to a chunked pass), so the rule comes
 *              before long-rows. Not where the matrix and x fit in L2 (nzi_plan_fits_l2)
 *   short      no row longer than short_row_max: one thread per row is enough (scalar)
 *   long-rows  the longest row needs row_max / V steps of a V-lane vector (V from the mean, as
 *              the CSR-vector kernel picks it) while a perfectly balanced kernel gives each
 *              resident thread nnz / (resident threads) entries: when the first exceeds
 *              imbalance_ratio times the second (and imbalance_min_steps), one vector holds the
 *              whole grid up: split long rows. The irregular rules (long-rows, empty-rows,
 *              variable) rank nonzero-split first (equal runs of nonzeros a thread, no set-up
 *              beyond O(nnz) marks; on the real graphs faster than the row blocks and
 *              merge-path: H100 cnr-2000 15.3 / 23.2 us single / double against cuSPARSE 18.2 /
 *              26.9, bench/results/h100-2026-11-27-split-items.txt), then the row blocks
 *              (adaptive, ipcsr) where their build pays within the expected calls, else
 *              merge-path
 *   tiny       fewer than tiny_nnz nonzeros: every kernel is launch-bound; vector needs no
 *              preprocessing
 *   few-rows   rows longer than 32 and rows x V below few_rows_fraction (1/2) of the resident
 *              threads (the bound device's, from the backend table; unknown: device_threads,
 *              an H100's 132 x 2048): one vector per row fills less than half the device, so
 *              at least half
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
 *              random 4M x 16 (bench/results/h200-2026-11-26-s13-spmv.txt): adaptive 525.6 /
 *              656.0 us (single / double) against CSR-vector with hints 550.3 / 702.3 and with
 *              panels 648.8 / 722.1
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

#define T nzi_plan_thresholds

/* ---- ranked lists -------------------------------------------------------------------------- */

static const nz_alg_t rank_uniform[] = {NZ_ALG_VECTOR, NZ_ALG_ADAPTIVE,     NZ_ALG_IPCSR,
                                        NZ_ALG_LIGHT_VECTOR, NZ_ALG_SPLIT, NZ_ALG_MERGE,
                                        NZ_ALG_SCALAR, NZ_ALG_LIGHT_WARP};
/* irregular rows: nonzero-split first (faster than the row blocks on every real graph measured,
 * whatever the calls: docs/dev/PERF_NOTES.md, "Nonzero-split"); the row blocks next where their
 * build pays within the expected calls ... */
static const nz_alg_t rank_irregular[] = {NZ_ALG_SPLIT, NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,
                                          NZ_ALG_MERGE, NZ_ALG_VECTOR,   NZ_ALG_LIGHT_WARP,
                                          NZ_ALG_LIGHT_VECTOR, NZ_ALG_SCALAR};
/* ... else merge-path */
static const nz_alg_t rank_irregular_light[] = {NZ_ALG_SPLIT, NZ_ALG_MERGE, NZ_ALG_ADAPTIVE,
                                                NZ_ALG_IPCSR, NZ_ALG_VECTOR, NZ_ALG_LIGHT_WARP,
                                                NZ_ALG_LIGHT_VECTOR, NZ_ALG_SCALAR};
/* few uneven rows: a block per long row (csr/adaptive; rail, bench/results/h100-2026-11-23-s4-
 * bench.txt) where its build pays */
static const nz_alg_t rank_few_rows[] = {NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR, NZ_ALG_SPLIT,
                                         NZ_ALG_MERGE, NZ_ALG_VECTOR, NZ_ALG_LIGHT_WARP,
                                         NZ_ALG_LIGHT_VECTOR, NZ_ALG_SCALAR};
static const nz_alg_t rank_short[] = {NZ_ALG_SCALAR, NZ_ALG_VECTOR,       NZ_ALG_ADAPTIVE,
                                      NZ_ALG_IPCSR,  NZ_ALG_LIGHT_VECTOR, NZ_ALG_SPLIT,
                                      NZ_ALG_MERGE,  NZ_ALG_LIGHT_WARP};
static const nz_alg_t rank_tiny[] = {NZ_ALG_VECTOR,   NZ_ALG_SCALAR, NZ_ALG_LIGHT_VECTOR,
                                     NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,  NZ_ALG_SPLIT,
                                     NZ_ALG_MERGE,    NZ_ALG_LIGHT_WARP};
static const nz_alg_t rank_scattered[] = {NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR, NZ_ALG_VECTOR,
                                          NZ_ALG_SPLIT, NZ_ALG_MERGE, NZ_ALG_LIGHT_VECTOR,
                                          NZ_ALG_SCALAR, NZ_ALG_LIGHT_WARP};
/* scattered rows where the row blocks' build does not pay within the expected calls */
static const nz_alg_t rank_scattered_light[] = {NZ_ALG_VECTOR, NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,
                                                NZ_ALG_SPLIT, NZ_ALG_MERGE, NZ_ALG_LIGHT_VECTOR,
                                                NZ_ALG_SCALAR, NZ_ALG_LIGHT_WARP};
static const nz_alg_t rank_hot[] = {NZ_ALG_ATOMIC, NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,
                                    NZ_ALG_SPLIT,  NZ_ALG_MERGE,    NZ_ALG_VECTOR,
                                    NZ_ALG_LIGHT_WARP, NZ_ALG_LIGHT_VECTOR, NZ_ALG_SCALAR};
static const nz_alg_t rank_tiles[] = {NZ_ALG_TILES, NZ_ALG_ADAPTIVE, NZ_ALG_IPCSR,
                                      NZ_ALG_SPLIT, NZ_ALG_MERGE,    NZ_ALG_VECTOR,
                                      NZ_ALG_LIGHT_WARP, NZ_ALG_LIGHT_VECTOR, NZ_ALG_SCALAR};
static const nz_alg_t rank_segmented[] = {NZ_ALG_SEGMENTED, NZ_ALG_SCALAR, NZ_ALG_ATOMIC};
static const nz_alg_t rank_bsr[] = {NZ_ALG_BSR_ROW, NZ_ALG_BSR_COL};
static const nz_alg_t rank_per_row[] = {NZ_ALG_SCALAR, NZ_ALG_VECTOR};
static const nz_alg_t rank_cpu_serial[] = {NZ_ALG_SERIAL, NZ_ALG_PARALLEL};
static const nz_alg_t rank_cpu_parallel[] = {NZ_ALG_PARALLEL, NZ_ALG_SIMD, NZ_ALG_SERIAL};
static const nz_alg_t rank_cpu_sell[] = {NZ_ALG_SIMD, NZ_ALG_PARALLEL, NZ_ALG_SERIAL};

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define RULE(n, list) ((nzi_plan_rule_t){(n), (list), COUNT_OF(list), 0})
#define RULE_UNTIMED(n, list) ((nzi_plan_rule_t){(n), (list), COUNT_OF(list), 1})

int nzi_plan_vector_width(double row_mean) {
    int width = 2;
    while (width < 32 && (double)width < row_mean) width *= 2;
    return width;
}

void nzi_plan_say(char *why, size_t size, const char *fmt, ...) {
    size_t used = strlen(why);
    if (used + 1 >= size) return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(why + used, size - used, fmt, args);
    va_end(args);
}

bool nzi_plan_adds_layouts(nz_operation_t op, unsigned flags) {
    return op == NZ_OP_N && !(flags & (NZI_PLAN_LAYOUTS | NZ_PLAN_CACHE_HINTS));
}

bool nzi_plan_may_pick_atomics(const nzi_plan_request_t *r) {
    return nzi_plan_adds_layouts(r->op, r->flags) &&
           !(r->flags & (NZ_PLAN_DETERMINISTIC | NZ_PLAN_MIXED));
}

/* An irregular-rows rule: nonzero-split first; the row-block kernels next where their build
 * pays within the expected calls (nzi_plan_rowblocks_pay), else merge-path, with the reason. */
static nzi_plan_rule_t irregular_rule(const char *name, bool rowblocks,
                                      const nz_matrix_stats_t *s, unsigned flags, char *why,
                                      size_t size) {
    if (rowblocks) return RULE(name, rank_irregular);
    nzi_plan_say(why, size, "; nonzero-split, then merge-path: the row blocks' build (%.2f ms "
                 "modelled) does not pay back within %.0f calls", 1e3 * nzi_plan_rowblocks_seconds(s),
                 nzi_plan_expected_calls(flags));
    return RULE(name, rank_irregular_light);
}

/* The threads resident at once on the request's device: the backend table's count where the
 * caller had a device (nzi_plan_auto), else device_threads, an H100's or H200's 132 SMs x 2048
 * (nz_spmv_plan_choose, the unit tests). */
static double resident_threads(const nzi_plan_request_t *r) {
    return r->resident_threads > 0 ? (double)r->resident_threads : T.device_threads;
}

/* The GPU CSR rules (see the top of the file). */
static nzi_plan_rule_t cuda_csr_rule(const nz_matrix_stats_t *s, const nzi_plan_request_t *r,
                                     char *why, size_t size) {
    double rows = (double)s->rows, nnz = (double)s->nnz;
    if (s->rows <= 0 || s->nnz <= 0) {
        nzi_plan_say(why, size, "no nonzeros: y = beta y, nothing to balance");
        return RULE("empty", rank_short);
    }
    if (nzi_plan_may_pick_atomics(r) && nzi_plan_hot_columns(s) &&
        nzi_plan_reorder_pays(s, r->flags, r->value_size, r->l2_bytes)) {
        nzi_plan_say(why, size, "the %d most-read of %lld columns hold %.0f%% of the nonzeros: "
                     "columns renumbered by degree, atomic scatter (pays over %.0f calls)",
                     NZ_STATS_HOT_COLUMNS, (long long)s->cols, 100.0 * s->hot_share,
                     nzi_plan_expected_calls(r->flags));
        return RULE("hot-columns", rank_hot);
    }
    const double window = (double)(s->lower_bandwidth + s->upper_bandwidth + 1);
    /* like the renumbering, tiles buy x's gathers locality, which pays nothing where the
     * matrix and x stay in L2 (their set-up, 15-38 products on the H100 suite, for nothing) */
    const bool scattered_wide = nzi_plan_may_pick_atomics(r) && nnz >= NZI_HOT_NNZ_MIN &&
                                rows >= T.tiles_rows_min && window > T.scattered_window &&
                                !nzi_plan_fits_l2(s, r->value_size, r->l2_bytes);
    if (scattered_wide && nzi_plan_tiles_fit(s, r->flags, r->value_size)) {
        nzi_plan_say(why, size, "%lld rows reading columns over a window of %.0f: row tiles "
                     "sorted by column, sums in shared memory (set-up within %.0f products)",
                     (long long)s->rows, window, nzi_plan_expected_calls(r->flags));
        return RULE("scattered-tiles", rank_tiles);
    }
    if (scattered_wide)
        nzi_plan_say(why, size, "row tiles not built: %.2f ms modelled, more than %.0f "
                     "products; ", 1e3 * nzi_plan_tiles_seconds(s),
                     nzi_plan_expected_calls(r->flags));
    /* the irregular-rows rules: row blocks first where their build pays within the calls */
    const bool rowblocks = nzi_plan_rowblocks_pay(s, r->flags, r->value_size);
#define IRREGULAR(n) irregular_rule((n), rowblocks, s, r->flags, why, size)
    double mean = nnz / rows;
    int width = nzi_plan_vector_width(mean);
    double steps = (double)s->row_max / width;
    const double device_threads = resident_threads(r);
    double balanced = fmax(1.0, nnz / device_threads);
    double cv = s->row_std / mean;
    double empty = (double)s->empty_rows / rows;
    if ((double)s->row_max <= T.short_row_max) {
        nzi_plan_say(why, size, "no row longer than %lld: one thread per row",
                     (long long)s->row_max);
        return RULE("short", rank_short);
    }
    if (steps > T.imbalance_min_steps && steps > T.imbalance_ratio * balanced) {
        nzi_plan_say(why, size,
            "longest row %lld = %.0f steps of a %d-lane vector vs %.1f per thread if balanced: "
            "split long rows", (long long)s->row_max, steps, width, balanced);
        return IRREGULAR("long-rows");
    }
    if (nnz < T.tiny_nnz) {
        nzi_plan_say(why, size, "%lld nonzeros: launch-bound, no preprocessing", (long long)s->nnz);
        return RULE("tiny", rank_tiny);
    }
    if (mean > 32.0 && rows * width < T.few_rows_fraction * device_threads) {
        /* even long rows: CSR-vector, eight loads in flight per lane on rows this long and each
         * row split over several warps while the rows cannot fill the device (rail 4096 x 1M,
         * H200: one warp a row, with hints 34.7 / 48.6 us single / double, adaptive 42.2 /
         * 51.2, bench/results/h200-2026-11-26-s11-vector-u8.txt; eight warps a row, 33.0 /
         * 44.2, bench/results/h200-2026-11-26-s12-warps.txt); uneven ones: adaptive splits
         * them */
        const bool even = cv <= T.variable_cv;
        nzi_plan_say(why, size,
            "%lld rows of mean %.0f: one vector per row fills less than half the device%s",
            (long long)s->rows, mean, even ? "; rows even: 32 lanes per row" : "");
        if (even) return RULE("few-rows", rank_uniform);
        return rowblocks ? RULE("few-rows", rank_few_rows) : IRREGULAR("few-rows");
    }
    if (empty > T.empty_fraction) {
        nzi_plan_say(why, size, "%.0f%% of the rows empty: pack rows by nonzeros", 100.0 * empty);
        return IRREGULAR("empty-rows");
    }
    if (cv > T.variable_cv) {
        nzi_plan_say(why, size,
                     "row lengths vary (mean %.1f, std %.1f, max %lld): pack rows by nonzeros",
                     mean, s->row_std, (long long)s->row_max);
        return IRREGULAR("variable");
    }
    if (window > T.scattered_window) {
        nzi_plan_say(why, size, "uniform rows (mean %.1f, std %.1f, max %lld) over a window of "
                     "%.0f columns: x gathered from far apart, products staged by row blocks",
                     mean, s->row_std, (long long)s->row_max, window);
        if (rowblocks) return RULE("scattered", rank_scattered);
        nzi_plan_say(why, size, "; CSR-vector first: the row blocks' build (%.2f ms modelled) "
                     "does not pay back within %.0f calls", 1e3 * nzi_plan_rowblocks_seconds(s),
                     nzi_plan_expected_calls(r->flags));
        return RULE("scattered", rank_scattered_light);
    }
    nzi_plan_say(why, size, "uniform rows (mean %.1f, std %.1f, max %lld): %d lanes per row",
                 mean, s->row_std, (long long)s->row_max, width);
    return RULE("uniform", rank_uniform);
#undef IRREGULAR
}

nzi_plan_rule_t nzi_plan_cuda_rule(const nz_matrix_stats_t *s, const nzi_plan_request_t *r,
                                   nz_format_t format, char *why, size_t size) {
    switch (format) {
    case NZ_FORMAT_CSR: return cuda_csr_rule(s, r, why, size);
    case NZ_FORMAT_COO:
    case NZ_FORMAT_HYB:
        nzi_plan_say(why, size, "segmented reduction: balanced and reproducible");
        return RULE("segmented", rank_segmented);
    case NZ_FORMAT_BSR:
        nzi_plan_say(why, size, "a warp per block row");
        return RULE("bsr", rank_bsr);
    default:
        nzi_plan_say(why, size, "one thread per row of the padded layout");
        return RULE("per-row", rank_per_row);
    }
}

nzi_plan_rule_t nzi_plan_cpu_rule(const nz_matrix_stats_t *s, const nzi_plan_request_t *r,
                                  nz_format_t format, char *why, size_t size) {
    (void)r;
    if (format == NZ_FORMAT_SELL) {
        nzi_plan_say(why, size, "SIMD over the chunk when its height allows");
        return RULE("cpu-sell", rank_cpu_sell);
    }
    if ((double)s->nnz < T.cpu_serial_nnz) {
        nzi_plan_say(why, size, "%lld nonzeros: one thread (the parallel kernels run this on one "
                     "thread too)", (long long)s->nnz);
        return RULE_UNTIMED("cpu-tiny", rank_cpu_serial);
    }
    nzi_plan_say(why, size, "OpenMP over rows");
    return RULE("cpu-parallel", rank_cpu_parallel);
}

/*
 * GPU CSR layouts and hints (issue 19; measurements in docs/dev/PERF_NOTES.md). x's "window" is the
 * span of columns a run of rows reads, (lower + upper bandwidth) x value size:
 *   hints     the window exceeds layout_window_min (x is gathered from far apart, so the matrix
 *             stream would evict x's lines between their reuses): vector and merge load the
 *             matrix as streaming. Banded matrices (Laplacian, FE) keep their window in L1/L2
 *             anyway and measured 1-3% slower with hints. Nonzero-split: where the product's
 *             bytes exceed split_hints_l2_share of L2, which an LRU cache cannot keep from one
 *             call to the next (a cyclic stream a little larger than the cache misses
 *             throughout); streaming loads then leave x and part of the matrix resident. H100
 *             (50 MB L2), bench/results/h100-2026-11-27-split-items.txt: cnr-2000 double (45
 *             MB) 26.9 -> 23.2 us; where it fits, hints cost 3-9% (cnr-2000 single, 30 MB:
 *             15.3 -> 16.3 us; dblp-2010 double, 26 MB: 13.4 -> 14.6).
 *   panels    vector and merge, x and its window both exceed L2 / 2: split the columns so each
 *             panel's x fits (H100, random 4M x 16 f64: vector 1089 -> 871 us, merge 1854 -> 913
 *             us; DRAM read 2.49 -> 1.13 GB with four panels). Not for the row-block kernels,
 *             where panels were never measured to pay.
 *   compressed  CSR-vector without panels, not tiny, rows of mean > compress_row_min (32 lanes
 *             per row): 16-bit column offsets, asked for with NZI_PLAN_IF_PAYS, so the build
 *             refuses them when fewer than 80% of the nonzeros fit 16 bits (random and
 *             power-law columns) and the candidate runs plain (try_candidate). H200
 *             (bench/results/h200-2026-11-26-s11-spmv.txt), rail against plain CSR-vector:
 *             1.14x / 1.16x faster (single / double) with four
 *             loads in flight per lane, 0.98x / 1.07x with the eight it now runs on such rows;
 *             on shorter rows (fe3d, V = 8) 1.01x / 0.88x: fewer bytes, more instructions, so
 *             not asked for there. Where CSR-vector splits rows over warps they run four loads
 *             in flight, eight blocks an SM in single, each warp a contiguous share of its row
 *             (H100, rail with hints: 37.6 -> 35.0 us single, 50.3 -> 49.6 double,
 *             bench/results/h100-2026-11-26-s16-rail-probes.txt; before that form they lost to
 *             plain rows split over warps, bench/results/h200-2026-11-26-s12-warps.txt).
 *             Only where the build pays back within the calls the caller promised
 *             (nzi_plan_compress_pays: a few percent saved for 25-30 products of build on rail,
 *             so with NZ_PLAN_REUSE or NZ_PLAN_TUNE, not by default).
 *   reorder   csr/atomic under the hot-columns rule (nzi_plan_hot_columns): columns renumbered
 *             by degree, so the most-read entries of x share lines and stay in L1, and COO's
 *             scatter on a row index array (spmv_csr_layout.cu). H200, R-MAT 20
 *             (bench/results/h200-2026-11-26-s13-spmv.txt): 87.9 / 112.3 us (single / double)
 *             against coo/atomic 122.6 / 129.5, the planner's earlier adaptive 139.6 / 152.0 and
 *             cuSPARSE 120.7 / 126.6. Never for the other algorithms: with them it measured
 *             slower on every suite matrix (bench/results/h100-2026-11-25-s8-spmv.txt; merge on
 *             R-MAT 136 -> 161 us, bench/results/h200-2026-11-26-s12-spmv.txt). Only where it
 *             pays back within the calls
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
    if (alg == NZ_ALG_SPLIT)
        return nzi_plan_product_bytes(s, value_size) > T.split_hints_l2_share * (double)l2_bytes
                   ? NZ_PLAN_CACHE_HINTS
                   : 0;
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
             (double)s->nnz > T.compress_row_min * (double)s->rows &&
             nzi_plan_compress_pays(s, caller_flags, value_size))
        flags |= NZ_PLAN_COMPRESS_INDICES | NZI_PLAN_IF_PAYS;
    return flags;
}

