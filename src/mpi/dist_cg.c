/* dist_cg.c: distributed (Jacobi-preconditioned) conjugate gradients, the iteration of
 * nz_cg_solve with its dot products summed over the ranks. */
#include "dist_internal.h"
#include "dist_cuda.h"
#include "cg_scalars.h" /* the library's CG state machine (header-only, public types) */

#include <math.h>
#include <string.h>

#define NZD_CG_SPMV_TIMING_REPEATS 3

/* The solve's workspace: vectors of the local rows in the matrix's location. */
typedef struct cg_work {
    nz_dist_matrix_t *M;
    void *r, *p, *q, *dinv;
    void *scratch;            /* device: block partial sums */
    double *sums;             /* device: pinned landing place of the reductions */
} cg_work_t;

/* ---- the local vector operations: host loops or the CUDA kernels of dist_cuda.cu. Each
 * reduction returns this rank's partial sums; the caller adds them over the ranks. ---- */

#define NZD_HOST_LOOPS(T)                                                                       \
    do {                                                                                        \
        T *x = (T *)x_, *r = (T *)w->r, *p = (T *)w->p;                                         \
        const T *b = (const T *)b_, *q = (const T *)w->q, *dinv = (const T *)w->dinv;           \
        (void)x; (void)b;                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                       \
            switch (op) {                                                                       \
            case OP_DOT_PQ: sums[0] += (double)p[i] * (double)q[i]; break;                      \
            case OP_DOT_BB: sums[0] += (double)b[i] * (double)b[i]; break;                      \
            case OP_RESIDUAL:                                                                   \
            case OP_TRUE_RESIDUAL: {                                                            \
                T ri = (T)((double)b[i] - (double)q[i]);                                        \
                r[i] = ri;                                                                      \
                if (op == OP_TRUE_RESIDUAL) {                                                   \
                    sums[0] += (double)ri * (double)ri;                                         \
                    break;                                                                      \
                }                                                                               \
                double zi = dinv != NULL ? (double)ri * (double)dinv[i] : (double)ri;          \
                p[i] = (T)zi;                                                                   \
                sums[0] += (double)ri * (double)ri;                                             \
                sums[1] += (double)ri * zi;                                                     \
                break;                                                                          \
            }                                                                                   \
            case OP_UPDATE: {                                                                   \
                x[i] = (T)((double)x[i] + scalar * (double)p[i]);                               \
                T ri = (T)((double)r[i] - scalar * (double)q[i]);                               \
                r[i] = ri;                                                                      \
                double zi = dinv != NULL ? (double)ri * (double)dinv[i] : (double)ri;          \
                sums[0] += (double)ri * (double)ri;                                             \
                sums[1] += (double)ri * zi;                                                     \
                break;                                                                          \
            }                                                                                   \
            default: {                                                                          \
                double zi = dinv != NULL ? (double)r[i] * (double)dinv[i] : (double)r[i];      \
                p[i] = (T)(zi + scalar * (double)p[i]);                                         \
                break;                                                                          \
            }                                                                                   \
            }                                                                                   \
        }                                                                                       \
    } while (0)

typedef enum cg_op { OP_DOT_PQ, OP_DOT_BB, OP_RESIDUAL, OP_TRUE_RESIDUAL, OP_UPDATE, OP_UPDATE_P } cg_op_t;

