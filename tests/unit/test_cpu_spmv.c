/* test_cpu_spmv.c: every CPU (format, algorithm) pair, op N and T, against the double reference. */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_STORED 4000000.0 /* conversions padded beyond this are not forced through */

static int64_t products = 0, skipped = 0;

/* One format conversion to test: format plus options. */
typedef struct variant {
    nz_format_t format;
    nz_format_options_t options;
    char label[48];
} variant_t;

static int make_variants(nz_format_t f, variant_t *v) {
    int n = 0;
    memset(v, 0, 8 * sizeof *v);
    if (f == NZ_FORMAT_SELL) {
        static const int chunks[] = {4, 8, 32};
        for (int c = 0; c < 3; c++)
            for (int s = 0; s < 2; s++) {
                v[n].format = f;
                v[n].options.sell_chunk = chunks[c];
                v[n].options.sell_sigma = s ? 4 * chunks[c] : 1;
                snprintf(v[n].label, sizeof v[n].label, "C=%d sigma=%d", chunks[c],
                         v[n].options.sell_sigma);
                n++;
            }
    } else if (f == NZ_FORMAT_BSR) {
        static const int blocks[] = {2, 3, 4, 8};
        for (int b = 0; b < 4; b++) {
            v[n].format = f;
            v[n].options.bsr_block = blocks[b];
            snprintf(v[n].label, sizeof v[n].label, "b=%d", blocks[b]);
            n++;
        }
    } else if (f == NZ_FORMAT_HYB) {
        v[n].format = f;
        snprintf(v[n].label, sizeof v[n].label, "auto width");
        n++;
        v[n].format = f;
        v[n].options.hyb_ell_width = 3;
        snprintf(v[n].label, sizeof v[n].label, "width 3");
        n++;
    } else {
        v[n].format = f;
        snprintf(v[n].label, sizeof v[n].label, "defaults");
        n++;
    }
    return n;
}

static double stored_bound(const nz_matrix_stats_t *s, const variant_t *v) {
    double rows = (double)s->rows, nnz = (double)s->nnz, rmax = (double)s->row_max;
    const nz_format_options_t *o = &v->options;
    switch (v->format) {
    case NZ_FORMAT_ELL: return rows * rmax;
    case NZ_FORMAT_SELL: return ceil(rows / o->sell_chunk) * o->sell_chunk * rmax;
    case NZ_FORMAT_HYB: return rows * rmax + nnz;
    case NZ_FORMAT_BSR: {
        double b = o->bsr_block, blocks = ceil(rows / b) * ceil((double)s->cols / b);
        return (nnz < blocks ? nnz : blocks) * b * b;
    }
    case NZ_FORMAT_DIA: return (double)s->num_diagonals * rows;
    default: return nnz;
    }
}

/* Convert A for variant v, lifting the padding limit when the result stays small. Returns 0
 * (and counts a skip) when the conversion is too large to test. */
static int convert_variant(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                           const nz_matrix_stats_t *s, const variant_t *v) {
    if (stored_bound(s, v) > MAX_STORED) {
        skipped++;
        return 0;
    }
    nz_format_options_t o = v->options;
    o.max_padding_ratio = 1e9;
    NZT_OK(ctx, nz_matrix_convert(ctx, B, A, v->format, &o));
    return 1;
}

static const double scalars[][2] = {{1, 0}, {-2.5, 0.5}, {0, 0.5}, {0, 0}};
static int light = 0;     /* real matrices: default options only, the first two (alpha, beta) */
static int defaults_only = 0; /* one option variant per format (SELL simd: C = 8) */

#define NUM_SCALARS ((int)(sizeof scalars / sizeof scalars[0]))

/* Inputs and double reference of one (op, alpha, beta) case for matrix A, computed once and
 * shared by every (format, algorithm, options) variant. alpha == 0: x is NaN (must not be
 * read); beta == 0: y starts as NaN (must not be read). */
typedef struct reference {
    int64_t nx, ny;
    double alpha, beta;
    double *y0, *ref, *bound;
    int64_t *len;
    void *x, *y_start;
} reference_t;

