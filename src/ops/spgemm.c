/* spgemm.c: public SpGEMM entry points: check the operands once, resolve the algorithm, call a backend. */
#include "nzi.h"
#include "backend.h"

#include <string.h>

static const char *const alg_names[] = {"auto", "cpu", "esc", "hyspmm", "hash"};
#define ALG_COUNT ((int)(sizeof alg_names / sizeof alg_names[0]))

const char *nz_spgemm_alg_name(nz_spgemm_alg_t alg) {
    if ((int)alg < 0 || (int)alg >= ALG_COUNT) return "unknown";
    return alg_names[alg];
}

nz_status_t nz_spgemm_alg_from_name(nz_spgemm_alg_t *alg, const char *name) {
    if (alg == NULL || name == NULL) return NZ_ERR_NULL_ARGUMENT;
    for (int a = 0; a < ALG_COUNT; a++)
        if (strcmp(name, alg_names[a]) == 0) {
            *alg = (nz_spgemm_alg_t)a;
            return NZ_SUCCESS;
        }
    return NZ_ERR_INVALID_ARGUMENT;
}

nz_status_t nz_spgemm_alg_backend(nz_backend_t *backend, nz_spgemm_alg_t alg) {
    if (backend == NULL) return NZ_ERR_NULL_ARGUMENT;
    switch (alg) {
    case NZ_SPGEMM_CPU: *backend = NZ_BACKEND_CPU; return NZ_SUCCESS;
    case NZ_SPGEMM_ESC:
    case NZ_SPGEMM_HYSPMM:
    case NZ_SPGEMM_HASH: *backend = NZ_BACKEND_CUDA; return NZ_SUCCESS;
    case NZ_SPGEMM_AUTO:
        *backend = nz_device_count() > 0 ? NZ_BACKEND_CUDA : NZ_BACKEND_CPU;
        return NZ_SUCCESS;
    default: return NZ_ERR_INVALID_ARGUMENT;
    }
}

/* The algorithm's entry point from the backend table that runs it, NULL when no backend of this
 * build has it. */
static nzi_spgemm_entry_t alg_entry(nz_spgemm_alg_t alg) {
    nzi_spgemm_entry_t run = nzi_backend_get(NZ_BACKEND_CPU)->spgemm(alg);
    return run != NULL ? run : nzi_backend_get(NZ_BACKEND_CUDA)->spgemm(alg);
}

/* Check the operands once (handles, locations, value types, shapes), bring non-CSR host formats
 * to CSR (device operands must be CSR and run the hash algorithm), resolve AUTO (the default
 * algorithm of the backend the context computes on, asked of the backend table), run the
 * algorithm and time the whole call. The peak device bytes of the call are measured by lowering
 * the context's high-water mark to the current use for the duration of the call and restoring
 * the larger of the two afterwards. */
