/* test_planner.c: the SpMV planner's decision table on synthetic and generated statistics, and CPU AUTO / TUNE plans. */
#include "testutil.h"
#include "../../src/plan/plan_internal.h"

#include <math.h>
#include <string.h>

#define T nzi_plan_thresholds

/* The CUDA backend as issue 4 describes it (every format on the GPU), independent of what this
 * build compiled, so the GPU rules are tested on any machine. */
static bool full_gpu(nz_format_t f, nz_alg_t a) {
    switch (f) {
    case NZ_FORMAT_CSR: return a >= NZ_ALG_SCALAR && a <= NZ_ALG_MERGE;
    case NZ_FORMAT_COO: return a == NZ_ALG_ATOMIC || a == NZ_ALG_SEGMENTED;
    case NZ_FORMAT_HYB: return a == NZ_ALG_SEGMENTED;
    case NZ_FORMAT_ELL:
    case NZ_FORMAT_SELL:
    case NZ_FORMAT_DIA: return a == NZ_ALG_SCALAR;
    case NZ_FORMAT_BSR: return a == NZ_ALG_BSR_ROW || a == NZ_ALG_BSR_COL;
    default: return false;
    }
}
/* A GPU without DIA kernels. */
static bool gpu_no_dia(nz_format_t f, nz_alg_t a) { return f != NZ_FORMAT_DIA && full_gpu(f, a); }
/* A GPU whose only COO kernel is the atomic one. */
static bool gpu_atomic_coo(nz_format_t f, nz_alg_t a) {
    return f == NZ_FORMAT_COO ? a == NZ_ALG_ATOMIC : full_gpu(f, a);
}
/* Their reproducibility, as the CUDA backend's table has it: everything but the atomic scatter. */
static int gpu_reproducible(nz_format_t f, nz_alg_t a, nz_operation_t op) {
    (void)f;
    (void)op;
    return a == NZ_ALG_ATOMIC ? 0 : 1;
}
/* The planner reads only spmv_supports and spmv_reproducible of a request's table. */
static const nzi_backend_t full_gpu_table = {
    .id = NZ_BACKEND_CUDA, .name = "GPU", .spmv_supports = full_gpu,
    .spmv_reproducible = gpu_reproducible};
static const nzi_backend_t gpu_no_dia_table = {
    .id = NZ_BACKEND_CUDA, .name = "GPU", .spmv_supports = gpu_no_dia,
    .spmv_reproducible = gpu_reproducible};
static const nzi_backend_t gpu_atomic_coo_table = {
    .id = NZ_BACKEND_CUDA, .name = "GPU", .spmv_supports = gpu_atomic_coo,
    .spmv_reproducible = gpu_reproducible};
#define full_gpu (&full_gpu_table)
#define gpu_no_dia (&gpu_no_dia_table)
#define gpu_atomic_coo (&gpu_atomic_coo_table)

static nz_matrix_stats_t make_stats(int64_t rows, int64_t cols, int64_t nnz, int64_t row_min,
                                    int64_t row_max, double row_std, int64_t empty_rows) {
    nz_matrix_stats_t s;
    memset(&s, 0, sizeof s);
    s.rows = rows;
    s.cols = cols;
    s.nnz = nnz;
    s.row_min = row_min;
    s.row_max = row_max;
    s.row_mean = rows > 0 ? (double)nnz / (double)rows : 0;
    s.row_std = row_std;
    s.empty_rows = empty_rows;
    return s;
}

static nzi_plan_choice_t choose(const nz_matrix_stats_t *s, nz_backend_t backend,
                                nz_format_t format, unsigned flags, const nzi_backend_t *table) {
    nzi_plan_choice_t c;
    nzi_plan_request_t r = {backend, format, NZ_OP_N, flags, table};
    nz_status_t st = nzi_plan_choose(s, &r, &c);
    NZT_CHECK(st == NZ_SUCCESS, "nzi_plan_choose returned %d", (int)st);
    if (st != NZ_SUCCESS) memset(&c, 0, sizeof c);
    return c;
}

static nzi_plan_choice_t gpu_csr(const nz_matrix_stats_t *s) {
    return choose(s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, 0, full_gpu);
}

static bool splits_long_rows(nz_alg_t a) {
    return a == NZ_ALG_ADAPTIVE || a == NZ_ALG_IPCSR || a == NZ_ALG_MERGE;
}

