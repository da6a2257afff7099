/* test_planner.c: the SpMV planner's decision table on synthetic statistics: the GPU CSR rules and thresholds, the layout rule, ranked lists, reproducibility, format advice. */
#include "planner_test.h"

#include <math.h>

/* A GPU without DIA kernels. */
static bool gpu_no_dia(nz_format_t f, nz_alg_t a) {
    return f != NZ_FORMAT_DIA && full_gpu_supports(f, a);
}
/* A GPU whose only COO kernel is the atomic one. */
static bool gpu_atomic_coo(nz_format_t f, nz_alg_t a) {
    return f == NZ_FORMAT_COO ? a == NZ_ALG_ATOMIC : full_gpu_supports(f, a);
}
/* Tables for the GPUs above (the planner reads only spmv_supports and spmv_reproducible). */
static const nzi_backend_t gpu_no_dia_table = {
    .id = NZ_BACKEND_CUDA, .name = "GPU", .spmv_supports = gpu_no_dia,
    .spmv_reproducible = gpu_reproducible};
static const nzi_backend_t gpu_atomic_coo_table = {
    .id = NZ_BACKEND_CUDA, .name = "GPU", .spmv_supports = gpu_atomic_coo,
    .spmv_reproducible = gpu_reproducible};
#define gpu_no_dia (&gpu_no_dia_table)
#define gpu_atomic_coo (&gpu_atomic_coo_table)

