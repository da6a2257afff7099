/* dist_cg.c: nz_dist_cg_solve, the CG spelling of nz_dist_solve (the library's CG, written once on the Krylov vector operations). */
#include "dist_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NZD_CG_SPMV_TIMING_REPEATS 3

/* One distributed SpMV timed on its own after the solve (result->spmv_seconds, the slowest
 * rank's): x_local in, a scratch vector out. */
static nz_status_t time_spmv(nz_context_t *ctx, nz_dist_matrix_t *dA, const void *x,
                             double *seconds) {
    void *q = NULL;
    nz_status_t status = nzd_vec_alloc(ctx, dA->device, &q, dA->rows > 0 ? dA->rows : 1,
                                       dA->value_size, "nz_dist_cg_solve: timing vector");
    status = nz_dist_agree(ctx, dA->comm, status);
    if (status != NZ_SUCCESS) {
        nzd_vec_free(ctx, dA->device, q);
        return status;
    }
    MPI_Barrier(dA->comm);
    const double t0 = MPI_Wtime();
    for (int k = 0; k < NZD_CG_SPMV_TIMING_REPEATS && status == NZ_SUCCESS; k++)
        status = nz_dist_spmv(dA, 1.0, x, 0.0, q);
    if (status == NZ_SUCCESS) status = nz_context_synchronize(ctx);
    double t = (MPI_Wtime() - t0) / NZD_CG_SPMV_TIMING_REPEATS;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, dA->comm);
    *seconds = t;
    nzd_vec_free(ctx, dA->device, q);
    return nz_dist_agree(ctx, dA->comm, status);
}

/* CG with the options and result of nz_cg_solve: nz_dist_solve with NZ_METHOD_CG (NONE or
 * JACOBI; use_graph, check_interval and keep_format do not apply), the result mapped, and one
 * SpMV timed after the solve. */
nz_status_t nz_dist_cg_solve(nz_context_t *ctx, nz_dist_matrix_t *dA, const void *b_local,
                             void *x_local, const nz_cg_options_t *options,
                             nz_cg_result_t *result) {
    nz_cg_result_t out;
    nz_solve_options_t opt;
    nz_solve_result_t res;
    memset(&out, 0, sizeof out);
    memset(&opt, 0, sizeof opt);
    out.residual_norm = out.relative_residual = NAN;
    if (result != NULL) *result = out;
    nz_status_t status = nzd_check_matrix(dA);
    if (status != NZ_SUCCESS) return status;
    if (ctx == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (options != NULL) {
        if (options->precond != NZ_PRECOND_NONE && options->precond != NZ_PRECOND_JACOBI)
            return nzd_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                             "nz_dist_cg_solve: precond must be NZ_PRECOND_NONE or "
                             "NZ_PRECOND_JACOBI (other kinds: nz_dist_solve)");
        opt.rtol = options->rtol;
        opt.atol = options->atol;
        opt.max_iterations = options->max_iterations;
        opt.precond = options->precond;
        opt.alg = options->alg;
        opt.plan_flags = options->plan_flags;
        opt.record_history = options->record_history;
    }
    opt.method = NZ_METHOD_CG;
    status = nz_dist_solve(ctx, dA, b_local, x_local, &opt, &res);
    out.iterations = res.iterations;
    out.residual_norm = res.residual_norm;
    out.relative_residual = res.relative_residual;
    out.setup_seconds = res.setup_seconds;
    out.solve_seconds = res.solve_seconds;
    out.seconds_per_iteration =
        res.solve_seconds / (double)(res.iterations > 0 ? res.iterations : 1);
    out.history = res.history;
    out.history_length = res.history_length;
    out.format = NZ_FORMAT_CSR; /* the blocks are CSR (dist_matrix.c) */
    out.alg = NZ_ALG_AUTO;
    if (dA->local_plan != NULL) {
        nz_spmv_plan_info_t info;
        if (nz_spmv_plan_info(dA->local_plan, &info) == NZ_SUCCESS) out.alg = info.alg;
    }
    if (status >= 0 && res.reason != NZ_SOLVE_NOT_RUN) {
        char message[512];
        snprintf(message, sizeof message, "%s", nz_context_last_error(ctx));
        nz_status_t t = time_spmv(ctx, dA, x_local, &out.spmv_seconds);
        if (t != NZ_SUCCESS) {
            nz_free(ctx, out.history);
            return t;
        }
        if (status != NZ_SUCCESS) (void)nz_context_set_error(ctx, status, message);
    }
    if (result != NULL) *result = out;
    else nz_free(ctx, out.history);
    return status;
}
