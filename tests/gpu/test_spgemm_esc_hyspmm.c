/* test_spgemm_esc_hyspmm.c: GPU SpGEMM by ESC and hySpMM against the CPU reference, panels, failures. */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <string.h>

/*
 * Every case runs C = A B with NZ_SPGEMM_CPU (the reference) and with ESC and hySpMM, and checks
 * that the GPU result has exactly the reference's structure (row offsets and columns) and values
 * within 4 eps (terms + 2) sum |a_ik b_kj| of a double-precision product computed here. Shapes:
 * uniform random, rectangular, empty rows and columns, a product with no nonzeros, A with no
 * rows, B with no columns, a 3-D Laplacian, R-MAT graphs, real matrices (NZ_MATRIX_DIR);
 * forced multi-panel runs under a small gpu_memory_limit; allocation-failure loops.
 */

static const nz_spgemm_alg_t gpu_algs[] = {NZ_SPGEMM_ESC, NZ_SPGEMM_HYSPMM};
#define GPU_ALG_COUNT 2

/* Double-precision C = A B restricted to C's pattern check: for every row, a dense accumulator
 * of the exact (double) sums, the magnitude bound sum |a b| and the term count. Returns the
 * number of bad entries; also checks that every structurally produced column is in C and that C
 * has no column nothing produced. */
static int64_t check_values(nz_context_t *ctx, const char *what, const nz_matrix_t *A, const nz_matrix_t *B,
                            const nz_matrix_t *C, nz_value_type_t vt) {
    const int64_t *ao, *bo, *co;
    const int32_t *ac, *bc, *cc;
    const void *avp, *bvp, *cvp;
    nz_matrix_info_t ai, bi;
    nz_matrix_info(ctx, &ai, A);
    nz_matrix_info(ctx, &bi, B);
    nz_matrix_csr_arrays(ctx, &ao, &ac, &avp, A);
    nz_matrix_csr_arrays(ctx, &bo, &bc, &bvp, B);
    nz_matrix_csr_arrays(ctx, &co, &cc, &cvp, C);
    const int64_t n = bi.cols;
    double *sum = nzt_malloc((size_t)(n + 1) * sizeof(double));
    double *bound = nzt_malloc((size_t)(n + 1) * sizeof(double));
    int64_t *terms = nzt_malloc((size_t)(n + 1) * sizeof(int64_t));
    char *seen = nzt_malloc((size_t)(n + 1));
    const double eps = vt == NZ_F32 ? FLT_EPSILON : DBL_EPSILON;
    int64_t bad = 0;
#define VAL(p, k) (vt == NZ_F32 ? (double)((const float *)(p))[k] : ((const double *)(p))[k])
    memset(seen, 0, (size_t)n + 1);
    for (int64_t i = 0; i < ai.rows; i++) {
        for (int64_t q = ao[i]; q < ao[i + 1]; q++)
            for (int64_t t = bo[ac[q]]; t < bo[ac[q] + 1]; t++) {
                const int32_t j = bc[t];
                if (!seen[j]) {
                    seen[j] = 1;
                    sum[j] = bound[j] = 0.0;
                    terms[j] = 0;
                }
                sum[j] += VAL(avp, q) * VAL(bvp, t);
                bound[j] += fabs(VAL(avp, q) * VAL(bvp, t));
                terms[j]++;
            }
        int64_t produced = 0;
        for (int64_t q = co[i]; q < co[i + 1]; q++) {
            const int32_t j = cc[q];
            if (j < 0 || j >= n || !seen[j]) {
                if (bad++ < 5) fprintf(stderr, "%s: C(%lld, %d) was never produced\n", what, (long long)i, j);
                continue;
            }
            produced++;
            const double tol = 4.0 * eps * (double)(terms[j] + 2) * bound[j] + 1e-300;
            if (!(fabs(VAL(cvp, q) - sum[j]) <= tol) && bad++ < 5)
                fprintf(stderr, "%s: C(%lld, %d) = %.17g, expected %.17g (tol %.3g)\n", what,
                        (long long)i, j, VAL(cvp, q), sum[j], tol);
        }
        int64_t distinct = 0;
        for (int64_t q = ao[i]; q < ao[i + 1]; q++)
            for (int64_t t = bo[ac[q]]; t < bo[ac[q] + 1]; t++)
                if (seen[bc[t]]) {
                    seen[bc[t]] = 0;
                    distinct++;
                }
        if (distinct != produced && bad++ < 5)
            fprintf(stderr, "%s: row %lld has %lld entries, %lld columns produced\n", what,
                    (long long)i, (long long)produced, (long long)distinct);
    }
#undef VAL
    free(sum);
    free(bound);
    free(terms);
    free(seen);
    return bad;
}

