/* test_spmv_formats.c: every CUDA SpMV algorithm for COO, ELL, SELL, HYB, BSR and DIA against the CPU double reference, plus uploads, refusals and allocation failures. */
#include "spmv_job.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/*
 * For every non-CSR (format, alg) pair of nz_spmv_list(NZ_BACKEND_CUDA) x {f32, f64} x format
 * options (SELL C in {32, 64} x sigma in {1, 128}; BSR b in {2, 3, 4, 8}, and 5..7 on the block
 * friendly matrices; HYB with the automatic ELL width and with width 3, which leaves a COO
 * remainder on every matrix), on the awkward-shape zoo, generated matrices, a matrix whose rows
 * end on and around the COO segment boundaries, and real matrices of NZ_MATRIX_DIR: the host
 * matrix is converted (conversions refused for padding are skipped and counted), uploaded (device
 * info must match the host info), and y is compared with nzt_reference_spmv for alpha = 1,
 * beta = 0 (y NaN-poisoned) and alpha = -2.5, beta = 0.5. Reproducible plans must give bitwise
 * equal repeated results; formats with padding (COO, ELL, SELL, HYB) must not turn an Inf / NaN
 * of x into NaN in rows that do not use it. NZ_TEST_QUICK=1 (compute-sanitizer) takes a handful
 * of real matrices.
 */

#define MAX_PAIRS 32

static nz_context_t *ctx;
static int quick;
static nz_format_t pair_format[MAX_PAIRS];
static nz_alg_t pair_alg[MAX_PAIRS];
static int num_pairs;
static int64_t conversions, refused_padding;

typedef struct variant {
    nz_format_t format;
    nz_format_options_t options;
    char label[48];
} variant_t;

static variant_t variants[32];
static int num_variants;
static bool tested_format[NZ_FORMAT_COUNT];

static void add_variant(nz_format_t format, int chunk, int sigma, int block, int64_t width) {
    variant_t *v = &variants[num_variants++];
    memset(v, 0, sizeof *v);
    v->format = format;
    v->options.sell_chunk = chunk;
    v->options.sell_sigma = sigma;
    v->options.bsr_block = block;
    v->options.hyb_ell_width = width;
    if (format == NZ_FORMAT_SELL)
        snprintf(v->label, sizeof v->label, "sell C=%d sigma=%d", chunk, sigma);
    else if (format == NZ_FORMAT_BSR)
        snprintf(v->label, sizeof v->label, "bsr b=%d", block);
    else if (format == NZ_FORMAT_HYB)
        snprintf(v->label, sizeof v->label, "hyb width=%s", width > 0 ? "3" : "auto");
    else
        snprintf(v->label, sizeof v->label, "%s", nz_format_name(format));
}

static void make_variants(void) {
    add_variant(NZ_FORMAT_COO, 0, 0, 0, 0);
    add_variant(NZ_FORMAT_ELL, 0, 0, 0, 0);
    for (int c = 32; c <= 64; c *= 2) {
        add_variant(NZ_FORMAT_SELL, c, 1, 0, 0);
        add_variant(NZ_FORMAT_SELL, c, 128, 0, 0);
    }
    add_variant(NZ_FORMAT_HYB, 0, 0, 0, 0);
    add_variant(NZ_FORMAT_HYB, 0, 0, 0, 3);
    const int blocks[4] = {2, 3, 4, 8};
    for (int b = 0; b < 4; b++) add_variant(NZ_FORMAT_BSR, 0, 0, blocks[b], 0);
    add_variant(NZ_FORMAT_DIA, 0, 0, 0, 0);
}

static bool padding_format(nz_format_t f) {
    return f == NZ_FORMAT_COO || f == NZ_FORMAT_ELL || f == NZ_FORMAT_SELL || f == NZ_FORMAT_HYB;
}

