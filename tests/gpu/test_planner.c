/* test_planner.c: the SpMV planner on the GPU: device statistics, AUTO on the zoo, the reproducibility table, DETERMINISTIC and TUNE. */
#include "testutil.h"
#include "../../src/plan/plan_internal.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/*
 * - Device row statistics (op N and op T, 32- and 64-bit offsets) equal the host ones, and a
 *   device CSR plan with NZ_ALG_AUTO picks what nz_spmv_plan_choose picks from host statistics.
 * - AUTO plans on the awkward-shape zoo and generated matrices (f32, f64, op N and T) execute
 *   correctly against nzt_reference_spmv.
 * - The planner's reproducibility table agrees with what every listed (format, alg) plan reports.
 * - AUTO | DETERMINISTIC gives reproducible algorithms and bitwise identical repeated results.
 * - AUTO | TUNE picks an algorithm within noise of the fastest candidate it could have picked,
 *   and plan_seconds includes the tuning.
 * - Allocation failures during AUTO | TUNE leak nothing.
 * NZ_TEST_QUICK=1 (compute-sanitizer) shrinks the generated matrices.
 */

#define T nzi_plan_thresholds
#define TOL_FACTOR 4.0

static nz_context_t *ctx;
static int quick;

/* ---- helpers ------------------------------------------------------------------------------- */

/* Run y = alpha op(A) x + beta y with plan on device vectors and compare with the reference of
 * the host CSR matrix H. Returns the number of bad rows. */
static int64_t check_plan(nz_spmv_plan_t *plan, const nz_matrix_t *H, nz_operation_t op,
                          const char *label) {
    nz_matrix_info_t mi;
    NZT_OK(ctx, nz_matrix_info(ctx, &mi, H));
    nz_value_type_t vt = mi.value_type;
    size_t vs = vt == NZ_F32 ? 4 : 8;
    int64_t xlen = op == NZ_OP_N ? mi.cols : mi.rows, ylen = op == NZ_OP_N ? mi.rows : mi.cols;
    double *xd = nzt_malloc(nzt_at_least_one(xlen) * 8),
           *y0d = nzt_malloc(nzt_at_least_one(ylen) * 8);
    void *xh = nzt_malloc(nzt_at_least_one(xlen) * vs),
         *yh = nzt_malloc(nzt_at_least_one(ylen) * vs);
    void *y0h = nzt_malloc(nzt_at_least_one(ylen) * vs);
    double *ref = nzt_malloc(nzt_at_least_one(ylen) * 8),
           *bound = nzt_malloc(nzt_at_least_one(ylen) * 8);
    int64_t *len = nzt_malloc(nzt_at_least_one(ylen) * 8);
    void *dx = NULL, *dy = NULL;
    int64_t bad = 0;
    nzt_random_vector(xd, xh, vt, xlen, nzt_seed + 21);
    nzt_random_vector(y0d, y0h, vt, ylen, nzt_seed + 22);
    NZT_OK(ctx, nz_device_malloc(ctx, &dx, nzt_at_least_one(xlen) * vs));
    NZT_OK(ctx, nz_device_malloc(ctx, &dy, nzt_at_least_one(ylen) * vs));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dx, xh, (size_t)xlen * vs));
    static const double cases[2][2] = {{1.0, 0.0}, {-2.5, 0.5}};
    for (int c = 0; c < 2; c++) {
        double alpha = cases[c][0], beta = cases[c][1];
        if (beta == 0.0)
            NZT_OK(ctx, nz_device_memset(ctx, dy, 0xFF, (size_t)ylen * vs));
        else
            NZT_OK(ctx, nz_device_copy_from_host(ctx, dy, y0h, (size_t)ylen * vs));
        nzt_reference_spmv(H, op, alpha, xd, beta, y0d, ref, bound, len);
        nz_status_t s = nz_spmv_execute(plan, alpha, dx, beta, dy);
        NZT_CHECK(s == NZ_SUCCESS, "%s: execute returned %d: %s", label, (int)s,
                  nz_context_last_error(ctx));
        NZT_OK(ctx, nz_device_copy_to_host(ctx, yh, dy, (size_t)ylen * vs));
        int64_t b = nzt_compare(label, vt, yh, ref, bound, len, ylen, TOL_FACTOR);
        NZT_CHECK(b == 0, "%s (alpha %g, beta %g): %lld of %lld rows wrong", label, alpha, beta,
                  (long long)b, (long long)ylen);
        bad += b;
    }
    NZT_OK(ctx, nz_device_free(ctx, dx));
    NZT_OK(ctx, nz_device_free(ctx, dy));
    free(xd);
    free(y0d);
    free(xh);
    free(yh);
    free(y0h);
    free(ref);
    free(bound);
    free(len);
    return bad;
}

/* Statistics of op(H) on the host: nz_matrix_stats of H or of its transpose. */
static void host_stats(const nz_matrix_t *H, nz_operation_t op, nz_matrix_stats_t *s) {
    if (op == NZ_OP_N) {
        NZT_OK(ctx, nz_matrix_stats(ctx, s, H));
        return;
    }
    nz_matrix_t *Ht = NULL;
    NZT_OK(ctx, nz_matrix_transpose(ctx, &Ht, H));
    NZT_OK(ctx, nz_matrix_stats(ctx, s, Ht));
    nz_matrix_destroy(&Ht);
}