static void reference_init(nz_context_t *ctx, reference_t *r, const nz_matrix_t *A, nz_operation_t op, int c) {
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    nz_value_type_t vt = info.value_type;
    size_t vs = vt == NZ_F32 ? 4 : 8;
    r->nx = op == NZ_OP_N ? info.cols : info.rows;
    r->ny = op == NZ_OP_N ? info.rows : info.cols;
    r->alpha = scalars[c][0];
    r->beta = scalars[c][1];
    double *xd = nzt_malloc((size_t)(r->nx + 1) * 8);
    r->y0 = nzt_malloc((size_t)(r->ny + 1) * 8);
    r->ref = nzt_malloc((size_t)(r->ny + 1) * 8);
    r->bound = nzt_malloc((size_t)(r->ny + 1) * 8);
    r->len = nzt_malloc((size_t)(r->ny + 1) * 8);
    r->x = nzt_malloc((size_t)(r->nx + 1) * vs);
    r->y_start = nzt_malloc((size_t)(r->ny + 1) * vs);
    nzt_random_vector(xd, r->x, vt, r->nx, nzt_seed + 11 * (uint64_t)c + 1);
    nzt_random_vector(r->y0, NULL, vt, r->ny, nzt_seed + 11 * (uint64_t)c + 2);
    if (r->alpha == 0) nzt_poison(r->x, vt, r->nx);
    if (r->beta == 0)
        nzt_poison(r->y_start, vt, r->ny);
    else
        nzt_from_double(r->y_start, vt, r->y0, r->ny);
    nzt_reference_spmv(A, op, r->alpha, xd, r->beta, r->y0, r->ref, r->bound, r->len);
    free(xd);
}

static void reference_free(reference_t *r) {
    free(r->y0);
    free(r->ref);
    free(r->bound);
    free(r->len);
    free(r->x);
    free(r->y_start);
}

/* Run plan for every (alpha, beta) and compare with the references; with beta == 0 run twice
 * and require bitwise equal results. */
static void check_plan(nz_context_t *ctx, nz_spmv_plan_t *plan, const reference_t *refs,
                       nz_value_type_t vt, const char *what) {
    size_t vs = vt == NZ_F32 ? 4 : 8;
    int64_t ny = refs[0].ny;
    void *y = nzt_malloc((size_t)(ny + 1) * vs), *y_again = nzt_malloc((size_t)(ny + 1) * vs);
    for (int c = 0; c < (light ? 2 : NUM_SCALARS); c++) {
        const reference_t *r = &refs[c];
        if (ny > 0) memcpy(y, r->y_start, (size_t)ny * vs);
        NZT_OK(ctx, nz_spmv_execute(plan, r->alpha, r->x, r->beta, y));
        char label[320];
        snprintf(label, sizeof label, "%s alpha %g beta %g", what, r->alpha, r->beta);
        int64_t bad = nzt_compare(label, vt, y, r->ref, r->bound, r->len, ny, 2.0);
        NZT_CHECK(bad == 0, "%s: %lld wrong entries", label, (long long)bad);
        if (r->beta == 0) {
            if (ny > 0) memcpy(y_again, r->y_start, (size_t)ny * vs);
            NZT_OK(ctx, nz_spmv_execute(plan, r->alpha, r->x, r->beta, y_again));
            NZT_CHECK(ny == 0 || memcmp(y, y_again, (size_t)ny * vs) == 0,
                      "%s: not reproducible", label);
        }
        products++;
    }
    free(y);
    free(y_again);
}

