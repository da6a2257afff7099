/* spmv.c: public SpMV entry points: check arguments once, resolve the algorithm, call a backend. */
#include "nzi.h"
#include "backend.h"
#include "ops_common.h"
#include "plan_internal.h"

#include <string.h>

nz_status_t nz_spmv_list(nz_format_t *format, nz_alg_t *alg, nz_backend_t backend, int index) {
    if (format == NULL || alg == NULL) return NZ_ERR_NULL_ARGUMENT;
    const nzi_backend_t *table = nzi_backend_get(backend);
    if (table == NULL) return NZ_ERR_INVALID_ARGUMENT;
    int seen = 0;
    for (int f = 0; f < NZ_FORMAT_COUNT; f++)
        for (int i = 1; nzi_alg_at(i) != NZ_ALG_AUTO; i++) {
            if (!table->spmv_supports((nz_format_t)f, nzi_alg_at(i))) continue;
            if (seen++ == index) {
                *format = (nz_format_t)f;
                *alg = nzi_alg_at(i);
                return NZ_SUCCESS;
            }
        }
    return NZ_ERR_INVALID_ARGUMENT;
}

nz_status_t nz_spmv_plan_create(nz_context_t *ctx, nz_spmv_plan_t **plan, const nz_matrix_t *A,
                                nz_operation_t op, nz_alg_t alg, unsigned flags) {
    nz_status_t status;
    nz_spmv_plan_t *P = NULL;
    NZI_TRY(nzi_plan_check_start(ctx, plan, A, op, "nz_spmv_plan_create"));
    if (flags & ~NZI_SPMV_PLAN_FLAGS)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_spmv_plan_create: unknown flags 0x%x",
                         flags);
    const nzi_backend_t *table = nzi_backend_of(A);
    if (alg != NZ_ALG_AUTO && !table->spmv_supports(A->format, alg))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "algorithm %s is not available for %s on the %s",
                         nz_alg_name(alg), nz_format_name(A->format), table->name);

    P = (nz_spmv_plan_t *)nzi_calloc(ctx, 1, sizeof *P);
    if (P == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate an SpMV plan");
    P->magic = NZI_PLAN_MAGIC;
    P->ctx = ctx;
    P->A = A;
    P->op = op;
    P->alg = alg;
    P->flags = flags;
    P->backend = table->id;
    P->ops = table;
    /* NZ_ALG_AUTO: the planner (src/plan) picks, tunes if asked, and sets the plan up; its
     * statistics and tuning count as plan time. */
    double t0 = nzi_wtime();
    if (alg == NZ_ALG_AUTO)
        NZI_CHECK(nzi_plan_auto(P));
    else
        NZI_CHECK(table->spmv_plan_setup(P));
    P->plan_seconds = nzi_wtime() - t0;
    if ((flags & NZ_PLAN_DETERMINISTIC) && !P->reproducible) {
        status = nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                           "algorithm %s is not bitwise reproducible, but NZ_PLAN_DETERMINISTIC "
                           "was asked for", nz_alg_name(P->alg));
        goto cleanup;
    }
    *plan = P;
    return NZ_SUCCESS;
cleanup:
    if (P->state != NULL) table->spmv_plan_release(P);
    P->magic = NZI_DEAD_MAGIC;
    nzi_free(ctx, P);
    return status;
}

