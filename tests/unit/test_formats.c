/* test_formats.c: format conversions: round trips of every format and option variant on the zoo, stored zeros, padding refusal. */
#include "testutil.h"
#include "nzi.h"

#include <math.h>
#include <string.h>

/* Stored entries above which a refused conversion is not retried with a huge padding limit. */
#define MAX_RETRY_STORED 4000000.0

static int skipped_conversions = 0;

/* Upper bound on the entries a conversion stores, from the stats (to keep retries cheap). */
static double stored_bound(const nz_matrix_stats_t *s, nz_format_t f,
                           const nz_format_options_t *o) {
    double rows = (double)s->rows, nnz = (double)s->nnz, rmax = (double)s->row_max;
    switch (f) {
    case NZ_FORMAT_ELL: return rows * rmax;
    case NZ_FORMAT_SELL: {
        double C = o->sell_chunk ? o->sell_chunk : 32;
        return ceil(rows / C) * C * rmax;
    }
    case NZ_FORMAT_HYB: return rows * (o->hyb_ell_width ? (double)o->hyb_ell_width : rmax) + nnz;
    case NZ_FORMAT_BSR: {
        double b = o->bsr_block ? o->bsr_block : 4;
        double blocks = ceil(rows / b) * ceil((double)s->cols / b);
        return (nnz < blocks ? nnz : blocks) * b * b;
    }
    case NZ_FORMAT_DIA: return (double)s->num_diagonals * rows;
    default: return nnz;
    }
}

/* Convert with the given options; when refused for padding, check the message and retry with
 * no practical limit if that stays small. Returns NZ_SUCCESS with *B, or the refusal. */
static nz_status_t convert_retry(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                                 const nz_matrix_stats_t *s, nz_format_t f,
                                 nz_format_options_t o, const char *what) {
    nz_status_t st = nz_matrix_convert(ctx, B, A, f, &o);
    if (st != NZ_ERR_TOO_MUCH_PADDING) return st;
    const char *msg = nz_context_last_error(ctx);
    NZT_CHECK(strstr(msg, "bytes") != NULL && strstr(msg, "CSR") != NULL &&
                  strstr(msg, nz_format_name(f)) != NULL,
              "%s: refusal message gives the sizes: %s", what, msg);
    if (stored_bound(s, f, &o) > MAX_RETRY_STORED) {
        skipped_conversions++;
        return st;
    }
    o.max_padding_ratio = 1e9;
    return nz_matrix_convert(ctx, B, A, f, &o);
}

/* SELL sanity: row_of_slot is a permutation of the rows (then -1), and with sigma > 1 the
 * rows of each sigma window are ordered by length, longest first. */
static void check_sell_order(const nz_matrix_t *B, const nz_matrix_stats_t *s,
                             const nz_matrix_t *A, const char *what) {
    const nzi_sell_t *sell = &B->host.sell;
    int64_t slots = sell->num_chunks * sell->chunk, rows = B->rows;
    char *seen = calloc((size_t)rows + 1, 1);
    int ok = 1;
    for (int64_t p = 0; p < slots; p++) {
        int32_t r = sell->row_of_slot[p];
        if (p >= rows) {
            ok &= r == -1;
        } else {
            ok &= r >= 0 && r < rows && !seen[r];
            if (r >= 0 && r < rows) seen[r] = 1;
        }
    }
    NZT_CHECK(ok, "%s: row_of_slot is not a permutation", what);
    const int64_t *ro = A->host.csr.row_offsets;
    for (int64_t p = 1; ok && p < rows; p++) {
        if (p % sell->sigma == 0) continue;
        int32_t r0 = sell->row_of_slot[p - 1], r1 = sell->row_of_slot[p];
        if (sell->sigma == 1) {
            NZT_CHECK(r1 == r0 + 1, "%s: sigma 1 must keep the order", what);
        } else {
            NZT_CHECK(ro[r0 + 1] - ro[r0] >= ro[r1 + 1] - ro[r1], "%s: window not sorted at %lld",
                      what, (long long)p);
        }
    }
    (void)s;
    free(seen);
}

typedef struct variant {
    nz_format_t format;
    nz_format_options_t options;
    const char *label;
} variant_t;

