/* dist_internal.h: the distributed matrix, the device binding and helpers shared in src/mpi. */
#ifndef NZD_INTERNAL_H
#define NZD_INTERNAL_H

#include "nonzero_dist.h"

#include <stddef.h>
#include <stdint.h>

#define NZD_MATRIX_MAGIC 0x4e5a444d41545231ull /* "NZDMATR1" */
#define NZD_DEVICE_MAGIC 0x4e5a444445563031ull /* "NZDDEV01" */

struct nz_dist_device {
    uint64_t magic;
    int cuda_device;
    int cuda_aware;         /* MPI takes device pointers (and staging is not forced) */
    void *stream;           /* cudaStream_t, owned: the context's stream, every kernel */
    void *copy_stream;      /* cudaStream_t, owned: staged halo copies to the device */
    void *pack_done;        /* cudaEvent_t: the pack kernel (and all before it) finished */
    void *packed;           /* cudaEvent_t: the send buffer is packed (and staged) */
    void *halo_ready;       /* cudaEvent_t: the staged halo is on the device */
};

/* One neighbour list of the pattern: ranks[k] exchanges counts[k] values starting at displs[k]
 * of the packed send buffer or of the halo. */
typedef struct nzd_links {
    int count;
    int *ranks;
    int *counts;
    int64_t *displs;
} nzd_links_t;

struct nz_dist_matrix {
    uint64_t magic;
    nz_context_t *ctx;
    MPI_Comm comm;          /* a duplicate: the layer's messages never mix with the caller's */
    int rank, size;
    nz_dist_device_t *device;  /* NULL: host */
    nz_value_type_t value_type;
    MPI_Datatype mpi_value;
    size_t value_size;
    int64_t global_rows, global_cols, global_nnz;
    int64_t *row_part, *col_part;   /* size + 1 offsets each */
    int64_t rows, cols;             /* local rows, local x entries */
    int64_t local_nnz, nonlocal_nnz;
    int64_t halo;                   /* halo entries */
    int64_t send_total;             /* packed send entries */
    nz_matrix_t *local, *nonlocal;  /* in the matrix's location; NULL when empty */
    nz_spmv_plan_t *local_plan, *nonlocal_plan;
    void *diag;                     /* the diagonal of the local rows (in the location) */
    nzd_links_t recv, send;
    int32_t *send_indices;          /* send_total local x indices (host) */
    int32_t *d_send_indices;        /* the same on the device */
    void *send_buf, *halo_buf;      /* host, or device */
    void *send_stage, *halo_stage;  /* pinned host staging (device, not CUDA-aware) */
    MPI_Request *requests;          /* recv.count + send.count */
};

/* Set the context's message (printf-style) and return status. */
nz_status_t nzd_error(nz_context_t *ctx, nz_status_t status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
nz_status_t nzd_check_matrix(const nz_dist_matrix_t *dA);
/* Set the message for a failed MPI call and return NZ_ERR_IO (a transport error). */
nz_status_t nzd_mpi_error(nz_context_t *ctx, int mpi_error, const char *what);
nz_status_t nzd_cuda_status(nz_context_t *ctx, int cuda_error, const char *what);
MPI_Datatype nzd_mpi_type(nz_value_type_t value_type);
size_t nzd_value_size(nz_value_type_t value_type);
double nzd_get(const void *values, nz_value_type_t value_type, int64_t i);
void nzd_set(void *values, nz_value_type_t value_type, int64_t i, double v);
/* Allocation in the matrix's location. */
nz_status_t nzd_vec_alloc(nz_context_t *ctx, const nz_dist_device_t *device, void **ptr,
                          int64_t count, size_t size, const char *what);
void nzd_vec_free(nz_context_t *ctx, const nz_dist_device_t *device, void *ptr);

/* Even split of n items over size parts: part[r] = r n / size. */
nz_status_t nzd_even_partition(nz_context_t *ctx, int64_t n, int size, int64_t **part);

/* Build this rank's part from its rows in global numbering (the rows of row_part[rank] ..
 * row_part[rank + 1]). Collective. Takes ownership of row_part and col_part (nz_malloc'ed on
 * ctx, size + 1 entries) whatever the outcome. */
nz_status_t nzd_build(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                      int64_t global_rows, int64_t global_cols, int64_t *row_part,
                      int64_t *col_part, const int64_t *row_offsets, const int32_t *col_indices,
                      nz_value_type_t value_type, const void *values,
                      const nz_dist_options_t *options);

/* One wrapper per public function being renamed in the core (see docs/DISTRIBUTED.md). */
nz_status_t nzd_csr_arrays(nz_context_t *ctx, const nz_matrix_t *A, const int64_t **row_offsets,
                           const int32_t **col_indices, const void **values);
nz_status_t nzd_matrix_info(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_info_t *info);
nz_status_t nzd_to_device(nz_context_t *ctx, nz_matrix_t **dA, const nz_matrix_t *A);
nz_status_t nzd_copy_to_device(nz_context_t *ctx, void *dst, const void *src, size_t bytes);
nz_status_t nzd_copy_to_host(nz_context_t *ctx, void *dst, const void *src, size_t bytes);

#endif /* NZD_INTERNAL_H */
