/* cmd_spmv_options.c: `nz spmv`'s option table, usage text and option checks. */
#include "cmd_spmv.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "spmv";

static const nz_cli_command_t spmv_command = {
    .name = "spmv",
    .synopsis =
        "usage: nz spmv A.(mtx|mtx.gz|nzb) [options]\n"
        "       nz spmv --list [--backend cpu|cuda]\n\n"
        "Computes y = alpha A x + beta y. Vectors are Matrix Market array files (x: one entry per\n"
        "column of A, y: one per row), written with round-trip precision (17 significant digits\n"
        "in double, 9 in single).\n\n",
    .epilogue =
        "\nexit status: 0 success, 1 failure (including a failed --check), 2 bad command line,\n"
        "3 refused (the format needs too much padding, or the format / algorithm / backend\n"
        "combination is not available).\n",
    .column = 21,
};

/* --plan-flags: a comma list of flag names into o->plan_flags; 1 (after the message) on a bad
 * name. */
static int parse_plan_flags(const char *cmd, const char *option, const char *list,
                            void *options) {
    unsigned *flags = &((spmv_options_t *)options)->plan_flags;
    static const struct {
        const char *name;
        unsigned flag;
    } names[] = {{"hints", NZ_PLAN_CACHE_HINTS},      {"panels", NZ_PLAN_COLUMN_PANELS},
                 {"reorder", NZ_PLAN_REORDER},         {"compressed", NZ_PLAN_COMPRESS_INDICES},
                 {"per-row", NZ_PLAN_LIGHT_PER_ROW},   {"mixed", NZ_PLAN_MIXED},
                 {"reuse", NZ_PLAN_REUSE}};
    *flags = 0;
    while (*list != '\0') {
        size_t len = strcspn(list, ",");
        size_t i = 0;
        while (i < sizeof names / sizeof names[0] &&
               !(strlen(names[i].name) == len && strncmp(names[i].name, list, len) == 0))
            i++;
        if (i == sizeof names / sizeof names[0]) {
            nz_cli_error(cmd, "option %s: '%.*s' is not hints, panels, reorder, compressed, "
                              "per-row, mixed or reuse", option, (int)len, list);
            return 1;
        }
        *flags |= names[i].flag;
        list += list[len] == ',' ? len + 1 : len;
    }
    return 0;
}

/* --format: a format name, auto (the planner's) or all (every format in turn). */
static int parse_format(const char *cmd, const char *option, const char *value, void *options) {
    spmv_options_t *o = options;
    o->all_formats = strcmp(value, "all") == 0;
    o->format_auto = strcmp(value, "auto") == 0;
    if (o->all_formats || o->format_auto || nz_format_from_name(&o->format, value) == NZ_SUCCESS)
        return 0;
    nz_cli_error(cmd, "option %s: unknown format '%s' (csr, csc, coo, ell, sell, hyb, bsr, dia, "
                      "auto or all)", option, value);
    return 1;
}

/* --alg: an algorithm name, auto or all (every algorithm of the format in turn). */
static int parse_alg(const char *cmd, const char *option, const char *value, void *options) {
    spmv_options_t *o = options;
    o->alg_all = strcmp(value, "all") == 0;
    o->alg = NZ_ALG_AUTO;
    if (o->alg_all || nz_alg_from_name(&o->alg, value) == NZ_SUCCESS) return 0;
    nz_cli_error(cmd, "option %s: unknown algorithm '%s' (see nz spmv --list)", option, value);
    return 1;
}

static int parse_max_padding(const char *cmd, const char *option, const char *value,
                             void *options) {
    double *ratio = &((spmv_options_t *)options)->format_options.max_padding_ratio;
    if (nz_cli_double(cmd, option, value, ratio)) return 1;
    if (*ratio > 0.0) return 0;
    nz_cli_error(cmd, "option %s: %s is not positive", option, value);
    return 1;
}