/* Share of H's nonzeros that compressed indices hold in 16 bits (counted on the host): those of
 * rows whose columns span <= 65535 for CSR-vector widths below 32, else those of aligned
 * segments of 32 nonzeros that do. */
static double narrow_share(const nz_matrix_t *H, int width) {
    const int64_t nnz = H->nnz, rows = H->rows;
    const int32_t *col = H->host.csr.col_indices;
    int64_t narrow = 0;
    const int64_t parts = width < 32 ? rows : (nnz + 31) / 32;
    for (int64_t p = 0; p < parts; p++) {
        const int64_t begin = width < 32 ? H->host.csr.row_offsets[p] : 32 * p;
        const int64_t end = width < 32 ? H->host.csr.row_offsets[p + 1]
                                       : (32 * p + 32 < nnz ? 32 * p + 32 : nnz);
        int32_t lo = INT32_MAX, hi = INT32_MIN;
        for (int64_t k = begin; k < end; k++) {
            lo = col[k] < lo ? col[k] : lo;
            hi = col[k] > hi ? col[k] : hi;
        }
        if (begin < end && (int64_t)hi - lo <= 65535) narrow += end - begin;
    }
    return nnz > 0 ? (double)narrow / (double)nnz : 0.0;
}

/* ---- device statistics and AUTO --------------------------------------------------------------- */

/* A reused CSR-vector plan on 32-lane rows (no panels, not tiny) carries compressed indices
 * exactly where enough nonzeros fit 16 bits, rows split over warps or not; elsewhere the build
 * refused them and the plan runs plain. */
static void check_compressed(const nz_matrix_t *dA, const nz_matrix_t *H, const char *label) {
    nz_spmv_plan_t *plan = NULL;
    nz_spmv_plan_info_t info;
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_N, NZ_ALG_AUTO, NZ_PLAN_REUSE));
    NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
    if (info.alg == NZ_ALG_VECTOR && !(info.flags & NZ_PLAN_COLUMN_PANELS)) {
        const double share = narrow_share(H, info.vector_width);
        NZT_CHECK(((info.flags & NZ_PLAN_COMPRESS_INDICES) != 0) ==
                      (share >= NZI_SEGMENTS_MIN_NARROW_SHARE),
                  "%s, reuse: %.3f of the nonzeros fit 16 bits (width %d, %d warps a row), plan "
                  "flags 0x%x", label, share, info.vector_width, info.vector_warps, info.flags);
        printf("  %s, reuse: csr/vector, %.3f of the nonzeros fit 16 bits, %d warps a row, "
               "compressed %s\n", label, share, info.vector_warps,
               (info.flags & NZ_PLAN_COMPRESS_INDICES) ? "yes" : "no");
    }
    nz_spmv_plan_destroy(&plan);
}

/* For one host CSR matrix: device statistics for both offset widths and both ops, the AUTO plan's
 * choice against nz_spmv_plan_choose, and its results. */