/* The structure of C equals the reference's exactly, and C is canonical (sorted, no duplicates). */
static int64_t check_structure(nz_context_t *ctx, const char *what, const nz_matrix_t *C, const nz_matrix_t *R) {
    nz_matrix_info_t ci, ri;
    const int64_t *co, *ro;
    const int32_t *cc, *rc;
    const void *cv, *rv;
    nz_matrix_info(ctx, &ci, C);
    nz_matrix_info(ctx, &ri, R);
    if (ci.rows != ri.rows || ci.cols != ri.cols || ci.nnz != ri.nnz) {
        fprintf(stderr, "%s: C is %lld x %lld with %lld entries, the reference %lld x %lld with %lld\n",
                what, (long long)ci.rows, (long long)ci.cols, (long long)ci.nnz, (long long)ri.rows,
                (long long)ri.cols, (long long)ri.nnz);
        return 1;
    }
    nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C);
    nz_matrix_csr_arrays(ctx, &ro, &rc, &rv, R);
    int64_t bad = 0;
    for (int64_t i = 0; i <= ci.rows; i++)
        if (co[i] != ro[i] && bad++ < 3)
            fprintf(stderr, "%s: row offset %lld: %lld, reference %lld\n", what, (long long)i,
                    (long long)co[i], (long long)ro[i]);
    if (bad) return bad;
    for (int64_t i = 0; i < ci.rows; i++)
        for (int64_t q = co[i]; q < co[i + 1]; q++) {
            if (cc[q] != rc[q] && bad++ < 3)
                fprintf(stderr, "%s: row %lld entry %lld: column %d, reference %d\n", what,
                        (long long)i, (long long)q, cc[q], rc[q]);
            if (q > co[i] && cc[q] <= cc[q - 1] && bad++ < 3)
                fprintf(stderr, "%s: row %lld not strictly sorted\n", what, (long long)i);
        }
    return bad;
}

static int64_t expected_products(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B) {
    const int64_t *ao, *bo;
    const int32_t *ac, *bc;
    const void *v;
    nz_matrix_info_t ai;
    nz_matrix_info(ctx, &ai, A);
    nz_matrix_csr_arrays(ctx, &ao, &ac, &v, A);
    nz_matrix_csr_arrays(ctx, &bo, &bc, &v, B);
    int64_t total = 0;
    for (int64_t q = 0; q < ao[ai.rows]; q++) total += bo[ac[q] + 1] - bo[ac[q]];
    return total;
}

/* The profile of a call: the algorithm's stages in order, none negative; hySpMM's stages add up
 * to info's stage sum, and its host bandwidths are measured whenever there were products. */
static void check_profile(const char *what, const nz_spgemm_profile_t *p,
                          const nz_spgemm_info_t *info, nz_spgemm_alg_t alg) {
    static const char *const hyspmm_stages[] = {"count", "split", "reserve-c", "slots", "expand",
                                                "h2d", "multiply", "d2h", "copy-out", "assemble"};
    static const char *const esc_stages[] = {"setup", "panels", "assemble"};
    const char *const *names = alg == NZ_SPGEMM_HYSPMM ? hyspmm_stages : esc_stages;
    const int count = alg == NZ_SPGEMM_HYSPMM ? 10 : 3;
    double sum = 0.0;
    NZT_CHECK(p->alg == alg && p->wall_seconds == info->seconds, "%s: profile alg %d wall %g",
              what, (int)p->alg, p->wall_seconds);
    NZT_CHECK(p->stage_count == count, "%s: %d stages, expected %d", what, p->stage_count, count);
    for (int i = 0; i < p->stage_count && i < count; i++) {
        NZT_CHECK(strcmp(p->stage_names[i], names[i]) == 0 && p->stage_seconds[i] >= 0.0,
                  "%s: stage %d is %s %g, expected %s", what, i, p->stage_names[i],
                  p->stage_seconds[i], names[i]);
        sum += p->stage_seconds[i];
    }
    if (alg != NZ_SPGEMM_HYSPMM) return;
    NZT_CHECK(fabs(sum - info->stage_seconds_sum) <= 1e-9 * (1.0 + sum),
              "%s: stages add to %g, info says %g", what, sum, info->stage_seconds_sum);
    NZT_CHECK(info->products == 0 ||
                  (p->expand_bytes_per_second > 0.0 && p->host_copy_bytes_per_second > 0.0 &&
                   p->expand_alone_bytes_per_second > 0.0),
              "%s: host rates expand %g (alone %g) copy %g", what, p->expand_bytes_per_second,
              p->expand_alone_bytes_per_second, p->host_copy_bytes_per_second);
}

