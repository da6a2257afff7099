/* cmd_convert.c: `nz convert`: read a matrix file of any supported kind, write another. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "convert";

static void usage(void) {
    printf("usage: nz convert A.(mtx|mtx.gz|nzb) -o B.(mtx|mtx.gz|nzb) [--precision single|double]\n\n"
           "Reads a Matrix Market file (coordinate or array; real, integer or pattern; general,\n"
           "symmetric, skew-symmetric), compressed or not, or a binary .nzb file, and writes it\n"
           "by the output's extension: .mtx (coordinate real general, round-trip precision),\n"
           ".mtx.gz (the same, compressed) or .nzb (binary CSR, fastest to reload).\n\n"
           "options:\n"
           "  -o FILE         output file (required)\n"
           "  --precision P   value type of the values written (default double)\n"
           "  --help          this text\n");
}

int nz_cmd_convert(int argc, char **argv) {
    const char *input = NULL, *output = NULL;
    nz_value_type_t value_type = NZ_F64;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (nz_cli_is_help(arg)) {
            usage();
            return NZ_EXIT_OK;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            if ((output = nz_cli_value(CMD, argc, argv, &i)) == NULL) return NZ_EXIT_USAGE;
        } else if (strcmp(arg, "--precision") == 0) {
            if (nz_cli_precision_option(CMD, argc, argv, &i, &value_type)) return NZ_EXIT_USAGE;
        } else {
            const char **const positional[] = {&input};
            if (nz_cli_positional(CMD, arg, positional, 1) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
        }
    }
    if (input == NULL) return nz_cli_missing(CMD, "input matrix file");
    if (output == NULL) return nz_cli_missing(CMD, "output file (-o FILE)");
    if (nz_cli_check_matrix_path(CMD, output) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
    const nz_cli_file_t inputs[] = {{NULL, input}};
    const nz_cli_file_t outputs[] = {{"-o", output}};
    if (nz_cli_check_files(CMD, outputs, 1, inputs, 1) != NZ_EXIT_OK) return NZ_EXIT_USAGE;

    int rc = NZ_EXIT_OK;
    nz_status_t status;
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL;
    double read_seconds = 0.0;
    if ((rc = nz_cli_open_matrix(CMD, &ctx, &A, input, value_type, &read_seconds)) != NZ_EXIT_OK)
        goto cleanup;
    double t1 = nz_cli_wtime();
    if ((rc = nz_cli_write_matrix(CMD, ctx, A, output)) != NZ_EXIT_OK) goto cleanup;
    double t2 = nz_cli_wtime();
    nz_matrix_info_t info;
    if ((status = nz_matrix_info(ctx, &info, A)) != NZ_SUCCESS) {
        rc = nz_cli_library_error(CMD, ctx, status);
        goto cleanup;
    }
    printf("%s -> %s: %lld x %lld, %lld nonzeros, %s (read %.3f s, write %.3f s)\n", input,
           output, (long long)info.rows, (long long)info.cols, (long long)info.nnz,
           nz_cli_precision_name(value_type), read_seconds, t2 - t1);

cleanup:
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return rc;
}
