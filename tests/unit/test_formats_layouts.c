/* test_formats_layouts.c: format layouts checked entry by entry by hand, option validation, value conversion, transpose, matrix statistics. */
#include "testutil.h"
#include "nzi.h"

#include <math.h>
#include <string.h>

/* The Uppsala report's 4 x 4 example:
 *   [0 3 1 0; 4 0 0 7; 0 0 6 0; 9 0 5 3]  */
static nz_matrix_t *example4(nz_context_t *ctx, nz_value_type_t vt) {
    int32_t ro[] = {0, 2, 4, 5, 8};
    int32_t ci[] = {1, 2, 0, 3, 2, 0, 2, 3};
    double v[] = {3, 1, 4, 7, 6, 9, 5, 3};
    float vf[8];
    for (int i = 0; i < 8; i++) vf[i] = (float)v[i];
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 4, 4, NZ_I32, ro, ci, vt,
                                     vt == NZ_F32 ? (void *)vf : (void *)v));
    return A;
}

/* Layouts checked entry by entry against hand-made arrays. */
static void test_layouts_by_hand(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_matrix_t *A = example4(ctx, NZ_F64), *B = NULL;
    nz_format_options_t o;
    memset(&o, 0, sizeof o);

    /* SELL-2-1: chunk 0 = rows 0, 1 (width 2), chunk 1 = rows 2, 3 (width 3) */
    o.sell_chunk = 2;
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_SELL, &o));
    {
        const nzi_sell_t *s = &B->host.sell;
        int64_t want_off[] = {0, 4, 10};
        int32_t want_w[] = {2, 3};
        int32_t want_c[] = {1, 0, 2, 3, 2, 0, -1, 2, -1, 3};
        double want_v[] = {3, 4, 1, 7, 6, 9, 0, 5, 0, 3};
        NZT_CHECK(s->num_chunks == 2 && memcmp(s->chunk_offsets, want_off, sizeof want_off) == 0 &&
                      memcmp(s->chunk_widths, want_w, sizeof want_w) == 0,
                  "SELL-2-1 chunk offsets / widths");
        NZT_CHECK(memcmp(s->col_indices, want_c, sizeof want_c) == 0 &&
                      memcmp(s->values, want_v, sizeof want_v) == 0,
                  "SELL-2-1 columns / values");
    }
    nz_matrix_destroy(&B);

    /* SELL-2-4: the window of 4 rows sorted by length: rows 3 (3), 0 (2), 1 (2), 2 (1) */
    o.sell_sigma = 4;
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_SELL, &o));
    {
        const nzi_sell_t *s = &B->host.sell;
        int32_t want_rows[] = {3, 0, 1, 2};
        int32_t want_w[] = {3, 2};
        NZT_CHECK(memcmp(s->row_of_slot, want_rows, sizeof want_rows) == 0 &&
                      memcmp(s->chunk_widths, want_w, sizeof want_w) == 0 &&
                      s->chunk_offsets[2] == 10,
                  "SELL-2-4 permutation %d %d %d %d", s->row_of_slot[0], s->row_of_slot[1],
                  s->row_of_slot[2], s->row_of_slot[3]);
    }
    nz_matrix_destroy(&B);

    /* ELL: width 3, column-major */
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_ELL, NULL));
    {
        int32_t want_c[] = {1, 0, 2, 0, 2, 3, -1, 2, -1, -1, -1, 3};
        double want_v[] = {3, 4, 6, 9, 1, 7, 0, 5, 0, 0, 0, 3};
        NZT_CHECK(B->host.ell.width == 3 && memcmp(B->host.ell.col_indices, want_c,
                                                   sizeof want_c) == 0 &&
                      memcmp(B->host.ell.values, want_v, sizeof want_v) == 0,
                  "ELL layout");
    }
    nz_matrix_destroy(&B);

    /* HYB width 1: ELL = first entry of each row, COO = the rest sorted by row */
    memset(&o, 0, sizeof o);
    o.hyb_ell_width = 1;
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_HYB, &o));
    {
        const nzi_hyb_t *h = &B->host.hyb;
        int32_t want_ec[] = {1, 0, 2, 0};
        int32_t want_r[] = {0, 1, 3, 3}, want_c[] = {2, 3, 2, 3};
        double want_v[] = {1, 7, 5, 3};
        NZT_CHECK(h->ell.width == 1 && h->coo_nnz == 4 &&
                      memcmp(h->ell.col_indices, want_ec, sizeof want_ec) == 0 &&
                      memcmp(h->coo.row_indices, want_r, sizeof want_r) == 0 &&
                      memcmp(h->coo.col_indices, want_c, sizeof want_c) == 0 &&
                      memcmp(h->coo.values, want_v, sizeof want_v) == 0,
                  "HYB layout");
    }
    nz_matrix_destroy(&B);
    /* HYB automatic width on a small matrix: under 4096 rows everything goes to COO */
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_HYB, NULL));
    NZT_CHECK(B->host.hyb.ell.width == 0 && B->host.hyb.coo_nnz == 8, "HYB auto width %lld",
              (long long)B->host.hyb.ell.width);
    nz_matrix_destroy(&B);

    /* BSR b = 3 on the 4 x 4: block rows {0..2}, {3 (+2 padding rows)} */
    memset(&o, 0, sizeof o);
    o.bsr_block = 3;
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_BSR, &o));
    {
        const nzi_bsr_t *b = &B->host.bsr;
        int64_t want_off[] = {0, 2, 4};
        int32_t want_bc[] = {0, 1, 0, 1};
        double want_v[36] = {0, 3, 1, 4, 0, 0, 0, 0, 6, /* block (0,0) */
                             0, 0, 0, 7, 0, 0, 0, 0, 0, /* block (0,1) */
                             9, 0, 5, 0, 0, 0, 0, 0, 0, /* block (1,0) */
                             3, 0, 0, 0, 0, 0, 0, 0, 0};/* block (1,1) */
        NZT_CHECK(b->block == 3 && b->block_rows == 2 && b->block_cols == 2 &&
                      b->num_blocks == 4 &&
                      memcmp(b->block_row_offsets, want_off, sizeof want_off) == 0 &&
                      memcmp(b->block_col_indices, want_bc, sizeof want_bc) == 0 &&
                      memcmp(b->values, want_v, sizeof want_v) == 0,
                  "BSR layout");
    }
    nz_matrix_destroy(&B);

    /* DIA: offsets -3 -1 0 1 2, diagonal-major */
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_DIA, NULL));
    {
        const nzi_dia_t *d = &B->host.dia;
        int64_t want_off[] = {-3, -1, 0, 1, 2};
        double want_v[20] = {0, 0, 0, 9,  /* -3: (3,0) */
                             0, 4, 0, 5,  /* -1: (1,0) (3,2) */
                             0, 0, 6, 3,  /*  0 */
                             3, 0, 0, 0,  /* +1: (0,1) */
                             1, 7, 0, 0}; /* +2: (0,2) (1,3) */
        NZT_CHECK(d->num_diagonals == 5 && memcmp(d->offsets, want_off, sizeof want_off) == 0 &&
                      memcmp(d->values, want_v, sizeof want_v) == 0,
                  "DIA layout");
    }
    nz_matrix_destroy(&B);

    /* CSC: column offsets and row indices */
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_CSC, NULL));
    {
        int64_t want_off[] = {0, 2, 3, 6, 8};
        int32_t want_r[] = {1, 3, 0, 0, 2, 3, 1, 3};
        double want_v[] = {4, 9, 3, 1, 6, 5, 7, 3};
        NZT_CHECK(memcmp(B->host.csr.row_offsets, want_off, sizeof want_off) == 0 &&
                      memcmp(B->host.csr.col_indices, want_r, sizeof want_r) == 0 &&
                      memcmp(B->host.csr.values, want_v, sizeof want_v) == 0,
                  "CSC layout");
    }
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

