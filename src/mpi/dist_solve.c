/* dist_solve.c: nz_dist_solve, the library's Krylov methods (nz_solve_operator) over the ranks: the distributed SpMV as the operator, a rank-ordered allreduce, block preconditioners on each rank's diagonal block. */
#include "dist_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/*
 * Nothing of a method is written here: nz_solve_operator runs the library's CG, BiCGSTAB,
 * GMRES, FGMRES or MINRES with this rank's rows as its vectors, nz_dist_spmv (halo exchange
 * included) as the operator, and the allreduce below for every reduction, so every rank takes
 * the same branches on the same scalars.
 * The allreduce gathers every rank's partial values (MPI_Allgather) and combines them in rank
 * order, so a solve is bitwise reproducible run to run for a given number of ranks (an
 * MPI_Allreduce may sum in any order). Each rank adds one more value to the message: the worst
 * status its operator or preconditioner met since the last reduction. A failure on one rank is
 * thus seen by all at the same reduction and ends the solve everywhere with the failing rank's
 * message (nz_dist_agree), instead of leaving the others waiting in a collective.
 * Preconditioners: a matrix kind (Jacobi, l1-Jacobi, block-Jacobi, Chebyshev, ILU(0), IC(0)) is
 * made on each rank's diagonal block (the rows and columns it owns): block Jacobi over the
 * ranks, with the kind as the subdomain solver (PETSc's default, bjacobi with ILU(0)); the
 * coupling between ranks is left to the Krylov method.
 */

typedef struct dist_solve {
    nz_dist_matrix_t *A;
    nz_preconditioner_t *M;          /* this rank's block preconditioner, or NULL */
    nz_precond_apply_t user_apply;   /* the caller's NZ_PRECOND_USER callback */
    void *user;
    const nz_preconditioner_t *object; /* the caller's preconditioner object */
    double *gather;                  /* size x (max_count + 1) */
    double *mine;                    /* max_count + 1: this rank's part of the message */
    int max_count;
    nz_status_t pending;             /* the worst status since the last reduction */
} dist_solve_t;

static void note(dist_solve_t *d, nz_status_t status) {
    if (status < d->pending) d->pending = status;
}

static nz_status_t dist_apply(void *user, const void *x, void *y) {
    dist_solve_t *d = (dist_solve_t *)user;
    note(d, nz_dist_spmv(d->A, 1.0, x, 0.0, y));
    return NZ_SUCCESS;
}

static nz_status_t dist_precond(void *user, const void *r, void *z) {
    dist_solve_t *d = (dist_solve_t *)user;
    nz_status_t status = NZ_SUCCESS;
    if (d->A->rows == 0) return NZ_SUCCESS;
    if (d->M != NULL) status = nz_precond_apply(d->M, r, z);
    else if (d->object != NULL) status = nz_precond_apply(d->object, r, z);
    else status = d->user_apply(d->user, r, z);
    note(d, status);
    return NZ_SUCCESS;
}

static nz_status_t dist_allreduce(void *user, double *values, int count, nz_reduce_op_t op) {
    dist_solve_t *d = (dist_solve_t *)user;
    nz_dist_matrix_t *dA = d->A;
    if (count < 0 || count > d->max_count)
        return nzd_error(dA->ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_dist_solve: %d values to reduce (> %d)", count, d->max_count);
    double *mine = d->mine;
    memcpy(mine, values, (size_t)count * sizeof(double));
    mine[count] = (double)d->pending;
    int rc = MPI_Allgather(mine, count + 1, MPI_DOUBLE, d->gather, count + 1, MPI_DOUBLE,
                           dA->comm);
    if (rc != MPI_SUCCESS) return nzd_mpi_error(dA->ctx, rc, "nz_dist_solve: MPI_Allgather");
    double worst = 0.0;
    for (int r = 0; r < dA->size; r++)
        worst = fmin(worst, d->gather[(size_t)r * (count + 1) + count]);
    if (worst < 0.0) { /* every rank sees it: agree on the failing rank's message */
        nz_status_t status = nz_dist_agree(dA->ctx, dA->comm, d->pending);
        return status != NZ_SUCCESS ? status : (nz_status_t)worst;
    }
    for (int i = 0; i < count; i++) {
        double v = d->gather[i];
        for (int r = 1; r < dA->size; r++) {
            const double w = d->gather[(size_t)r * (count + 1) + i];
            if (op == NZ_REDUCE_SUM) v += w;
            else if (isnan(w) || isnan(v)) v = NAN;
            else v = w > v ? w : v;
        }
        values[i] = v;
    }
    return NZ_SUCCESS;
}

/* This rank's block preconditioner for a matrix kind (the status agreed by the caller). */
static nz_status_t dist_precond_setup(nz_context_t *ctx, dist_solve_t *d,
                                      const nz_solve_options_t *opt) {
    nz_dist_matrix_t *dA = d->A;
    if (dA->rows == 0) return NZ_SUCCESS;
    if (dA->local == NULL)
        return nzd_error(ctx, NZ_ERR_BREAKDOWN,
                         "nz_dist_solve: rank %d holds no entries of its diagonal block, so no "
                         "%s preconditioner can be made from it", dA->rank,
                         nz_precond_name(opt->precond));
    nz_precond_options_t po;
    memset(&po, 0, sizeof po);
    po.block_size = opt->block_size;
    po.degree = opt->cheb_degree;
    nz_status_t status = nz_precond_create(ctx, &d->M, dA->local, opt->precond, &po);
    if (status != NZ_SUCCESS) {
        char message[400];
        snprintf(message, sizeof message, "%s", nz_context_last_error(ctx));
        return nzd_error(ctx, status, "nz_dist_solve: rank %d's block preconditioner: %s",
                         dA->rank, message);
    }
    return NZ_SUCCESS;
}

static nz_status_t dist_solve_check(nz_context_t *ctx, nz_dist_matrix_t *dA,
                                    const nz_solve_options_t *options) {
    nz_status_t status = nzd_check_matrix(dA);
    if (status != NZ_SUCCESS) return status;
    if (ctx == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (ctx != dA->ctx)
        return nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "nz_dist_solve: dA belongs to another context");
    if (dA->global_rows != dA->global_cols)
        return nzd_error(ctx, NZ_ERR_DIMENSION_MISMATCH,
                         "nz_dist_solve: A is %lld x %lld, not square",
                         (long long)dA->global_rows, (long long)dA->global_cols);
    for (int r = 0; r <= dA->size; r++)
        if (dA->row_part[r] != dA->col_part[r])
            return nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                             "nz_dist_solve: the column partition differs from the row "
                             "partition (x and b must be split alike)");
    if (options != NULL && options->precond == NZ_PRECOND_USER && options->precond_apply == NULL)
        return nzd_error(ctx, NZ_ERR_NULL_ARGUMENT,
                         "nz_dist_solve: NZ_PRECOND_USER needs a precond_apply callback");
    return NZ_SUCCESS;
}

nz_status_t nz_dist_solve(nz_context_t *ctx, nz_dist_matrix_t *dA, const void *b_local,
                          void *x_local, const nz_solve_options_t *options,
                          nz_solve_result_t *result) {
    nz_solve_result_t res;
    nz_solve_options_t opt;
    dist_solve_t d;
    nz_operator_t op;
    memset(&res, 0, sizeof res);
    memset(&d, 0, sizeof d);
    res.residual_norm = res.relative_residual = NAN;
    res.method = options != NULL ? options->method : NZ_METHOD_CG;
    if (result != NULL) *result = res;
    nz_status_t status = dist_solve_check(ctx, dA, options);
    if (status != NZ_SUCCESS) return status; /* the same on every rank: no agreement needed */
    if (options != NULL) opt = *options;
    else memset(&opt, 0, sizeof opt);
    d.A = dA;
    /* GMRES reduces 2 (restart + 1) values at once (multi_dot2: gmres.c; restart checked by
     * nz_solve_operator) */
    d.max_count = 2 * ((opt.restart > 0 && opt.restart <= 1000 ? opt.restart : 30) + 1) + 2;
    if (d.max_count < 4) d.max_count = 4;
    size_t bytes = ((size_t)dA->size + 1) * (size_t)(d.max_count + 1) * sizeof(double);
    status = nz_malloc(ctx, (void **)&d.gather, bytes);
    if (status == NZ_SUCCESS) d.mine = d.gather + (size_t)dA->size * (size_t)(d.max_count + 1);
    const double t0 = MPI_Wtime();
    if (status == NZ_SUCCESS) {
        if (opt.preconditioner != NULL) {
            d.object = opt.preconditioner;
        } else if (opt.precond == NZ_PRECOND_USER) {
            d.user_apply = opt.precond_apply;
            d.user = opt.precond_user;
        } else if (opt.precond != NZ_PRECOND_NONE) {
            status = dist_precond_setup(ctx, &d, &opt);
        }
    }
    status = nz_dist_agree(ctx, dA->comm, status);
    const double setup = MPI_Wtime() - t0;
    if (status == NZ_SUCCESS) {
        if (opt.precond != NZ_PRECOND_NONE || opt.preconditioner != NULL) {
            opt.precond = NZ_PRECOND_USER;
            opt.precond_apply = dist_precond;
            opt.precond_user = &d;
            opt.preconditioner = NULL;
        }
        memset(&op, 0, sizeof op);
        op.rows = dA->rows;
        op.value_type = dA->value_type;
        op.location = dA->device != NULL ? NZ_DEVICE : NZ_HOST;
        op.apply = dist_apply;
        op.user = &d;
        op.allreduce = dist_allreduce;
        op.reduce_user = &d;
        status = nz_solve_operator(ctx, &op, b_local, x_local, &opt, &res);
        /* the slowest rank's times (everything else is the same on every rank) */
        double times[2] = {res.setup_seconds + setup, res.solve_seconds};
        MPI_Allreduce(MPI_IN_PLACE, times, 2, MPI_DOUBLE, MPI_MAX, dA->comm);
        res.setup_seconds = times[0];
        res.solve_seconds = times[1];
        if (d.M != NULL) {
            nz_precond_info_t info;
            if (nz_precond_info(d.M, &info) == NZ_SUCCESS) {
                res.precond_shift = info.shift;
                res.precond_attempts = info.attempts;
            }
        }
    }
    nz_precond_destroy(&d.M);
    nz_free(ctx, d.gather);
    res.status = status;
    if (result != NULL) *result = res;
    else nz_free(ctx, res.history);
    return status;
}
