/* test_spmm.c: CPU SpMM (Y = alpha op(A) X + beta Y) against hand-computed and double references, layouts, ld gaps, formats, mixed precision, errors, allocation failures. */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

/*
 * Every product is checked column by column against nzt_reference_spmv (a double computation on
 * the stored values, tolerance scaled by row length); the gaps that ld leaves between rows or
 * columns of Y hold a sentinel that must survive; beta == 0 runs start from NaN-poisoned Y.
 */

#define TOL_FACTOR 4.0

static nz_context_t *ctx;
static int64_t products;

/* One product of `plan` on host A (reference in CSR form `csr`), checked column by column
 * (unless compare is 0: the caller compares out_copy bitwise with a checked run); the ld gaps of
 * Y must keep their sentinel. mixed: the tighter mixed-precision bound. */
static void check_product(const char *name, nz_spmm_plan_t *plan, const nz_matrix_t *csr,
                          nz_operation_t op, int64_t k, nz_dense_layout_t layout, int64_t pad,
                          double alpha, double beta, int mixed, int compare, void *out_copy) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, csr));
    const nz_value_type_t vt = info.value_type;
    const nzt_dense_shape_t shape = nzt_dense_shape(&info, op, layout, k, pad);
    const int64_t xrows = shape.xrows, yrows = shape.yrows, ldx = shape.ldx, ldy = shape.ldy;
    const int64_t nx = shape.nx, ny = shape.ny;
    const size_t vs = nzi_value_size(vt);
    void *X = nzt_malloc((size_t)nx * vs), *Y = nzt_malloc((size_t)ny * vs);
    double *xd = nzt_malloc((size_t)(xrows + 1) * 8), *y0 = nzt_malloc((size_t)(yrows + 1) * 8);
    double *ref = nzt_malloc((size_t)(yrows + 1) * 8), *bound = nzt_malloc((size_t)(yrows + 1) * 8);
    int64_t *len = nzt_malloc((size_t)(yrows + 1) * 8);
    char label[400];

    /* X: random in the layout, sentinels in its gaps; Y: y0 (or NaN for beta == 0) + sentinels */
    nzt_fill_dense_operands(vt, layout, k, X, xrows, ldx, nx, xd, Y, yrows, ldy, ny, y0, beta);

    nz_status_t s = nz_spmm_execute(plan, alpha, X, ldx, beta, Y, ldy);
    NZT_CHECK(s == NZ_SUCCESS, "%s: execute returned %d: %s", name, (int)s,
              nz_context_last_error(ctx));
    products++;
    for (int64_t c = 0; c < k && s == NZ_SUCCESS && compare; c++) {
        nzt_random_vector(xd, NULL, vt, xrows, nzt_seed + 100 + (uint64_t)c);
        nzt_random_vector(y0, NULL, vt, yrows, nzt_seed + 200 + (uint64_t)c);
        nzt_reference_spmv(csr, op, alpha, xd, beta, y0, ref, bound, len);
        void *column = nzt_malloc((size_t)(yrows + 1) * nzi_value_size(vt));
        for (int64_t r = 0; r < yrows; r++)
            nzi_set(column, vt, r, nzi_get(Y, vt, nzt_dense_at(layout, ldy, r, c)));
        snprintf(label, sizeof label, "%s column %lld", name, (long long)c);
        int64_t bad = nzt_compare(label, vt, column, ref, bound, len, yrows, TOL_FACTOR);
        NZT_CHECK(bad == 0, "%s: %lld of %lld rows of column %lld wrong", name, (long long)bad,
                  (long long)yrows, (long long)c);
        if (mixed && bad == 0) {
            /* float storage, double sums: only the final rounding to float (plus the double
             * rounding of the sums) separates y from the exact result */
            int64_t loose = 0;
            for (int64_t r = 0; r < yrows; r++) {
                double y = nzi_get(column, vt, r);
                if (!isfinite(ref[r])) continue;
                if (fabs(y - ref[r]) > 0.5 * FLT_EPSILON * fabs(ref[r]) * 1.0000001 +
                                           1e-11 * bound[r] + 1e-40)
                    loose++;
            }
            NZT_CHECK(loose == 0, "%s: %lld entries of column %lld beyond half a float ulp (sums "
                      "not in double?)", name, (long long)loose, (long long)c);
        }
        free(column);
    }
    /* the gaps: still the sentinel (outer = rows (row-major) or columns, inner past the data) */
    int64_t touched = 0;
    const int64_t outer = layout == NZ_ROW_MAJOR ? yrows : k;
    const int64_t inner = layout == NZ_ROW_MAJOR ? k : yrows;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t g = inner; g < ldy; g++) {
            int64_t i = o * ldy + g;
            if (i < ny && nzi_get(Y, vt, i) != NZT_SENTINEL) touched++;
        }
    NZT_CHECK(touched == 0, "%s: %lld elements in the ld gaps of Y were written", name,
              (long long)touched);
    if (out_copy != NULL) memcpy(out_copy, Y, (size_t)ny * nzi_value_size(vt));
    free(X);
    free(Y);
    free(xd);
    free(y0);
    free(ref);
    free(bound);
    free(len);
}

