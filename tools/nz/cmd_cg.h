/* cmd_cg.h: `nz cg`'s options, shared by its parser, its runner and the distributed tool. */
#ifndef NZ_CMD_CG_H
#define NZ_CMD_CG_H

#include "cli_options.h"

typedef struct cg_cli_options {
    const char *matrix_path, *b_path, *out_path;
    int64_t fe3d;               /* --fe3d N (0: a matrix file) */
    int64_t laplace3d;          /* the distributed tool's --laplace3d N (0: none) */
    nz_value_type_t value_type;
    nz_format_t format;
    int format_auto;            /* --format auto (the default): the planner's format */
    nz_alg_t alg;
    nz_backend_t backend;
    nz_cg_options_t cg;
    int x0_random;              /* -1: default (random for --fe3d, zero otherwise) */
    int threads;
    int assembly;               /* 0 host, 1 device, 2 both (default: both on cuda) */
    int history;                /* print the residual history */
} cg_cli_options_t;

/* Parse argv into *o (defaults first), with every check of `nz cg` (values, paths, the output
 * check): NZ_EXIT_OK to go on; NZ_CLI_HELP after --help printed the usage (the command then
 * exits 0); otherwise the exit status, after one line naming the problem. */
int nz_cmd_cg_parse_options(int argc, char **argv, cg_cli_options_t *o);

/* The parts of that parser, for the distributed tool, which parses its own options in front of
 * these: the defaults; the option table writing into *o (heading "options:"); and the checks
 * after parsing (one problem: a matrix file, --fe3d N or, distributed, --laplace3d N; the
 * output check; the combinations), which also fill in the defaults that depend on the other
 * options. The checks return NZ_EXIT_OK or NZ_EXIT_USAGE after one line. */
void nz_cmd_cg_default_options(cg_cli_options_t *o);
nz_cli_table_t nz_cmd_cg_table(cg_cli_options_t *o);
int nz_cmd_cg_check_options(cg_cli_options_t *o);

/* The linear system of a matrix file, shared with `nz solve`: A (square, else one line
 * "PATH is R x C; <needs>") read as value type vt, and b from b_path (an n-vector) or, when
 * b_path is NULL, b = A * ones (so that the exact solution is ones; a NaN or Inf in A is named).
 * Returns NZ_EXIT_OK or the exit status after one line; what was created is the caller's to
 * free (nz_matrix_destroy, nz_free). */
int nz_cmd_cg_read_system(const char *cmd, nz_context_t *ctx, const char *matrix_path,
                          const char *b_path, nz_value_type_t vt, const char *needs,
                          nz_matrix_t **A, void **b, int64_t *n);

#endif /* NZ_CMD_CG_H */
