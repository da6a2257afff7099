/* dist_spmv.c: distributed SpMV, pack / local product / post (receives, sends) / wait / non-local
 * product, as PETSc's MatMult_MPIAIJ (on the GPU the local product is queued before the host
 * posts the messages); and its profile (overlap). */
#include "dist_internal.h"
#include "dist_cuda.h"

#define NZD_TAG_HALO 7102

static double wtime(void) { return MPI_Wtime(); }

/* Pack this rank's entries that the neighbours need into the send buffer. On the host at once;
 * on the GPU the pack kernel is queued on the stream and, when the MPI is not CUDA-aware, the
 * copy to the pinned stage on the copy stream after it (`pack_done`), so the local product,
 * queued next on the stream, runs beside that copy; the `packed` event marks the buffer MPI will
 * read, and the host waits for it alone (exchange_post). */
static nz_status_t exchange_pack(nz_dist_matrix_t *M, const void *x) {
    const int staged = M->device != NULL && !M->device->cuda_aware;
    if (M->device == NULL) {
        if (M->send_total > 0) {
            const int32_t *idx = M->send_indices;
            if (M->value_type == NZ_F32) {
                const float *xs = (const float *)x;
                float *out = (float *)M->send_buf;
                for (int64_t k = 0; k < M->send_total; k++) out[k] = xs[idx[k]];
            } else {
                const double *xs = (const double *)x;
                double *out = (double *)M->send_buf;
                for (int64_t k = 0; k < M->send_total; k++) out[k] = xs[idx[k]];
            }
        }
        return NZ_SUCCESS;
    }
    nz_dist_device_t *d = M->device;
    int cuda = 0;
    if (M->send_total > 0)
        cuda = nzd_pack(M->value_type, M->send_buf, x, M->d_send_indices, M->send_total,
                        d->stream);
    if (!staged) {
        if (cuda == 0) cuda = nzd_event_record(d->packed, d->stream);
    } else {
        /* the copy stream starts after the pack and everything before it on the stream (the
         * previous call's non-local product included) */
        if (cuda == 0) cuda = nzd_event_record(d->pack_done, d->stream);
        if (cuda == 0) cuda = nzd_stream_wait_event(d->copy_stream, d->pack_done);
        if (cuda == 0 && M->send_total > 0)
            cuda = nzd_copy_async(M->send_stage, M->send_buf,
                                  (size_t)M->send_total * M->value_size, 1, d->copy_stream);
        if (cuda == 0) cuda = nzd_event_record(d->packed, d->copy_stream);
    }
    return cuda == 0 ? NZ_SUCCESS : nzd_cuda_status(M->ctx, cuda, "nz_dist_spmv: packing the halo");
}

/* Post the receives into the halo (or its pinned stage) and send. On the GPU the packed buffer
 * must be complete before MPI reads it: the host waits for the `packed` event only, not for what
 * was queued after it (the local product). Everything queued before the pack is done too, so the
 * previous call's non-local product and halo copy no longer read the halo buffers MPI writes. */
static nz_status_t exchange_post(nz_dist_matrix_t *M) {
    nz_context_t *ctx = M->ctx;
    const size_t vs = M->value_size;
    const int staged = M->device != NULL && !M->device->cuda_aware;
    char *halo = (char *)(staged ? M->halo_stage : M->halo_buf);
    char *send = (char *)(staged ? M->send_stage : M->send_buf);
    int n = 0, error;
    if (M->device != NULL) {
        const int cuda = nzd_event_synchronize(M->device->packed);
        if (cuda != 0) return nzd_cuda_status(ctx, cuda, "nz_dist_spmv: packing the halo");
    }
    for (int k = 0; k < M->recv.count; k++) {
        error = MPI_Irecv(halo + (size_t)M->recv.displs[k] * vs, M->recv.counts[k], M->mpi_value,
                          M->recv.ranks[k], NZD_TAG_HALO, M->comm, &M->requests[n++]);
        if (error != MPI_SUCCESS) return nzd_mpi_error(ctx, error, "nz_dist_spmv: MPI_Irecv");
    }
    for (int k = 0; k < M->send.count; k++) {
        error = MPI_Isend(send + (size_t)M->send.displs[k] * vs, M->send.counts[k], M->mpi_value,
                          M->send.ranks[k], NZD_TAG_HALO, M->comm, &M->requests[n++]);
        if (error != MPI_SUCCESS) return nzd_mpi_error(ctx, error, "nz_dist_spmv: MPI_Isend");
    }
    return NZ_SUCCESS;
}

/* Wait for the messages; staged: copy the halo to the device on the copy stream, which runs
 * beside the local product, and make the stream wait for it (the `halo_ready` event) before the
 * non-local product. */
static nz_status_t exchange_end(nz_dist_matrix_t *M) {
    int error = MPI_Waitall(M->recv.count + M->send.count, M->requests, MPI_STATUSES_IGNORE);
    if (error != MPI_SUCCESS) return nzd_mpi_error(M->ctx, error, "nz_dist_spmv: MPI_Waitall");
    if (M->device != NULL && !M->device->cuda_aware && M->halo > 0) {
        nz_dist_device_t *d = M->device;
        int cuda = nzd_copy_async(M->halo_buf, M->halo_stage, (size_t)M->halo * M->value_size, 0,
                                  d->copy_stream);
        if (cuda == 0) cuda = nzd_event_record(d->halo_ready, d->copy_stream);
        if (cuda == 0) cuda = nzd_stream_wait_event(d->stream, d->halo_ready);
        if (cuda != 0) return nzd_cuda_status(M->ctx, cuda, "nz_dist_spmv: staging the halo");
    }
    return NZ_SUCCESS;
}

