/* cmd_info.c: `nz info`: shape, row-length statistics, structure and memory per format. */
#include "cli_options.h"
#include "cmd_solve.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "info";

typedef struct info_options {
    const char *path;
    nz_value_type_t value_type;
    nz_backend_t backend;
    int amg;                    /* --amg: build the AMG hierarchy (default options), print it */
} info_options_t;

static const nz_cli_command_t info_command = {
    .name = "info",
    .synopsis =
        "usage: nz info A.(mtx|mtx.gz|nzb) [--precision single|double] [--backend cpu|cuda]\n"
        "               [--amg]\n\n"
        "Reads the matrix and prints its shape, nonzeros, row lengths (min, mean, max, standard\n"
        "deviation), empty rows, bandwidths, number of diagonals, symmetry, the bytes each\n"
        "storage format would take with default options (\"refused\" where the conversion\n"
        "would exceed the padding limit), and the read time.\n\n",
    .column = 21,
};

#define AT(member) NZ_CLI_AT(info_options_t, member)
static const nz_cli_option_t info_options[] = {
    {.kind = NZ_CLI_STRING, AT(path)},
    {.name = "--precision", .kind = NZ_CLI_ENUM, AT(value_type),
     .names = &nz_cli_precision_names, .metavar = "P",
     .help = "value type to read the matrix in (default double)"},
    {.name = "--backend", .kind = NZ_CLI_ENUM, AT(backend), .names = &nz_cli_backend_names,
     .metavar = "B",
     .help = "cuda: also copy the CSR matrix to device 0 and report the device\n"
             "and the host-to-device transfer time (default cpu)"},
    {.name = "--amg", .kind = NZ_CLI_FLAG, AT(amg),
     .help = "also build the algebraic-multigrid hierarchy (default options;\n"
             "on the device with --backend cuda) and print it: a line a level,\n"
             "complexities and the set-up time per phase (nz solve --precond amg\n"
             "--amg-report does the same with its --amg-* options)"},
};
#undef AT

/* Bytes as "12345 bytes (12.1 KiB)". */
static void print_bytes(const char *label, size_t bytes) {
    double b = (double)bytes;
    if (b >= 1024.0 * 1024.0 * 1024.0)
        printf("%-22s %zu bytes (%.2f GiB)\n", label, bytes, b / (1024.0 * 1024.0 * 1024.0));
    else if (b >= 1024.0 * 1024.0)
        printf("%-22s %zu bytes (%.2f MiB)\n", label, bytes, b / (1024.0 * 1024.0));
    else if (b >= 1024.0)
        printf("%-22s %zu bytes (%.2f KiB)\n", label, bytes, b / 1024.0);
    else
        printf("%-22s %zu bytes\n", label, bytes);
}

/* The statistics: shape, row lengths, structure, the bytes of every format. */
static void print_stats(const info_options_t *o, const nz_matrix_stats_t *stats) {
    printf("%-22s %s\n", "file", o->path);
    printf("%-22s %s\n", "precision", nz_cli_precision_name(o->value_type));
    printf("%-22s %lld x %lld\n", "shape", (long long)stats->rows, (long long)stats->cols);
    printf("%-22s %lld\n", "nonzeros", (long long)stats->nnz);
    printf("%-22s min %lld  mean %.4g  max %lld  std %.4g\n", "row length",
           (long long)stats->row_min, stats->row_mean, (long long)stats->row_max,
           stats->row_std);
    printf("%-22s %lld\n", "empty rows", (long long)stats->empty_rows);
    printf("%-22s lower %lld  upper %lld\n", "bandwidth", (long long)stats->lower_bandwidth,
           (long long)stats->upper_bandwidth);
    printf("%-22s %lld\n", "diagonals", (long long)stats->num_diagonals);
    printf("%-22s %.3f of the nonzeros in the %d most-read columns\n", "hot columns",
           stats->hot_share, NZ_STATS_HOT_COLUMNS);
    printf("%-22s %s\n", "symmetric",
           stats->symmetric == 1 ? "yes" : stats->symmetric == 0 ? "no" : "no (not square)");
    for (int f = 0; f < NZ_FORMAT_COUNT; f++) {
        char label[32];
        snprintf(label, sizeof label, "memory %s", nz_format_name((nz_format_t)f));
        if (stats->bytes[f] == 0)
            printf("%-22s refused\n", label);
        else
            print_bytes(label, stats->bytes[f]);
    }
}