#define EXPECT_ALG(c, expected, label)                                                          \
    NZT_CHECK((c).count > 0 && (c).algs[0] == (expected), "%s: chose %s (rule %s), expected %s; " \
              "why: %s", label, (c).count > 0 ? nz_alg_name((c).algs[0]) : "nothing",          \
              (c).rule ? (c).rule : "-", nz_alg_name(expected), (c).why)
#define EXPECT_RULE(c, name, label)                                                             \
    NZT_CHECK((c).rule != NULL && strcmp((c).rule, name) == 0, "%s: rule %s, expected %s; "   \
              "why: %s", label, (c).rule ? (c).rule : "-", name, (c).why)

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
    s = make_stats(250047, 250047, 250047LL * 26, 8, 27, 2.1, 0);
    c = gpu_csr(&s);
    EXPECT_ALG(c, NZ_ALG_VECTOR, "fe3d 64");

    /* uniform random rows, mean 16 (lengths uniform in [0, 32]) */
    s = make_stats(1 << 20, 1 << 20, 16LL << 20, 0, 32, 9.5, (1 << 20) / 33);
    c = gpu_csr(&s);
    EXPECT_ALG(c, NZ_ALG_VECTOR, "random mean 16");

    /* R-MAT scale 20: power-law rows, a hub of 40000, 40% empty */
    s = make_stats(1 << 20, 1 << 20, 15700000, 0, 40000, 110.0, 420000);
    c = gpu_csr(&s);
    NZT_CHECK(c.count > 0 && splits_long_rows(c.algs[0]), "rmat: %s (%s)",
              c.count ? nz_alg_name(c.algs[0]) : "-", c.why);
    EXPECT_ALG(c, NZ_ALG_ADAPTIVE, "rmat scale 20");
    EXPECT_RULE(c, "long-rows", "rmat scale 20");

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
     * the device; adaptive measured 1.06x (single) / 1.10x (double) faster than vector on an
     * H100 (bench/results/h100-2026-11-23-s4-bench.txt) */
    s = make_stats(4096, 1048576, 10156976, 1250, 3750, 720.0, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "few-rows", "rail 4096 x 1M");
    EXPECT_ALG(c, NZ_ALG_ADAPTIVE, "rail 4096 x 1M");

    /* 500 rows of 2500 +- 50%: the longest row holds the whole product up */
    s = make_stats(500, 1000000, 1250000, 1250, 3750, 720.0, 0);
    c = gpu_csr(&s);
    EXPECT_ALG(c, NZ_ALG_ADAPTIVE, "rail 500 rows");
    /* 1500 even rows of 2500: no row stands out, but one vector per row fills less than half
     * the device */
    s = make_stats(1500, 1000000, 1500 * 2500, 2400, 2600, 50.0, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "few-rows", "1500 rows of 2500");
    EXPECT_ALG(c, NZ_ALG_ADAPTIVE, "1500 rows of 2500");

    /* tiny: something with no host-side preprocessing */
    s = make_stats(10, 10, 30, 1, 5, 1.2, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "tiny", "10 x 10");
    NZT_CHECK(c.count > 0 && (c.algs[0] == NZ_ALG_VECTOR || c.algs[0] == NZ_ALG_SCALAR),
              "tiny: %s", c.count ? nz_alg_name(c.algs[0]) : "-");

    /* diagonal: one thread per row */
    s = make_stats(1000000, 1000000, 1000000, 1, 1, 0, 0);
    c = gpu_csr(&s);
    EXPECT_ALG(c, NZ_ALG_SCALAR, "diagonal");
    EXPECT_RULE(c, "short", "diagonal");

    /* no nonzeros, no rows */
    s = make_stats(50, 40, 0, 0, 0, 0, 50);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "empty", "50 x 40 without nonzeros");
    EXPECT_ALG(c, NZ_ALG_SCALAR, "50 x 40 without nonzeros");
    s = make_stats(0, 10, 0, 0, 0, 0, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "empty", "0 x 10");

    /* mostly empty rows, the others of ~7 */
    s = make_stats(1000000, 1000000, 2000000, 0, 20, 3.0, 700000);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "empty-rows", "70% empty");
    EXPECT_ALG(c, NZ_ALG_ADAPTIVE, "70% empty");

    /* lengths spread widely, but no row long enough to stall a vector */
    s = make_stats(1000000, 1000000, 10000000, 1, 100, 15.0, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "variable", "cv 1.5");
    EXPECT_ALG(c, NZ_ALG_ADAPTIVE, "cv 1.5");
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
    s = make_stats(half_rows - 1, 100000, 40 * (half_rows - 1), 20, 60, 8.0, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "few-rows", "rows x V just below half the device");
    s = make_stats(half_rows, 100000, 40 * half_rows, 20, 60, 8.0, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "uniform", "rows x V at half the device");
    s = make_stats(half_rows + 1, 100000, 40 * (half_rows + 1), 20, 60, 8.0, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "uniform", "rows x V just above half the device");
    /* tiny and the CPU cut-over */
    s = make_stats(1000, 1000, (int64_t)T.tiny_nnz - 1, 5, 20, 2.0, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "tiny", "just under tiny_nnz");
    s = make_stats(1000, 1000, (int64_t)T.tiny_nnz + 1000, 5, 20, 2.0, 0);
    c = gpu_csr(&s);
    EXPECT_RULE(c, "uniform", "just over tiny_nnz");
    s = make_stats(100, 100, (int64_t)T.cpu_serial_nnz - 1, 1, 80, 5.0, 0);
    c = choose(&s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0, NULL);
    EXPECT_ALG(c, NZ_ALG_SERIAL, "CPU just under cpu_serial_nnz");
    s.nnz = (int64_t)T.cpu_serial_nnz;
    c = choose(&s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0, NULL);
    EXPECT_ALG(c, NZ_ALG_PARALLEL, "CPU at cpu_serial_nnz");
}

