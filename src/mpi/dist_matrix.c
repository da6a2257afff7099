/* dist_matrix.c: a distributed matrix from each rank's rows: local and non-local blocks, the
 * halo and the neighbour-only communication pattern (after PETSc MPIAIJ's MatSetUpMultiply). */
#include "dist_internal.h"
#include "dist_cuda.h"
#include "lower_bound.h" /* the library's binary search (header-only, <stdint.h> alone) */

#include <stdlib.h>
#include <string.h>

#define NZD_TAG_PATTERN 7101

static int compare_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void links_free(nz_context_t *ctx, nzd_links_t *links) {
    nz_free(ctx, links->ranks);
    nz_free(ctx, links->counts);
    nz_free(ctx, links->displs);
    memset(links, 0, sizeof *links);
}

/* The neighbours with a non-zero count, their counts and displacements. */
static nz_status_t links_from_counts(nz_context_t *ctx, const int *counts, int size,
                                     nzd_links_t *links, int64_t *total) {
    nz_status_t status = NZ_SUCCESS;
    int k = 0;
    int64_t sum = 0;
    for (int r = 0; r < size; r++) links->count += counts[r] > 0;
    const size_t slots = (size_t)links->count + 1;
    if ((status = nz_malloc(ctx, (void **)&links->ranks, slots * sizeof(int))) != NZ_SUCCESS ||
        (status = nz_malloc(ctx, (void **)&links->counts, slots * sizeof(int))) != NZ_SUCCESS ||
        (status = nz_malloc(ctx, (void **)&links->displs, slots * sizeof(int64_t))) != NZ_SUCCESS)
        return status;
    for (int r = 0; r < size; r++) {
        if (counts[r] <= 0) continue;
        links->ranks[k] = r;
        links->counts[k] = counts[r];
        links->displs[k] = sum;
        sum += counts[r];
        k++;
    }
    *total = sum;
    return NZ_SUCCESS;
}

nz_status_t nz_dist_matrix_destroy(nz_dist_matrix_t **dA) {
    if (dA == NULL || *dA == NULL) return NZ_SUCCESS;
    nz_dist_matrix_t *M = *dA;
    if (M->magic != NZD_MATRIX_MAGIC) return NZ_ERR_INVALID_HANDLE;
    nz_context_t *ctx = M->ctx;
    if (M->device != NULL) (void)nzd_stream_synchronize(M->device->stream);
    nz_spmv_plan_destroy(&M->local_plan);
    nz_spmv_plan_destroy(&M->nonlocal_plan);
    nz_matrix_destroy(&M->local);
    nz_matrix_destroy(&M->nonlocal);
    nzd_vec_free(ctx, M->device, M->diag);
    nzd_vec_free(ctx, M->device, M->send_buf);
    nzd_vec_free(ctx, M->device, M->halo_buf);
    if (M->d_send_indices != NULL) (void)nz_device_free(ctx, M->d_send_indices);
    if (M->send_stage != NULL) (void)nzd_pinned_free(M->send_stage);
    if (M->halo_stage != NULL) (void)nzd_pinned_free(M->halo_stage);
    nz_free(ctx, M->send_indices);
    nz_free(ctx, M->requests);
    nz_free(ctx, M->row_part);
    nz_free(ctx, M->col_part);
    links_free(ctx, &M->recv);
    links_free(ctx, &M->send);
    if (M->comm != MPI_COMM_NULL) MPI_Comm_free(&M->comm);
    M->magic = 0;
    nz_free(ctx, M);
    *dA = NULL;
    return NZ_SUCCESS;
}

/* The host arrays of the two blocks and the diagonal, split from this rank's rows. */
typedef struct split_blocks {
    int64_t *local_offsets, *nonlocal_offsets;
    int32_t *local_cols, *nonlocal_cols, *halo;
    void *local_values, *nonlocal_values, *diag;
} split_blocks_t;

static void split_free(nz_context_t *ctx, split_blocks_t *s) {
    nz_free(ctx, s->local_offsets);
    nz_free(ctx, s->nonlocal_offsets);
    nz_free(ctx, s->local_cols);
    nz_free(ctx, s->nonlocal_cols);
    nz_free(ctx, s->halo);
    nz_free(ctx, s->local_values);
    nz_free(ctx, s->nonlocal_values);
    nz_free(ctx, s->diag);
    memset(s, 0, sizeof *s);
}