/* Every algorithm of dB's format: plan info, the three cases, repeat bitwise, NaN / Inf in x. */
static void check_device_matrix(const nzt_spmv_job_t *j, const nz_matrix_t *dB, const variant_t *v) {
    char label[512];
    for (int p = 0; p < num_pairs; p++) {
        if (pair_format[p] != v->format) continue;
        nz_alg_t alg = pair_alg[p];
        const char *an = nz_alg_name(alg);
        nz_spmv_plan_t *plan = NULL;
        nz_status_t s = nz_spmv_plan_create(ctx, &plan, dB, NZ_OP_N, alg, 0);
        NZT_CHECK(s == NZ_SUCCESS, "%s %s %s alg=%s: plan returned %d (%s): %s", j->name,
                  nzt_vt_name(j->vt), v->label, an, (int)s, nz_status_string(s),
                  nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        nz_spmv_plan_info_t pi;
        NZT_OK(ctx, nz_spmv_plan_info(plan, &pi));
        NZT_CHECK(pi.alg == alg && pi.format == v->format && pi.backend == NZ_BACKEND_CUDA,
                  "%s %s alg=%s: plan info alg %d format %d backend %d", j->name, v->label, an,
                  (int)pi.alg, (int)pi.format, (int)pi.backend);
        NZT_CHECK(pi.plan_seconds >= 0 && pi.plan_seconds < 60, "%s alg=%s: plan_seconds %g",
                  j->name, an, pi.plan_seconds);
        if (alg != NZ_ALG_ATOMIC)
            NZT_CHECK(pi.reproducible == 1, "%s %s alg=%s: should be reproducible", j->name,
                      v->label, an);
        else if (v->format == NZ_FORMAT_COO && j->nnz > 0)
            NZT_CHECK(pi.reproducible == 0, "%s coo atomic claims to be reproducible", j->name);

        snprintf(label, sizeof label, "[%s %s %s alg=%s alpha=1 beta=0 (y NaN)]", j->name,
                 nzt_vt_name(j->vt), v->label, an);
        nzt_spmv_run(j, plan, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh);
        snprintf(label, sizeof label, "[%s %s %s alg=%s alpha=-2.5 beta=0.5]", j->name,
                 nzt_vt_name(j->vt), v->label, an);
        nzt_spmv_run(j, plan, label, j->dx, -2.5, 0.5, j->ref_b, j->bound_b, j->yh);
        if (pi.reproducible) {
            snprintf(label, sizeof label, "[%s %s %s alg=%s alpha=1 beta=0 repeat]", j->name,
                     nzt_vt_name(j->vt), v->label, an);
            int64_t bad1 = nzt_spmv_run(j, plan, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh);
            int64_t bad2 = nzt_spmv_run(j, plan, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh2);
            if (bad1 == 0 && bad2 == 0 && j->rows > 0) {
                int64_t first = nzt_first_difference(j->yh, j->yh2, j->rows, j->vs);
                NZT_CHECK(first < 0, "%s: claims reproducible, but repeated runs differ at row %lld",
                          label, (long long)first);
            }
        }
        if (padding_format(v->format) && j->cols > 0) {
            snprintf(label, sizeof label, "[%s %s %s alg=%s x[0] = NaN, x[last] = Inf]", j->name,
                     nzt_vt_name(j->vt), v->label, an);
            nzt_spmv_run(j, plan, label, j->dxn, 1.0, 0.0, j->ref_n, j->bound_n, j->yh);
        }
        NZT_OK(ctx, nz_spmv_plan_destroy(&plan));

        /* NZ_PLAN_DETERMINISTIC is accepted exactly by reproducible plans */
        s = nz_spmv_plan_create(ctx, &plan, dB, NZ_OP_N, alg, NZ_PLAN_DETERMINISTIC);
        NZT_CHECK(pi.reproducible ? s == NZ_SUCCESS : s == NZ_ERR_UNSUPPORTED,
                  "%s %s alg=%s: NZ_PLAN_DETERMINISTIC gave %d for a plan with reproducible = %d",
                  j->name, v->label, an, (int)s, pi.reproducible);
        nz_spmv_plan_destroy(&plan);
    }
}

/* Device info must repeat the host info of the converted matrix. */
static void check_info(const char *name, const variant_t *v, const nz_matrix_t *B,
                       const nz_matrix_t *dB) {
    nz_matrix_info_t h, d;
    NZT_OK(ctx, nz_matrix_info(ctx, &h, B));
    NZT_OK(ctx, nz_matrix_info(ctx, &d, dB));
    NZT_CHECK(d.location == NZ_DEVICE && d.format == h.format && d.rows == h.rows &&
                  d.cols == h.cols && d.nnz == h.nnz && d.stored == h.stored &&
                  d.bytes == h.bytes && d.value_type == h.value_type,
              "%s %s: device info (format %d, %lld x %lld, nnz %lld, stored %lld, %zu bytes) "
              "differs from the host's (format %d, %lld x %lld, nnz %lld, stored %lld, %zu bytes)",
              name, v->label, (int)d.format, (long long)d.rows, (long long)d.cols,
              (long long)d.nnz, (long long)d.stored, d.bytes, (int)h.format, (long long)h.rows,
              (long long)h.cols, (long long)h.nnz, (long long)h.stored, h.bytes);
    NZT_CHECK(d.sell_chunk == h.sell_chunk && d.sell_sigma == h.sell_sigma &&
                  d.bsr_block == h.bsr_block && d.ell_width == h.ell_width &&
                  d.num_diagonals == h.num_diagonals,
              "%s %s: device format parameters differ from the host's", name, v->label);
    NZT_CHECK(d.transfer_seconds >= 0 && d.transfer_seconds < 60, "%s %s: transfer_seconds %g",
              name, v->label, d.transfer_seconds);
}

/* Convert the job's matrix with every variant (or those of `only`), upload, run everything. */
static void check_variants(const nzt_spmv_job_t *j, const variant_t *list, int count) {
    for (int k = 0; k < count; k++) {
        const variant_t *v = &list[k];
        if (!tested_format[v->format]) continue;
        nz_matrix_t *B = NULL, *dB = NULL;
        nz_status_t s = nz_matrix_convert(ctx, &B, j->A, v->format, &v->options);
        if (s == NZ_ERR_TOO_MUCH_PADDING) {
            refused_padding++;
            continue;
        }
        NZT_CHECK(s == NZ_SUCCESS, "%s %s: conversion returned %d: %s", j->name, v->label, (int)s,
                  nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        conversions++;
        s = nz_matrix_to_device(ctx, &dB, B, NZ_INDEX_AUTO);
        NZT_CHECK(s == NZ_SUCCESS, "%s %s %s: upload returned %d: %s", j->name, nzt_vt_name(j->vt),
                  v->label, (int)s, nz_context_last_error(ctx));
        if (s == NZ_SUCCESS) {
            check_info(j->name, v, B, dB);
            check_device_matrix(j, dB, v);
        }
        nz_matrix_destroy(&dB);
        nz_matrix_destroy(&B);
    }
}

/* ---- matrix sources ------------------------------------------------------------------------ */

/* The standard variants plus `extra` (count `num_extra`) on one host matrix. */
typedef struct extra_variants {
    const variant_t *extra;
    int num_extra;
} extra_variants_t;

static void check_matrix(const char *name, const nz_matrix_t *A, const void *arg) {
    const extra_variants_t *more = arg;
    nzt_spmv_job_t j;
    nzt_spmv_job_begin(&j, ctx, name, A, NZ_OP_N, nzt_seed + 11, 1);
    check_variants(&j, variants, num_variants);
    if (more != NULL && more->num_extra > 0) check_variants(&j, more->extra, more->num_extra);
    nzt_spmv_job_end(&j);
}

/* Both precisions of a matrix made by `make`, with the standard variants plus `extra`. */
static void check_both(const char *name, nzt_make_fn make, const void *arg, const variant_t *extra,
                       int num_extra) {
    const extra_variants_t more = {extra, num_extra};
    nzt_both_precisions(ctx, name, make, arg, check_matrix, &more, 44);
}

/* Rows whose lengths put row ends on, just before and just after the COO kernels' segment
 * boundaries (multiples of 256 entries), rows spanning several segments, and empty rows. */
static nz_status_t make_boundaries(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt,
                                   const void *arg) {
    static const int64_t pattern[] = {256, 256, 255, 1, 257, 0, 511, 1, 512, 3, 0, 0, 2000, 256,
                                      7,   249, 1,   1, 768, 5, 0,   1, 1};
    const int64_t count = (int64_t)(sizeof pattern / sizeof pattern[0]), rows = 3 * count;
    const int64_t cols = 3000;
    (void)arg;
    int64_t *offsets = nzt_malloc(((size_t)rows + 1) * 8);
    offsets[0] = 0;
    for (int64_t i = 0; i < rows; i++) offsets[i + 1] = offsets[i] + pattern[i % count];
    int64_t nnz = offsets[rows];
    int32_t *columns = nzt_malloc(nzt_at_least_one(nnz) * 4);
    double *vd = nzt_malloc(nzt_at_least_one(nnz) * 8);
    void *values = nzt_malloc(nzt_at_least_one(nnz) * 8);
    for (int64_t i = 0; i < rows; i++) {
        int64_t length = offsets[i + 1] - offsets[i];
        for (int64_t k = 0; k < length; k++)
            columns[offsets[i] + k] = (int32_t)((k * (cols - 3)) / length + (i % 3));
    }
    nzt_random_vector(vd, values, vt, nnz, nzt_seed + 5);
    nz_status_t s = nz_matrix_create_csr(ctx, A, rows, cols, NZ_I64, offsets, columns, vt, values);
    free(offsets);
    free(columns);
    free(vd);
    free(values);
    return s;
}

/* ---- the sections -------------------------------------------------------------------------- */

static void test_generated(void) {
    printf("generated:\n");
    variant_t blocky[3];
    for (int b = 5; b <= 7; b++) {
        memset(&blocky[b - 5], 0, sizeof blocky[0]);
        blocky[b - 5].format = NZ_FORMAT_BSR;
        blocky[b - 5].options.bsr_block = b;
        snprintf(blocky[b - 5].label, sizeof blocky[0].label, "bsr b=%d", b);
    }
    const nzt_gen_case_t gens[] = {
        {"laplace2d 40x50", NZT_GEN_LAPLACE2D, {40, 50, 0}},
        {"banded 3001 (2, 3)", NZT_GEN_BANDED, {3001, 2, 3}},
        {"banded 500 (40, 7)", NZT_GEN_BANDED, {500, 40, 7}},
        {"rmat scale 12 x 8", NZT_GEN_RMAT, {12, 8, 0}},
        {"fe3d 9", NZT_GEN_FE3D, {9, 0, 0}},
    };
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++)
        check_both(gens[g].name, nzt_make_gen, &gens[g], blocky, 3);
    check_both("rows ending around COO segment boundaries", make_boundaries, NULL, NULL, 0);
    int dense = 11; /* zoo "dense 64x64": every block size converts */
    check_both("dense 64x64 (bsr b = 5..7)", nzt_make_zoo, &dense, blocky, 3);
}

/* About 24 real matrices (5 in quick mode); without NZ_MATRIX_DIR, three of tests/data. */
static void test_real_matrices(void) {
    if (nzt_both_precisions_real(ctx, 1, quick ? 5 : 24, check_matrix, NULL, 44)) return;
    printf("  (tests/data stands in)\n");
    const char *data = nzt_data_dir();
    const char *files[] = {"bcsstk01.mtx", "west0067.mtx", "illc1033.mtx"};
    for (size_t f = 0; data != NULL && f < sizeof files / sizeof files[0]; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", data, files[f]);
        check_both(files[f], nzt_make_file, path, NULL, 0);
    }
}

/* What the GPU refuses, with a message saying why; nothing leaks. */
static void test_refusals(void) {
    nz_matrix_t *A = NULL, *B = NULL, *dB = NULL;
    nz_alloc_stats_t s0, s1;
    nz_format_options_t opt;
    nz_status_t s;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 8, NZ_F64, nzt_seed)); /* uniform 3000 x 3000 */
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));

    memset(&opt, 0, sizeof opt);
    opt.sell_chunk = 8;
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_SELL, &opt));
    s = nz_matrix_to_device(ctx, &dB, B, NZ_INDEX_AUTO);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED && dB == NULL &&
                  strstr(nz_context_last_error(ctx), "multiple of 32") != NULL,
              "SELL C = 8 upload returned %d: %s", (int)s, nz_context_last_error(ctx));
    nz_matrix_destroy(&B);

    nz_matrix_t *D = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &D, 10, NZ_F64, nzt_seed)); /* diagonal 777 x 777 */
    for (int b = 1; b <= 16; b += 15) {
        memset(&opt, 0, sizeof opt);
        opt.bsr_block = b;
        opt.max_padding_ratio = 1000;
        NZT_OK(ctx, nz_matrix_convert(ctx, &B, D, NZ_FORMAT_BSR, &opt));
        s = nz_matrix_to_device(ctx, &dB, B, NZ_INDEX_AUTO);
        NZT_CHECK(s == NZ_ERR_UNSUPPORTED && dB == NULL &&
                      strstr(nz_context_last_error(ctx), "2 .. 8") != NULL,
                  "BSR b = %d upload returned %d: %s", b, (int)s, nz_context_last_error(ctx));
        nz_matrix_destroy(&B);
    }
    nz_matrix_destroy(&D);

    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_CSC, NULL));
    s = nz_matrix_to_device(ctx, &dB, B, NZ_INDEX_AUTO);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED && dB == NULL, "CSC upload returned %d", (int)s);
    nz_matrix_destroy(&B);

    /* A^T, mixed precision and algorithms of other formats are refused on non-CSR matrices */
    NZT_OK(ctx, nz_matrix_convert(ctx, &B, A, NZ_FORMAT_ELL, NULL));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dB, B, NZ_INDEX_AUTO));
    nz_spmv_plan_t *plan = NULL;
    s = nz_spmv_plan_create(ctx, &plan, dB, NZ_OP_T, NZ_ALG_SCALAR, 0);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED && plan == NULL, "ELL A^T plan returned %d", (int)s);
    s = nz_spmv_plan_create(ctx, &plan, dB, NZ_OP_N, NZ_ALG_SCALAR, NZ_PLAN_MIXED);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED && plan == NULL, "ELL mixed plan returned %d", (int)s);
    s = nz_spmv_plan_create(ctx, &plan, dB, NZ_OP_N, NZ_ALG_MERGE, 0);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED && plan == NULL, "ELL merge plan returned %d", (int)s);
    s = nz_spmv_plan_create(ctx, &plan, dB, NZ_OP_N, NZ_ALG_BSR_ROW, 0);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED && plan == NULL, "ELL bsr-row plan returned %d", (int)s);
    s = nz_spmv_plan_create(ctx, &plan, B, NZ_OP_N, NZ_ALG_SEGMENTED, 0);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED && plan == NULL, "segmented on a host matrix returned %d",
              (int)s);
    /* the device copy is not a host matrix */
    nz_matrix_t *back = NULL;
    s = nz_matrix_convert(ctx, &back, dB, NZ_FORMAT_CSR, NULL);
    NZT_CHECK(s == NZ_ERR_WRONG_LOCATION || s == NZ_ERR_UNSUPPORTED, "converting a device ELL "
              "matrix returned %d", (int)s);
    nz_matrix_destroy(&back);
    s = nz_matrix_to_device(ctx, &back, dB, NZ_INDEX_AUTO);
    NZT_CHECK(s == NZ_ERR_WRONG_LOCATION, "uploading a device matrix returned %d", (int)s);
    nz_matrix_destroy(&dB);
    nz_matrix_destroy(&B);

    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
    NZT_CHECK(s1.live_blocks == s0.live_blocks && s1.live_bytes == s0.live_bytes,
              "refusals leaked %lld blocks", (long long)(s1.live_blocks - s0.live_blocks));
    nz_matrix_destroy(&A);
}

