/* cmd_convert.c: `nz convert`: read a matrix file of any supported kind, write another. */
#include "cli_options.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "convert";

typedef struct convert_options {
    const char *input, *output;
    nz_value_type_t value_type;
} convert_options_t;

static const nz_cli_command_t convert_command = {
    .name = "convert",
    .synopsis =
        "usage: nz convert A.(mtx|mtx.gz|nzb) -o B.(mtx|mtx.gz|nzb) [--precision single|double]\n\n"
        "Reads a Matrix Market file (coordinate or array; real, integer or pattern; general,\n"
        "symmetric, skew-symmetric), compressed or not, or a binary .nzb file, and writes it\n"
        "by the output's extension: .mtx (coordinate real general, round-trip precision),\n"
        ".mtx.gz (the same, compressed) or .nzb (binary CSR, fastest to reload).\n\n",
    .column = 21,
};

#define AT(member) NZ_CLI_AT(convert_options_t, member)
static const nz_cli_option_t convert_options[] = {
    {.kind = NZ_CLI_STRING, AT(input)},
    {.name = "--output", .short_name = "-o", .kind = NZ_CLI_STRING, AT(output),
     .metavar = "FILE", .help = "output file (required)"},
    {.name = "--precision", .kind = NZ_CLI_ENUM, AT(value_type),
     .names = &nz_cli_precision_names, .metavar = "P",
     .help = "value type of the values written (default double)"},
};
#undef AT

/* The command line, with its checks: NZ_EXIT_OK, NZ_CLI_HELP or the exit status. */
static int parse_options(int argc, char **argv, convert_options_t *o) {
    const nz_cli_table_t table = {convert_options, NZ_CLI_COUNT(convert_options), o,
                                  "options:\n"};
    int rc = nz_cli_parse(&convert_command, &table, 1, argc, argv);
    if (rc != NZ_EXIT_OK) return rc;
    if (o->input == NULL) return nz_cli_missing(CMD, "input matrix file");
    if (o->output == NULL) return nz_cli_missing(CMD, "output file (-o FILE)");
    if (nz_cli_check_matrix_path(CMD, o->output) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
    const nz_cli_file_t inputs[] = {{NULL, o->input}};
    const nz_cli_file_t outputs[] = {{"-o", o->output}};
    return nz_cli_check_files(CMD, outputs, 1, inputs, 1);
}

int nz_cmd_convert(int argc, char **argv) {
    convert_options_t o = {NULL, NULL, NZ_F64};
    int rc = parse_options(argc, argv, &o);
    if (rc == NZ_CLI_HELP) return NZ_EXIT_OK;
    if (rc != NZ_EXIT_OK) return rc;

    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL;
    double read_seconds = 0.0;
    if ((rc = nz_cli_open_matrix(CMD, &ctx, &A, o.input, o.value_type, &read_seconds)) !=
        NZ_EXIT_OK)
        goto cleanup;
    double t1 = nz_cli_wtime();
    if ((rc = nz_cli_write_matrix(CMD, ctx, A, o.output)) != NZ_EXIT_OK) goto cleanup;
    double t2 = nz_cli_wtime();
    nz_matrix_info_t info;
    NZ_CLI_TRY(nz_matrix_info(ctx, &info, A));
    printf("%s -> %s: %lld x %lld, %lld nonzeros, %s (read %.3f s, write %.3f s)\n", o.input,
           o.output, (long long)info.rows, (long long)info.cols, (long long)info.nnz,
           nz_cli_precision_name(o.value_type), read_seconds, t2 - t1);

cleanup:
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return rc;
}