#define AT(member) NZ_CLI_AT(spmv_options_t, member)
static const nz_cli_option_t spmv_options[] = {
    {.kind = NZ_CLI_STRING, AT(matrix_path)},
    {.name = "--x", .kind = NZ_CLI_STRING, AT(x_path), .metavar = "FILE",
     .help = "x (default: the deterministic x_j = 1 + (j mod 7) / 8, j = 0, 1, ...,\n"
             "exact in both precisions)"},
    {.name = "--y", .kind = NZ_CLI_STRING, AT(y_path), .metavar = "FILE",
     .help = "the input y (default: zeros)"},
    {.name = "--alpha", .kind = NZ_CLI_DOUBLE, AT(alpha), .metavar = "A", .help = "default 1"},
    {.name = "--beta", .kind = NZ_CLI_DOUBLE, AT(beta), .metavar = "B",
     .help = "default 0 (then y is not read)"},
    {.name = "--precision", .kind = NZ_CLI_ENUM, AT(value_type),
     .names = &nz_cli_precision_names, .metavar = "P",
     .help = "single or double (default double)"},
    {.name = "--format", .kind = NZ_CLI_CUSTOM, .parse = parse_format, .metavar = "F",
     .help = "csr csc coo ell sell hyb bsr dia; auto: the planner's format for\n"
             "the backend (DIA, BSR, ELL, SELL or HYB when it reads at least\n"
             "10% fewer bytes than CSR, else CSR; --verbose says why); or all:\n"
             "run every format in turn, reading the matrix once (default\n"
             "csr). With --format all or --alg all, each run prints one line,\n"
             "'FORMAT/ALG relerr E' (E with --check) or 'FORMAT[/ALG] refused:\n"
             "reason', and refusals do not make the command fail"},
    {.name = "--alg", .kind = NZ_CLI_CUSTOM, .parse = parse_alg, .metavar = "NAME",
     .help = "algorithm (see --list), auto (the planner's choice), or all: run\n"
             "every algorithm of the format(s) in turn (default auto)"},
    {.name = "--backend", .kind = NZ_CLI_ENUM, AT(backend), .names = &nz_cli_backend_names,
     .metavar = "B", .help = "cpu or cuda (device 0) (default cpu)"},
    {.name = "--sell-chunk", .kind = NZ_CLI_INT, AT(format_options.sell_chunk), .min = 1,
     .max = 1024, .metavar = "C", .help = "SELL chunk height (default 32)"},
    {.name = "--sell-sigma", .kind = NZ_CLI_INT, AT(format_options.sell_sigma), .min = 1,
     .max = 1 << 30, .metavar = "S", .help = "SELL sorting window in rows (default 1)"},
    {.name = "--bsr-block", .kind = NZ_CLI_INT, AT(format_options.bsr_block), .min = 1,
     .max = 32, .metavar = "B", .help = "BSR block size 1..32 (default 4)"},
    {.name = "--max-padding", .kind = NZ_CLI_CUSTOM, .parse = parse_max_padding,
     .metavar = "R", .help = "refuse ELL/SELL/HYB/BSR/DIA above R x the CSR bytes (default 3)"},
    {.name = "--threads", .kind = NZ_CLI_THREADS, AT(threads), .min = 0, .metavar = "N",
     .help = "OpenMP threads of the CPU kernels (default: OpenMP's)"},
    {.name = "--output", .short_name = "-o", .kind = NZ_CLI_STRING, AT(out_path),
     .metavar = "FILE", .help = "write y (otherwise a one-line summary is printed)"},
    {.name = "--write-x", .kind = NZ_CLI_STRING, AT(x_out_path), .metavar = "FILE",
     .help = "write the x that was used"},
    {.name = "--check", .kind = NZ_CLI_FLAG, AT(check),
     .help = "compare with a double-precision CSR reference computed serially on\n"
             "the CPU from the matrix read in double; prints 'relerr E' with\n"
             "E = ||y - y_ref||_2 / ||y_ref||_2 (||y - y_ref||_2 if y_ref = 0)\n"
             "and fails if E > 1e-12 (double) or 1e-5 (single); entries\n"
             "where y_ref is NaN or Inf must match exactly and are left out of E"},
    {.name = "--repeat", .kind = NZ_CLI_INT, AT(repeat), .min = 1, .max = 1000000000,
     .metavar = "N",
     .help = "execute N times (timing; every run starts from the input y)"},
    {.name = "--plan-flags", .kind = NZ_CLI_CUSTOM, .parse = parse_plan_flags,
     .metavar = "LIST",
     .help = "GPU plan flags, a comma list of hints, panels, reorder,\n"
             "compressed, per-row, mixed, reuse (docs/dev/PERF_NOTES.md; reuse:\n"
             "the plan runs many times, set-up may cost more: docs/PLANNER.md)"},
    {.name = "--verbose", .short_name = "-v", .kind = NZ_CLI_FLAG, AT(verbose),
     .help = "plan and execute times on stderr"},
    {.name = "--list", .kind = NZ_CLI_FLAG, AT(list),
     .help = "print the FORMAT/ALG pairs of the backend, one per line"},
};
#undef AT

void nz_cmd_spmv_default_options(spmv_options_t *o) {
    memset(o, 0, sizeof *o);
    o->alpha = 1.0;
    o->beta = 0.0;
    o->value_type = NZ_F64;
    o->format = NZ_FORMAT_CSR;
    o->alg = NZ_ALG_AUTO;
    o->backend = NZ_BACKEND_CPU;
    o->repeat = 1;
}

nz_cli_table_t nz_cmd_spmv_table(spmv_options_t *o) {
    nz_cli_table_t table = {spmv_options, NZ_CLI_COUNT(spmv_options), o, "options:\n"};
    return table;
}

int nz_cmd_spmv_check_options(const spmv_options_t *o) {
    if (o->list) return NZ_EXIT_OK;
    if (o->matrix_path == NULL) return nz_cli_missing(CMD, "input matrix file");
    if ((o->all_formats || o->alg_all) && o->out_path != NULL) {
        nz_cli_error(CMD, "option -o: cannot be combined with --format all or --alg all");
        return NZ_EXIT_USAGE;
    }
    const nz_cli_file_t inputs[] = {{NULL, o->matrix_path}, {"--x", o->x_path}, {"--y", o->y_path}};
    const nz_cli_file_t outputs[] = {{"--write-x", o->x_out_path}, {"-o", o->out_path}};
    return nz_cli_check_files(CMD, outputs, 2, inputs, 3);
}

int nz_cmd_spmv_parse_options(int argc, char **argv, spmv_options_t *o) {
    nz_cmd_spmv_default_options(o);
    const nz_cli_table_t table = nz_cmd_spmv_table(o);
    int rc = nz_cli_parse(&spmv_command, &table, 1, argc, argv);
    return rc != NZ_EXIT_OK ? rc : nz_cmd_spmv_check_options(o);
}