/* One vector operation over the local rows; sums[0..1] receive the partial dot products. */
static nz_status_t vector_op(cg_work_t *w, cg_op_t op, void *x_, const void *b_, double scalar,
                             double sums[2]) {
    nz_dist_matrix_t *M = w->M;
    const int64_t n = M->rows;
    sums[0] = sums[1] = 0.0;
    if (n == 0) return NZ_SUCCESS;
    if (M->device == NULL) {
        if (M->value_type == NZ_F32)
            NZD_HOST_LOOPS(float);
        else
            NZD_HOST_LOOPS(double);
        return NZ_SUCCESS;
    }
    const nz_value_type_t vt = M->value_type;
    void *stream = M->device->stream;
    int cuda = 0;
    switch (op) {
    case OP_DOT_PQ: cuda = nzd_cg_dot(vt, w->p, w->q, n, w->scratch, w->sums, stream); break;
    case OP_DOT_BB: cuda = nzd_cg_dot(vt, b_, b_, n, w->scratch, w->sums, stream); break;
    case OP_RESIDUAL:
    case OP_TRUE_RESIDUAL:
        cuda = nzd_cg_residual(vt, w->r, w->p, b_, w->q, w->dinv, n, op == OP_RESIDUAL,
                               w->scratch, w->sums, stream);
        break;
    case OP_UPDATE:
        cuda = nzd_cg_update(vt, x_, w->r, w->p, w->q, w->dinv, scalar, n, w->scratch, w->sums,
                             stream);
        break;
    default: cuda = nzd_cg_update_p(vt, w->p, w->r, w->dinv, scalar, n, stream); break;
    }
    if (cuda != 0) return nzd_cuda_status(M->ctx, cuda, "nz_dist_cg_solve: vector kernel");
    if (op != OP_UPDATE_P) {
        sums[0] = w->sums[0];
        sums[1] = op == OP_DOT_PQ || op == OP_DOT_BB ? 0.0 : w->sums[1];
    }
    return NZ_SUCCESS;
}

/* The global sums of a local operation, in one MPI_Allreduce of three doubles: the two partial
 * sums and a failure flag, so that a rank's local error reaches every rank at the next
 * reduction instead of leaving them waiting. */
static nz_status_t reduce(cg_work_t *w, nz_status_t local, double sums[2]) {
    nz_dist_matrix_t *M = w->M;
    double buffer[3] = {sums[0], sums[1], local != NZ_SUCCESS ? 1.0 : 0.0};
    int error = MPI_Allreduce(MPI_IN_PLACE, buffer, 3, MPI_DOUBLE, MPI_SUM, M->comm);
    if (error != MPI_SUCCESS) return nzd_mpi_error(M->ctx, error, "nz_dist_cg_solve: MPI_Allreduce");
    sums[0] = buffer[0];
    sums[1] = buffer[1];
    if (buffer[2] != 0.0) return nz_dist_agree(M->ctx, M->comm, local != NZ_SUCCESS ? local : NZ_ERR_DEVICE);
    return NZ_SUCCESS;
}

static nz_status_t global_op(cg_work_t *w, cg_op_t op, void *x, const void *b, double scalar,
                             double sums[2]) {
    return reduce(w, vector_op(w, op, x, b, scalar, sums), sums);
}

static void work_free(cg_work_t *w) {
    nz_dist_matrix_t *M = w->M;
    if (M == NULL) return;
    if (M->device != NULL) (void)nzd_stream_synchronize(M->device->stream);
    nzd_vec_free(M->ctx, M->device, w->r);
    nzd_vec_free(M->ctx, M->device, w->p);
    nzd_vec_free(M->ctx, M->device, w->q);
    nzd_vec_free(M->ctx, M->device, w->dinv);
    nzd_vec_free(M->ctx, M->device, w->scratch);
    if (w->sums != NULL) (void)nzd_pinned_free(w->sums);
}

