/* dist_common.c: errors agreed across ranks, value helpers, allocation, the GPU binding. */
#include "dist_internal.h"
#include "dist_cuda.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#define NZD_MESSAGE_BYTES 512

nz_status_t nzd_error(nz_context_t *ctx, nz_status_t status, const char *fmt, ...) {
    char message[NZD_MESSAGE_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    (void)nz_context_set_error(ctx, status, message);
    return status;
}

nz_status_t nzd_check_matrix(const nz_dist_matrix_t *dA) {
    if (dA == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (dA->magic != NZD_MATRIX_MAGIC) return NZ_ERR_INVALID_HANDLE;
    return NZ_SUCCESS;
}

nz_status_t nzd_mpi_error(nz_context_t *ctx, int mpi_error, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(mpi_error, text, &length) != MPI_SUCCESS) snprintf(text, sizeof text, "?");
    return nzd_error(ctx, NZ_ERR_IO, "%s: MPI error %d (%s)", what, mpi_error, text);
}

nz_status_t nzd_cuda_status(nz_context_t *ctx, int cuda_error, const char *what) {
    if (cuda_error == 0) return NZ_SUCCESS;
    return nzd_error(ctx, NZ_ERR_DEVICE, "%s: CUDA error %d (%s)", what, cuda_error,
                     nzd_cuda_error_string(cuda_error));
}

MPI_Datatype nzd_mpi_type(nz_value_type_t value_type) {
    return value_type == NZ_F32 ? MPI_FLOAT : MPI_DOUBLE;
}

size_t nzd_value_size(nz_value_type_t value_type) {
    return value_type == NZ_F32 ? sizeof(float) : sizeof(double);
}

double nzd_get(const void *values, nz_value_type_t value_type, int64_t i) {
    return value_type == NZ_F32 ? (double)((const float *)values)[i] : ((const double *)values)[i];
}

void nzd_set(void *values, nz_value_type_t value_type, int64_t i, double v) {
    if (value_type == NZ_F32)
        ((float *)values)[i] = (float)v;
    else
        ((double *)values)[i] = v;
}

/* At least one byte, so that an empty part still has a valid pointer. */
nz_status_t nzd_vec_alloc(nz_context_t *ctx, const nz_dist_device_t *device, void **ptr,
                          int64_t count, size_t size, const char *what) {
    *ptr = NULL;
    if (count < 0 || (count > 0 && (uint64_t)count > (SIZE_MAX - 16) / size))
        return nzd_error(ctx, NZ_ERR_OVERFLOW, "%s: %lld x %zu bytes overflows", what,
                         (long long)count, size);
    size_t bytes = (size_t)count * size + 16;
    nz_status_t status = device != NULL ? nz_device_malloc(ctx, ptr, bytes)
                                        : nz_malloc(ctx, ptr, bytes);
    if (status != NZ_SUCCESS) {
        char inner[NZD_MESSAGE_BYTES];
        snprintf(inner, sizeof inner, "%s", nz_context_last_error(ctx));
        return nzd_error(ctx, status, "%s: %s", what, inner);
    }
    return NZ_SUCCESS;
}

void nzd_vec_free(nz_context_t *ctx, const nz_dist_device_t *device, void *ptr) {
    if (ptr == NULL) return;
    if (device != NULL)
        (void)nz_device_free(ctx, ptr);
    else
        (void)nz_free(ctx, ptr);
}

nz_status_t nzd_even_partition(nz_context_t *ctx, int64_t n, int size, int64_t **part) {
    nz_status_t status = nz_malloc(ctx, (void **)part, ((size_t)size + 1) * sizeof(int64_t));
    if (status != NZ_SUCCESS) return status;
    /* n < 2^31 (the row limit) and r < 2^31: r n fits in int64 */
    for (int r = 0; r <= size; r++) (*part)[r] = n * (int64_t)r / size;
    return NZ_SUCCESS;
}

/* Every rank learns the lowest status, and the message of the lowest rank that had it. The
 * statuses travel as (status, rank) pairs reduced with MPI_MINLOC: one allreduce on success,
 * plus one broadcast of the message on failure. */
nz_status_t nz_dist_agree(nz_context_t *ctx, MPI_Comm comm, nz_status_t status) {
    int rank = 0, error;
    struct {
        int value;
        int rank;
    } mine, lowest;
    error = MPI_Comm_rank(comm, &rank);
    if (error != MPI_SUCCESS) return nzd_mpi_error(ctx, error, "nz_dist_agree: MPI_Comm_rank");
    mine.value = (int)status;
    mine.rank = rank;
    error = MPI_Allreduce(&mine, &lowest, 1, MPI_2INT, MPI_MINLOC, comm);
    if (error != MPI_SUCCESS) return nzd_mpi_error(ctx, error, "nz_dist_agree: MPI_Allreduce");
    if (lowest.value == NZ_SUCCESS || lowest.value > 0) {
        /* success or a caveat everywhere: keep each rank's own message */
        return (nz_status_t)lowest.value;
    }
    char message[NZD_MESSAGE_BYTES];
    memset(message, 0, sizeof message);
    if (rank == lowest.rank) {
        const char *own = nz_context_last_error(ctx);
        if (own == NULL || own[0] == '\0') own = nz_status_string((nz_status_t)lowest.value);
        snprintf(message, sizeof message, "rank %d: %s", rank, own);
    }
    error = MPI_Bcast(message, (int)sizeof message, MPI_CHAR, lowest.rank, comm);
    if (error != MPI_SUCCESS) return nzd_mpi_error(ctx, error, "nz_dist_agree: MPI_Bcast");
    message[sizeof message - 1] = '\0';
    return nz_context_set_error(ctx, (nz_status_t)lowest.value, message);
}

/* ---- wrappers of the public functions being renamed (one call site each) ---- */

nz_status_t nzd_csr_arrays(nz_context_t *ctx, const nz_matrix_t *A, const int64_t **row_offsets,
                           const int32_t **col_indices, const void **values) {
    return nz_matrix_csr_arrays(ctx, row_offsets, col_indices, values, A);
}

nz_status_t nzd_matrix_info(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_info_t *info) {
    return nz_matrix_info(ctx, info, A);
}

nz_status_t nzd_to_device(nz_context_t *ctx, nz_matrix_t **dA, const nz_matrix_t *A) {
    return nz_matrix_to_device(ctx, dA, A, NZ_INDEX_AUTO);
}

nz_status_t nzd_copy_to_device(nz_context_t *ctx, void *dst, const void *src, size_t bytes) {
    return nz_device_copy_from_host(ctx, dst, src, bytes);
}

nz_status_t nzd_copy_to_host(nz_context_t *ctx, void *dst, const void *src, size_t bytes) {
    return nz_device_copy_to_host(ctx, dst, src, bytes);
}

/* ---- GPU ranks ---- */

/* Open MPI answers at run time whether its transports accept device pointers; other MPIs (or an
 * Open MPI built without the extension) are treated as not CUDA-aware, which is always safe. */
static int mpi_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

nz_status_t nz_dist_device_bind(nz_context_t *ctx, MPI_Comm comm, int force_staging,
                                nz_dist_device_t **device) {
    nz_status_t status = NZ_SUCCESS;
    nz_dist_device_t *binding = NULL;
    MPI_Comm node = MPI_COMM_NULL;
    int local_rank = 0, count = 0, error;
    if (ctx == NULL || device == NULL) return NZ_ERR_NULL_ARGUMENT;
    *device = NULL;
    /* the rank among the ranks of this node (shared-memory domain) picks the device */
    error = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (error != MPI_SUCCESS) {
        status = nzd_mpi_error(ctx, error, "nz_dist_device_bind: MPI_Comm_split_type");
        goto agree;
    }
    MPI_Comm_rank(node, &local_rank);
    count = nz_device_count();
    if (!nzd_cuda_built() || count <= 0) {
        int world = 0;
        char host[MPI_MAX_PROCESSOR_NAME];
        int host_length = 0;
        MPI_Comm_rank(comm, &world);
        if (MPI_Get_processor_name(host, &host_length) != MPI_SUCCESS) snprintf(host, sizeof host, "?");
        status = nzd_error(ctx, NZ_ERR_NO_DEVICE,
                           "--backend cuda: no CUDA device for rank %d on host %s (%s)", world,
                           host, nzd_cuda_built() ? "no device visible" : "built without CUDA");
        goto agree;
    }
    binding = (nz_dist_device_t *)calloc(1, sizeof *binding);
    if (binding == NULL) {
        status = nzd_error(ctx, NZ_ERR_OUT_OF_MEMORY, "nz_dist_device_bind: binding");
        goto agree;
    }
    binding->magic = NZD_DEVICE_MAGIC;
    binding->cuda_device = local_rank % count;
    binding->cuda_aware = force_staging ? 0 : mpi_cuda_aware();
    status = nzd_cuda_status(ctx, nzd_stream_create(binding->cuda_device, &binding->stream),
                             "nz_dist_device_bind: creating the stream");
    if (status == NZ_SUCCESS)
        status = nzd_cuda_status(ctx, nzd_stream_create(binding->cuda_device,
                                                        &binding->copy_stream),
                                 "nz_dist_device_bind: creating the copy stream");
    if (status == NZ_SUCCESS)
        status = nzd_cuda_status(ctx, nzd_event_create(&binding->pack_done),
                                 "nz_dist_device_bind: creating an event");
    if (status == NZ_SUCCESS)
        status = nzd_cuda_status(ctx, nzd_event_create(&binding->packed),
                                 "nz_dist_device_bind: creating an event");
    if (status == NZ_SUCCESS)
        status = nzd_cuda_status(ctx, nzd_event_create(&binding->halo_ready),
                                 "nz_dist_device_bind: creating an event");
    if (status == NZ_SUCCESS)
        status = nz_context_set_device(ctx, binding->cuda_device, binding->stream);
agree:
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
    status = nz_dist_agree(ctx, comm, status);
    if (status == NZ_SUCCESS) {
        *device = binding;
        binding = NULL;
    }
    nz_dist_device_release(&binding);
    return status;
}

nz_status_t nz_dist_device_release(nz_dist_device_t **device) {
    if (device == NULL || *device == NULL) return NZ_SUCCESS;
    if ((*device)->magic != NZD_DEVICE_MAGIC) return NZ_ERR_INVALID_HANDLE;
    if ((*device)->halo_ready != NULL) (void)nzd_event_destroy((*device)->halo_ready);
    if ((*device)->packed != NULL) (void)nzd_event_destroy((*device)->packed);
    if ((*device)->pack_done != NULL) (void)nzd_event_destroy((*device)->pack_done);
    if ((*device)->copy_stream != NULL) (void)nzd_stream_destroy((*device)->copy_stream);
    if ((*device)->stream != NULL) (void)nzd_stream_destroy((*device)->stream);
    (*device)->magic = 0;
    free(*device);
    *device = NULL;
    return NZ_SUCCESS;
}

nz_status_t nz_dist_device_info(const nz_dist_device_t *device, int *cuda_device,
                                int *cuda_aware) {
    if (device == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (device->magic != NZD_DEVICE_MAGIC) return NZ_ERR_INVALID_HANDLE;
    if (cuda_device != NULL) *cuda_device = device->cuda_device;
    if (cuda_aware != NULL) *cuda_aware = device->cuda_aware;
    return NZ_SUCCESS;
}
