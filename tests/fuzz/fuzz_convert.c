/* fuzz_convert.c: libFuzzer target: format conversion, transpose, stats and CPU SpMV on arbitrary small matrices. */
#include "nonzero.h"
#include "fuzz_common.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Input layout: byte 0 value type / option bits, byte 1 rows, byte 2 cols, bytes 3..6 format
 * options (SELL chunk and sigma, BSR block, HYB width), then triplets of (row byte, column byte,
 * value byte). The matrix is built through nz_matrix_create_coo (duplicates summed), converted to
 * every format, converted back, and multiplied with every CPU (format, algorithm) pair. Checks:
 * a refused conversion leaves the output NULL; an accepted one round-trips to the same matrix
 * (BSR and DIA: up to entries that are exactly zero); every SpMV agrees with a double reference
 * computed here from the triplets; nothing leaks through the context allocator. */

typedef struct {
    int64_t rows, cols, nnz;
    const int64_t *ro;
    const int32_t *ci;
    const void *v;
    nz_value_type_t vt;
} view_t;

static void view_of(nz_context_t *ctx, const nz_matrix_t *A, view_t *w) {
    nz_matrix_info_t info;
    if (nz_matrix_info(ctx, &info, A) != NZ_SUCCESS || nz_matrix_csr_arrays(ctx, &w->ro, &w->ci,
                                                                            &w->v, A) != NZ_SUCCESS)
        abort();
    w->rows = info.rows;
    w->cols = info.cols;
    w->nnz = info.nnz;
    w->vt = info.value_type;
}

static double val(const view_t *w, int64_t k) {
    return w->vt == NZ_F32 ? (double)((const float *)w->v)[k] : ((const double *)w->v)[k];
}