/* y = alpha A_local x + beta y; an empty local block leaves y = beta y. */
static nz_status_t local_product(nz_dist_matrix_t *M, double alpha, const void *x, double beta,
                                 void *y) {
    if (M->rows == 0) return NZ_SUCCESS;
    if (M->local_plan != NULL) return nz_spmv_execute(M->local_plan, alpha, x, beta, y);
    if (beta == 1.0) return NZ_SUCCESS;
    if (M->device != NULL)
        return nzd_cuda_status(M->ctx,
                               nzd_scale(M->value_type, y, M->rows, beta, M->device->stream),
                               "nz_dist_spmv: y = beta y");
    for (int64_t i = 0; i < M->rows; i++)
        nzd_set(y, M->value_type, i, beta == 0.0 ? 0.0 : beta * nzd_get(y, M->value_type, i));
    return NZ_SUCCESS;
}

static nz_status_t nonlocal_product(nz_dist_matrix_t *M, double alpha, void *y) {
    if (M->rows == 0 || M->nonlocal_plan == NULL) return NZ_SUCCESS;
    return nz_spmv_execute(M->nonlocal_plan, alpha, M->halo_buf, 1.0, y);
}

nz_status_t nz_dist_spmv(nz_dist_matrix_t *dA, double alpha, const void *x_local, double beta,
                         void *y_local) {
    nz_status_t status = nzd_check_matrix(dA);
    if (status != NZ_SUCCESS) return status;
    if ((dA->cols > 0 && x_local == NULL) || (dA->rows > 0 && y_local == NULL))
        return nzd_error(dA->ctx, NZ_ERR_NULL_ARGUMENT, "nz_dist_spmv: x or y is NULL");
    /* A failure in the middle leaves the messages posted; the caller cannot continue after an
     * MPI error anyway, and an SpMV error means an invalid plan, caught at setup. */
    /* GPU: pack, queue the local product, then post the messages once the pack is done, so the
     * device computes while the host exchanges; host: post first, the local product blocks */
    status = exchange_pack(dA, x_local);
    if (status == NZ_SUCCESS && dA->device != NULL)
        status = local_product(dA, alpha, x_local, beta, y_local);
    if (status == NZ_SUCCESS) status = exchange_post(dA);
    if (status == NZ_SUCCESS && dA->device == NULL)
        status = local_product(dA, alpha, x_local, beta, y_local);
    nz_status_t end = exchange_end(dA);
    if (status == NZ_SUCCESS) status = end;
    if (status == NZ_SUCCESS) status = nonlocal_product(dA, alpha, y_local);
    return status;
}

static nz_status_t sync_device(nz_dist_matrix_t *M) {
    if (M->device == NULL) return NZ_SUCCESS;
    return nzd_cuda_status(M->ctx, nzd_stream_synchronize(M->device->stream),
                           "nz_dist_spmv_profile: synchronising");
}

nz_status_t nz_dist_spmv_profile(nz_dist_matrix_t *dA, const void *x_local, void *y_local,
                                 int repeats, nz_dist_spmv_profile_t *profile) {
    nz_status_t status = nzd_check_matrix(dA);
    if (status != NZ_SUCCESS) return status;
    nz_context_t *ctx = dA->ctx;
    double t[4] = {0, 0, 0, 0}, tmax[4];
    if (profile == NULL || repeats < 1)
        status = nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                           "nz_dist_spmv_profile: profile NULL or repeats %d < 1", repeats);
    status = nz_dist_agree(ctx, dA->comm, status);
    if (status != NZ_SUCCESS) return status;
    /* warm up, then each measurement starts together on every rank */
    status = nz_dist_spmv(dA, 1.0, x_local, 0.0, y_local);
    if (status == NZ_SUCCESS) status = sync_device(dA);
    for (int part = 0; part < 4 && status == NZ_SUCCESS; part++) {
        MPI_Barrier(dA->comm);
        double t0 = wtime();
        for (int k = 0; k < repeats && status == NZ_SUCCESS; k++) {
            switch (part) {
            case 0: status = nz_dist_spmv(dA, 1.0, x_local, 0.0, y_local); break;
            case 1:
                status = exchange_pack(dA, x_local);
                if (status == NZ_SUCCESS) status = exchange_post(dA);
                if (status == NZ_SUCCESS) status = exchange_end(dA);
                break;
            case 2: status = local_product(dA, 1.0, x_local, 0.0, y_local); break;
            default: status = nonlocal_product(dA, 1.0, y_local); break;
            }
        }
        if (status == NZ_SUCCESS) status = sync_device(dA);
        t[part] = (wtime() - t0) / repeats;
    }
    status = nz_dist_agree(ctx, dA->comm, status);
    if (status != NZ_SUCCESS) return status;
    MPI_Allreduce(t, tmax, 4, MPI_DOUBLE, MPI_MAX, dA->comm);
    profile->whole = tmax[0];
    profile->exchange = tmax[1];
    profile->local = tmax[2];
    profile->nonlocal = tmax[3];
    const double sum = tmax[1] + tmax[2] + tmax[3];
    profile->overlap = sum > 0.0 ? 1.0 - tmax[0] / sum : 0.0;
    return NZ_SUCCESS;
}