/* The GPU CSR rules on statistics shaped like the benchmark families. */
static void test_gpu_csr_rules(void) {
    /* 7-point Laplacian 64^3: rows of 4..7 */
    nz_matrix_stats_t s = make_stats(262144, 262144, 7 * 262144 - 6 * 4096, 4, 7, 0.35, 0);
    nzi_plan_choice_t c = gpu_csr(&s);
    EXPECT_ALG(c, NZ_ALG_VECTOR, "laplace3d 64^3");
    EXPECT_RULE(c, "uniform", "laplace3d 64^3");
    NZT_CHECK(strstr(c.why, "vector") != NULL && strstr(c.why, "csr on the GPU") != NULL,
              "why names the choice: %s", c.why);

    /* Q1 FE, n = 64: 63^3 rows of 8..27 */
    expect_gpu_csr(make_stats(250047, 250047, 250047LL * 26, 8, 27, 2.1, 0), NULL, NZ_ALG_VECTOR,
                   "fe3d 64");

    /* uniform random rows, mean 16 (lengths uniform in [0, 32]), columns within a window of
     * 1000 (no bandwidth statistics: 0) and spread over all 2^20 columns */
    expect_gpu_csr(make_stats(1 << 20, 1 << 20, 16LL << 20, 0, 32, 9.5, (1 << 20) / 33), "uniform",
                   NZ_ALG_VECTOR, "random mean 16, window 1");
    s = make_stats(1 << 20, 1 << 20, 16LL << 20, 0, 32, 9.5, (1 << 20) / 33);
    s.lower_bandwidth = s.upper_bandwidth = 500;
    expect_gpu_csr(s, "uniform", NZ_ALG_VECTOR, "random mean 16, window 1001");
    s.lower_bandwidth = s.upper_bandwidth = (1 << 20) - 1;
    /* scattered columns over 2^20 rows: row tiles sorted by column (csr/tiles) where their
     * build fits the set-up budget: with NZ_PLAN_REUSE; by default in double (~18 products of
     * set-up) and not in single (~26), where CSR-vector follows (no set-up; the row blocks'
     * build does not pay within 20 calls). Adaptive where the caller rules atomics or the tiles
     * out (determinism, mixed precision, hints, a layout, op T) and reuses the plan. */
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu);
    EXPECT_RULE(c, "scattered-tiles", "random mean 16, scattered, reuse");
    EXPECT_ALG(c, NZ_ALG_TILES, "random mean 16, scattered, reuse");
    NZT_CHECK(c.count > 1 && c.algs[1] == NZ_ALG_ADAPTIVE, "tiles: adaptive second (%s)", c.why);
    c = expect_gpu_csr(s, "scattered", NZ_ALG_VECTOR, "random mean 16, scattered, single");
    NZT_CHECK(strstr(c.why, "row tiles not built") != NULL, "no tiles: why says so (%s)", c.why);
    {
        nzi_plan_request_t r = {NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_OP_N, 0, full_gpu, 8, 0, 0};
        NZT_CHECK(nzi_plan_choose(&s, &r, &c) == NZ_SUCCESS, "double");
        EXPECT_RULE(c, "scattered-tiles", "random mean 16, scattered, double");
        NZT_CHECK(nzi_plan_tiles_fit(&s, 0, 8) && !nzi_plan_tiles_fit(&s, 0, 4) &&
                      nzi_plan_tiles_fit(&s, NZ_PLAN_REUSE, 4),
                  "tiles budget: double %d, single %d, single with reuse %d",
                  nzi_plan_tiles_fit(&s, 0, 8), nzi_plan_tiles_fit(&s, 0, 4),
                  nzi_plan_tiles_fit(&s, NZ_PLAN_REUSE, 4));
    }
    {
        const unsigned no_tiles[] = {NZ_PLAN_DETERMINISTIC, NZ_PLAN_MIXED, NZ_PLAN_CACHE_HINTS,
                                     NZ_PLAN_COLUMN_PANELS};
        for (size_t k = 0; k < sizeof no_tiles / sizeof no_tiles[0]; k++) {
            c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, no_tiles[k] | NZ_PLAN_REUSE, full_gpu);
            NZT_CHECK(c.rule != NULL && strcmp(c.rule, "scattered") == 0 && c.count > 0 &&
                          c.algs[0] == NZ_ALG_ADAPTIVE,
                      "flags 0x%x: rule %s", no_tiles[k], c.rule ? c.rule : "-");
        }
        nzi_plan_request_t r = {NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_OP_T, 0, full_gpu, 0, 0, 0};
        NZT_CHECK(nzi_plan_choose(&s, &r, &c) == NZ_SUCCESS && c.rule != NULL &&
                      strcmp(c.rule, "scattered") == 0, "op T: rule %s", c.rule ? c.rule : "-");
        nz_matrix_stats_t few = s;
        few.rows = (int64_t)T.tiles_rows_min - 1;
        few.nnz = 16 * few.rows;
        c = choose(&few, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu);
        EXPECT_RULE(c, "scattered", "rows just below tiles_rows_min");
        few.rows = (int64_t)T.tiles_rows_min;
        c = choose(&few, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu);
        EXPECT_RULE(c, "scattered-tiles", "rows at tiles_rows_min");
        few.nnz = (int64_t)NZI_HOT_NNZ_MIN - 1;
        few.row_max = 8;
        few.row_std = 1.0;
        c = choose(&few, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu);
        EXPECT_RULE(c, "scattered", "nonzeros just below NZI_HOT_NNZ_MIN");
    }
    s.lower_bandwidth = 0;
    s.upper_bandwidth = (int64_t)T.scattered_window - 1; /* a window of exactly the threshold */
    expect_gpu_csr(s, "uniform", NZ_ALG_VECTOR, "random mean 16, window at the threshold");

    /* R-MAT scale 20: power-law rows, a hub of 40000, 40% empty */
    s = make_stats(1 << 20, 1 << 20, 15700000, 0, 40000, 110.0, 420000);
    c = gpu_csr(&s);
    NZT_CHECK(c.count > 0 && splits_long_rows(c.algs[0]), "rmat: %s (%s)",
              c.count ? nz_alg_name(c.algs[0]) : "-", c.why);
    EXPECT_ALG(c, NZ_ALG_SPLIT, "rmat scale 20");
    EXPECT_RULE(c, "long-rows", "rmat scale 20");
    /* the row blocks' build (~3 ms) does not pay within 20 calls: merge-path second */
    NZT_CHECK(strstr(c.why, "then merge-path") != NULL && c.count > 1 &&
                  c.algs[1] == NZ_ALG_MERGE, "rmat: why %s", c.why);
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu);
    EXPECT_ALG(c, NZ_ALG_SPLIT, "rmat scale 20, reuse");
    NZT_CHECK(c.count > 1 && c.algs[1] == NZ_ALG_ADAPTIVE, "rmat, reuse: adaptive second");
    /* ... whose 16384 most-read columns hold 58% of the nonzeros: the atomic scatter on columns
     * renumbered by degree; not under NZ_PLAN_DETERMINISTIC, with the caller's own hints or
     * layout, in mixed precision, for op T, nor just below each threshold */
    s.hot_share = 0.58;
    /* by default (20 calls modelled) the renumbering never pays back: the next rule */
    EXPECT_RULE(gpu_csr(&s), "long-rows", "rmat scale 20, hot columns, no reuse");
    /* with NZ_PLAN_REUSE (or NZ_PLAN_TUNE) it does */
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu);
    EXPECT_RULE(c, "hot-columns", "rmat scale 20, hot columns, reuse");
    EXPECT_ALG(c, NZ_ALG_ATOMIC, "rmat scale 20, hot columns, reuse");
    NZT_CHECK(c.count > 1 && c.algs[1] == NZ_ALG_ADAPTIVE && strstr(c.why, "58%") != NULL,
              "hot columns: adaptive second, the share in why: %s", c.why);
    EXPECT_RULE(choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_TUNE, full_gpu), "hot-columns",
                "rmat scale 20, hot columns, tune");
    const unsigned off[] = {NZ_PLAN_DETERMINISTIC, NZ_PLAN_CACHE_HINTS, NZ_PLAN_REORDER,
                            NZ_PLAN_COLUMN_PANELS, NZ_PLAN_MIXED};
    for (size_t k = 0; k < sizeof off / sizeof off[0]; k++) {
        c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, off[k] | NZ_PLAN_REUSE, full_gpu);
        NZT_CHECK(c.rule != NULL && strcmp(c.rule, "hot-columns") != 0,
                  "flags 0x%x: rule %s", off[k], c.rule ? c.rule : "-");
    }
    {
        nzi_plan_choice_t t;
        nzi_plan_request_t r = {NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_OP_T, NZ_PLAN_REUSE, full_gpu, 0, 0,
                                0};
        NZT_CHECK(nzi_plan_choose(&s, &r, &t) == NZ_SUCCESS && t.rule != NULL &&
                      strcmp(t.rule, "hot-columns") != 0, "op T: rule %s", t.rule ? t.rule : "-");
    }
    nz_matrix_stats_t below = s;
    below.hot_share = 0.249;
    EXPECT_RULE(choose(&below, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu),
                "long-rows", "hot share 0.249");
    below = s;
    below.nnz = (1 << 20) - 1;
    below.row_mean = (double)below.nnz / (double)below.rows;
    NZT_CHECK(strcmp(choose(&below, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu).rule,
                     "hot-columns") != 0, "2^20 - 1 nonzeros");
    below = s;
    below.cols = 131071;
    NZT_CHECK(strcmp(choose(&below, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu).rule,
                     "hot-columns") != 0, "131071 columns");
    s.hot_share = 0;

    /* a single enormous row */
    s = make_stats(1, 1 << 24, 5000000, 5000000, 5000000, 0, 0);
    c = gpu_csr(&s);
    NZT_CHECK(c.count > 0 && splits_long_rows(c.algs[0]), "one row of 5M: %s (%s)",
              c.count ? nz_alg_name(c.algs[0]) : "-", c.why);

    /* short rows and a few enormous ones (nz_gen_mixed) */
    s = make_stats(1 << 20, 1 << 20, 8LL * (1 << 20) + 100 * 200000, 1, 200000, 620.0, 0);
    c = gpu_csr(&s);
    NZT_CHECK(c.count > 0 && splits_long_rows(c.algs[0]), "mixed: %s (%s)",
              c.count ? nz_alg_name(c.algs[0]) : "-", c.why);

    /* rail: 4000 rows of 2500 +- 50% over a million columns: vector or adaptive measured best */
    s = make_stats(4000, 1000000, 10000000, 1250, 3750, 720.0, 0);
    c = gpu_csr(&s);
    NZT_CHECK(c.count > 0 && (c.algs[0] == NZ_ALG_VECTOR || c.algs[0] == NZ_ALG_ADAPTIVE),
              "rail: %s (%s)", c.count ? nz_alg_name(c.algs[0]) : "-", c.why);

    /* the bench's rail-4096x1M: 4096 rows of mean 2480, 4096 x 32 lanes fill less than half
     * the device, rows even: CSR-vector with 16-bit columns measured 1.13x (single) / 1.06x
     * (double) faster than adaptive on an H200 (bench/results/h200-2026-11-26-s11-spmv.txt,
     * docs/dev/PERF_NOTES.md) */
    expect_gpu_csr(make_stats(4096, 1048576, 10156976, 1250, 3750, 720.0, 0), "few-rows",
                   NZ_ALG_VECTOR, "rail 4096 x 1M");

    /* 500 rows of 2500 +- 50%: the longest row holds the whole product up */
    expect_gpu_csr(make_stats(500, 1000000, 1250000, 1250, 3750, 720.0, 0), NULL, NZ_ALG_SPLIT,
                   "rail 500 rows");
    /* 1500 even rows of 2500: no row stands out, but one vector per row fills less than half
     * the device */
    expect_gpu_csr(make_stats(1500, 1000000, 1500 * 2500, 2400, 2600, 50.0, 0), "few-rows",
                   NZ_ALG_VECTOR, "1500 rows of 2500");
    /* few rows of uneven length (std above the mean, no row long enough for long-rows):
     * adaptive splits them */
    expect_gpu_csr(make_stats(1500, 1000000, 1500 * 60, 0, 400, 70.0, 0), "few-rows",
                   NZ_ALG_ADAPTIVE, "1500 uneven rows of mean 60");

    /* tiny: something with no host-side preprocessing */
    c = expect_gpu_csr(make_stats(10, 10, 30, 1, 5, 1.2, 0), "tiny", NZ_ALG_AUTO, "10 x 10");
    NZT_CHECK(c.count > 0 && (c.algs[0] == NZ_ALG_VECTOR || c.algs[0] == NZ_ALG_SCALAR),
              "tiny: %s", c.count ? nz_alg_name(c.algs[0]) : "-");

    /* diagonal: one thread per row */
    expect_gpu_csr(make_stats(1000000, 1000000, 1000000, 1, 1, 0, 0), "short", NZ_ALG_SCALAR,
                   "diagonal");

    /* no nonzeros, no rows */
    expect_gpu_csr(make_stats(50, 40, 0, 0, 0, 0, 50), "empty", NZ_ALG_SCALAR,
                   "50 x 40 without nonzeros");
    expect_gpu_csr(make_stats(0, 10, 0, 0, 0, 0, 0), "empty", NZ_ALG_AUTO, "0 x 10");

    /* mostly empty rows, the others of ~7; a million rows: the row blocks' build (~3 ms) does
     * not pay within a default plan's 20 calls: nonzero-split, merge-path second; adaptive
     * second with reuse */
    expect_gpu_csr(make_stats(1000000, 1000000, 2000000, 0, 20, 3.0, 700000), "empty-rows",
                   NZ_ALG_SPLIT, "70% empty");
    {
        nz_matrix_stats_t s = make_stats(1000000, 1000000, 2000000, 0, 20, 3.0, 700000);
        nzi_plan_choice_t c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, 0, full_gpu);
        NZT_CHECK(c.count > 1 && c.algs[1] == NZ_ALG_MERGE, "70%% empty: merge second");
        c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu);
        EXPECT_ALG(c, NZ_ALG_SPLIT, "70% empty, reuse");
        NZT_CHECK(c.count > 1 && c.algs[1] == NZ_ALG_ADAPTIVE, "70%% empty, reuse: adaptive second");
    }

    /* lengths spread widely, but no row long enough to stall a vector */
    expect_gpu_csr(make_stats(1000000, 1000000, 10000000, 1, 100, 15.0, 0), "variable",
                   NZ_ALG_SPLIT, "cv 1.5");
    {
        nz_matrix_stats_t s = make_stats(1000000, 1000000, 10000000, 1, 100, 15.0, 0);
        nzi_plan_choice_t c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_TUNE, full_gpu);
        EXPECT_ALG(c, NZ_ALG_SPLIT, "cv 1.5, tune");
        NZT_CHECK(c.count > 1 && c.algs[1] == NZ_ALG_ADAPTIVE, "cv 1.5, tune: adaptive second");
    }
    /* the same profile at 3,000 rows: the build (9 us) pays within 20 calls: adaptive second */
    expect_gpu_csr(make_stats(3000, 3000, 30000, 1, 100, 15.0, 0), "variable",
                   NZ_ALG_SPLIT, "cv 1.5, 3,000 rows");
    {
        nz_matrix_stats_t s = make_stats(3000, 3000, 30000, 1, 100, 15.0, 0);
        nzi_plan_choice_t c = gpu_csr(&s);
        NZT_CHECK(c.count > 1 && c.algs[1] == NZ_ALG_ADAPTIVE, "cv 1.5, 3,000 rows: %s second",
                  c.count > 1 ? nz_alg_name(c.algs[1]) : "nothing");
    }
}