/* Both GPU algorithms on (A, B) with a memory limit (0 = none); returns the panels hySpMM used. */
static int64_t compare(nz_context_t *ctx, const char *name, const nz_matrix_t *A,
                       const nz_matrix_t *B, size_t limit) {
    nz_matrix_t *R = NULL;
    nz_spgemm_options_t opt;
    nz_spgemm_info_t info;
    nz_matrix_info_t ai;
    int64_t hyspmm_panels = 0;
    char what[256];
    nz_matrix_info(ctx, &ai, A);
    memset(&opt, 0, sizeof opt);
    opt.alg = NZ_SPGEMM_CPU;
    NZT_OK(ctx, nz_spgemm(ctx, &R, A, B, &opt, NULL));
    const int64_t products = expected_products(ctx, A, B);
    for (int a = 0; a < GPU_ALG_COUNT; a++) {
        nz_matrix_t *C = NULL;
        snprintf(what, sizeof what, "%s %s %s limit %zu", name, nz_spgemm_alg_name(gpu_algs[a]),
                 ai.value_type == NZ_F32 ? "f32" : "f64", limit);
        memset(&opt, 0, sizeof opt);
        memset(&info, 0, sizeof info);
        opt.alg = gpu_algs[a];
        opt.gpu_memory_limit = limit;
        nz_spgemm_profile_t profile;
        nz_status_t s = nz_spgemm_profile(ctx, &C, &profile, A, B, &opt, NZ_SPGEMM_PROFILE_STAGES,
                                          &info);
        NZT_CHECK(s == NZ_SUCCESS, "%s: status %d (%s)", what, (int)s, nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        check_profile(what, &profile, &info, gpu_algs[a]);
        NZT_CHECK(info.alg == gpu_algs[a], "%s: info.alg %d", what, (int)info.alg);
        NZT_CHECK(info.products == products, "%s: info.products %lld, expected %lld", what,
                  (long long)info.products, (long long)products);
        NZT_CHECK(info.panels >= 1, "%s: %lld panels", what, (long long)info.panels);
        NZT_CHECK(info.stage_seconds_sum > 0.0 && info.seconds > 0.0, "%s: times %g %g", what,
                  info.seconds, info.stage_seconds_sum);
        int64_t bad = check_structure(ctx, what, C, R);
        NZT_CHECK(bad == 0, "%s: structure differs from the CPU reference", what);
        if (bad == 0) {
            bad = check_values(ctx, what, A, B, C, ai.value_type);
            NZT_CHECK(bad == 0, "%s: %lld bad values", what, (long long)bad);
        }
        if (gpu_algs[a] == NZ_SPGEMM_HYSPMM) hyspmm_panels = info.panels;
        nz_matrix_destroy(&C);
    }
    nz_matrix_destroy(&R);
    return hyspmm_panels;
}

/* A from COO triplets (tests/data-free hand cases). */
static nz_matrix_t *coo(nz_context_t *ctx, int64_t rows, int64_t cols, int64_t nnz,
                        const int32_t *ri, const int32_t *ci, nz_value_type_t vt) {
    nz_matrix_t *M = NULL;
    double values[64];
    for (int64_t k = 0; k < nnz; k++) values[k] = 0.5 + (double)k;
    nz_matrix_t *D = NULL;
    NZT_OK(ctx, nz_matrix_create_coo(ctx, &D, rows, cols, nnz, ri, ci, NZ_F64, values));
    if (vt == NZ_F64) return D;
    NZT_OK(ctx, nz_matrix_convert_values(ctx, &M, D, vt));
    nz_matrix_destroy(&D);
    return M;
}

static void hand_cases(nz_context_t *ctx, nz_value_type_t vt) {
    /* Empty rows and columns in both; rectangular 5 x 4 times 4 x 6. */
    const int32_t ar[] = {0, 0, 2, 2, 2, 4}, ac[] = {0, 3, 1, 2, 3, 3};
    const int32_t br[] = {0, 0, 1, 3, 3, 3}, bc[] = {5, 1, 1, 0, 1, 5};
    nz_matrix_t *A = coo(ctx, 5, 4, 6, ar, ac, vt), *B = coo(ctx, 4, 6, 6, br, bc, vt);
    compare(ctx, "hand 5x4 * 4x6", A, B, 0);
    nz_matrix_destroy(&B);

    nz_matrix_destroy(&A);

    /* A product with no nonzeros: A only touches rows of B that are empty. */
    const int32_t yr[] = {0, 3, 3}, yc[] = {0, 2, 0};
    const int32_t zr[] = {1, 3}, zc[] = {0, 3};
    nz_matrix_t *Y = coo(ctx, 5, 4, 3, yr, yc, vt), *Z = coo(ctx, 4, 6, 2, zr, zc, vt);
    compare(ctx, "zero product", Y, Z, 0);
    nz_matrix_destroy(&Y);
    nz_matrix_destroy(&Z);

    /* A with no rows; B with no columns; an all-zero A. */
    nz_matrix_t *E = NULL, *F = NULL, *G = NULL, *H = NULL;
    const int64_t zero[10] = {0}; /* row offsets of up to 9 empty rows */
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &E, 0, 7, NZ_I64, zero, NULL, vt, NULL));
    NZT_OK(ctx, nz_gen_random(ctx, &F, 7, 9, 2.0, 11, vt));
    compare(ctx, "0 x 7 times 7 x 9", E, F, 0);
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &G, 9, 0, NZ_I64, zero, NULL, vt, NULL));
    compare(ctx, "7 x 9 times 9 x 0", F, G, 0);
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &H, 3, 7, NZ_I64, zero, NULL, vt, NULL));
    compare(ctx, "empty 3 x 7 times 7 x 9", H, F, 0);
    nz_matrix_destroy(&E);
    nz_matrix_destroy(&F);
    nz_matrix_destroy(&G);
    nz_matrix_destroy(&H);
}

