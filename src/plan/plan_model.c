/* plan_model.c: the planner's thresholds and its model of set-up against use (issue 37). */
#include "plan_internal.h"

/* Where each threshold comes from: the rules they serve (plan_rules.c) and docs/PLANNER.md. */
const nzi_plan_thresholds_t nzi_plan_thresholds = {
    /* only where the device's own count is unknown (nz_spmv_plan_choose): H100 SXM / H200, 132
     * SMs x 2048 threads; a bound device's comes from the backend table (nzi_plan_auto) */
    .device_threads = 132.0 * 2048.0,
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
    /* csr/split streams the matrix above this share of L2 (plan_rules.c, "hints"): H100 (50 MB),
     * cnr-2000 at 30 MB single ran faster without, at 45 MB double with */
    .split_hints_l2_share = 0.65,
    .compress_row_min = 64.0, /* CSR-vector's 32-lane rows (4 nonzeros per lane and more) */
    .hot_share_min = 0.25,    /* R-MAT 20: 0.58; uniform random columns 4M wide: 0.004 */
    .hot_cols_min = 8.0 * NZ_STATS_HOT_COLUMNS, /* x well beyond what L1 holds */
    .scattered_window = 524288.0, /* 4 MB of x in double, the hints' layout_window_min */
    .tiles_rows_min = 262144.0, /* tiles of ~1000 rows and more on 2 x 132 resident blocks */
    .default_calls = 20.0, /* issue 37: setup within ~20 products unless the caller reuses */
    .reuse_calls = 1000.0,
    .spmv_launch_seconds = 5e-6,
    /* H100, 1.4-2.6 TB/s over the suite's csr kernels
     * (bench/results/h100-2026-11-26-s17-spmv-8b5fd65.txt) */
    .spmv_bytes_per_second = 2.0e12,
    /* H100, csr/atomic:reorder's set-up on 27K-260K nonzeros
     * (bench/results/h100-2026-11-26-s16-spmv-becb2be.txt) */
    .reorder_fixed_seconds = 1.2e-4,
    /* H100, R-MAT 20 (16.1M nonzeros): 1.51 ms
     * (bench/results/h100-2026-11-26-s17-spmv-8b5fd65.txt) */
    .reorder_nnz_seconds = 8.6e-11,
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
    /* H100, 2026-11-27, `nz bench --no-real --alg tiles,merge` (bench/results/
     * h100-2026-11-27-tiles-build-*.csv): the 32-bit-key build took 1.8-2.0 ms on R-MAT 20
     * (16.1M nonzeros), 5.0-6.6 ms on fe3d-128 / laplace3d-200 (54-56M), 9.0-9.7 ms on random
     * 4M x 16 (67M): ~0.13 ns a nonzero */
    .tiles_fixed_seconds = 2.0e-4,
    .tiles_nnz_seconds = 1.3e-10,
    /* H100, 2026-11-27 (bench/results/h100-2026-11-27-spmv-63c1bc4.csv.gz, csr/vector:compressed
     * plan_ms): 0.98 / 1.01 ms on rail-4096x1M (10.2M nonzeros in rows of ~2500), 0.76-1.18 ms
     * on laplace3d-200 (55.8M), 1.53 / 1.68 ms on fe3d-128 (54.4M); the saving over plain
     * CSR-vector with hints on rail, the rows it is asked for: 36.4 -> 34.4 us single, 51.0 ->
     * 49.8 double, 2-6% */
    .compress_fixed_seconds = 1.0e-4,
    .compress_nnz_seconds = 2.0e-11,
    .compress_step_seconds = 4.0e-7,
    .compress_gain = 0.1,
    /* the same run, the tiles product: 5.1-6.9 ps a nonzero in single (random 4M 342 us,
     * R-MAT 20 111 us, mixed 2M 139 us), 7.2-8.9 in double: ~2.5 ps + 0.6 ps a value byte */
    .tiles_product_nnz_seconds = 2.5e-12,
    .tiles_product_value_seconds = 0.6e-12,
};

#define T nzi_plan_thresholds

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

double nzi_plan_product_bytes(const nz_matrix_stats_t *s, size_t value_size) {
    const double vs = value_size > 0 ? (double)value_size : 4.0;
    return (double)s->nnz * (4.0 + vs) + (double)s->rows * (4.0 + vs) + (double)s->cols * vs;
}

double nzi_plan_spmv_seconds(const nz_matrix_stats_t *s, size_t value_size) {
    return T.spmv_launch_seconds + nzi_plan_product_bytes(s, value_size) / T.spmv_bytes_per_second;
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

bool nzi_plan_fits_l2(const nz_matrix_stats_t *s, size_t value_size, size_t l2_bytes) {
    return l2_bytes > 0 && nzi_plan_product_bytes(s, value_size) <= (double)l2_bytes;
}

bool nzi_plan_reorder_pays(const nz_matrix_stats_t *s, unsigned flags, size_t value_size,
                           size_t l2_bytes) {
    if (s->nnz <= 0 || nzi_plan_fits_l2(s, value_size, l2_bytes)) return false;
    const double saving = T.reorder_gain * nzi_plan_spmv_seconds(s, value_size);
    return saving * nzi_plan_expected_calls(flags) > nzi_plan_reorder_seconds(s);
}


double nzi_plan_tiles_seconds(const nz_matrix_stats_t *s) {
    return T.tiles_fixed_seconds + (double)(s->nnz > 0 ? s->nnz : 0) * T.tiles_nnz_seconds;
}

double nzi_plan_tiles_product_seconds(const nz_matrix_stats_t *s, size_t value_size) {
    const double vs = value_size > 0 ? (double)value_size : 4.0;
    return T.spmv_launch_seconds + (double)(s->nnz > 0 ? s->nnz : 0) *
                                       (T.tiles_product_nnz_seconds +
                                        vs * T.tiles_product_value_seconds);
}

/* The tiles' build sorts every nonzero: ~26 of its own products in single precision, ~18 in
 * double (0.13 ns a nonzero against 4.9 / 7.3 ps), so by default (a budget of 20 products) the
 * tiles are built in double and not in single; with NZ_PLAN_REUSE always. */
bool nzi_plan_tiles_fit(const nz_matrix_stats_t *s, unsigned flags, size_t value_size) {
    return nzi_plan_tiles_seconds(s) <=
           nzi_plan_expected_calls(flags) * nzi_plan_tiles_product_seconds(s, value_size);
}

double nzi_plan_compress_seconds(const nz_matrix_stats_t *s) {
    return T.compress_fixed_seconds + (double)(s->nnz > 0 ? s->nnz : 0) * T.compress_nnz_seconds +
           (double)(s->row_max > 0 ? s->row_max : 0) * T.compress_step_seconds;
}

/* 16-bit offsets save a few percent of a product for a build of 25-30 products (rail): with the
 * default 20 calls they never pay, with NZ_PLAN_REUSE they do. */
bool nzi_plan_compress_pays(const nz_matrix_stats_t *s, unsigned flags, size_t value_size) {
    const double saving = T.compress_gain * nzi_plan_spmv_seconds(s, value_size);
    return saving * nzi_plan_expected_calls(flags) > nzi_plan_compress_seconds(s);
}
