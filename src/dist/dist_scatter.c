/* dist_scatter.c: a matrix held by one rank split by rows (balanced by nonzeros) and scattered;
 * distributed vectors gathered to and scattered from one rank in global order. */
#include "dist_internal.h"

#include <string.h>

/* Row blocks with about equal work: rank r starts at the first row whose prefix of
 * (nonzeros + rows) reaches r / size of the total (a row costs its entries plus its y update,
 * so that empty rows still spread). O(rows + size). */
static void partition_by_nnz(const int64_t *row_offsets, int64_t rows, int size, int64_t *part) {
    const int64_t total = row_offsets[rows] + rows;
    int64_t row = 0;
    part[0] = 0;
    for (int r = 1; r < size; r++) {
        const int64_t target = total / size * r + (total % size) * r / size;
        while (row < rows && row_offsets[row] + row < target) row++;
        part[r] = row;
    }
    part[size] = rows;
}

nz_status_t nz_dist_matrix_scatter(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                                   int root, const nz_matrix_t *A,
                                   const nz_dist_options_t *options) {
    nz_status_t status = NZ_SUCCESS;
    nz_matrix_t *csr = NULL;
    const int64_t *offsets = NULL;
    const int32_t *cols = NULL;
    const void *values = NULL;
    int64_t *row_part = NULL, *col_part = NULL, *local_offsets = NULL;
    int32_t *local_cols = NULL;
    void *local_values = NULL;
    int *counts = NULL, *displs = NULL;
    int rank = 0, size = 0;
    /* header broadcast from root: rows, cols, value type */
    int64_t header[3] = {0, 0, 0};
    if (ctx == NULL) return NZ_ERR_NULL_ARGUMENT;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (dA == NULL)
        status = nzd_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_dist_matrix_scatter: dA is NULL");
    else
        *dA = NULL;
    if (status == NZ_SUCCESS && (root < 0 || root >= size))
        status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_dist_matrix_scatter: root %d of %d",
                           root, size);
    if (status == NZ_SUCCESS && rank == root) {
        nz_matrix_info_t info;
        if (A == NULL)
            status = nzd_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_dist_matrix_scatter: A is NULL on root");
        if (status == NZ_SUCCESS) status = nzd_matrix_info(ctx, A, &info);
        if (status == NZ_SUCCESS && info.location != NZ_HOST)
            status = nzd_error(ctx, NZ_ERR_WRONG_LOCATION,
                               "nz_dist_matrix_scatter: A must be a host matrix");
        if (status == NZ_SUCCESS && info.format != NZ_FORMAT_CSR)
            status = nz_matrix_convert(ctx, &csr, A, NZ_FORMAT_CSR, NULL);
        if (status == NZ_SUCCESS) status = nzd_csr_arrays(ctx, csr != NULL ? csr : A, &offsets, &cols, &values);
        if (status == NZ_SUCCESS) {
            header[0] = info.rows;
            header[1] = info.cols;
            header[2] = (int64_t)info.value_type;
        }
    }
    status = nz_dist_agree(ctx, comm, status);
    if (status != NZ_SUCCESS) goto cleanup;
    MPI_Bcast(header, 3, MPI_INT64_T, root, comm);
    const nz_value_type_t vt = (nz_value_type_t)header[2];
    const size_t vs = nzd_value_size(vt);
    status = nz_malloc(ctx, (void **)&row_part, ((size_t)size + 1) * sizeof(int64_t));
    if (status == NZ_SUCCESS) status = nz_malloc(ctx, (void **)&counts, 2 * (size_t)size * sizeof(int));
    if (status == NZ_SUCCESS) displs = counts + size;
    if (status == NZ_SUCCESS && rank == root) {
        if (options != NULL && options->row_partition != NULL) {
            const int64_t *p = options->row_partition;
            memcpy(row_part, p, ((size_t)size + 1) * sizeof(int64_t));
            for (int r = 0; r < size && status == NZ_SUCCESS; r++)
                if (p[0] != 0 || p[r + 1] < p[r] || p[size] != header[0])
                    status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                                       "nz_dist_matrix_scatter: row_partition must rise from 0 "
                                       "to %lld", (long long)header[0]);
        } else {
            partition_by_nnz(offsets, header[0], size, row_part);
        }
        for (int r = 0; r < size && status == NZ_SUCCESS; r++) {
            int64_t nnz = offsets[row_part[r + 1]] - offsets[row_part[r]];
            if (nnz > INT32_MAX || offsets[row_part[r]] > INT32_MAX)
                status = nzd_error(ctx, NZ_ERR_UNSUPPORTED,
                                   "nz_dist_matrix_scatter: more than 2^31 - 1 nonzeros before "
                                   "or in rank %d's rows (MPI counts are int)", r);
        }
    }
    status = nz_dist_agree(ctx, comm, status);
    if (status != NZ_SUCCESS) goto cleanup;
    MPI_Bcast(row_part, size + 1, MPI_INT64_T, root, comm);
    const int64_t rows = row_part[rank + 1] - row_part[rank];
    /* this rank's nonzero count, then its offsets (rows entries; the last one is the count) */
    int64_t first_last[2] = {0, 0};
    {
        int64_t *pairs = NULL;
        if (rank == root) {
            status = nz_malloc(ctx, (void **)&pairs, 2 * (size_t)size * sizeof(int64_t));
            for (int r = 0; r < size && status == NZ_SUCCESS; r++) {
                pairs[2 * r] = offsets[row_part[r]];
                pairs[2 * r + 1] = offsets[row_part[r + 1]];
            }
        }
        status = nz_dist_agree(ctx, comm, status);
        if (status == NZ_SUCCESS)
            MPI_Scatter(pairs, 2, MPI_INT64_T, first_last, 2, MPI_INT64_T, root, comm);
        if (pairs != NULL) nz_free(ctx, pairs);
        if (status != NZ_SUCCESS) goto cleanup;
    }
    const int64_t nnz = first_last[1] - first_last[0];
    status = nzd_vec_alloc(ctx, NULL, (void **)&local_offsets, rows + 1, sizeof(int64_t),
                           "nz_dist_matrix_scatter: row offsets");
    if (status == NZ_SUCCESS)
        status = nzd_vec_alloc(ctx, NULL, (void **)&local_cols, nnz, sizeof(int32_t),
                               "nz_dist_matrix_scatter: column indices");
    if (status == NZ_SUCCESS)
        status = nzd_vec_alloc(ctx, NULL, &local_values, nnz, vs, "nz_dist_matrix_scatter: values");
    status = nz_dist_agree(ctx, comm, status);
    if (status != NZ_SUCCESS) goto cleanup;
    for (int r = 0; r < size; r++) {
        counts[r] = (int)(row_part[r + 1] - row_part[r]);
        displs[r] = (int)row_part[r];
    }
    MPI_Scatterv(offsets, counts, displs, MPI_INT64_T, local_offsets, (int)rows, MPI_INT64_T, root,
                 comm);
    for (int64_t i = 0; i < rows; i++) local_offsets[i] -= first_last[0];
    local_offsets[rows] = nnz;
    if (rank == root)
        for (int r = 0; r < size; r++) {
            counts[r] = (int)(offsets[row_part[r + 1]] - offsets[row_part[r]]);
            displs[r] = (int)offsets[row_part[r]];
        }
    MPI_Scatterv(cols, counts, displs, MPI_INT32_T, local_cols, (int)nnz, MPI_INT32_T, root, comm);
    MPI_Scatterv(values, counts, displs, nzd_mpi_type(vt), local_values, (int)nnz,
                 nzd_mpi_type(vt), root, comm);
    nz_matrix_destroy(&csr); /* root: the CSR copy is no longer needed */
    if (header[0] == header[1]) {
        status = nz_malloc(ctx, (void **)&col_part, ((size_t)size + 1) * sizeof(int64_t));
        if (status == NZ_SUCCESS) memcpy(col_part, row_part, ((size_t)size + 1) * sizeof(int64_t));
    } else {
        status = nzd_even_partition(ctx, header[1], size, &col_part);
    }
    status = nz_dist_agree(ctx, comm, status);
    if (status != NZ_SUCCESS) goto cleanup;
    status = nzd_build(ctx, dA, comm, header[0], header[1], row_part, col_part, local_offsets,
                       local_cols, vt, local_values, options);
    row_part = col_part = NULL;
