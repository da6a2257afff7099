/* cmd_bench.c: `nz bench`: parse the options and run the benchmarks in bench/. */
#include "bench.h"
#include "bench_amg.h"
#include "bench_cg.h"
#include "bench_solve.h"
#ifdef NZ_HAVE_CUDA
#include "bench_extra.h"
#include "bench_spgemm.h"
#endif
#include "cli_options.h"
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "bench"

/* The command line: the benchmark's options and what selects the mode. */
typedef struct bench_cli {
    nzb_options_t opt;
    int precisions;                /* --precision: 1 single, 2 double, 3 both */
    int mode_cg, mode_spgemm, mode_spmm, mode_solve, mode_amg;
    const char *solve_sizes;       /* --solve-sizes: comma list of grid sides, read for --solve */
    const char *amg_sizes;         /* --amg-sizes: the same for --amg */
    const char *alg;               /* --alg (the last one given), read once the mode is known */
    nz_spgemm_alg_t spgemm_alg;    /* --spgemm: --alg as a GPU SpGEMM algorithm */
    char filter_buffer[4096];      /* --alg as SpMV filters: opt.filters point into it */
} bench_cli_t;

static const nz_cli_command_t bench_command = {
    .name = "bench",
    .synopsis =
        "usage: nz bench [options] [A.mtx ...]\n"
        "SpMV benchmark: generated matrices (plus NZ_MATRIX_DIR and the files given), then\n"
        "the large real matrices in a table of their own; every kernel verified against a\n"
        "double-precision reference, on the GPU (against cuSPARSE) when one is present,\n"
        "else on the CPU. Every row gives its plan's setup (plan_ms; plan_spmv: in SpMVs of\n"
        "its own kernel); csr/auto is the planner's default plan, its note what it chose.\n\n",
    .epilogue = "\nexit status: 0 all kernels verified, 1 a wrong result or an error, 2 bad command "
                "line\n",
    .column = 25,
};

/* A matrix file named on the command line (opt.files has room for every argument). */
static int add_file(const char *cmd, const char *option, const char *value, void *options) {
    (void)cmd;
    (void)option;
    bench_cli_t *b = options;
    b->opt.files[b->opt.num_files++] = (char *)value; /* an element of argv */
    return 0;
}

static const nz_cli_choice_t backend_choices[] = {
    {"cpu", NZ_BACKEND_CPU}, {"gpu", NZ_BACKEND_CUDA}, {"cuda", NZ_BACKEND_CUDA}, {NULL, 0}};
static const nz_cli_enum_t backend_names = {backend_choices, NULL};
static const nz_cli_choice_t size_choices[] = {
    {"small", NZB_SIZE_SMALL}, {"full", NZB_SIZE_FULL}, {"quick", NZB_SIZE_QUICK}, {NULL, 0}};
static const nz_cli_enum_t size_names = {size_choices, NULL};
static const nz_cli_choice_t precision_choices[] = {
    {"single", 1}, {"double", 2}, {"both", 3}, {NULL, 0}};
static const nz_cli_enum_t precision_names = {precision_choices, NULL};
static const nz_cli_choice_t offsets_choices[] = {{"32", 32}, {"64", 64}, {NULL, 0}};
static const nz_cli_enum_t offsets_names = {offsets_choices, NULL};

