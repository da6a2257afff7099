/* planner_test.h: what the planner tests share: a CUDA backend table with every format, hand-made statistics, choices and their checks. */
#ifndef NZ_PLANNER_TEST_H
#define NZ_PLANNER_TEST_H

#include "testutil.h"
#include "../../src/plan/plan_internal.h"

#include <stdbool.h>
#include <string.h>

#define T nzi_plan_thresholds

/* The CUDA backend as issue 4 describes it (every format on the GPU), independent of what this
 * build compiled, so the GPU rules are tested on any machine. */
static inline bool full_gpu_supports(nz_format_t f, nz_alg_t a) {
    switch (f) {
    case NZ_FORMAT_CSR:
        return (a >= NZ_ALG_SCALAR && a <= NZ_ALG_MERGE) || a == NZ_ALG_ATOMIC || a == NZ_ALG_TILES ||
               a == NZ_ALG_SPLIT;
    case NZ_FORMAT_COO: return a == NZ_ALG_ATOMIC || a == NZ_ALG_SEGMENTED;
    case NZ_FORMAT_HYB: return a == NZ_ALG_SEGMENTED;
    case NZ_FORMAT_ELL:
    case NZ_FORMAT_SELL:
    case NZ_FORMAT_DIA: return a == NZ_ALG_SCALAR;
    case NZ_FORMAT_BSR: return a == NZ_ALG_BSR_ROW || a == NZ_ALG_BSR_COL;
    default: return false;
    }
}
/* Their reproducibility, as the CUDA backend's table has it: everything but the atomic scatter
 * and the tiles' shared-memory atomics. */
static inline int gpu_reproducible(nz_format_t f, nz_alg_t a, nz_operation_t op) {
    (void)f;
    (void)op;
    return a == NZ_ALG_ATOMIC || a == NZ_ALG_TILES ? 0 : 1;
}
/* The planner reads only spmv_supports and spmv_reproducible of a request's table. */
static const nzi_backend_t full_gpu_table = {
    .id = NZ_BACKEND_CUDA, .name = "GPU", .spmv_supports = full_gpu_supports,
    .spmv_reproducible = gpu_reproducible};
#define full_gpu (&full_gpu_table)

/* Hand-made row statistics (bytes[], bandwidths and diagonals left 0). */
static inline nz_matrix_stats_t make_stats(int64_t rows, int64_t cols, int64_t nnz, int64_t row_min,
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

/* The planner's choice for s (a failed call is a failure and an empty choice). */
static inline nzi_plan_choice_t choose(const nz_matrix_stats_t *s, nz_backend_t backend,
                                nz_format_t format, unsigned flags, const nzi_backend_t *table) {
    nzi_plan_choice_t c;
    nzi_plan_request_t r = {backend, format, NZ_OP_N, flags, table, 0, 0, 0};
    nz_status_t st = nzi_plan_choose(s, &r, &c);
    NZT_CHECK(st == NZ_SUCCESS, "nzi_plan_choose returned %d", (int)st);
    if (st != NZ_SUCCESS) memset(&c, 0, sizeof c);
    return c;
}

static inline nzi_plan_choice_t gpu_csr(const nz_matrix_stats_t *s) {
    return choose(s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, 0, full_gpu);
}

static inline bool splits_long_rows(nz_alg_t a) {
    return a == NZ_ALG_ADAPTIVE || a == NZ_ALG_IPCSR || a == NZ_ALG_MERGE || a == NZ_ALG_SPLIT;
}

#define EXPECT_ALG(c, expected, label)                                                          \
    NZT_CHECK((c).count > 0 && (c).algs[0] == (expected), "%s: chose %s (rule %s), expected %s; " \
              "why: %s", label, (c).count > 0 ? nz_alg_name((c).algs[0]) : "nothing",          \
              (c).rule ? (c).rule : "-", nz_alg_name(expected), (c).why)
#define EXPECT_RULE(c, name, label)                                                             \
    NZT_CHECK((c).rule != NULL && strcmp((c).rule, name) == 0, "%s: rule %s, expected %s; "   \
              "why: %s", label, (c).rule ? (c).rule : "-", name, (c).why)

/* gpu_csr(s), which must take `rule` (unless NULL) and choose `alg` first (unless NZ_ALG_AUTO). */
static inline nzi_plan_choice_t expect_gpu_csr(nz_matrix_stats_t s, const char *rule, nz_alg_t alg,
                                               const char *label) {
    nzi_plan_choice_t c = gpu_csr(&s);
    if (rule != NULL) EXPECT_RULE(c, rule, label);
    if (alg != NZ_ALG_AUTO) EXPECT_ALG(c, alg, label);
    return c;
}

#endif /* NZ_PLANNER_TEST_H */