static void check_auto(const nz_matrix_t *H, const char *name) {
    char label[256];
    nz_matrix_info_t mi;
    NZT_OK(ctx, nz_matrix_info(ctx, &mi, H));
    for (int bits = 32; bits <= 64; bits += 32) {
        nz_matrix_t *dA = NULL;
        nz_status_t s = nz_matrix_to_device(ctx, &dA, H, bits == 32 ? NZ_I32 : NZ_I64);
        if (s == NZ_ERR_OVERFLOW) continue;
        NZT_OK(ctx, s);
        for (int op = 0; op < 2; op++) {
            snprintf(label, sizeof label, "%s %s off%d op %c", name, nzt_vt_name(mi.value_type),
                     bits, op ? 'T' : 'N');
            nz_matrix_stats_t hs, ds;
            host_stats(H, (nz_operation_t)op, &hs);
            NZT_OK(ctx, nzi_plan_row_stats(ctx, dA, (nz_operation_t)op, &ds));
            NZT_CHECK(ds.rows == hs.rows && ds.cols == hs.cols && ds.nnz == hs.nnz &&
                          ds.row_min == hs.row_min && ds.row_max == hs.row_max &&
                          ds.empty_rows == hs.empty_rows &&
                          fabs(ds.row_mean - hs.row_mean) <= 1e-12 * hs.row_mean &&
                          fabs(ds.row_std - hs.row_std) <= 1e-9 * (1.0 + hs.row_std),
                      "%s: device stats (rows %lld min %lld max %lld empty %lld mean %.17g std "
                      "%.17g) differ from host (%lld %lld %lld %lld %.17g %.17g)",
                      label, (long long)ds.rows, (long long)ds.row_min, (long long)ds.row_max,
                      (long long)ds.empty_rows, ds.row_mean, ds.row_std, (long long)hs.rows,
                      (long long)hs.row_min, (long long)hs.row_max, (long long)hs.empty_rows,
                      hs.row_mean, hs.row_std);
            /* the column-count share: exactly the host's where the planner reads it */
            const bool hot_counted = op == NZ_OP_N && (double)hs.nnz >= NZI_HOT_NNZ_MIN &&
                                     (double)hs.cols >= T.hot_cols_min;
            NZT_CHECK(ds.hot_share == (hot_counted ? hs.hot_share : 0.0),
                      "%s: device hot share %.17g, host %.17g", label, ds.hot_share, hs.hot_share);

            nz_spmv_plan_t *plan = NULL;
            nz_spmv_plan_info_t info;
            s = nz_spmv_plan_create(ctx, &plan, dA, (nz_operation_t)op, NZ_ALG_AUTO, 0);
            NZT_CHECK(s == NZ_SUCCESS, "%s: AUTO plan returned %d: %s", label, (int)s,
                      nz_context_last_error(ctx));
            if (s != NZ_SUCCESS) continue;
            NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
            NZT_CHECK(info.alg != NZ_ALG_AUTO && nz_cuda_spmv_supports(NZ_FORMAT_CSR, info.alg) &&
                          info.backend == NZ_BACKEND_CUDA,
                      "%s: plan reports %s", label, nz_alg_name(info.alg));
            NZT_CHECK(!(info.flags & NZI_PLAN_IF_PAYS), "%s: the internal flag 0x%x leaked into "
                      "the plan's flags 0x%x", label, NZI_PLAN_IF_PAYS, info.flags);
            /* CSR-vector with 32 lanes a row splits long rows over 2, 4 or 8 warps; a default
             * plan never compresses indices where their build does not pay within its 20 calls
             * (nzi_plan_compress_pays) nor on shorter rows; a reused one compresses exactly
             * where enough nonzeros fit 16 bits (check_compressed) */
            NZT_CHECK(info.vector_warps == 1 || (info.alg == NZ_ALG_VECTOR &&
                                                 info.vector_width == 32 &&
                                                 (info.vector_warps == 2 || info.vector_warps == 4 ||
                                                  info.vector_warps == 8)),
                      "%s: %s with width %d runs %d warps per row", label,
                      nz_alg_name(info.alg), info.vector_width, info.vector_warps);
            const size_t vs = mi.value_type == NZ_F32 ? 4 : 8;
            if (op == NZ_OP_N && info.alg == NZ_ALG_VECTOR &&
                (mi.nnz < T.tiny_nnz || (double)mi.nnz <= T.compress_row_min * (double)mi.rows ||
                 !nzi_plan_compress_pays(&ds, 0, vs)))
                NZT_CHECK(!(info.flags & NZ_PLAN_COMPRESS_INDICES), "%s: compressed indices on "
                          "rows of mean %.1f (build pays: %d)", label,
                          (double)mi.nnz / (double)mi.rows, nzi_plan_compress_pays(&ds, 0, vs));
            if (op == NZ_OP_N && info.alg == NZ_ALG_VECTOR && mi.nnz >= T.tiny_nnz &&
                (double)mi.nnz > T.compress_row_min * (double)mi.rows &&
                nzi_plan_compress_pays(&ds, NZ_PLAN_REUSE, vs))
                check_compressed(dA, H, label);
            /* the hot-columns rule: csr/atomic on columns renumbered by degree, only where the
             * renumbering pays back within the calls the flags promise, which a default plan
             * (20 calls) never does (issue 37) */
            NZT_CHECK((info.flags & NZ_PLAN_REORDER) == 0,
                      "%s: hot share %.3f of %lld columns, default plan %s renumbered (flags "
                      "0x%x)", label, hs.hot_share, (long long)hs.cols, nz_alg_name(info.alg),
                      info.flags);
            if (op == NZ_OP_N) {
                /* the rules on the host statistics with the device's L2 and value size, as the
                 * device plan sees them (nz_spmv_plan_choose knows no L2, and the rules for
                 * tiles and renumbering depend on it) */
                nzi_plan_request_t request = {NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_OP_N, 0, NULL,
                                              mi.value_type == NZ_F32 ? 4u : 8u,
                                              nz_cuda_l2_bytes(ctx),
                                              nz_cuda_resident_threads(ctx)};
                nzi_plan_choice_t choice;
                NZT_OK(ctx, nzi_plan_choose(&hs, &request, &choice));
                const nz_alg_t expected = choice.count > 0 ? choice.algs[0] : NZ_ALG_AUTO;
                /* equal unless the backend refused the first choice for this matrix */
                NZT_CHECK(info.alg == expected || mi.rows == 0 || mi.nnz == 0,
                          "%s: device AUTO chose %s, host statistics give %s (%s)", label,
                          nz_alg_name(info.alg), nz_alg_name(expected), choice.why);
            }
            check_plan(plan, H, (nz_operation_t)op, label);
            nz_spmv_plan_destroy(&plan);
        }
        nz_matrix_destroy(&dA);
    }
}

/* The planner's first choice for H from its host statistics, with plan flags, must be
 * `expected`. */
static void expect_choice_flags(const nz_matrix_t *H, unsigned flags, nz_alg_t expected,
                                const char *name) {
    nz_matrix_stats_t s;
    nz_format_t f;
    nz_alg_t alg = NZ_ALG_AUTO;
    char why[NZI_PLAN_WHY_SIZE];
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, H));
    NZT_OK(ctx, nz_spmv_plan_choose(&f, &alg, why, sizeof why, &s, NZ_BACKEND_CUDA,
                                    NZ_FORMAT_CSR, flags));
    NZT_CHECK(alg == expected, "%s (flags 0x%x): the planner chose %s, expected %s (%s)", name,
              flags, nz_alg_name(alg), nz_alg_name(expected), why);
}