static nz_status_t spgemm_run(nz_context_t *ctx, nz_matrix_t **C, nz_spgemm_profile_t *profile,
                              const nz_matrix_t *A, const nz_matrix_t *B,
                              const nz_spgemm_options_t *options, nz_spgemm_info_t *info) {
    nz_status_t status = NZ_SUCCESS;
    const nz_matrix_t *a_csr = NULL, *b_csr = NULL;
    nz_matrix_t *a_owned = NULL, *b_owned = NULL, *result = NULL;
    nz_spgemm_options_t opt;
    nz_spgemm_info_t local;
    nzi_spgemm_entry_t run;
    int64_t saved_peak, start_bytes;
    double t0 = nzi_wtime();

    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (C == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_spgemm: output handle C is NULL");
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    NZI_TRY(nzi_check_matrix(ctx, B, "B"));
    if (A->location != B->location)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION,
                         "nz_spgemm: A is a %s matrix and B a %s one; both must be host matrices "
                         "(host C) or both device matrices (device C)",
                         A->location == NZ_HOST ? "host" : "device",
                         B->location == NZ_HOST ? "host" : "device");
    if (A->location == NZ_DEVICE && (A->format != NZ_FORMAT_CSR || B->format != NZ_FORMAT_CSR))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_spgemm: %s is a device %s matrix; device operands must be csr",
                         A->format != NZ_FORMAT_CSR ? "A" : "B",
                         nz_format_name(A->format != NZ_FORMAT_CSR ? A->format : B->format));
    if (A->value_type != B->value_type)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_spgemm: A holds %s and B %s values; convert one of them "
                         "(nz_matrix_convert_values)",
                         A->value_type == NZ_F32 ? "single" : "double",
                         B->value_type == NZ_F32 ? "single" : "double");
    if (A->cols != B->rows)
        return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH,
                         "nz_spgemm: A is %lld x %lld and B is %lld x %lld (A's columns must equal "
                         "B's rows)",
                         (long long)A->rows, (long long)A->cols, (long long)B->rows,
                         (long long)B->cols);
    if (options != NULL) {
        opt = *options;
    } else {
        memset(&opt, 0, sizeof opt);
    }
    if ((int)opt.alg < 0 || (int)opt.alg >= ALG_COUNT)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_spgemm: invalid algorithm %d",
                         (int)opt.alg);
    if (opt.threads < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_spgemm: negative thread count %d",
                         opt.threads);
    if (opt.threads > 0) opt.threads = nzi_resolve_threads(opt.threads); /* the online CPUs */
    if (opt.alg == NZ_SPGEMM_AUTO) opt.alg = nzi_backend_of_context(ctx)->spgemm_default_alg;
    if (A->location == NZ_DEVICE && opt.alg != NZ_SPGEMM_HASH)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_spgemm: algorithm %s takes host matrices; device matrices run the "
                         "hash algorithm (alg hash or auto)",
                         nz_spgemm_alg_name(opt.alg));
    if (opt.alg != NZ_SPGEMM_CPU && ctx->cuda == NULL)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE,
                         "nz_spgemm: algorithm %s runs on the GPU and the context is not bound to "
                         "a device (nz_context_set_device)",
                         nz_spgemm_alg_name(opt.alg));
    run = alg_entry(opt.alg);
    if (run == NULL)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE,
                         "nz_spgemm: algorithm %s is not available in this build (no CUDA backend)",
                         nz_spgemm_alg_name(opt.alg));

    if (A->location == NZ_DEVICE) { /* device CSR, used as it is */
        a_csr = A;
        b_csr = B;
    } else {
        NZI_CHECK(nzi_as_csr(ctx, A, &a_csr, &a_owned));
        NZI_CHECK(nzi_as_csr(ctx, B, &b_csr, &b_owned));
    }
    memset(&local, 0, sizeof local);
    local.alg = opt.alg;
    saved_peak = ctx->peak_device_bytes;
    start_bytes = ctx->device_bytes;
    ctx->peak_device_bytes = ctx->device_bytes;
    if (profile != NULL) profile->alg = opt.alg;
    ctx->profile_probe_seconds = 0.0;
    status = run(ctx, &result, a_csr, b_csr, &opt, &local, profile);
    local.peak_device_bytes = ctx->peak_device_bytes - start_bytes;
    if (saved_peak > ctx->peak_device_bytes) ctx->peak_device_bytes = saved_peak;
    if (status < 0) goto cleanup;
    local.seconds = nzi_wtime() - t0 - ctx->profile_probe_seconds;
    if (profile != NULL) profile->wall_seconds = local.seconds;
    *C = result;
    if (info != NULL) *info = local;

cleanup:
    nzi_matrix_free(a_owned);
    nzi_matrix_free(b_owned);
    return status;
}

nz_status_t nz_spgemm(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                      const nz_matrix_t *B, const nz_spgemm_options_t *options,
                      nz_spgemm_info_t *info) {
    return spgemm_run(ctx, C, NULL, A, B, options, info);
}

/* The profile is zeroed before anything is checked, so a failed call leaves no stale data. */
nz_status_t nz_spgemm_profile(nz_context_t *ctx, nz_matrix_t **C, nz_spgemm_profile_t *profile,
                              const nz_matrix_t *A, const nz_matrix_t *B,
                              const nz_spgemm_options_t *options, unsigned flags,
                              nz_spgemm_info_t *info) {
    const unsigned known = NZ_SPGEMM_PROFILE_STAGES | NZ_SPGEMM_PROFILE_BINS;
    NZI_TRY(nzi_check_context(ctx));
    if (profile == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_spgemm_profile: profile is NULL");
    memset(profile, 0, sizeof *profile);
    if ((flags & ~known) != 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_spgemm_profile: unknown flags 0x%x",
                         flags & ~known);
    profile->flags = flags;
    return spgemm_run(ctx, C, profile, A, B, options, info);
}
