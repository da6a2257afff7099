/* test_spgemm_api.c (GPU): SpGEMM's AUTO choice with a device, device operands (both or neither,
 * hash only), allocation failures of every GPU algorithm and nz_spgemm_profile. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static const nz_spgemm_alg_t gpu_algs[] = {NZ_SPGEMM_HASH, NZ_SPGEMM_ESC, NZ_SPGEMM_HYSPMM};
#define NUM_GPU_ALGS 3

/* AUTO with a device is the hash algorithm; device operands: both or neither, hash only. */
static void test_device_operands(nz_context_t *ctx) {
    /* AUTO with a device is the hash algorithm */
    {
        nz_matrix_t *A = NULL, *C = NULL;
        nz_spgemm_info_t info;
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 20, 20, NZ_F64));
        NZT_OK(ctx, nz_spgemm(ctx, &C, A, A, NULL, &info));
        NZT_CHECK(info.alg == NZ_SPGEMM_HASH && info.peak_device_bytes > 0,
                  "auto chose %s, peak %lld", nz_spgemm_alg_name(info.alg),
                  (long long)info.peak_device_bytes);
        nz_matrix_destroy(&C);
        nz_matrix_destroy(&A);
    }
    /* device operands: both or neither, hash only */
    {
        nz_matrix_t *A = NULL, *dA = NULL, *C = NULL;
        nz_spgemm_options_t opt;
        memset(&opt, 0, sizeof opt);
        NZT_OK(ctx, nz_gen_laplace2d(ctx, &A, 20, 20, NZ_F64));
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
        NZT_CHECK(nz_spgemm(ctx, &C, A, dA, NULL, NULL) == NZ_ERR_WRONG_LOCATION && C == NULL,
                  "host A, device B: %s", nz_context_last_error(ctx));
        NZT_CHECK(nz_spgemm(ctx, &C, dA, A, NULL, NULL) == NZ_ERR_WRONG_LOCATION && C == NULL,
                  "device A, host B: %s", nz_context_last_error(ctx));
        for (int g = 1; g < NUM_GPU_ALGS; g++) {
            opt.alg = gpu_algs[g];
            NZT_CHECK(nz_spgemm(ctx, &C, dA, dA, &opt, NULL) == NZ_ERR_UNSUPPORTED && C == NULL,
                      "device operands, %s: %s", nz_spgemm_alg_name(gpu_algs[g]),
                      nz_context_last_error(ctx));
        }
        opt.alg = NZ_SPGEMM_CPU;
        NZT_CHECK(nz_spgemm(ctx, &C, dA, dA, &opt, NULL) == NZ_ERR_UNSUPPORTED && C == NULL,
                  "device operands, cpu: %s", nz_context_last_error(ctx));
        NZT_CHECK(nz_matrix_to_host(ctx, &C, A) == NZ_ERR_WRONG_LOCATION && C == NULL,
                  "nz_matrix_to_host of a host matrix");
        nz_matrix_destroy(&dA);
        nz_matrix_destroy(&A);
    }
}

/* Fail the k-th allocation (host or device) for k = 1, 2, ... until the call succeeds; every
 * failure is an out-of-memory status, C stays NULL, nothing leaks. In core and in panels. */