/* Workspace and, for Jacobi, the inverse diagonal (checked positive and finite on the host). */
static nz_status_t work_create(cg_work_t *w, int jacobi, int64_t *bad_row) {
    nz_status_t status = NZ_SUCCESS;
    nz_dist_matrix_t *M = w->M;
    nz_context_t *ctx = M->ctx;
    const size_t vs = M->value_size;
    void *host = NULL;
    *bad_row = -1;
    if ((status = nzd_vec_alloc(ctx, M->device, &w->r, M->rows, vs, "nz_dist_cg_solve: r")) ||
        (status = nzd_vec_alloc(ctx, M->device, &w->p, M->rows, vs, "nz_dist_cg_solve: p")) ||
        (status = nzd_vec_alloc(ctx, M->device, &w->q, M->rows, vs, "nz_dist_cg_solve: q")))
        goto cleanup;
    if (M->device != NULL) {
        if ((status = nzd_vec_alloc(ctx, M->device, &w->scratch,
                                    (int64_t)nzd_cg_scratch_bytes(M->rows), 1,
                                    "nz_dist_cg_solve: partial sums")) != NZ_SUCCESS ||
            (status = nzd_cuda_status(ctx, nzd_pinned_alloc((void **)&w->sums, 4 * sizeof(double)),
                                      "nz_dist_cg_solve: pinned sums")) != NZ_SUCCESS)
            goto cleanup;
    }
    if (!jacobi) goto cleanup;
    if ((status = nzd_vec_alloc(ctx, NULL, &host, M->rows, vs, "nz_dist_cg_solve: diagonal")) ||
        (status = nzd_vec_alloc(ctx, M->device, &w->dinv, M->rows, vs,
                                "nz_dist_cg_solve: inverse diagonal")))
        goto cleanup;
    if (M->device != NULL) {
        if ((status = nzd_copy_to_host(ctx, host, M->diag, (size_t)M->rows * vs)) != NZ_SUCCESS)
            goto cleanup;
    } else {
        memcpy(host, M->diag, (size_t)M->rows * vs);
    }
    for (int64_t i = 0; i < M->rows; i++) {
        double d = nzd_get(host, M->value_type, i);
        if (!(d > 0.0) || isinf(d)) {
            if (*bad_row < 0) *bad_row = M->row_part[M->rank] + i;
            d = 1.0;
        }
        nzd_set(host, M->value_type, i, 1.0 / d);
    }
    if (M->device != NULL)
        status = nzd_copy_to_device(ctx, w->dinv, host, (size_t)M->rows * vs);
    else
        memcpy(w->dinv, host, (size_t)M->rows * vs);
cleanup:
    nz_free(ctx, host);
    return status;
}

static nz_status_t check_options(nz_context_t *ctx, const nz_cg_options_t *in, int64_t n,
                                 nz_cg_options_t *opt) {
    char why[256];
    if (nzi_cg_options_read(in, n, opt, why, sizeof why) != NZ_SUCCESS)
        return nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_dist_cg_solve: %s", why);
    return NZ_SUCCESS;
}

/* The scalar state machine is nz_cg_solve's (cg_scalars.h), on the host of every rank; the
 * reduced sums are bitwise the same on all ranks, so every rank takes the same decisions. */
static nz_status_t final_status(nz_context_t *ctx, const nzi_cg_scalars_t *s, double relres,
                                double reltol) {
    char why[320];
    nz_status_t status = nzi_cg_final_message(s, relres, reltol, why, sizeof why);
    return status == NZ_SUCCESS ? status : nzd_error(ctx, status, "nz_dist_cg_solve: %s", why);
}

/* ---- scaling (cg_scalars.h): only for a b whose squared norm leaves the safe range, so these
 * run on the host, through a copy for a device vector (setup cost, never in the common case) ---- */

/* The global max |v_i| over the local rows of every rank (NaN when any rank holds a NaN). */
static nz_status_t global_maxabs(cg_work_t *w, const void *v, double *vmax) {
    nz_dist_matrix_t *M = w->M;
    nz_status_t status = NZ_SUCCESS;
    void *host = NULL;
    const void *values = v;
    double local[2] = {0.0, 0.0}; /* max |v_i| over the finite entries, 1 if one is not */
    if (M->rows > 0 && M->device != NULL) {
        status = nzd_vec_alloc(M->ctx, NULL, &host, M->rows, M->value_size, "nz_dist_cg_solve: b");
        if (status == NZ_SUCCESS)
            status = nzd_copy_to_host(M->ctx, host, v, (size_t)M->rows * M->value_size);
        values = host;
    }
    for (int64_t i = 0; status == NZ_SUCCESS && i < M->rows; i++) {
        const double a = fabs(nzd_get(values, M->value_type, i));
        if (!nzi_cg_finite(a))
            local[1] = 1.0;
        else if (a > local[0])
            local[0] = a;
    }
    nz_free(M->ctx, host);
    if ((status = nz_dist_agree(M->ctx, M->comm, status)) != NZ_SUCCESS) return status;
    int error = MPI_Allreduce(MPI_IN_PLACE, local, 2, MPI_DOUBLE, MPI_MAX, M->comm);
    if (error != MPI_SUCCESS) return nzd_mpi_error(M->ctx, error, "nz_dist_cg_solve: MPI_Allreduce");
    *vmax = local[1] != 0.0 ? NAN : local[0];
    return NZ_SUCCESS;
}

