/* test_spmv_csr.c: every CUDA CSR SpMV algorithm, in each of its plan forms and under every tunable, against the CPU double reference. */
#include "spmv_job.h"

#include <string.h>

/*
 * For every (csr, alg) pair of nz_spmv_list(NZ_BACKEND_CUDA) x {f32, f64} x {32-, 64-bit row
 * offsets} x three (alpha, beta) cases, on the awkward-shape zoo, generated matrices, single rows
 * of millions of nonzeros, very tall / very wide shapes, empty shapes and the real matrices of
 * NZ_MATRIX_DIR: y is compared with nzt_reference_spmv (tolerance scaled by row length). A
 * failure prints the matrix, precision, offset width, algorithm, alpha / beta and the first bad
 * rows. NZ_TEST_QUICK=1 (for compute-sanitizer) shrinks the huge rows and the real-matrix set.
 * The plan forms compared bit for bit are in test_spmv_csr_forms.c; plans, errors, wrapped
 * arrays and allocation failures in test_spmv_csr_api.c.
 */

static nz_context_t *ctx;
static int quick;
static nz_alg_t algs[32];
static int num_algs;
static int with_forms = 1; /* 0: flags 0 only (the tunables section, which needs no second form) */

/* CSR-vector's V: NZ_TUNE_VECTOR_WIDTH when set to a valid width, else the smallest power of
 * two >= a quarter of the mean row length, in [2, 32]. */
static int expected_vector_width(const nzt_spmv_job_t *j) {
    nz_tunables_t tunables;
    if (nz_context_get_tunables(ctx, &tunables) == NZ_SUCCESS &&
        tunables.vector_width != NZ_TUNE_AUTO)
        return tunables.vector_width;
    double mean = (double)j->nnz / (double)j->rows;
    int width = 2;
    while (width < 32 && width * 4 < mean) width *= 2;
    return width;
}

/* All algorithms (each in every flag setting) x three cases on one device copy of the job's
 * matrix. */