/* Ranked lists: supported, distinct, complete, reproducible under DETERMINISTIC. */
static void check_list(const nzi_plan_choice_t *c, const nzi_backend_t *table,
                       nz_format_t format, unsigned flags, const char *label) {
    int expected = 0;
    for (int a = 1; a <= NZ_ALG_BSR_COL; a++)
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
        for (int a = 1; a <= NZ_ALG_BSR_COL; a++)
            NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CPU, (nz_format_t)f, (nz_alg_t)a,
                                            NZ_OP_N) == 1,
                      "CPU %s/%s", nz_format_name((nz_format_t)f), nz_alg_name((nz_alg_t)a));
#ifdef NZ_HAVE_CUDA /* the CUDA backend's own table (without CUDA it has no pair: -1) */
    for (int a = NZ_ALG_SCALAR; a <= NZ_ALG_MERGE; a++)
        NZT_CHECK(nzi_plan_reproducible(NZ_BACKEND_CUDA, NZ_FORMAT_CSR, (nz_alg_t)a, NZ_OP_N) == 1,
                  "GPU csr/%s", nz_alg_name((nz_alg_t)a));
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
    EXPECT_ALG(c, NZ_ALG_ADAPTIVE, "rmat csr");
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

/* The public entry point: arguments, the reason string, the backend of this build. */
static void test_public_choose(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    nz_matrix_stats_t s;
    nz_format_t f = NZ_FORMAT_COO;
    nz_alg_t a = NZ_ALG_AUTO;
    char why[256];
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 100, 100, NZ_F64));
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
    NZT_OK(ctx, nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0));
    NZT_CHECK(f == NZ_FORMAT_CSR && a == NZ_ALG_PARALLEL, "laplace2d 100^2 on the CPU: %s/%s (%s)",
              nz_format_name(f), nz_alg_name(a), why);
    NZT_CHECK(strncmp(why, "csr on the CPU: parallel", 24) == 0, "why: %s", why);
    NZT_OK(ctx, nz_spmv_plan_choose(&f, &a, NULL, 0, &s, NZ_BACKEND_CPU, NZ_FORMAT_COUNT,
                                    NZ_PLAN_TUNE));
    NZT_CHECK(nz_cpu_spmv_supports(f, a), "advised %s/%s unsupported", nz_format_name(f),
              nz_alg_name(a));
    /* truncation keeps the string terminated */
    memset(why, 'x', sizeof why);
    NZT_OK(ctx, nz_spmv_plan_choose(&f, &a, why, 8, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0));
    NZT_CHECK(strlen(why) == 7, "truncated why has %zu characters", strlen(why));

    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, NULL, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0) ==
                  NZ_ERR_NULL_ARGUMENT, "NULL stats");
    NZT_CHECK(nz_spmv_plan_choose(NULL, &a, why, sizeof why, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0) ==
                  NZ_ERR_NULL_ARGUMENT, "NULL format");
    NZT_CHECK(nz_spmv_plan_choose(&f, NULL, why, sizeof why, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0) ==
                  NZ_ERR_NULL_ARGUMENT, "NULL alg");
    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, (nz_backend_t)7, NZ_FORMAT_CSR, 0) ==
                  NZ_ERR_INVALID_ARGUMENT, "backend 7");
    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CPU, (nz_format_t)-1, 0) ==
                  NZ_ERR_INVALID_ARGUMENT, "format -1");
    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CPU, (nz_format_t)9, 0) ==
                  NZ_ERR_INVALID_ARGUMENT, "format 9");
    NZT_CHECK(nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CPU, NZ_FORMAT_CSR, 0x1000) ==
                  NZ_ERR_INVALID_ARGUMENT, "flag 0x1000");

    nz_status_t st =
        nz_spmv_plan_choose(&f, &a, why, sizeof why, &s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, 0);