/* All CPU pairs from nz_spmv_list on matrix A (CSR), with the option variants of each format. */
static void check_all_pairs(nz_context_t *ctx, const nz_matrix_t *A, const char *name) {
    nz_matrix_info_t info;
    nz_matrix_info(ctx, &info, A);
    nz_matrix_stats_t s;
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, A));
    reference_t refs[2][NUM_SCALARS];
    for (int op = 0; op < 2; op++)
        for (int c = 0; c < NUM_SCALARS; c++) reference_init(ctx, &refs[op][c], A, (nz_operation_t)op, c);
    nz_format_t f;
    nz_alg_t alg;
    for (int i = 0; nz_spmv_list(&f, &alg, NZ_BACKEND_CPU, i) == NZ_SUCCESS; i++) {
        variant_t v[8];
        int nv = light || defaults_only ? 1 : make_variants(f, v);
        if (light || defaults_only) {
            memset(v, 0, sizeof v[0]);
            v[0].format = f;
            v[0].options.sell_chunk = alg == NZ_ALG_SIMD ? 8 : 32;
            v[0].options.bsr_block = 4;
            snprintf(v[0].label, sizeof v[0].label, "defaults");
        }
        for (int j = 0; j < nv; j++) {
            nz_matrix_t *B = NULL;
            if (!convert_variant(ctx, &B, A, &s, &v[j])) continue;
            for (int op = 0; op < 2; op++) {
                char what[256];
                snprintf(what, sizeof what, "%s: %s/%s %s op %s (%s)", name, nz_format_name(f),
                         nz_alg_name(alg), v[j].label, op ? "T" : "N",
                         info.value_type == NZ_F32 ? "f32" : "f64");
                nz_spmv_plan_t *plan = NULL;
                nz_status_t st = nz_spmv_plan_create(ctx, &plan, B, (nz_operation_t)op, alg, 0);
                if (alg == NZ_ALG_SIMD && v[j].options.sell_chunk != 4 &&
                    v[j].options.sell_chunk != 8) {
                    NZT_CHECK(st == NZ_ERR_UNSUPPORTED &&
                                  strstr(nz_context_last_error(ctx), "4 or 8") != NULL,
                              "%s: SIMD must refuse chunk %d: status %d (%s)", what,
                              v[j].options.sell_chunk, st, nz_context_last_error(ctx));
                    continue;
                }
                NZT_CHECK(st == NZ_SUCCESS, "%s: plan status %d: %s", what, st,
                          nz_context_last_error(ctx));
                if (st != NZ_SUCCESS) continue;
                nz_spmv_plan_info_t pi;
                NZT_OK(ctx, nz_spmv_plan_info(plan, &pi));
                NZT_CHECK(pi.reproducible == 1 && pi.alg == alg && pi.backend == NZ_BACKEND_CPU,
                          "%s: plan info", what);
                if (op == NZ_OP_T && f != NZ_FORMAT_CSC && info.nnz > 0)
                    NZT_CHECK(pi.workspace_bytes > 0, "%s: transpose workspace not reported",
                              what);
                check_plan(ctx, plan, refs[op], info.value_type, what);
                nz_spmv_plan_destroy(&plan);
            }
            nz_matrix_destroy(&B);
        }
    }
    for (int op = 0; op < 2; op++)
        for (int c = 0; c < NUM_SCALARS; c++) reference_free(&refs[op][c]);
}

/* The zoo, both types (every option variant in f64, one per format in f32), with 1, 2 and the
 * default number of threads. */
static void test_zoo(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    for (int t = 0; t < 2; t++) {
        nz_value_type_t vt = t == 0 ? NZ_F64 : NZ_F32;
        defaults_only = vt == NZ_F32;
        for (int k = 0; k < nzt_zoo_count(); k++) {
            NZT_OK(ctx, nz_context_set_threads(ctx, k % 3)); /* 0 = the OpenMP default */
            nz_matrix_t *A = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, vt, nzt_seed));
            check_all_pairs(ctx, A, nzt_zoo_name(k));
            nz_matrix_destroy(&A);
        }
    }
    nz_alloc_stats_t as;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &as));
    NZT_CHECK(as.live_blocks == 0, "%lld blocks leaked", (long long)as.live_blocks);
    nz_context_destroy(&ctx);
}