static void generated_cases(nz_context_t *ctx, nz_value_type_t vt, uint64_t seed) {
    nz_matrix_t *A = NULL, *B = NULL;
    NZT_OK(ctx, nz_gen_random(ctx, &A, 300, 200, 7.0, seed, vt));
    NZT_OK(ctx, nz_gen_random(ctx, &B, 200, 250, 5.0, seed + 1, vt));
    compare(ctx, "random 300x200 * 200x250", A, B, 0);
    nz_matrix_destroy(&B);
    /* Sparse rows (mean 0.7): many empty rows of A and of B. */
    NZT_OK(ctx, nz_gen_random(ctx, &B, 200, 1000, 0.7, seed + 2, vt));
    compare(ctx, "random * sparse 200x1000", A, B, 0);
    nz_matrix_destroy(&B);
    nz_matrix_destroy(&A);

    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 9, 8, 7, vt));
    compare(ctx, "laplace3d 9x8x7 squared", A, A, 0);
    nz_matrix_destroy(&A);
    for (int scale = 8; scale <= 10; scale += 2) {
        char name[64];
        NZT_OK(ctx, nz_gen_rmat(ctx, &A, scale, 8, 0, 0, 0, seed + (uint64_t)scale, vt));
        snprintf(name, sizeof name, "rmat scale %d squared", scale);
        compare(ctx, name, A, A, 0);
        nz_matrix_destroy(&A);
    }
}

/* Real matrices: A A for square ones, A A^T otherwise; the smaller ones only. */
static void real_cases(nz_context_t *ctx) {
    const char *dir = nzt_matrix_dir();
    if (dir == NULL) {
        printf("real matrices: NZ_MATRIX_DIR not set, skipped\n");
        return;
    }
    char **names = NULL;
    int count = nzt_list_matrices(dir, &names), used = 0;
    const int quick = nzt_env_flag("NZ_TEST_QUICK");
    for (int m = 0; m < count && used < (quick ? 4 : 8); m++) {
        char path[4096];
        nz_matrix_t *A = NULL, *T = NULL;
        nz_matrix_info_t ai;
        snprintf(path, sizeof path, "%s/%s", dir, names[m]);
        if (nz_mm_read(ctx, &A, path, m % 2 ? NZ_F32 : NZ_F64) != NZ_SUCCESS) continue;
        nz_matrix_info(ctx, &ai, A);
        if (ai.nnz < 2000 || ai.nnz > (quick ? 60000 : 300000)) {
            nz_matrix_destroy(&A);
            continue;
        }
        used++; /* counted in every shard, so that all shards see the same cases */
        if (!nzt_shard_take()) {
            nz_matrix_destroy(&A);
            continue;
        }
        if (ai.rows == ai.cols) {
            compare(ctx, names[m], A, A, 0);
        } else {
            NZT_OK(ctx, nz_matrix_transpose(ctx, &T, A));
            compare(ctx, names[m], A, T, 0);
            nz_matrix_destroy(&T);
        }
        printf("real: %s (%lld x %lld, %lld nonzeros)\n", names[m], (long long)ai.rows,
               (long long)ai.cols, (long long)ai.nnz);
        nz_matrix_destroy(&A);
    }
    nzt_free_names(names, count);
}

