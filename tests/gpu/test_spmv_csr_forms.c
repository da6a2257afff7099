/* test_spmv_csr_forms.c: each CUDA CSR SpMV algorithm's plan forms (LightSpMV chunks, cache hints, layouts, mixed precision) against the reference and bit for bit against each other. */
#include "spmv_job.h"

#include <stdbool.h>
#include <string.h>

static nz_context_t *ctx;
static int quick;
static nz_alg_t algs[32];
static int num_algs;

/* Each algorithm's two forms (nzt_csr_flag_settings) on the device copy of a job's matrix, plus
 * hints with mixed precision for float: both must match the reference, and, since the flags only
 * change who computes a row (LightSpMV's chunks), the cache policy of a load (hints) or where
 * a column index is read from (compressed indices), those forms must agree bit for bit. */
static void compare_forms(const nzt_spmv_job_t *j, const nz_matrix_t *dA, int bits) {
    char label[512];
    for (int a = 0; a < num_algs; a++) {
        unsigned settings[NZT_CSR_MAX_FLAG_SETTINGS];
        const int num_settings = nzt_csr_flag_settings(algs[a], 1, settings);
        for (int f = 1; f < num_settings; f++)
        for (int mixed = 0; mixed <= (j->vt == NZ_F32 && (algs[a] == NZ_ALG_VECTOR ||
                                                          algs[a] == NZ_ALG_MERGE ||
                                                          algs[a] == NZ_ALG_SPLIT));
             mixed++) {
            const unsigned extra = mixed ? NZ_PLAN_MIXED : 0u;
            nz_spmv_plan_t *plain = NULL, *other = NULL;
            NZT_OK(ctx, nz_spmv_plan_create(ctx, &plain, dA, NZ_OP_N, algs[a], extra));
            NZT_OK(ctx, nz_spmv_plan_create(ctx, &other, dA, NZ_OP_N, algs[a], settings[f] | extra));
            if (plain == NULL || other == NULL) {
                nz_spmv_plan_destroy(&plain);
                nz_spmv_plan_destroy(&other);
                continue;
            }
            snprintf(label, sizeof label, "[%s %s off%d alg=%s%s forms]", j->name,
                     nzt_vt_name(j->vt), bits, nz_alg_name(algs[a]), nzt_csr_flags_label(extra));
            /* rows split over warps only where 32 lanes run a row, never in mixed precision */
            nz_spmv_plan_info_t info;
            NZT_OK(ctx, nz_spmv_plan_info(plain, &info));
            NZT_CHECK(info.vector_warps == 1 ||
                          (algs[a] == NZ_ALG_VECTOR && info.vector_width == 32 && !mixed),
                      "%s: %d warps per row (width %d)", label, info.vector_warps,
                      info.vector_width);
            int64_t bad1 = nzt_spmv_run(j, plain, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh);
            snprintf(label, sizeof label, "[%s %s off%d alg=%s%s forms]", j->name,
                     nzt_vt_name(j->vt), bits, nz_alg_name(algs[a]),
                     nzt_csr_flags_label(settings[f] | extra));
            int64_t bad2 = nzt_spmv_run(j, other, label, j->dx, 1.0, 0.0, j->ref_a, j->bound_a, j->yh2);
            /* panels sum panel by panel and the paper's LightSpMV form has its own V: the
             * reference check above is theirs, as it is for csr/atomic (atomic additions in any
             * order); every other form (compressed indices included: the same columns) computes
             * the same sums */
            const bool same_sums = !(settings[f] & (NZ_PLAN_COLUMN_PANELS |
                                                    NZ_PLAN_LIGHT_PER_ROW)) &&
                                   algs[a] != NZ_ALG_ATOMIC; /* atomics: any order */
            if (same_sums && bad1 == 0 && bad2 == 0 && j->rows > 0)
                NZT_CHECK(memcmp(j->yh, j->yh2, (size_t)j->rows * j->vs) == 0,
                          "%s: differs bit for bit from the form without the flag", label);
            nzt_spmv_run(j, other, label, j->dx, -2.5, 0.5, j->ref_b, j->bound_b, j->yh2);
            nz_spmv_plan_destroy(&plain);
            nz_spmv_plan_destroy(&other);
        }
    }
}

/* The matrix on the device with 32- and 64-bit row offsets, the forms compared on each. */
static void compare_matrix(const char *name, const nz_matrix_t *A, const void *arg) {
    (void)arg;
    nzt_csr_each_offset_width(ctx, name, A, compare_forms);
}

