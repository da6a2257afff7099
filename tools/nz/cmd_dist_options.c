/* cmd_dist_options.c: the distributed commands' option tables, usage texts and checks. */
#ifdef NZ_HAVE_DIST
#include "cmd_cg.h"
#include "cmd_dist.h"
#include "cmd_solve.h"
#include "cmd_spmv.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* cg, solve and spmv take the serial command's table, checks and messages, behind a table of their
 * own: the options only the distributed command has, and the serial options it cannot run
 * (refused by name). bench --dist has a table of its own. */

#define AT(member) NZ_CLI_AT(dist_cli_t, member)
static const nz_cli_option_t dist_options[] = {
    {.name = "--dist", .kind = NZ_CLI_FLAG, AT(dist),
     .help = "run distributed even on one rank"},
    {.name = "--stage", .kind = NZ_CLI_FLAG, AT(stage),
     .help = "GPU: stage halo messages through pinned host memory even when\n"
             "MPI is CUDA-aware (also NZ_DIST_STAGE=1)"},
};

static int parse_weak(const char *cmd, const char *option, const char *value, void *options) {
    dist_cli_t *o = options;
    if (o->weak_count == DIST_MAX_WEAK) {
        nz_cli_error(cmd, "option %s: at most %d times", option, DIST_MAX_WEAK);
        return 1;
    }
    return nz_cli_int64(cmd, option, value, 2, 1291, &o->weak_n[o->weak_count++]);
}

static int parse_alg(const char *cmd, const char *option, const char *value, void *options) {
    dist_cli_t *o = options;
    if (nz_alg_from_name(&o->alg, value) == NZ_SUCCESS) return 0;
    nz_cli_error(cmd, "option %s: unknown algorithm '%s'", option, value);
    return 1;
}

static const nz_cli_option_t dist_bench_options[] = {
    {.name = "--n", .kind = NZ_CLI_INT64, AT(strong_n), .min = 2, .max = 1291, .metavar = "N",
     .help = "strong scaling on the FE problem with N^3 elements (default 48)"},
    {.name = "--laplace", .kind = NZ_CLI_INT64, AT(laplace_n), .min = 2, .max = 1290,
     .metavar = "L", .help = "strong scaling on the 7-point Laplacian on an L^3 grid too"},
    {.name = "--weak", .kind = NZ_CLI_CUSTOM, .parse = parse_weak, .metavar = "N",
     .help = "weak scaling on the FE problem with about (N-1)^3 unknowns per\n"
             "rank (default 32; up to four times, a table each)"},
    {.name = "--repeat", .kind = NZ_CLI_INT, AT(repeat), .min = 1, .max = 1000000,
     .metavar = "R", .help = "SpMV repeats (default 20)"},
    {.name = "--iterations", .kind = NZ_CLI_INT64, AT(bench_iterations), .min = 1,
     .max = 1000000, .metavar = "K", .help = "CG iterations (default 50)"},
    {.name = "--backend", .kind = NZ_CLI_ENUM, AT(backend), .names = &nz_cli_backend_names,
     .metavar = "B", .help = "cpu or cuda (default cpu)"},
    {.name = "--precision", .kind = NZ_CLI_ENUM, AT(value_type),
     .names = &nz_cli_precision_names, .metavar = "P",
     .help = "single or double (default double)"},
    {.name = "--alg", .kind = NZ_CLI_CUSTOM, .parse = parse_alg, .metavar = "NAME",
     .help = "the blocks' SpMV algorithm (default auto)"},
    {.name = "--threads", .kind = NZ_CLI_INT, AT(threads), .min = 0, .max = 4096,
     .metavar = "N", .help = "OpenMP threads per rank (default 1)"},
};
#undef AT

#define SERIAL_ONLY(spelling, short_spelling, command)                                          \
    {.name = spelling, .short_name = short_spelling, .kind = NZ_CLI_REFUSED,                    \
     .refusal = "is not available in the distributed " command " (run nz " command             \
                " without mpiexec)",                                                            \
     .help = "serial only"}