/* Small memory limits force row panels: the smallest power-of-two limit (from 16 KB) each
 * algorithm accepts must still give the reference's C, in several panels. */
static void panel_cases(nz_context_t *ctx, nz_value_type_t vt, uint64_t seed) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 10, 8, 0, 0, 0, seed, vt));
    for (int a = 0; a < GPU_ALG_COUNT; a++) {
        nz_spgemm_options_t opt;
        nz_spgemm_info_t info;
        nz_matrix_t *C = NULL;
        size_t limit = 16384;
        nz_status_t s = NZ_ERR_DEVICE_OUT_OF_MEMORY;
        memset(&opt, 0, sizeof opt);
        opt.alg = gpu_algs[a];
        for (; limit < ((size_t)1 << 32); limit *= 2) {
            opt.gpu_memory_limit = limit;
            memset(&info, 0, sizeof info);
            s = nz_spgemm(ctx, &C, A, A, &opt, &info);
            if (s != NZ_ERR_DEVICE_OUT_OF_MEMORY) break;
        }
        NZT_CHECK(s == NZ_SUCCESS, "%s: status %d (%s)", nz_spgemm_alg_name(gpu_algs[a]), (int)s,
                  nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        printf("%s %s: smallest limit %zu bytes: %lld panels, peak %lld device bytes, "
               "%lld products\n",
               nz_spgemm_alg_name(gpu_algs[a]), vt == NZ_F32 ? "f32" : "f64", limit,
               (long long)info.panels, (long long)info.peak_device_bytes, (long long)info.products);
        NZT_CHECK(info.panels >= 4, "%s: only %lld panels at the smallest limit",
                  nz_spgemm_alg_name(gpu_algs[a]), (long long)info.panels);
        NZT_CHECK(info.peak_device_bytes <= (int64_t)limit, "%s: peak %lld over the limit %zu",
                  nz_spgemm_alg_name(gpu_algs[a]), (long long)info.peak_device_bytes, limit);
        nz_matrix_destroy(&C);
        /* The same limit and twice it, through the full comparison. */
        char name[64];
        snprintf(name, sizeof name, "rmat 10 panels (%s)", nz_spgemm_alg_name(gpu_algs[a]));
        compare(ctx, name, A, A, limit * 2);
    }
    nz_matrix_destroy(&A);

    /* hySpMM in many panels on a 3-D Laplacian (rows of equal cost). */
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 12, 12, 12, vt));
    int64_t panels = compare(ctx, "laplace3d 12^3 under 1 MB", A, A, (size_t)1 << 20);
    NZT_CHECK(panels >= 4, "laplace3d under 1 MB: %lld hySpMM panels", (long long)panels);
    nz_matrix_destroy(&A);
}

/* Fail the k-th allocation (host, pinned or device) for k = 1, 2, ... until the call succeeds:
 * each failure must be a clean out-of-memory status with nothing leaked. */