#define NZD_ALLOC(ptr, count, size, what)                                                       \
    do {                                                                                        \
        status = nzd_vec_alloc(ctx, NULL, (void **)&(ptr), (int64_t)(count), (size), (what));   \
        if (status != NZ_SUCCESS) goto cleanup;                                                 \
    } while (0)

/* Validate this rank's rows, split them at [col_begin, col_end) into the local block (columns
 * renumbered from 0) and the non-local block (columns compacted to the sorted halo), and take
 * the diagonal. O(nnz log halo). */
static nz_status_t split_rows(nz_dist_matrix_t *M, const int64_t *row_offsets,
                              const int32_t *col_indices, const void *values, split_blocks_t *s) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = M->ctx;
    const int64_t rows = M->rows, row_begin = M->row_part[M->rank];
    const int64_t col_begin = M->col_part[M->rank], col_end = M->col_part[M->rank + 1];
    const nz_value_type_t vt = M->value_type;
    const size_t vs = M->value_size;
    if (rows > 0 && (row_offsets == NULL || row_offsets[0] != 0))
        return nzd_error(ctx, row_offsets == NULL ? NZ_ERR_NULL_ARGUMENT : NZ_ERR_INVALID_MATRIX,
                         "distributed matrix: row_offsets %s", row_offsets == NULL ? "is NULL"
                                                                           : "must start at 0");
    const int64_t nnz = rows > 0 ? row_offsets[rows] : 0;
    if (nnz > 0 && (col_indices == NULL || values == NULL))
        return nzd_error(ctx, NZ_ERR_NULL_ARGUMENT, "distributed matrix: col_indices or values NULL");
    for (int64_t i = 0; i < rows; i++) {
        if (row_offsets[i + 1] < row_offsets[i])
            return nzd_error(ctx, NZ_ERR_INVALID_MATRIX,
                             "distributed matrix: row offsets decrease at global row %lld",
                             (long long)(row_begin + i));
        for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++) {
            int32_t col = col_indices[k];
            if (col < 0 || col >= M->global_cols)
                return nzd_error(ctx, NZ_ERR_INVALID_MATRIX,
                                 "distributed matrix: global row %lld has column %d outside "
                                 "0 .. %lld", (long long)(row_begin + i), (int)col,
                                 (long long)(M->global_cols - 1));
            if (col >= col_begin && col < col_end)
                M->local_nnz++;
            else
                M->nonlocal_nnz++;
        }
    }
    NZD_ALLOC(s->local_offsets, rows + 1, sizeof(int64_t), "distributed matrix: local offsets");
    NZD_ALLOC(s->nonlocal_offsets, rows + 1, sizeof(int64_t), "distributed matrix: offsets");
    NZD_ALLOC(s->local_cols, M->local_nnz, sizeof(int32_t), "distributed matrix: local columns");
    NZD_ALLOC(s->nonlocal_cols, M->nonlocal_nnz, sizeof(int32_t), "distributed matrix: columns");
    NZD_ALLOC(s->halo, M->nonlocal_nnz, sizeof(int32_t), "distributed matrix: halo");
    NZD_ALLOC(s->local_values, M->local_nnz, vs, "distributed matrix: local values");
    NZD_ALLOC(s->nonlocal_values, M->nonlocal_nnz, vs, "distributed matrix: non-local values");
    NZD_ALLOC(s->diag, rows, vs, "distributed matrix: diagonal");
    /* the halo: the distinct non-local columns, ascending (so grouped by owner rank) */
    int64_t h = 0;
    for (int64_t k = 0; k < nnz; k++)
        if (col_indices[k] < col_begin || col_indices[k] >= col_end) s->halo[h++] = col_indices[k];
    qsort(s->halo, (size_t)h, sizeof(int32_t), compare_i32);
    int64_t distinct = 0;
    for (int64_t k = 0; k < h; k++)
        if (distinct == 0 || s->halo[k] != s->halo[distinct - 1]) s->halo[distinct++] = s->halo[k];
    M->halo = distinct;
    int64_t nl = 0, nn = 0;
    s->local_offsets[0] = s->nonlocal_offsets[0] = 0;
    for (int64_t i = 0; i < rows; i++) {
        double d = 0.0;
        for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++) {
            const int32_t col = col_indices[k];
            const double v = nzd_get(values, vt, k);
            if (col == row_begin + i) d += v;
            if (col >= col_begin && col < col_end) {
                s->local_cols[nl] = (int32_t)(col - col_begin);
                nzd_set(s->local_values, vt, nl++, v);
            } else {
                /* col's position in the sorted halo, which holds it by construction */
                s->nonlocal_cols[nn] = (int32_t)nzi_lower_bound_i32(s->halo, distinct, col);
                nzd_set(s->nonlocal_values, vt, nn++, v);
            }
        }
        nzd_set(s->diag, vt, i, d);
        s->local_offsets[i + 1] = nl;
        s->nonlocal_offsets[i + 1] = nn;
    }