static int make_variants(variant_t *v) {
    int n = 0;
    nz_format_options_t zero;
    memset(&zero, 0, sizeof zero);
    nz_format_t plain[] = {NZ_FORMAT_CSR, NZ_FORMAT_CSC, NZ_FORMAT_COO, NZ_FORMAT_ELL,
                           NZ_FORMAT_SELL, NZ_FORMAT_HYB, NZ_FORMAT_BSR, NZ_FORMAT_DIA};
    for (int i = 0; i < 8; i++) v[n++] = (variant_t){plain[i], zero, "defaults"};
    static const int chunks[] = {4, 8, 32};
    static const char *labels[] = {"C=4 sigma=1", "C=4 sigma=16", "C=8 sigma=1", "C=8 sigma=32",
                                   "C=32 sigma=1", "C=32 sigma=128"};
    for (int c = 0; c < 3; c++)
        for (int s = 0; s < 2; s++) {
            variant_t x = {NZ_FORMAT_SELL, zero, labels[2 * c + s]};
            x.options.sell_chunk = chunks[c];
            x.options.sell_sigma = s == 0 ? 1 : 4 * chunks[c];
            v[n++] = x;
        }
    static const int blocks[] = {2, 3, 8};
    static const char *blabels[] = {"b=2", "b=3", "b=8"};
    for (int b = 0; b < 3; b++) {
        variant_t x = {NZ_FORMAT_BSR, zero, blabels[b]};
        x.options.bsr_block = blocks[b];
        v[n++] = x;
    }
    static const int widths[] = {1, 5};
    static const char *wlabels[] = {"ell width 1", "ell width 5"};
    for (int w = 0; w < 2; w++) {
        variant_t x = {NZ_FORMAT_HYB, zero, wlabels[w]};
        x.options.hyb_ell_width = widths[w];
        v[n++] = x;
    }
    return n;
}

/* Every format and option variant (f64; defaults only in f32) on every zoo matrix: convert,
 * check the info, convert back to CSR and compare exactly (the zoo has no stored zeros, so BSR
 * and DIA are exact too). With default options, the stats' byte estimate must match the conversion. */
static void test_round_trips(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    variant_t variants[32];
    int nv = make_variants(variants);
    for (int t = 0; t < 2; t++) {
        nz_value_type_t vt = t == 0 ? NZ_F64 : NZ_F32;
        for (int k = 0; k < nzt_zoo_count(); k++) {
            nz_matrix_t *A = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, vt, nzt_seed));
            nz_matrix_stats_t s;
            NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
            for (int v = 0; v < (vt == NZ_F64 ? nv : NZ_FORMAT_COUNT); v++) {
                char what[160];
                snprintf(what, sizeof what, "%s %s %s (%s)", nzt_zoo_name(k),
                         nz_format_name(variants[v].format), variants[v].label,
                         vt == NZ_F32 ? "f32" : "f64");
                nz_matrix_t *B = NULL, *C = NULL;
                nz_format_t f = variants[v].format;
                int defaults = strcmp(variants[v].label, "defaults") == 0;
                nz_status_t st = convert_retry(ctx, &B, A, &s, f, variants[v].options, what);
                if (defaults) {
                    nz_format_options_t o = variants[v].options;
                    nz_matrix_t *D = NULL;
                    nz_status_t sd = nz_matrix_convert(ctx, &D, A, f, &o);
                    NZT_CHECK(sd == NZ_SUCCESS || (sd == NZ_ERR_TOO_MUCH_PADDING &&
                                                   s.bytes[f] == 0),
                              "%s: stats bytes %zu vs convert status %d", what, s.bytes[f], sd);
                    if (sd == NZ_SUCCESS) {
                        nz_matrix_info_t di;
                        nz_matrix_info(ctx, &di, D);
                        NZT_CHECK(di.bytes == s.bytes[f], "%s: info bytes %zu, stats %zu", what,
                                  di.bytes, s.bytes[f]);
                    }
                    nz_matrix_destroy(&D);
                }
                if (st == NZ_ERR_TOO_MUCH_PADDING) continue;
                NZT_CHECK(st == NZ_SUCCESS, "%s: convert status %d: %s", what, st,
                          nz_context_last_error(ctx));
                if (st != NZ_SUCCESS) continue;
                nz_matrix_info_t info;
                NZT_OK(ctx, nz_matrix_info(ctx, &info, B));
                NZT_CHECK(info.format == f && info.rows == s.rows && info.cols == s.cols &&
                              info.nnz == s.nnz && info.value_type == vt && info.stored >= s.nnz,
                          "%s: info format %d %lldx%lld nnz %lld stored %lld", what,
                          info.format, (long long)info.rows, (long long)info.cols,
                          (long long)info.nnz, (long long)info.stored);
                if (f == NZ_FORMAT_SELL) {
                    int want_c = variants[v].options.sell_chunk ? variants[v].options.sell_chunk : 32;
                    int want_s = variants[v].options.sell_sigma ? variants[v].options.sell_sigma : 1;
                    NZT_CHECK(info.sell_chunk == want_c && info.sell_sigma == want_s,
                              "%s: sell parameters %d %d", what, info.sell_chunk, info.sell_sigma);
                    check_sell_order(B, &s, A, what);
                }
                if (f == NZ_FORMAT_BSR)
                    NZT_CHECK(info.bsr_block == (variants[v].options.bsr_block
                                                     ? variants[v].options.bsr_block : 4),
                              "%s: block %d", what, info.bsr_block);
                if (f == NZ_FORMAT_HYB && variants[v].options.hyb_ell_width)
                    NZT_CHECK(info.ell_width == (variants[v].options.hyb_ell_width < s.row_max
                                                     ? variants[v].options.hyb_ell_width
                                                     : s.row_max),
                              "%s: hyb width %lld", what, (long long)info.ell_width);
                if (f == NZ_FORMAT_DIA)
                    NZT_CHECK(info.num_diagonals == s.num_diagonals, "%s: %lld diagonals, stats %lld",
                              what, (long long)info.num_diagonals, (long long)s.num_diagonals);
                if (f == NZ_FORMAT_ELL)
                    NZT_CHECK(info.ell_width == s.row_max, "%s: ell width", what);
                NZT_OK(ctx, nz_matrix_convert(ctx, &C, B, NZ_FORMAT_CSR, NULL));
                NZT_CHECK(nzt_csr_identical(ctx, A, C, 1), "%s: round trip changed the matrix",
                          what);
                nz_matrix_destroy(&C);
                /* any format to any format: from B into every other format and back */
                if (vt == NZ_F64 && defaults && s.nnz <= 40000) {
                    for (int g = 0; g < NZ_FORMAT_COUNT; g++) {
                        nz_matrix_t *G = NULL, *H = NULL;
                        nz_format_options_t o;
                        memset(&o, 0, sizeof o);
                        char what2[200];
                        snprintf(what2, sizeof what2, "%s -> %s", what,
                                 nz_format_name((nz_format_t)g));
                        if (convert_retry(ctx, &G, B, &s, (nz_format_t)g, o, what2) != NZ_SUCCESS)
                            continue;
                        NZT_OK(ctx, nz_matrix_convert(ctx, &H, G, NZ_FORMAT_CSR, NULL));
                        NZT_CHECK(nzt_csr_identical(ctx, A, H, 1), "%s: chained conversion differs",
                                  what2);
                        nz_matrix_destroy(&G);
                        nz_matrix_destroy(&H);
                    }
                }
                nz_matrix_destroy(&B);
            }
            nz_matrix_destroy(&A);
        }
    }
    nz_alloc_stats_t as;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &as));
    NZT_CHECK(as.live_blocks == 0, "%lld blocks leaked", (long long)as.live_blocks);
    nz_context_destroy(&ctx);
}