static void check_device_matrix(const nzt_spmv_job_t *j, const nz_matrix_t *dA, int bits) {
    char label[512];
    for (int v = 0; v < NZT_CSR_MAX_FLAG_SETTINGS * num_algs; v++) {
        nz_alg_t alg = algs[v / NZT_CSR_MAX_FLAG_SETTINGS];
        unsigned settings[NZT_CSR_MAX_FLAG_SETTINGS];
        if (v % NZT_CSR_MAX_FLAG_SETTINGS >= nzt_csr_flag_settings(alg, with_forms, settings)) continue;
        const unsigned flags = settings[v % NZT_CSR_MAX_FLAG_SETTINGS];
        char an[64];
        snprintf(an, sizeof an, "%s%s", nz_alg_name(alg), nzt_csr_flags_label(flags));
        nz_spmv_plan_t *plan = NULL;
        nz_status_t s = nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_N, alg, flags);
        NZT_CHECK(s == NZ_SUCCESS, "%s %s off%d alg=%s: plan returned %d (%s): %s", j->name,
                  nzt_vt_name(j->vt), bits, an, (int)s, nz_status_string(s),
                  nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        nz_spmv_plan_info_t pi;
        NZT_OK(ctx, nz_spmv_plan_info(plan, &pi));
        NZT_CHECK(pi.alg == alg && pi.format == NZ_FORMAT_CSR && pi.backend == NZ_BACKEND_CUDA,
                  "%s alg=%s: plan info alg %d format %d backend %d", j->name, an, (int)pi.alg,
                  (int)pi.format, (int)pi.backend);
        NZT_CHECK(pi.plan_seconds >= 0 && pi.plan_seconds < 60, "%s alg=%s: plan_seconds %g",
                  j->name, an, pi.plan_seconds);
        if (alg == NZ_ALG_SCALAR || alg == NZ_ALG_VECTOR || alg == NZ_ALG_MERGE ||
            alg == NZ_ALG_SPLIT)
            NZT_CHECK(pi.reproducible == 1, "%s alg=%s: should be reproducible", j->name, an);
        NZT_CHECK((pi.flags & flags) == flags && pi.layout_parts >= 1 &&
                      pi.layout_parts <= ((flags & NZ_PLAN_COLUMN_PANELS) ? 3 : 1),
                  "%s alg=%s: plan info flags 0x%x layout_parts %d", j->name, an, pi.flags,
                  pi.layout_parts);
        if (alg == NZ_ALG_VECTOR && j->rows > 0 && j->nnz > 0 && !(flags & NZ_PLAN_COLUMN_PANELS))
            NZT_CHECK(pi.vector_width == expected_vector_width(j),
                      "%s: CSR-vector width %d, expected %d (mean row %.2f)", j->name,
                      pi.vector_width, expected_vector_width(j), (double)j->nnz / (double)j->rows);

        snprintf(label, sizeof label, "[%s %s off%d alg=%s alpha=1 beta=0 (y NaN)]", j->name,
                 nzt_vt_name(j->vt), bits, an);
        nzt_spmv_run(j, plan, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh);
        snprintf(label, sizeof label, "[%s %s off%d alg=%s alpha=-2.5 beta=0.5]", j->name,
                 nzt_vt_name(j->vt), bits, an);
        nzt_spmv_run(j, plan, label, j->dx, -2.5, 0.5, j->ref_b, j->bound_b, j->yh);
        /* NaN-poisoned y again, twice: the runs must agree bit for bit when the plan says so */
        snprintf(label, sizeof label, "[%s %s off%d alg=%s alpha=1 beta=0 (y NaN) repeat]", j->name,
                 nzt_vt_name(j->vt), bits, an);
        int64_t bad1 = nzt_spmv_run(j, plan, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh);
        int64_t bad2 = nzt_spmv_run(j, plan, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh2);
        if (pi.reproducible && bad1 == 0 && bad2 == 0 && j->rows > 0) {
            int64_t first = -1;
            for (int64_t i = 0; i < j->rows && first < 0; i++)
                if (memcmp((char *)j->yh + (size_t)i * j->vs, (char *)j->yh2 + (size_t)i * j->vs,
                           j->vs) != 0)
                    first = i;
            NZT_CHECK(first < 0, "%s: claims reproducible, but repeated runs differ at row %lld",
                      label, (long long)first);
        }
        NZT_OK(ctx, nz_spmv_plan_destroy(&plan));
    }
}

/* The device copy's info, then every algorithm on it. */
static void check_upload(const nzt_spmv_job_t *j, const nz_matrix_t *dA, int bits) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, dA));
    NZT_CHECK(info.location == NZ_DEVICE && info.rows == j->rows && info.cols == j->cols &&
                  info.nnz == j->nnz && info.value_type == j->vt &&
                  info.offset_type == (bits == 32 ? NZ_I32 : NZ_I64),
              "%s: device matrix info (offset type %d for %d bits)", j->name,
              (int)info.offset_type, bits);
    NZT_CHECK(info.transfer_seconds >= 0 && info.transfer_seconds < 60,
              "%s: transfer_seconds %g", j->name, info.transfer_seconds);
    check_device_matrix(j, dA, bits);
}

/* The matrix on the device with 32- and 64-bit row offsets, every algorithm on each. */
static void check_matrix(const char *name, const nz_matrix_t *A, const void *arg) {
    (void)arg;
    nzt_csr_each_offset_width(ctx, name, A, check_upload);
}

/* Both precisions of a matrix made by `make`, every algorithm on each. */
static void check_both(const char *name, nzt_make_fn make, const void *arg) {
    nzt_both_precisions(ctx, name, make, arg, check_matrix, NULL, 40);
}

/* ---- the sections -------------------------------------------------------------------------- */