#ifdef NZ_HAVE_CUDA
    NZT_CHECK(st == NZ_SUCCESS && nz_cuda_spmv_supports(f, a), "GPU choice: %d %s/%s (%s)",
              (int)st, nz_format_name(f), nz_alg_name(a), why);
#else
    NZT_CHECK(st == NZ_ERR_UNSUPPORTED && why[0] != '\0',
              "GPU choice without CUDA: %d (%s)", (int)st, why);
#endif
    nz_matrix_destroy(&A);
}

/* Statistics of generated matrices, through the whole chain. */
static void test_generated(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    nz_matrix_stats_t full, rows;
    nzi_plan_choice_t c;

    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 40, 40, 40, NZ_F64));
    NZT_OK(ctx, nz_matrix_stats(ctx, &full, A));
    NZT_OK(ctx, nzi_plan_row_stats(ctx, A, NZ_OP_N, &rows));
    NZT_CHECK(rows.rows == full.rows && rows.cols == full.cols && rows.nnz == full.nnz &&
                  rows.row_min == full.row_min && rows.row_max == full.row_max &&
                  rows.empty_rows == full.empty_rows &&
                  fabs(rows.row_mean - full.row_mean) <= 1e-12 * full.row_mean &&
                  fabs(rows.row_std - full.row_std) <= 1e-9 * (1 + full.row_std),
              "row statistics differ from nz_matrix_stats");
    c = gpu_csr(&full);
    EXPECT_ALG(c, NZ_ALG_VECTOR, "generated laplace3d 40^3");
    c = choose(&full, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0, full_gpu);
    NZT_CHECK(c.count > 0 && full_gpu->spmv_supports(c.format, c.algs[0]), "advice for laplace3d: %s (%s)",
              nz_format_name(c.format), c.why);
    nz_matrix_destroy(&A);

    NZT_OK(ctx, nz_gen_mixed(ctx, &A, 200000, 6, 4, 150000, 7, NZ_F64));
    NZT_OK(ctx, nzi_plan_row_stats(ctx, A, NZ_OP_N, &rows));
    c = gpu_csr(&rows);
    NZT_CHECK(c.count > 0 && splits_long_rows(c.algs[0]), "generated mixed: %s (%s)",
              c.count ? nz_alg_name(c.algs[0]) : "-", c.why);
    nz_matrix_destroy(&A);

    NZT_OK(ctx, nz_gen_random(ctx, &A, 100000, 100000, 16.0, 3, NZ_F32));
    NZT_OK(ctx, nzi_plan_row_stats(ctx, A, NZ_OP_N, &rows));
    c = gpu_csr(&rows);
    EXPECT_ALG(c, NZ_ALG_VECTOR, "generated random mean 16");
    nz_matrix_destroy(&A);

    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 16, 16, 0, 0, 0, 5, NZ_F32));
    NZT_OK(ctx, nzi_plan_row_stats(ctx, A, NZ_OP_N, &rows));
    c = gpu_csr(&rows);
    NZT_CHECK(c.count > 0 && splits_long_rows(c.algs[0]),
              "generated rmat 16 (max %lld, mean %.1f): %s (%s)", (long long)rows.row_max,
              rows.row_mean, c.count ? nz_alg_name(c.algs[0]) : "-", c.why);
    nz_matrix_destroy(&A);
}