/* The planner's advice (format and algorithm) for each backend of this build. */
static void print_planner(const nz_matrix_stats_t *stats) {
    for (int b = 0; b < 2; b++) {
        const nz_backend_t be = b == 0 ? NZ_BACKEND_CPU : NZ_BACKEND_CUDA;
        char label[32], why[512];
        nz_format_t format;
        nz_alg_t alg;
        snprintf(label, sizeof label, "planner %s", b == 0 ? "cpu" : "cuda");
        if (nz_spmv_plan_choose(&format, &alg, why, sizeof why, stats, be, NZ_FORMAT_COUNT, 0) ==
            NZ_SUCCESS)
            printf("%-22s %s/%s (%s)\n", label, nz_format_name(format), nz_alg_name(alg), why);
        else
            printf("%-22s none (%s)\n", label, why);
    }
}

/* The read time and, with the GPU, the device and the transfer. */
static void print_times(const info_options_t *o, double read_seconds, const char *device_name,
                        const nz_matrix_info_t *device_info) {
    int64_t file_bytes = nz_cli_file_size(o->path);
    if (file_bytes >= 0 && read_seconds > 0.0)
        printf("%-22s %.6f s (%.1f MB/s of file)\n", "read time", read_seconds,
               (double)file_bytes / read_seconds / 1e6);
    else
        printf("%-22s %.6f s\n", "read time", read_seconds);
    if (o->backend != NZ_BACKEND_CUDA) return;
    printf("%-22s %s\n", "device", device_name);
    double t = device_info->transfer_seconds;
    if (t > 0.0)
        printf("%-22s %.6f s (%zu bytes, %.2f GB/s)\n", "host-to-device", t, device_info->bytes,
               (double)device_info->bytes / t / 1e9);
    else
        printf("%-22s %.6f s (%zu bytes)\n", "host-to-device", t, device_info->bytes);
}

/* Parse; read the matrix and its statistics (with the GPU, the transfer too, before anything
 * is printed, so that a failure prints nothing else); print. */
int nz_cmd_info(int argc, char **argv) {
    info_options_t o = {NULL, NZ_F64, NZ_BACKEND_CPU, 0};
    const nz_cli_table_t table = {info_options, NZ_CLI_COUNT(info_options), &o, "options:\n"};
    int rc = nz_cli_parse(&info_command, &table, 1, argc, argv);
    if (rc == NZ_CLI_HELP) return NZ_EXIT_OK;
    if (rc != NZ_EXIT_OK) return rc;
    if (o.path == NULL) return nz_cli_missing(CMD, "input matrix file");

    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *dA = NULL;
    nz_matrix_stats_t stats;
    nz_matrix_info_t device_info;
    const char *device_name = NULL;
    double read_seconds = 0.0;
    if ((rc = nz_cli_open_matrix(CMD, &ctx, &A, o.path, o.value_type, &read_seconds)) !=
        NZ_EXIT_OK)
        goto cleanup;
    NZ_CLI_TRY(nz_matrix_stats(ctx, &stats, A));
    if (o.backend == NZ_BACKEND_CUDA) {
        NZ_CLI_TRY(nz_context_set_device(ctx, 0, NULL));
        NZ_CLI_TRY(nz_matrix_to_device(ctx, &dA, A, NZ_INDEX_AUTO));
        NZ_CLI_TRY(nz_matrix_info(ctx, &device_info, dA));
        device_name = nz_context_device_name(ctx);
    }
    print_stats(&o, &stats);
    print_planner(&stats);
    print_times(&o, read_seconds, device_name, &device_info);
    if (o.amg) {
        nz_preconditioner_t *M = NULL;
        const nz_status_t st =
            nz_precond_create(ctx, &M, dA != NULL ? dA : A, NZ_PRECOND_AMG, NULL);
        if (st == NZ_SUCCESS) nz_cmd_solve_print_amg(M);
        nz_precond_destroy(&M);
        NZ_CLI_TRY(st);
    }

cleanup:
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return rc;
}