/* out = factor * in over the local rows (in == out allowed), in the matrix's location. */
static nz_status_t local_scale(cg_work_t *w, void *out, const void *in, double factor) {
    nz_dist_matrix_t *M = w->M;
    nz_status_t status = NZ_SUCCESS;
    const size_t bytes = (size_t)M->rows * M->value_size;
    void *host = NULL;
    if (M->rows == 0) return NZ_SUCCESS;
    if (M->device == NULL) {
        for (int64_t i = 0; i < M->rows; i++)
            nzd_set(out, M->value_type, i, factor * nzd_get(in, M->value_type, i));
        return NZ_SUCCESS;
    }
    if ((status = nzd_vec_alloc(M->ctx, NULL, &host, M->rows, M->value_size,
                                "nz_dist_cg_solve: scaled vector")) == NZ_SUCCESS &&
        (status = nzd_copy_to_host(M->ctx, host, in, bytes)) == NZ_SUCCESS) {
        for (int64_t i = 0; i < M->rows; i++)
            nzd_set(host, M->value_type, i, factor * nzd_get(host, M->value_type, i));
        status = nzd_copy_to_device(M->ctx, out, host, bytes);
    }
    nz_free(M->ctx, host);
    return status;
}

static nz_status_t sync_all(nz_dist_matrix_t *M) {
    if (M->device == NULL) return NZ_SUCCESS;
    return nzd_cuda_status(M->ctx, nzd_stream_synchronize(M->device->stream),
                           "nz_dist_cg_solve: synchronising");
}

/* One solve's state between its phases (nz_dist_cg_solve). */
typedef struct dist_cg {
    nz_context_t *ctx;
    nz_dist_matrix_t *A;
    const void *b;          /* this rank's rows of b, or of 2^e b once the solve is scaled */
    void *x;                /* this rank's rows of x */
    nz_cg_options_t opt;
    cg_work_t w;
    nzi_cg_scalars_t s;
    nz_cg_result_t res;
    double *history;        /* the history returned in res (NULL without record_history) */
    double sums[2];         /* the last reduction's global sums */
    double bnorm;           /* ||2^e b|| */
    double reltol;          /* max(rtol ||b||, atol) / ||b|| */
    void *b_scaled;         /* 2^e b when the solve is scaled (exponent != 0) */
    int exponent;           /* e: the solve runs on 2^e A x = 2^e b when e != 0 */
    int x_scaled;           /* x holds 2^e x */
} dist_cg_t;

/* The arguments, checked on every rank and agreed on (every rank returns the same status). */
static nz_status_t dist_cg_check_arguments(nz_context_t *ctx, nz_dist_matrix_t *dA,
                                           const void *b_local, const void *x_local,
                                           const nz_cg_options_t *options, nz_cg_options_t *opt) {
    nz_status_t status = NZ_SUCCESS;
    if (dA->global_rows != dA->global_cols)
        status = nzd_error(ctx, NZ_ERR_DIMENSION_MISMATCH, "nz_dist_cg_solve: A is %lld x %lld, not square",
                           (long long)dA->global_rows, (long long)dA->global_cols);
    if (status == NZ_SUCCESS && dA->rows > 0 && (b_local == NULL || x_local == NULL))
        status = nzd_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_dist_cg_solve: b or x is NULL");
    if (status == NZ_SUCCESS) status = check_options(ctx, options, dA->global_rows, opt);
    return nz_dist_agree(ctx, dA->comm, status);
}

/* ||2^e b|| into c->bnorm, e = 0 unless ||b||^2 leaves the safe range: then solve
 * 2^e A x = 2^e b (cg_scalars.h) on a scaled copy of b, or refuse a non-finite b. */