/* Issue 37, setup proportional to use: on rmat 17 (hot columns, ~2M nonzeros) a device plan
 * renumbers only with NZ_PLAN_REUSE and where the matrix and x exceed the device's L2 (the
 * model: nzi_plan_reorder_pays); asked for by name, it always renumbers. plan_seconds counts
 * the renumbering. */
static void check_reuse(const nz_matrix_t *H, const char *name) {
    nz_matrix_t *dA = NULL;
    nz_spmv_plan_t *plan = NULL;
    nz_spmv_plan_info_t info;
    nz_matrix_stats_t s;
    nz_matrix_info_t mi;
    NZT_OK(ctx, nz_matrix_info(ctx, &mi, H));
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, H));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, H, NZ_INDEX_AUTO));
    const size_t vs = mi.value_type == NZ_F32 ? 4 : 8;
    const size_t l2 = nz_cuda_l2_bytes(ctx);
    const unsigned cases[] = {0, NZ_PLAN_REUSE};
    for (int k = 0; k < 2; k++) {
        NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_N, NZ_ALG_AUTO, cases[k]));
        NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
        const bool expected = nzi_plan_hot_columns(&s) &&
                              nzi_plan_reorder_pays(&s, cases[k], vs, l2);
        NZT_CHECK(expected == ((info.flags & NZ_PLAN_REORDER) != 0) && (cases[k] || !expected),
                  "%s flags 0x%x: plan %s flags 0x%x, renumbering expected %d (L2 %zu bytes)",
                  name, cases[k], nz_alg_name(info.alg), info.flags, (int)expected, l2);
        printf("  %s flags 0x%x: %s%s, plan %.3f ms\n", name, cases[k], nz_alg_name(info.alg),
               (info.flags & NZ_PLAN_REORDER) ? "+reorder" : "", 1e3 * info.plan_seconds);
        check_plan(plan, H, NZ_OP_N, name);
        nz_spmv_plan_destroy(&plan);
    }
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_N, NZ_ALG_ATOMIC, NZ_PLAN_REORDER));
    NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
    NZT_CHECK((info.flags & NZ_PLAN_REORDER) && info.plan_seconds > 0,
              "%s: atomic with NZ_PLAN_REORDER asked for: flags 0x%x, plan %.3e s", name,
              info.flags, info.plan_seconds);
    check_plan(plan, H, NZ_OP_N, name);
    nz_spmv_plan_destroy(&plan);
    nz_matrix_destroy(&dA);
}

/* The planner's first choice for H from its host statistics must be `expected`. */
static void expect_choice(const nz_matrix_t *H, nz_alg_t expected, const char *name) {
    nz_matrix_stats_t s;
    nz_format_t f;
    nz_alg_t alg = NZ_ALG_AUTO;
    char why[NZI_PLAN_WHY_SIZE];
    NZT_OK(ctx, nz_matrix_stats(ctx, &s, H));
    NZT_OK(ctx, nz_spmv_plan_choose(&f, &alg, why, sizeof why, &s, NZ_BACKEND_CUDA,
                                    NZ_FORMAT_CSR, 0));
    NZT_CHECK(alg == expected, "%s: the planner chose %s, expected %s (%s)", name,
              nz_alg_name(alg), nz_alg_name(expected), why);
}