static void test_option_validation(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_matrix_t *A = example4(ctx, NZ_F32), *B = NULL;
    struct {
        int chunk, sigma, block;
        int64_t width;
        double ratio;
        const char *needle;
    } bad[] = {
        {-1, 0, 0, 0, 0, "sell_chunk"}, {2000, 0, 0, 0, 0, "sell_chunk"},
        {8, 12, 0, 0, 0, "sell_sigma"}, {0, 16, 0, 0, 0, "sell_sigma"},
        {0, -4, 0, 0, 0, "sell_sigma"}, {0, 0, 33, 0, 0, "bsr_block"},
        {0, 0, -2, 0, 0, "bsr_block"},  {0, 0, 0, -1, 0, "hyb_ell_width"},
        {0, 0, 0, 0, -1.0, "max_padding_ratio"}, {0, 0, 0, 0, NAN, "max_padding_ratio"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nz_format_options_t o = {bad[i].chunk, bad[i].sigma, bad[i].block, bad[i].width,
                                 bad[i].ratio};
        nz_status_t st = nz_matrix_convert(ctx, &B, A, NZ_FORMAT_SELL, &o);
        NZT_CHECK(st == NZ_ERR_INVALID_ARGUMENT && B == NULL &&
                      strstr(nz_context_last_error(ctx), bad[i].needle) != NULL,
                  "bad option %zu: status %d, message %s", i, st, nz_context_last_error(ctx));
    }
    /* sigma = 32 with C = 8 is fine; sigma larger than the matrix is fine */
    nz_format_options_t ok = {8, 32, 0, 0, 0};
    NZT_CHECK(nz_matrix_convert(ctx, &B, A, NZ_FORMAT_SELL, &ok) == NZ_SUCCESS, "sigma 32 C 8");
    nz_matrix_destroy(&B);
    NZT_CHECK(nz_matrix_convert(ctx, &B, A, (nz_format_t)99, NULL) == NZ_ERR_INVALID_ARGUMENT,
              "bad format");
    NZT_CHECK(nz_matrix_convert(ctx, NULL, A, NZ_FORMAT_ELL, NULL) == NZ_ERR_NULL_ARGUMENT,
              "NULL output");
    NZT_CHECK(nz_matrix_convert(ctx, &B, NULL, NZ_FORMAT_ELL, NULL) == NZ_ERR_NULL_ARGUMENT,
              "NULL input");
    uint64_t fake[64] = {0};
    NZT_CHECK(nz_matrix_convert(ctx, &B, (nz_matrix_t *)fake, NZ_FORMAT_ELL, NULL) ==
                  NZ_ERR_INVALID_HANDLE, "foreign handle");
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

/* nz_matrix_convert_values in every format: f64 -> f32 rounds each value; f32 -> f64 exact. */
static void test_convert_values(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 4, NZ_F64, nzt_seed));
    nz_matrix_t *A32 = NULL;
    NZT_OK(ctx, nz_matrix_convert_values(ctx, &A32, A, NZ_F32));
    const int64_t *ro;
    const int32_t *ci;
    const void *v64, *v32;
    nz_matrix_csr_arrays(ctx, &ro, &ci, &v64, A);
    nz_matrix_csr_arrays(ctx, NULL, NULL, &v32, A32);
    int bad = 0;
    for (int64_t k = 0; k < ro[A->rows]; k++)
        bad += ((const float *)v32)[k] != (float)((const double *)v64)[k];
    NZT_CHECK(bad == 0, "f64 -> f32 values: %d wrong", bad);
    for (int f = 0; f < NZ_FORMAT_COUNT; f++) {
        nz_matrix_t *B = NULL, *B32 = NULL, *C = NULL;
        nz_format_options_t o;
        memset(&o, 0, sizeof o);
        o.max_padding_ratio = 1e9;
        NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, (nz_format_t)f, &o));
        NZT_OK(ctx, nz_matrix_convert_values(ctx, &B32, B, NZ_F32));
        nz_matrix_info_t info;
        nz_matrix_info(ctx, &info, B32);
        NZT_CHECK((int)info.format == f && info.value_type == NZ_F32, "convert_values keeps format");
        NZT_OK(ctx, nz_matrix_convert(ctx, &C, B32, NZ_FORMAT_CSR, NULL));
        NZT_CHECK(nzt_csr_identical(ctx, A32, C, 1), "%s: convert_values",
                  nz_format_name((nz_format_t)f));
        nz_matrix_destroy(&B);
        nz_matrix_destroy(&B32);
        nz_matrix_destroy(&C);
    }
    NZT_CHECK(nz_matrix_convert_values(ctx, &A32, A, (nz_value_type_t)3) ==
                  NZ_ERR_INVALID_ARGUMENT, "bad value type");
    nz_matrix_destroy(&A32);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

