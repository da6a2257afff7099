/* cmd_bench.c: `nz bench`: parse the options and run the SpMV benchmark in bench/. */
#include "bench.h"
#include "bench_cg.h"
#ifdef NZ_HAVE_CUDA
#include "bench_extra.h"
#include "bench_spgemm.h"
#endif
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "bench"

static void usage(FILE *f) {
    fprintf(f,
            "usage: nz bench [options] [A.mtx ...]\n"
            "SpMV benchmark: generated matrices (plus NZ_MATRIX_DIR and the files given), then\n"
            "the large real matrices in a table of their own; every kernel verified against a\n"
            "double-precision reference, on the GPU (against cuSPARSE) when one is present,\n"
            "else on the CPU. Every row gives its plan's setup (plan_ms; plan_spmv: in SpMVs of\n"
            "its own kernel); csr/auto is the planner's default plan, its note what it chose.\n"
            "  --backend cpu|gpu      force a backend (gpu falls back to cpu without a device)\n"
            "  --size small|full      matrix sizes (default: full on the GPU, small on the CPU)\n"
            "  --quick                tiny matrices, a smoke run (no large ones unless --large)\n"
            "  --no-real              skip the matrices in NZ_MATRIX_DIR and the large ones\n"
            "  --large DIR            the large real matrices (*.mtx, *.mtx.gz; default:\n"
            "                         $NZ_LARGE_MATRIX_DIR, else ../shared/matrices-large from\n"
            "                         the current directory, then from the source tree)\n"
            "  --only-large           only the large real matrices (and files given): no\n"
            "                         generated suite, no NZ_MATRIX_DIR\n"
            "  --precision single|double|both   (default both)\n"
            "  --runs N               timed runs per kernel (default 50 GPU, 10 CPU, 5 --quick)\n"
            "  --offsets 32|64        GPU row offset width (default 32)\n"
            "  --threads N            CPU threads (default: OpenMP default)\n"
            "  --alg LIST             comma list of algorithms, formats or format/alg pairs\n"
            "                         (e.g. merge,vector or sell/simd); cuSPARSE always runs\n"
            "  --csv FILE             CSV output (default bench-out/bench-<backend>.csv; the\n"
            "                         table is also written next to it as .txt, or .md)\n"
            "  --png FILE             draw a chart with bench/plot.py (python3 + matplotlib)\n"
            "  --markdown             print the table as Markdown\n"
            "  --cg                   instead: the CG benchmark on the Q1 FE problem (per N,\n"
            "                         backend and format; bandwidth floor, transfer vs SpMV)\n"
            "  --spgemm               instead: C = A*A on the GPU suite vs cuSPARSE SpGEMM\n"
            "                         ALG1/2/3 (with --quick, --no-real, --precision, --runs;\n"
            "                         --alg hash|esc|hyspmm picks ours, default hash)\n"
            "  --spmm                 instead: transpose SpMV and many right-hand sides (SpMM)\n"
            "                         on the GPU vs cuSPARSE (with --precision, --csv, files)\n"
            "exit status: 0 all kernels verified, 1 a wrong result or an error, 2 bad command line\n");
}

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