cleanup:
    nz_matrix_destroy(&csr);
    nz_free(ctx, row_part);
    nz_free(ctx, col_part);
    nz_free(ctx, counts);
    nz_free(ctx, local_offsets);
    nz_free(ctx, local_cols);
    nz_free(ctx, local_values);
    return status;
}

/* counts and displacements of a distribution (int: MPI's count type). */
static nz_status_t vector_counts(const nz_dist_matrix_t *M, int columns, int **counts) {
    const int64_t *part = columns ? M->col_part : M->row_part;
    nz_status_t status = nz_malloc(M->ctx, (void **)counts, 2 * (size_t)M->size * sizeof(int));
    if (status != NZ_SUCCESS) return status;
    for (int r = 0; r < M->size; r++) {
        (*counts)[r] = (int)(part[r + 1] - part[r]);
        (*counts)[M->size + r] = (int)part[r];
    }
    if (part[M->size] > INT32_MAX)
        return nzd_error(M->ctx, NZ_ERR_UNSUPPORTED, "distributed vector: 2^31 entries or more");
    return NZ_SUCCESS;
}

nz_status_t nz_dist_vector_gather(const nz_dist_matrix_t *dA, int columns, const void *local,
                                  int root, void *global) {
    nz_status_t status = nzd_check_matrix(dA);
    int *counts = NULL;
    if (status != NZ_SUCCESS) return status;
    status = vector_counts(dA, columns, &counts);
    if (status == NZ_SUCCESS && (root < 0 || root >= dA->size))
        status = nzd_error(dA->ctx, NZ_ERR_INVALID_ARGUMENT, "nz_dist_vector_gather: root %d", root);
    if (status == NZ_SUCCESS && dA->rank == root && global == NULL)
        status = nzd_error(dA->ctx, NZ_ERR_NULL_ARGUMENT, "nz_dist_vector_gather: global is NULL on root");
    status = nz_dist_agree(dA->ctx, dA->comm, status);
    if (status == NZ_SUCCESS) {
        int error = MPI_Gatherv(local, counts[dA->rank], dA->mpi_value, global, counts,
                                counts + dA->size, dA->mpi_value, root, dA->comm);
        if (error != MPI_SUCCESS) status = nzd_mpi_error(dA->ctx, error, "nz_dist_vector_gather");
    }
    nz_free(dA->ctx, counts);
    return status;
}

nz_status_t nz_dist_vector_scatter(const nz_dist_matrix_t *dA, int columns, const void *global,
                                   int root, void *local) {
    nz_status_t status = nzd_check_matrix(dA);
    int *counts = NULL;
    if (status != NZ_SUCCESS) return status;
    status = vector_counts(dA, columns, &counts);
    if (status == NZ_SUCCESS && (root < 0 || root >= dA->size))
        status = nzd_error(dA->ctx, NZ_ERR_INVALID_ARGUMENT, "nz_dist_vector_scatter: root %d", root);
    if (status == NZ_SUCCESS && dA->rank == root && global == NULL)
        status = nzd_error(dA->ctx, NZ_ERR_NULL_ARGUMENT, "nz_dist_vector_scatter: global is NULL on root");
    status = nz_dist_agree(dA->ctx, dA->comm, status);
    if (status == NZ_SUCCESS) {
        int error = MPI_Scatterv(global, counts, counts + dA->size, dA->mpi_value, local,
                                 counts[dA->rank], dA->mpi_value, root, dA->comm);
        if (error != MPI_SUCCESS) status = nzd_mpi_error(dA->ctx, error, "nz_dist_vector_scatter");
    }
    nz_free(dA->ctx, counts);
    return status;
}