static void test_auto(void) {
    char name[128];
    for (int k = 0; k < nzt_zoo_count(); k++)
        for (int v = 0; v < 2; v++) {
            if (!nzt_shard_take()) continue;
            nz_value_type_t vt = v ? NZ_F64 : NZ_F32;
            nz_matrix_t *H = NULL;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &H, k, vt, nzt_seed));
            check_auto(H, nzt_zoo_name(k));
            nz_matrix_destroy(&H);
        }
    int scale = quick ? 12 : 16, n = quick ? 16 : 48;
    nz_matrix_t *H = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &H, n, n, n, NZ_F64));
    snprintf(name, sizeof name, "laplace3d %d^3", n);
    check_auto(H, name);
    nz_matrix_destroy(&H);
    NZT_OK(ctx, nz_gen_rmat(ctx, &H, scale, 16, 0, 0, 0, nzt_seed, NZ_F32));
    snprintf(name, sizeof name, "rmat %d", scale);
    check_auto(H, name);
    nz_matrix_destroy(&H);
    /* 131072 columns, ~2M nonzeros: the hot-columns rule (in quick mode too) */
    NZT_OK(ctx, nz_gen_rmat(ctx, &H, 17, 16, 0, 0, 0, nzt_seed, NZ_F64));
    {
        nz_matrix_stats_t s;
        NZT_OK(ctx, nz_matrix_stats(ctx, &s, H));
        NZT_CHECK(nzi_plan_hot_columns(&s), "rmat 17: %lld nonzeros, hot share %.3f: the "
                  "hot-columns rule should hold", (long long)s.nnz, s.hot_share);
    }
    /* the renumbering only when the caller reuses the plan (L2 unknown to plan_choose) */
    expect_choice_flags(H, NZ_PLAN_REUSE, NZ_ALG_ATOMIC, "rmat 17");
    {
        nz_format_t f;
        nz_alg_t alg = NZ_ALG_AUTO;
        nz_matrix_stats_t s;
        NZT_OK(ctx, nz_matrix_stats(ctx, &s, H));
        NZT_OK(ctx, nz_spmv_plan_choose(&f, &alg, NULL, 0, &s, NZ_BACKEND_CUDA, NZ_FORMAT_CSR, 0));
        NZT_CHECK(alg != NZ_ALG_ATOMIC, "rmat 17, default flags: atomic chosen");
    }
    check_auto(H, "rmat 17");
    check_reuse(H, "rmat 17");
    nz_matrix_destroy(&H);
    NZT_OK(ctx, nz_gen_mixed(ctx, &H, quick ? 20000 : 300000, 6, 3, quick ? 20000 : 200000,
                             nzt_seed, NZ_F64));
    check_auto(H, "mixed");
    nz_matrix_destroy(&H);
    NZT_OK(ctx, nz_gen_rail(ctx, &H, quick ? 300 : 3000, quick ? 100000 : 1000000, 2000, nzt_seed,
                            NZ_F32));
    check_auto(H, "rail");
    nz_matrix_destroy(&H);
    /* even rows of ~100 (CSR-vector, 32 lanes) of columns spread over 450,000 (a window below
     * the scattered rule's, rows included): compressed indices refused, plain CSR-vector */
    NZT_OK(ctx, nz_gen_random(ctx, &H, quick ? 5000 : 50000, 450000, 100.0, nzt_seed, NZ_F64));
    expect_choice(H, NZ_ALG_VECTOR, "random 450,000 columns");
    check_auto(H, "random 450,000 columns");
    nz_matrix_destroy(&H);
    /* the same rows over 2M columns: the scattered rule (row blocks first where their build
     * pays: with NZ_PLAN_REUSE) */
    NZT_OK(ctx, nz_gen_random(ctx, &H, quick ? 5000 : 50000, 2000000, 100.0, nzt_seed, NZ_F64));
    expect_choice_flags(H, NZ_PLAN_REUSE, NZ_ALG_ADAPTIVE, "random 2M columns");
    check_auto(H, "random 2M columns");
    nz_matrix_destroy(&H);
    /* 2M x 2M, rows of mean 3: the scattered-tiles rule (with NZ_PLAN_REUSE: the build's set-up
     * budget); tiles of ~7900 rows, whose double sums (63 KB) need the opt-in shared memory (not
     * in quick mode: sanitizers) */
    if (!quick) {
        NZT_OK(ctx, nz_gen_random(ctx, &H, 2000000, 2000000, 3.0, nzt_seed, NZ_F64));
        expect_choice_flags(H, NZ_PLAN_REUSE, NZ_ALG_TILES, "random 2M x 2M");
        check_auto(H, "random 2M x 2M");
        nz_matrix_destroy(&H);
    }
}

/* ---- the reproducibility table -------------------------------------------------------------- */

/* Every (format, alg) the backend lists, on a power-law matrix (so HYB keeps a COO remainder):
 * a plan the table calls reproducible must report so, and one it calls not reproducible must
 * report not; a listed pair missing from the table is a failure too (add it to planner.c). */