static void compare_forms_both(const char *name, nzt_make_fn make, const void *arg) {
    nzt_both_precisions(ctx, name, make, arg, compare_matrix, NULL, 40);
}

/* LightSpMV's chunks (several rows per atomic), the cache-hint switch and compressed indices,
 * bit for bit against the forms without them, on shapes whose row counts make LightSpMV take
 * chunks of several rows on a large GPU (S = min(32 V / mean, rows / (8 x resident vectors)) >= 2 on an H100 with
 * 132 SMs): 2,000,003 rows of 0..12 nonzeros (V = 8) with rows of length 0 and 1 and one huge
 * row, whose count is not a multiple of any chunk; 200,001 rows of ~100 nonzeros (V = 32) with
 * empty rows; a row count below one chunk per vector (S = 1). Also the zoo, for the hint
 * switch's small shapes. */
static void test_flag_forms(void) {
    printf("plan-flag forms (LightSpMV chunks, cache hints):\n");
    const int64_t scale = quick ? 8 : 1;
    const int64_t rows1 = 2000003 / scale;
    int64_t *lengths1 = nzt_malloc((size_t)rows1 * 8);
    for (int64_t i = 0; i < rows1; i++) lengths1[i] = (i * 7 + i / 13) % 13;
    for (int64_t i = 1000; i < 1100; i++) lengths1[i] = 1;        /* a run of single entries */
    for (int64_t i = 5000; i < 9000; i++) lengths1[i] = 0;        /* a run of empty rows */
    lengths1[rows1 / 2] = 1000000 / scale;                        /* one huge row */
    lengths1[rows1 - 1] = 0;
    nzt_long_rows_t chunky = {rows1, 1200000, lengths1};
    compare_forms_both("2M rows of 0..12, one huge", nzt_make_long_rows, &chunky);
    free(lengths1);

    const int64_t rows2 = 200001 / scale;
    int64_t *lengths2 = nzt_malloc((size_t)rows2 * 8);
    for (int64_t i = 0; i < rows2; i++) lengths2[i] = i % 17 == 0 ? 0 : 90 + (i * 31) % 21;
    lengths2[3] = 1;
    nzt_long_rows_t wide = {rows2, 50000, lengths2};
    compare_forms_both("200K rows of ~100 (V = 32)", nzt_make_long_rows, &wide);

    /* the same rows over 70,000 columns: a segment inside a row spans ~22,000 columns (16-bit
     * offsets), one across two rows spans ~69,000 (32-bit indices), interleaved in every warp */
    nzt_long_rows_t straddle = {rows2, 70000, lengths2};
    compare_forms_both("200K rows of ~100 over 70,000 columns (some segments wide)",
                       nzt_make_long_rows, &straddle);
    free(lengths2);

    /* few long rows (rail-like): CSR-vector splits each row over several warps on a large
     * GPU (2,048 rows x 2 warps < what an H100 holds), every form with the same split; 16-bit
     * and 32-bit segments again over 70,000 columns */
    const int64_t rows4 = 2048 / (quick ? 4 : 1);
    int64_t *lengths4 = nzt_malloc((size_t)rows4 * 8);
    for (int64_t i = 0; i < rows4; i++) lengths4[i] = i % 97 == 5 ? 0 : 1500 + (i * 613) % 2200;
    nzt_long_rows_t rail = {rows4, 70000, lengths4};
    compare_forms_both("2048 rows of 1500..3700 over 70,000 columns (rows split over warps)",
                       nzt_make_long_rows, &rail);
    free(lengths4);

    int64_t lengths3[37];
    for (int i = 0; i < 37; i++) lengths3[i] = i % 5 == 0 ? 0 : (i % 5 == 1 ? 1 : 3 * i);
    lengths3[20] = 200000;
    nzt_long_rows_t few = {37, 250000, lengths3};
    compare_forms_both("37 rows, one of 200,000", nzt_make_long_rows, &few);

    for (int k = 0; k < nzt_zoo_count(); k++) compare_forms_both(nzt_zoo_name(k), nzt_make_zoo, &k);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    quick = nzt_env_flag("NZ_TEST_QUICK");
    ctx = nzt_csr_gpu_context(quick ? " (quick mode)" : "", algs, 32, &num_algs);
    test_flag_forms();
    printf("%lld SpMV results compared\n", (long long)nzt_spmv_cases);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spmv_csr_forms");
}