static void test_generated(void) {
    printf("generated:\n");
    int64_t s = quick ? 1 : 2;
    const nzt_gen_case_t gens[] = {
        {"laplace2d 30x40", NZT_GEN_LAPLACE2D, {30, 40, 0, 0}},
        {"laplace3d", NZT_GEN_LAPLACE3D, {16 * s, 16 * s, 12 * s, 0}},
        {"random 5000x4000 mean 9", NZT_GEN_RANDOM, {5000, 4000, 9, 0}},
        {"rail 40 x 120000, rows ~3000", NZT_GEN_RAIL, {40, 120000, 3000, 0}},
        {"mixed 30000, 12 long rows of 25000", NZT_GEN_MIXED, {30000, 4, 12, 25000}},
        {"rmat scale 13 x 8", NZT_GEN_RMAT, {13, 8, 0, 0}},
        {"banded 9000 (3, 5)", NZT_GEN_BANDED, {9000, 3, 5, 0}},
        {"fe3d 10", NZT_GEN_FE3D, {10, 0, 0, 0}},
        /* column steps around 65536: compressed indices mix 16-bit and 32-bit rows */
        {"random 3000x400000 mean 6", NZT_GEN_RANDOM, {3000, 400000, 6, 0}},
    };
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++)
        check_both(gens[g].name, nzt_make_gen, &gens[g]);
}

static void test_long_rows(void) {
    printf("long rows and extreme shapes:\n");
    int64_t scale = quick ? 10 : 1;
    int64_t one[1] = {3000000 / scale};
    nzt_long_rows_t single = {1, 3000000 / scale, one};
    check_both("1 row of 3,000,000 (full)", nzt_make_long_rows, &single);

    int64_t three[3] = {5, 2000000 / scale, 17};
    nzt_long_rows_t triple = {3, 2500000 / scale, three};
    check_both("3 rows, the middle 2,000,000 long", nzt_make_long_rows, &triple);

    /* very tall: 2,000,000 x 3, rows of 0..3 */
    int64_t tall_rows = 2000000 / scale;
    int64_t *tall = nzt_malloc((size_t)tall_rows * 8);
    for (int64_t i = 0; i < tall_rows; i++) tall[i] = (i * 7 + i / 5) % 4;
    nzt_long_rows_t tall_case = {tall_rows, 3, tall};
    check_both("very tall 2,000,000 x 3", nzt_make_long_rows, &tall_case);
    free(tall);

    /* very wide: 4 x 4,000,000, rows of 1000 .. 40000 */
    int64_t wide[4] = {1000, 40000 / (quick ? 4 : 1), 0, 3333};
    nzt_long_rows_t wide_case = {4, 4000000 / scale, wide};
    check_both("very wide 4 x 4,000,000", nzt_make_long_rows, &wide_case);

    /* a long row among short ones at the end of a tile-sized run of empty rows */
    int64_t *mix = nzt_malloc(5000 * 8);
    for (int64_t i = 0; i < 5000; i++) mix[i] = i < 1800 ? 0 : (i == 2500 ? 77777 : i % 3);
    nzt_long_rows_t mix_case = {5000, 80000, mix};
    check_both("1800 empty rows, then one of 77777", nzt_make_long_rows, &mix_case);
    free(mix);
}

/* Every non-default tunable the kernels accept (the context's nz_tunables_t, read at plan setup;
 * set here through nz_tunables_parse as the CLI maps NZ_TUNE_* variables; several warps per row
 * with 32 lanes, and a width below 32 where the warps setting must be ignored), on a few zoo
 * matrices, a matrix with long rows among short ones and one single long row: the variants a
 * tuning sweep times must compute the same function. Invalid values fall back to the default. */
