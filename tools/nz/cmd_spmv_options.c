/* cmd_spmv_options.c: `nz spmv`'s usage text and option parser. */
#include "cmd_spmv.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "spmv";

static void usage(void) {
    printf(
        "usage: nz spmv A.(mtx|mtx.gz|nzb) [options]\n"
        "       nz spmv --list [--backend cpu|cuda]\n\n"
        "Computes y = alpha A x + beta y. Vectors are Matrix Market array files (x: one entry per\n"
        "column of A, y: one per row), written with round-trip precision (17 significant digits\n"
        "in double, 9 in single).\n\n"
        "options:\n"
        "  --x FILE           x (default: the deterministic x_j = 1 + (j mod 7) / 8, j = 0, 1, ...,\n"
        "                     exact in both precisions)\n"
        "  --y FILE           the input y (default: zeros)\n"
        "  --alpha A          default 1\n"
        "  --beta B           default 0 (then y is not read)\n"
        "  --precision P      single or double (default double)\n"
        "  --format F         csr csc coo ell sell hyb bsr dia; auto: the planner's format for\n"
        "                     the backend (DIA, BSR, ELL, SELL or HYB when it reads at least\n"
        "                     10%% fewer bytes than CSR, else CSR; --verbose says why); or all:\n"
        "                     run every format in turn, reading the matrix once (default\n"
        "                     csr). With --format all or --alg all, each run prints one line,\n"
        "                     'FORMAT/ALG relerr E' (E with --check) or 'FORMAT[/ALG] refused:\n"
        "                     reason', and refusals do not make the command fail\n"
        "  --alg NAME         algorithm (see --list), auto (the planner's choice), or all: run\n"
        "                     every algorithm of the format(s) in turn (default auto)\n"
        "  --backend B        cpu or cuda (device 0) (default cpu)\n"
        "  --sell-chunk C     SELL chunk height (default 32)\n"
        "  --sell-sigma S     SELL sorting window in rows (default 1)\n"
        "  --bsr-block B      BSR block size 1..32 (default 4)\n"
        "  --max-padding R    refuse ELL/SELL/HYB/BSR/DIA above R x the CSR bytes (default 3)\n"
        "  --threads N        OpenMP threads of the CPU kernels (default: OpenMP's)\n"
        "  -o FILE            write y (otherwise a one-line summary is printed)\n"
        "  --write-x FILE     write the x that was used\n"
        "  --check            compare with a double-precision CSR reference computed serially on\n"
        "                     the CPU from the matrix read in double; prints 'relerr E' with\n"
        "                     E = ||y - y_ref||_2 / ||y_ref||_2 (||y - y_ref||_2 if y_ref = 0)\n"
        "                     and fails if E > 1e-12 (double) or 1e-5 (single); entries\n"
        "                     where y_ref is NaN or Inf must match exactly and are left out of E\n"
        "  --repeat N         execute N times (timing; every run starts from the input y)\n"
        "  --plan-flags LIST  GPU plan flags, a comma list of hints, panels, reorder,\n"
        "                     compressed, per-row, mixed, reuse (docs/PERF_NOTES.md; reuse:\n"
        "                     the plan runs many times, set-up may cost more: docs/PLANNER.md)\n"
        "  --verbose          plan and execute times on stderr\n"
        "  --list             print the FORMAT/ALG pairs of the backend, one per line\n"
        "  --help             this text\n\n"
        "exit status: 0 success, 1 failure (including a failed --check), 2 bad command line,\n"
        "3 refused (the format needs too much padding, or the format / algorithm / backend\n"
        "combination is not available).\n");
}

/* --plan-flags: a comma list of flag names into *flags; 1 (after the message) on a bad name. */
static int parse_plan_flags(const char *list, unsigned *flags) {
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
            nz_cli_error(CMD, "option --plan-flags: '%.*s' is not hints, panels, reorder, "
                         "compressed, per-row, mixed or reuse", (int)len, list);
            return 1;
        }
        *flags |= names[i].flag;
        list += list[len] == ',' ? len + 1 : len;
    }
    return 0;
}