#define AT(member) NZ_CLI_AT(bench_cli_t, member)
static const nz_cli_option_t bench_options[] = {
    {.kind = NZ_CLI_CUSTOM, .parse = add_file},
    {.name = "--backend", .kind = NZ_CLI_ENUM, AT(opt.backend), .names = &backend_names,
     .help = "force a backend (gpu falls back to cpu without a device)"},
    {.name = "--size", .kind = NZ_CLI_ENUM, AT(opt.size), .names = &size_names,
     .help = "matrix sizes (default: full on the GPU, small on the CPU)"},
    {.name = "--quick", .kind = NZ_CLI_SET, AT(opt.size), .set_value = NZB_SIZE_QUICK,
     .help = "tiny matrices, a smoke run (no large ones unless --large)"},
    {.name = "--no-real", .kind = NZ_CLI_SET, AT(opt.real), .set_value = 0,
     .help = "skip the matrices in NZ_MATRIX_DIR and the large ones"},
    {.name = "--large", .kind = NZ_CLI_STRING, AT(opt.large_dir), .metavar = "DIR",
     .help = "the large real matrices (*.mtx, *.mtx.gz; default:\n"
             "$NZ_LARGE_MATRIX_DIR, else ../shared/matrices-large from\n"
             "the current directory, then from the source tree)"},
    {.name = "--only-large", .kind = NZ_CLI_FLAG, AT(opt.only_large),
     .help = "only the large real matrices (and files given): no\n"
             "generated suite, no NZ_MATRIX_DIR"},
    {.name = "--precision", .kind = NZ_CLI_ENUM, AT(precisions), .names = &precision_names,
     .help = "the precisions to run (default both)"},
    {.name = "--runs", .kind = NZ_CLI_INT, AT(opt.runs), .min = 1, .max = 100000,
     .metavar = "N", .help = "timed runs per kernel (default 50 GPU, 10 CPU, 5 --quick)"},
    {.name = "--offsets", .kind = NZ_CLI_ENUM, AT(opt.offset_bits), .names = &offsets_names,
     .help = "GPU row offset width (default 32)"},
    {.name = "--threads", .kind = NZ_CLI_THREADS, AT(opt.threads), .min = 1, .metavar = "N",
     .help = "CPU threads (default: OpenMP default)"},
    {.name = "--alg", .kind = NZ_CLI_STRING, AT(alg), .metavar = "LIST",
     .help = "comma list of algorithms, formats or format/alg pairs\n"
             "(e.g. merge,vector or sell/simd); cuSPARSE always runs"},
    {.name = "--csv", .kind = NZ_CLI_STRING, AT(opt.csv_path), .metavar = "FILE",
     .help = "CSV output (default bench-out/bench-<backend>.csv; the\n"
             "table is also written next to it as .txt, or .md)"},
    {.name = "--png", .kind = NZ_CLI_STRING, AT(opt.png_path), .metavar = "FILE",
     .help = "draw a chart with bench/plot.py (python3 + matplotlib)"},
    {.name = "--markdown", .kind = NZ_CLI_FLAG, AT(opt.markdown),
     .help = "print the table as Markdown"},
    {.name = "--cg", .kind = NZ_CLI_FLAG, AT(mode_cg),
     .help = "instead: the CG benchmark on the Q1 FE problem (per N,\n"
             "backend and format; bandwidth floor, transfer vs SpMV)"},
    {.name = "--spgemm", .kind = NZ_CLI_FLAG, AT(mode_spgemm),
     .help = "instead: C = A*A on the GPU suite vs cuSPARSE SpGEMM\n"
             "ALG1/2/3 (with --quick, --no-real, --precision, --runs;\n"
             "--alg hash|esc|hyspmm picks ours, default hash)"},
    {.name = "--spmm", .kind = NZ_CLI_FLAG, AT(mode_spmm),
     .help = "instead: transpose SpMV and many right-hand sides (SpMM)\n"
             "on the GPU vs cuSPARSE (with --precision, --csv, files)"},
    {.name = "--solve", .kind = NZ_CLI_FLAG, AT(mode_solve),
     .help = "instead: GPU SpSV vs cuSPARSE SpSV, BiCGSTAB / GMRES(30)\n"
             "per iteration vs SpMV, ILU(0) time to solution (with\n"
             "--solve-sizes, --precision, --runs, --quick, --csv)"},
    {.name = "--amg", .kind = NZ_CLI_FLAG, AT(mode_amg),
     .help = "instead: AMG-PCG vs Jacobi-PCG (set-up, re-setup,\n"
             "iterations, time to solution) on fe3d, laplace3d,\n"
             "elasticity3d and the real symmetric matrices (with\n"
             "--backend, --amg-sizes, --runs, --quick, --no-real, --csv)"},
    {.name = "--amg-sizes", .kind = NZ_CLI_STRING, AT(amg_sizes), .metavar = "LIST",
     .help = "--amg: comma list of grid sides n (fe3d n, laplace3d n^3,\n"
             "elasticity3d n/2; default 32,64 on the CPU, 64,128 on\n"
             "the GPU; --quick 16,24)"},
    {.name = "--solve-sizes", .kind = NZ_CLI_STRING, AT(solve_sizes), .metavar = "LIST",
     .help = "--solve: comma list of grid sides n (matrices n^3;\n"
             "default 128,200; --quick 32,48); the first one is\n"
             "the time-to-solution problem"},
};
#undef AT