/* Hand-computed: A = [1 0 2 0; 0 0 0 0; 0 3 0 4] (3 x 4), X = [1 2; 10 20; 100 200; 1000 2000]. */
static void test_hand(void) {
    const int64_t offsets[4] = {0, 2, 2, 4};
    const int32_t columns[4] = {0, 2, 1, 3};
    const double values[4] = {1, 2, 3, 4};
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 3, 4, NZ_I64, offsets, columns, NZ_F64, values));
    const double X_row[8] = {1, 2, 10, 20, 100, 200, 1000, 2000};
    const double X_col[8] = {1, 10, 100, 1000, 2, 20, 200, 2000};
    const double AX[3][2] = {{201, 402}, {0, 0}, {4030, 8060}};
    for (int l = 0; l < 2; l++) {
        nz_dense_layout_t layout = l == 0 ? NZ_ROW_MAJOR : NZ_COL_MAJOR;
        for (int a = 0; a < 2; a++) {
            nz_alg_t alg = a == 0 ? NZ_ALG_SERIAL : NZ_ALG_PARALLEL;
            nz_spmm_plan_t *plan = NULL;
            NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 2, layout, alg, 0));
            double Y[6];
            for (int i = 0; i < 6; i++) Y[i] = 1.0;
            NZT_OK(ctx, nz_spmm_execute(plan, 2.0, layout == NZ_ROW_MAJOR ? X_row : X_col,
                                        layout == NZ_ROW_MAJOR ? 2 : 4, -1.0, Y,
                                        layout == NZ_ROW_MAJOR ? 2 : 3));
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 2; c++) {
                    double y = layout == NZ_ROW_MAJOR ? Y[r * 2 + c] : Y[c * 3 + r];
                    NZT_CHECK(y == 2.0 * AX[r][c] - 1.0, "hand %s %s: Y[%d,%d] = %g, expected %g",
                              layout == NZ_ROW_MAJOR ? "row" : "col", nz_alg_name(alg), r, c, y,
                              2.0 * AX[r][c] - 1.0);
                }
            nz_spmm_plan_info_t info;
            NZT_OK(ctx, nz_spmm_plan_info(plan, &info));
            NZT_CHECK(info.alg == alg && info.backend == NZ_BACKEND_CPU && info.reproducible == 1 &&
                          info.format == NZ_FORMAT_CSR && info.workspace_bytes == 0,
                      "hand: plan info alg %d backend %d reproducible %d workspace %zu",
                      (int)info.alg, (int)info.backend, info.reproducible, info.workspace_bytes);
            NZT_OK(ctx, nz_spmm_plan_destroy(&plan));
            NZT_CHECK(plan == NULL, "destroy did not clear the handle");
        }
    }
    /* A^T X, X = [1 2; 10 20; 100 200] (3 x 2), row-major: A^T X = [1 2; 300 600; 2 4; 400 800] */
    const double Xt[6] = {1, 2, 10, 20, 100, 200};
    const double ATX[8] = {1, 2, 300, 600, 2, 4, 400, 800};
    nz_spmm_plan_t *plan = NULL;
    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, A, NZ_OP_T, 2, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0));
    double Y[8];
    for (int i = 0; i < 8; i++) Y[i] = NAN;
    NZT_OK(ctx, nz_spmm_execute(plan, 1.0, Xt, 2, 0.0, Y, 2));
    NZT_CHECK(memcmp(Y, ATX, sizeof Y) == 0, "hand A^T X: %g %g %g %g %g %g %g %g", Y[0], Y[1],
              Y[2], Y[3], Y[4], Y[5], Y[6], Y[7]);
    nz_spmm_plan_info_t info;
    NZT_OK(ctx, nz_spmm_plan_info(plan, &info));
    /* 4 nonzeros x 2 columns: far below cpu_serial_nnz, so AUTO is serial (issue 36) */
    NZT_CHECK(info.alg == NZ_ALG_SERIAL && info.workspace_bytes > 0,
              "op T: auto resolved to %s, workspace %zu", nz_alg_name(info.alg),
              info.workspace_bytes);
    nz_spmm_plan_destroy(&plan);
    /* alpha = 0: X is not read (NaN X), Y = beta Y exactly */
    double Xnan[8], Yb[6] = {1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 8; i++) Xnan[i] = NAN;
    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 2, NZ_ROW_MAJOR, NZ_ALG_SERIAL, 0));
    NZT_OK(ctx, nz_spmm_execute(plan, 0.0, Xnan, 2, 3.0, Yb, 2));
    for (int i = 0; i < 6; i++)
        NZT_CHECK(Yb[i] == 3.0 * (i + 1), "alpha = 0: Y[%d] = %g, expected %g", i, Yb[i],
                  3.0 * (i + 1));
    nz_spmm_plan_destroy(&plan);
    nz_matrix_destroy(&A);
}

