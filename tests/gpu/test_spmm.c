/* test_spmm.c: GPU SpMM (CSR vector, SELL scalar; op N and T; both layouts; mixed precision) against the CPU double reference. */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

/*
 * Y = alpha op(A) X + beta Y on the device for k in {1, 2, 3, 8, 33, 64}, row- and column-major
 * X and Y with minimal and padded leading dimensions, on the zoo (f32 and f64, 32- and 64-bit
 * row offsets), generated and real matrices. Each column of Y is compared with
 * nzt_reference_spmv; beta = 0 runs start from NaN-poisoned Y; the ld gaps of Y hold a sentinel
 * that must survive; a second run must agree bit for bit (every SpMM plan is reproducible).
 * NZ_PLAN_MIXED must land within half a float ulp of the exact result. SELL runs when device SELL
 * matrices exist (nz_matrix_to_device accepts them); otherwise it is reported and skipped.
 * NZ_TEST_QUICK=1 (compute-sanitizer) trims k and the matrix set.
 */

#define TOL_FACTOR 4.0

static nz_context_t *ctx;

/* The context's spmm_long_row tunable from a value as NZ_TUNE_SPMM_LONG spells it ("auto" too). */
static void set_spmm_long(const char *value) {
    char assignment[64];
    snprintf(assignment, sizeof assignment, "NZ_TUNE_SPMM_LONG=%s", value);
    const char *settings[1] = {assignment};
    nzt_set_tunables(ctx, NULL, settings, 1);
}
static int quick;
static int sell_on_device = -1; /* unknown until the first try */
static int64_t products;

/* One SpMM case: plan on device matrix dM (host CSR `csr` for the reference), two executions
 * (the second must repeat the first bit for bit), column-by-column comparison, gap check. */