static nz_status_t dist_cg_bnorm(dist_cg_t *c) {
    nz_context_t *ctx = c->ctx;
    nz_dist_matrix_t *dA = c->A;
    nz_status_t status;
    if ((status = global_op(&c->w, OP_DOT_BB, NULL, c->b, 0.0, c->sums)) != NZ_SUCCESS)
        return status;
    if (!nzi_cg_norm2_safe(c->sums[0], dA->value_type)) {
        double bmax = 0.0, xmax = 0.0;
        if ((status = global_maxabs(&c->w, c->b, &bmax)) != NZ_SUCCESS) return status;
        if (!nzi_cg_finite(bmax))
            return nzd_error(ctx, NZ_ERR_BREAKDOWN, "nz_dist_cg_solve: b holds NaN or Inf");
        if (bmax > 0.0) {
            if ((status = global_maxabs(&c->w, c->x, &xmax)) != NZ_SUCCESS) return status;
            c->exponent = nzi_cg_scale_exponent(bmax, xmax, dA->value_type);
        }
        if (c->exponent != 0) {
            status = nzd_vec_alloc(ctx, dA->device, &c->b_scaled, dA->rows, dA->value_size,
                                   "nz_dist_cg_solve: scaled b");
            if (status == NZ_SUCCESS)
                status = local_scale(&c->w, c->b_scaled, c->b, ldexp(1.0, c->exponent));
            if ((status = nz_dist_agree(ctx, dA->comm, status)) != NZ_SUCCESS) return status;
            c->b = c->b_scaled;
            if ((status = global_op(&c->w, OP_DOT_BB, NULL, c->b, 0.0, c->sums)) != NZ_SUCCESS)
                return status;
        } else if (bmax == 0.0) {
            c->sums[0] = 0.0;
        }
    }
    c->bnorm = sqrt(c->sums[0]);
    if (!nzi_cg_finite(c->bnorm))
        return nzd_error(ctx, NZ_ERR_BREAKDOWN, "nz_dist_cg_solve: b holds NaN or Inf");
    return NZ_SUCCESS;
}

/* Setup: the local plan's algorithm for the result, workspace, history, the Jacobi
 * preconditioner (its first bad diagonal entry over all ranks) and ||2^e b||; timed into
 * res.setup_seconds from a barrier. */
static nz_status_t dist_cg_setup(dist_cg_t *c) {
    nz_context_t *ctx = c->ctx;
    nz_dist_matrix_t *dA = c->A;
    nz_status_t status;
    int64_t bad_row = -1;
    MPI_Barrier(dA->comm);
    double t0 = MPI_Wtime();
    c->res.alg = NZ_ALG_AUTO; /* a rank without a local block reports auto */
    if (dA->local_plan != NULL) {
        nz_spmv_plan_info_t info;
        if (nz_spmv_plan_info(dA->local_plan, &info) == NZ_SUCCESS) c->res.alg = info.alg;
    }
    status = work_create(&c->w, c->opt.precond == NZ_PRECOND_JACOBI, &bad_row);
    if (status == NZ_SUCCESS && c->opt.record_history) {
        c->s.history_capacity = c->opt.max_iterations + 1;
        status = nzd_vec_alloc(ctx, NULL, (void **)&c->history, c->s.history_capacity,
                               sizeof(double), "nz_dist_cg_solve: history");
        c->s.history = c->history;
    }
    status = nz_dist_agree(ctx, dA->comm, status);
    if (status != NZ_SUCCESS) return status;
    int64_t first_bad = bad_row < 0 ? INT64_MAX : bad_row;
    MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT64_T, MPI_MIN, dA->comm);
    if (first_bad != INT64_MAX)
        return nzd_error(ctx, NZ_ERR_BREAKDOWN,
                         "nz_dist_cg_solve: Jacobi preconditioner: diagonal entry (%lld, %lld) "
                         "of A is missing, not positive or not finite (A is not SPD)",
                         (long long)first_bad, (long long)first_bad);
    if ((status = dist_cg_bnorm(c)) != NZ_SUCCESS) return status;
    c->res.setup_seconds = MPI_Wtime() - t0;
    return NZ_SUCCESS;
}

/* b = 0: the solution is x = 0 exactly, whatever the guess. */
static nz_status_t dist_cg_zero_rhs(dist_cg_t *c, double t0) {
    nz_dist_matrix_t *dA = c->A;
    const size_t bytes = (size_t)dA->rows * dA->value_size;
    nz_status_t status = dA->rows == 0        ? NZ_SUCCESS
                         : dA->device != NULL ? nz_device_memset(c->ctx, c->x, 0, bytes)
                                              : (memset(c->x, 0, bytes), NZ_SUCCESS);
    status = nz_dist_agree(c->ctx, dA->comm, status);
    if (status != NZ_SUCCESS) return status;
    c->s.state = NZI_CG_CONVERGED;
    c->res.residual_norm = c->res.relative_residual = 0.0;
    if (c->history != NULL) {
        c->history[0] = 0.0;
        c->res.history_length = 1;
    }
    c->res.solve_seconds = MPI_Wtime() - t0;
    return NZ_SUCCESS;
}

