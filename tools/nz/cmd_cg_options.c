/* cmd_cg_options.c: `nz cg`'s option table, usage text and option checks. */
#include "cmd_cg.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "cg";

static const nz_cli_command_t cg_command = {
    .name = "cg",
    .synopsis =
        "usage: nz cg A.(mtx|mtx.gz|nzb) [options]\n"
        "       nz cg --fe3d N [options]\n\n"
        "Solves A x = b (A symmetric positive definite) by conjugate gradients and prints\n"
        "'key: value' lines: status, iterations, relative residual (true, ||b - Ax|| / ||b||), time\n"
        "per iteration, MUPS (million unknown-updates per second: unknowns x iterations / solve\n"
        "time / 1e6), the time of one SpMV and, on the GPU, the host-to-device transfer time.\n"
        "--fe3d N: -Laplace(u) = f on the unit cube, Q1 elements on an N^3 grid, (N-1)^3 unknowns,\n"
        "u = sin(pi x) sin(pi y) sin(pi z); also prints 'L2 error' = ||u_h - u|| h^(3/2) over the\n"
        "nodes, and on the GPU the host assembly + transfer time against direct GPU assembly.\n\n",
    .epilogue =
        "\nstatus: converged only when the true residual ||b - Ax|| meets max(tol ||b||, atol);\n"
        "'not converged (iteration limit)' or 'not converged (stagnated above the tolerance)'\n"
        "(the attainable accuracy of the precision, e.g. single at --tol 1e-8) otherwise.\n"
        "exit status: 0 converged, 1 failure (breakdown: A not SPD; file or library error),\n"
        "2 bad command line, 3 refused (format / algorithm / backend), 4 not converged (x and\n"
        "the true residual are reported and written, but miss the tolerance).\n",
    .column = 21,
};

static int parse_tol(const char *cmd, const char *option, const char *value, void *options) {
    cg_cli_options_t *o = options;
    if (nz_cli_double(cmd, option, value, &o->cg.rtol)) return 1;
    if (o->cg.rtol > 0 && o->cg.rtol < 1) return 0;
    nz_cli_error(cmd, "option %s: %s is not in (0, 1)", option, value);
    return 1;
}

static int parse_atol(const char *cmd, const char *option, const char *value, void *options) {
    cg_cli_options_t *o = options;
    if (nz_cli_double(cmd, option, value, &o->cg.atol)) return 1;
    if (o->cg.atol >= 0) return 0;
    nz_cli_error(cmd, "option %s: %s is negative", option, value);
    return 1;
}

/* --format: a format name, or auto (the planner's format; CSR until it is chosen). */
static int parse_format(const char *cmd, const char *option, const char *value, void *options) {
    cg_cli_options_t *o = options;
    o->format_auto = strcmp(value, "auto") == 0;
    if (o->format_auto) {
        o->format = NZ_FORMAT_CSR;
        return 0;
    }
    if (nz_format_from_name(&o->format, value) == NZ_SUCCESS) return 0;
    nz_cli_error(cmd, "option %s: unknown format '%s'", option, value);
    return 1;
}

static int parse_alg(const char *cmd, const char *option, const char *value, void *options) {
    cg_cli_options_t *o = options;
    if (nz_alg_from_name(&o->alg, value) == NZ_SUCCESS) return 0;
    nz_cli_error(cmd, "option %s: unknown algorithm '%s'", option, value);
    return 1;
}

static const nz_cli_choice_t precond_choices[] = {
    {"none", NZ_PRECOND_NONE}, {"jacobi", NZ_PRECOND_JACOBI}, {NULL, 0}};
static const nz_cli_enum_t precond_names = {precond_choices, "unknown preconditioner '%s' (%s)"};
static const nz_cli_choice_t x0_choices[] = {{"zero", 0}, {"random", 1}, {NULL, 0}};
static const nz_cli_enum_t x0_names = {x0_choices, NULL};
static const nz_cli_choice_t assembly_choices[] = {
    {"host", 0}, {"device", 1}, {"both", 2}, {NULL, 0}};
static const nz_cli_enum_t assembly_names = {assembly_choices, NULL};

