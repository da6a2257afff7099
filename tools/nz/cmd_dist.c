/* cmd_dist.c: `nz cg`, `nz solve`, `nz spmv` and `nz bench --dist` over MPI ranks when launched
 * by mpiexec: the cg, solve and spmv runs (options: cmd_dist_options.c; bench --dist:
 * cmd_dist_bench.c). */
#include "commands.h"

#ifdef NZ_HAVE_DIST
#include "cmd_dist.h"
#include "cmd_solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank_of_world(void) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* Launched by mpiexec / a PMI launcher: the size it announces, 0 if it gives none, -1 if not. */
static int launched_size(void) {
    const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (int k = 0; k < 3; k++) {
        const char *v = getenv(names[k]);
        if (v != NULL && v[0] != '\0') return atoi(v);
    }
    return getenv("PMIX_RANK") != NULL || getenv("PMI_RANK") != NULL ? 0 : -1;
}

int nz_dist_cli_wanted(const char *command, int argc, char **argv) {
    if (strcmp(command, "cg") != 0 && strcmp(command, "solve") != 0 &&
        strcmp(command, "spmv") != 0 && strcmp(command, "bench") != 0)
        return 0;
    int dist = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--dist") == 0) dist = 1;
    const int size = launched_size();
    if (size < 0) {
        /* without mpiexec: exactly the serial tool (which refuses --dist as unknown) */
        return 0;
    }
    if (strcmp(command, "bench") == 0) return dist;
    return dist || size != 1;
}

/* The matrix of the command: generated per rank (--fe3d, --laplace3d), or made on rank 0 (its
 * file, or solve's --convdiff3d) and scattered. A file that rank 0 cannot read fails on every
 * rank with rank 0's message. With nonfinite != NULL (cg or solve with b = A ones), a NaN or Inf
 * in the file's A is found on rank 0 as by the serial nz cg: then *nonfinite = 1 on every rank
 * (rank 0 printed the message) and no matrix is made. */