/* Zoo x precisions x ops x k x layouts x (alpha, beta); serial and parallel agree bitwise. */
static void test_zoo(void) {
    const int64_t ks[] = {1, 2, 3, 8, 33, 64};
    for (int z = 0; z < nzt_zoo_count(); z++) {
        for (int v = 0; v < 2; v++) {
            nz_value_type_t vt = v == 0 ? NZ_F32 : NZ_F64;
            nz_matrix_t *A = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, z, vt, nzt_seed));
            nz_matrix_info_t info;
            NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
            int before = nzt_failures;
            /* the big zoo members get fewer k so the test stays quick */
            int nk = info.nnz > 200000 ? 2 : (int)(sizeof ks / sizeof ks[0]);
            for (int op = 0; op < 2; op++)
                for (int ki = 0; ki < nk; ki++) {
                    int64_t k = ks[(ki * 7 + z) % (int)(sizeof ks / sizeof ks[0])];
                    if (nk == (int)(sizeof ks / sizeof ks[0])) k = ks[ki];
                    for (int l = 0; l < 2; l++) {
                        nz_dense_layout_t layout = l == 0 ? NZ_ROW_MAJOR : NZ_COL_MAJOR;
                        int64_t yrows = op == 0 ? info.rows : info.cols;
                        int64_t ldy = (layout == NZ_ROW_MAJOR ? k : (yrows > 1 ? yrows : 1)) + 3;
                        size_t ybytes =
                            (size_t)nzt_dense_span(layout, yrows, k, ldy) * nzi_value_size(vt);
                        void *serial = nzt_malloc(ybytes), *parallel = nzt_malloc(ybytes);
                        char name[300];
                        /* parallel: both cases against the reference; serial: the first case,
                         * compared bitwise with the parallel result */
                        for (int a = 0; a < 2; a++) {
                            nz_alg_t alg = a == 0 ? NZ_ALG_PARALLEL : NZ_ALG_SERIAL;
                            nz_spmm_plan_t *plan = NULL;
                            NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, A, (nz_operation_t)op, k,
                                                            layout, alg, 0));
                            snprintf(name, sizeof name, "[%s %s op=%c k=%lld %s %s alpha=1 beta=0]",
                                     nzt_zoo_name(z), vt == NZ_F32 ? "f32" : "f64",
                                     op ? 'T' : 'N', (long long)k,
                                     l == 0 ? "row" : "col", nz_alg_name(alg));
                            check_product(name, plan, A, (nz_operation_t)op, k, layout, 3, 1.0,
                                          0.0, 0, a == 0, a == 0 ? parallel : serial);
                            if (a == 0) {
                                snprintf(name, sizeof name,
                                         "[%s %s op=%c k=%lld %s %s alpha=-2.5 beta=0.5]",
                                         nzt_zoo_name(z), vt == NZ_F32 ? "f32" : "f64",
                                         op ? 'T' : 'N', (long long)k, l == 0 ? "row" : "col",
                                         nz_alg_name(alg));
                                check_product(name, plan, A, (nz_operation_t)op, k, layout, 0,
                                              -2.5, 0.5, 0, 1, NULL);
                            }
                            nz_spmm_plan_destroy(&plan);
                        }
                        /* same (alpha, beta, Y0): serial and parallel bitwise equal, NaN
                         * sentinels compared as bytes */
                        NZT_CHECK(memcmp(serial, parallel, ybytes) == 0,
                                  "%s: serial and parallel differ", name);
                        free(serial);
                        free(parallel);
                    }
                }
            printf("  %-32s %s %s\n", nzt_zoo_name(z), vt == NZ_F32 ? "f32" : "f64",
                   nzt_failures == before ? "ok" : "FAILED");
            nz_matrix_destroy(&A);
        }
    }
}