static void test_reproducible_table(void) {
    nz_matrix_t *H = NULL;
    int power_law = -1;
    for (int k = 0; k < nzt_zoo_count(); k++)
        if (strstr(nzt_zoo_name(k), "power-law") != NULL) power_law = k;
    NZT_CHECK(power_law >= 0, "the zoo has no power-law matrix");
    if (power_law < 0) return;
    NZT_OK(ctx, nzt_zoo_matrix(ctx, &H, power_law, NZ_F64, nzt_seed));
    nz_format_t format;
    nz_alg_t alg;
    int checked = 0;
    for (int i = 0; nz_spmv_list(&format, &alg, NZ_BACKEND_CUDA, i) == NZ_SUCCESS; i++)
        for (int op = 0; op < 2; op++) {
            char label[128];
            snprintf(label, sizeof label, "%s/%s op %c", nz_format_name(format), nz_alg_name(alg),
                     op ? 'T' : 'N');
            nz_matrix_t *F = NULL, *dA = NULL;
            nz_spmv_plan_t *plan = NULL;
            nz_spmv_plan_info_t info;
            const nz_matrix_t *src = H;
            nz_format_options_t o;
            memset(&o, 0, sizeof o);
            o.max_padding_ratio = 1e6;
            o.hyb_ell_width = 3;
            o.bsr_block = 2;
            if (format != NZ_FORMAT_CSR) {
                nz_status_t s = nz_matrix_convert(ctx, &F, H, format, &o);
                NZT_CHECK(s == NZ_SUCCESS, "%s: convert returned %d: %s", label, (int)s,
                          nz_context_last_error(ctx));
                if (s != NZ_SUCCESS) continue;
                src = F;
            }
            nz_status_t s = nz_matrix_to_device(ctx, &dA, src, NZ_INDEX_AUTO);
            if (s == NZ_ERR_UNSUPPORTED) {
                printf("note: %s matrices cannot be uploaded: %s\n", nz_format_name(format),
                       nz_context_last_error(ctx));
                nz_matrix_destroy(&F);
                continue;
            }
            NZT_OK(ctx, s);
            s = nz_spmv_plan_create(ctx, &plan, dA, (nz_operation_t)op, alg, 0);
            if (s == NZ_ERR_UNSUPPORTED && op == NZ_OP_T) {
                /* not every format has a transpose path */
                nz_matrix_destroy(&dA);
                nz_matrix_destroy(&F);
                continue;
            }
            NZT_CHECK(s == NZ_SUCCESS, "%s: plan returned %d: %s", label, (int)s,
                      nz_context_last_error(ctx));
            if (s == NZ_SUCCESS) {
                NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
                int table = nzi_plan_reproducible(NZ_BACKEND_CUDA, format, alg, (nz_operation_t)op);
                NZT_CHECK(table != -1, "%s: missing from the planner's reproducibility table "
                                       "(the plan reports %d)", label, info.reproducible);
                NZT_CHECK(table == -1 || table == info.reproducible,
                          "%s: the table says %d, the plan reports %d", label, table,
                          info.reproducible);
                checked++;
                /* DETERMINISTIC with an explicit algorithm: accepted iff reproducible */
                nz_spmv_plan_t *det = NULL;
                s = nz_spmv_plan_create(ctx, &det, dA, (nz_operation_t)op, alg,
                                        NZ_PLAN_DETERMINISTIC);
                NZT_CHECK(info.reproducible ? s == NZ_SUCCESS : s == NZ_ERR_UNSUPPORTED,
                          "%s: DETERMINISTIC plan returned %d (reproducible %d)", label, (int)s,
                          info.reproducible);
                nz_spmv_plan_destroy(&det);
                nz_spmv_plan_destroy(&plan);
            }
            nz_matrix_destroy(&dA);
            nz_matrix_destroy(&F);
        }
    printf("reproducibility table: %d (format, alg, op) plans checked\n", checked);
    NZT_CHECK(checked >= 7, "only %d plans checked", checked);
    nz_matrix_destroy(&H);
}

/* ---- DETERMINISTIC ---------------------------------------------------------------------------- */

/* AUTO | DETERMINISTIC on op(A): a reproducible plan, three bitwise identical products. */
static void check_deterministic(const nz_matrix_t *dA, const nz_matrix_t *H, nz_operation_t op,
                                const char *name) {
    nz_matrix_info_t mi;
    NZT_OK(ctx, nz_matrix_info(ctx, &mi, H));
    size_t vs = mi.value_type == NZ_F32 ? 4 : 8;
    int64_t xlen = op == NZ_OP_N ? mi.cols : mi.rows, ylen = op == NZ_OP_N ? mi.rows : mi.cols;
    nz_spmv_plan_t *plan = NULL;
    nz_spmv_plan_info_t info;
    nz_status_t s = nz_spmv_plan_create(ctx, &plan, dA, op, NZ_ALG_AUTO,
                                        NZ_PLAN_DETERMINISTIC | (op == NZ_OP_N ? NZ_PLAN_TUNE : 0));
    NZT_CHECK(s == NZ_SUCCESS, "%s: deterministic plan returned %d: %s", name, (int)s,
              nz_context_last_error(ctx));
    if (s != NZ_SUCCESS) return;
    NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
    NZT_CHECK(info.reproducible == 1 &&
                  nzi_plan_reproducible(NZ_BACKEND_CUDA, info.format, info.alg, op) == 1,
              "%s: deterministic plan chose %s (reports %d)", name, nz_alg_name(info.alg),
              info.reproducible);
    void *xh = nzt_malloc(nzt_at_least_one(xlen) * vs),
         *y1 = nzt_malloc(nzt_at_least_one(ylen) * vs);
    void *y2 = nzt_malloc(nzt_at_least_one(ylen) * vs);
    double *xd = nzt_malloc(nzt_at_least_one(xlen) * 8);
    void *dx = NULL, *dy = NULL;
    nzt_random_vector(xd, xh, mi.value_type, xlen, nzt_seed + 31);
    NZT_OK(ctx, nz_device_malloc(ctx, &dx, nzt_at_least_one(xlen) * vs));
    NZT_OK(ctx, nz_device_malloc(ctx, &dy, nzt_at_least_one(ylen) * vs));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, dx, xh, (size_t)xlen * vs));
    for (int r = 0; r < 3; r++) {
        NZT_OK(ctx, nz_device_memset(ctx, dy, 0xFF, (size_t)ylen * vs));
        NZT_OK(ctx, nz_spmv_execute(plan, 1.0, dx, 0.0, dy));
        NZT_OK(ctx, nz_device_copy_to_host(ctx, r == 0 ? y1 : y2, dy, (size_t)ylen * vs));
        if (r > 0)
            NZT_CHECK(memcmp(y1, y2, (size_t)ylen * vs) == 0, "%s (%s): run %d differs bitwise",
                      name, nz_alg_name(info.alg), r);
    }
    NZT_OK(ctx, nz_device_free(ctx, dx));
    NZT_OK(ctx, nz_device_free(ctx, dy));
    free(xh);
    free(y1);
    free(y2);
    free(xd);
    nz_spmv_plan_destroy(&plan);
}

