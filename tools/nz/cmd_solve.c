/* cmd_solve.c: `nz solve`: a Krylov method of nz_solve (cg, bicgstab, gmres, fgmres, minres). */
#include "cli.h"
#include "cmd_cg.h"
#include "cmd_solve.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const CMD = "solve";

static const nz_cli_command_t solve_command = {
    .name = "solve",
    .synopsis =
        "usage: nz solve A.(mtx|mtx.gz|nzb) [options]\n\n"
        "Solves A x = b (A square) by a Krylov method from x0 = 0 and prints one line: method,\n"
        "preconditioner, iterations, restarts, the true relative residual ||b - Ax|| / ||b||,\n"
        "status, setup and solve seconds.\n\n",
    .epilogue =
        "\nstatus: converged only when the true residual ||b - Ax|| meets max(rtol ||b||, atol);\n"
        "otherwise 'iteration limit', 'stagnated' or a breakdown (rho, omega, nan, singular).\n"
        "exit status: 0 converged, 1 failure (breakdown; file or library error), 2 bad command\n"
        "line, 3 refused (e.g. --backend cuda without a device), 4 not converged (x\n"
        "and the true residual are reported and written, but miss the tolerance).\n",
    .column = 21,
};

static int parse_rtol(const char *cmd, const char *option, const char *value, void *options) {
    solve_cli_options_t *o = options;
    if (nz_cli_double(cmd, option, value, &o->solve.rtol)) return 1;
    if (o->solve.rtol > 0 && o->solve.rtol < 1) return 0;
    nz_cli_error(cmd, "option %s: %s is not in (0, 1)", option, value);
    return 1;
}

static int parse_atol(const char *cmd, const char *option, const char *value, void *options) {
    solve_cli_options_t *o = options;
    if (nz_cli_double(cmd, option, value, &o->solve.atol)) return 1;
    if (o->solve.atol >= 0) return 0;
    nz_cli_error(cmd, "option %s: %s is negative", option, value);
    return 1;
}

static const nz_cli_choice_t method_choices[] = {
    {"cg", NZ_METHOD_CG},         {"bicgstab", NZ_METHOD_BICGSTAB}, {"gmres", NZ_METHOD_GMRES},
    {"fgmres", NZ_METHOD_FGMRES}, {"minres", NZ_METHOD_MINRES},     {NULL, 0}};
static const nz_cli_enum_t method_names = {method_choices, "unknown method '%s' (%s)"};
/* NZ_PRECOND_USER (a callback) has no command-line form */
static const nz_cli_choice_t precond_choices[] = {
    {"none", NZ_PRECOND_NONE}, {"jacobi", NZ_PRECOND_JACOBI},
    {"l1-jacobi", NZ_PRECOND_L1_JACOBI}, {"ilu0", NZ_PRECOND_ILU0}, {"ic0", NZ_PRECOND_IC0},
    {"block-jacobi", NZ_PRECOND_BLOCK_JACOBI}, {"chebyshev", NZ_PRECOND_CHEBYSHEV},
    {"amg", NZ_PRECOND_AMG}, {NULL, 0}};
static const nz_cli_enum_t precond_names = {precond_choices, "unknown preconditioner '%s' (%s)"};

static const nz_cli_choice_t smoother_choices[] = {{"auto", NZ_AMG_SMOOTHER_AUTO},
    {"chebyshev", NZ_AMG_SMOOTHER_CHEBYSHEV}, {"l1-jacobi", NZ_AMG_SMOOTHER_L1_JACOBI}, {NULL, 0}};
static const nz_cli_enum_t smoother_names = {smoother_choices, "unknown AMG smoother '%s' (%s)"};
static const nz_cli_choice_t cycle_choices[] = {
    {"v", NZ_AMG_CYCLE_V}, {"w", NZ_AMG_CYCLE_W}, {"V", NZ_AMG_CYCLE_V}, {"W", NZ_AMG_CYCLE_W},
    {NULL, 0}};
static const nz_cli_enum_t cycle_names = {cycle_choices, "unknown AMG cycle '%s' (%s)"};