/* alpha == 0: x is not read (NaN in x must not leak), y = beta y exactly. */
static void test_alpha_zero(void) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 12, NZ_F64, nzt_seed)); /* rows of 31..33 */
    nzt_spmv_job_t j;
    nzt_spmv_job_begin(&j, ctx, "alpha=0", A, NZ_OP_N, nzt_seed + 11, 1);
    double *expect = nzt_malloc((size_t)j.rows * 8);
    for (int64_t i = 0; i < j.rows; i++) expect[i] = 2.0 * j.y0d[i];
    NZT_OK(ctx, nz_device_memset(ctx, j.dxn, 0xFF, (size_t)j.cols * 8));
    for (int k = 0; k < num_variants; k++) {
        nz_matrix_t *B = NULL, *dB = NULL;
        if (nz_matrix_convert(ctx, &B, A, variants[k].format, &variants[k].options) != NZ_SUCCESS)
            continue;
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dB, B, NZ_INDEX_AUTO));
        for (int p = 0; p < num_pairs; p++) {
            if (pair_format[p] != variants[k].format) continue;
            nz_spmv_plan_t *plan = NULL;
            NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dB, NZ_OP_N, pair_alg[p], 0));
            NZT_OK(ctx, nz_device_copy_from_host(ctx, j.dy, j.y0h, (size_t)j.rows * 8));
            NZT_OK(ctx, nz_spmv_execute(plan, 0.0, j.dxn, 2.0, j.dy));
            NZT_OK(ctx, nz_device_copy_to_host(ctx, j.yh, j.dy, (size_t)j.rows * 8));
            NZT_CHECK(memcmp(j.yh, expect, (size_t)j.rows * 8) == 0,
                      "%s alg=%s: alpha=0, beta=2 with NaN x is not exactly 2 y",
                      variants[k].label, nz_alg_name(pair_alg[p]));
            nz_spmv_plan_destroy(&plan);
        }
        nz_matrix_destroy(&dB);
        nz_matrix_destroy(&B);
    }
    free(expect);
    nzt_spmv_job_end(&j);
    nz_matrix_destroy(&A);
}