/* Split a comma list of algorithm / format / format/alg names into opt->filters (pointing into
 * buffer). */
static int parse_filters(nzb_options_t *opt, char *buffer) {
    for (char *tok = strtok(buffer, ","); tok != NULL; tok = strtok(NULL, ",")) {
        nz_alg_t alg;
        nz_format_t format;
        char *slash = strchr(tok, '/');
        int known;
        if (slash != NULL) {
            *slash = '\0';
            known = nz_format_from_name(&format, tok) == NZ_SUCCESS &&
                    nz_alg_from_name(&alg, slash + 1) == NZ_SUCCESS;
            *slash = '/';
        } else {
            known = nz_alg_from_name(&alg, tok) == NZ_SUCCESS ||
                    nz_format_from_name(&format, tok) == NZ_SUCCESS;
        }
        if (!known) {
            nz_cli_error(CMD, "option --alg: unknown algorithm or format '%s'", tok);
            return NZ_EXIT_USAGE;
        }
        if (opt->num_filters == NZB_MAX_ALGS) {
            nz_cli_error(CMD, "option --alg: more than %d names", NZB_MAX_ALGS);
            return NZ_EXIT_USAGE;
        }
        opt->filters[opt->num_filters++] = tok;
    }
    return NZ_EXIT_OK;
}

/* --csv, --png and the table written next to the CSV (SpMV mode): no matrix extension, none of
 * them an input matrix or each other, before anything runs (`--csv *.mtx` expands to
 * `--csv a.mtx b.mtx`, which would turn a.mtx into CSV). */
static int check_outputs(const nzb_options_t *opt, int other_mode) {
    static char table_path[4096];
    if (nz_cli_check_not_matrix_path(CMD, "--csv", opt->csv_path, "CSV") != NZ_EXIT_OK ||
        nz_cli_check_not_matrix_path(CMD, "--png", opt->png_path, "a PNG chart") != NZ_EXIT_OK)
        return NZ_EXIT_USAGE;
    if (opt->csv_path != NULL && !other_mode)
        nzb_table_path(table_path, sizeof table_path, opt->csv_path, opt->markdown);
    const nz_cli_file_t outputs[] = {
        {"--csv", opt->csv_path},
        {"--csv (its table copy)", opt->csv_path != NULL && !other_mode ? table_path : NULL},
        {"--png", opt->png_path}};
    nz_cli_file_t *inputs = calloc((size_t)opt->num_files + 1, sizeof *inputs);
    if (inputs == NULL) {
        nz_cli_error(CMD, "out of memory");
        return NZ_EXIT_FAIL;
    }
    for (int k = 0; k < opt->num_files; k++) inputs[k].path = opt->files[k];
    int rc = nz_cli_check_files(CMD, outputs, 3, inputs, opt->num_files);
    free(inputs);
    return rc;
}

/* --alg once the mode is known: a GPU SpGEMM algorithm for --spgemm, else SpMV filters. */
static int parse_alg(bench_cli_t *b) {
    if (b->alg == NULL) return NZ_EXIT_OK;
    if (!b->mode_spgemm) {
        snprintf(b->filter_buffer, sizeof b->filter_buffer, "%s", b->alg);
        return parse_filters(&b->opt, b->filter_buffer);
    }
    if (nz_spgemm_alg_from_name(&b->spgemm_alg, b->alg) != NZ_SUCCESS ||
        b->spgemm_alg == NZ_SPGEMM_CPU || b->spgemm_alg == NZ_SPGEMM_AUTO) {
        nz_cli_error(CMD, "option --alg: '%s' is not a GPU SpGEMM algorithm (hash, esc, hyspmm)",
                     b->alg);
        return NZ_EXIT_USAGE;
    }
    return NZ_EXIT_OK;
}

/* The command line into *b (opt.files allocated for it: the caller frees it), with every
 * check: NZ_EXIT_OK, NZ_CLI_HELP, or the exit status after one line. */