/* The long-row rule switches exactly at its thresholds (so retuning them keeps the test). */
static void test_imbalance_threshold(void) {
    int64_t rows = 100000, nnz = 8 * rows;
    int width = nzi_plan_vector_width(8.0);
    NZT_CHECK(width == 8, "vector width for mean 8: %d", width);
    double balanced = fmax(1.0, (double)nnz / T.device_threads);
    double limit = fmax(T.imbalance_min_steps, T.imbalance_ratio * balanced) * width;
    nz_matrix_stats_t s = make_stats(rows, rows, nnz, 7, (int64_t)limit + width, 0.5, 0);
    nzi_plan_choice_t c = gpu_csr(&s);
    EXPECT_RULE(c, "long-rows", "just above the imbalance limit");
    s.row_max = (int64_t)limit - width;
    c = gpu_csr(&s);
    EXPECT_RULE(c, "uniform", "just below the imbalance limit");
    /* the vector width follows the CSR-vector kernel's rule */
    NZT_CHECK(nzi_plan_vector_width(0.5) == 2 && nzi_plan_vector_width(2.0) == 2 &&
                  nzi_plan_vector_width(2.5) == 4 && nzi_plan_vector_width(17) == 32 &&
                  nzi_plan_vector_width(1e6) == 32,
              "vector widths");
    /* few-rows switches where one 32-lane vector per row fills few_rows_fraction (half) of the
     * device: rows of mean 40 (V = 32), short and even enough for no other rule to fire */
    int64_t half_rows = (int64_t)ceil(T.few_rows_fraction * T.device_threads / 32.0);
    NZT_CHECK(nzi_plan_vector_width(40.0) == 32, "vector width for mean 40");
    expect_gpu_csr(make_stats(half_rows - 1, 100000, 40 * (half_rows - 1), 20, 60, 8.0, 0),
                   "few-rows", NZ_ALG_AUTO, "rows x V just below half the device");
    expect_gpu_csr(make_stats(half_rows, 100000, 40 * half_rows, 20, 60, 8.0, 0), "uniform",
                   NZ_ALG_AUTO, "rows x V at half the device");
    expect_gpu_csr(make_stats(half_rows + 1, 100000, 40 * (half_rows + 1), 20, 60, 8.0, 0),
                   "uniform", NZ_ALG_AUTO, "rows x V just above half the device");
    /* tiny and the CPU cut-over */
    expect_gpu_csr(make_stats(1000, 1000, (int64_t)T.tiny_nnz - 1, 5, 20, 2.0, 0), "tiny",
                   NZ_ALG_AUTO, "just under tiny_nnz");
    expect_gpu_csr(make_stats(1000, 1000, (int64_t)T.tiny_nnz + 1000, 5, 20, 2.0, 0), "uniform",
                   NZ_ALG_AUTO, "just over tiny_nnz");
    s = make_stats(100, 100, (int64_t)T.cpu_serial_nnz - 1, 1, 80, 5.0, 0);
    c = choose(&s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0, NULL);
    EXPECT_ALG(c, NZ_ALG_SERIAL, "CPU just under cpu_serial_nnz");
    s.nnz = (int64_t)T.cpu_serial_nnz;
    c = choose(&s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0, NULL);
    EXPECT_ALG(c, NZ_ALG_PARALLEL, "CPU at cpu_serial_nnz");
}