cleanup:
    return status;
}

/* Who sends what: counts per owner of the halo, an alltoall of the counts (the only collective
 * of size P), then the index lists point to point between neighbours only. */
static nz_status_t build_pattern(nz_dist_matrix_t *M, const int32_t *halo) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = M->ctx;
    int *recv_counts = NULL, *send_counts = NULL, error;
    const int size = M->size;
    const int64_t col_begin = M->col_part[M->rank];
    /* every allocation is agreed before the collective or the messages that follow it, so
     * that a rank that fails never leaves the others waiting */
    status = nzd_vec_alloc(ctx, NULL, (void **)&recv_counts, size, sizeof(int),
                           "distributed matrix: receive counts");
    if (status == NZ_SUCCESS)
        status = nzd_vec_alloc(ctx, NULL, (void **)&send_counts, size, sizeof(int),
                               "distributed matrix: send counts");
    if ((status = nz_dist_agree(ctx, M->comm, status)) != NZ_SUCCESS) goto cleanup;
    memset(recv_counts, 0, (size_t)size * sizeof(int));
    int owner = 0;
    for (int64_t k = 0; k < M->halo; k++) {
        while (halo[k] >= M->col_part[owner + 1]) owner++;
        recv_counts[owner]++;
    }
    error = MPI_Alltoall(recv_counts, 1, MPI_INT, send_counts, 1, MPI_INT, M->comm);
    if (error != MPI_SUCCESS) {
        status = nzd_mpi_error(ctx, error, "distributed matrix: MPI_Alltoall of the halo counts");
        goto cleanup;
    }
    int64_t recv_total = 0;
    status = links_from_counts(ctx, recv_counts, size, &M->recv, &recv_total);
    if (status == NZ_SUCCESS)
        status = links_from_counts(ctx, send_counts, size, &M->send, &M->send_total);
    if (status == NZ_SUCCESS)
        status = nzd_vec_alloc(ctx, NULL, (void **)&M->send_indices, M->send_total,
                               sizeof(int32_t), "distributed matrix: send indices");
    if (status == NZ_SUCCESS)
        status = nzd_vec_alloc(ctx, NULL, (void **)&M->requests, M->recv.count + M->send.count,
                               sizeof(MPI_Request), "distributed matrix: requests");
    if ((status = nz_dist_agree(ctx, M->comm, status)) != NZ_SUCCESS) goto cleanup;
    int n = 0;
    for (int k = 0; k < M->send.count; k++)
        MPI_Irecv(M->send_indices + M->send.displs[k], M->send.counts[k], MPI_INT32_T,
                  M->send.ranks[k], NZD_TAG_PATTERN, M->comm, &M->requests[n++]);
    for (int k = 0; k < M->recv.count; k++)
        MPI_Isend(halo + M->recv.displs[k], M->recv.counts[k], MPI_INT32_T, M->recv.ranks[k],
                  NZD_TAG_PATTERN, M->comm, &M->requests[n++]);
    error = MPI_Waitall(n, M->requests, MPI_STATUSES_IGNORE);
    if (error != MPI_SUCCESS) {
        status = nzd_mpi_error(ctx, error, "distributed matrix: exchanging the halo indices");
        goto cleanup;
    }
    for (int64_t k = 0; k < M->send_total; k++) {
        int64_t local = (int64_t)M->send_indices[k] - col_begin;
        if (local < 0 || local >= M->cols) {
            status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                               "distributed matrix: a neighbour asks for column %d, not owned "
                               "here (the row ranges do not tile the matrix)",
                               (int)M->send_indices[k]);
            goto cleanup;
        }
        M->send_indices[k] = (int32_t)local;
    }