/* nz_matrix_transpose: entries checked against A, A^T^T == A, and any input format. */
static void test_transpose(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    for (int k = 0; k < nzt_zoo_count(); k++) {
        nz_matrix_t *A = NULL, *T = NULL, *TT = NULL;
        NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, NZ_F64, nzt_seed));
        NZT_OK(ctx, nz_matrix_transpose(ctx, &T, A));
        nz_matrix_info_t a, t;
        nz_matrix_info(ctx, &a, A);
        nz_matrix_info(ctx, &t, T);
        NZT_CHECK(t.rows == a.cols && t.cols == a.rows && t.nnz == a.nnz &&
                      t.format == NZ_FORMAT_CSR, "%s: transpose shape", nzt_zoo_name(k));
        /* every entry (i, j, v) of A appears as (j, i, v) in T */
        const int64_t *ra, *rt;
        const int32_t *ca, *ct;
        const void *va, *vt;
        nz_matrix_csr_arrays(ctx, &ra, &ca, &va, A);
        nz_matrix_csr_arrays(ctx, &rt, &ct, &vt, T);
        int64_t missing = 0;
        for (int64_t i = 0; i < a.rows; i++)
            for (int64_t k2 = ra[i]; k2 < ra[i + 1]; k2++) {
                int64_t j = ca[k2], lo = rt[j], hi = rt[j + 1];
                while (lo < hi) { /* rows of T are sorted: binary search for column i */
                    int64_t mid = lo + (hi - lo) / 2;
                    if (ct[mid] < i)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                missing += !(lo < rt[j + 1] && ct[lo] == i &&
                             ((const double *)vt)[lo] == ((const double *)va)[k2]);
            }
        NZT_CHECK(missing == 0, "%s: %lld entries missing from A^T", nzt_zoo_name(k),
                  (long long)missing);
        NZT_OK(ctx, nz_matrix_transpose(ctx, &TT, T));
        NZT_CHECK(nzt_csr_identical(ctx, A, TT, 1), "%s: A^T^T != A", nzt_zoo_name(k));
        nz_matrix_destroy(&TT);
        /* from CSC, COO and HYB inputs */
        nz_format_t inputs[] = {NZ_FORMAT_CSC, NZ_FORMAT_COO, NZ_FORMAT_HYB};
        for (int f = 0; f < 3; f++) {
            nz_matrix_t *B = NULL, *BT = NULL;
            NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, inputs[f], NULL));
            NZT_OK(ctx, nz_matrix_transpose(ctx, &BT, B));
            NZT_CHECK(nzt_csr_identical(ctx, T, BT, 1), "%s: transpose from %s", nzt_zoo_name(k),
                      nz_format_name(inputs[f]));
            nz_matrix_destroy(&B);
            nz_matrix_destroy(&BT);
        }
        nz_matrix_destroy(&T);
        nz_matrix_destroy(&A);
    }
    nz_context_destroy(&ctx);
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 * (1 + fabs(b)); }