/* The GPU CSR layout rule (nzi_plan_layout_flags) on the statistics of the suite's shapes, with
 * an H100's 50 MB L2: gather-bound and wider than L2 -> hints + panels; CSR-vector on 32-lane
 * rows without panels -> compressed indices if they pay (the build decides); banded -> nothing;
 * power-law with x inside L2 -> hints for vector / merge only; no L2 (no device), tiny or no
 * nonzeros -> nothing. */
static void test_layout_rule(void) {
    const size_t l2 = (size_t)50 << 20;
    nz_matrix_stats_t random = {0}, laplace = {0}, rmat = {0}, small = {0}, rail = {0};
    rail.rows = 4096;
    rail.cols = 1048576;
    rail.nnz = 10156976;
    rail.row_max = 2600;
    rail.lower_bandwidth = 4095;
    rail.upper_bandwidth = rail.cols - 1;
    random.rows = random.cols = 4194304;
    random.nnz = 16 * random.rows;
    random.lower_bandwidth = random.upper_bandwidth = random.rows - 2;
    laplace.rows = laplace.cols = 8000000;
    laplace.nnz = 7 * laplace.rows;
    laplace.lower_bandwidth = laplace.upper_bandwidth = 40000;
    rmat.rows = rmat.cols = 1048576;
    rmat.nnz = 16 * rmat.rows;
    rmat.lower_bandwidth = rmat.upper_bandwidth = rmat.rows - 1;
    small.rows = small.cols = 100;
    small.nnz = 500;
    small.upper_bandwidth = 99;
    unsigned f = nzi_plan_layout_flags(&random, NZ_ALG_VECTOR, 0, 8, l2);
    NZT_CHECK(f == (NZ_PLAN_CACHE_HINTS | NZ_PLAN_COLUMN_PANELS), "random f64 vector: 0x%x", f);
    f = nzi_plan_layout_flags(&random, NZ_ALG_ADAPTIVE, 0, 8, l2); /* panels: vector, merge */
    NZT_CHECK(f == 0, "random f64 adaptive: 0x%x", f);
    f = nzi_plan_layout_flags(&random, NZ_ALG_MERGE, 0, 8, l2);
    NZT_CHECK(f == (NZ_PLAN_CACHE_HINTS | NZ_PLAN_COLUMN_PANELS), "random f64 merge: 0x%x", f);
    f = nzi_plan_layout_flags(&random, NZ_ALG_VECTOR, 0, 4, l2); /* x = 16 MB: fits */
    NZT_CHECK(f == NZ_PLAN_CACHE_HINTS, "random f32 vector: 0x%x", f);
    f = nzi_plan_layout_flags(&laplace, NZ_ALG_VECTOR, 0, 8, l2);
    NZT_CHECK(f == 0, "laplace vector: 0x%x", f);
    /* 32-lane rows: compressed indices where their build pays, with reuse; hints alone by
     * default */
    f = nzi_plan_layout_flags(&rail, NZ_ALG_VECTOR, NZ_PLAN_REUSE, 8, l2);
    NZT_CHECK(f == (NZ_PLAN_CACHE_HINTS | NZ_PLAN_COMPRESS_INDICES | NZI_PLAN_IF_PAYS),
              "rail vector, reuse: 0x%x", f);
    f = nzi_plan_layout_flags(&rail, NZ_ALG_VECTOR, 0, 8, l2);
    NZT_CHECK(f == NZ_PLAN_CACHE_HINTS, "rail vector: 0x%x", f);
    f = nzi_plan_layout_flags(&rail, NZ_ALG_ADAPTIVE, 0, 8, l2);
    NZT_CHECK(f == 0, "rail adaptive: 0x%x", f);
    NZT_CHECK(!(NZI_SPMV_PLAN_FLAGS & NZI_PLAN_IF_PAYS), "callers cannot pass NZI_PLAN_IF_PAYS");
    f = nzi_plan_layout_flags(&laplace, NZ_ALG_MERGE, 0, 8, l2);
    NZT_CHECK(f == 0, "laplace merge: 0x%x", f);
    f = nzi_plan_layout_flags(&rmat, NZ_ALG_MERGE, 0, 8, l2);
    NZT_CHECK(f == NZ_PLAN_CACHE_HINTS, "rmat merge: 0x%x", f);
    f = nzi_plan_layout_flags(&rmat, NZ_ALG_ADAPTIVE, 0, 8, l2);
    NZT_CHECK(f == 0, "rmat adaptive: 0x%x", f);
    /* nonzero-split: streaming loads only where the product outgrows 0.65 of L2 (cnr-2000's
     * profile: 3.2M nonzeros, 325557 rows: 45 MB in double, 30 MB in single; dblp-2010: 26 MB
     * in double) */
    {
        nz_matrix_stats_t cnr = {0}, dblp = {0};
        cnr.rows = cnr.cols = 325557;
        cnr.nnz = 3216152;
        cnr.lower_bandwidth = cnr.upper_bandwidth = 325000;
        dblp.rows = dblp.cols = 326186;
        dblp.nnz = 1615400;
        f = nzi_plan_layout_flags(&cnr, NZ_ALG_SPLIT, 0, 8, l2);
        NZT_CHECK(f == NZ_PLAN_CACHE_HINTS, "cnr split f64: 0x%x", f);
        f = nzi_plan_layout_flags(&cnr, NZ_ALG_SPLIT, 0, 4, l2);
        NZT_CHECK(f == 0, "cnr split f32: 0x%x", f);
        f = nzi_plan_layout_flags(&dblp, NZ_ALG_SPLIT, 0, 8, l2);
        NZT_CHECK(f == 0, "dblp split f64: 0x%x", f);
        f = nzi_plan_layout_flags(&cnr, NZ_ALG_SPLIT, 0, 8, 0);
        NZT_CHECK(f == 0, "cnr split f64, L2 unknown: 0x%x", f);
        f = nzi_plan_layout_flags(&random, NZ_ALG_SPLIT, 0, 8, l2); /* no panels */
        NZT_CHECK(f == NZ_PLAN_CACHE_HINTS, "random split f64: 0x%x", f);
    }
    f = nzi_plan_layout_flags(&rmat, NZ_ALG_ATOMIC, 0, 8, l2);
    NZT_CHECK(f == 0, "rmat atomic, hot share unknown: 0x%x", f);
    rmat.hot_share = 0.58;
    f = nzi_plan_layout_flags(&rmat, NZ_ALG_ATOMIC, 0, 8, l2);
    NZT_CHECK(f == 0, "rmat atomic, hot columns, no reuse: 0x%x", f);
    f = nzi_plan_layout_flags(&rmat, NZ_ALG_ATOMIC, NZ_PLAN_REUSE, 8, l2);
    NZT_CHECK(f == NZ_PLAN_REORDER, "rmat atomic, hot columns, reuse: 0x%x", f);
    f = nzi_plan_layout_flags(&rmat, NZ_ALG_MERGE, 0, 8, l2);
    NZT_CHECK(f == NZ_PLAN_CACHE_HINTS, "rmat merge, hot columns: 0x%x", f);
    /* one layout at a time: no panels beside the reordering, even with x wider than L2 / 2 */
    random.hot_share = 0.5;
    f = nzi_plan_layout_flags(&random, NZ_ALG_ATOMIC, NZ_PLAN_REUSE, 8, l2);
    NZT_CHECK(f == NZ_PLAN_REORDER, "wide x, atomic, hot columns: 0x%x", f);
    random.hot_share = 0;
    NZT_CHECK(nzi_plan_layout_flags(&random, NZ_ALG_VECTOR, 0, 8, 0) == 0, "no L2: no layout");
    NZT_CHECK(nzi_plan_layout_flags(&small, NZ_ALG_VECTOR, 0, 8, l2) == 0, "tiny: no layout");
    random.nnz = 0;
    NZT_CHECK(nzi_plan_layout_flags(&random, NZ_ALG_VECTOR, 0, 8, l2) == 0, "empty: no layout");
}