nz_status_t nz_spmv_execute(nz_spmv_plan_t *plan, double alpha, const void *x, double beta,
                            void *y) {
    if (plan == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (plan->magic != NZI_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *A = plan->A;
    int64_t xlen, ylen;
    NZI_TRY(nzi_plan_operand_rows(ctx, A, plan->op, "nz_spmv_execute", &xlen, &ylen));
    if ((x == NULL && xlen > 0) || (y == NULL && ylen > 0))
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_spmv_execute: x or y is NULL");
    const size_t vs = nzi_value_size(A->value_type);
    if (nzi_ranges_overlap(x, (size_t)xlen * vs, y, (size_t)ylen * vs))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_spmv_execute: x and y overlap in memory (y would be overwritten while "
                         "x is read); use separate arrays");
    return plan->ops->spmv_execute(plan, alpha, x, beta, y);
}

nz_status_t nz_spmv_plan_destroy(nz_spmv_plan_t **plan) {
    if (plan == NULL || *plan == NULL) return NZ_SUCCESS;
    nz_spmv_plan_t *P = *plan;
    if (P->magic != NZI_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    P->ops->spmv_plan_release(P);
    P->magic = NZI_DEAD_MAGIC;
    nzi_free(P->ctx, P);
    *plan = NULL;
    return NZ_SUCCESS;
}

nz_status_t nz_spmv_plan_info(const nz_spmv_plan_t *plan, nz_spmv_plan_info_t *info) {
    if (plan == NULL || info == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (plan->magic != NZI_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    memset(info, 0, sizeof *info);
    info->format = plan->A->format;
    info->alg = plan->alg;
    info->backend = plan->backend;
    info->reproducible = plan->reproducible;
    info->vector_width = plan->vector_width;
    info->vector_warps = plan->vector_warps > 1 ? plan->vector_warps : 1;
    info->plan_seconds = plan->plan_seconds;
    info->workspace_bytes = plan->workspace_bytes;
    info->flags = plan->flags;
    info->layout_parts = plan->layout_parts > 0 ? plan->layout_parts : 1;
    return NZ_SUCCESS;
}

nz_status_t nz_spmv(nz_context_t *ctx, const nz_matrix_t *A, nz_alg_t alg, double alpha,
                    const void *x, double beta, void *y) {
    nz_spmv_plan_t *plan = NULL;
    NZI_TRY(nz_spmv_plan_create(ctx, &plan, A, NZ_OP_N, alg, 0));
    nz_status_t status = nz_spmv_execute(plan, alpha, x, beta, y);
    nz_spmv_plan_destroy(&plan);
    return status;
}

/* ---- device matrices and memory ------------------------------------------------------------ */

/* Device matrices and memory belong to the CUDA backend (its stubs without CUDA). */
static const nzi_backend_t *device_backend(void) { return nzi_backend_get(NZ_BACKEND_CUDA); }

static nz_status_t need_device(nz_context_t *ctx, const char *what) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (ctx->cuda == NULL)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE,
                         "%s: the context is not bound to a CUDA device (nz_context_set_device)",
                         what);
    return NZ_SUCCESS;
}

nz_status_t nz_matrix_to_device(nz_context_t *ctx, nz_matrix_t **dA, const nz_matrix_t *A,
                                nz_index_type_t offset_type) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    NZI_TRY(need_device(ctx, "nz_matrix_to_device"));
    if (dA == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_matrix_to_device: dA is NULL");
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->location != NZ_HOST)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION, "nz_matrix_to_device: A is already on the device");
    /* CSR, COO, ELL, SELL, HYB, BSR and DIA live on the device; CSC has no GPU kernel */
    if (A->format == NZ_FORMAT_CSC)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_matrix_to_device: %s matrices are not supported on the device; "
                         "convert to csr", nz_format_name(A->format));
    if (offset_type != NZ_INDEX_AUTO && offset_type != NZ_I32 && offset_type != NZ_I64)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_matrix_to_device: offset_type must be NZ_INDEX_AUTO, NZ_I32 or NZ_I64, "
                         "not %d", (int)offset_type);
    /* the backend takes the width in bits, 0 for automatic */
    int offset_bits = offset_type == NZ_INDEX_AUTO ? 0 : offset_type == NZ_I32 ? 32 : 64;
    if (offset_bits == 32 && A->format == NZ_FORMAT_CSR && A->nnz > INT32_MAX)
        return nzi_error(ctx, NZ_ERR_OVERFLOW,
                         "nz_matrix_to_device: %lld nonzeros do not fit 32-bit row offsets",
                         (long long)A->nnz);
    NZI_TRY(nzi_matrix_new(ctx, &M, A->format, A->value_type, A->rows, A->cols, A->nnz));
    M->location = NZ_DEVICE;
    NZI_CHECK(device_backend()->matrix_upload(ctx, M, A, offset_bits));
    *dA = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

nz_status_t nz_matrix_to_host(nz_context_t *ctx, nz_matrix_t **A, const nz_matrix_t *dA) {
    NZI_TRY(need_device(ctx, "nz_matrix_to_host"));
    if (A == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_matrix_to_host: A is NULL");
    NZI_TRY(nzi_check_matrix(ctx, dA, "dA"));
    if (dA->location != NZ_DEVICE)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION, "nz_matrix_to_host: dA is a host matrix");
    if (dA->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_matrix_to_host: dA is a device %s matrix; only device csr matrices "
                         "are copied back", nz_format_name(dA->format));
    return device_backend()->matrix_download(ctx, A, dA);
}