/* nz_matrix_stats on small matrices with hand-computed answers. */
static void test_stats(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    nz_matrix_t *A = example4(ctx, NZ_F64);
    nz_matrix_stats_t s;
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
    /* row lengths 2 2 1 3; j - i over the entries: 1 2 -1 2 0 -3 -1 0 */
    NZT_CHECK(s.rows == 4 && s.cols == 4 && s.nnz == 8 && s.row_min == 1 && s.row_max == 3 &&
                  close_to(s.row_mean, 2.0) && close_to(s.row_std, sqrt(0.5)) &&
                  s.empty_rows == 0,
              "row stats %lld %lld %g %g", (long long)s.row_min, (long long)s.row_max,
              s.row_mean, s.row_std);
    NZT_CHECK(s.lower_bandwidth == 3 && s.upper_bandwidth == 2 && s.num_diagonals == 5 &&
                  s.symmetric == 0,
              "structure %lld %lld %lld %d", (long long)s.lower_bandwidth,
              (long long)s.upper_bandwidth, (long long)s.num_diagonals, s.symmetric);
    /* bytes (f64): CSR 5*8 + 8*12; CSC the same; COO 8*16; ELL 4*3*12; SELL-32: one chunk of
     * width 3: 32*3*12 + 12 + 8 + 32*4 = 1300 > 3 x 136, refused; HYB: all COO; BSR-4: one
     * block: 2*8 + 4 + 16*8; DIA: 5 diagonals: 5*8 + 20*8. */
    size_t want[NZ_FORMAT_COUNT] = {136, 136, 128, 144, 0, 128, 148, 200};
    for (int f = 0; f < NZ_FORMAT_COUNT; f++)
        NZT_CHECK(s.bytes[f] == want[f], "bytes[%s] = %zu, want %zu",
                  nz_format_name((nz_format_t)f), s.bytes[f], want[f]);
    /* the same stats from another format */
    nz_matrix_t *B = NULL;
    nz_matrix_stats_t sb;
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_DIA, NULL));
    NZT_OK(ctx, nz_matrix_stats(ctx, &sb, B));
    NZT_CHECK(memcmp(&s, &sb, sizeof s) == 0, "stats from DIA differ");
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&A);

    /* symmetric 3 x 3 with an empty row; then unsymmetric values; then rectangular */
    int32_t ro[] = {0, 2, 2, 4};
    int32_t ci[] = {0, 2, 0, 2};
    double v[] = {1, 5, 5, 2};
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 3, 3, NZ_I32, ro, ci, NZ_F64, v));
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
    NZT_CHECK(s.symmetric == 1 && s.empty_rows == 1 && s.row_min == 0 && s.row_max == 2 &&
                  s.lower_bandwidth == 2 && s.upper_bandwidth == 2 && s.num_diagonals == 3,
              "symmetric case: %d %lld", s.symmetric, (long long)s.empty_rows);
    nz_matrix_destroy(&A);
    v[2] = 4;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 3, 3, NZ_I32, ro, ci, NZ_F64, v));
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
    NZT_CHECK(s.symmetric == 0, "values differ: not symmetric");
    nz_matrix_destroy(&A);
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 3, 4, NZ_I32, ro, ci, NZ_F64, v));
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
    NZT_CHECK(s.symmetric == -1 && s.bytes[NZ_FORMAT_CSC] == 5 * 8 + 4 * 12, "rectangular");
    nz_matrix_destroy(&A);
    /* strictly upper triangular: lower bandwidth clamps at 0 */
    int32_t ro2[] = {0, 1, 1};
    int32_t ci2[] = {1};
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 2, 2, NZ_I32, ro2, ci2, NZ_F32, NULL));
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
    NZT_CHECK(s.lower_bandwidth == 0 && s.upper_bandwidth == 1 && s.num_diagonals == 1 &&
                  s.empty_rows == 1 && close_to(s.row_std, 0.5),
              "upper triangular: %lld %lld", (long long)s.lower_bandwidth,
              (long long)s.upper_bandwidth);
    nz_matrix_destroy(&A);
    /* 0 x 0 */
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 0, 0, NZ_I32, ro, ci, NZ_F64, v));
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
    NZT_CHECK(s.rows == 0 && s.nnz == 0 && s.row_min == 0 && s.row_mean == 0 && s.symmetric == 1,
              "0 x 0 stats");
    NZT_CHECK(nz_matrix_stats(ctx, NULL, A) == NZ_ERR_NULL_ARGUMENT, "NULL stats");
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_layouts_by_hand();
    test_option_validation();
    test_stats();
    test_convert_values();
    test_transpose();
    return nzt_finish("test_formats_layouts");
}