static void test_tunables(void) {
    static const char *const settings[][3] = {
        {"NZ_TUNE_VECTOR_WIDTH=2", "NZ_TUNE_VECTOR_UNROLL=1", NULL},
        {"NZ_TUNE_VECTOR_WIDTH=4", "NZ_TUNE_VECTOR_UNROLL=8", "NZ_TUNE_VECTOR_WARPS=4"},
        {"NZ_TUNE_VECTOR_WIDTH=8", "NZ_TUNE_VECTOR_UNROLL=2", NULL},
        {"NZ_TUNE_VECTOR_WIDTH=16", "NZ_TUNE_VECTOR_UNROLL=4", NULL},
        {"NZ_TUNE_VECTOR_WIDTH=32", "NZ_TUNE_VECTOR_UNROLL=8", "NZ_TUNE_VECTOR_WARPS=1"},
        {"NZ_TUNE_VECTOR_WIDTH=32", "NZ_TUNE_VECTOR_UNROLL=1", "NZ_TUNE_VECTOR_WARPS=2"},
        {"NZ_TUNE_VECTOR_WIDTH=32", "NZ_TUNE_VECTOR_UNROLL=4", "NZ_TUNE_VECTOR_WARPS=8"},
        {"NZ_TUNE_VECTOR_WIDTH=32", "NZ_TUNE_VECTOR_UNROLL=8", "NZ_TUNE_VECTOR_WARPS=4"},
        {"NZ_TUNE_VECTOR_WIDTH=auto", "NZ_TUNE_VECTOR_UNROLL=junk", "NZ_TUNE_VECTOR_WARPS=junk"},
        {"NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD=4", NULL, NULL},
        {"NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD=8", NULL, NULL},
        {"NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD=32", NULL, NULL},
    };
    const int zoo[] = {0, 1, 4, 9};
    int64_t lengths[3] = {5, 70000, 17};
    nzt_long_rows_t three = {3, 90000, lengths};
    const nzt_gen_case_t mixed = {"mixed 30000, 12 long rows of 25000", NZT_GEN_MIXED, {30000, 4, 12, 25000}};
    const nzt_gen_case_t fe = {"fe3d 8", NZT_GEN_FE3D, {8, 0, 0, 0}};
    printf("tunables:\n");
    with_forms = 0;
    nz_tunables_t saved;
    NZT_OK(ctx, nz_context_get_tunables(ctx, &saved));
    for (size_t t = 0; t < sizeof settings / sizeof settings[0]; t++) {
        /* "junk" is refused and leaves the field at its default, as the CLI does */
        nzt_set_tunables(ctx, &saved, settings[t], 3);
        printf(" %s %s %s\n", settings[t][0], settings[t][1] ? settings[t][1] : "",
               settings[t][2] ? settings[t][2] : "");
        for (size_t k = 0; k < sizeof zoo / sizeof zoo[0]; k++)
            if (zoo[k] < nzt_zoo_count()) check_both(nzt_zoo_name(zoo[k]), nzt_make_zoo, &zoo[k]);
        check_both("3 rows, the middle 70,000 long", nzt_make_long_rows, &three);
        check_both(mixed.name, nzt_make_gen, &mixed);
        check_both(fe.name, nzt_make_gen, &fe);
    }
    NZT_OK(ctx, nz_context_set_tunables(ctx, &saved));
    with_forms = 1;
}

/* Every real matrix (about 8 of them in quick mode); tests/data covers the format without them. */
static void test_real_matrices(void) {
    nzt_both_precisions_real(ctx, 1, quick ? 8 : 0, check_matrix, NULL, 40);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    quick = nzt_env_flag("NZ_TEST_QUICK");
    ctx = nzt_csr_gpu_context(quick ? " (quick mode)" : "", algs, 32, &num_algs);

    nzt_both_precisions_zoo(ctx, check_matrix, NULL, 40);
    test_generated();
    test_long_rows();
    test_tunables();
    test_real_matrices();

    printf("%lld SpMV results compared\n", (long long)nzt_spmv_cases);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spmv_csr");
}