static void test_deterministic(void) {
    int scale = quick ? 12 : 16;
    nz_matrix_t *mats[4] = {NULL, NULL, NULL, NULL};
    const char *names[4] = {"laplace3d", "rmat", "mixed", "random"};
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &mats[0], 24, 24, 24, NZ_F64));
    NZT_OK(ctx, nz_gen_rmat(ctx, &mats[1], scale, 16, 0, 0, 0, nzt_seed, NZ_F32));
    NZT_OK(ctx, nz_gen_mixed(ctx, &mats[2], 50000, 5, 2, 40000, nzt_seed, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &mats[3], 30000, 20000, 9.0, nzt_seed, NZ_F32));
    for (int m = 0; m < 4; m++) {
        nz_matrix_t *dA = NULL;
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, mats[m], NZ_INDEX_AUTO));
        check_deterministic(dA, mats[m], NZ_OP_N, names[m]);
        check_deterministic(dA, mats[m], NZ_OP_T, names[m]);
        nz_matrix_destroy(&dA);
        /* COO on the device: the segmented kernel, never the atomic one */
        nz_matrix_t *C = NULL;
        NZT_OK(ctx, nz_matrix_convert(ctx, &C, mats[m], NZ_FORMAT_COO, NULL));
        nz_status_t s = nz_matrix_to_device(ctx, &dA, C, NZ_INDEX_AUTO);
        if (s == NZ_SUCCESS) {
            char label[64];
            snprintf(label, sizeof label, "%s coo", names[m]);
            check_deterministic(dA, C, NZ_OP_N, label);
            nz_matrix_destroy(&dA);
        }
        nz_matrix_destroy(&C);
        nz_matrix_destroy(&mats[m]);
    }
}

/* ---- TUNE ----------------------------------------------------------------------------------- */

/* AUTO | TUNE against a careful timing of the candidates it could have picked. */
static void check_tune(const nz_matrix_t *H, const char *name) {
    nz_matrix_t *dA = NULL;
    nz_spmv_plan_t *plan = NULL;
    nz_spmv_plan_info_t info;
    nz_matrix_info_t mi;
    NZT_OK(ctx, nz_matrix_info(ctx, &mi, H));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, H, NZ_INDEX_AUTO));
    NZT_OK(ctx, nz_spmv_plan_create(ctx, &plan, dA, NZ_OP_N, NZ_ALG_AUTO, NZ_PLAN_TUNE));
    NZT_OK(ctx, nz_spmv_plan_info(plan, &info));
    check_plan(plan, H, NZ_OP_N, name);

    /* the candidates tuning looked at: the head of the ranked list the backend accepts for a
     * tuned plan (NZ_PLAN_TUNE models reuse: the set-up budget admits the tiles) */
    nz_matrix_stats_t s;
    nzi_plan_choice_t choice;
    nzi_plan_request_t request = {NZ_BACKEND_CUDA, NZ_FORMAT_CSR, NZ_OP_N, NZ_PLAN_TUNE, NULL,
                                  0, 0, 0};
    NZT_OK(ctx, nzi_plan_row_stats(ctx, dA, NZ_OP_N, &s));
    NZT_OK(ctx, nzi_plan_choose(&s, &request, &choice));
    size_t vs = mi.value_type == NZ_F32 ? 4 : 8;
    void *dx = NULL, *dy = NULL;
    NZT_OK(ctx, nz_device_malloc(ctx, &dx, nzt_at_least_one(mi.cols) * vs));
    NZT_OK(ctx, nz_device_malloc(ctx, &dy, nzt_at_least_one(mi.rows) * vs));
    NZT_OK(ctx, nz_device_memset(ctx, dx, 0, nzt_at_least_one(mi.cols) * vs));
    double best = 1e30, chosen = -1;
    nz_alg_t best_alg = NZ_ALG_AUTO;
    int timed = 0, chosen_in_list = 0;
    printf("%s (tuned: %s, plan %.3f ms):", name, nz_alg_name(info.alg), 1e3 * info.plan_seconds);
    for (int i = 0; i < choice.count && timed < T.tune_candidates; i++) {
        nz_spmv_plan_t *cand = NULL;
        if (nz_spmv_plan_create(ctx, &cand, dA, NZ_OP_N, choice.algs[i], 0) != NZ_SUCCESS)
            continue;
        double seconds = 0;
        NZT_OK(ctx, nz_cuda_time_plan(cand, dx, dy, 31, &seconds));
        printf(" %s %.2f us", nz_alg_name(choice.algs[i]), 1e6 * seconds);
        if (seconds < best) {
            best = seconds;
            best_alg = choice.algs[i];
        }
        if (choice.algs[i] == info.alg) {
            chosen = seconds;
            chosen_in_list = 1;
        }
        timed++;
        nz_spmv_plan_destroy(&cand);
    }
    printf("\n");
    NZT_CHECK(chosen_in_list, "%s: tuned %s is not among the candidates", name,
              nz_alg_name(info.alg));
    /* How good the tuned choice is belongs to the benchmark (nz bench: planner vs exhaustive
     * best), not to a timed test: a second timing here disagrees with the tuning's own now and
     * then (the H200 once gave merge 40 us against the tuned adaptive's 53 us on rmat). So it
     * is reported, not asserted. Under compute-sanitizer no timing means anything
     * (NZ_TEST_SANITIZER keeps the plan checks only). */
    if (chosen > 1.15 * best + 3e-6)
        printf("  note: %s: tuned %s retimed at %.2f us, %s at %.2f us\n", name,
               nz_alg_name(info.alg), 1e6 * chosen, nz_alg_name(best_alg), 1e6 * best);
    if (!nzt_env_flag("NZ_TEST_SANITIZER")) {
        /* the winner alone ran tune_runs_gpu + 1 times while planning */
        NZT_CHECK(info.plan_seconds >= 0.5 * (T.tune_runs_gpu + 1) * chosen,
                  "%s: plan_seconds %.3g s cannot include tuning (one product %.3g s)", name,
                  info.plan_seconds, chosen);
    }
    NZT_OK(ctx, nz_device_free(ctx, dx));
    NZT_OK(ctx, nz_device_free(ctx, dy));
    nz_spmv_plan_destroy(&plan);
    nz_matrix_destroy(&dA);
}

