/* commands.h: the nz tool's subcommands; each returns the process exit status. */
#ifndef NZ_TOOL_COMMANDS_H
#define NZ_TOOL_COMMANDS_H

int nz_cmd_info(int argc, char **argv);    /* cmd_info.c */
int nz_cmd_gen(int argc, char **argv);     /* cmd_gen.c */
int nz_cmd_convert(int argc, char **argv); /* cmd_convert.c */
int nz_cmd_spmv(int argc, char **argv);    /* cmd_spmv.c */
int nz_cmd_bench(int argc, char **argv);   /* cmd_bench.c (drives bench/) */
int nz_cmd_cg(int argc, char **argv);      /* cmd_cg.c */
int nz_cmd_solve(int argc, char **argv);   /* cmd_solve.c */
int nz_cmd_spgemm(int argc, char **argv);  /* cmd_spgemm.c */

#ifdef NZ_HAVE_DIST
/* cmd_dist.c: launched by mpiexec with more than one rank (or --dist), cg / spmv / bench run
 * distributed; nz_cmd_dist calls MPI_Init and MPI_Finalize itself. */
int nz_dist_cli_wanted(const char *command, int argc, char **argv);
int nz_cmd_dist(const char *command, int argc, char **argv);
#endif

#endif
