/* cmd_solve.h: `nz solve`'s options, shared by its parser, its report and the distributed tool. */
#ifndef NZ_CMD_SOLVE_H
#define NZ_CMD_SOLVE_H

#include "cli_options.h"

typedef struct solve_cli_options {
    const char *matrix_path, *b_path, *out_path;
    int64_t laplace3d;          /* the distributed tool's --laplace3d N (0: none) */
    int64_t convdiff3d;         /* the distributed tool's --convdiff3d N (0: none) */
    double peclet;              /* its --peclet P (< 0: not given; the default 1 after the checks) */
    nz_value_type_t value_type;
    nz_backend_t backend;
    nz_solve_options_t solve;
    int history;                /* print the residual history */
    int threads;
    nz_amg_options_t amg;       /* --precond amg: --amg-* */
    const char *nullspace_path; /* --amg-nullspace FILE (Matrix Market array, rows x k) */
    int amg_report;             /* --amg-report: print the hierarchy */
    int amg_options_given;      /* an --amg-* option was given */
} solve_cli_options_t;

/* The parts of `nz solve`'s parser, for the distributed tool, which parses its own options in
 * front of these: the defaults; the option table writing into *o (heading "options:"); and the
 * checks after parsing (one problem: a matrix file or, distributed, --laplace3d N or
 * --convdiff3d N; the combinations; the output check), which also set the defaults that depend
 * on the other options. The checks return NZ_EXIT_OK or NZ_EXIT_USAGE after one line. */
void nz_cmd_solve_default_options(solve_cli_options_t *o);
nz_cli_table_t nz_cmd_solve_table(solve_cli_options_t *o);
int nz_cmd_solve_check_options(solve_cli_options_t *o);

/* The report line of a finished solve on standard output ("solve: method gmres(30), precond
 * ilu0, double, iterations ..., status converged, ..."): the options solved with, the value
 * type, the result. */
void nz_cmd_solve_print_report(const nz_solve_options_t *so, nz_value_type_t value_type,
                               const nz_solve_result_t *res);
/* --precond amg: the hierarchy of M, one line a level and one of totals, on standard output. */
void nz_cmd_solve_print_amg(const nz_preconditioner_t *M);
/* The --precond name of a preconditioner kind ("ilu0", "block-jacobi"). */
const char *nz_cmd_solve_precond_name(nz_precond_t precond);

#endif /* NZ_CMD_SOLVE_H */