static void test_tune(void) {
    nz_matrix_t *H = NULL;
    int n = quick ? 24 : 96, scale = quick ? 12 : 18;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &H, n, n, n, NZ_F64));
    check_tune(H, "laplace3d");
    nz_matrix_destroy(&H);
    NZT_OK(ctx, nz_gen_rmat(ctx, &H, scale, 16, 0, 0, 0, nzt_seed, NZ_F32));
    check_tune(H, "rmat");
    nz_matrix_destroy(&H);
    NZT_OK(ctx, nz_gen_mixed(ctx, &H, quick ? 30000 : 1000000, 8, 20, quick ? 20000 : 100000,
                             nzt_seed, NZ_F64));
    check_tune(H, "mixed");
    nz_matrix_destroy(&H);

    /* every zoo shape (empty ones too) through AUTO | TUNE, both ops */
    for (int k = 0; k < nzt_zoo_count(); k++) {
        if (!nzt_shard_take()) continue;
        nz_matrix_t *dA = NULL;
        nz_spmv_plan_t *plan = NULL;
        char label[128];
        NZT_OK(ctx, nzt_zoo_matrix(ctx, &H, k, NZ_F32, nzt_seed));
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, H, NZ_INDEX_AUTO));
        for (int op = 0; op < 2; op++) {
            snprintf(label, sizeof label, "%s tune op %c", nzt_zoo_name(k), op ? 'T' : 'N');
            nz_status_t s = nz_spmv_plan_create(ctx, &plan, dA, (nz_operation_t)op, NZ_ALG_AUTO,
                                                NZ_PLAN_TUNE | NZ_PLAN_DETERMINISTIC);
            NZT_CHECK(s == NZ_SUCCESS, "%s: plan returned %d: %s", label, (int)s,
                      nz_context_last_error(ctx));
            if (s != NZ_SUCCESS) continue;
            check_plan(plan, H, (nz_operation_t)op, label);
            nz_spmv_plan_destroy(&plan);
        }
        nz_matrix_destroy(&dA);
        nz_matrix_destroy(&H);
    }
}

/* ---- allocation failures -------------------------------------------------------------------- */

static void test_allocation_failures(void) {
    nz_matrix_t *H = NULL, *dA = NULL;
    NZT_OK(ctx, nz_gen_mixed(ctx, &H, 5000, 4, 2, 3000, nzt_seed, NZ_F64));
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, H, NZ_INDEX_AUTO));
    for (int op = 0; op < 2; op++) {
        int k;
        for (k = 1; k < 200; k++) {
            nz_alloc_stats_t before, after;
            nz_spmv_plan_t *plan = NULL;
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            nz_status_t s = nz_spmv_plan_create(ctx, &plan, dA, (nz_operation_t)op, NZ_ALG_AUTO,
                                                NZ_PLAN_TUNE);
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            if (s == NZ_SUCCESS) {
                check_plan(plan, H, (nz_operation_t)op, "after allocation failures");
                nz_spmv_plan_destroy(&plan);
                break;
            }
            NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY || s == NZ_ERR_DEVICE_OUT_OF_MEMORY,
                      "op %d, k = %d: status %d (%s)", op, k, (int)s, nz_context_last_error(ctx));
            NZT_CHECK(plan == NULL, "op %d, k = %d: a plan despite the failure", op, k);
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            NZT_CHECK(after.live_blocks == before.live_blocks && after.live_bytes == before.live_bytes,
                      "op %d, k = %d: leaked %lld blocks", op, k,
                      (long long)(after.live_blocks - before.live_blocks));
        }
        NZT_CHECK(k > 1 && k < 200, "op %d: AUTO | TUNE succeeded at k = %d", op, k);
    }
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&H);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    quick = nzt_env_flag("NZ_TEST_QUICK");
    ctx = nzt_gpu_context(quick ? " (quick mode)" : "");
    if (nzt_shard_take()) test_reproducible_table();
    test_auto();
    if (nzt_shard_take()) test_deterministic();
    test_tune();
    if (nzt_shard_take()) test_allocation_failures();
    nz_context_destroy(&ctx);
    return nzt_finish("test_planner (gpu)");
}