static void failure_loop(nz_context_t *ctx, nz_spgemm_alg_t alg, size_t limit) {
    nz_matrix_t *A = NULL, *B = NULL;
    nz_alloc_stats_t before, after;
    NZT_OK(ctx, nz_gen_random(ctx, &A, 120, 90, 6.0, 5, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &B, 90, 140, 6.0, 6, NZ_F64));
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
    int64_t k, failures = 0;
    for (k = 1; k < 1000; k++) {
        nz_spgemm_options_t opt;
        nz_matrix_t *C = NULL;
        memset(&opt, 0, sizeof opt);
        opt.alg = alg;
        opt.gpu_memory_limit = limit;
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
        nz_status_t s = nz_spgemm(ctx, &C, A, B, &opt, NULL);
        NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
        if (s == NZ_SUCCESS) {
            nz_matrix_destroy(&C);
            break;
        }
        failures++;
        NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY || s == NZ_ERR_DEVICE_OUT_OF_MEMORY,
                  "%s: failing allocation %lld: status %d (%s)", nz_spgemm_alg_name(alg),
                  (long long)k, (int)s, nz_context_last_error(ctx));
        NZT_CHECK(C == NULL, "%s: C set on failure", nz_spgemm_alg_name(alg));
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
        NZT_CHECK(after.live_blocks == before.live_blocks && after.live_bytes == before.live_bytes,
                  "%s: failing allocation %lld leaked %lld blocks, %lld bytes",
                  nz_spgemm_alg_name(alg), (long long)k,
                  (long long)(after.live_blocks - before.live_blocks),
                  (long long)(after.live_bytes - before.live_bytes));
    }
    NZT_CHECK(k < 1000, "%s: never succeeded", nz_spgemm_alg_name(alg));
    NZT_CHECK(failures >= 10, "%s: only %lld allocation points", nz_spgemm_alg_name(alg),
              (long long)failures);
    printf("%s: %lld allocation points failed cleanly (limit %zu)\n", nz_spgemm_alg_name(alg),
           (long long)failures, limit);
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
    NZT_CHECK(after.live_blocks == before.live_blocks, "%s: leak after the loop",
              nz_spgemm_alg_name(alg));
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&B);
}

/* A larger product for the record: hySpMM's overlap (seconds / sum of stage times). */
static void overlap_report(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *C = NULL;
    nz_spgemm_options_t opt;
    nz_spgemm_info_t info;
    nz_spgemm_profile_t profile;
    /* a timing report: NZ_TEST_QUICK (compute-sanitizer) takes a small problem */
    const int n = nzt_env_flag("NZ_TEST_QUICK") ? 16 : 96;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, n, n, n, NZ_F64));
    for (int a = 0; a < GPU_ALG_COUNT; a++) {
        memset(&opt, 0, sizeof opt);
        memset(&info, 0, sizeof info);
        opt.alg = gpu_algs[a];
        NZT_OK(ctx, nz_spgemm_profile(ctx, &C, &profile, A, A, &opt, NZ_SPGEMM_PROFILE_STAGES,
                                      &info));
        check_profile("overlap report", &profile, &info, gpu_algs[a]);
        printf("  stages ms:");
        for (int i = 0; i < profile.stage_count; i++)
            printf(" %s %.2f", profile.stage_names[i], 1e3 * profile.stage_seconds[i]);
        if (profile.host_copy_bytes_per_second > 0.0)
            printf(" | host GB/s expand %.2f copy-out %.2f memcpy %.2f",
                   1e-9 * profile.expand_bytes_per_second, 1e-9 * profile.copy_out_bytes_per_second,
                   1e-9 * profile.host_copy_bytes_per_second);
        printf("\n");
        printf("laplace3d %d^3 squared, %s: %lld products, %lld panels, %.4f s, stage sum %.4f s, "
               "overlap %.3f (symbolic %.4f, numeric %.4f, transfer %.4f)\n",
               n, nz_spgemm_alg_name(gpu_algs[a]), (long long)info.products, (long long)info.panels,
               info.seconds, info.stage_seconds_sum, info.seconds / info.stage_seconds_sum,
               info.symbolic_seconds, info.numeric_seconds, info.transfer_seconds);
        nz_matrix_destroy(&C);
    }
    nz_matrix_destroy(&A);
}

int main(int argc, char **argv) {
    nz_context_t *ctx = NULL;
    nzt_init(argc, argv);
    if (nz_device_count() == 0) NZT_SKIP("no CUDA device");
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_set_device(ctx, 0, NULL));
    const nz_value_type_t types[] = {NZ_F64, NZ_F32};
    for (int t = 0; t < 2; t++) {
        if (nzt_shard_take()) hand_cases(ctx, types[t]);
        if (nzt_shard_take()) generated_cases(ctx, types[t], nzt_seed + (uint64_t)t);
        if (nzt_shard_take()) panel_cases(ctx, types[t], nzt_seed + 7);
    }
    real_cases(ctx);
    if (nzt_shard_take()) failure_loop(ctx, NZ_SPGEMM_ESC, 0);
    if (nzt_shard_take()) failure_loop(ctx, NZ_SPGEMM_HYSPMM, 0);
    if (nzt_shard_take()) failure_loop(ctx, NZ_SPGEMM_HYSPMM, 262144);
    if (nzt_shard_take()) overlap_report(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spgemm_esc_hyspmm");
}