/* Plan A with alg / flags, check the chosen alg is supported, run y = 1.5 A x - 0.5 y against
 * the reference and return the plan's info. */
static nz_spmv_plan_info_t run_plan(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *csr,
                                    unsigned flags, const char *label) {
    nz_spmv_plan_t *plan = NULL;
    nz_spmv_plan_info_t info;
    nz_matrix_info_t mi;
    memset(&info, 0, sizeof info);
    NZT_OK(ctx, nz_matrix_info(ctx, &mi, A));
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, A, NZ_OP_N, NZ_ALG_AUTO, flags));
    NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
    NZT_CHECK(info.alg != NZ_ALG_AUTO && nz_cpu_spmv_supports(mi.format, info.alg),
              "%s: plan reports %s", label, nz_alg_name(info.alg));
    NZT_CHECK(info.plan_seconds >= 0 && info.reproducible == 1, "%s: info", label);
    size_t vs = mi.value_type == NZ_F32 ? 4 : 8;
    int64_t rows = mi.rows, cols = mi.cols;
    double *xd = nzt_malloc((size_t)(cols > 0 ? cols : 1) * 8);
    double *y0d = nzt_malloc((size_t)(rows > 0 ? rows : 1) * 8);
    void *x = nzt_malloc((size_t)(cols > 0 ? cols : 1) * vs);
    void *y = nzt_malloc((size_t)(rows > 0 ? rows : 1) * vs);
    void *y2 = nzt_malloc((size_t)(rows > 0 ? rows : 1) * vs);
    double *ref = nzt_malloc((size_t)(rows > 0 ? rows : 1) * 8);
    double *bound = nzt_malloc((size_t)(rows > 0 ? rows : 1) * 8);
    int64_t *len = nzt_malloc((size_t)(rows > 0 ? rows : 1) * 8);
    nzt_random_vector(xd, x, mi.value_type, cols, nzt_seed + 1);
    nzt_random_vector(y0d, y, mi.value_type, rows, nzt_seed + 2);
    memcpy(y2, y, (size_t)rows * vs);
    nzt_reference_spmv(csr, NZ_OP_N, 1.5, xd, -0.5, y0d, ref, bound, len);
    NZT_OK(ctx, nz_spmv_execute(plan, 1.5, x, -0.5, y));
    NZT_CHECK(nzt_compare(label, mi.value_type, y, ref, bound, len, rows, 4.0) == 0, "%s: wrong y",
              label);
    if (flags & NZ_PLAN_DETERMINISTIC) {
        NZT_OK(ctx, nz_spmv_execute(plan, 1.5, x, -0.5, y2));
        NZT_CHECK(memcmp(y, y2, (size_t)rows * vs) == 0, "%s: repeated results differ", label);
    }
    nz_spmv_plan_destroy(&plan);
    free(xd);
    free(y0d);
    free(x);
    free(y);
    free(y2);
    free(ref);
    free(bound);
    free(len);
    return info;
}