/* Setup proportional to use (issue 37): power-law statistics shaped like the real graphs of
 * ../shared/matrices-large (cnr-2000: 325,557 x 325,557, 3.2M nonzeros) and like R-MAT 20, on
 * an H100's 50 MB L2. The renumbering is chosen only with NZ_PLAN_REUSE / NZ_PLAN_TUNE and only
 * where the matrix and x exceed L2; otherwise the next rule: tiles beyond L2 (scattered
 * columns), long rows (adaptive) inside it, where neither layout buys anything. */
static void test_setup_budget(void) {
    const size_t l2 = (size_t)50 << 20;
    nz_matrix_stats_t cnr = make_stats(325557, 325557, 3216152, 0, 2716, 22.0, 18000);
    cnr.hot_share = 0.45;
    cnr.lower_bandwidth = cnr.upper_bandwidth = 325000;
    nz_matrix_stats_t rmat = make_stats(1 << 20, 1 << 20, 16087079, 0, 39532, 140.5, 420000);
    rmat.hot_share = 0.58;
    rmat.lower_bandwidth = rmat.upper_bandwidth = (1 << 20) - 1;
    NZT_CHECK(nzi_plan_hot_columns(&cnr) && nzi_plan_hot_columns(&rmat),
              "both profiles hold the hot-columns thresholds");

    /* the model: default 20 calls, reuse 1000; the renumbering costs more than 20 x its
     * saving on any size, and less than 1000 x it */
    NZT_CHECK(nzi_plan_expected_calls(0) == T.default_calls &&
                  nzi_plan_expected_calls(NZ_PLAN_REUSE) == T.reuse_calls &&
                  nzi_plan_expected_calls(NZ_PLAN_TUNE) == T.reuse_calls,
              "expected calls %g / %g / %g", nzi_plan_expected_calls(0),
              nzi_plan_expected_calls(NZ_PLAN_REUSE), nzi_plan_expected_calls(NZ_PLAN_TUNE));
    for (int64_t nnz = 1 << 20; nnz <= ((int64_t)1 << 34); nnz *= 4) {
        nz_matrix_stats_t big = rmat;
        big.nnz = nnz;
        const double setup = nzi_plan_reorder_seconds(&big) / nzi_plan_spmv_seconds(&big, 8);
        NZT_CHECK(setup > T.default_calls * T.reorder_gain && setup < T.reuse_calls * T.reorder_gain,
                  "%lld nonzeros: renumbering modelled at %.1f products", (long long)nnz, setup);
        NZT_CHECK(!nzi_plan_reorder_pays(&big, 0, 8, 0), "%lld nonzeros: pays without reuse",
                  (long long)nnz);
        NZT_CHECK(nzi_plan_reorder_pays(&big, NZ_PLAN_REUSE, 8, 0),
                  "%lld nonzeros, L2 unknown: does not pay with reuse", (long long)nnz);
    }

    /* power-law, the matrix and x in L2 (3.2M x 12 bytes + x = ~45 MB in double): never
     * renumbered, not even with reuse; the long-rows rule instead: nonzero-split either way */
    for (int k = 0; k < 2; k++) {
        const unsigned flags = k == 0 ? 0 : NZ_PLAN_REUSE;
        nzi_plan_choice_t c;
        nzi_plan_request_t r = {NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_OP_N, flags, full_gpu, 8, l2, 0};
        NZT_CHECK(nzi_plan_choose(&cnr, &r, &c) == NZ_SUCCESS, "cnr profile");
        EXPECT_RULE(c, "long-rows", flags ? "cnr profile in L2, reuse" : "cnr profile in L2");
        EXPECT_ALG(c, NZ_ALG_SPLIT, flags ? "cnr profile in L2, reuse" : "cnr profile in L2");
        NZT_CHECK(nzi_plan_layout_flags(&cnr, NZ_ALG_ATOMIC, flags, 8, l2) == 0,
                  "cnr profile in L2, flags 0x%x: atomic renumbered", flags);
        NZT_CHECK(!nzi_plan_reorder_pays(&cnr, flags, 8, l2), "cnr profile in L2: pays");
    }
    /* the same profile with L2 unknown (nz_spmv_plan_choose), taken as beyond L2: no
     * renumbering and no tiles by default (in single precision their build is more than 20
     * products), the renumbering with reuse */
    EXPECT_RULE(gpu_csr(&cnr), "long-rows", "cnr profile, L2 unknown");
    EXPECT_RULE(choose(&cnr, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_PLAN_REUSE, full_gpu),
                "hot-columns", "cnr profile, L2 unknown, reuse");

    /* R-MAT 20 beyond L2 (~220 MB): renumbered with reuse or tuning, not by default */
    {
        nzi_plan_choice_t c;
        nzi_plan_request_t r = {NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_OP_N, 0, full_gpu, 8, l2, 0};
        NZT_CHECK(nzi_plan_choose(&rmat, &r, &c) == NZ_SUCCESS, "rmat profile");
        EXPECT_RULE(c, "scattered-tiles", "rmat 20 beyond L2, no reuse");
        NZT_CHECK(nzi_plan_layout_flags(&rmat, NZ_ALG_ATOMIC, 0, 8, l2) == 0,
                  "rmat 20 beyond L2, no reuse: atomic renumbered");
        r.flags = NZ_PLAN_REUSE;
        NZT_CHECK(nzi_plan_choose(&rmat, &r, &c) == NZ_SUCCESS, "rmat profile");
        EXPECT_RULE(c, "hot-columns", "rmat 20 beyond L2, reuse");
        EXPECT_ALG(c, NZ_ALG_ATOMIC, "rmat 20 beyond L2, reuse");
        NZT_CHECK(nzi_plan_layout_flags(&rmat, NZ_ALG_ATOMIC, NZ_PLAN_REUSE, 8, l2) ==
                      NZ_PLAN_REORDER, "rmat 20 beyond L2, reuse: atomic not renumbered");
        r.flags = NZ_PLAN_TUNE;
        NZT_CHECK(nzi_plan_choose(&rmat, &r, &c) == NZ_SUCCESS, "rmat profile");
        EXPECT_RULE(c, "hot-columns", "rmat 20 beyond L2, tune");
        /* a 200 MB L2 holds it: nothing to gain */
        r.flags = NZ_PLAN_REUSE;
        r.l2_bytes = (size_t)256 << 20;
        NZT_CHECK(nzi_plan_choose(&rmat, &r, &c) == NZ_SUCCESS, "rmat profile");
        EXPECT_RULE(c, "long-rows", "rmat 20 inside a 256 MB L2, reuse");
    }

    /* the public entry accepts the flag (and rejects an unknown one) */
    {
        nz_format_t f;
        nz_alg_t alg = NZ_ALG_AUTO;
        NZT_CHECK(nz_spmv_plan_choose(&f, &alg, NULL, 0, &rmat, NZ_BACKEND_CPU, NZ_FORMAT_CSR,
                                      NZ_PLAN_REUSE) == NZ_SUCCESS,
                  "nz_spmv_plan_choose refuses NZ_PLAN_REUSE");
        NZT_CHECK(nz_spmv_plan_choose(&f, &alg, NULL, 0, &rmat, NZ_BACKEND_CPU, NZ_FORMAT_CSR,
                                      0x4000u) == NZ_ERR_INVALID_ARGUMENT, "unknown flag taken");
    }
}