/* A small case with exact integer answers in every format and both directions. */
static void test_exact_small(void) {
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    /* [0 3 1 0 0; 4 0 0 7 0; 0 0 6 0 0; 9 0 5 3 2] (4 x 5) */
    int32_t ro[] = {0, 2, 4, 5, 9};
    int32_t ci[] = {1, 2, 0, 3, 2, 0, 2, 3, 4};
    double v[] = {3, 1, 4, 7, 6, 9, 5, 3, 2};
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &A, 4, 5, NZ_I32, ro, ci, NZ_F64, v));
    double x[5] = {1, 2, 3, 4, 5}, xt[4] = {1, -1, 2, 1};
    double want[4] = {9, 32, 18, 46}, want_t[5] = {5, 3, 18, -4, 2};
    nz_format_t f;
    nz_alg_t alg;
    nz_format_options_t o;
    memset(&o, 0, sizeof o);
    o.max_padding_ratio = 1e9;
    o.sell_chunk = 4;
    o.bsr_block = 3;
    o.hyb_ell_width = 1;
    for (int i = 0; nz_spmv_list(&f, &alg, NZ_BACKEND_CPU, i) == NZ_SUCCESS; i++) {
        nz_matrix_t *B = NULL;
        NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, f, &o));
        double y[5] = {NAN, NAN, NAN, NAN, NAN};
        NZT_OK(ctx, nz_spmv(ctx, B, alg, 1.0, x, 0.0, y));
        for (int r = 0; r < 4; r++)
            NZT_CHECK(y[r] == want[r], "%s/%s: y[%d] = %g, want %g", nz_format_name(f),
                      nz_alg_name(alg), r, y[r], want[r]);
        nz_spmv_plan_t *plan = NULL;
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, B, NZ_OP_T, alg, 0));
        for (int c = 0; c < 5; c++) y[c] = 1;
        NZT_OK(ctx, nz_spmv_execute(plan, 2.0, xt, -1.0, y));
        for (int c = 0; c < 5; c++)
            NZT_CHECK(y[c] == 2 * want_t[c] - 1, "%s/%s op T: y[%d] = %g, want %g",
                      nz_format_name(f), nz_alg_name(alg), c, y[c], 2 * want_t[c] - 1);
        nz_spmv_plan_destroy(&plan);
        /* Inf in x[0] reaches only rows 1 and 3 (column 0); padding must not multiply it.
         * BSR and DIA multiply their stored zeros (documented), so they are exempt. */
        if (f != NZ_FORMAT_BSR && f != NZ_FORMAT_DIA) {
            double xinf[5] = {INFINITY, 2, 3, 4, 5};
            NZT_OK(ctx, nz_spmv(ctx, B, alg, 1.0, xinf, 0.0, y));
            NZT_CHECK(y[0] == 9 && y[2] == 18 && isinf(y[1]) && isinf(y[3]),
                      "%s/%s: Inf in x leaked through padding: %g %g %g %g", nz_format_name(f),
                      nz_alg_name(alg), y[0], y[1], y[2], y[3]);
        }
        nz_matrix_destroy(&B);
    }
    /* the CPU list is what the brief registers */
    int count = 0;
    for (; nz_spmv_list(&f, &alg, NZ_BACKEND_CPU, count) == NZ_SUCCESS; count++) {}
    NZT_CHECK(count == 11, "CPU pairs: %d", count);
    /* unsupported pairs are refused at plan time */
    nz_matrix_t *B = NULL;
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_ELL, NULL));
    nz_spmv_plan_t *plan = NULL;
    NZT_CHECK(nz_spmv_plan_create(ctx, &plan, B, NZ_OP_N, NZ_ALG_SERIAL, 0) == NZ_ERR_UNSUPPORTED,
              "ell/serial is not a CPU pair");
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
}

/* Real matrices (NZ_MATRIX_DIR): every pair with default options (SELL simd: C = 8), f64, op N
 * and T, on the matrices (sorted by name) of at most 1 MB, up to a total of ~0.4 M nonzeros. */
static void test_real_matrices(void) {
    const char *dir = nzt_matrix_dir();
    if (dir == NULL) {
        printf("test_cpu_spmv: NZ_MATRIX_DIR not set, real matrices skipped\n");
        return;
    }
    char **names = NULL;
    int count = nzt_list_matrices(dir, &names);
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    light = 1;
    int64_t total = 0;
    int used = 0;
    for (int i = 0; i < count && total < 400000; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) != 0 || st.st_size > 1000000) continue;
        nz_matrix_t *A = NULL;
        nz_status_t s = nz_mm_read(ctx, &A, path, NZ_F64);
        if (s != NZ_SUCCESS) {
            printf("test_cpu_spmv: %s not read (%s), skipped\n", names[i],
                   nz_context_last_error(ctx));
            continue;
        }
        nz_matrix_info_t info;
        nz_matrix_info(ctx, &info, A);
        total += info.nnz;
        used++;
        check_all_pairs(ctx, A, names[i]);
        nz_matrix_destroy(&A);
    }
    printf("test_cpu_spmv: %d real matrices, %lld nonzeros\n", used, (long long)total);
    nzt_free_names(names, count);
    nz_context_destroy(&ctx);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    test_exact_small();
    test_zoo();
    test_real_matrices();
    printf("test_cpu_spmv: %lld products checked, %lld conversions too large and skipped\n",
           (long long)products, (long long)skipped);
    return nzt_finish("test_cpu_spmv");
}