int nz_cmd_spmv_parse_options(int argc, char **argv, spmv_options_t *o) {
    memset(o, 0, sizeof *o);
    o->alpha = 1.0;
    o->beta = 0.0;
    o->value_type = NZ_F64;
    o->format = NZ_FORMAT_CSR;
    o->alg = NZ_ALG_AUTO;
    o->backend = NZ_BACKEND_CPU;
    o->repeat = 1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v = NULL;
        /* Options taking a value fetch it here, so a missing value is caught in one place. */
        static const char *const with_value[] = {
            "--x", "--y", "--alpha", "--beta", "--precision", "--format", "--alg", "--backend",
            "--sell-chunk", "--sell-sigma", "--bsr-block", "--max-padding", "--threads", "-o",
            "--output", "--write-x", "--repeat", "--plan-flags"};
        if (nz_cli_option_value(CMD, argc, argv, &i, with_value,
                                sizeof with_value / sizeof with_value[0], &v) != NZ_EXIT_OK)
            return NZ_EXIT_USAGE;
        int bad = 0;
        if (nz_cli_is_help(arg)) {
            usage();
            return -1;
        } else if (strcmp(arg, "--x") == 0) {
            o->x_path = v;
        } else if (strcmp(arg, "--y") == 0) {
            o->y_path = v;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            o->out_path = v;
        } else if (strcmp(arg, "--write-x") == 0) {
            o->x_out_path = v;
        } else if (strcmp(arg, "--alpha") == 0) {
            bad = nz_cli_double(CMD, arg, v, &o->alpha);
        } else if (strcmp(arg, "--beta") == 0) {
            bad = nz_cli_double(CMD, arg, v, &o->beta);
        } else if (strcmp(arg, "--precision") == 0) {
            bad = nz_cli_precision(CMD, arg, v, &o->value_type);
        } else if (strcmp(arg, "--format") == 0) {
            o->all_formats = strcmp(v, "all") == 0;
            o->format_auto = strcmp(v, "auto") == 0;
            if (!o->all_formats && !o->format_auto &&
                nz_format_from_name(&o->format, v) != NZ_SUCCESS) {
                nz_cli_error(CMD, "option --format: unknown format '%s' (csr, csc, coo, ell, "
                                  "sell, hyb, bsr, dia, auto or all)", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--alg") == 0) {
            o->alg_all = strcmp(v, "all") == 0;
            o->alg = NZ_ALG_AUTO;
            if (!o->alg_all && nz_alg_from_name(&o->alg, v) != NZ_SUCCESS) {
                nz_cli_error(CMD, "option --alg: unknown algorithm '%s' (see nz spmv --list)", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--backend") == 0) {
            bad = nz_cli_backend(CMD, arg, v, &o->backend);
        } else if (strcmp(arg, "--sell-chunk") == 0) {
            bad = nz_cli_int(CMD, arg, v, 1, 1024, &o->format_options.sell_chunk);
        } else if (strcmp(arg, "--sell-sigma") == 0) {
            bad = nz_cli_int(CMD, arg, v, 1, 1 << 30, &o->format_options.sell_sigma);
        } else if (strcmp(arg, "--bsr-block") == 0) {
            bad = nz_cli_int(CMD, arg, v, 1, 32, &o->format_options.bsr_block);
        } else if (strcmp(arg, "--max-padding") == 0) {
            bad = nz_cli_double(CMD, arg, v, &o->format_options.max_padding_ratio);
            if (!bad && o->format_options.max_padding_ratio <= 0.0) {
                nz_cli_error(CMD, "option --max-padding: %s is not positive", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--threads") == 0) {
            bad = nz_cli_threads(CMD, arg, v, 0, &o->threads);
        } else if (strcmp(arg, "--repeat") == 0) {
            bad = nz_cli_int(CMD, arg, v, 1, 1000000000, &o->repeat);
        } else if (strcmp(arg, "--plan-flags") == 0) {
            bad = parse_plan_flags(v, &o->plan_flags);
        } else if (strcmp(arg, "--check") == 0) {
            o->check = 1;
        } else if (strcmp(arg, "--verbose") == 0 || strcmp(arg, "-v") == 0) {
            o->verbose = 1;
        } else if (strcmp(arg, "--list") == 0) {
            o->list = 1;
        } else {
            const char **const positional[] = {&o->matrix_path};
            if (nz_cli_positional(CMD, arg, positional, 1) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
        }
        if (bad) return NZ_EXIT_USAGE;
    }
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
