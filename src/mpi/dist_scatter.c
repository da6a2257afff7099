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

/* One scatter's state between its phases (nz_dist_matrix_scatter). */
typedef struct scatter {
    nz_context_t *ctx;
    MPI_Comm comm;
    int root, rank, size;
    /* root: A's CSR arrays (of csr, a CSR copy, where A is in another format) */
    nz_matrix_t *csr;
    const int64_t *offsets;
    const int32_t *cols;
    const void *values;
    int64_t header[3];          /* broadcast from root: rows, cols, value type */
    int64_t *row_part, *col_part;
    int *counts, *displs;       /* MPI counts and displacements (displs = counts + size) */
    int64_t first_last[2];      /* A's offsets at this rank's first row and past its last */
    int64_t *local_offsets;     /* this rank's rows, in CSR */
    int32_t *local_cols;
    void *local_values;
} scatter_t;

/* The arguments and, on root, A's CSR arrays; the header broadcast from root. */
static nz_status_t scatter_header(scatter_t *s, nz_dist_matrix_t **dA, const nz_matrix_t *A) {
    nz_context_t *ctx = s->ctx;
    nz_status_t status = NZ_SUCCESS;
    if (dA == NULL)
        status = nzd_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_dist_matrix_scatter: dA is NULL");
    else
        *dA = NULL;
    if (status == NZ_SUCCESS && (s->root < 0 || s->root >= s->size))
        status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_dist_matrix_scatter: root %d of %d",
                           s->root, s->size);
    if (status == NZ_SUCCESS && s->rank == s->root) {
        nz_matrix_info_t info;
        if (A == NULL)
            status = nzd_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_dist_matrix_scatter: A is NULL on root");
        if (status == NZ_SUCCESS) status = nzd_matrix_info(ctx, A, &info);
        if (status == NZ_SUCCESS && info.location != NZ_HOST)
            status = nzd_error(ctx, NZ_ERR_WRONG_LOCATION,
                               "nz_dist_matrix_scatter: A must be a host matrix");
        if (status == NZ_SUCCESS && info.format != NZ_FORMAT_CSR)
            status = nz_matrix_convert(ctx, &s->csr, A, NZ_FORMAT_CSR, NULL);
        if (status == NZ_SUCCESS)
            status = nzd_csr_arrays(ctx, s->csr != NULL ? s->csr : A, &s->offsets, &s->cols,
                                    &s->values);
        if (status == NZ_SUCCESS) {
            s->header[0] = info.rows;
            s->header[1] = info.cols;
            s->header[2] = (int64_t)info.value_type;
        }
    }
    status = nz_dist_agree(ctx, s->comm, status);
    if (status != NZ_SUCCESS) return status;
    MPI_Bcast(s->header, 3, MPI_INT64_T, s->root, s->comm);
    return NZ_SUCCESS;
}

/* The row partition: the caller's (checked) or balanced by nonzeros, chosen on root, where
 * every rank's nonzeros must fit MPI's int counts; broadcast from root. */
static nz_status_t scatter_partition(scatter_t *s, const nz_dist_options_t *options) {
    nz_context_t *ctx = s->ctx;
    const int size = s->size;
    const int64_t *offsets = s->offsets;
    nz_status_t status =
        nz_malloc(ctx, (void **)&s->row_part, ((size_t)size + 1) * sizeof(int64_t));
    if (status == NZ_SUCCESS)
        status = nz_malloc(ctx, (void **)&s->counts, 2 * (size_t)size * sizeof(int));
    if (status == NZ_SUCCESS) s->displs = s->counts + size;
    if (status == NZ_SUCCESS && s->rank == s->root) {
        int64_t *row_part = s->row_part;
        if (options != NULL && options->row_partition != NULL) {
            const int64_t *p = options->row_partition;
            memcpy(row_part, p, ((size_t)size + 1) * sizeof(int64_t));
            for (int r = 0; r < size && status == NZ_SUCCESS; r++)
                if (p[0] != 0 || p[r + 1] < p[r] || p[size] != s->header[0])
                    status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                                       "nz_dist_matrix_scatter: row_partition must rise from 0 "
                                       "to %lld", (long long)s->header[0]);
        } else {
            partition_by_nnz(offsets, s->header[0], size, row_part);
        }
        for (int r = 0; r < size && status == NZ_SUCCESS; r++) {
            int64_t nnz = offsets[row_part[r + 1]] - offsets[row_part[r]];
            if (nnz > INT32_MAX || offsets[row_part[r]] > INT32_MAX)
                status = nzd_error(ctx, NZ_ERR_UNSUPPORTED,
                                   "nz_dist_matrix_scatter: more than 2^31 - 1 nonzeros before "
                                   "or in rank %d's rows (MPI counts are int)", r);
        }
    }
    status = nz_dist_agree(ctx, s->comm, status);
    if (status != NZ_SUCCESS) return status;
    MPI_Bcast(s->row_part, size + 1, MPI_INT64_T, s->root, s->comm);
    return NZ_SUCCESS;
}