static int bench_parse(int argc, char **argv, bench_cli_t *b, nz_tunables_t *tunables) {
    memset(b, 0, sizeof *b);
    nz_cli_tunables_from_environment(tunables);
    b->opt.tunables = tunables;
    b->opt.backend = -1;
    b->opt.real = 1;
    b->precisions = 3;
    b->spgemm_alg = NZ_SPGEMM_HASH;
    b->opt.files = calloc((size_t)(argc > 0 ? argc : 1), sizeof *b->opt.files);
    if (b->opt.files == NULL) {
        nz_cli_error(CMD, "out of memory");
        return NZ_EXIT_FAIL;
    }
    const nz_cli_table_t table = {bench_options, NZ_CLI_COUNT(bench_options), b, "options:\n"};
    int rc = nz_cli_parse(&bench_command, &table, 1, argc, argv);
    if (rc != NZ_EXIT_OK) return rc;
    b->opt.single = (b->precisions & 1) != 0;
    b->opt.dbl = (b->precisions & 2) != 0;
    if (b->opt.only_large && !b->opt.real) {
        nz_cli_error(CMD, "--only-large and --no-real leave nothing to run");
        return NZ_EXIT_USAGE;
    }
    const int other_mode =
        b->mode_cg || b->mode_spgemm || b->mode_spmm || b->mode_solve || b->mode_amg;
    if ((rc = check_outputs(&b->opt, other_mode)) != NZ_EXIT_OK) return rc;
    return parse_alg(b);
}

/* --solve-sizes / --amg-sizes (option): 1..NZB_SOLVE_MAX_SIZES grid sides, each in [4, 1000]. */
static int parse_sizes(const char *option, const char *list, int64_t *sizes, int *count) {
    char buffer[256];
    *count = 0;
    if (list == NULL) return NZ_EXIT_OK;
    if (snprintf(buffer, sizeof buffer, "%s", list) >= (int)sizeof buffer) {
        nz_cli_error(CMD, "option %s: the list is too long", option);
        return NZ_EXIT_USAGE;
    }
    for (char *tok = strtok(buffer, ","); tok != NULL; tok = strtok(NULL, ",")) {
        char *end;
        long long v = strtoll(tok, &end, 10);
        if (end == tok || *end != '\0' || v < 4 || v > 1000) {
            nz_cli_error(CMD, "option %s: '%s' is not a grid side in [4, 1000]", option, tok);
            return NZ_EXIT_USAGE;
        }
        if (*count == NZB_SOLVE_MAX_SIZES) {
            nz_cli_error(CMD, "option %s: more than %d sizes", option, NZB_SOLVE_MAX_SIZES);
            return NZ_EXIT_USAGE;
        }
        sizes[(*count)++] = v;
    }
    if (*count == 0) {
        nz_cli_error(CMD, "option %s: no size given", option);
        return NZ_EXIT_USAGE;
    }
    return NZ_EXIT_OK;
}

/* --solve: SpSV and the Krylov solvers on the GPU. */
static int bench_solve(const bench_cli_t *b) {
#ifdef NZ_HAVE_CUDA
    nzb_solve_options_t so;
    memset(&so, 0, sizeof so);
    int rc = parse_sizes("--solve-sizes", b->solve_sizes, so.sizes, &so.num_sizes);
    if (rc != NZ_EXIT_OK) return rc;
    so.single = b->opt.single;
    so.dbl = b->opt.dbl;
    so.runs = b->opt.runs;
    so.quick = b->opt.size == NZB_SIZE_QUICK;
    so.csv_path = b->opt.csv_path;
    so.tunables = b->opt.tunables;
    return nzb_bench_solve(&so);
#else
    int64_t sizes[NZB_SOLVE_MAX_SIZES];
    int count;
    int rc = parse_sizes("--solve-sizes", b->solve_sizes, sizes, &count);
    if (rc != NZ_EXIT_OK) return rc;
    nz_cli_error(CMD, "--solve needs the CUDA backend (this build has none)");
    return NZ_EXIT_REFUSED;
#endif
}