static void test_allocation_failures(nz_context_t *ctx) {
    nz_matrix_t *A = NULL;
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 9, 8, 0, 0, 0, nzt_seed + 51, NZ_F64));
    /* g == NUM_GPU_ALGS: hash on device operands (device C; in core only, so no budget) */
    for (int g = 0; g <= NUM_GPU_ALGS; g++) {
        const bool device = g == NUM_GPU_ALGS;
        const char *name = device ? "hash (device)" : nz_spgemm_alg_name(gpu_algs[g]);
        for (int limited = 0; limited < (device ? 1 : 2); limited++) {
            if (!nzt_shard_take()) continue; /* one algorithm x budget per shard slot */
            nz_spgemm_options_t opt;
            nz_matrix_t *dA = NULL;
            memset(&opt, 0, sizeof opt);
            opt.alg = device ? NZ_SPGEMM_HASH : gpu_algs[g];
            opt.gpu_memory_limit = limited ? (size_t)400000 : 0;
            if (device) NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, NZ_I32));
            nz_alloc_stats_t before, after;
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
            int k, done = 0;
            for (k = 1; k < 400 && !done; k++) {
                nz_matrix_t *C = NULL;
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
                nz_status_t s = device ? nz_spgemm(ctx, &C, dA, dA, &opt, NULL)
                                       : nz_spgemm(ctx, &C, A, A, &opt, NULL);
                NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
                if (s == NZ_SUCCESS) {
                    done = 1;
                    nz_matrix_destroy(&C);
                } else if (limited && s == NZ_ERR_DEVICE_OUT_OF_MEMORY && g != 0 && k == 1) {
                    done = 2; /* the algorithm refuses this budget outright */
                } else {
                    NZT_CHECK((s == NZ_ERR_OUT_OF_MEMORY || s == NZ_ERR_DEVICE_OUT_OF_MEMORY) &&
                                  C == NULL,
                              "%s k %d: status %d: %s", name, k, (int)s,
                              nz_context_last_error(ctx));
                }
                NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
                NZT_CHECK(after.live_blocks == before.live_blocks &&
                              after.live_bytes == before.live_bytes,
                          "%s k %d: %lld blocks / %lld bytes leaked", name,
                          k, (long long)(after.live_blocks - before.live_blocks),
                          (long long)(after.live_bytes - before.live_bytes));
            }
            NZT_CHECK(done != 0, "%s%s: never succeeded in %d tries", name,
                      limited ? " (limited)" : "", k - 1);
            nz_matrix_destroy(&dA);
        }
    }
    nz_matrix_destroy(&A);
}

/* nz_spgemm_profile with the hash algorithm: the stages from "budget" to "release" (host C) and,
 * with NZ_SPGEMM_PROFILE_BINS, every bin's rows and C entries: the symbolic rows are the rows
 * with products, the numeric entries add up to nnz(C); C equals the unprofiled one. */
static void test_profile(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *C = NULL, *D = NULL;
    nz_spgemm_profile_t p;
    nz_spgemm_info_t info;
    nz_spgemm_options_t opt;
    nz_matrix_info_t ci;
    memset(&opt, 0, sizeof opt);
    opt.alg = NZ_SPGEMM_HASH;
    NZT_OK(ctx, nz_gen_rmat(ctx, &A, 12, 8, 0, 0, 0, nzt_seed + 71, NZ_F64));
    NZT_OK(ctx, nz_spgemm_profile(ctx, &C, &p, A, A, &opt,
                                  NZ_SPGEMM_PROFILE_STAGES | NZ_SPGEMM_PROFILE_BINS, &info));
    NZT_OK(ctx, nz_matrix_info(ctx, &ci, C));
    NZT_CHECK(p.alg == NZ_SPGEMM_HASH && p.stage_count >= 6 &&
                  strcmp(p.stage_names[0], "budget") == 0 &&
                  strcmp(p.stage_names[p.stage_count - 1], "release") == 0,
              "hash stages: %d", p.stage_count);
    int64_t rows_with_products = 0, sym_rows = 0, entries = 0;
    {
        const int64_t *ao;
        const int32_t *ac;
        const void *av;
        NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &ao, &ac, &av, A));
        const int64_t *bo = ao; /* B = A */
        for (int64_t i = 0; i < ci.rows; i++) {
            int64_t products = 0;
            for (int64_t k = ao[i]; k < ao[i + 1]; k++) products += bo[ac[k] + 1] - bo[ac[k]];
            rows_with_products += products > 0;
        }
    }
    for (int b = 0; b < p.bin_count; b++) {
        sym_rows += p.symbolic_rows[b];
        entries += p.numeric_entries[b];
    }
    NZT_CHECK(p.bin_count == 11 && sym_rows == rows_with_products && entries == ci.nnz,
              "bins %d: symbolic rows %lld (expected %lld), entries %lld (nnz %lld)", p.bin_count,
              (long long)sym_rows, (long long)rows_with_products, (long long)entries,
              (long long)ci.nnz);
    NZT_OK(ctx, nz_spgemm(ctx, &D, A, A, &opt, NULL));
    NZT_CHECK(nzt_csr_identical(ctx, C, D, 0), "profiled C differs in structure");
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&D);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    if (nz_device_count() == 0) NZT_SKIP("no CUDA device");
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_set_device(ctx, 0, NULL));
    test_device_operands(ctx);
    test_allocation_failures(ctx);
    if (nzt_shard_take()) test_profile(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spgemm_api");
}