/* Other host formats run through the plan's CSR copy; mixed precision sums in double. */
static void test_formats_and_mixed(void) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 9, NZ_F32, nzt_seed)); /* power-law 4000 x 4000 */
    const nz_format_t formats[] = {NZ_FORMAT_CSC, NZ_FORMAT_COO, NZ_FORMAT_ELL, NZ_FORMAT_SELL,
                                   NZ_FORMAT_HYB, NZ_FORMAT_BSR, NZ_FORMAT_DIA};
    nz_format_options_t options;
    memset(&options, 0, sizeof options);
    options.max_padding_ratio = 1000.0;
    options.sell_sigma = 64;
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        nz_matrix_t *B = NULL;
        nz_status_t s = nz_matrix_convert(ctx, &B, A, formats[f], &options);
        if (s == NZ_ERR_TOO_MUCH_PADDING) continue;
        NZT_CHECK(s == NZ_SUCCESS, "convert to %s: %s", nz_format_name(formats[f]),
                  nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        for (int op = 0; op < 2; op++) {
            nz_spmm_plan_t *plan = NULL;
            NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, B, (nz_operation_t)op, 5, NZ_COL_MAJOR,
                                            NZ_ALG_AUTO, 0));
            char name[200];
            snprintf(name, sizeof name, "[%s op=%c k=5 col]", nz_format_name(formats[f]),
                     op ? 'T' : 'N');
            check_product(name, plan, A, (nz_operation_t)op, 5, NZ_COL_MAJOR, 1, 1.5, -1.0, 0, 1,
                          NULL);
            nz_spmm_plan_info_t info;
            NZT_OK(ctx, nz_spmm_plan_info(plan, &info));
            NZT_CHECK(info.format == formats[f] && info.workspace_bytes > 0,
                      "%s: info format %d, workspace %zu (a CSR copy is held)", name,
                      (int)info.format, info.workspace_bytes);
            nz_spmm_plan_destroy(&plan);
        }
        nz_matrix_destroy(&B);
    }
    /* mixed: half-ulp accuracy for float storage on long rows (zoo 7: rows of ~3000) */
    const int zs[] = {7, 9, 11};
    for (size_t z = 0; z < sizeof zs / sizeof zs[0]; z++) {
        nz_matrix_t *M = NULL;
        NZT_OK(ctx, nzt_zoo_matrix(ctx, &M, zs[z], NZ_F32, nzt_seed));
        for (int l = 0; l < 2; l++) {
            nz_dense_layout_t layout = l == 0 ? NZ_ROW_MAJOR : NZ_COL_MAJOR;
            nz_spmm_plan_t *plan = NULL;
            NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, M, NZ_OP_N, 3, layout, NZ_ALG_PARALLEL,
                                            NZ_PLAN_MIXED));
            char name[200];
            snprintf(name, sizeof name, "[mixed %s k=3 %s]", nzt_zoo_name(zs[z]),
                     l == 0 ? "row" : "col");
            check_product(name, plan, M, NZ_OP_N, 3, layout, 2, 1.0, 0.0, 1, 1, NULL);
            check_product(name, plan, M, NZ_OP_N, 3, layout, 0, 0.75, -0.25, 1, 1, NULL);
            nz_spmm_plan_destroy(&plan);
        }
        nz_matrix_destroy(&M);
    }
    nz_matrix_destroy(&A);
}