/* AUTO and TUNE plans on the CPU end to end. */
static void test_cpu_plans(nz_context_t *ctx) {
    nz_matrix_t *small = NULL, *big = NULL, *S = NULL, *C = NULL;
    nz_format_options_t o;
    nz_spmv_plan_info_t info;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &small, 10, 10, NZ_F64));
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &big, 150, 150, NZ_F32));

    info = run_plan(ctx, small, small, 0, "laplace2d 10^2 auto");
    NZT_CHECK(info.alg == NZ_ALG_SERIAL, "tiny CPU plan: %s", nz_alg_name(info.alg));
    info = run_plan(ctx, big, big, 0, "laplace2d 150^2 auto");
    NZT_CHECK(info.alg == NZ_ALG_PARALLEL, "CPU plan: %s", nz_alg_name(info.alg));
    info = run_plan(ctx, big, big, NZ_PLAN_DETERMINISTIC, "laplace2d 150^2 deterministic");

    /* SELL: SIMD where the chunk allows it, else the planner falls back to parallel */
    memset(&o, 0, sizeof o);
    o.sell_chunk = 8;
    NZT_OK(ctx, nz_matrix_convert(ctx, &S, big, NZ_FORMAT_SELL, &o));
    info = run_plan(ctx, S, big, 0, "sell C=8 auto");
    NZT_CHECK(info.alg == NZ_ALG_SIMD, "SELL C=8: %s", nz_alg_name(info.alg));
    nz_matrix_destroy(&S);
    NZT_OK(ctx, nz_matrix_convert(ctx, &S, big, NZ_FORMAT_SELL, NULL));
    info = run_plan(ctx, S, big, 0, "sell C=32 auto");
    NZT_CHECK(info.alg == NZ_ALG_PARALLEL, "SELL C=32: %s", nz_alg_name(info.alg));
    NZT_CHECK(nz_context_last_error(ctx)[0] == '\0', "a successful fallback leaves an error: %s",
              nz_context_last_error(ctx));
    info = run_plan(ctx, S, big, NZ_PLAN_TUNE, "sell C=32 tune");
    nz_matrix_destroy(&S);
    NZT_OK(ctx, nz_matrix_convert(ctx, &C, big, NZ_FORMAT_CSC, NULL));
    info = run_plan(ctx, C, big, 0, "csc auto");
    NZT_CHECK(info.alg == NZ_ALG_SERIAL, "CSC: %s", nz_alg_name(info.alg));
    nz_matrix_destroy(&C);

    /* TUNE: a candidate of the list, and the tuning time counts as plan time */
    info = run_plan(ctx, big, big, NZ_PLAN_TUNE | NZ_PLAN_DETERMINISTIC, "laplace2d 150^2 tune");
    NZT_CHECK(info.alg == NZ_ALG_SERIAL || info.alg == NZ_ALG_PARALLEL, "tuned: %s",
              nz_alg_name(info.alg));
    {
        nz_spmv_plan_t *plan = NULL;
        int64_t n = 150 * 150;
        float *x = nzt_malloc((size_t)n * 4), *y = nzt_malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) x[i] = 1.0f;
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, big, NZ_OP_N, NZ_ALG_AUTO, NZ_PLAN_TUNE));
        NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
        double fastest = 1e30;
        for (int r = 0; r < 5; r++) {
            double t0 = nzi_wtime();
            NZT_OK(ctx, nz_spmv_execute(plan, 1.0, x, 0.0, y));
            double t = nzi_wtime() - t0;
            if (t < fastest) fastest = t;
        }
        /* the winner alone ran tune_runs_cpu + 1 times during planning */
        NZT_CHECK(info.plan_seconds >= 0.5 * (T.tune_runs_cpu + 1) * fastest,
                  "plan_seconds %.3g s does not include tuning (one product %.3g s)",
                  info.plan_seconds, fastest);
        nz_spmv_plan_destroy(&plan);
        free(x);
        free(y);
    }

    /* op = T and empty shapes through AUTO and TUNE */
    {
        nz_spmv_plan_t *plan = NULL;
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, big, NZ_OP_T, NZ_ALG_AUTO, NZ_PLAN_TUNE));
        nz_spmv_plan_destroy(&plan);
        for (int k = 0; k < nzt_zoo_count(); k++) {
            nz_matrix_t *Z = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &Z, k, NZ_F64, nzt_seed));
            run_plan(ctx, Z, Z, 0, nzt_zoo_name(k));
            run_plan(ctx, Z, Z, NZ_PLAN_TUNE | NZ_PLAN_DETERMINISTIC, nzt_zoo_name(k));
            nz_matrix_destroy(&Z);
        }
    }
    nz_matrix_destroy(&small);
    nz_matrix_destroy(&big);
}

