/* cmd_spmv.h: `nz spmv`'s options, shared by its option parser and its runner. */
#ifndef NZ_CMD_SPMV_H
#define NZ_CMD_SPMV_H

#include "cli_options.h"

typedef struct spmv_options {
    const char *matrix_path, *x_path, *y_path, *out_path, *x_out_path;
    double alpha, beta;
    nz_value_type_t value_type;
    int all_formats;            /* --format all */
    int format_auto;            /* --format auto: the planner's format advice */
    int alg_all;                /* --alg all */
    nz_format_t format;
    nz_alg_t alg;
    nz_backend_t backend;
    nz_format_options_t format_options;
    int check, repeat, verbose, list, threads;
    unsigned plan_flags;        /* --plan-flags */
} spmv_options_t;

/* Parse argv into *o (defaults first): NZ_EXIT_OK to go on; NZ_CLI_HELP after --help printed
 * the usage (the command then exits 0); otherwise the exit status, after one line naming the
 * problem. */
int nz_cmd_spmv_parse_options(int argc, char **argv, spmv_options_t *o);

/* The parts of that parser, for the distributed tool, which parses its own options in front of
 * these: the defaults; the option table writing into *o (heading "options:"); the checks after
 * parsing (a matrix unless --list, -o with a single run, the output check): NZ_EXIT_OK or
 * NZ_EXIT_USAGE after one line. */
void nz_cmd_spmv_default_options(spmv_options_t *o);
nz_cli_table_t nz_cmd_spmv_table(spmv_options_t *o);
int nz_cmd_spmv_check_options(const spmv_options_t *o);

#endif /* NZ_CMD_SPMV_H */