#define AT(member) NZ_CLI_AT(solve_cli_options_t, member)
static const nz_cli_option_t solve_options[] = {
    {.kind = NZ_CLI_STRING, AT(matrix_path)},
    {.name = "--method", .kind = NZ_CLI_ENUM, AT(solve.method), .names = &method_names,
     .help = "Krylov method (default cg)"},
    {.name = "--precond", .kind = NZ_CLI_ENUM, AT(solve.precond), .names = &precond_names,
     .help = "preconditioner (default none)"},
    {.name = "--block-size", .kind = NZ_CLI_INT, AT(solve.block_size), .min = 1, .max = 32,
     .metavar = "B", .help = "block-jacobi: rows per diagonal block (default 4)"},
    {.name = "--degree", .kind = NZ_CLI_INT, AT(solve.cheb_degree), .min = 1, .max = 64,
     .metavar = "K", .help = "chebyshev: Chebyshev steps per apply (default 3)"},
    {.name = "--sweeps", .kind = NZ_CLI_INT, AT(solve.precond_sweeps), .min = 1, .max = 255,
     .metavar = "K", .help = "ilu0 / ic0: K Jacobi sweeps per triangular solve instead of the\n"
                             "exact solve (approximate, fully parallel; default exact)"},
    {.name = "--amg-threshold", .kind = NZ_CLI_DOUBLE, AT(amg.threshold), .dmin = 0.0,
     .dmax = 0.999999, .metavar = "T",
     .help = "amg: strength threshold, |a_ij| >= T sqrt(|a_ii a_jj|) (default 0)"},
    {.name = "--amg-smoother", .kind = NZ_CLI_ENUM, AT(amg.smoother), .names = &smoother_names,
     .metavar = "S", .help = "amg: auto, chebyshev or l1-jacobi (default auto: chebyshev\n"
                             "for a symmetric matrix, else l1-jacobi)"},
    {.name = "--amg-degree", .kind = NZ_CLI_INT, AT(amg.smoother_degree), .min = 1, .max = 16,
     .metavar = "K", .help = "amg: Chebyshev degree or l1-Jacobi sweeps (default 2)"},
    {.name = "--amg-cycle", .kind = NZ_CLI_ENUM, AT(amg.cycle), .names = &cycle_names,
     .metavar = "C", .help = "amg: v or w (default v)"},
    {.name = "--amg-levels", .kind = NZ_CLI_INT, AT(amg.max_levels), .min = 1,
     .max = NZ_AMG_MAX_LEVELS, .metavar = "L", .help = "amg: most levels (default 10)"},
    {.name = "--amg-coarse", .kind = NZ_CLI_INT64, AT(amg.max_coarse), .min = 1, .max = 1024,
     .metavar = "N", .help = "amg: coarsen until at most N rows (default 256)"},
    {.name = "--amg-omega", .kind = NZ_CLI_DOUBLE, AT(amg.omega), .dmin = 1e-6, .dmax = 1.999999,
     .metavar = "W", .help = "amg: prolongator smoothing factor (default 4/3)"},
    {.name = "--amg-block-size", .kind = NZ_CLI_INT, AT(amg.block_size), .min = 1, .max = 64,
     .metavar = "B", .help = "amg: unknowns per node (default 1; 3 for 3-D elasticity)"},
    {.name = "--amg-nullspace", .kind = NZ_CLI_STRING, AT(nullspace_path), .metavar = "FILE",
     .help = "amg: near-nullspace vectors (Matrix Market array, rows x k; e.g.\n"
             "the rigid-body modes of nz gen elasticity3d; default the constant)"},
    {.name = "--amg-report", .kind = NZ_CLI_FLAG, AT(amg_report),
     .help = "amg: print the hierarchy (a line a level) before the result"},
    {.name = "--restart", .kind = NZ_CLI_INT, AT(solve.restart), .min = 1, .max = 1000,
     .metavar = "M", .help = "gmres / fgmres: Krylov dimension between restarts (default 30)"},
    {.name = "--b", .kind = NZ_CLI_STRING, AT(b_path), .metavar = "FILE",
     .help = "right-hand side (Matrix Market array; default b = A * ones)"},
    {.name = "--output", .short_name = "-o", .kind = NZ_CLI_STRING, AT(out_path),
     .metavar = "FILE", .help = "write x (Matrix Market array)"},
    {.name = "--rtol", .kind = NZ_CLI_CUSTOM, .parse = parse_rtol, .metavar = "R",
     .help = "relative tolerance on ||b - Ax|| / ||b|| (default 1e-8)"},
    {.name = "--tol", .kind = NZ_CLI_CUSTOM, .parse = parse_rtol, .metavar = "R",
     .help = "the same as --rtol"},
    {.name = "--atol", .kind = NZ_CLI_CUSTOM, .parse = parse_atol, .metavar = "A",
     .help = "absolute tolerance (default 0)"},
    {.name = "--maxit", .kind = NZ_CLI_INT64, AT(solve.max_iterations), .min = 1,
     .max = INT64_MAX / 2, .metavar = "N", .help = "iteration limit (default max(n, 10000))"},
    {.name = "--backend", .kind = NZ_CLI_ENUM, AT(backend), .names = &nz_cli_backend_names,
     .metavar = "B", .help = "cpu or cuda (device 0) (default cpu)"},
    {.name = "--precision", .kind = NZ_CLI_ENUM, AT(value_type),
     .names = &nz_cli_precision_names, .metavar = "P",
     .help = "single or double (default double)"},
    {.name = "--history", .kind = NZ_CLI_FLAG, AT(history),
     .help = "print the residual norm of every iteration"},
    {.name = "--threads", .kind = NZ_CLI_THREADS, AT(threads), .min = 1, .metavar = "N",
     .help = "OpenMP threads (default: OpenMP's)"},
};
#undef AT