cleanup:
    nz_free(ctx, recv_counts);
    nz_free(ctx, send_counts);
    return status;
}

/* A host block becomes the matrix's block: kept, or copied to the device. */
static nz_status_t place_block(nz_dist_matrix_t *M, nz_matrix_t **host, nz_matrix_t **out) {
    if (M->device == NULL) {
        *out = *host;
        *host = NULL;
        return NZ_SUCCESS;
    }
    nz_status_t status = nzd_to_device(M->ctx, out, *host);
    nz_matrix_destroy(host);
    return status;
}

/* Blocks, plans, buffers in the matrix's location. */
static nz_status_t place(nz_dist_matrix_t *M, split_blocks_t *s, const nz_dist_options_t *opt) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = M->ctx;
    nz_matrix_t *host = NULL;
    const nz_value_type_t vt = M->value_type;
    const size_t vs = M->value_size;
    if (M->local_nnz > 0) {
        if ((status = nz_matrix_create_csr(ctx, &host, M->rows, M->cols, NZ_I64, s->local_offsets,
                                           s->local_cols, vt, s->local_values)) != NZ_SUCCESS ||
            (status = place_block(M, &host, &M->local)) != NZ_SUCCESS ||
            (status = nz_spmv_plan_create(ctx, &M->local_plan, M->local, NZ_OP_N, opt->alg,
                                          opt->plan_flags)) != NZ_SUCCESS)
            goto cleanup;
    }
    if (M->nonlocal_nnz > 0) {
        if ((status = nz_matrix_create_csr(ctx, &host, M->rows, M->halo, NZ_I64,
                                           s->nonlocal_offsets, s->nonlocal_cols, vt,
                                           s->nonlocal_values)) != NZ_SUCCESS ||
            (status = place_block(M, &host, &M->nonlocal)) != NZ_SUCCESS ||
            (status = nz_spmv_plan_create(ctx, &M->nonlocal_plan, M->nonlocal, NZ_OP_N, opt->alg,
                                          opt->plan_flags)) != NZ_SUCCESS)
            goto cleanup;
    }
    if ((status = nzd_vec_alloc(ctx, M->device, &M->send_buf, M->send_total, vs,
                                "distributed matrix: send buffer")) != NZ_SUCCESS ||
        (status = nzd_vec_alloc(ctx, M->device, &M->halo_buf, M->halo, vs,
                                "distributed matrix: halo buffer")) != NZ_SUCCESS ||
        (status = nzd_vec_alloc(ctx, M->device, &M->diag, M->rows, vs,
                                "distributed matrix: diagonal")) != NZ_SUCCESS)
        goto cleanup;
    if (M->device == NULL) {
        memcpy(M->diag, s->diag, (size_t)M->rows * vs);
        goto cleanup;
    }
    if ((status = nzd_copy_to_device(ctx, M->diag, s->diag, (size_t)M->rows * vs)) != NZ_SUCCESS ||
        (status = nzd_vec_alloc(ctx, M->device, (void **)&M->d_send_indices, M->send_total,
                                sizeof(int32_t), "distributed matrix: send indices")) != NZ_SUCCESS ||
        (status = nzd_copy_to_device(ctx, M->d_send_indices, M->send_indices,
                                     (size_t)M->send_total * sizeof(int32_t))) != NZ_SUCCESS)
        goto cleanup;
    if (!M->device->cuda_aware) {
        status = nzd_cuda_status(ctx, nzd_pinned_alloc(&M->send_stage, (size_t)M->send_total * vs + 16),
                                 "distributed matrix: pinned send buffer");
        if (status == NZ_SUCCESS)
            status = nzd_cuda_status(ctx, nzd_pinned_alloc(&M->halo_stage, (size_t)M->halo * vs + 16),
                                     "distributed matrix: pinned halo buffer");
    }
cleanup:
    nz_matrix_destroy(&host);
    return status;
}