/* Stored zeros: the lossless formats keep them; BSR and DIA drop them on the way back (the
 * documented rule) but still count them in nnz. */
static void test_explicit_zeros(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    int32_t ro[] = {0, 2, 3, 4};
    int32_t ci[] = {0, 2, 1, 0};
    double v[] = {1, 0, 2, 3};
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 3, 3, NZ_I32, ro, ci, NZ_F64, v));
    nz_format_options_t o;
    memset(&o, 0, sizeof o);
    o.max_padding_ratio = 1e9;
    for (int f = 0; f < NZ_FORMAT_COUNT; f++) {
        nz_matrix_t *B = NULL, *C = NULL;
        NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, (nz_format_t)f, &o));
        nz_matrix_info_t info;
        nz_matrix_info(ctx, &info, B);
        NZT_CHECK(info.nnz == 4, "%s: nnz %lld", nz_format_name((nz_format_t)f),
                  (long long)info.nnz);
        NZT_OK(ctx, nz_matrix_convert(ctx, &C, B, NZ_FORMAT_CSR, NULL));
        nz_matrix_info(ctx, &info, C);
        int lossy = f == NZ_FORMAT_BSR || f == NZ_FORMAT_DIA;
        NZT_CHECK(info.nnz == (lossy ? 3 : 4), "%s: back to CSR has %lld entries",
                  nz_format_name((nz_format_t)f), (long long)info.nnz);
        if (!lossy) NZT_CHECK(nzt_csr_identical(ctx, A, C, 1), "%s keeps the stored zero",
                              nz_format_name((nz_format_t)f));
        nz_matrix_destroy(&B);
        nz_matrix_destroy(&C);
    }
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

/* ELL on "one enormous row" is refused with the default limit, before allocating; with
 * max_padding_ratio = 1e9 it goes through and round-trips. */
