/* cmd_cg.c: `nz cg`: conjugate gradients on a matrix file or the built-in 3-D Q1 FE problem. */
#include "cli.h"
#include "cmd_cg.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const CMD = "cg";

/* One `nz cg` between its phases. */
typedef struct cg_command {
    cg_cli_options_t o;
    nz_context_t *ctx;
    int cuda;                       /* the CUDA backend */
    nz_value_type_t vt;
    size_t vs;                      /* bytes per value */
    int64_t n;                      /* unknowns */
    nz_matrix_t *A, *B;             /* host: the problem; B its copy in the format asked for */
    nz_matrix_t *dA, *dA_assembled; /* device: A or B uploaded; the GPU-assembled FE matrix */
    void *b, *u, *x;                /* host: right-hand side, FE exact solution, solution */
    void *db, *dx, *du, *db_gen;    /* device copies; db_gen: the GPU-assembled b */
    const nz_matrix_t *solve_matrix;
    const void *solve_b;
    nz_cg_result_t res;
    nz_status_t solve_status;
    double host_assembly, device_assembly, b_transfer, format_seconds;
} cg_command_t;

/* The context: threads and, for the CUDA backend, device 0. */
static int cg_open_context(cg_command_t *c) {
    int rc = NZ_EXIT_OK;
    nz_status_t status = nz_cli_context_create(&c->ctx);
    nz_context_t *ctx = c->ctx;
    NZ_CLI_TRY(status);
    if (c->o.threads > 0) NZ_CLI_TRY(nz_context_set_threads(ctx, c->o.threads));
    if (c->cuda) NZ_CLI_TRY(nz_context_set_device(ctx, 0, NULL));
cleanup:
    return rc;
}

/* The FE problem: assembled on the host (unless only the GPU's CSR is wanted) and on the GPU
 * (--assembly device or both on cuda), each timed. */
static int cg_generate(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const cg_cli_options_t *o = &c->o;
    const int need_host = !(c->cuda && o->fe3d && o->assembly == 1 && o->format == NZ_FORMAT_CSR);
    int rc = NZ_EXIT_OK;
    if (need_host) {
        double t0 = nz_cli_wtime();
        NZ_CLI_TRY(nz_gen_fe3d(ctx, &c->A, &c->b, &c->u, o->fe3d, c->vt));
        c->host_assembly = nz_cli_wtime() - t0;
    }
    if (c->cuda && o->assembly >= 1) {
        double t0 = nz_cli_wtime();
        NZ_CLI_TRY(nz_gen_fe3d_device(ctx, &c->dA_assembled, &c->db_gen, &c->du, o->fe3d, c->vt));
        c->device_assembly = nz_cli_wtime() - t0;
    }
    c->n = (o->fe3d - 1) * (o->fe3d - 1) * (o->fe3d - 1);
cleanup:
    return rc;
}

/* b from --b: an n-vector. */
static int read_b(const char *cmd, nz_context_t *ctx, const char *b_path, nz_value_type_t vt,
                  int64_t n, void **b) {
    int64_t rows = 0, cols = 0;
    nz_status_t status = nz_mm_read_dense(ctx, b, &rows, &cols, b_path, vt);
    if (status != NZ_SUCCESS) return nz_cli_file_error(cmd, ctx, status);
    if (rows * cols != n || (rows != 1 && cols != 1)) {
        nz_cli_error(cmd, "%s: b is %lld x %lld, A has %lld rows", b_path, (long long)rows,
                     (long long)cols, (long long)n);
        return NZ_EXIT_FAIL;
    }
    return NZ_EXIT_OK;
}

/* b = A ones, so that the exact solution is known to be ones; a NaN or Inf in A is named here,
 * the solver would see only b. */
static int b_from_ones(const char *cmd, nz_context_t *ctx, const nz_matrix_t *A,
                       const char *matrix_path, nz_value_type_t vt, int64_t n, void **b) {
    const size_t vs = vt == NZ_F32 ? 4 : 8;
    void *ones = NULL;
    int rc = NZ_EXIT_OK;
    char nonfinite[1024];
    if (nz_cli_cg_nonfinite(ctx, A, matrix_path, nonfinite, sizeof nonfinite)) {
        nz_cli_error(cmd, "%s", nonfinite);
        return NZ_EXIT_FAIL;
    }
    NZ_CLI_TRY(nz_malloc(ctx, &ones, (size_t)n * vs + 1));
    for (int64_t i = 0; i < n; i++) nz_cli_value_set(ones, vt, i, 1.0);
    NZ_CLI_TRY(nz_malloc(ctx, b, (size_t)n * vs + 1));
    NZ_CLI_TRY(nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, ones, 0.0, *b));