nz_status_t nzd_build(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                      int64_t global_rows, int64_t global_cols, int64_t *row_part,
                      int64_t *col_part, const int64_t *row_offsets, const int32_t *col_indices,
                      nz_value_type_t value_type, const void *values,
                      const nz_dist_options_t *options) {
    nz_status_t status = NZ_SUCCESS;
    nz_dist_matrix_t *M = NULL;
    split_blocks_t s;
    nz_dist_options_t opt;
    memset(&s, 0, sizeof s);
    if (options != NULL)
        opt = *options;
    else
        memset(&opt, 0, sizeof opt);
    /* agreed before the first collective (MPI_Comm_dup) so that no rank skips it alone */
    status = nz_dist_agree(ctx, comm, nz_malloc(ctx, (void **)&M, sizeof *M));
    if (status != NZ_SUCCESS) {
        nz_free(ctx, M);
        nz_free(ctx, row_part);
        nz_free(ctx, col_part);
        return status;
    }
    memset(M, 0, sizeof *M);
    M->magic = NZD_MATRIX_MAGIC;
    M->ctx = ctx;
    M->comm = MPI_COMM_NULL;
    M->row_part = row_part;
    M->col_part = col_part;
    M->device = opt.device;
    M->value_type = value_type;
    M->mpi_value = nzd_mpi_type(value_type);
    M->value_size = nzd_value_size(value_type);
    M->global_rows = global_rows;
    M->global_cols = global_cols;
    int error = MPI_Comm_dup(comm, &M->comm);
    if (error != MPI_SUCCESS) {
        M->comm = MPI_COMM_NULL;
        status = nzd_mpi_error(ctx, error, "distributed matrix: MPI_Comm_dup");
        goto agree_setup;
    }
    MPI_Comm_rank(M->comm, &M->rank);
    MPI_Comm_size(M->comm, &M->size);
    if (opt.device != NULL && opt.device->magic != NZD_DEVICE_MAGIC) {
        status = nzd_error(ctx, NZ_ERR_INVALID_HANDLE, "distributed matrix: options->device");
        goto agree_setup;
    }
    M->rows = row_part[M->rank + 1] - row_part[M->rank];
    M->cols = col_part[M->rank + 1] - col_part[M->rank];
    status = split_rows(M, row_offsets, col_indices, values, &s);
agree_setup:
    status = nz_dist_agree(ctx, comm, status);
    if (status != NZ_SUCCESS) goto cleanup;
    status = nz_dist_agree(ctx, comm, build_pattern(M, s.halo));
    if (status != NZ_SUCCESS) goto cleanup;
    {
        int64_t nnz = M->local_nnz + M->nonlocal_nnz;
        error = MPI_Allreduce(&nnz, &M->global_nnz, 1, MPI_INT64_T, MPI_SUM, M->comm);
        status = error == MPI_SUCCESS ? place(M, &s, &opt)
                                      : nzd_mpi_error(ctx, error, "distributed matrix: nnz");
    }
    status = nz_dist_agree(ctx, comm, status);
cleanup:
    split_free(ctx, &s);
    if (status == NZ_SUCCESS) {
        *dA = M;
        M = NULL;
    }
    nz_dist_matrix_destroy(&M);
    return status;
}

