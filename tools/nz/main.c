/* main.c: the nz command-line tool: dispatch to a subcommand, top-level help and version. */
#include "cli.h"
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Kept in step with project(Nonzero VERSION ...) in CMakeLists.txt. */

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"info", nz_cmd_info, "shape, row-length statistics and memory per format of a matrix"},
    {"gen", nz_cmd_gen, "generate a test matrix (Laplacians, FE, R-MAT, random, ...)"},
    {"convert", nz_cmd_convert, "convert between .mtx, .mtx.gz and .nzb files"},
    {"spmv", nz_cmd_spmv, "y = alpha A x + beta y in any format, on the CPU or the GPU"},
    {"cg", nz_cmd_cg, "conjugate gradients on a matrix or the 3-D Q1 FE problem (--fe3d N)"},
    {"solve", nz_cmd_solve, "Krylov solvers: cg, bicgstab, gmres, fgmres, minres (--method)"},
    {"spgemm", nz_cmd_spgemm, "C = A B (sparse times sparse) on the CPU or the GPU"},
    {"bench", nz_cmd_bench, "run the benchmark suite"},
};
#define NUM_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *out) {
    fprintf(out, "usage: nz <command> [options]   (nz <command> --help for details)\n\n"
                 "commands:\n");
    for (int i = 0; i < NUM_COMMANDS; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\noptions:\n"
                 "  --help      this text\n"
                 "  --version   print the version\n"
                 "  --memory-budget BYTES   after info, gen, convert, spmv, cg, solve or spgemm:\n"
                 "              refuse a matrix whose declared size needs more (K, M, G\n"
                 "              suffixes; default 3/4 of physical memory)\n\n"
                 "exit status: 0 success, 1 failure, 2 bad command line, 3 refused (e.g. a format\n"
                 "that would need too much padding, or a combination that is not implemented),\n"
                 "4 not converged (nz cg, nz solve: the iteration limit or stagnation above the\n"
                 "tolerance)\n");
}

/* A result that could not be written is a failure: check standard output's buffered writes
 * and its close (`nz info A.mtx > /dev/full` must not exit 0). One line on stderr. */
static int finish(const char *cmd, int rc) {
    errno = 0;
    int failed = fflush(stdout) != 0;
    int err = errno;
    failed |= ferror(stdout) != 0;
    if (fclose(stdout) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    if (failed) {
        /* not nz_cli_error: it flushes stdout, which is closed now */
        fprintf(stderr, "nz%s%s: cannot write standard output: %s\n", cmd != NULL ? " " : "",
                cmd != NULL ? cmd : "", err != 0 ? strerror(err) : "write error");
        if (rc == NZ_EXIT_OK) rc = NZ_EXIT_FAIL;
    }
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        nz_cli_error(NULL, "missing command (see nz --help)");
        return NZ_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (nz_cli_is_help(name) || strcmp(name, "help") == 0) {
        usage(stdout);
        return finish(NULL, NZ_EXIT_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("nz %s (Nonzero; CUDA devices visible: %d)\n", nz_version(), nz_device_count());
        return finish(NULL, NZ_EXIT_OK);
    }
    /* --memory-budget BYTES (anywhere after a subcommand that reads or generates matrices) is
     * taken out here and applied to every context the subcommand creates */
    if (strcmp(name, "bench") != 0) {
        int kept = 2;
        for (int i = 2; i < argc; i++) {
            if (strcmp(argv[i], "--memory-budget") == 0) {
                if (i + 1 >= argc) {
                    nz_cli_error(name, "option --memory-budget needs a value");
                    return NZ_EXIT_USAGE;
                }
                if (nz_cli_bytes(name, argv[i], argv[i + 1], &nz_cli_memory_budget) != 0)
                    return NZ_EXIT_USAGE;
                i++;
                continue;
            }
            argv[kept++] = argv[i];
        }
        argv[kept] = NULL;
        argc = kept;
    }
#ifdef NZ_HAVE_DIST
    if (nz_dist_cli_wanted(name, argc - 1, argv + 1)) return nz_cmd_dist(name, argc - 1, argv + 1);
#endif
    for (int i = 0; i < NUM_COMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return finish(commands[i].name, commands[i].run(argc - 1, argv + 1));
    if (name[0] == '-')
        nz_cli_error(NULL, "unknown option %s (see nz --help)", name);
    else
        nz_cli_error(NULL, "unknown command '%s' (see nz --help)", name);
    return NZ_EXIT_USAGE;
}