/* Fail the k-th allocation of nz_matrix_to_device + nz_spmv_plan_create for every k up to the
 * count of a clean run: each attempt succeeds or returns an out-of-memory status, nothing leaks,
 * and a plan that was made computes correctly. Executing allocates nothing. */
static void test_alloc_failures(void) {
    nz_matrix_t *A = NULL;
    /* 2000 x 1500 with 30% empty rows; HYB width 3 leaves a COO remainder */
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 4, NZ_F32, nzt_seed));
    nzt_spmv_job_t j;
    nzt_spmv_job_begin(&j, ctx, "alloc failures", A, NZ_OP_N, nzt_seed + 11, 1);
    for (int k = 0; k < num_variants; k++) {
        const variant_t *v = &variants[k];
        if (v->format == NZ_FORMAT_SELL && (v->options.sell_chunk != 32 || v->options.sell_sigma == 1))
            continue;
        if (v->format == NZ_FORMAT_BSR && v->options.bsr_block != 3) continue;
        nz_matrix_t *B = NULL;
        if (nz_matrix_convert(ctx, &B, A, v->format, &v->options) != NZ_SUCCESS) continue;
        for (int p = 0; p < num_pairs; p++) {
            if (pair_format[p] != v->format) continue;
            const char *an = nz_alg_name(pair_alg[p]);
            nz_alloc_stats_t s0, s1;
            nz_matrix_t *dB = NULL;
            nz_spmv_plan_t *plan = NULL;
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
            NZT_OK(ctx, nz_matrix_to_device(ctx, &dB, B, NZ_INDEX_AUTO));
            NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dB, NZ_OP_N, pair_alg[p], 0));
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
            int64_t count = s1.total_allocs - s0.total_allocs;
            NZT_CHECK(count >= 3, "%s alg=%s: only %lld allocations counted", v->label, an,
                      (long long)count);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 1));
            nz_status_t s = nz_spmv_execute(plan, 1.0, j.dx, 0.0, j.dy);
            NZT_CHECK(s == NZ_SUCCESS, "%s alg=%s: execute with injection armed: %s", v->label,
                      an, nz_context_last_error(ctx));
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
            NZT_CHECK(s0.total_allocs == s1.total_allocs, "%s alg=%s: execute allocated",
                      v->label, an);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            nz_spmv_plan_destroy(&plan);
            nz_matrix_destroy(&dB);

            int failures = 0;
            for (int64_t f = 1; f <= count; f++) {
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, f));
                s = nz_matrix_to_device(ctx, &dB, B, NZ_INDEX_AUTO);
                if (s == NZ_SUCCESS)
                    s = nz_spmv_plan_create(ctx, &plan, dB, NZ_OP_N, pair_alg[p], 0);
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
                NZT_CHECK(s == NZ_SUCCESS || s == NZ_ERR_OUT_OF_MEMORY ||
                              s == NZ_ERR_DEVICE_OUT_OF_MEMORY,
                          "%s alg=%s: failing allocation %lld gave %d (%s)", v->label, an,
                          (long long)f, (int)s, nz_context_last_error(ctx));
                if (s != NZ_SUCCESS) {
                    failures++;
                    NZT_CHECK(strlen(nz_context_last_error(ctx)) > 0,
                              "%s alg=%s: allocation failure %lld without a message", v->label,
                              an, (long long)f);
                } else {
                    char label[256];
                    snprintf(label, sizeof label, "[%s alg=%s after injected failure %lld]",
                             v->label, an, (long long)f);
                    nzt_spmv_run(&j, plan, label, j.dx, 1.0, 0.0, j.ref_a, j.bound_a, j.yh);
                }
                nz_spmv_plan_destroy(&plan);
                nz_matrix_destroy(&dB);
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
                NZT_CHECK(s1.live_blocks == s0.live_blocks && s1.live_bytes == s0.live_bytes,
                          "%s alg=%s: failing allocation %lld leaked %lld blocks, %lld bytes",
                          v->label, an, (long long)f, (long long)(s1.live_blocks - s0.live_blocks),
                          (long long)(s1.live_bytes - s0.live_bytes));
            }
            /* every allocation fails the call except the pinned staging buffer, which falls
             * back to pageable memory */
            NZT_CHECK(failures == count - 1, "%s alg=%s: %d of %lld injected failures surfaced",
                      v->label, an, failures, (long long)count);
        }
        nz_matrix_destroy(&B);
    }
    nzt_spmv_job_end(&j);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    quick = nzt_env_flag("NZ_TEST_QUICK");
    ctx = nzt_gpu_context(quick ? " (quick mode)" : "");
    nz_format_t format;
    nz_alg_t alg;
    printf("pairs:");
    for (int i = 0; nz_spmv_list(&format, &alg, NZ_BACKEND_CUDA, i) == NZ_SUCCESS; i++)
        if (format != NZ_FORMAT_CSR && num_pairs < MAX_PAIRS) {
            pair_format[num_pairs] = format;
            pair_alg[num_pairs++] = alg;
            tested_format[format] = true;
            printf(" %s/%s", nz_format_name(format), nz_alg_name(alg));
        }
    printf("\n");
    const nz_format_t expected[] = {NZ_FORMAT_COO, NZ_FORMAT_ELL, NZ_FORMAT_SELL,
                                    NZ_FORMAT_HYB, NZ_FORMAT_BSR, NZ_FORMAT_DIA};
    for (size_t f = 0; f < sizeof expected / sizeof expected[0]; f++)
        NZT_CHECK(tested_format[expected[f]], "no GPU algorithm listed for %s",
                  nz_format_name(expected[f]));
    make_variants();

    if (nzt_shard_take()) test_refusals();
    if (nzt_shard_take()) test_alpha_zero();
    if (nzt_shard_take()) test_alloc_failures();
    nzt_both_precisions_zoo(ctx, check_matrix, NULL, 44);
    test_generated();
    test_real_matrices();

    printf("%lld cases run; %lld conversions, %lld refused for padding (skipped)\n",
           (long long)nzt_spmv_cases, (long long)conversions, (long long)refused_padding);
    nz_alloc_stats_t stats;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &stats));
    NZT_CHECK(stats.live_blocks == 0, "%lld blocks still allocated at the end",
              (long long)stats.live_blocks);
    NZT_OK(ctx, nz_context_destroy(&ctx));
    return nzt_finish("test_spmv_formats");
}
