/* test_formats_faults.c: allocation-failure loops over conversions, transpose, stats, CPU plans. */
#include "testutil.h"

#include <string.h>

/* The operations under test, each producing (at most) one object to free. */
typedef enum { OP_CONVERT, OP_TO_CSR, OP_VALUES, OP_TRANSPOSE, OP_STATS, OP_PLAN_T } op_t;
static const char *op_names[] = {"convert", "back to csr", "convert_values", "transpose",
                                 "stats", "transpose plan"};

static nz_status_t run_op(nz_context_t *ctx, op_t op, const nz_matrix_t *A, nz_format_t f,
                          const nz_format_options_t *o, nz_matrix_t **out,
                          nz_spmv_plan_t **plan) {
    nz_matrix_stats_t s;
    switch (op) {
    case OP_CONVERT: return nz_matrix_convert(ctx, out, A, f, o);
    case OP_TO_CSR: return nz_matrix_convert(ctx, out, A, NZ_FORMAT_CSR, NULL);
    case OP_VALUES: return nz_matrix_convert_values(ctx, out, A, NZ_F32);
    case OP_TRANSPOSE: return nz_matrix_transpose(ctx, out, A);
    case OP_STATS: return nz_matrix_stats(ctx, &s, A);
    default: return nz_spmv_plan_create(ctx, plan, A, NZ_OP_T, NZ_ALG_AUTO, 0);
    }
}

/* Fail the k-th allocation for k = 1, 2, ... until the call succeeds; every failure must be
 * NZ_ERR_OUT_OF_MEMORY with nothing leaked and no output written. */
static void brutal(nz_context_t *ctx, op_t op, const nz_matrix_t *A, nz_format_t f,
                   const nz_format_options_t *o, const char *what) {
    nz_alloc_stats_t base, now;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &base));
    int failures = 0;
    for (int64_t k = 1; k < 1000; k++) {
        nz_matrix_t *out = NULL;
        nz_spmv_plan_t *plan = NULL;
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t st = run_op(ctx, op, A, f, o, &out, &plan);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        if (st == NZ_SUCCESS) {
            nz_matrix_destroy(&out);
            nz_spmv_plan_destroy(&plan);
            break;
        }
        failures++;
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &now));
        NZT_CHECK(st == NZ_ERR_OUT_OF_MEMORY, "%s %s: failing allocation %lld gave %d (%s)",
                  what, op_names[op], (long long)k, st, nz_context_last_error(ctx));
        NZT_CHECK(out == NULL && plan == NULL, "%s %s: output set on failure", what,
                  op_names[op]);
        NZT_CHECK(now.live_blocks == base.live_blocks && now.live_bytes == base.live_bytes,
                  "%s %s: failing allocation %lld leaked %lld blocks", what, op_names[op],
                  (long long)k, (long long)(now.live_blocks - base.live_blocks));
    }
    NZT_CHECK(failures > 0 || op == OP_PLAN_T, "%s %s: no allocation was ever failed", what,
              op_names[op]);
}

static void run_all(nz_context_t *ctx, const nz_matrix_t *A, const char *name) {
    struct {
        nz_format_t format;
        int chunk, sigma, block;
        int64_t width;
    } cases[] = {
        {NZ_FORMAT_CSR, 0, 0, 0, 0},  {NZ_FORMAT_CSC, 0, 0, 0, 0},  {NZ_FORMAT_COO, 0, 0, 0, 0},
        {NZ_FORMAT_ELL, 0, 0, 0, 0},  {NZ_FORMAT_SELL, 4, 1, 0, 0}, {NZ_FORMAT_SELL, 4, 16, 0, 0},
        {NZ_FORMAT_HYB, 0, 0, 0, 0},  {NZ_FORMAT_HYB, 0, 0, 0, 2},  {NZ_FORMAT_BSR, 0, 0, 3, 0},
        {NZ_FORMAT_DIA, 0, 0, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        nz_format_options_t o;
        memset(&o, 0, sizeof o);
        o.sell_chunk = cases[c].chunk;
        o.sell_sigma = cases[c].sigma;
        o.bsr_block = cases[c].block;
        o.hyb_ell_width = cases[c].width;
        o.max_padding_ratio = 1e9;
        char what[96];
        snprintf(what, sizeof what, "%s %s", name, nz_format_name(cases[c].format));
        brutal(ctx, OP_CONVERT, A, cases[c].format, &o, what);
        nz_matrix_t *B = NULL;
        NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, cases[c].format, &o));
        for (int op = OP_TO_CSR; op <= OP_PLAN_T; op++) {
            if (op == OP_TO_CSR && cases[c].format == NZ_FORMAT_CSR) continue;
            brutal(ctx, (op_t)op, B, cases[c].format, &o, what);
        }
        nz_matrix_destroy(&B);
    }
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    /* 30 x 20 with empty rows and a long row */
    int32_t ri[64], ci[64];
    double v[64];
    int n = 0;
    for (int i = 0; i < 30; i++) {
        int len = i == 7 ? 15 : (i % 4 == 0 ? 0 : 1 + i % 3);
        for (int t = 0; t < len; t++) {
            ri[n] = i;
            ci[n] = (i * 7 + t * 3) % 20;
            v[n] = 1.0 + n;
            n++;
        }
    }
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &A, 30, 20, n, ri, ci, NZ_F64, v));
    run_all(ctx, A, "30x20");
    nz_matrix_destroy(&A);
    /* hypersparse 10000 x 10000 (DIA takes the sorting path) */
    int32_t hr[] = {0, 5000, 9999, 42, 7}, hc[] = {9999, 5000, 0, 4242, 7};
    double hv[] = {1, 2, 3, 4, 5};
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &A, 10000, 10000, 5, hr, hc, NZ_F64, hv));
    run_all(ctx, A, "hypersparse");
    nz_matrix_destroy(&A);
    nz_alloc_stats_t stats;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &stats));
    NZT_CHECK(stats.live_blocks == 0, "%lld blocks leaked at the end", (long long)stats.live_blocks);
    nz_context_destroy(&ctx);
    return nzt_finish("test_formats_faults");
}