/* The iterations: the tolerance, x scaled, the initial residual, then q = A p; alpha = r'z /
 * p'q; x += alpha p; r -= alpha q; z = M^-1 r; beta; p = z + beta p, with a true-residual check
 * whenever the recursive residual meets the tolerance. */
static nz_status_t dist_cg_iterate(dist_cg_t *c) {
    nz_context_t *ctx = c->ctx;
    nz_dist_matrix_t *dA = c->A;
    cg_work_t *w = &c->w;
    nzi_cg_scalars_t *s = &c->s;
    double *sums = c->sums;
    nz_status_t status;
    const double tol =
        nzi_cg_scaled_tolerance(c->opt.rtol, c->opt.atol, c->bnorm, c->exponent, &c->reltol);
    s->tol2 = tol * tol;
    if (c->exponent != 0) {
        status = nz_dist_agree(ctx, dA->comm, local_scale(w, c->x, c->x, ldexp(1.0, c->exponent)));
        if (status != NZ_SUCCESS) return status;
        c->x_scaled = 1;
    }
    status = nz_dist_spmv(dA, 1.0, c->x, 0.0, w->q);
    if ((status = reduce(w, status == NZ_SUCCESS ? vector_op(w, OP_RESIDUAL, NULL, c->b, 0.0, sums)
                                                 : status, sums)) != NZ_SUCCESS)
        return status;
    nzi_cg_after_init(s, sums[0], sums[1]);
    for (;;) {
        while (s->state == NZI_CG_RUNNING) {
            status = nz_dist_spmv(dA, 1.0, w->p, 0.0, w->q);
            if (status == NZ_SUCCESS) status = vector_op(w, OP_DOT_PQ, NULL, NULL, 0.0, sums);
            if ((status = reduce(w, status, sums)) != NZ_SUCCESS) return status;
            nzi_cg_after_pq(s, sums[0]);
            if (s->state != NZI_CG_RUNNING) break;
            if ((status = global_op(w, OP_UPDATE, c->x, NULL, s->alpha, sums)) != NZ_SUCCESS)
                return status;
            nzi_cg_after_update(s, sums[0], sums[1]);
            if (s->state != NZI_CG_RUNNING) break;
            if ((status = vector_op(w, OP_UPDATE_P, NULL, NULL, s->beta, sums)) != NZ_SUCCESS)
                return status;
        }
        if (s->state != NZI_CG_CHECK) break;
        /* the recursive residual meets the tolerance: the true one decides, and CG goes on from it
         * (r = b - A x, p = M^-1 r) when it misses: nz_cg_solve's residual replacement */
        status = nz_dist_spmv(dA, 1.0, c->x, 0.0, w->q);
        if (status == NZ_SUCCESS) status = vector_op(w, OP_RESIDUAL, NULL, c->b, 0.0, sums);
        if ((status = reduce(w, status, sums)) != NZ_SUCCESS) return status;
        nzi_cg_after_replace(s, sums[0], sums[1]);
    }
    return NZ_SUCCESS;
}

/* After the iterations: the true residual of the returned x, x scaled back, the history
 * unscaled, and one distributed SpMV timed on its own. */