static void test_padding_refusal(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    int k = 5;
    NZT_CHECK(strstr(nzt_zoo_name(k), "enormous") != NULL, "zoo case 5 is %s", nzt_zoo_name(k));
    nz_matrix_t *A = NULL, *B = NULL, *C = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, NZ_F32, nzt_seed));
    nz_alloc_stats_t before, after;
    nz_context_alloc_stats(ctx, &before);
    nz_status_t st = nz_matrix_convert(ctx, &B, A, NZ_FORMAT_ELL, NULL);
    nz_context_alloc_stats(ctx, &after);
    NZT_CHECK(st == NZ_ERR_TOO_MUCH_PADDING && B == NULL, "ELL refused: status %d", st);
    const char *msg = nz_context_last_error(ctx);
    NZT_CHECK(strstr(msg, "ell") && strstr(msg, "CSR bytes") && strstr(msg, "3 x"),
              "message: %s", msg);
    NZT_CHECK(after.live_blocks == before.live_blocks, "refusal leaked");
    nz_format_options_t o;
    memset(&o, 0, sizeof o);
    o.max_padding_ratio = 1e9;
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_ELL, &o));
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, B);
    NZT_CHECK(info.ell_width > 50000 && info.stored == 300 * info.ell_width, "wide ELL %lld",
              (long long)info.ell_width);
    NZT_OK(ctx, nz_matrix_convert(ctx, &C, B, NZ_FORMAT_CSR, NULL));
    NZT_CHECK(nzt_csr_identical(ctx, A, C, 1), "enormous ELL round trip");
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&C);
    /* a limit below 1 refuses even formats without padding */
    o.max_padding_ratio = 0.5;
    NZT_CHECK(nz_matrix_convert(ctx, &B, A, NZ_FORMAT_HYB, &o) == NZ_ERR_TOO_MUCH_PADDING,
              "ratio 0.5 refuses HYB");
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

/* nz_matrix_stats' hot_share: the nonzeros in the NZ_STATS_HOT_COLUMNS most-read columns over
 * all nonzeros, on counts that need every byte of the radix select (300 > 255) and on ties at
 * the cut (16382 columns of count 1 among 19998). */
static void test_hot_share(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    const int64_t rows = 300, cols = 20000, nnz = cols + 2 * (rows - 1);
    int64_t *offsets = NULL;
    int32_t *indices = NULL;
    NZT_CHECK((offsets = calloc((size_t)rows + 1, sizeof *offsets)) != NULL &&
                  (indices = calloc((size_t)nnz, sizeof *indices)) != NULL, "allocation");
    if (offsets != NULL && indices != NULL) {
        /* row 0: every column once; rows 1..299: columns 5 and 7 */
        for (int32_t j = 0; j < cols; j++) indices[j] = j;
        offsets[1] = cols;
        for (int64_t i = 1; i < rows; i++) {
            indices[offsets[i]] = 5;
            indices[offsets[i] + 1] = 7;
            offsets[i + 1] = offsets[i] + 2;
        }
        nz_matrix_t *A = NULL;
        nz_matrix_stats_t s;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, rows, cols, NZ_I64, offsets, indices, NZ_F64,
                                         NULL));
        NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
        const double expected = (300.0 + 300.0 + (NZ_STATS_HOT_COLUMNS - 2)) / (double)nnz;
        NZT_CHECK(s.hot_share == expected, "hot share %.17g, expected %.17g", s.hot_share,
                  expected);
        nz_matrix_destroy(&A);
        /* as many columns as NZ_STATS_HOT_COLUMNS or fewer: all of them */
        offsets[1] = NZ_STATS_HOT_COLUMNS;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 1, NZ_STATS_HOT_COLUMNS, NZ_I64, offsets,
                                         indices, NZ_F64, NULL));
        NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
        NZT_CHECK(s.hot_share == 1.0, "one row over every column: hot share %g", s.hot_share);
        nz_matrix_destroy(&A);
        /* no nonzeros */
        offsets[1] = 0;
        NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 1, cols, NZ_I64, offsets, indices, NZ_F64,
                                         NULL));
        NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
        NZT_CHECK(s.hot_share == 0.0, "no nonzeros: hot share %g", s.hot_share);
        nz_matrix_destroy(&A);
    }
    free(offsets);
    free(indices);
    nz_context_destroy(&ctx);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_explicit_zeros();
    test_padding_refusal();
    test_round_trips();
    test_hot_share();
    printf("test_formats: %d conversions skipped as too large to retry\n", skipped_conversions);
    return nzt_finish("test_formats");
}