#define AT(member) NZ_CLI_AT(cg_cli_options_t, member)
static const nz_cli_option_t cg_options[] = {
    {.kind = NZ_CLI_STRING, AT(matrix_path)},
    {.name = "--fe3d", .kind = NZ_CLI_INT64, AT(fe3d), .min = 2, .max = 1291, /* (N-1)^3 < 2^31 */
     .metavar = "N", .help = "solve the FE problem above instead of a matrix file (2..1291)"},
    {.name = "--b", .kind = NZ_CLI_STRING, AT(b_path), .metavar = "FILE",
     .help = "right-hand side (Matrix Market array; default b = A * ones)"},
    {.name = "--output", .short_name = "-o", .kind = NZ_CLI_STRING, AT(out_path),
     .metavar = "FILE", .help = "write x (Matrix Market array)"},
    {.name = "--tol", .kind = NZ_CLI_CUSTOM, .parse = parse_tol, .metavar = "R",
     .help = "relative tolerance on ||b - Ax|| / ||b|| (default 1e-8)"},
    {.name = "--atol", .kind = NZ_CLI_CUSTOM, .parse = parse_atol, .metavar = "A",
     .help = "absolute tolerance (default 0)"},
    {.name = "--maxit", .kind = NZ_CLI_INT64, AT(cg.max_iterations), .min = 1,
     .max = INT64_MAX / 2, .metavar = "N", .help = "iteration limit (default max(n, 10000))"},
    {.name = "--precond", .kind = NZ_CLI_ENUM, AT(cg.precond), .names = &precond_names,
     .metavar = "P", .help = "none or jacobi (default none)"},
    {.name = "--backend", .kind = NZ_CLI_ENUM, AT(backend), .names = &nz_cli_backend_names,
     .metavar = "B", .help = "cpu or cuda (device 0) (default cpu)"},
    {.name = "--format", .kind = NZ_CLI_CUSTOM, .parse = parse_format, .metavar = "F",
     .help = "storage format for the SpMV, or auto (default): the planner's\n"
             "format for the matrix and backend (with --alg auto; converted on\n"
             "the host, inside the solve's setup on the cpu, before the upload\n"
             "on cuda; csr for --fe3d with --assembly device)"},
    {.name = "--alg", .kind = NZ_CLI_CUSTOM, .parse = parse_alg, .metavar = "NAME",
     .help = "SpMV algorithm or auto (default auto)"},
    {.name = "--precision", .kind = NZ_CLI_ENUM, AT(value_type),
     .names = &nz_cli_precision_names, .metavar = "P",
     .help = "single or double (default double)"},
    {.name = "--x0", .kind = NZ_CLI_ENUM, AT(x0_random), .names = &x0_names,
     .help = "initial guess (default: random for --fe3d, whose load is a discrete\n"
             "eigenvector, so that CG from zero would stop after one step; zero\n"
             "otherwise). random is deterministic: x0_i in [-1, 1) from a hash of i"},
    {.name = "--assembly", .kind = NZ_CLI_ENUM, AT(assembly), .names = &assembly_names,
     .metavar = "A",
     .help = "--fe3d on cuda: host (assemble on the host and upload), device\n"
             "(assemble on the GPU), both (time both, solve the GPU one; default)"},
    {.name = "--graph", .kind = NZ_CLI_FLAG, AT(cg.use_graph),
     .help = "GPU: run the loop body as a CUDA graph"},
    {.name = "--check-interval", .kind = NZ_CLI_INT, AT(cg.check_interval), .min = 1,
     .max = 1 << 20, .metavar = "K",
     .help = "GPU: read the convergence scalars every K iterations (default 8)"},
    {.name = "--deterministic", .kind = NZ_CLI_BITS, AT(cg.plan_flags),
     .bits = NZ_PLAN_DETERMINISTIC, .help = "only bitwise-reproducible SpMV algorithms"},
    {.name = "--history", .kind = NZ_CLI_FLAG, AT(history),
     .help = "print the residual norm of every iteration"},
    {.name = "--threads", .kind = NZ_CLI_THREADS, AT(threads), .min = 1, .metavar = "N",
     .help = "OpenMP threads (default: OpenMP's)"},
};
#undef AT

void nz_cmd_cg_default_options(cg_cli_options_t *o) {
    memset(o, 0, sizeof *o);
    o->value_type = NZ_F64;
    o->format = NZ_FORMAT_CSR;
    o->format_auto = 1;
    o->alg = NZ_ALG_AUTO;
    o->backend = NZ_BACKEND_CPU;
    o->x0_random = -1;
    o->assembly = -1;
}

nz_cli_table_t nz_cmd_cg_table(cg_cli_options_t *o) {
    nz_cli_table_t table = {cg_options, NZ_CLI_COUNT(cg_options), o, "options:\n"};
    return table;
}

int nz_cmd_cg_check_options(cg_cli_options_t *o) {
    const int problems = (o->matrix_path != NULL) + (o->fe3d > 0) + (o->laplace3d > 0);
    if (problems == 0) return nz_cli_missing(CMD, "a matrix file or --fe3d N");
    if (problems > 1 && o->laplace3d == 0) return nz_cli_extra_argument(CMD, o->matrix_path);
    if (problems > 1) {
        nz_cli_error(CMD, "give exactly one of a matrix file, --fe3d N or --laplace3d N");
        return NZ_EXIT_USAGE;
    }
    const nz_cli_file_t inputs[] = {{NULL, o->matrix_path}, {"--b", o->b_path}};
    const nz_cli_file_t outputs[] = {{"-o", o->out_path}};
    if (nz_cli_check_files(CMD, outputs, 1, inputs, 2) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
    if (o->fe3d && o->b_path != NULL) {
        nz_cli_error(CMD, "--b cannot be combined with --fe3d (the FE problem has its own load)");
        return NZ_EXIT_USAGE;
    }
    if (o->assembly >= 0 && (o->fe3d == 0 || o->backend != NZ_BACKEND_CUDA)) {
        nz_cli_error(CMD, "--assembly applies to --fe3d with --backend cuda only");
        return NZ_EXIT_USAGE;
    }
    if (o->x0_random < 0) o->x0_random = o->fe3d > 0;
    if (o->assembly < 0) o->assembly = 2;
    o->cg.alg = o->alg;
    o->cg.record_history = o->history;
    /* the planner's format needs the planner's algorithm; a named format is kept as it is */
    if (o->alg != NZ_ALG_AUTO) o->format_auto = 0;
    o->cg.keep_format = !o->format_auto;
    return NZ_EXIT_OK;
}

int nz_cmd_cg_parse_options(int argc, char **argv, cg_cli_options_t *o) {
    nz_cmd_cg_default_options(o);
    const nz_cli_table_t table = nz_cmd_cg_table(o);
    int rc = nz_cli_parse(&cg_command, &table, 1, argc, argv);
    return rc != NZ_EXIT_OK ? rc : nz_cmd_cg_check_options(o);
}