static void check_case(const char *name, const nz_matrix_t *csr, const nz_matrix_t *dM,
                       nz_operation_t op, int64_t k, nz_dense_layout_t layout, int64_t pad,
                       double alpha, double beta, unsigned flags) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, csr));
    const nz_value_type_t vt = info.value_type;
    const size_t vs = nzi_value_size(vt);
    const nzt_dense_shape_t shape = nzt_dense_shape(&info, op, layout, k, pad);
    const int64_t xrows = shape.xrows, yrows = shape.yrows, ldx = shape.ldx, ldy = shape.ldy;
    const int64_t nx = shape.nx, ny = shape.ny;
    void *X = nzt_malloc((size_t)nx * vs), *Y = nzt_malloc((size_t)ny * vs);
    void *Y1 = nzt_malloc((size_t)ny * vs), *Y2 = nzt_malloc((size_t)ny * vs);
    double *xd = nzt_malloc((size_t)(xrows + 1) * 8), *y0 = nzt_malloc((size_t)(yrows + 1) * 8);
    double *ref = nzt_malloc((size_t)(yrows + 1) * 8), *bound = nzt_malloc((size_t)(yrows + 1) * 8);
    int64_t *len = nzt_malloc((size_t)(yrows + 1) * 8);
    void *column = nzt_malloc((size_t)(yrows + 1) * vs);
    void *dX = NULL, *dY = NULL;
    char label[512];
    nz_spmm_plan_t *plan = NULL;

    snprintf(label, sizeof label, "[%s %s op=%c k=%lld %s pad=%lld alpha=%g beta=%g%s]", name,
             nzt_vt_name(vt), op == NZ_OP_N ? 'N' : 'T', (long long)k,
             layout == NZ_ROW_MAJOR ? "row" : "col", (long long)pad, alpha, beta,
             (flags & NZ_PLAN_MIXED) ? " mixed" : "");
    nz_status_t s = nz_spmm_plan_create(ctx, &plan, dM, op, k, layout, NZ_ALG_AUTO, flags);
    NZT_CHECK(s == NZ_SUCCESS, "%s: plan returned %d: %s", label, (int)s, nz_context_last_error(ctx));
    if (s != NZ_SUCCESS) goto done;

    nzt_fill_dense_operands(vt, layout, k, X, xrows, ldx, nx, xd, Y, yrows, ldy, ny, y0, beta);
    NZT_OK(ctx, nz_device_malloc(ctx, &dX, (size_t)nx * vs));
    NZT_OK(ctx, nz_device_malloc(ctx, &dY, (size_t)ny * vs));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dX, X, (size_t)nx * vs));
    for (int run = 0; run < 2; run++) {
        NZT_OK(ctx, nz_device_copy_from_host(ctx, dY, Y, (size_t)ny * vs));
        s = nz_spmm_execute(plan, alpha, dX, ldx, beta, dY, ldy);
        NZT_CHECK(s == NZ_SUCCESS, "%s: execute returned %d: %s", label, (int)s,
                  nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) goto done;
        s = nz_device_copy_to_host(ctx, run == 0 ? Y1 : Y2, dY, (size_t)ny * vs);
        NZT_CHECK(s == NZ_SUCCESS, "%s: copying Y back: %s (a kernel fault?)", label,
                  nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) goto done;
    }
    products++;
    NZT_CHECK(memcmp(Y1, Y2, (size_t)ny * vs) == 0, "%s: two runs differ", label);
    for (int64_t c = 0; c < k; c++) {
        nzt_random_vector(xd, NULL, vt, xrows, nzt_seed + 100 + (uint64_t)c);
        nzt_random_vector(y0, NULL, vt, yrows, nzt_seed + 200 + (uint64_t)c);
        nzt_reference_spmv(csr, op, alpha, xd, beta, y0, ref, bound, len);
        for (int64_t r = 0; r < yrows; r++)
            nzi_set(column, vt, r, nzi_get(Y1, vt, nzt_dense_at(layout, ldy, r, c)));
        char what[600];
        snprintf(what, sizeof what, "%s column %lld", label, (long long)c);
        int64_t bad = nzt_compare(what, vt, column, ref, bound, len, yrows, TOL_FACTOR);
        NZT_CHECK(bad == 0, "%s: %lld of %lld rows of column %lld wrong", label, (long long)bad,
                  (long long)yrows, (long long)c);
        if ((flags & NZ_PLAN_MIXED) && vt == NZ_F32 && bad == 0) {
            int64_t loose = 0;
            for (int64_t r = 0; r < yrows; r++) {
                if (!isfinite(ref[r])) continue;
                if (fabs(nzi_get(column, vt, r) - ref[r]) >
                    0.5 * FLT_EPSILON * fabs(ref[r]) * 1.0000001 + 1e-11 * bound[r] + 1e-40)
                    loose++;
            }
            NZT_CHECK(loose == 0, "%s: %lld entries of column %lld beyond half a float ulp (sums "
                      "not in double?)", label, (long long)loose, (long long)c);
        }
    }
    {
        int64_t touched = 0;
        const int64_t outer = layout == NZ_ROW_MAJOR ? yrows : k;
        const int64_t inner = layout == NZ_ROW_MAJOR ? k : yrows;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t g = inner; g < ldy; g++)
                if (o * ldy + g < ny && nzi_get(Y1, vt, o * ldy + g) != NZT_SENTINEL) touched++;
        NZT_CHECK(touched == 0, "%s: %lld elements in the ld gaps of Y were written", label,
                  (long long)touched);
        void *Xback = nzt_malloc((size_t)nx * vs);
        NZT_OK(ctx, nz_device_copy_to_host(ctx, Xback, dX, (size_t)nx * vs));
        NZT_CHECK(memcmp(Xback, X, (size_t)nx * vs) == 0, "%s: X was modified", label);
        free(Xback);
    }
done:
    nz_spmm_plan_destroy(&plan);
    if (dX != NULL) NZT_OK(ctx, nz_device_free(ctx, dX));
    if (dY != NULL) NZT_OK(ctx, nz_device_free(ctx, dY));
    free(X);
    free(Y);
    free(Y1);
    free(Y2);
    free(xd);
    free(y0);
    free(ref);
    free(bound);
    free(len);
    free(column);
}

/* The SELL copies of A on the device (sigma 1 and a sorting window), or NULL when the build
 * cannot put SELL on the device yet. */
static nz_matrix_t *sell_device(const nz_matrix_t *A, int chunk, int sigma) {
    if (sell_on_device == 0) return NULL;
    nz_format_options_t options;
    memset(&options, 0, sizeof options);
    options.sell_chunk = chunk;
    options.sell_sigma = sigma;
    options.max_padding_ratio = 1e6;
    nz_matrix_t *S = NULL, *dS = NULL;
    nz_status_t s = nz_matrix_convert(ctx, &S, A, NZ_FORMAT_SELL, &options);
    if (s == NZ_ERR_TOO_MUCH_PADDING) return NULL;
    NZT_CHECK(s == NZ_SUCCESS, "convert to sell: %s", nz_context_last_error(ctx));
    if (s != NZ_SUCCESS) return NULL;
    s = nz_matrix_to_device(ctx, &dS, S, NZ_INDEX_AUTO);
    nz_matrix_destroy(&S);
    if (s == NZ_ERR_UNSUPPORTED && sell_on_device < 0) {
        printf("  note: device SELL matrices are not available in this build (%s); SELL SpMM "
               "skipped\n", nz_context_last_error(ctx));
        sell_on_device = 0;
        return NULL;
    }
    NZT_CHECK(s == NZ_SUCCESS, "sell to device: %s", nz_context_last_error(ctx));
    if (s != NZ_SUCCESS) return NULL;
    sell_on_device = 1;
    return dS;
}