/* Ranked lists: supported, distinct, complete, reproducible under DETERMINISTIC. */
static void check_list(const nzi_plan_choice_t *c, const nzi_backend_t *table,
                       nz_format_t format, unsigned flags, const char *label) {
    int expected = 0;
    for (int a = 1; a <= NZ_ALG_SPLIT; a++)
        if (table->spmv_supports(format, (nz_alg_t)a) &&
            (!(flags & NZ_PLAN_DETERMINISTIC) ||
             table->spmv_reproducible(format, (nz_alg_t)a, NZ_OP_N) == 1))
            expected++;
    NZT_CHECK(c->count == expected, "%s: %d candidates, %d expected", label, c->count, expected);
    for (int i = 0; i < c->count; i++) {
        NZT_CHECK(table->spmv_supports(format, c->algs[i]), "%s: %s unsupported", label,
                  nz_alg_name(c->algs[i]));
        for (int j = 0; j < i; j++)
            NZT_CHECK(c->algs[i] != c->algs[j], "%s: %s twice", label, nz_alg_name(c->algs[i]));
        if (flags & NZ_PLAN_DETERMINISTIC)
            NZT_CHECK(table->spmv_reproducible(format, c->algs[i], NZ_OP_N) == 1,
                      "%s: %s not reproducible", label, nz_alg_name(c->algs[i]));
    }
}