/* Fail the k-th allocation for k = 1, 2, ... until AUTO | TUNE succeeds; nothing may leak. */
static void test_allocation_failures(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *S = NULL;
    nz_format_options_t o;
    memset(&o, 0, sizeof o);
    o.sell_chunk = 8;
    NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 30, 30, NZ_F64));
    NZT_OK(ctx, nz_matrix_convert(ctx, &S, A, NZ_FORMAT_SELL, &o));
    const nz_matrix_t *mats[] = {A, S};
    for (int m = 0; m < 2; m++)
        for (int op = 0; op < 2; op++) {
            int k;
            for (k = 1; k < 50; k++) {
                nz_alloc_stats_t before, after;
                nz_spmv_plan_t *plan = NULL;
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
                nz_status_t st = nz_spmv_plan_create(ctx, &plan, mats[m], (nz_operation_t)op,
                                                     NZ_ALG_AUTO, NZ_PLAN_TUNE);
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
                if (st == NZ_SUCCESS) {
                    nz_spmv_plan_destroy(&plan);
                    break;
                }
                NZT_CHECK(st == NZ_ERR_OUT_OF_MEMORY, "k = %d: status %d (%s)", k, (int)st,
                          nz_context_last_error(ctx));
                NZT_CHECK(plan == NULL, "k = %d: a plan despite the failure", k);
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
                NZT_CHECK(after.live_blocks == before.live_blocks &&
                              after.live_bytes == before.live_bytes,
                          "k = %d: leaked %lld blocks", k,
                          (long long)(after.live_blocks - before.live_blocks));
            }
            NZT_CHECK(k > 1 && k < 50, "matrix %d op %d: succeeded at k = %d", m, op, k);
        }
    nz_matrix_destroy(&S);
    nz_matrix_destroy(&A);
}

/* The GPU CSR layout rule (nzi_plan_layout_flags) on the statistics of the suite's shapes, with
 * an H100's 50 MB L2: gather-bound and wider than L2 -> hints + panels; banded -> nothing;
 * power-law with x inside L2 -> hints for vector / merge only; no L2 (no
 * device) or no nonzeros -> nothing. */
static void test_layout_rule(void) {
    const size_t l2 = (size_t)50 << 20;
    nz_matrix_stats_t random = {0}, laplace = {0}, rmat = {0}, small = {0};
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
    unsigned f = nzi_plan_layout_flags(&random, NZ_ALG_VECTOR, 8, l2);
    NZT_CHECK(f == (NZ_PLAN_CACHE_HINTS | NZ_PLAN_COLUMN_PANELS), "random f64 vector: 0x%x", f);
    f = nzi_plan_layout_flags(&random, NZ_ALG_ADAPTIVE, 8, l2);
    NZT_CHECK(f == NZ_PLAN_COLUMN_PANELS, "random f64 adaptive: 0x%x", f);
    f = nzi_plan_layout_flags(&random, NZ_ALG_VECTOR, 4, l2); /* x = 16 MB: fits */
    NZT_CHECK(f == NZ_PLAN_CACHE_HINTS, "random f32 vector: 0x%x", f);
    f = nzi_plan_layout_flags(&laplace, NZ_ALG_VECTOR, 8, l2);
    NZT_CHECK(f == 0, "laplace vector: 0x%x", f);
    f = nzi_plan_layout_flags(&laplace, NZ_ALG_MERGE, 8, l2);
    NZT_CHECK(f == 0, "laplace merge: 0x%x", f);
    f = nzi_plan_layout_flags(&rmat, NZ_ALG_MERGE, 8, l2);
    NZT_CHECK(f == NZ_PLAN_CACHE_HINTS, "rmat merge: 0x%x", f);
    f = nzi_plan_layout_flags(&rmat, NZ_ALG_ADAPTIVE, 8, l2);
    NZT_CHECK(f == 0, "rmat adaptive: 0x%x", f);
    NZT_CHECK(nzi_plan_layout_flags(&random, NZ_ALG_VECTOR, 8, 0) == 0, "no L2: no layout");
    NZT_CHECK(nzi_plan_layout_flags(&small, NZ_ALG_VECTOR, 8, l2) == 0, "tiny: no layout");
    random.nnz = 0;
    NZT_CHECK(nzi_plan_layout_flags(&random, NZ_ALG_VECTOR, 8, l2) == 0, "empty: no layout");
}

int main(int argc, char **argv) {
    nz_context_t *ctx = NULL;
    nzt_init(argc, argv);
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    test_gpu_csr_rules();
    test_imbalance_threshold();
    test_layout_rule();
    test_lists();
    test_reproducible_table();
    test_format_advice();
    test_public_choose(ctx);
    test_generated(ctx);
    test_cpu_plans(ctx);
    test_allocation_failures(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_planner");
}