void nz_cmd_solve_default_options(solve_cli_options_t *o) {
    memset(o, 0, sizeof *o);
    o->value_type = NZ_F64;
    o->backend = NZ_BACKEND_CPU;
    o->solve.method = NZ_METHOD_CG;
    o->solve.precond = NZ_PRECOND_NONE;
    o->peclet = -1.0;
}

nz_cli_table_t nz_cmd_solve_table(solve_cli_options_t *o) {
    nz_cli_table_t table = {solve_options, NZ_CLI_COUNT(solve_options), o, "options:\n"};
    return table;
}

/* The generated problems exist only in the distributed tool (its own table sets them). */
int nz_cmd_solve_check_options(solve_cli_options_t *o) {
    const int problems = (o->matrix_path != NULL) + (o->laplace3d > 0) + (o->convdiff3d > 0);
    if (problems == 0) return nz_cli_missing(CMD, "a matrix file");
    if (problems > 1) {
        nz_cli_error(CMD, "give exactly one of a matrix file, --laplace3d N or --convdiff3d N");
        return NZ_EXIT_USAGE;
    }
    if (o->peclet >= 0 && o->convdiff3d == 0) {
        nz_cli_error(CMD, "--peclet applies to --convdiff3d only");
        return NZ_EXIT_USAGE;
    }
    if (o->peclet < 0) o->peclet = 1.0;
    if (o->solve.restart != 0 && o->solve.method != NZ_METHOD_GMRES &&
        o->solve.method != NZ_METHOD_FGMRES) {
        nz_cli_error(CMD, "--restart applies to --method gmres or fgmres only");
        return NZ_EXIT_USAGE;
    }
    if (o->solve.block_size != 0 && o->solve.precond != NZ_PRECOND_BLOCK_JACOBI) {
        nz_cli_error(CMD, "--block-size applies to --precond block-jacobi only");
        return NZ_EXIT_USAGE;
    }
    if (o->solve.cheb_degree != 0 && o->solve.precond != NZ_PRECOND_CHEBYSHEV) {
        nz_cli_error(CMD, "--degree applies to --precond chebyshev only");
        return NZ_EXIT_USAGE;
    }
    {
        const nz_amg_options_t zero = {0};
        o->amg_options_given = memcmp(&o->amg, &zero, sizeof zero) != 0 ||
                               o->nullspace_path != NULL || o->amg_report;
    }
    if (o->amg_options_given && o->solve.precond != NZ_PRECOND_AMG) {
        nz_cli_error(CMD, "--amg-* options apply to --precond amg only");
        return NZ_EXIT_USAGE;
    }
    if (o->solve.precond_sweeps != 0 && o->solve.precond != NZ_PRECOND_ILU0 &&
        o->solve.precond != NZ_PRECOND_IC0) {
        nz_cli_error(CMD, "--sweeps applies to --precond ilu0 or ic0 only");
        return NZ_EXIT_USAGE;
    }
    const nz_cli_file_t inputs[] = {
        {NULL, o->matrix_path}, {"--b", o->b_path}, {"--amg-nullspace", o->nullspace_path}};
    const nz_cli_file_t outputs[] = {{"-o", o->out_path}};
    if (nz_cli_check_files(CMD, outputs, 1, inputs, 3) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
    o->solve.record_history = o->history;
    return NZ_EXIT_OK;
}

/* Parse argv into *o: NZ_EXIT_OK, NZ_CLI_HELP, or the exit status after one line. */
static int solve_parse_options(int argc, char **argv, solve_cli_options_t *o) {
    nz_cmd_solve_default_options(o);
    const nz_cli_table_t table = nz_cmd_solve_table(o);
    int rc = nz_cli_parse(&solve_command, &table, 1, argc, argv);
    return rc != NZ_EXIT_OK ? rc : nz_cmd_solve_check_options(o);
}

/* The name of the table entry whose value is `value` (the first: not an alias). */
static const char *choice_name(const nz_cli_choice_t *choices, int value) {
    for (; choices->name != NULL; choices++)
        if (choices->value == value) return choices->name;
    return "unknown";
}

const char *nz_cmd_solve_precond_name(nz_precond_t precond) {
    return choice_name(precond_choices, (int)precond);
}

static const char *reason_name(nz_solve_reason_t reason) {
    switch (reason) {
    case NZ_SOLVE_NOT_RUN: return "not run";
    case NZ_SOLVE_CONVERGED: return "converged";
    case NZ_SOLVE_MAX_ITERATIONS: return "iteration limit";
    case NZ_SOLVE_STAGNATED: return "stagnated";
    case NZ_SOLVE_BREAKDOWN_RHO: return "breakdown (rho)";
    case NZ_SOLVE_BREAKDOWN_OMEGA: return "breakdown (omega)";
    case NZ_SOLVE_BREAKDOWN_NAN: return "breakdown (nan)";
    case NZ_SOLVE_BREAKDOWN_SINGULAR: return "breakdown (singular)";
    case NZ_SOLVE_PRECOND_FAILED: return "preconditioner failed";
    case NZ_SOLVE_BREAKDOWN_INDEFINITE: return "breakdown (not positive definite)";
    case NZ_SOLVE_MONITOR_STOPPED: return "stopped by the monitor";
    }
    return "unknown";
}

void nz_cmd_solve_print_report(const nz_solve_options_t *so, nz_value_type_t value_type,
                               const nz_solve_result_t *res) {
    char method[32];
    if (so->method == NZ_METHOD_GMRES || so->method == NZ_METHOD_FGMRES)
        snprintf(method, sizeof method, "%s(%d)", nz_method_name(so->method),
                 so->restart > 0 ? so->restart : 30);
    else
        snprintf(method, sizeof method, "%s", nz_method_name(so->method));
    char precond[48];
    if (so->precond_sweeps > 0)
        snprintf(precond, sizeof precond, "%s (%d sweeps)",
                 choice_name(precond_choices, (int)so->precond), so->precond_sweeps);
    else
        snprintf(precond, sizeof precond, "%s", choice_name(precond_choices, (int)so->precond));
    printf("solve: method %s, precond %s, %s, iterations %lld, restarts %lld, relative residual "
           "%.3e (true), status %s, setup %.4f s, solve %.4f s\n",
           method, precond,
           nz_cli_precision_name(value_type),
           (long long)res->iterations, (long long)res->restarts, res->relative_residual,
           reason_name(res->reason), res->setup_seconds, res->solve_seconds);
}

void nz_cmd_solve_print_amg(const nz_preconditioner_t *M) {
    nz_amg_info_t info;
    if (nz_amg_info(M, &info) != NZ_SUCCESS) return;
    for (int l = 0; l < info.levels; l++)
        printf("amg: level %d, rows %lld, nonzeros %lld, block %d, rho(D^-1 A) %.4f%s\n", l,
               (long long)info.rows[l], (long long)info.nnz[l], info.block_size[l],
               info.lambda_max[l],
               l + 1 == info.levels ? (info.coarse_direct ? ", coarsest: dense LU"
                                                          : ", coarsest: smoothed")
                                    : "");
    printf("amg: levels %d, smoother %s, operator complexity %.3f, grid complexity %.3f, setup %.4f s "
           "(strength %.4f, aggregate %.4f, tentative %.4f, smooth %.4f, rap %.4f, coarse %.4f, "
           "transfer %.4f)\n",
           info.levels,
           info.smoother == NZ_AMG_SMOOTHER_CHEBYSHEV ? "chebyshev" : "l1-jacobi",
           info.operator_complexity, info.grid_complexity, info.setup_seconds,
           info.strength_seconds, info.aggregate_seconds, info.tentative_seconds,
           info.smooth_seconds, info.rap_seconds, info.coarse_seconds, info.transfer_seconds);
}

/* The near-nullspace of --amg-nullspace: a rows x k Matrix Market array read as double into
 * *B (the caller frees it) and *k. */
static int read_nullspace(nz_context_t *ctx, const char *path, int64_t n, double **B, int *k) {
    int64_t rows = 0, cols = 0;
    nz_status_t status = nz_mm_read_dense(ctx, (void **)B, &rows, &cols, path, NZ_F64);
    if (status != NZ_SUCCESS) return nz_cli_file_error(CMD, ctx, status);
    if (rows != n || cols < 1 || cols > 16) {
        nz_cli_error(CMD, "%s: the near-nullspace is %lld x %lld; the matrix needs %lld rows and "
                          "1 .. 16 columns", path, (long long)rows, (long long)cols, (long long)n);
        return NZ_EXIT_USAGE;
    }
    *k = (int)cols;
    return NZ_EXIT_OK;
}

/* The report line, the history and -o; the exit status of the solve as nz cg's: 0 converged,
 * NZ_EXIT_NOT_CONVERGED for a caveat, NZ_EXIT_FAIL for a breakdown. */
static int solve_report(const solve_cli_options_t *o, nz_context_t *ctx, nz_status_t status,
                        const nz_solve_result_t *res, int64_t n, const void *x) {
    nz_cmd_solve_print_report(&o->solve, o->value_type, res);
    if (status != NZ_SUCCESS) nz_cli_library_message(CMD, ctx, status);
    if (o->history)
        for (int64_t k = 0; k < res->history_length; k++)
            printf("history %lld: %.6e\n", (long long)k, res->history[k]);
    nz_status_t wrote;
    if (o->out_path != NULL &&
        (wrote = nz_mm_write_dense(ctx, o->out_path, o->value_type, n, 1, x)) != NZ_SUCCESS)
        return nz_cli_file_error(CMD, ctx, wrote);
    return status == NZ_SUCCESS ? NZ_EXIT_OK
           : status > 0         ? NZ_EXIT_NOT_CONVERGED /* finished, not converged */
                                : NZ_EXIT_FAIL;
}

/* Parse; read A and b (as nz cg does); on cuda upload them; solve from x0 = 0; report. A
 * breakdown is reported like a finished solve; any other library error (a refusal such as a
 * device matrix with a method other than cg included) leaves through NZ_CLI_TRY. */
int nz_cmd_solve(int argc, char **argv) {
    solve_cli_options_t o;
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *dA = NULL;
    void *b = NULL, *x = NULL, *db = NULL, *dx = NULL;
    double *nullspace = NULL;
    nz_preconditioner_t *M = NULL;
    nz_solve_result_t res;
    memset(&res, 0, sizeof res);
    int64_t n = 0;
    int rc = solve_parse_options(argc, argv, &o);
    if (rc == NZ_CLI_HELP) return NZ_EXIT_OK;
    if (rc != NZ_EXIT_OK) return rc;
    const int cuda = o.backend == NZ_BACKEND_CUDA;
    const size_t vs = o.value_type == NZ_F32 ? 4 : 8;

    nz_status_t status = nz_cli_context_create(&ctx);
    NZ_CLI_TRY(status);
    if (o.threads > 0) NZ_CLI_TRY(nz_context_set_threads(ctx, o.threads));
    if (cuda) NZ_CLI_TRY(nz_context_set_device(ctx, 0, NULL));
    rc = nz_cmd_cg_read_system(CMD, ctx, o.matrix_path, o.b_path, o.value_type,
                               "the solvers need a square matrix", &A, &b, &n);
    if (rc != NZ_EXIT_OK) goto cleanup;
    const size_t bytes = (size_t)n * vs;
    NZ_CLI_TRY(nz_malloc(ctx, &x, bytes + 1));
    memset(x, 0, bytes + 1);
    if (cuda) {
        NZ_CLI_TRY(nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
        NZ_CLI_TRY(nz_device_malloc(ctx, &db, bytes + 1));
        NZ_CLI_TRY(nz_device_copy_from_host(ctx, db, b, bytes));
        NZ_CLI_TRY(nz_device_malloc(ctx, &dx, bytes + 1));
        NZ_CLI_TRY(nz_device_copy_from_host(ctx, dx, x, bytes));
    }
    if (o.solve.precond == NZ_PRECOND_AMG) {
        nz_precond_options_t po = {0};
        if (o.nullspace_path != NULL) {
            rc = read_nullspace(ctx, o.nullspace_path, n, &nullspace, &o.amg.nullspace_dim);
            if (rc != NZ_EXIT_OK) goto cleanup;
            o.amg.near_nullspace = nullspace;
        }
        po.amg = &o.amg;
        status = nz_precond_create(ctx, &M, cuda ? dA : A, NZ_PRECOND_AMG, &po);
        if (status == NZ_ERR_BREAKDOWN) {
            res.reason = NZ_SOLVE_NOT_RUN;
            res.residual_norm = res.relative_residual = NAN;
            rc = solve_report(&o, ctx, status, &res, n, x);
            goto cleanup;
        }
        NZ_CLI_TRY(status);
        if (o.amg_report) nz_cmd_solve_print_amg(M);
        o.solve.preconditioner = M;
    }
    status = nz_solve(ctx, cuda ? dA : A, cuda ? db : b, cuda ? dx : x, &o.solve, &res);
    if (M != NULL) {
        nz_precond_info_t pi;
        if (nz_precond_info(M, &pi) == NZ_SUCCESS) res.setup_seconds += pi.setup_seconds;
    }
    if (status != NZ_ERR_BREAKDOWN && status < 0) NZ_CLI_TRY(status);
    if (cuda) NZ_CLI_TRY(nz_device_copy_to_host(ctx, x, dx, bytes));
    rc = solve_report(&o, ctx, status, &res, n, x);

cleanup:
    if (ctx != NULL) {
        nz_precond_destroy(&M);
        nz_free(ctx, nullspace);
        nz_free(ctx, res.history);
        nz_free(ctx, b);
        nz_free(ctx, x);
        if (db != NULL) nz_device_free(ctx, db);
        if (dx != NULL) nz_device_free(ctx, dx);
        nz_matrix_destroy(&dA);
        nz_matrix_destroy(&A);
        nz_context_destroy(&ctx);
    }
    return rc;
}