/* All ks x layouts x ops x cases on CSR (32-bit offsets; 64-bit for some k) and SELL. */
static void check_matrix(const char *name, const nz_matrix_t *A, const int64_t *ks, int nk) {
    nz_matrix_t *d32 = NULL, *d64 = NULL;
    NZT_OK(ctx, nz_matrix_to_device(ctx, &d32, A, NZ_I32));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &d64, A, NZ_I64));
    nz_matrix_t *sell = sell_device(A, 32, 1), *sell_sorted = sell_device(A, 64, 256);
    char label[300];
    for (int ki = 0; ki < nk; ki++) {
        const int64_t k = ks[ki];
        for (int l = 0; l < 2; l++) {
            const nz_dense_layout_t layout = l == 0 ? NZ_ROW_MAJOR : NZ_COL_MAJOR;
            const int64_t pad = (ki + l) % 2 == 0 ? 0 : 3;
            for (int op = 0; op < 2; op++) {
                snprintf(label, sizeof label, "%s csr off32", name);
                check_case(label, A, d32, (nz_operation_t)op, k, layout, pad, 1.0, 0.0, 0);
                check_case(label, A, d32, (nz_operation_t)op, k, layout, 3 - pad, -2.5, 0.5, 0);
                if (k == 3 || k == 33) {
                    snprintf(label, sizeof label, "%s csr off64", name);
                    check_case(label, A, d64, (nz_operation_t)op, k, layout, pad, 1.0, 0.0, 0);
                }
            }
            if (sell != NULL) {
                snprintf(label, sizeof label, "%s sell C=32", name);
                check_case(label, A, sell, NZ_OP_N, k, layout, pad, 1.0, 0.0, 0);
                check_case(label, A, sell, NZ_OP_N, k, layout, 3 - pad, -2.5, 0.5, 0);
            }
            if (sell_sorted != NULL) {
                snprintf(label, sizeof label, "%s sell C=64 sigma=256", name);
                check_case(label, A, sell_sorted, NZ_OP_N, k, layout, pad, 0.5, -1.0, 0);
            }
        }
    }
    nz_matrix_destroy(&d32);
    nz_matrix_destroy(&d64);
    nz_matrix_destroy(&sell);
    nz_matrix_destroy(&sell_sorted);
}

static const int64_t all_ks[] = {1, 2, 3, 8, 33, 64};

static void test_zoo(void) {
    printf("zoo:\n");
    const int nk = quick ? 3 : (int)(sizeof all_ks / sizeof all_ks[0]);
    const int64_t quick_ks[] = {1, 3, 33};
    for (int z = 0; z < nzt_zoo_count(); z++)
        for (int v = 0; v < 2; v++) {
            if (!nzt_shard_take()) continue;
            nz_value_type_t vt = v == 0 ? NZ_F32 : NZ_F64;
            nz_matrix_t *A = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, z, vt, nzt_seed));
            int before = nzt_failures;
            check_matrix(nzt_zoo_name(z), A, quick ? quick_ks : all_ks, nk);
            printf("  %-40s %s %s\n", nzt_zoo_name(z), nzt_vt_name(vt),
                   nzt_failures == before ? "ok" : "FAILED");
            fflush(stdout);
            nz_matrix_destroy(&A);
        }
}