static nz_status_t load(nz_context_t *ctx, const dist_cli_t *o, const nz_dist_options_t *opt,
                        nz_dist_matrix_t **dA, void **b, void **u, int *nonfinite) {
    if (o->fe3d > 0)
        return nz_dist_gen_fe3d(ctx, dA, MPI_COMM_WORLD, o->fe3d, o->value_type, opt, b, u);
    if (o->laplace3d > 0)
        return nz_dist_gen_laplace3d(ctx, dA, MPI_COMM_WORLD, o->laplace3d, o->laplace3d,
                                     o->laplace3d, o->value_type, opt);
    nz_matrix_t *A = NULL;
    nz_status_t status = NZ_SUCCESS;
    if (rank_of_world() == 0)
        status = o->convdiff3d > 0 ? nz_gen_convdiff3d(ctx, &A, o->convdiff3d, o->convdiff3d,
                                                       o->convdiff3d, o->peclet, o->value_type)
                                   : nz_matrix_read(ctx, &A, o->matrix_path, o->value_type);
    status = nz_dist_agree(ctx, MPI_COMM_WORLD, status);
    if (status == NZ_SUCCESS && nonfinite != NULL) {
        char message[1024];
        if (rank_of_world() == 0 &&
            (*nonfinite = nz_cli_cg_nonfinite(ctx, A, o->matrix_path, message, sizeof message)))
            nz_cli_error(o->command, "%s", message);
        MPI_Bcast(nonfinite, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (*nonfinite) {
            nz_matrix_destroy(&A);
            return NZ_SUCCESS;
        }
    }
    if (status == NZ_SUCCESS) status = nz_dist_matrix_scatter(ctx, dA, MPI_COMM_WORLD, 0, A, opt);
    nz_matrix_destroy(&A);
    return status;
}

/* A local vector in the matrix's location from host values. */
nz_status_t nz_cli_dist_to_location(nz_context_t *ctx, int device, const void *host,
                                    size_t bytes, void **out) {
    nz_status_t status = device ? nz_device_malloc(ctx, out, bytes + 16) : nz_malloc(ctx, out, bytes + 16);
    if (status != NZ_SUCCESS) return status;
    if (device) return nz_device_copy_from_host(ctx, *out, host, bytes);
    memcpy(*out, host, bytes);
    return NZ_SUCCESS;
}

/* The one call of nz_device_copy_to_host in this file (the core is renaming it). */
static nz_status_t to_host(nz_context_t *ctx, void *dst, const void *src, size_t bytes) {
    return nz_device_copy_to_host(ctx, dst, src, bytes);
}

void nz_cli_dist_free_location(nz_context_t *ctx, int device, void *p) {
    if (p == NULL) return;
    if (device)
        nz_device_free(ctx, p);
    else
        nz_free(ctx, p);
}

/* Gather a host vector to rank 0 and write it there; every rank returns the same status. */
static nz_status_t write_gathered(nz_context_t *ctx, nz_dist_matrix_t *dA, int columns,
                                  const void *local, int64_t length, const char *path) {
    void *all = NULL;
    nz_dist_layout_t L;
    nz_status_t status = nz_dist_matrix_layout(dA, &L);
    const size_t vs = L.value_type == NZ_F32 ? 4 : 8;
    if (status == NZ_SUCCESS && rank_of_world() == 0)
        status = nz_malloc(ctx, &all, (size_t)length * vs + 16);
    status = nz_dist_agree(ctx, MPI_COMM_WORLD, status);
    if (status == NZ_SUCCESS) status = nz_dist_vector_gather(dA, columns, local, 0, all);
    if (status == NZ_SUCCESS && rank_of_world() == 0)
        status = nz_mm_write_dense(ctx, path, L.value_type, length, 1, all);
    status = nz_dist_agree(ctx, MPI_COMM_WORLD, status);
    nz_free(ctx, all);
    return status;
}

/* Rank 0 reads the vector file `path` of `what` (x-like with columns != 0, else y-like) with the
 * serial tool's checks and messages, and scatters it into each rank's host part `local`.
 * Returns an exit status, the same on every rank (library errors printed by every rank, the
 * length by rank 0). */
static int read_scattered(nz_context_t *ctx, const char *cmd, nz_dist_matrix_t *dA, int columns,
                          const char *path, const char *what, void *local) {
    const char *const CMD = cmd;
    int rc = NZ_EXIT_OK, wrong_length = 0;
    void *global = NULL;
    int64_t rows = 0, cols = 0;
    nz_dist_layout_t L;
    NZ_CLI_TRY(nz_dist_matrix_layout(dA, &L));
    const int64_t n = columns ? L.global_cols : L.global_rows;
    nz_status_t status = NZ_SUCCESS;
    if (L.rank == 0) {
        status = nz_mm_read_dense(ctx, &global, &rows, &cols, path, L.value_type);
        if (status == NZ_SUCCESS)
            wrong_length = nz_cli_check_vector_length(cmd, path, what, rows, cols, n,
                                                      columns ? "columns" : "rows") != NZ_EXIT_OK;
    }
    NZ_CLI_TRY(nz_dist_agree(ctx, MPI_COMM_WORLD, status));
    MPI_Bcast(&wrong_length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (wrong_length) {
        rc = NZ_EXIT_FAIL;
        goto cleanup;
    }
    status = nz_dist_vector_scatter(dA, columns, global, 0, local);
    NZ_CLI_TRY(nz_dist_agree(ctx, MPI_COMM_WORLD, status));
cleanup:
    nz_free(ctx, global);
    return rc;
}

/* The report of a distributed solve, printed by rank 0 (err: the FE solution's squared error). */
static void print_cg_report(nz_context_t *ctx, const dist_cli_t *o, int device,
                            const nz_dist_layout_t *L, const nz_cg_result_t *res,
                            nz_status_t solve, double err) {
    const char *cmd = "cg";
    const int64_t n = L->global_rows;
    const nz_value_type_t vt = o->value_type;
    if (o->fe3d > 0)
        printf("problem: fe3d N=%lld (%lld unknowns, %lld nonzeros)\n", (long long)o->fe3d,
               (long long)n, (long long)L->global_nnz);
    else if (o->laplace3d > 0)
        printf("problem: laplace3d N=%lld (%lld unknowns, %lld nonzeros)\n",
               (long long)o->laplace3d, (long long)n, (long long)L->global_nnz);
    else
        printf("problem: %s (%lld unknowns, %lld nonzeros)\n", o->matrix_path, (long long)n,
               (long long)L->global_nnz);
    printf("setup: %s, %d ranks, %s, alg %s, precond %s, x0 %s\n", nz_cli_precision_name(vt),
           L->size, device ? nz_context_device_name(ctx) : "cpu", nz_alg_name(res->alg),
           o->cg.precond == NZ_PRECOND_JACOBI ? "jacobi" : "none",
           o->x0_random ? "random" : "zero");
    printf("status: %s\n", solve == NZ_SUCCESS           ? "converged"
                           : solve == NZ_MAX_ITERATIONS ? "not converged (iteration limit)"
                                                        : "not converged (stagnated above the tolerance)");
    if (solve != NZ_SUCCESS) nz_cli_library_message(cmd, ctx, solve);
    printf("iterations: %lld\n", (long long)res->iterations);
    if (!isnan(res->relative_residual))
        printf("relative residual: %.3e\n", res->relative_residual);
    printf("time per iteration: %.3f ms\n", 1e3 * res->seconds_per_iteration);
    printf("solve time: %.4f s (setup %.4f s)\n", res->solve_seconds, res->setup_seconds);
    printf("MUPS: %.1f\n", res->solve_seconds > 0 ? (double)n * (double)res->iterations /
                                                       res->solve_seconds / 1e6 : 0.0);
    printf("spmv: %.3f ms\n", 1e3 * res->spmv_seconds);
    if (o->fe3d > 0) printf("L2 error: %.6e\n", sqrt(err) * pow(1.0 / (double)o->fe3d, 1.5));
    for (int64_t k = 0; k < res->history_length; k++)
        printf("history %lld: %.6e\n", (long long)k, res->history[k]);
    fflush(stdout);
}

static int run_cg(nz_context_t *ctx, const dist_cli_t *o, const nz_dist_options_t *opt) {
    const char *const CMD = "cg";
    int rc = NZ_EXIT_OK;
    nz_dist_matrix_t *dA = NULL;
    nz_dist_layout_t L;
    nz_cg_result_t res;
    void *b = NULL, *u = NULL, *x = NULL, *hx = NULL, *hu = NULL;
    const int device = opt->device != NULL;
    const nz_value_type_t vt = o->value_type;
    const size_t vs = vt == NZ_F32 ? 4 : 8;
    memset(&res, 0, sizeof res);
    int nonfinite = 0;
    NZ_CLI_TRY(load(ctx, o, opt, &dA, &b, &u, o->b_path == NULL ? &nonfinite : NULL));
    if (nonfinite) {
        rc = NZ_EXIT_FAIL;
        goto cleanup;
    }
    NZ_CLI_TRY(nz_dist_matrix_layout(dA, &L));
    const int64_t rows = L.row_end - L.row_begin, n = L.global_rows;
    if (L.global_rows != L.global_cols) {
        if (L.rank == 0)
            nz_cli_error(CMD, "%s is %lld x %lld; CG needs a square (SPD) matrix", o->matrix_path,
                         (long long)L.global_rows, (long long)L.global_cols);
        rc = NZ_EXIT_FAIL;
        goto cleanup;
    }
    NZ_CLI_TRY(nz_malloc(ctx, &hx, (size_t)rows * vs + 16));
    if (o->b_path != NULL) { /* --b FILE (a matrix file: the serial parser refuses it with --fe3d) */
        if ((rc = read_scattered(ctx, CMD, dA, 0, o->b_path, "b", hx)) != NZ_EXIT_OK) goto cleanup;
        nz_cli_dist_free_location(ctx, device, b);
        b = NULL;
        NZ_CLI_TRY(nz_cli_dist_to_location(ctx, device, hx, (size_t)rows * vs, &b));
    } else if (b == NULL) { /* b = A ones */
        for (int64_t i = 0; i < rows; i++) nz_cli_value_set(hx, vt, i, 1.0);
        NZ_CLI_TRY(nz_cli_dist_to_location(ctx, device, hx, (size_t)rows * vs, &x));
        NZ_CLI_TRY(nz_cli_dist_to_location(ctx, device, hx, (size_t)rows * vs, &b));
        NZ_CLI_TRY(nz_dist_spmv(dA, 1.0, x, 0.0, b));
    }
    for (int64_t i = 0; i < rows; i++)
        nz_cli_value_set(hx, vt, i, o->x0_random ? nz_cli_hash_unit((uint64_t)(L.row_begin + i)) : 0.0);
    nz_cli_dist_free_location(ctx, device, x);
    x = NULL;
    NZ_CLI_TRY(nz_cli_dist_to_location(ctx, device, hx, (size_t)rows * vs, &x));
    nz_status_t solve = nz_dist_cg_solve(ctx, dA, b, x, &o->cg, &res);
    if (solve < 0) NZ_CLI_TRY(solve);
    if (device)
        NZ_CLI_TRY(to_host(ctx, hx, x, (size_t)rows * vs));
    else
        memcpy(hx, x, (size_t)rows * vs);
    double err = 0.0;
    if (o->fe3d > 0) {
        if (device) {
            NZ_CLI_TRY(nz_malloc(ctx, &hu, (size_t)rows * vs + 16));
            NZ_CLI_TRY(to_host(ctx, hu, u, (size_t)rows * vs));
        }
        for (int64_t i = 0; i < rows; i++) {
            double d = nz_cli_value_get(hx, vt, i) - nz_cli_value_get(device ? hu : u, vt, i);
            err += d * d;
        }
        MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (L.rank == 0) print_cg_report(ctx, o, device, &L, &res, solve, err);
    if (o->out_path != NULL) NZ_CLI_TRY(write_gathered(ctx, dA, 0, hx, n, o->out_path));
    if (solve != NZ_SUCCESS) rc = NZ_EXIT_NOT_CONVERGED; /* a caveat (solve > 0): not converged */
cleanup:
    nz_free(ctx, res.history);
    nz_cli_dist_free_location(ctx, device, b);
    nz_cli_dist_free_location(ctx, device, u);
    nz_cli_dist_free_location(ctx, device, x);
    nz_free(ctx, hx);
    nz_free(ctx, hu);
    nz_dist_matrix_destroy(&dA);
    return rc;
}

/* The line after nz solve's report line: the ranks, where they run, the problem and what the
 * preconditioner is over the ranks (printed by rank 0). */
static void print_solve_ranks(nz_context_t *ctx, const dist_cli_t *o, int device,
                              const nz_dist_layout_t *L) {
    printf("ranks: %d, %s, problem ", L->size, device ? nz_context_device_name(ctx) : "cpu");
    if (o->laplace3d > 0)
        printf("laplace3d N=%lld", (long long)o->laplace3d);
    else if (o->convdiff3d > 0)
        printf("convdiff3d N=%lld peclet %g", (long long)o->convdiff3d, o->peclet);
    else
        printf("%s", o->matrix_path);
    printf(" (%lld unknowns, %lld nonzeros)", (long long)L->global_rows, (long long)L->global_nnz);
    if (o->solve.precond != NZ_PRECOND_NONE)
        printf(", precond block jacobi over the ranks, %s in each block",
               nz_cmd_solve_precond_name(o->solve.precond));
    printf("\n");
}

/* Agree on a status of some ranks' own work (allocation, copies, an SpMV), so that no rank
 * leaves while the others wait in the next collective. */
static nz_status_t agreed(nz_context_t *ctx, nz_status_t status) {
    return nz_dist_agree(ctx, MPI_COMM_WORLD, status);
}

/* solve's b (rank 0's --b scattered, or b = A ones as the serial command) and x0 = 0, where dA
 * lives; hx: this rank's `rows` host values, scratch. An exit status, the same on every rank. */
static int solve_vectors(nz_context_t *ctx, const dist_cli_t *o, nz_dist_matrix_t *dA,
                         int device, int64_t rows, void *hx, void **b, void **x) {
    const char *const CMD = "solve";
    const nz_value_type_t vt = o->value_type;
    const size_t bytes = (size_t)rows * (vt == NZ_F32 ? 4 : 8);
    int rc = NZ_EXIT_OK;
    if (o->b_path != NULL) {
        if ((rc = read_scattered(ctx, CMD, dA, 0, o->b_path, "b", hx)) != NZ_EXIT_OK) return rc;
        NZ_CLI_TRY(agreed(ctx, nz_cli_dist_to_location(ctx, device, hx, bytes, b)));
    } else { /* b = A ones, so that the exact solution is ones */
        for (int64_t i = 0; i < rows; i++) nz_cli_value_set(hx, vt, i, 1.0);
        nz_status_t status = nz_cli_dist_to_location(ctx, device, hx, bytes, x);
        if (status == NZ_SUCCESS) status = nz_cli_dist_to_location(ctx, device, hx, bytes, b);
        NZ_CLI_TRY(agreed(ctx, status));
        NZ_CLI_TRY(agreed(ctx, nz_dist_spmv(dA, 1.0, *x, 0.0, *b)));
        nz_cli_dist_free_location(ctx, device, *x);
        *x = NULL;
    }
    for (int64_t i = 0; i < rows; i++) nz_cli_value_set(hx, vt, i, 0.0); /* x0 = 0 */
    NZ_CLI_TRY(agreed(ctx, nz_cli_dist_to_location(ctx, device, hx, bytes, x)));
cleanup:
    return rc;
}

/* `nz solve` over the ranks: A loaded as cg's (file, --laplace3d) or --convdiff3d from rank 0;
 * b from --b or b = A ones, x0 = 0 as the serial command; nz_dist_solve; rank 0 prints nz
 * solve's report line (the same line), the ranks line, the library's message for a caveat or a
 * breakdown and the history; -o writes the gathered x. Exit statuses as the serial command's
 * (0 converged, 4 not converged, 1 breakdown or failure), the same on every rank. Every failure
 * is agreed among the ranks, so rank 0 alone prints its one line (the others are quiet). */
static int run_solve(nz_context_t *ctx, const dist_cli_t *o, const nz_dist_options_t *opt) {
    const char *const CMD = "solve";
    int rc = NZ_EXIT_OK, nonfinite = 0;
    nz_dist_matrix_t *dA = NULL;
    nz_dist_layout_t L;
    nz_solve_result_t res;
    void *b = NULL, *x = NULL, *hx = NULL;
    const int device = opt->device != NULL, quiet = nz_cli_quiet;
    const nz_value_type_t vt = o->value_type;
    const size_t vs = vt == NZ_F32 ? 4 : 8;
    memset(&res, 0, sizeof res);
    nz_cli_quiet = rank_of_world() != 0;
    const int file_ones = o->matrix_path != NULL && o->b_path == NULL;
    NZ_CLI_TRY(load(ctx, o, opt, &dA, NULL, NULL, file_ones ? &nonfinite : NULL));
    if (nonfinite) {
        rc = NZ_EXIT_FAIL;
        goto cleanup;
    }
    NZ_CLI_TRY(nz_dist_matrix_layout(dA, &L));
    const int64_t rows = L.row_end - L.row_begin;
    const size_t bytes = (size_t)rows * vs;
    if (L.global_rows != L.global_cols) {
        nz_cli_error(CMD, "%s is %lld x %lld; the solvers need a square matrix", o->matrix_path,
                     (long long)L.global_rows, (long long)L.global_cols);
        rc = NZ_EXIT_FAIL;
        goto cleanup;
    }
    NZ_CLI_TRY(agreed(ctx, nz_malloc(ctx, &hx, bytes + 16)));
    if ((rc = solve_vectors(ctx, o, dA, device, rows, hx, &b, &x)) != NZ_EXIT_OK) goto cleanup;
    nz_status_t solve = nz_dist_solve(ctx, dA, b, x, &o->solve, &res);
    if (solve != NZ_ERR_BREAKDOWN && solve < 0) NZ_CLI_TRY(solve); /* agreed by nz_dist_solve */
    if (device)
        NZ_CLI_TRY(agreed(ctx, to_host(ctx, hx, x, bytes)));
    else
        memcpy(hx, x, bytes);
    if (L.rank == 0) {
        nz_cmd_solve_print_report(&o->solve, vt, &res);
        print_solve_ranks(ctx, o, device, &L);
        if (solve != NZ_SUCCESS) nz_cli_library_message(CMD, ctx, solve);
        for (int64_t k = 0; k < res.history_length; k++)
            printf("history %lld: %.6e\n", (long long)k, res.history[k]);
        fflush(stdout);
    }
    if (o->out_path != NULL)
        NZ_CLI_TRY(write_gathered(ctx, dA, 0, hx, L.global_rows, o->out_path));
    rc = solve == NZ_SUCCESS ? NZ_EXIT_OK
         : solve > 0         ? NZ_EXIT_NOT_CONVERGED /* finished, not converged */
                             : NZ_EXIT_FAIL;         /* a breakdown */
cleanup:
    nz_free(ctx, res.history);
    nz_cli_dist_free_location(ctx, device, b);
    nz_cli_dist_free_location(ctx, device, x);
    nz_free(ctx, hx);
    nz_dist_matrix_destroy(&dA);
    nz_cli_quiet = quiet;
    return rc;
}

static int run_spmv(nz_context_t *ctx, const dist_cli_t *o, const nz_dist_options_t *opt) {
    const char *const CMD = "spmv";
    int rc = NZ_EXIT_OK;
    nz_dist_matrix_t *dA = NULL;
    nz_dist_layout_t L;
    nz_dist_spmv_profile_t prof;
    void *hx = NULL, *hy = NULL, *x = NULL, *y = NULL;
    const int device = opt->device != NULL;
    const nz_value_type_t vt = o->value_type;
    const size_t vs = vt == NZ_F32 ? 4 : 8;
    NZ_CLI_TRY(load(ctx, o, opt, &dA, NULL, NULL, NULL));
    NZ_CLI_TRY(nz_dist_matrix_layout(dA, &L));
    const int64_t rows = L.row_end - L.row_begin, cols = L.col_end - L.col_begin;
    NZ_CLI_TRY(nz_malloc(ctx, &hx, (size_t)cols * vs + 16));
    NZ_CLI_TRY(nz_malloc(ctx, &hy, (size_t)rows * vs + 16));
    if (o->x_path != NULL) {
        if ((rc = read_scattered(ctx, CMD, dA, 1, o->x_path, "x", hx)) != NZ_EXIT_OK) goto cleanup;
    } else {
        for (int64_t j = 0; j < cols; j++) /* as the serial nz spmv */
            nz_cli_value_set(hx, vt, j, 1.0 + (double)((L.col_begin + j) % 7) / 8.0);
    }
    if (o->y_path != NULL) {
        if ((rc = read_scattered(ctx, CMD, dA, 0, o->y_path, "y", hy)) != NZ_EXIT_OK) goto cleanup;
    } else {
        memset(hy, 0, (size_t)rows * vs);
    }
    if (o->x_out_path != NULL)
        NZ_CLI_TRY(write_gathered(ctx, dA, 1, hx, L.global_cols, o->x_out_path));
    NZ_CLI_TRY(nz_cli_dist_to_location(ctx, device, hx, (size_t)cols * vs, &x));
    NZ_CLI_TRY(nz_cli_dist_to_location(ctx, device, hy, (size_t)rows * vs, &y));
    /* the timing runs overwrite y: it starts again from the input y below */
    NZ_CLI_TRY(nz_dist_spmv_profile(dA, x, y, o->repeat, &prof));
    if (device)
        NZ_CLI_TRY(nz_device_copy_from_host(ctx, y, hy, (size_t)rows * vs));
    else
        memcpy(y, hy, (size_t)rows * vs);
    NZ_CLI_TRY(nz_dist_spmv(dA, o->alpha, x, o->beta, y));
    if (device) NZ_CLI_TRY(to_host(ctx, hy, y, (size_t)rows * vs));
    else memcpy(hy, y, (size_t)rows * vs);
    if (L.rank == 0) {
        printf("matrix: %s (%lld x %lld, %lld nonzeros)\n", o->matrix_path,
               (long long)L.global_rows, (long long)L.global_cols, (long long)L.global_nnz);
        printf("setup: %s, %d ranks, %s, local alg %s\n", nz_cli_precision_name(vt), L.size,
               device ? nz_context_device_name(ctx) : "cpu", nz_alg_name(L.local_alg));
        printf("spmv: %.4f ms (exchange %.4f, local %.4f, non-local %.4f ms alone; overlap %.0f%%)\n",
               1e3 * prof.whole, 1e3 * prof.exchange, 1e3 * prof.local, 1e3 * prof.nonlocal,
               100.0 * prof.overlap);
        fflush(stdout);
    }
    if (o->out_path != NULL) NZ_CLI_TRY(write_gathered(ctx, dA, 0, hy, L.global_rows, o->out_path));
cleanup:
    nz_cli_dist_free_location(ctx, device, x);
    nz_cli_dist_free_location(ctx, device, y);
    nz_free(ctx, hx);
    nz_free(ctx, hy);
    nz_dist_matrix_destroy(&dA);
    return rc;
}

int nz_cmd_dist(const char *command, int argc, char **argv) {
    const char *const CMD = command;
    dist_cli_t o;
    nz_context_t *ctx = NULL;
    nz_dist_device_t *device = NULL;
    nz_dist_options_t opt;
    int rc;
    MPI_Init(&argc, &argv);
    nz_cli_quiet = rank_of_world() != 0; /* the ranks parse alike: one message, from rank 0 */
    rc = nz_cli_dist_parse(&o, command, argc, argv);
    nz_cli_quiet = 0;
    if (rc != NZ_EXIT_OK) {
        if (rc == NZ_CLI_HELP) rc = NZ_EXIT_OK;
        goto cleanup;
    }
    if (nz_cli_context_create(&ctx) != NZ_SUCCESS) { /* --memory-budget, NZ_TUNE_* */
        nz_cli_error(CMD, "cannot create a context");
        rc = NZ_EXIT_FAIL;
        goto cleanup;
    }
    nz_context_set_threads(ctx, o.threads);
    memset(&opt, 0, sizeof opt);
    opt.alg = o.alg;
    opt.plan_flags = o.plan_flags;
    if (o.backend == NZ_BACKEND_CUDA) {
        NZ_CLI_TRY(nz_dist_device_bind(ctx, MPI_COMM_WORLD, o.stage, &device));
        opt.device = device;
    }
    if (strcmp(command, "cg") == 0)
        rc = run_cg(ctx, &o, &opt);
    else if (strcmp(command, "solve") == 0)
        rc = run_solve(ctx, &o, &opt);
    else if (strcmp(command, "spmv") == 0)
        rc = run_spmv(ctx, &o, &opt);
    else
        rc = nz_cli_dist_bench(ctx, &o, &opt);
cleanup:
    nz_context_destroy(&ctx);
    nz_dist_device_release(&device);
    /* every rank leaves with the worst exit status of any (they agree already; this also
     * covers the command-line checks, which are identical everywhere) */
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}

#else
typedef int nz_cmd_dist_unused_t; /* built without the distributed layer (no MPI) */
#endif