/* Leading dimensions whose byte offsets wrap (issue 36): with 8-byte values, column 1 of a
 * column-major Y at ld = 2^61 - 1 is Y[-1] and at ld = 2^61 column 0; the same for row 1 of
 * row-major operands and for X. Each is NZ_ERR_OVERFLOW naming the ld, and Y (with a guard
 * element on each side) is left untouched. */
static void test_ld_wrap(const nz_matrix_t *A) {
    static const int64_t bad_ld[] = {(INT64_C(1) << 61) - 1, INT64_C(1) << 61,
                                     (INT64_C(1) << 60) + 1, INT64_MAX / 3};
    const nz_dense_layout_t layouts[] = {NZ_COL_MAJOR, NZ_ROW_MAJOR};
    const int64_t n = 3000, k = 2;
    double *X = nzt_malloc((size_t)(n * k) * 8), *Ybuf = nzt_malloc((size_t)(n * k + 2) * 8);
    double *Y = Ybuf + 1; /* Y[-1] and Y[n k] are guards */
    for (int64_t i = 0; i < n * k; i++) X[i] = 1.0;
    for (size_t l = 0; l < 2; l++) {
        nz_spmm_plan_t *plan = NULL;
        NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, k, layouts[l], NZ_ALG_SERIAL, 0));
        const int64_t good = layouts[l] == NZ_ROW_MAJOR ? k : n;
        for (size_t b = 0; b < sizeof bad_ld / sizeof bad_ld[0]; b++)
            for (int which = 0; which < 2; which++) {
                for (int64_t i = 0; i < n * k + 2; i++) Ybuf[i] = 7.0;
                const int64_t ldx = which == 0 ? bad_ld[b] : good;
                const int64_t ldy = which == 1 ? bad_ld[b] : good;
                nz_status_t s = nz_spmm_execute(plan, 1.0, X, ldx, 0.0, Y, ldy);
                NZT_CHECK(s == NZ_ERR_OVERFLOW, "%s-major ld%s = %lld returned %d (%s)",
                          l ? "row" : "column", which ? "y" : "x", (long long)bad_ld[b], (int)s,
                          nz_context_last_error(ctx));
                char want[64];
                snprintf(want, sizeof want, "ld%s = %lld", which ? "Y" : "X", (long long)bad_ld[b]);
                NZT_CHECK(strstr(nz_context_last_error(ctx), want) != NULL,
                          "ld%s message lacks '%s': %s", which ? "y" : "x", want,
                          nz_context_last_error(ctx));
                int64_t touched = 0;
                for (int64_t i = 0; i < n * k + 2; i++) touched += Ybuf[i] != 7.0;
                NZT_CHECK(touched == 0, "%s-major ld%s = %lld wrote %lld elements",
                          l ? "row" : "column", which ? "y" : "x", (long long)bad_ld[b],
                          (long long)touched);
            }
        NZT_OK(ctx, nz_spmm_execute(plan, 1.0, X, good, 0.0, Y, good));
        NZT_CHECK(Ybuf[0] == 7.0 && Ybuf[n * k + 1] == 7.0, "a good ld wrote past Y");
        nz_spmm_plan_destroy(&plan);
    }
    free(X);
    free(Ybuf);
}