cleanup:
    nz_free(ctx, ones);
    return rc;
}

int nz_cmd_cg_read_system(const char *cmd, nz_context_t *ctx, const char *matrix_path,
                          const char *b_path, nz_value_type_t vt, const char *needs,
                          nz_matrix_t **A, void **b, int64_t *n) {
    nz_matrix_info_t info;
    int rc = NZ_EXIT_OK;
    nz_status_t status = nz_matrix_read(ctx, A, matrix_path, vt);
    if (status != NZ_SUCCESS) return nz_cli_file_error(cmd, ctx, status);
    NZ_CLI_TRY(nz_matrix_info(ctx, &info, *A));
    if (info.rows != info.cols) {
        nz_cli_error(cmd, "%s is %lld x %lld; %s", matrix_path, (long long)info.rows,
                     (long long)info.cols, needs);
        return NZ_EXIT_FAIL;
    }
    *n = info.rows;
    rc = b_path != NULL ? read_b(cmd, ctx, b_path, vt, *n, b)
                        : b_from_ones(cmd, ctx, *A, matrix_path, vt, *n, b);
cleanup:
    return rc;
}

/* A square matrix from its file, and b (from --b, or A ones). */
static int cg_read_file(cg_command_t *c) {
    return nz_cmd_cg_read_system(CMD, c->ctx, c->o.matrix_path, c->o.b_path, c->vt,
                                 "CG needs a square (SPD) matrix", &c->A, &c->b, &c->n);
}

/* --format auto on cuda: the planner's format for the GPU, converted here on the host before
 * the upload (the library converts only host matrices, inside the solve, as on the cpu). */
static int cg_gpu_format(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    nz_matrix_stats_t stats;
    nz_format_t advised = NZ_FORMAT_CSR;
    nz_alg_t advised_alg;
    int rc = NZ_EXIT_OK;
    double t0 = nz_cli_wtime();
    NZ_CLI_TRY(nz_matrix_stats(ctx, &stats, c->A));
    if (nz_spmv_plan_choose(&advised, &advised_alg, NULL, 0, &stats, NZ_BACKEND_CUDA,
                            NZ_FORMAT_COUNT, c->o.cg.plan_flags & NZ_PLAN_DETERMINISTIC) ==
            NZ_SUCCESS &&
        advised != NZ_FORMAT_CSR) {
        nz_status_t status = nz_matrix_convert(ctx, &c->B, c->A, advised, NULL);
        if (status == NZ_SUCCESS)
            c->o.format = advised;
        else if (status != NZ_ERR_TOO_MUCH_PADDING && status != NZ_ERR_UNSUPPORTED)
            NZ_CLI_TRY(status);
    }
    c->format_seconds = nz_cli_wtime() - t0;
cleanup:
    return rc;
}

/* The matrix and vectors the solve runs on: the format asked for (the planner's on cuda), and
 * on cuda the upload with b (the timed transfer) or the GPU-assembled problem, and x. */
static int cg_place(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const cg_cli_options_t *o = &c->o;
    const size_t bytes = (size_t)c->n * c->vs;
    int rc = NZ_EXIT_OK;
    if (c->A != NULL && c->cuda && o->format_auto && (rc = cg_gpu_format(c)) != NZ_EXIT_OK)
        return rc;
    c->solve_matrix = c->B != NULL ? c->B : c->A;
    if (c->A != NULL && c->B == NULL && o->format != NZ_FORMAT_CSR) {
        nz_format_options_t fo;
        memset(&fo, 0, sizeof fo);
        if (!c->cuda && o->format == NZ_FORMAT_SELL && o->alg == NZ_ALG_SIMD) fo.sell_chunk = 8;
        NZ_CLI_TRY(nz_matrix_convert(ctx, &c->B, c->A, o->format, &fo));
        c->solve_matrix = c->B;
    }
    c->solve_b = c->b;
    if (!c->cuda) return NZ_EXIT_OK;
    if (c->A != NULL) {
        /* the host matrix (read, or host-assembled) uploaded, with b: the timed transfer */
        NZ_CLI_TRY(nz_matrix_to_device(ctx, &c->dA, c->solve_matrix, NZ_INDEX_AUTO));
        NZ_CLI_TRY(nz_device_malloc(ctx, &c->db, bytes + 1));
        double t0 = nz_cli_wtime();
        NZ_CLI_TRY(nz_device_copy_from_host(ctx, c->db, c->b, bytes));
        c->b_transfer = nz_cli_wtime() - t0;
    }
    /* the GPU-assembled problem is solved whenever it exists in the requested format */
    const int generated = c->dA_assembled != NULL && o->format == NZ_FORMAT_CSR;
    c->solve_matrix = generated ? c->dA_assembled : c->dA;
    c->solve_b = generated ? c->db_gen : c->db;
    NZ_CLI_TRY(nz_device_malloc(ctx, &c->dx, bytes + 1));
    NZ_CLI_TRY(nz_device_copy_from_host(ctx, c->dx, c->x, bytes));
cleanup:
    return rc;
}