static const nz_cli_option_t dist_cg_options[] = {
    {.name = "--laplace3d", .kind = NZ_CLI_INT64, NZ_CLI_AT(cg_cli_options_t, laplace3d),
     .min = 1, .max = 1290, .metavar = "N",
     .help = "the 7-point Laplacian on an N^3 grid (b = A ones)"},
    SERIAL_ONLY("--assembly", NULL, "cg"),
    SERIAL_ONLY("--graph", NULL, "cg"),
    SERIAL_ONLY("--check-interval", NULL, "cg"),
};
/* solve: every serial option runs distributed; the generated problems are added */
static const nz_cli_option_t dist_solve_options[] = {
    {.name = "--laplace3d", .kind = NZ_CLI_INT64, NZ_CLI_AT(solve_cli_options_t, laplace3d),
     .min = 1, .max = 1290, .metavar = "N",
     .help = "the 7-point Laplacian on an N^3 grid"},
    {.name = "--convdiff3d", .kind = NZ_CLI_INT64, NZ_CLI_AT(solve_cli_options_t, convdiff3d),
     .min = 1, .max = 1290, .metavar = "N",
     .help = "upwind convection-diffusion on an N^3 grid, as nz gen convdiff3d\n"
             "(non-symmetric)"},
    {.name = "--peclet", .kind = NZ_CLI_DOUBLE, NZ_CLI_AT(solve_cli_options_t, peclet),
     .dmin = 0.0, .dmax = DBL_MAX, .metavar = "P",
     .help = "--convdiff3d: mesh Peclet number |w| h / 2 (default 1)"},
};
static const nz_cli_option_t dist_spmv_options[] = {
    SERIAL_ONLY("--check", NULL, "spmv"),
    SERIAL_ONLY("--list", NULL, "spmv"),
    SERIAL_ONLY("--verbose", "-v", "spmv"),
};
#undef SERIAL_ONLY

#define DIST_INTRO(files)                                                                       \
    "Rank 0 reads the matrix and vector files and scatters their rows (balanced by\n"         \
    "nonzeros)" files ". Only rank 0 prints and writes files (in global order).\n"           \
    "--backend cuda: each rank uses device (node-local rank % device count).\n"               \
    "--format: csr or auto only (the ranks' blocks are CSR). --threads: OpenMP threads\n"     \
    "per rank (default 1).\n"
static const nz_cli_command_t dist_cg_command = {
    .name = "cg",
    .synopsis = "usage: mpiexec -n P nz cg (A.mtx | --fe3d N | --laplace3d N) [options]\n"
                "       (distributed; --dist forces it on 1 rank)\n\n" DIST_INTRO(
                    "; --fe3d and --laplace3d are generated by every rank for its own\n"
                    "rows") "\n",
    .column = 21,
};
static const nz_cli_command_t dist_solve_command = {
    .name = "solve",
    .synopsis =
        "usage: mpiexec -n P nz solve (A.mtx | --laplace3d N | --convdiff3d N) [options]\n"
        "       (distributed; --dist forces it on 1 rank)\n\n"
        "nz_dist_solve: the Krylov methods of nz solve over the ranks. Rank 0 reads the matrix\n"
        "and --b files and scatters their rows (balanced by nonzeros); --laplace3d is generated\n"
        "by every rank for its own rows, --convdiff3d on rank 0 and scattered. x0 = 0. Only\n"
        "rank 0 prints (nz solve's report line, then a line with the ranks) and writes -o (in\n"
        "global order). --precond is block Jacobi over the ranks: the kind is made on each\n"
        "rank's diagonal block (its own rows and columns), so the iterations of ilu0 and ic0\n"
        "grow with the number of ranks. Reductions are summed in rank order: the same ranks\n"
        "give bitwise the same x. --backend cuda: each rank uses device (node-local rank %\n"
        "device count). --threads: OpenMP threads per rank (default 1).\n\n",
    .epilogue = "\nexit status as nz solve's, the same on every rank: 0 converged, 1 failure, 2 bad\n"
                "command line, 3 refused, 4 not converged (x reported and written).\n",
    .column = 21,
};
static const nz_cli_command_t dist_spmv_command = {
    .name = "spmv",
    .synopsis = "usage: mpiexec -n P nz spmv A.mtx [options]\n"
                "       (distributed; --dist forces it on 1 rank)\n\n" DIST_INTRO("")
                "--format all and --alg all: serial only. --repeat: default 10.\n\n",
    .column = 21,
};
#undef DIST_INTRO
static const nz_cli_command_t dist_bench_command = {
    .name = "bench",
    .synopsis =
        "usage: mpiexec -n P nz bench --dist [options]\n\n"
        "Weak and strong scaling of the distributed SpMV and CG on 1, 2, 4, ... and P of the\n"
        "ranks: strong on the Q1 FE problem with N^3 elements and, with --laplace, on the\n"
        "7-point Laplacian on an L^3 grid; weak on the FE problem with about (N-1)^3 unknowns\n"
        "per rank. Columns: SpMV time, its parts (halo exchange, local block, non-local block)\n"
        "timed alone, overlap = 1 - whole / sum of parts, the largest halo (entries and KB\n"
        "received by one rank per SpMV), one MPI_Allreduce of three doubles as CG issues\n"
        "it (us), CG time per iteration (K iterations), and the parallel efficiency against\n"
        "the first row.\n\n",
    .column = 21,
};