static void test_lists(void) {
    const nz_matrix_stats_t shapes[] = {
        make_stats(262144, 262144, 1810432, 4, 7, 0.35, 0),
        make_stats(1 << 20, 1 << 20, 15700000, 0, 40000, 110.0, 420000),
        make_stats(10, 10, 30, 1, 5, 1.2, 0),
        make_stats(0, 0, 0, 0, 0, 0, 0),
        make_stats(1000000, 1000000, 1000000, 1, 1, 0, 0),
    };
    char label[128];
    for (int k = 0; k < (int)(sizeof shapes / sizeof shapes[0]); k++)
        for (int f = 0; f < NZ_FORMAT_COUNT; f++)
            for (unsigned flags = 0; flags <= NZ_PLAN_DETERMINISTIC; flags++) {
                snprintf(label, sizeof label, "shape %d gpu %s flags %u", k,
                         nz_format_name((nz_format_t)f), flags);
                nzi_plan_choice_t c =
                    choose(&shapes[k], NZ_BACKEND_CUDA, (nz_format_t)f, flags, full_gpu);
                check_list(&c, full_gpu, (nz_format_t)f, flags, label);
                NZT_CHECK(c.format == (nz_format_t)f, "%s: format changed", label);
                snprintf(label, sizeof label, "shape %d cpu %s flags %u", k,
                         nz_format_name((nz_format_t)f), flags);
                c = choose(&shapes[k], NZ_BACKEND_CPU, (nz_format_t)f, flags, NULL);
                check_list(&c, nzi_backend_get(NZ_BACKEND_CPU), (nz_format_t)f, flags, label);
            }
}

static void test_reproducible_table(void) {
    for (int f = 0; f < NZ_FORMAT_COUNT; f++)
        for (int a = 1; a <= NZ_ALG_SPLIT; a++)
            NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CPU, (nz_format_t)f, (nz_alg_t)a,
                                            NZ_OP_N) == 1,
                      "CPU %s/%s", nz_format_name((nz_format_t)f), nz_alg_name((nz_alg_t)a));
#ifdef NZ_HAVE_CUDA /* the CUDA backend's own table (without CUDA it has no pair: -1) */
    for (int a = NZ_ALG_SCALAR; a <= NZ_ALG_MERGE; a++)
        NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_CSR, (nz_alg_t)a, NZ_OP_N) == 1,
                  "GPU csr/%s", nz_alg_name((nz_alg_t)a));
    NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_ALG_SPLIT, NZ_OP_N) == 1,
              "GPU csr/split");
    NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_COO, NZ_ALG_ATOMIC, NZ_OP_N) == 0,
              "coo/atomic must not be reproducible");
    NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_COO, NZ_ALG_SEGMENTED, NZ_OP_N) == 1,
              "coo/segmented");
    NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_ALG_ATOMIC, NZ_OP_T) == 0,
              "transpose scatter must not be reproducible");
    NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_ALG_VECTOR, NZ_OP_T) == 1,
              "transpose through a cached A^T");
    NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_ALG_SIMD, NZ_OP_N) == -1,
              "an unknown pair is unknown");
    NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_HYB, NZ_ALG_SCALAR, NZ_OP_N) == -1,
              "hyb/scalar does not exist on the GPU");
#else
    NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_ALG_VECTOR, NZ_OP_N) == -1,
              "no CUDA backend: no pair");
#endif

    /* DETERMINISTIC drops coo/atomic, and leaves nothing when it is the only COO kernel */
    nz_matrix_stats_t s = make_stats(1000, 1000, 5000, 5, 5, 0, 0);
    nzi_plan_choice_t c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COO, 0, full_gpu);
    NZT_CHECK(c.count == 2, "coo: %d candidates", c.count);
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COO, NZ_PLAN_DETERMINISTIC, full_gpu);
    NZT_CHECK(c.count == 1 && c.algs[0] == NZ_ALG_SEGMENTED, "deterministic coo: %d, %s",
              c.count, c.count ? nz_alg_name(c.algs[0]) : "-");
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COO, NZ_PLAN_DETERMINISTIC, gpu_atomic_coo);
    NZT_CHECK(c.count == 0 && strstr(c.why, "reproducible") != NULL,
              "only atomic COO, deterministic: %d (%s)", c.count, c.why);
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COO, 0, gpu_atomic_coo);
    EXPECT_ALG(c, NZ_ALG_ATOMIC, "only atomic COO");
}