/* Same matrix; with drop_zeros, entries of A that are exactly zero may be missing from B. */
static void same_matrix(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B,
                        int drop_zeros) {
    view_t a, b;
    view_of(ctx, A, &a);
    view_of(ctx, B, &b);
    if (a.rows != b.rows || a.cols != b.cols) abort();
    for (int64_t i = 0; i < a.rows; i++) {
        int64_t kb = b.ro[i];
        for (int64_t ka = a.ro[i]; ka < a.ro[i + 1]; ka++) {
            if (kb < b.ro[i + 1] && b.ci[kb] == a.ci[ka]) {
                double x = val(&a, ka), y = val(&b, kb);
                if (!(x == y || (isnan(x) && isnan(y)))) abort();
                kb++;
            } else if (!(drop_zeros && val(&a, ka) == 0.0)) {
                abort();
            }
        }
        if (kb != b.ro[i + 1]) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 7 || size > 4096) return 0;
    nz_context_t *ctx = NULL;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 0;
    nz_value_type_t vt = (data[0] & 1) ? NZ_F32 : NZ_F64;
    int64_t rows = data[1] % 48, cols = data[2] % 48;
    nz_format_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.sell_chunk = (data[3] & 0x80) ? 4 << (data[3] % 4) : 0;
    /* sigma must be 1 or a multiple of the chunk height; an odd value tests the refusal */
    int chunk = opt.sell_chunk ? opt.sell_chunk : 32;
    opt.sell_sigma = (data[4] & 0x80) ? ((data[4] & 0x40) ? 1 + data[4] % 64 : chunk * (1 + data[4] % 8)) : 0;
    opt.bsr_block = (data[5] & 0x80) ? 1 + data[5] % 8 : 0;
    opt.hyb_ell_width = (data[6] & 0x80) ? data[6] % 16 : 0;
    opt.max_padding_ratio = (data[0] & 2) ? 1e9 : 0.0;
    size_t n = (size - 7) / 3;
    if (rows == 0 || cols == 0) n = 0;
    int32_t *ri = malloc(n * 4 + 4), *cj = malloc(n * 4 + 4);
    double *vd = malloc(n * 8 + 8);
    float *vf = malloc(n * 4 + 4);
    for (size_t k = 0; k < n; k++) {
        const uint8_t *t = data + 7 + 3 * k;
        ri[k] = (int32_t)(t[0] % rows);
        cj[k] = (int32_t)(t[1] % cols);
        /* small integers (exact sums in either type), exact zeros, and a rare Inf */
        vd[k] = t[2] == 255 ? INFINITY : (double)((int)t[2] % 9 - 4);
        vf[k] = (float)vd[k];
    }
    nz_matrix_t *A = NULL;
    if (nz_matrix_create_coo(ctx, &A, rows, cols, (int64_t)n, ri, cj, vt,
                             vt == NZ_F32 ? (const void *)vf : (const void *)vd) != NZ_SUCCESS)
        abort();
    view_t a;
    view_of(ctx, A, &a);
    double *x = malloc((size_t)(rows + cols + 1) * 8), *ref = malloc((size_t)(rows + cols + 1) * 8);
    void *xv = malloc((size_t)(rows + cols + 1) * 8), *yv = malloc((size_t)(rows + cols + 1) * 8);
    for (int64_t j = 0; j < rows + cols + 1; j++) x[j] = (double)(j % 5) - 2.0;
    for (int64_t j = 0; j < rows + cols + 1; j++) {
        if (vt == NZ_F32) ((float *)xv)[j] = (float)x[j];
        else ((double *)xv)[j] = x[j];
    }

    for (int f = 0; f < NZ_FORMAT_COUNT; f++) {
        nz_matrix_t *B = NULL, *C = NULL;
        nz_status_t s = nz_matrix_convert(ctx, &B, A, (nz_format_t)f, &opt);
        if (s != NZ_SUCCESS) {
            if (B != NULL || nz_context_last_error(ctx)[0] == '\0') abort();
            if (s != NZ_ERR_TOO_MUCH_PADDING && s != NZ_ERR_INVALID_ARGUMENT) abort();
            continue;
        }
        if (nz_matrix_convert(ctx, &C, B, NZ_FORMAT_CSR, NULL) != NZ_SUCCESS) abort();
        same_matrix(ctx, A, C, f == NZ_FORMAT_BSR || f == NZ_FORMAT_DIA);
        nz_matrix_destroy(&C);
        if (nz_matrix_transpose(ctx, &C, B) != NZ_SUCCESS) abort();
        nz_matrix_destroy(&C);
        nz_matrix_stats_t st;
        if (nz_matrix_stats(ctx, &st, B) != NZ_SUCCESS) abort();
        /* every CPU algorithm for this format, both operations */
        for (int idx = 0;; idx++) {
            nz_format_t lf;
            nz_alg_t alg;
            if (nz_spmv_list(&lf, &alg, NZ_BACKEND_CPU, idx) != NZ_SUCCESS) break;
            if ((int)lf != f) continue;
            for (int op = 0; op < 2; op++) {
                int64_t out_len = op ? cols : rows;
                for (int64_t i = 0; i < out_len; i++) ref[i] = 0.0;
                for (int64_t i = 0; i < rows; i++)
                    for (int64_t k = a.ro[i]; k < a.ro[i + 1]; k++) {
                        double prod = val(&a, k) * x[op ? i : a.ci[k]];
                        if (op) ref[a.ci[k]] += prod;
                        else ref[i] += prod;
                    }
                nz_spmv_plan_t *P = NULL;
                s = nz_spmv_plan_create(ctx, &P, B, (nz_operation_t)op, alg, 0);
                if (s == NZ_ERR_UNSUPPORTED) {
                    if (P != NULL) abort();
                    continue;
                }
                if (s != NZ_SUCCESS) abort();
                if (nz_spmv_execute(P, 1.0, xv, 0.0, yv) != NZ_SUCCESS) abort();
                for (int64_t i = 0; i < out_len; i++) {
                    double y = vt == NZ_F32 ? (double)((float *)yv)[i] : ((double *)yv)[i];
                    /* values are small integers, so sums are exact in both types; BSR/DIA
                     * multiply their zero fill, which turns an Inf in x's row into NaN */
                    if (isnan(ref[i]) || isinf(ref[i])) continue;
                    if (y != ref[i] && !((f == NZ_FORMAT_BSR || f == NZ_FORMAT_DIA) && isnan(y)))
                        abort();
                }
                nz_spmv_plan_destroy(&P);
            }
        }
        nz_matrix_destroy(&B);
    }
    nz_matrix_t *T = NULL, *TT = NULL;
    if (nz_matrix_transpose(ctx, &T, A) != NZ_SUCCESS || nz_matrix_transpose(ctx, &TT, T) != NZ_SUCCESS)
        abort();
    same_matrix(ctx, A, TT, 0);
    nz_matrix_destroy(&T);
    nz_matrix_destroy(&TT);
    nz_matrix_t *V = NULL;
    if (nz_matrix_convert_values(ctx, &V, A, vt == NZ_F32 ? NZ_F64 : NZ_F32) != NZ_SUCCESS) abort();
    nz_matrix_destroy(&V);
    nz_matrix_destroy(&A);
    free(ri);
    free(cj);
    free(vd);
    free(vf);
    free(x);
    free(ref);
    free(xv);
    free(yv);
    return fuzz_finish(ctx);
}