/* The transfer and assembly lines of the report (cuda). */
static int cg_report_transfers(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const nz_cg_result_t *res = &c->res;
    int rc = NZ_EXIT_OK;
    if (c->cuda && c->dA != NULL) {
        nz_matrix_info_t di;
        NZ_CLI_TRY(nz_matrix_info(ctx, &di, c->dA));
        double t = di.transfer_seconds + c->b_transfer;
        printf("transfer: %.3f ms (matrix %.3f ms, %.1f MB + b) = %.1f SpMVs\n", 1e3 * t,
               1e3 * di.transfer_seconds, (double)di.bytes / 1e6,
               res->spmv_seconds > 0 ? t / res->spmv_seconds : 0.0);
    }
    if (c->cuda && c->o.fe3d && (c->host_assembly > 0 || c->device_assembly > 0)) {
        nz_matrix_info_t di;
        double up = 0;
        if (c->dA != NULL && nz_matrix_info(ctx, &di, c->dA) == NZ_SUCCESS)
            up = di.transfer_seconds + c->b_transfer;
        printf("assembly: host %.3f ms + transfer %.3f ms vs device %.3f ms\n",
               1e3 * c->host_assembly, 1e3 * up, 1e3 * c->device_assembly);
    }
cleanup:
    return rc;
}

/* The FE problem's discrete L2 error ||u_h - u|| h^(3/2) over the nodes (u fetched from the
 * GPU when only the GPU assembled it). */
static int cg_report_fe_error(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const int64_t n = c->n;
    double err = 0;
    int rc = NZ_EXIT_OK;
    if (c->u == NULL) {
        NZ_CLI_TRY(nz_malloc(ctx, &c->u, (size_t)n * c->vs + 1));
        NZ_CLI_TRY(nz_device_copy_to_host(ctx, c->u, c->du, (size_t)n * c->vs));
    }
    for (int64_t i = 0; i < n; i++) {
        double d = nz_cli_value_get(c->x, c->vt, i) - nz_cli_value_get(c->u, c->vt, i);
        err += d * d;
    }
    double h = 1.0 / (double)c->o.fe3d;
    printf("L2 error: %.6e\n", sqrt(err) * pow(h, 1.5));
cleanup:
    return rc;
}

/* The report: problem, setup, status, iterations, residual, times, the FE L2 error, transfers,
 * history; then --out. Returns the exit status of the solve. */
