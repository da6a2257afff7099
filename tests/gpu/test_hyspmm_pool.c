/* test_hyspmm_pool.c: hySpMM's pinned staging kept across calls, C grown in place, panel sizes from measured rates. */
#include "testutil.h"

#include <string.h>

/*
 * hySpMM parks its pipeline (streams, pinned staging) in the context between calls, sizes the
 * next call's panels from the stage rates it measured, and writes C in place, growing its arrays
 * panel by panel. None of that may change C: every call here is checked against the CPU
 * reference (structure exactly, values within a few ulps of the double result) and against the
 * first hySpMM call on the same operands (bitwise: rows are computed independently of panels).
 * Sequences: the same product twice (the second takes the parked pipeline and the measured
 * panel size), a larger product (the parked pipeline is too small and is replaced), a smaller one
 * in the other precision (taken again), many panels under a small memory limit (C grows many
 * times); the context's allocation statistics are the same before and after every call (a parked
 * pipeline is not counted), and destroying a context with a parked pipeline frees it
 * (compute-sanitizer's leak check in scripts/gpu-check.sh).
 */

static nz_matrix_t *product(nz_context_t *ctx, const nz_matrix_t *A, nz_spgemm_alg_t alg,
                            size_t limit, nz_spgemm_info_t *info) {
    nz_spgemm_options_t opt;
    nz_matrix_t *C = NULL;
    memset(&opt, 0, sizeof opt);
    opt.alg = alg;
    opt.gpu_memory_limit = limit;
    nz_status_t s = nz_spgemm(ctx, &C, A, A, &opt, info);
    NZT_CHECK(s == NZ_SUCCESS, "%s: status %d (%s)", nz_spgemm_alg_name(alg), (int)s,
              nz_context_last_error(ctx));
    return C;
}

/* Values of C against R (same structure) within tol relative to max(|r|, 1). */
static int64_t value_errors(nz_context_t *ctx, const nz_matrix_t *C, const nz_matrix_t *R,
                            nz_value_type_t vt, double tol) {
    const int64_t *co, *ro;
    const int32_t *cc, *rc;
    const void *cv, *rv;
    nz_matrix_info_t info;
    int64_t bad = 0;
    nz_matrix_info(ctx, &info, C);
    nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C);
    nz_matrix_csr_arrays(ctx, &ro, &rc, &rv, R);
    for (int64_t q = 0; q < info.nnz; q++) {
        const double c = vt == NZ_F32 ? (double)((const float *)cv)[q] : ((const double *)cv)[q];
        const double r = vt == NZ_F32 ? (double)((const float *)rv)[q] : ((const double *)rv)[q];
        const double scale = r < 0 ? (-r > 1.0 ? -r : 1.0) : (r > 1.0 ? r : 1.0);
        if (!(c - r <= tol * scale && r - c <= tol * scale) && bad++ < 3)
            fprintf(stderr, "entry %lld: %.17g, reference %.17g\n", (long long)q, c, r);
    }
    return bad;
}

/* One hySpMM call on A A, checked against the CPU reference and (if given) a previous C. */
static void one_call(nz_context_t *ctx, const char *what, const nz_matrix_t *A, size_t limit,
                     const nz_matrix_t *previous, nz_matrix_t **keep) {
    nz_alloc_stats_t before, after;
    nz_spgemm_info_t info;
    nz_matrix_info_t ai;
    nz_matrix_info(ctx, &ai, A);
    const double tol = ai.value_type == NZ_F32 ? 1e-4 : 1e-12;
    nz_matrix_t *R = product(ctx, A, NZ_SPGEMM_CPU, 0, &info);
    /* A call leaves nothing counted behind but C (a parked pipeline is the context's). */
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
    nz_matrix_t *C = product(ctx, A, NZ_SPGEMM_HYSPMM, limit, &info);
    nz_matrix_destroy(&C);
    NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
    NZT_CHECK(after.live_blocks == before.live_blocks && after.live_bytes == before.live_bytes,
              "%s: %lld blocks / %lld bytes left after the call", what,
              (long long)(after.live_blocks - before.live_blocks),
              (long long)(after.live_bytes - before.live_bytes));
    C = product(ctx, A, NZ_SPGEMM_HYSPMM, limit, &info); /* again, the pipeline parked */
    if (C != NULL && R != NULL) {
        NZT_CHECK(nzt_csr_identical(ctx, C, R, 0), "%s: structure differs from the CPU reference",
                  what);
        NZT_CHECK(value_errors(ctx, C, R, ai.value_type, tol) == 0,
                  "%s: values differ from the CPU reference", what);
        if (previous != NULL)
            NZT_CHECK(nzt_csr_identical(ctx, C, previous, 1),
                      "%s: not bitwise identical to the first call", what);
        printf("%s: %lld panels, %lld products\n", what, (long long)info.panels,
               (long long)info.products);
    }
    nz_matrix_destroy(&R);
    if (keep != NULL)
        *keep = C;
    else
        nz_matrix_destroy(&C);
}

int main(int argc, char **argv) {
    nz_context_t *ctx = NULL;
    nz_matrix_t *small = NULL, *large = NULL, *small32 = NULL, *first = NULL;
    nzt_init(argc, argv);
    if (nz_device_count() == 0) NZT_SKIP("no CUDA device");
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_set_device(ctx, 0, NULL));
    NZT_OK(ctx, nz_gen_random(ctx, &small, 3000, 3000, 12.0, nzt_seed, NZ_F64));
    NZT_OK(ctx, nz_gen_rmat(ctx, &large, 13, 16, 0.57, 0.19, 0.19, nzt_seed + 1, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &small32, 2000, 2000, 10.0, nzt_seed + 2, NZ_F32));

    one_call(ctx, "small f64 (fresh pipeline)", small, 0, NULL, &first);
    one_call(ctx, "small f64 (parked pipeline, measured panel size)", small, 0, first, NULL);
    one_call(ctx, "larger f64 (pipeline replaced)", large, 0, NULL, NULL);
    one_call(ctx, "small f32 after f64 (parked pipeline)", small32, 0, NULL, NULL);
    /* Under a 4 MB limit the small product takes many panels: C grows many times. */
    one_call(ctx, "small f64, many panels", small, (size_t)4 << 20, first, NULL);
    nz_matrix_destroy(&first);
    nz_matrix_destroy(&small);
    nz_matrix_destroy(&large);
    nz_matrix_destroy(&small32);
    nz_context_destroy(&ctx); /* frees the parked pipeline */

    /* A context destroyed right after its only call. */
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_set_device(ctx, 0, NULL));
    NZT_OK(ctx, nz_gen_random(ctx, &small, 500, 500, 6.0, nzt_seed + 3, NZ_F64));
    one_call(ctx, "fresh context", small, 0, NULL, NULL);
    nz_matrix_destroy(&small);
    nz_context_destroy(&ctx);
    return nzt_finish("test_hyspmm_pool");
}