nz_status_t nz_matrix_wrap_csr_device(nz_context_t *ctx, nz_matrix_t **A, int64_t rows,
                                      int64_t cols, int64_t nnz, nz_index_type_t offset_type,
                                      const void *row_offsets, const int32_t *col_indices,
                                      nz_value_type_t value_type, const void *values,
                                      int validate) {
    nz_status_t status;
    nz_matrix_t *M = NULL;
    const char *what = "nz_matrix_wrap_csr_device";
    NZI_TRY(need_device(ctx, what));
    if (A == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: A is NULL", what);
    NZI_TRY(nzi_check_dims(ctx, rows, cols, what));
    if (!nzi_valid_value_type(value_type))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: invalid value type", what);
    if (offset_type != NZ_I32 && offset_type != NZ_I64)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: invalid offset type", what);
    if (nnz < 0 || (offset_type == NZ_I32 && nnz > INT32_MAX))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: nnz %lld invalid for the offset type",
                         what, (long long)nnz);
    if (row_offsets == NULL || (nnz > 0 && (col_indices == NULL || values == NULL)))
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: a device array is NULL", what);
    NZI_TRY(nzi_matrix_new(ctx, &M, NZ_FORMAT_CSR, value_type, rows, cols, nnz));
    M->location = NZ_DEVICE;
    M->device.offset_type = offset_type;
    M->device.row_offsets = (void *)row_offsets;
    M->device.col_indices = (int32_t *)col_indices;
    M->device.values = (void *)values;
    M->device.borrowed = true;
    if (validate) NZI_CHECK(device_backend()->matrix_validate(ctx, M));
    *A = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    return status;
}

nz_status_t nz_device_malloc(nz_context_t *ctx, void **ptr, size_t bytes) {
    NZI_TRY(need_device(ctx, "nz_device_malloc"));
    if (ptr == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_device_malloc: ptr is NULL");
    return device_backend()->mem_alloc(ctx, ptr, bytes, "nz_device_malloc");
}

nz_status_t nz_device_free(nz_context_t *ctx, void *ptr) {
    NZI_TRY(need_device(ctx, "nz_device_free"));
    device_backend()->mem_free(ctx, ptr, (size_t)-1); /* size looked up by the backend */
    return NZ_SUCCESS;
}

nz_status_t nz_device_copy_from_host(nz_context_t *ctx, void *device_dst, const void *host_src,
                                     size_t bytes) {
    NZI_TRY(need_device(ctx, "nz_device_copy_from_host"));
    if (bytes > 0 && (device_dst == NULL || host_src == NULL))
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_device_copy_from_host: NULL pointer");
    return device_backend()->mem_copy(ctx, device_dst, host_src, bytes, NZI_H2D);
}

nz_status_t nz_device_copy_to_host(nz_context_t *ctx, void *host_dst, const void *device_src,
                                   size_t bytes) {
    NZI_TRY(need_device(ctx, "nz_device_copy_to_host"));
    if (bytes > 0 && (host_dst == NULL || device_src == NULL))
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_device_copy_to_host: NULL pointer");
    return device_backend()->mem_copy(ctx, host_dst, device_src, bytes, NZI_D2H);
}

nz_status_t nz_device_copy(nz_context_t *ctx, void *device_dst, const void *device_src,
                           size_t bytes) {
    NZI_TRY(need_device(ctx, "nz_device_copy"));
    if (bytes > 0 && (device_dst == NULL || device_src == NULL))
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_device_copy: NULL pointer");
    return device_backend()->mem_copy(ctx, device_dst, device_src, bytes, NZI_D2D);
}

nz_status_t nz_device_memset(nz_context_t *ctx, void *dst, int byte, size_t bytes) {
    NZI_TRY(need_device(ctx, "nz_device_memset"));
    if (bytes > 0 && dst == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_device_memset: NULL pointer");
    return device_backend()->mem_set(ctx, dst, byte, bytes);
}

nz_status_t nz_context_synchronize(nz_context_t *ctx) {
    NZI_TRY(nzi_check_context(ctx));
    if (ctx->cuda == NULL) return NZ_SUCCESS;
    return device_backend()->synchronize(ctx);
}