int nz_cmd_bench(int argc, char **argv) {
    static char filter_buffer[4096];
    nzb_options_t opt;
    nz_tunables_t tunables;
    memset(&opt, 0, sizeof opt);
    nz_cli_tunables_from_environment(&tunables);
    opt.tunables = &tunables;
    opt.backend = -1;
    opt.real = 1;
    opt.single = opt.dbl = 1;
    opt.files = calloc((size_t)(argc > 0 ? argc : 1), sizeof *opt.files);
    if (opt.files == NULL) {
        nz_cli_error(CMD, "out of memory");
        return NZ_EXIT_FAIL;
    }
    int status = NZ_EXIT_OK;
    int mode_cg = 0, mode_spgemm = 0, mode_spmm = 0;
    const char *alg_arg = NULL;
    nz_spgemm_alg_t spgemm_alg = NZ_SPGEMM_HASH;
    /* argv[0] is the subcommand's name. */
    for (int i = 1; i < argc && status == NZ_EXIT_OK; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (nz_cli_is_help(a)) {
            usage(stdout);
            free(opt.files);
            return NZ_EXIT_OK;
        } else if (strcmp(a, "--quick") == 0) {
            opt.size = NZB_SIZE_QUICK;
        } else if (strcmp(a, "--no-real") == 0) {
            opt.real = 0;
        } else if (strcmp(a, "--only-large") == 0) {
            opt.only_large = 1;
        } else if (strcmp(a, "--markdown") == 0) {
            opt.markdown = 1;
        } else if (strcmp(a, "--cg") == 0) {
            mode_cg = 1;
        } else if (strcmp(a, "--spgemm") == 0) {
            mode_spgemm = 1;
        } else if (strcmp(a, "--spmm") == 0) {
            mode_spmm = 1;
        } else if (a[0] != '-' || a[1] == '\0') {
            opt.files[opt.num_files++] = argv[i];
        } else if (strcmp(a, "--backend") != 0 && strcmp(a, "--size") != 0 &&
                   strcmp(a, "--precision") != 0 && strcmp(a, "--runs") != 0 &&
                   strcmp(a, "--offsets") != 0 && strcmp(a, "--threads") != 0 &&
                   strcmp(a, "--alg") != 0 && strcmp(a, "--csv") != 0 &&
                   strcmp(a, "--png") != 0 && strcmp(a, "--large") != 0) {
            status = nz_cli_unknown_option(CMD, a);
        } else if ((v = nz_cli_value(CMD, argc, argv, &i)) == NULL) {
            status = NZ_EXIT_USAGE;
        } else if (strcmp(a, "--backend") == 0) {
            if (strcmp(v, "cpu") == 0)
                opt.backend = NZ_BACKEND_CPU;
            else if (strcmp(v, "gpu") == 0 || strcmp(v, "cuda") == 0)
                opt.backend = NZ_BACKEND_CUDA;
            else {
                nz_cli_error(CMD, "option --backend: '%s' is not cpu or gpu", v);
                status = NZ_EXIT_USAGE;
            }
        } else if (strcmp(a, "--size") == 0) {
            if (strcmp(v, "small") == 0)
                opt.size = NZB_SIZE_SMALL;
            else if (strcmp(v, "full") == 0)
                opt.size = NZB_SIZE_FULL;
            else if (strcmp(v, "quick") == 0)
                opt.size = NZB_SIZE_QUICK;
            else {
                nz_cli_error(CMD, "option --size: '%s' is not small, full or quick", v);
                status = NZ_EXIT_USAGE;
            }
        } else if (strcmp(a, "--precision") == 0) {
            opt.single = strcmp(v, "single") == 0 || strcmp(v, "both") == 0;
            opt.dbl = strcmp(v, "double") == 0 || strcmp(v, "both") == 0;
            if (!opt.single && !opt.dbl) {
                nz_cli_error(CMD, "option --precision: '%s' is not single, double or both", v);
                status = NZ_EXIT_USAGE;
            }
        } else if (strcmp(a, "--runs") == 0) {
            if (nz_cli_int(CMD, a, v, 1, 100000, &opt.runs) != 0) status = NZ_EXIT_USAGE;
        } else if (strcmp(a, "--threads") == 0) {
            if (nz_cli_threads(CMD, a, v, 1, &opt.threads) != 0) status = NZ_EXIT_USAGE;
        } else if (strcmp(a, "--offsets") == 0) {
            if (strcmp(v, "32") == 0 || strcmp(v, "64") == 0)
                opt.offset_bits = atoi(v);
            else {
                nz_cli_error(CMD, "option --offsets: '%s' is not 32 or 64", v);
                status = NZ_EXIT_USAGE;
            }
        } else if (strcmp(a, "--csv") == 0) {
            opt.csv_path = v;
        } else if (strcmp(a, "--png") == 0) {
            opt.png_path = v;
        } else if (strcmp(a, "--large") == 0) {
            opt.large_dir = v;
        } else { /* --alg: read after the loop, once the mode is known */
            alg_arg = v; /* the last --alg wins */
        }
    }
    if (status == NZ_EXIT_OK && opt.only_large && !opt.real) {
        nz_cli_error(CMD, "--only-large and --no-real leave nothing to run");
        status = NZ_EXIT_USAGE;
    }
    if (status == NZ_EXIT_OK) status = check_outputs(&opt, mode_cg || mode_spgemm || mode_spmm);
    if (status == NZ_EXIT_OK && alg_arg != NULL && mode_spgemm) {
        if (nz_spgemm_alg_from_name(&spgemm_alg, alg_arg) != NZ_SUCCESS ||
            spgemm_alg == NZ_SPGEMM_CPU || spgemm_alg == NZ_SPGEMM_AUTO) {
            nz_cli_error(CMD, "option --alg: '%s' is not a GPU SpGEMM algorithm (hash, esc, hyspmm)",
                         alg_arg);
            status = NZ_EXIT_USAGE;
        }
    } else if (status == NZ_EXIT_OK && alg_arg != NULL) {
        snprintf(filter_buffer, sizeof filter_buffer, "%s", alg_arg);
        status = parse_filters(&opt, filter_buffer);
    }
    if (status == NZ_EXIT_OK && mode_cg) {
        /* The CG benchmark shares --backend, --precision, --threads and --csv. */
        nzb_cg_options_t cg;
        memset(&cg, 0, sizeof cg);
        cg.backend = opt.backend < 0 ? 0 : 1 + opt.backend;
        cg.single = opt.single && !opt.dbl;
        cg.threads = opt.threads;
        cg.use_graph = 1;
        cg.csv_path = opt.csv_path;
        cg.tunables = opt.tunables;
        status = nzb_bench_cg(&cg);
    } else if (status == NZ_EXIT_OK && mode_spmm) {
#ifdef NZ_HAVE_CUDA
        nzb_extra_options_t eo;
        memset(&eo, 0, sizeof eo);
        eo.single = opt.single && !opt.dbl;
        eo.files = opt.files;
        eo.num_files = opt.num_files;
        eo.csv_path = opt.csv_path;
        eo.tunables = opt.tunables;
        status = nzb_bench_transpose_spmm(stdout, &eo);
#else
        nz_cli_error(CMD, "--spmm needs the CUDA backend (this build has none)");
        status = NZ_EXIT_REFUSED;
#endif
    } else if (status == NZ_EXIT_OK && mode_spgemm) {
#ifdef NZ_HAVE_CUDA
        nzb_spgemm_options_t so;
        memset(&so, 0, sizeof so);
        so.single = opt.single && !opt.dbl;
        so.quick = opt.size == NZB_SIZE_QUICK;
        so.real = opt.real;
        so.runs = opt.runs;
        so.files = opt.files;
        so.num_files = opt.num_files;
        so.csv_path = opt.csv_path;
        so.alg = spgemm_alg;
        status = nzb_bench_spgemm(&so);
#else
        nz_cli_error(CMD, "--spgemm needs the CUDA backend (this build has none)");
        status = NZ_EXIT_REFUSED;
#endif
    } else if (status == NZ_EXIT_OK) {
        status = nzb_run(&opt);
    }
    free(opt.files);
    return status;
}