/* --format other than csr / auto: the ranks' blocks are CSR, so the distributed `what` refuses
 * it (NZ_EXIT_USAGE after the message); NZ_EXIT_OK otherwise. */
static int refuse_block_format(const char *cmd, const char *what, int format_auto,
                               nz_format_t format) {
    if (format_auto || format == NZ_FORMAT_CSR) return NZ_EXIT_OK;
    nz_cli_error(cmd, "option --format: %s is not available in the distributed %s (its blocks are "
                      "CSR: use csr or auto, or nz %s without mpiexec)",
                 nz_format_name(format), what, what);
    return NZ_EXIT_USAGE;
}

static int parse_cg(dist_cli_t *o, int argc, char **argv) {
    cg_cli_options_t c;
    nz_cmd_cg_default_options(&c);
    nz_cli_table_t tables[] = {
        {dist_options, NZ_CLI_COUNT(dist_options), o, "distributed options:\n"},
        {dist_cg_options, NZ_CLI_COUNT(dist_cg_options), &c, NULL},
        nz_cmd_cg_table(&c)};
    tables[2].heading = "\nthe options of nz cg, with its checks:\n";
    int rc = nz_cli_parse(&dist_cg_command, tables, 3, argc, argv);
    if (rc == NZ_EXIT_OK) rc = nz_cmd_cg_check_options(&c);
    if (rc == NZ_EXIT_OK) rc = refuse_block_format("cg", "cg", c.format_auto, c.format);
    if (rc != NZ_EXIT_OK) return rc;
    o->matrix_path = c.matrix_path;
    o->b_path = c.b_path;
    o->out_path = c.out_path;
    o->fe3d = c.fe3d;
    o->laplace3d = c.laplace3d;
    o->value_type = c.value_type;
    o->backend = c.backend;
    o->alg = c.alg;
    o->cg = c.cg;
    o->x0_random = c.x0_random;
    o->plan_flags = c.cg.plan_flags;
    if (c.threads > 0) o->threads = c.threads;
    return NZ_EXIT_OK;
}