static void test_errors(void) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 8, NZ_F64, nzt_seed)); /* 3000 x 3000 */
    nz_spmm_plan_t *plan = NULL;
    nz_status_t s;
    s = nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 0, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT && plan == NULL, "k = 0 returned %d", (int)s);
    NZT_CHECK(strstr(nz_context_last_error(ctx), "k = 0") != NULL, "k = 0 message: %s",
              nz_context_last_error(ctx));
    s = nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 65, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "k = 65 returned %d", (int)s);
    s = nz_spmm_plan_create(ctx, &plan, A, (nz_operation_t)7, 4, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "op 7 returned %d", (int)s);
    s = nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 4, (nz_dense_layout_t)5, NZ_ALG_AUTO, 0);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "layout 5 returned %d", (int)s);
    s = nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 4, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0x100);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "flags 0x100 returned %d", (int)s);
    s = nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 4, NZ_ROW_MAJOR, NZ_ALG_MERGE, 0);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED, "merge on the CPU returned %d", (int)s);
    NZT_CHECK(strstr(nz_context_last_error(ctx), "merge") != NULL, "merge message: %s",
              nz_context_last_error(ctx));
    s = nz_spmm_plan_create(ctx, NULL, A, NZ_OP_N, 4, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0);
    NZT_CHECK(s == NZ_ERR_NULL_ARGUMENT, "NULL plan returned %d", (int)s);
    s = nz_spmm_plan_create(ctx, &plan, NULL, NZ_OP_N, 4, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0);
    NZT_CHECK(s == NZ_ERR_NULL_ARGUMENT, "NULL A returned %d", (int)s);

    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 4, NZ_COL_MAJOR, NZ_ALG_AUTO, 0));
    double *X = nzt_malloc(3000 * 4 * 8), *Y = nzt_malloc(3000 * 4 * 8);
    memset(X, 0, 3000 * 4 * 8);
    s = nz_spmm_execute(plan, 1.0, X, 2999, 0.0, Y, 3000);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "ldx 2999 < 3000 returned %d", (int)s);
    NZT_CHECK(strstr(nz_context_last_error(ctx), "ldX = 2999") != NULL, "ldx message: %s",
              nz_context_last_error(ctx));
    s = nz_spmm_execute(plan, 1.0, X, 3000, 0.0, Y, 10);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "ldy 10 returned %d", (int)s);
    s = nz_spmm_execute(plan, 1.0, NULL, 3000, 0.0, Y, 3000);
    NZT_CHECK(s == NZ_ERR_NULL_ARGUMENT, "NULL X returned %d", (int)s);
    s = nz_spmm_execute(plan, 1.0, X, 3000, 0.0, NULL, 3000);
    NZT_CHECK(s == NZ_ERR_NULL_ARGUMENT, "NULL Y returned %d", (int)s);
    s = nz_spmm_execute(plan, 1.0, X, INT64_MAX / 2, 0.0, Y, 3000);
    NZT_CHECK(s == NZ_ERR_OVERFLOW, "huge ldx returned %d", (int)s);
    NZT_OK(ctx, nz_spmm_execute(plan, 1.0, X, 3000, 0.0, Y, 3000));
    nz_spmm_plan_destroy(&plan);
    /* row-major: ld >= k */
    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 4, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0));
    s = nz_spmm_execute(plan, 1.0, X, 3, 0.0, Y, 4);
    NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "row-major ldx 3 < k returned %d", (int)s);
    /* an SpMV plan where an SpMM one belongs */
    nz_spmm_plan_destroy(&plan);
    NZT_CHECK(nz_spmm_execute(NULL, 1.0, X, 4, 0.0, Y, 4) == NZ_ERR_NULL_ARGUMENT, "NULL plan");
    nz_spmv_plan_t *spmv = NULL;
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &spmv, A, NZ_OP_N, NZ_ALG_AUTO, 0));
    NZT_CHECK(nz_spmm_execute((nz_spmm_plan_t *)(void *)spmv, 1.0, X, 4, 0.0, Y, 4) ==
                  NZ_ERR_INVALID_HANDLE,
              "an SpMV plan was accepted as an SpMM plan");
    nz_spmv_plan_destroy(&spmv);
    free(X);
    free(Y);
    test_ld_wrap(A);
    X = nzt_malloc(3000 * 4 * 8);
    Y = nzt_malloc(3000 * 4 * 8);
    /* a host matrix has no GPU algorithm */
    s = nz_spmm_plan_create(ctx, &plan, A, NZ_OP_N, 4, NZ_ROW_MAJOR, NZ_ALG_VECTOR, 0);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED, "vector on a host matrix returned %d", (int)s);
    free(X);
    free(Y);
    nz_matrix_destroy(&A);
}