/* Format advice from bytes[]: the fewest bytes if it saves >= 1 - format_gain. */
static void test_format_advice(void) {
    /* tridiagonal: DIA reads values only */
    int64_t n = 1000000;
    nz_matrix_stats_t s = make_stats(n, n, 3 * n - 2, 2, 3, 0.01, 0);
    s.lower_bandwidth = s.upper_bandwidth = 1;
    s.num_diagonals = 3;
    s.bytes[NZ_FORMAT_CSR] = (size_t)(8 * (n + 1) + 12 * (3 * n - 2));
    s.bytes[NZ_FORMAT_CSC] = s.bytes[NZ_FORMAT_CSR];
    s.bytes[NZ_FORMAT_COO] = (size_t)(16 * (3 * n - 2));
    s.bytes[NZ_FORMAT_ELL] = (size_t)(12 * 3 * n);
    s.bytes[NZ_FORMAT_SELL] = (size_t)(12 * 3 * n + 4 * n);
    s.bytes[NZ_FORMAT_HYB] = s.bytes[NZ_FORMAT_ELL];
    s.bytes[NZ_FORMAT_BSR] = 0; /* refused */
    s.bytes[NZ_FORMAT_DIA] = (size_t)(8 * 3 * n + 24);
    nzi_plan_choice_t c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, full_gpu);
    NZT_CHECK(c.format == NZ_FORMAT_DIA, "tridiagonal: %s (%s)", nz_format_name(c.format), c.why);
    EXPECT_ALG(c, NZ_ALG_SCALAR, "tridiagonal dia");
    NZT_CHECK(strstr(c.why, "format dia") != NULL && strstr(c.why, "bsr refused") != NULL,
              "why: %s", c.why);
    /* without DIA kernels: ELL (0.82x) is the next smallest */
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, gpu_no_dia);
    NZT_CHECK(c.format == NZ_FORMAT_ELL, "tridiagonal, no dia: %s (%s)", nz_format_name(c.format),
              c.why);
    /* the CPU list has no ELL / HYB: DIA there too, SELL without it */
    c = choose(&s, NZ_BACKEND_CPU, NZ_FORMAT_COUNT, 0, NULL);
    NZT_CHECK(c.format == NZ_FORMAT_DIA, "tridiagonal on the CPU: %s", nz_format_name(c.format));
    s.bytes[NZ_FORMAT_DIA] = 0;
    c = choose(&s, NZ_BACKEND_CPU, NZ_FORMAT_COUNT, 0, NULL);
    NZT_CHECK(c.format == NZ_FORMAT_CSR, "tridiagonal on the CPU, no dia: %s (sell 0.91x) %s",
              nz_format_name(c.format), c.why);

    /* dense 4x4 blocks: BSR */
    s = make_stats(n, n, 24 * n, 24, 24, 0, 0);
    s.bytes[NZ_FORMAT_CSR] = (size_t)(8 * (n + 1) + 12 * 24 * n);
    s.bytes[NZ_FORMAT_BSR] = (size_t)(8 * 24 * n + 4 * 6 * n / 4 + 8 * (n / 4 + 1));
    s.bytes[NZ_FORMAT_SELL] = (size_t)(12 * 24 * n + 4 * n);
    s.bytes[NZ_FORMAT_ELL] = (size_t)(12 * 24 * n);
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, full_gpu);
    NZT_CHECK(c.format == NZ_FORMAT_BSR, "4x4 blocks: %s (%s)", nz_format_name(c.format), c.why);
    EXPECT_ALG(c, NZ_ALG_BSR_ROW, "bsr");

    /* power-law: padded formats refused or larger, so CSR */
    s = make_stats(1 << 20, 1 << 20, 15700000, 0, 40000, 110.0, 420000);
    s.bytes[NZ_FORMAT_CSR] = (size_t)(8 * ((1 << 20) + 1)) + 12 * 15700000ULL;
    s.bytes[NZ_FORMAT_SELL] = 3 * s.bytes[NZ_FORMAT_CSR] - 5;
    s.bytes[NZ_FORMAT_HYB] = s.bytes[NZ_FORMAT_CSR] + s.bytes[NZ_FORMAT_CSR] / 5;
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, full_gpu);
    NZT_CHECK(c.format == NZ_FORMAT_CSR, "rmat: %s (%s)", nz_format_name(c.format), c.why);
    EXPECT_ALG(c, NZ_ALG_SPLIT, "rmat csr");
    NZT_CHECK(strstr(c.why, "ell refused") != NULL, "why lists refusals: %s", c.why);

    /* ELL within 10% is not worth leaving CSR for; at 20% it is */
    s = make_stats(n, n, 7 * n, 7, 7, 0, 0);
    s.bytes[NZ_FORMAT_CSR] = 1000000;
    s.bytes[NZ_FORMAT_ELL] = 950000;
    s.bytes[NZ_FORMAT_SELL] = 960000;
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, full_gpu);
    NZT_CHECK(c.format == NZ_FORMAT_CSR, "5%% saving: %s", nz_format_name(c.format));
    s.bytes[NZ_FORMAT_ELL] = 800000;
    s.bytes[NZ_FORMAT_SELL] = 790000;
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, full_gpu);
    NZT_CHECK(c.format == NZ_FORMAT_SELL, "21%% saving: %s (%s)", nz_format_name(c.format), c.why);

    /* no size information (device statistics) or nothing stored */
    s = make_stats(n, n, 7 * n, 7, 7, 0, 0);
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, full_gpu);
    NZT_CHECK(c.format == NZ_FORMAT_CSR && strstr(c.why, "no size information") != NULL,
              "no bytes: %s (%s)", nz_format_name(c.format), c.why);
    s = make_stats(10, 10, 0, 0, 0, 0, 10);
    c = choose(&s, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, full_gpu);
    NZT_CHECK(c.format == NZ_FORMAT_CSR, "empty: %s", nz_format_name(c.format));
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_gpu_csr_rules();
    test_imbalance_threshold();
    test_layout_rule();
    test_setup_budget();
    test_lists();
    test_reproducible_table();
    test_format_advice();
    return nzt_finish("test_planner");
}
