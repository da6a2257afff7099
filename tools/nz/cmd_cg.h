/* cmd_cg.h: `nz cg`'s options, shared by its parser, its runner and the distributed tool. */
#ifndef NZ_CMD_CG_H
#define NZ_CMD_CG_H

#include "cli.h"

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
 * check): NZ_EXIT_OK to go on; -1 after --help printed the usage (the command then exits 0);
 * otherwise the exit status, after one line naming the problem. laplace3d > 0: the distributed
 * tool's generated Laplacian is the problem (it took --laplace3d N out of argv), so a matrix
 * file or --fe3d is then one problem too many; 0 for the serial tool. */
int nz_cmd_cg_parse_options(int argc, char **argv, cg_cli_options_t *o, int64_t laplace3d);

#endif /* NZ_CMD_CG_H */