static void test_generated_and_real(void) {
    printf("generated and real:\n");
    const int64_t ks[] = {4, 32, 64};
    struct {
        const char *name;
        int kind;
    } gens[] = {{"fe3d 12", 0}, {"rmat scale 12 x 8", 1}, {"rail 40 x 60000", 2}};
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++) {
        if (!nzt_shard_take()) continue;
        nz_matrix_t *A = NULL;
        if (gens[g].kind == 0) NZT_OK(ctx, nz_gen_fe3d(ctx, &A, NULL, NULL, 12, NZ_F64));
        if (gens[g].kind == 1) NZT_OK(ctx, nz_gen_rmat(ctx, &A, 12, 8, 0, 0, 0, nzt_seed, NZ_F32));
        if (gens[g].kind == 2) NZT_OK(ctx, nz_gen_rail(ctx, &A, 40, 60000, 2000, nzt_seed, NZ_F64));
        int before = nzt_failures;
        check_matrix(gens[g].name, A, ks, quick ? 1 : 3);
        printf("  %-40s %s\n", gens[g].name, nzt_failures == before ? "ok" : "FAILED");
        nz_matrix_destroy(&A);
    }
    const char *dir = nzt_matrix_dir();
    if (dir == NULL) {
        printf("  real matrices: NZ_MATRIX_DIR not set, skipped\n");
        return;
    }
    char **names = NULL;
    int count = nzt_list_matrices(dir, &names);
    int step = quick ? 16 : 6;
    for (int m = 0; m < count; m += step) {
        if (!nzt_shard_take()) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[m]);
        nz_matrix_t *A = NULL;
        nz_status_t s = nz_mm_read(ctx, &A, path, m % 2 == 0 ? NZ_F64 : NZ_F32);
        if (s == NZ_ERR_UNSUPPORTED) continue;
        NZT_CHECK(s == NZ_SUCCESS, "%s: %s", names[m], nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        int before = nzt_failures;
        const int64_t real_ks[] = {8, 64};
        check_matrix(names[m], A, real_ks, quick ? 1 : 2);
        printf("  %-40s %s\n", names[m], nzt_failures == before ? "ok" : "FAILED");
        fflush(stdout);
        nz_matrix_destroy(&A);
    }
    nzt_free_names(names, count);
}

/* Float storage, double sums: half a float ulp of the exact result (a float sum of rows of
 * thousands misses it), CSR op N and T, both layouts, and SELL. */
static void test_mixed(void) {
    printf("mixed precision:\n");
    const int zs[] = {5, 7, 9, 11};
    for (size_t z = 0; z < sizeof zs / sizeof zs[0]; z++) {
        nz_matrix_t *A = NULL, *dA = NULL;
        NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, zs[z], NZ_F32, nzt_seed));
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
        nz_matrix_t *sell = sell_device(A, 32, 1);
        int before = nzt_failures;
        for (int l = 0; l < 2; l++) {
            const nz_dense_layout_t layout = l == 0 ? NZ_ROW_MAJOR : NZ_COL_MAJOR;
            for (int op = 0; op < 2; op++) {
                check_case("mixed csr", A, dA, (nz_operation_t)op, 5, layout, 1, 1.0, 0.0,
                           NZ_PLAN_MIXED);
                check_case("mixed csr", A, dA, (nz_operation_t)op, 40, layout, 0, 0.75, -0.25,
                           NZ_PLAN_MIXED);
            }
            if (sell != NULL)
                check_case("mixed sell", A, sell, NZ_OP_N, 9, layout, 2, 1.0, 0.0, NZ_PLAN_MIXED);
        }
        printf("  %-40s %s\n", nzt_zoo_name(zs[z]), nzt_failures == before ? "ok" : "FAILED");
        nz_matrix_destroy(&sell);
        nz_matrix_destroy(&dA);
        nz_matrix_destroy(&A);
    }
}

/* Long rows cut into pieces: by default the plan decides (the zoo and generated cases above run
 * that); here NZ_TUNE_SPMM_LONG fixes the threshold at 0 (no split: the group kernels take every
 * row), 16 (nearly every row is cut) and 1024, on the zoo's long-row shapes, a uniform one (no
 * long rows: no pieces) and an R-MAT; every k shape (1, 3, 8, 33, 64 lanes), both layouts and
 * ops, 32/64-bit offsets, and mixed precision. */