static nz_status_t dist_cg_true_residual(dist_cg_t *c, double t0) {
    nz_context_t *ctx = c->ctx;
    nz_dist_matrix_t *dA = c->A;
    cg_work_t *w = &c->w;
    double *sums = c->sums;
    const int exponent = c->exponent;
    nz_status_t status = nz_dist_spmv(dA, 1.0, c->x, 0.0, w->q);
    if ((status = reduce(w, status == NZ_SUCCESS
                                ? vector_op(w, OP_TRUE_RESIDUAL, NULL, c->b, 0.0, sums)
                                : status, sums)) != NZ_SUCCESS)
        return status;
    nzi_cg_after_true(&c->s, sums[0]);
    if (c->x_scaled) {
        status = nz_dist_agree(ctx, dA->comm, local_scale(w, c->x, c->x, ldexp(1.0, -exponent)));
        if (status != NZ_SUCCESS) return status;
        c->x_scaled = 0;
    }
    if ((status = sync_all(dA)) != NZ_SUCCESS) return status;
    c->res.solve_seconds = MPI_Wtime() - t0;
    c->res.residual_norm = ldexp(sqrt(sums[0]), -exponent);
    c->res.relative_residual = sqrt(sums[0]) / c->bnorm;
    if (c->history != NULL) {
        c->res.history_length = c->s.iterations + 1 < c->s.history_capacity
                                    ? c->s.iterations + 1
                                    : c->s.history_capacity;
        nzi_cg_unscale_history(c->history, c->res.history_length, exponent);
    }
    double t1 = MPI_Wtime();
    for (int k = 0; k < NZD_CG_SPMV_TIMING_REPEATS && status == NZ_SUCCESS; k++)
        status = nz_dist_spmv(dA, 1.0, c->x, 0.0, w->q);
    if (status == NZ_SUCCESS) status = sync_all(dA);
    c->res.spmv_seconds = (MPI_Wtime() - t1) / NZD_CG_SPMV_TIMING_REPEATS;
    return nz_dist_agree(ctx, dA->comm, status);
}

/* The result with the slowest rank's times (its history moves to the caller, or is freed
 * without a result) and the status that names how the solve ended. */
static nz_status_t dist_cg_report(dist_cg_t *c, nz_cg_result_t *result) {
    nz_cg_result_t *res = &c->res;
    double times[3] = {res->setup_seconds, res->solve_seconds, res->spmv_seconds};
    MPI_Allreduce(MPI_IN_PLACE, times, 3, MPI_DOUBLE, MPI_MAX, c->A->comm);
    res->setup_seconds = times[0];
    res->solve_seconds = times[1];
    res->spmv_seconds = times[2];
    res->iterations = c->s.iterations;
    res->seconds_per_iteration =
        res->solve_seconds / (double)(c->s.iterations > 0 ? c->s.iterations : 1);
    res->history = c->history;
    c->history = NULL;
    nz_status_t status = final_status(c->ctx, &c->s, res->relative_residual, c->reltol);
    if (result != NULL)
        *result = *res;
    else
        nz_free(c->ctx, res->history);
    return status;
}

/* Setup, iterations and the true residual, then the report: the phases above, each ending in
 * a status every rank agrees on. */
nz_status_t nz_dist_cg_solve(nz_context_t *ctx, nz_dist_matrix_t *dA, const void *b_local,
                             void *x_local, const nz_cg_options_t *options,
                             nz_cg_result_t *result) {
    nz_status_t status = nzd_check_matrix(dA);
    dist_cg_t c;
    memset(&c, 0, sizeof c);
    if (status != NZ_SUCCESS) return status;
    if (ctx == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (ctx != dA->ctx)
        return nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT, "nz_dist_cg_solve: dA belongs to another context");
    /* NaN residuals until one is computed (as nz_cg_solve) */
    c.res.residual_norm = c.res.relative_residual = NAN;
    if (result != NULL) *result = c.res;
    c.ctx = ctx;
    c.A = dA;
    c.b = b_local;
    c.x = x_local;
    c.w.M = dA;
    status = dist_cg_check_arguments(ctx, dA, b_local, x_local, options, &c.opt);
    if (status != NZ_SUCCESS) return status;

    if ((status = dist_cg_setup(&c)) != NZ_SUCCESS) goto cleanup;
    MPI_Barrier(dA->comm);
    const double t0 = MPI_Wtime();
    c.s.max_iterations = c.opt.max_iterations;
    if (c.bnorm == 0.0) {
        if ((status = dist_cg_zero_rhs(&c, t0)) != NZ_SUCCESS) goto cleanup;
    } else {
        if ((status = dist_cg_iterate(&c)) != NZ_SUCCESS) goto cleanup;
        if ((status = dist_cg_true_residual(&c, t0)) != NZ_SUCCESS) goto cleanup;
    }
    status = dist_cg_report(&c, result);
cleanup:
    nz_free(ctx, c.history);
    if (c.w.M != NULL && c.b_scaled != NULL) nzd_vec_free(ctx, dA->device, c.b_scaled);
    work_free(&c.w);
    return status;
}