static int cg_report(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const cg_cli_options_t *o = &c->o;
    const nz_cg_result_t *res = &c->res;
    const nz_status_t solve_status = c->solve_status;
    const int64_t n = c->n;
    int rc = NZ_EXIT_OK;
    nz_matrix_info_t mi;
    NZ_CLI_TRY(nz_matrix_info(ctx, &mi, c->solve_matrix));
    if (o->fe3d)
        printf("problem: fe3d N=%lld (%lld unknowns, %lld nonzeros)\n", (long long)o->fe3d,
               (long long)n, (long long)mi.nnz);
    else
        printf("problem: %s (%lld unknowns, %lld nonzeros)\n", o->matrix_path, (long long)n,
               (long long)mi.nnz);
    printf("setup: %s, %s%s, %s, alg %s, precond %s, x0 %s%s\n", nz_cli_precision_name(c->vt),
           nz_format_name(res->format), o->format_auto ? " (planner)" : "",
           c->cuda ? nz_context_device_name(ctx) : "cpu",
           nz_alg_name(res->alg), o->cg.precond == NZ_PRECOND_JACOBI ? "jacobi" : "none",
           o->x0_random ? "random" : "zero", res->used_graph ? ", cuda graph" : "");
    /* converged only when the true residual meets the tolerance (nz_cg_solve) */
    printf("status: %s\n", solve_status == NZ_SUCCESS ? "converged"
                           : solve_status == NZ_MAX_ITERATIONS ? "not converged (iteration limit)"
                           : solve_status == NZ_STAGNATED
                               ? "not converged (stagnated above the tolerance)"
                               : "breakdown");
    if (solve_status != NZ_SUCCESS) nz_cli_library_message(CMD, ctx, solve_status);
    printf("iterations: %lld\n", (long long)res->iterations);
    if (!isnan(res->relative_residual)) /* NaN: the solve stopped before computing one */
        printf("relative residual: %.3e\n", res->relative_residual);
    printf("time per iteration: %.3f ms\n", 1e3 * res->seconds_per_iteration);
    printf("solve time: %.4f s (setup %.4f s)\n", res->solve_seconds, res->setup_seconds);
    if (c->format_seconds > 0)
        printf("format: %s chosen and converted on the host in %.4f s (before the upload)\n",
               nz_format_name(res->format), c->format_seconds);
    printf("MUPS: %.1f\n", res->solve_seconds > 0 ? (double)n * (double)res->iterations /
                                                        res->solve_seconds / 1e6 : 0.0);
    printf("spmv: %.3f ms\n", 1e3 * res->spmv_seconds);
    if (o->fe3d && (rc = cg_report_fe_error(c)) != NZ_EXIT_OK) return rc;
    if ((rc = cg_report_transfers(c)) != NZ_EXIT_OK) return rc;
    if (o->history)
        for (int64_t k = 0; k < res->history_length; k++)
            printf("history %lld: %.6e\n", (long long)k, res->history[k]);
    nz_status_t status;
    if (o->out_path != NULL &&
        (status = nz_mm_write_dense(ctx, o->out_path, c->vt, n, 1, c->x)) != NZ_SUCCESS)
        return nz_cli_file_error(CMD, ctx, status);
    rc = solve_status == NZ_SUCCESS ? NZ_EXIT_OK
         : solve_status > 0         ? NZ_EXIT_NOT_CONVERGED /* finished, not converged */
                                    : NZ_EXIT_FAIL;
cleanup:
    return rc;
}

static void cg_command_free(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    if (ctx == NULL) return;
    nz_free(ctx, c->res.history);
    nz_free(ctx, c->b);
    nz_free(ctx, c->u);
    nz_free(ctx, c->x);
    if (c->db != NULL) nz_device_free(ctx, c->db);
    if (c->dx != NULL) nz_device_free(ctx, c->dx);
    if (c->du != NULL) nz_device_free(ctx, c->du);
    if (c->db_gen != NULL) nz_device_free(ctx, c->db_gen);
    nz_matrix_destroy(&c->dA);
    nz_matrix_destroy(&c->dA_assembled);
    nz_matrix_destroy(&c->B);
    nz_matrix_destroy(&c->A);
    nz_context_destroy(&c->ctx);
}

/* Parse; the problem (generated or read) and x0; its format and location; the solve; the
 * report. A breakdown is reported like a finished solve. */
int nz_cmd_cg(int argc, char **argv) {
    cg_command_t command;
    cg_command_t *c = &command;
    memset(c, 0, sizeof *c);
    int rc = nz_cmd_cg_parse_options(argc, argv, &c->o);
    if (rc == NZ_CLI_HELP) return NZ_EXIT_OK;
    if (rc != NZ_EXIT_OK) return rc;
    c->vt = c->o.value_type;
    c->vs = c->vt == NZ_F32 ? 4 : 8;
    c->cuda = c->o.backend == NZ_BACKEND_CUDA;

    if ((rc = cg_open_context(c)) != NZ_EXIT_OK) goto cleanup;
    nz_context_t *ctx = c->ctx;
    if ((rc = c->o.fe3d ? cg_generate(c) : cg_read_file(c)) != NZ_EXIT_OK) goto cleanup;
    NZ_CLI_TRY(nz_malloc(ctx, &c->x, (size_t)c->n * c->vs + 1));
    for (int64_t i = 0; i < c->n; i++)
        nz_cli_value_set(c->x, c->vt, i, c->o.x0_random ? nz_cli_hash_unit((uint64_t)i) : 0.0);
    if ((rc = cg_place(c)) != NZ_EXIT_OK) goto cleanup;

    c->solve_status = nz_cg_solve(ctx, c->solve_matrix, c->solve_b, c->cuda ? c->dx : c->x,
                                  &c->o.cg, &c->res);
    if (c->solve_status != NZ_ERR_BREAKDOWN && c->solve_status < 0) NZ_CLI_TRY(c->solve_status);
    if (c->cuda) NZ_CLI_TRY(nz_device_copy_to_host(ctx, c->x, c->dx, (size_t)c->n * c->vs));
    rc = cg_report(c);

cleanup:
    cg_command_free(c);
    return rc;
}