static void test_long_rows(void) {
    printf("long rows (NZ_TUNE_SPMM_LONG):\n");
    const int zs[] = {5, 7, 8, 9, 11}; /* enormous row, wide, uniform, power-law, dense 64x64 */
    const char *thresholds[] = {"0", "16", "1024"};
    const int64_t ks[] = {1, 3, 8, 33, 64}, quick_ks[] = {1, 3, 33};
    for (int h = 0; h < 3; h++)
        for (int z = 0; z <= (int)(sizeof zs / sizeof zs[0]); z++)
            for (int v = 0; v < 2; v++) {
                if (!nzt_shard_take()) continue;
                const nz_value_type_t vt = v == 0 ? NZ_F64 : NZ_F32;
                nz_matrix_t *A = NULL;
                const char *name = z < (int)(sizeof zs / sizeof zs[0]) ? nzt_zoo_name(zs[z])
                                                                        : "rmat scale 12 x 16";
                if (z < (int)(sizeof zs / sizeof zs[0]))
                    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, zs[z], vt, nzt_seed));
                else
                    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 12, 16, 0, 0, 0, nzt_seed, vt));
                set_spmm_long(thresholds[h]);
                int before = nzt_failures;
                check_matrix(name, A, quick ? quick_ks : ks, quick ? 3 : 5);
                if (vt == NZ_F32) {
                    nz_matrix_t *dA = NULL;
                    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
                    check_case("long rows mixed csr", A, dA, NZ_OP_N, 40, NZ_ROW_MAJOR, 0, 0.75,
                               -0.25, NZ_PLAN_MIXED);
                    check_case("long rows mixed csr", A, dA, NZ_OP_T, 5, NZ_COL_MAJOR, 1, 1.0, 0.0,
                               NZ_PLAN_MIXED);
                    nz_matrix_destroy(&dA);
                }
                set_spmm_long("auto");
                printf("  %-40s %s from %s nonzeros: %s\n", name, nzt_vt_name(vt), thresholds[h],
                       nzt_failures == before ? "ok" : "FAILED");
                fflush(stdout);
                nz_matrix_destroy(&A);
            }
}

/* Fail each allocation of nz_spmm_plan_create(dA, op, k = 8, row-major) in turn (there must be
 * at least min_allocs): every one must give an out-of-memory status with a message, no plan,
 * and leave nothing allocated. */
static void check_plan_alloc_failures(const char *label, const nz_matrix_t *dA, nz_operation_t op,
                                      int64_t min_allocs) {
    nz_spmm_plan_t *plan = NULL;
    nz_alloc_stats_t s0, s1;
    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, dA, op, 8, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0));
    nz_spmm_plan_destroy(&plan);
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, dA, op, 8, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0));
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
    nz_spmm_plan_destroy(&plan);
    const int64_t count = s1.total_allocs - s0.total_allocs;
    NZT_CHECK(count >= min_allocs, "%s SpMM plan: only %lld allocations", label, (long long)count);
    for (int64_t k = 1; k <= count; k++) {
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t s = nz_spmm_plan_create(ctx, &plan, dA, op, 8, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        NZT_CHECK((s == NZ_ERR_OUT_OF_MEMORY || s == NZ_ERR_DEVICE_OUT_OF_MEMORY) && plan == NULL &&
                      strlen(nz_context_last_error(ctx)) > 0,
                  "%s: failing allocation %lld of %lld gave %d (%s)", label, (long long)k,
                  (long long)count, (int)s, nz_context_last_error(ctx));
        nz_spmm_plan_destroy(&plan);
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
        NZT_CHECK(s1.live_blocks == s0.live_blocks && s1.live_bytes == s0.live_bytes,
                  "%s: failing allocation %lld leaked %lld blocks, %lld bytes", label, (long long)k,
                  (long long)(s1.live_blocks - s0.live_blocks),
                  (long long)(s1.live_bytes - s0.live_bytes));
    }
}

