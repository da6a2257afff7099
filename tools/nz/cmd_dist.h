/* cmd_dist.h: the distributed tool's options and the helpers its commands share (cmd_dist.c,
 * cmd_dist_options.c, cmd_dist_bench.c); built with the distributed layer only (NZ_HAVE_DIST). */
#ifndef NZ_CMD_DIST_H
#define NZ_CMD_DIST_H

#include "cli_options.h"
#include "nonzero_dist.h"

/* Options of the distributed commands: cg, solve and spmv parse theirs with the serial commands'
 * tables (the same options, validation, messages and output check), plus --stage, --dist, cg's
 * --laplace3d and solve's --laplace3d, --convdiff3d and --peclet; bench --dist has its own
 * table. */
#define DIST_MAX_WEAK 4
typedef struct dist_cli {
    const char *command, *matrix_path, *out_path;
    const char *x_path, *y_path, *x_out_path; /* spmv --x, --y, --write-x */
    const char *b_path;                       /* cg and solve --b */
    int64_t fe3d, laplace3d;       /* generated problems (0: a matrix file) */
    int64_t convdiff3d;            /* solve: made on rank 0 and scattered (0: none) */
    double peclet;                 /* its mesh Peclet number */
    unsigned plan_flags;           /* the blocks' plans (--plan-flags, --deterministic) */
    double beta;
    nz_value_type_t value_type;
    nz_backend_t backend;
    nz_alg_t alg;
    nz_cg_options_t cg;
    nz_solve_options_t solve;      /* solve: method, preconditioner, tolerances, history */
    int x0_random;                 /* -1: default (random for --fe3d) */
    int dist;                      /* --dist: distributed even on one rank */
    int stage, threads, repeat;
    double alpha;
    int64_t strong_n;              /* bench: FE strong-scaling size */
    int64_t laplace_n;             /* bench: laplace3d strong-scaling size (0: none) */
    int64_t weak_n[DIST_MAX_WEAK]; /* bench: FE weak-scaling sizes per rank (--weak, repeatable) */
    int weak_count;
    int64_t bench_iterations;
} dist_cli_t;

/* Parse the command line of the distributed `command` (cg, solve, spmv, or bench with --dist)
 * into *o, alike on every rank (the caller quiets all ranks but 0: one message): NZ_EXIT_OK to
 * go on, NZ_CLI_HELP after the usage, or the exit status after one line (cmd_dist_options.c). */
int nz_cli_dist_parse(dist_cli_t *o, const char *command, int argc, char **argv);

/* A local vector in the matrix's location (device != 0: the device) from host values, with 16
 * bytes to spare; free it with nz_cli_dist_free_location. */
nz_status_t nz_cli_dist_to_location(nz_context_t *ctx, int device, const void *host,
                                    size_t bytes, void **out);
void nz_cli_dist_free_location(nz_context_t *ctx, int device, void *p);

/* `nz bench --dist`: the strong and weak scaling tables (cmd_dist_bench.c). */
int nz_cli_dist_bench(nz_context_t *ctx, const dist_cli_t *o, const nz_dist_options_t *opt);

#endif /* NZ_CMD_DIST_H */