static int parse_solve(dist_cli_t *o, int argc, char **argv) {
    solve_cli_options_t c;
    nz_cmd_solve_default_options(&c);
    nz_cli_table_t tables[] = {
        {dist_options, NZ_CLI_COUNT(dist_options), o, "distributed options:\n"},
        {dist_solve_options, NZ_CLI_COUNT(dist_solve_options), &c, NULL},
        nz_cmd_solve_table(&c)};
    tables[2].heading = "\nthe options of nz solve, with its checks:\n";
    int rc = nz_cli_parse(&dist_solve_command, tables, 3, argc, argv);
    if (rc == NZ_EXIT_OK) rc = nz_cmd_solve_check_options(&c);
    if (rc != NZ_EXIT_OK) return rc;
    o->matrix_path = c.matrix_path;
    o->b_path = c.b_path;
    o->out_path = c.out_path;
    o->laplace3d = c.laplace3d;
    o->convdiff3d = c.convdiff3d;
    o->peclet = c.peclet;
    o->value_type = c.value_type;
    o->backend = c.backend;
    o->solve = c.solve;
    if (c.threads > 0) o->threads = c.threads;
    return NZ_EXIT_OK;
}

static int parse_spmv(dist_cli_t *o, int argc, char **argv) {
    spmv_options_t m;
    nz_cmd_spmv_default_options(&m);
    m.repeat = o->repeat;
    nz_cli_table_t tables[] = {
        {dist_options, NZ_CLI_COUNT(dist_options), o, "distributed options:\n"},
        {dist_spmv_options, NZ_CLI_COUNT(dist_spmv_options), &m, NULL},
        nz_cmd_spmv_table(&m)};
    tables[2].heading = "\nthe options of nz spmv, with its checks:\n";
    int rc = nz_cli_parse(&dist_spmv_command, tables, 3, argc, argv);
    if (rc == NZ_EXIT_OK) rc = nz_cmd_spmv_check_options(&m);
    if (rc == NZ_EXIT_OK && (m.all_formats || m.alg_all)) {
        nz_cli_error("spmv", "option %s: all is not available in the distributed spmv (run nz "
                             "spmv without mpiexec)", m.all_formats ? "--format" : "--alg");
        rc = NZ_EXIT_USAGE;
    }
    if (rc == NZ_EXIT_OK) rc = refuse_block_format("spmv", "spmv", m.format_auto, m.format);
    if (rc != NZ_EXIT_OK) return rc;
    o->matrix_path = m.matrix_path;
    o->x_path = m.x_path;
    o->y_path = m.y_path;
    o->out_path = m.out_path;
    o->x_out_path = m.x_out_path;
    o->alpha = m.alpha;
    o->beta = m.beta;
    o->value_type = m.value_type;
    o->backend = m.backend;
    o->alg = m.alg;
    o->plan_flags = m.plan_flags;
    o->repeat = m.repeat;
    if (m.threads > 0) o->threads = m.threads;
    return NZ_EXIT_OK;
}

int nz_cli_dist_parse(dist_cli_t *o, const char *command, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->command = command;
    o->value_type = NZ_F64;
    o->backend = NZ_BACKEND_CPU;
    o->x0_random = -1;
    o->threads = 1;
    o->repeat = strcmp(command, "bench") == 0 ? 20 : 10;
    o->alpha = 1.0;
    o->strong_n = 48;
    o->weak_n[0] = 32;
    o->weak_count = 0; /* the default above unless --weak is given */
    o->bench_iterations = 50;
    const char *stage = getenv("NZ_DIST_STAGE");
    o->stage = stage != NULL && strcmp(stage, "1") == 0;
    if (strcmp(command, "cg") == 0) return parse_cg(o, argc, argv);
    if (strcmp(command, "solve") == 0) return parse_solve(o, argc, argv);
    if (strcmp(command, "spmv") == 0) return parse_spmv(o, argc, argv);
    const nz_cli_table_t tables[] = {
        {dist_options, NZ_CLI_COUNT(dist_options), o, "options:\n"},
        {dist_bench_options, NZ_CLI_COUNT(dist_bench_options), o, NULL}};
    return nz_cli_parse(&dist_bench_command, tables, 2, argc, argv);
}

#else
typedef int nz_cmd_dist_options_unused_t; /* built without the distributed layer (no MPI) */
#endif