/* Refusals, alpha = 0 with NaN X, plan info, allocation failures of an op-T plan. */
static void test_plans(void) {
    nz_matrix_t *A = NULL, *dA = NULL;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 4, NZ_F64, nzt_seed)); /* 2000 x 1500, empty rows */
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
    nz_spmm_plan_t *plan = NULL;
    nz_status_t s = nz_spmm_plan_create(ctx, &plan, dA, NZ_OP_N, 4, NZ_ROW_MAJOR, NZ_ALG_MERGE, 0);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED && plan == NULL, "merge SpMM on the GPU returned %d", (int)s);
    s = nz_spmm_plan_create(ctx, &plan, dA, NZ_OP_N, 4, NZ_ROW_MAJOR, NZ_ALG_SERIAL, 0);
    NZT_CHECK(s == NZ_ERR_UNSUPPORTED, "serial SpMM on a device matrix returned %d", (int)s);
    nz_matrix_t *sell = sell_device(A, 32, 1);
    if (sell != NULL) {
        s = nz_spmm_plan_create(ctx, &plan, sell, NZ_OP_T, 4, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0);
        NZT_CHECK(s == NZ_ERR_UNSUPPORTED && strstr(nz_context_last_error(ctx), "sell"),
                  "sell op T returned %d: %s", (int)s, nz_context_last_error(ctx));
        nz_matrix_destroy(&sell);
    }

    /* plan info, and alpha = 0: X not read (NaN), Y = beta Y */
    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, dA, NZ_OP_T, 8, NZ_COL_MAJOR, NZ_ALG_AUTO,
                                    NZ_PLAN_DETERMINISTIC));
    nz_spmm_plan_info_t info;
    NZT_OK(ctx, nz_spmm_plan_info(plan, &info));
    NZT_CHECK(info.alg == NZ_ALG_VECTOR && info.backend == NZ_BACKEND_CUDA &&
                  info.reproducible == 1 && info.workspace_bytes > 0 && info.vector_width >= 1,
              "op T plan info: alg %d backend %d reproducible %d workspace %zu width %d",
              (int)info.alg, (int)info.backend, info.reproducible, info.workspace_bytes,
              info.vector_width);
    void *dX = NULL, *dY = NULL;
    NZT_OK(ctx, nz_device_malloc(ctx, &dX, 2000 * 8 * 8));
    NZT_OK(ctx, nz_device_malloc(ctx, &dY, 1500 * 8 * 8));
    NZT_OK(ctx, nz_device_memset(ctx, dX, 0xFF, 2000 * 8 * 8));
    double *Y0 = nzt_malloc(1500 * 8 * 8), *Y = nzt_malloc(1500 * 8 * 8);
    for (int i = 0; i < 1500 * 8; i++) Y0[i] = i * 0.5 - 3.0;
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dY, Y0, 1500 * 8 * 8));
    NZT_OK(ctx, nz_spmm_execute(plan, 0.0, dX, 2000, -2.0, dY, 1500));
    NZT_OK(ctx, nz_device_copy_to_host(ctx, Y, dY, 1500 * 8 * 8));
    int bad = 0;
    for (int i = 0; i < 1500 * 8; i++) bad += Y[i] != -2.0 * Y0[i];
    NZT_CHECK(bad == 0, "alpha = 0: %d entries of Y are not -2 Y0", bad);
    /* execute allocates nothing */
    nz_alloc_stats_t s0, s1;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s0));
    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 1));
    NZT_OK(ctx, nz_device_memset(ctx, dX, 0, 2000 * 8 * 8));
    s = nz_spmm_execute(plan, 1.0, dX, 2000, 0.0, dY, 1500);
    NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
    NZT_CHECK(s == NZ_SUCCESS, "execute with injection armed: %s", nz_context_last_error(ctx));
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &s1));
    NZT_CHECK(s0.total_allocs == s1.total_allocs, "execute allocated");
    nz_spmm_plan_destroy(&plan);

    /* every allocation of an op-T plan (state, transpose, sort scratch) may fail */
    check_plan_alloc_failures("op T", dA, NZ_OP_T, 6);
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&A);

    /* every allocation of a plan with long rows cut into pieces (statistics, host lists, the
     * device lists and partial sums) may fail; zoo 5 has one enormous row */
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, 5, NZ_F64, nzt_seed));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
    set_spmm_long("64");
    NZT_OK(ctx, nz_spmm_plan_create(ctx, &plan, dA, NZ_OP_N, 8, NZ_ROW_MAJOR, NZ_ALG_AUTO, 0));
    NZT_OK(ctx, nz_spmm_plan_info(plan, &info));
    NZT_CHECK(info.workspace_bytes > 0, "long-row plan without workspace");
    nz_spmm_plan_destroy(&plan);
    check_plan_alloc_failures("long rows", dA, NZ_OP_N, 10);
    set_spmm_long("auto");
    NZT_OK(ctx, nz_device_free(ctx, dX));
    NZT_OK(ctx, nz_device_free(ctx, dY));
    free(Y0);
    free(Y);
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    quick = nzt_env_flag("NZ_TEST_QUICK");
    ctx = nzt_gpu_context(quick ? " (quick mode)" : "");

    if (nzt_shard_take()) test_plans();
    if (nzt_shard_take()) test_mixed();
    test_zoo();
    test_long_rows();
    test_generated_and_real();

    printf("%lld SpMM products compared%s\n", (long long)products,
           sell_on_device == 1 ? " (csr and sell)" : " (csr only)");
    nz_alloc_stats_t st;
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &st));
    NZT_CHECK(st.live_blocks == 0, "%lld blocks leaked", (long long)st.live_blocks);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spmm");
}