/* --amg: AMG-PCG against Jacobi-PCG on the CPU or the GPU. */
static int bench_amg(const bench_cli_t *b) {
    nzb_amg_options_t ao;
    memset(&ao, 0, sizeof ao);
    int rc = parse_sizes("--amg-sizes", b->amg_sizes, ao.sizes, &ao.num_sizes);
    if (rc != NZ_EXIT_OK) return rc;
    if (ao.num_sizes > NZB_AMG_MAX_SIZES) ao.num_sizes = NZB_AMG_MAX_SIZES;
    ao.cuda = b->opt.backend == NZ_BACKEND_CUDA || (b->opt.backend < 0 && nz_device_count() > 0);
    if (ao.cuda && nz_device_count() == 0) {
        nz_cli_error(CMD, "--amg --backend cuda: no CUDA device");
        return NZ_EXIT_REFUSED;
    }
    ao.quick = b->opt.size == NZB_SIZE_QUICK;
    ao.real = b->opt.real;
    ao.runs = b->opt.runs;
    ao.threads = b->opt.threads;
    ao.csv_path = b->opt.csv_path;
    return nzb_bench_amg(&ao);
}

/* --cg: the CG benchmark, which shares --backend, --precision, --threads and --csv. */
static int bench_cg(const nzb_options_t *opt) {
    nzb_cg_options_t cg;
    memset(&cg, 0, sizeof cg);
    cg.backend = opt->backend < 0 ? 0 : 1 + opt->backend;
    cg.single = opt->single && !opt->dbl;
    cg.threads = opt->threads;
    cg.use_graph = 1;
    cg.csv_path = opt->csv_path;
    cg.tunables = opt->tunables;
    return nzb_bench_cg(&cg);
}

/* --spmm: transpose SpMV and SpMM on the GPU. */
static int bench_spmm(const nzb_options_t *opt) {
#ifdef NZ_HAVE_CUDA
    nzb_extra_options_t eo;
    memset(&eo, 0, sizeof eo);
    eo.single = opt->single && !opt->dbl;
    eo.files = opt->files;
    eo.num_files = opt->num_files;
    eo.csv_path = opt->csv_path;
    eo.tunables = opt->tunables;
    return nzb_bench_transpose_spmm(stdout, &eo);
#else
    (void)opt;
    nz_cli_error(CMD, "--spmm needs the CUDA backend (this build has none)");
    return NZ_EXIT_REFUSED;
#endif
}

/* --spgemm: C = A A on the GPU against cuSPARSE. */
static int bench_spgemm(const nzb_options_t *opt, nz_spgemm_alg_t alg) {
#ifdef NZ_HAVE_CUDA
    nzb_spgemm_options_t so;
    memset(&so, 0, sizeof so);
    so.single = opt->single && !opt->dbl;
    so.quick = opt->size == NZB_SIZE_QUICK;
    so.real = opt->real;
    so.runs = opt->runs;
    so.files = opt->files;
    so.num_files = opt->num_files;
    so.csv_path = opt->csv_path;
    so.alg = alg;
    return nzb_bench_spgemm(&so);
#else
    (void)opt;
    (void)alg;
    nz_cli_error(CMD, "--spgemm needs the CUDA backend (this build has none)");
    return NZ_EXIT_REFUSED;
#endif
}

int nz_cmd_bench(int argc, char **argv) {
    bench_cli_t b;
    nz_tunables_t tunables;
    int status = bench_parse(argc, argv, &b, &tunables);
    if (status == NZ_CLI_HELP)
        status = NZ_EXIT_OK;
    else if (status == NZ_EXIT_OK && b.mode_cg)
        status = bench_cg(&b.opt);
    else if (status == NZ_EXIT_OK && b.mode_solve)
        status = bench_solve(&b);
    else if (status == NZ_EXIT_OK && b.mode_amg)
        status = bench_amg(&b);
    else if (status == NZ_EXIT_OK && b.mode_spmm)
        status = bench_spmm(&b.opt);
    else if (status == NZ_EXIT_OK && b.mode_spgemm)
        status = bench_spgemm(&b.opt, b.spgemm_alg);
    else if (status == NZ_EXIT_OK)
        status = nzb_run(&b.opt);
    free(b.opt.files);
    return status;
}