/* This rank's nonzero range (first_last, scattered from root) and its local CSR arrays. */
static nz_status_t scatter_local_arrays(scatter_t *s) {
    nz_context_t *ctx = s->ctx;
    const int64_t *row_part = s->row_part;
    const int64_t rows = row_part[s->rank + 1] - row_part[s->rank];
    const size_t vs = nzd_value_size((nz_value_type_t)s->header[2]);
    nz_status_t status = NZ_SUCCESS;
    int64_t *pairs = NULL;
    if (s->rank == s->root) {
        status = nz_malloc(ctx, (void **)&pairs, 2 * (size_t)s->size * sizeof(int64_t));
        for (int r = 0; r < s->size && status == NZ_SUCCESS; r++) {
            pairs[2 * r] = s->offsets[row_part[r]];
            pairs[2 * r + 1] = s->offsets[row_part[r + 1]];
        }
    }
    status = nz_dist_agree(ctx, s->comm, status);
    if (status == NZ_SUCCESS)
        MPI_Scatter(pairs, 2, MPI_INT64_T, s->first_last, 2, MPI_INT64_T, s->root, s->comm);
    if (pairs != NULL) nz_free(ctx, pairs);
    if (status != NZ_SUCCESS) return status;
    const int64_t nnz = s->first_last[1] - s->first_last[0];
    status = nzd_vec_alloc(ctx, NULL, (void **)&s->local_offsets, rows + 1, sizeof(int64_t),
                           "nz_dist_matrix_scatter: row offsets");
    if (status == NZ_SUCCESS)
        status = nzd_vec_alloc(ctx, NULL, (void **)&s->local_cols, nnz, sizeof(int32_t),
                               "nz_dist_matrix_scatter: column indices");
    if (status == NZ_SUCCESS)
        status = nzd_vec_alloc(ctx, NULL, &s->local_values, nnz, vs,
                               "nz_dist_matrix_scatter: values");
    return nz_dist_agree(ctx, s->comm, status);
}

/* Root's rows to their ranks: the offsets (rebased to this rank's first nonzero), then the
 * column indices and values. */
static void scatter_entries(scatter_t *s) {
    const int64_t *row_part = s->row_part;
    const int64_t *offsets = s->offsets;
    const int64_t rows = row_part[s->rank + 1] - row_part[s->rank];
    const int64_t nnz = s->first_last[1] - s->first_last[0];
    const MPI_Datatype mpi_value = nzd_mpi_type((nz_value_type_t)s->header[2]);
    for (int r = 0; r < s->size; r++) {
        s->counts[r] = (int)(row_part[r + 1] - row_part[r]);
        s->displs[r] = (int)row_part[r];
    }
    MPI_Scatterv(offsets, s->counts, s->displs, MPI_INT64_T, s->local_offsets, (int)rows,
                 MPI_INT64_T, s->root, s->comm);
    for (int64_t i = 0; i < rows; i++) s->local_offsets[i] -= s->first_last[0];
    s->local_offsets[rows] = nnz;
    if (s->rank == s->root)
        for (int r = 0; r < s->size; r++) {
            s->counts[r] = (int)(offsets[row_part[r + 1]] - offsets[row_part[r]]);
            s->displs[r] = (int)offsets[row_part[r]];
        }
    MPI_Scatterv(s->cols, s->counts, s->displs, MPI_INT32_T, s->local_cols, (int)nnz, MPI_INT32_T,
                 s->root, s->comm);
    MPI_Scatterv(s->values, s->counts, s->displs, mpi_value, s->local_values, (int)nnz, mpi_value,
                 s->root, s->comm);
}

/* The column partition (the row partition for a square matrix, else even) and the distributed
 * matrix, which takes the partitions and the local arrays. */
static nz_status_t scatter_build(scatter_t *s, nz_dist_matrix_t **dA,
                                 const nz_dist_options_t *options) {
    nz_context_t *ctx = s->ctx;
    const size_t part_bytes = ((size_t)s->size + 1) * sizeof(int64_t);
    nz_status_t status;
    nz_matrix_destroy(&s->csr); /* root: the CSR copy is no longer needed */
    if (s->header[0] == s->header[1]) {
        status = nz_malloc(ctx, (void **)&s->col_part, part_bytes);
        if (status == NZ_SUCCESS) memcpy(s->col_part, s->row_part, part_bytes);
    } else {
        status = nzd_even_partition(ctx, s->header[1], s->size, &s->col_part);
    }
    status = nz_dist_agree(ctx, s->comm, status);
    if (status != NZ_SUCCESS) return status;
    status = nzd_build(ctx, dA, s->comm, s->header[0], s->header[1], s->row_part, s->col_part,
                       s->local_offsets, s->local_cols, (nz_value_type_t)s->header[2],
                       s->local_values, options);
    s->row_part = s->col_part = NULL;
    return status;
}

/* Header, partition, local arrays, the entries, then the distributed matrix: the phases above,
 * each ending in a status every rank agrees on. */
nz_status_t nz_dist_matrix_scatter(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                                   int root, const nz_matrix_t *A,
                                   const nz_dist_options_t *options) {
    nz_status_t status;
    scatter_t s;
    memset(&s, 0, sizeof s);
    if (ctx == NULL) return NZ_ERR_NULL_ARGUMENT;
    s.ctx = ctx;
    s.comm = comm;
    s.root = root;
    MPI_Comm_rank(comm, &s.rank);
    MPI_Comm_size(comm, &s.size);
    if ((status = scatter_header(&s, dA, A)) != NZ_SUCCESS) goto cleanup;
    if ((status = scatter_partition(&s, options)) != NZ_SUCCESS) goto cleanup;
    if ((status = scatter_local_arrays(&s)) != NZ_SUCCESS) goto cleanup;
    scatter_entries(&s);
    status = scatter_build(&s, dA, options);
cleanup:
    nz_matrix_destroy(&s.csr);
    nz_free(ctx, s.row_part);
    nz_free(ctx, s.col_part);
    nz_free(ctx, s.counts);
    nz_free(ctx, s.local_offsets);
    nz_free(ctx, s.local_cols);
    nz_free(ctx, s.local_values);
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