nz_status_t nz_dist_matrix_create_rows(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                                       int64_t global_rows, int64_t global_cols,
                                       int64_t row_begin, int64_t row_end,
                                       const int64_t *row_offsets, const int32_t *col_indices,
                                       nz_value_type_t value_type, const void *values,
                                       const nz_dist_options_t *options) {
    nz_status_t status = NZ_SUCCESS;
    int64_t *row_part = NULL, *col_part = NULL;
    int size = 0, rank = 0;
    if (ctx == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (dA == NULL) status = nzd_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_dist_matrix_create_rows: dA");
    else *dA = NULL;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    if (status == NZ_SUCCESS && (value_type != NZ_F32 && value_type != NZ_F64))
        status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_dist_matrix_create_rows: value type %d",
                           (int)value_type);
    if (status == NZ_SUCCESS &&
        (global_rows < 0 || global_cols < 0 || global_rows > INT32_MAX || global_cols > INT32_MAX))
        status = nzd_error(ctx, NZ_ERR_UNSUPPORTED,
                           "nz_dist_matrix_create_rows: %lld x %lld (at most 2^31 - 1 each)",
                           (long long)global_rows, (long long)global_cols);
    if (status == NZ_SUCCESS && (row_begin < 0 || row_end < row_begin || row_end > global_rows))
        status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                           "nz_dist_matrix_create_rows: rows %lld .. %lld outside 0 .. %lld",
                           (long long)row_begin, (long long)row_end, (long long)global_rows);
    if (status == NZ_SUCCESS)
        status = nz_malloc(ctx, (void **)&row_part, ((size_t)size + 1) * sizeof(int64_t));
    status = nz_dist_agree(ctx, comm, status);
    if (status != NZ_SUCCESS) goto cleanup;
    /* the ranks' row ranges, checked to tile 0 .. global_rows in rank order */
    {
        int64_t range[2] = {row_begin, row_end};
        int64_t *ranges = NULL;
        status = nz_malloc(ctx, (void **)&ranges, 2 * (size_t)size * sizeof(int64_t));
        status = nz_dist_agree(ctx, comm, status);
        if (status != NZ_SUCCESS) goto cleanup;
        MPI_Allgather(range, 2, MPI_INT64_T, ranges, 2, MPI_INT64_T, comm);
        row_part[0] = 0;
        for (int r = 0; r < size; r++) {
            if (ranges[2 * r] != row_part[r] && status == NZ_SUCCESS)
                status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                                   "nz_dist_matrix_create_rows: rank %d starts at row %lld, "
                                   "rank %d ended at %lld (ranges must tile the rows in rank "
                                   "order)", r, (long long)ranges[2 * r], r - 1,
                                   (long long)row_part[r]);
            row_part[r + 1] = ranges[2 * r + 1];
        }
        if (status == NZ_SUCCESS && row_part[size] != global_rows)
            status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                               "nz_dist_matrix_create_rows: the ranks' rows end at %lld, not "
                               "at %lld", (long long)row_part[size], (long long)global_rows);
        nz_free(ctx, ranges);
    }
    if (status == NZ_SUCCESS) {
        if (global_rows == global_cols) {
            status = nz_malloc(ctx, (void **)&col_part, ((size_t)size + 1) * sizeof(int64_t));
            if (status == NZ_SUCCESS) memcpy(col_part, row_part, ((size_t)size + 1) * sizeof(int64_t));
        } else {
            status = nzd_even_partition(ctx, global_cols, size, &col_part);
        }
    }
    /* identical on every rank: the same status everywhere, no agreement needed; but a failed
     * allocation is local */
    status = nz_dist_agree(ctx, comm, status);
    if (status != NZ_SUCCESS) goto cleanup;
    status = nzd_build(ctx, dA, comm, global_rows, global_cols, row_part, col_part, row_offsets,
                       col_indices, value_type, values, options);
    row_part = col_part = NULL; /* owned by nzd_build */
cleanup:
    nz_free(ctx, row_part);
    nz_free(ctx, col_part);
    return status;
}

nz_status_t nz_dist_matrix_layout(const nz_dist_matrix_t *dA, nz_dist_layout_t *layout) {
    nz_status_t status = nzd_check_matrix(dA);
    if (status != NZ_SUCCESS) return status;
    if (layout == NULL) return NZ_ERR_NULL_ARGUMENT;
    memset(layout, 0, sizeof *layout);
    layout->rank = dA->rank;
    layout->size = dA->size;
    layout->global_rows = dA->global_rows;
    layout->global_cols = dA->global_cols;
    layout->global_nnz = dA->global_nnz;
    layout->row_begin = dA->row_part[dA->rank];
    layout->row_end = dA->row_part[dA->rank + 1];
    layout->col_begin = dA->col_part[dA->rank];
    layout->col_end = dA->col_part[dA->rank + 1];
    layout->local_nnz = dA->local_nnz;
    layout->nonlocal_nnz = dA->nonlocal_nnz;
    layout->halo = dA->halo;
    layout->send = dA->send_total;
    layout->neighbours_in = dA->recv.count;
    layout->neighbours_out = dA->send.count;
    layout->location = dA->device != NULL ? NZ_DEVICE : NZ_HOST;
    layout->value_type = dA->value_type;
    nz_spmv_plan_info_t info;
    layout->local_alg = layout->nonlocal_alg = NZ_ALG_AUTO;
    if (dA->local_plan != NULL && nz_spmv_plan_info(dA->local_plan, &info) == NZ_SUCCESS)
        layout->local_alg = info.alg;
    if (dA->nonlocal_plan != NULL && nz_spmv_plan_info(dA->nonlocal_plan, &info) == NZ_SUCCESS)
        layout->nonlocal_alg = info.alg;
    return NZ_SUCCESS;
}