/* Fail the k-th allocation of plan creation (SELL input with op T: a CSR copy and a transpose)
 * for every k: an out-of-memory status or success, nothing leaked; execute allocates nothing. */
static void test_alloc_failures(void) {
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 4, NZ_F64, nzt_seed)); /* 2000 x 1500, empty rows */
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_SELL, NULL));
    nz_alloc_stats_t s0, s1;
    nz_spmm_plan_t *plan = NULL;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, B, NZ_OP_T, 4, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0));
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
    int64_t count = s1.total_allocs - s0.total_allocs;
    NZT_CHECK(count >= 4, "only %lld allocations counted", (long long)count);
    double *X = nzt_malloc(2000 * 4 * 8), *Y = nzt_malloc(1500 * 4 * 8);
    memset(X, 0, 2000 * 4 * 8);
    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 1));
    NZT_CHECK(nz_spmm_execute(plan, 1.0, X, 4, 0.0, Y, 4) == NZ_SUCCESS,
              "execute with injection armed: %s", nz_context_last_error(ctx));
    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
    nz_spmm_plan_destroy(&plan);
    for (int64_t k = 1; k <= count; k++) {
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t s = nz_spmm_plan_create(ctx, &plan, B, NZ_OP_T, 4, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY && plan == NULL,
                  "failing allocation %lld gave %d (%s)", (long long)k, (int)s,
                  nz_context_last_error(ctx));
        NZT_CHECK(strlen(nz_context_last_error(ctx)) > 0, "failure %lld without a message",
                  (long long)k);
        nz_spmm_plan_destroy(&plan);
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
        NZT_CHECK(s1.live_blocks == s0.live_blocks && s1.live_bytes == s0.live_bytes,
                  "failing allocation %lld leaked %lld blocks", (long long)k,
                  (long long)(s1.live_blocks - s0.live_blocks));
    }
    free(X);
    free(Y);
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    NZT_OK(ctx, nz_context_create(&ctx));
    test_hand();
    test_errors();
    test_alloc_failures();
    test_formats_and_mixed();
    printf("zoo:\n");
    test_zoo();
    printf("%lld SpMM products checked\n", (long long)products);
    nz_alloc_stats_t st;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &st));
    NZT_CHECK(st.live_blocks == 0, "%lld blocks leaked", (long long)st.live_blocks);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spmm");
}
