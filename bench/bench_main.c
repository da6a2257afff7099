/* bench_main.c: nz bench's driver: the bandwidth reference, per-case setup, the run, the chart. */
#include "bench.h"
#include "bench_suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif


/* splitmix64: a fixed, portable x vector (values in [-1, 1)) per column index. */
static double x_value(uint64_t j) {
    uint64_t z = j + 0x9e3779b97f4a7c15ull * (NZB_SEED + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

typedef struct case_arrays {
    void *x;
    double *y_ref, *bound;
    int64_t *row_length;
} case_arrays_t;

static void free_case_arrays(case_arrays_t *a) {
    free(a->x);
    free(a->y_ref);
    free(a->bound);
    free(a->row_length);
    memset(a, 0, sizeof *a);
}

/* x, and y_ref = A x accumulated in double from A's (possibly single) values and x's rounded
 * values, with the per-row magnitude sum |a_ij x_j| that scales the verification tolerance. */
static int prepare_case(nz_context_t *ctx, nzb_case_t *c, case_arrays_t *a, const nz_matrix_t *A,
                        int threads) {
    const int64_t *row_offsets;
    const int32_t *col_indices;
    const void *values;
    nz_matrix_info_t info;
    if (nz_matrix_info(ctx, &info, A) != NZ_SUCCESS ||
        nz_matrix_csr_arrays(ctx, &row_offsets, &col_indices, &values, A) != NZ_SUCCESS)
        return -1;
    nz_value_type_t vt = info.value_type;
    size_t vs = vt == NZ_F32 ? 4 : 8;
    int64_t rows = info.rows, cols = info.cols;
    a->x = malloc((size_t)(cols > 0 ? cols : 1) * vs);
    a->y_ref = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(double));
    a->bound = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(double));
    a->row_length = malloc((size_t)(rows > 0 ? rows : 1) * sizeof(int64_t));
    if (a->x == NULL || a->y_ref == NULL || a->bound == NULL || a->row_length == NULL) {
        free_case_arrays(a);
        return -1;
    }
    for (int64_t j = 0; j < cols; j++) {
        if (vt == NZ_F32)
            ((float *)a->x)[j] = (float)x_value((uint64_t)j);
        else
            ((double *)a->x)[j] = x_value((uint64_t)j);
    }
    int nt = threads;
#ifdef _OPENMP
    if (nt <= 0) nt = omp_get_max_threads();
#endif
    (void)nt;
    const void *x = a->x;
    double *y_ref = a->y_ref, *bound = a->bound;
    int64_t *row_length = a->row_length;
    NZB_OMP_FOR(nt)
    for (int64_t i = 0; i < rows; i++) {
        double sum = 0, mag = 0;
        for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++) {
            double v = vt == NZ_F32 ? (double)((const float *)values)[k] : ((const double *)values)[k];
            int32_t j = col_indices[k];
            double xj = vt == NZ_F32 ? (double)((const float *)x)[j] : ((const double *)x)[j];
            sum += v * xj;
            mag += v * xj < 0 ? -(v * xj) : v * xj;
        }
        y_ref[i] = sum;
        bound[i] = mag;
        row_length[i] = row_offsets[i + 1] - row_offsets[i];
    }
    c->ctx = ctx;
    c->A = A;
    c->value_type = vt;
    c->x = a->x;
    c->y_ref = a->y_ref;
    c->bound = a->bound;
    c->row_length = a->row_length;
    return 0;
}

static void cpu_description(char *buf, size_t size, int threads) {
    char model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        char line[512];
        while (fgets(line, sizeof line, f) != NULL) {
            if (strncmp(line, "model name", 10) != 0) continue;
            const char *colon = strchr(line, ':');
            if (colon == NULL) continue;
            snprintf(model, sizeof model, "%s", colon + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
        fclose(f);
    }
    size_t llc = nzb_cpu_llc_bytes();
    snprintf(buf, size, "%s, %d threads, last-level cache %.0f MiB", model, threads,
             (double)llc / (1024.0 * 1024.0));
}

/* The chart is drawn by bench/plot.py (found at $NZ_BENCH_PLOT, in the current directory's
 * bench/, in bench/ beside the executable's directory (a build tree), or in share/nonzero/
 * beside it (an install: cmake/install.cmake puts it there)) run by $NZ_BENCH_PYTHON (default
 * python3), which needs matplotlib. chart_prepare finds both before the benchmark runs, so a
 * chart that cannot be drawn is an error at once rather than after the run; on failure it
 * returns -1 with the reason in why. */
typedef struct chart {
    char python[1024];
    char script[4096];
} chart_t;

static int chart_prepare(chart_t *chart, const char *csv_path, const char *png_path, char *why,
                         size_t why_size) {
    const char *python = getenv("NZ_BENCH_PYTHON");
    if (python == NULL || python[0] == '\0') python = "python3";
    snprintf(chart->python, sizeof chart->python, "%s", python);
    chart->script[0] = '\0';
    const char *env = getenv("NZ_BENCH_PLOT");
    if (env != NULL && env[0] != '\0') {
        if (access(env, R_OK) != 0) {
            snprintf(why, why_size, "NZ_BENCH_PLOT=%s is not readable", env);
            return -1;
        }
        snprintf(chart->script, sizeof chart->script, "%s", env);
    } else if (access("bench/plot.py", R_OK) == 0) {
        snprintf(chart->script, sizeof chart->script, "bench/plot.py");
    } else {
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = '\0';
            char *slash = strrchr(exe, '/');
            if (slash != NULL) {
                *slash = '\0';
                snprintf(chart->script, sizeof chart->script, "%.4000s/../bench/plot.py", exe);
                if (access(chart->script, R_OK) != 0)
                    snprintf(chart->script, sizeof chart->script,
                             "%.4000s/../share/nonzero/plot.py", exe);
                if (access(chart->script, R_OK) != 0) chart->script[0] = '\0';
            }
        }
    }
    if (chart->script[0] == '\0') {
        snprintf(why, why_size, "plot.py not found (bench/ here, or share/nonzero/ of the "
                                "install; or set NZ_BENCH_PLOT)");
        return -1;
    }
    if (strchr(chart->python, '\'') || strchr(chart->script, '\'') || strchr(csv_path, '\'') ||
        strchr(png_path, '\'')) {
        snprintf(why, why_size, "a path contains a quote");
        return -1;
    }
    char command[2048];
    snprintf(command, sizeof command, "'%s' -c 'import matplotlib' >/dev/null 2>&1",
             chart->python);
    if (system(command) != 0) {
        snprintf(why, why_size, "%s cannot import matplotlib (install it, or set NZ_BENCH_PYTHON "
                                "to a python that has it)", chart->python);
        return -1;
    }
    return 0;
}

/* Draw the chart; 0 on success, else -1 with the reason in why. */
static int chart_draw(const chart_t *chart, const char *csv_path, const char *png_path, char *why,
                      size_t why_size) {
    char command[12800];
    snprintf(command, sizeof command, "'%s' '%s' '%s' '%s'", chart->python, chart->script,
             csv_path, png_path);
    if (system(command) != 0) {
        snprintf(why, why_size, "%s failed", chart->script);
        return -1;
    }
    return 0;
}

/* One benchmark run between its phases. */
typedef struct bench_run {
    nzb_options_t opt;          /* the caller's, defaults filled in for the backend */
    nz_context_t *ctx;
    nzb_report_t *rep;
#ifdef NZ_HAVE_CUDA
    nzb_gpu_t *gpu;
#endif
    int use_gpu;
    const char *backend;        /* "gpu" or "cpu" */
    int threads;
    char device[512];
    char fallback_note[512];
    nzb_suite_t suite;
    char txt_path[4096], csv_path[4096];
    double copy_gbs, triad_gbs; /* the bandwidth reference */
    size_t bandwidth_bytes, cache_bytes;
    char date[64];
    int failures;
} bench_run_t;

/* The backend: the GPU when asked for or by default when present; fail soft to the CPU. Then
 * the defaults that depend on it (size, runs, offsets) and the thread count. */
static void bench_backend(bench_run_t *r) {
    nzb_options_t *opt = &r->opt;
    if (opt->backend != NZ_BACKEND_CPU) {
        if (nz_device_count() > 0) {
#ifdef NZ_HAVE_CUDA
            char msg[256];
            if (nzb_gpu_open(&r->gpu, r->ctx, msg, sizeof msg) == 0)
                r->use_gpu = 1;
            else
                snprintf(r->fallback_note, sizeof r->fallback_note,
                         "GPU unavailable (%s): running the CPU benchmark", msg);
#endif
        } else {
            snprintf(r->fallback_note, sizeof r->fallback_note,
                     "no CUDA device%s: running the CPU benchmark",
#ifdef NZ_HAVE_CUDA
                     ""
#else
                     " (built without CUDA)"
#endif
            );
        }
    }
    r->backend = r->use_gpu ? "gpu" : "cpu";
    if (opt->size == NZB_SIZE_DEFAULT) opt->size = r->use_gpu ? NZB_SIZE_FULL : NZB_SIZE_SMALL;
    if (opt->runs <= 0) opt->runs = opt->size == NZB_SIZE_QUICK ? 5 : r->use_gpu ? 50 : 10;
    if (opt->offset_bits == 0) opt->offset_bits = 32;
    r->threads = opt->threads;
#ifdef _OPENMP
    if (r->threads <= 0) r->threads = omp_get_max_threads();
#else
    r->threads = 1;
#endif
}


/* The outputs: the CSV and, next to it, the text copy of the table; the chart's tools found
 * before the run. Returns an exit status. */
static int bench_outputs(bench_run_t *r, chart_t *chart, char *chart_why, size_t why_size) {
    const nzb_options_t *opt = &r->opt;
    if (opt->csv_path != NULL)
        snprintf(r->csv_path, sizeof r->csv_path, "%s", opt->csv_path);
    else
        snprintf(r->csv_path, sizeof r->csv_path, "bench-out/bench-%s.csv", r->backend);
    nzb_table_path(r->txt_path, sizeof r->txt_path, r->csv_path, opt->markdown);
    if (opt->png_path != NULL &&
        chart_prepare(chart, r->csv_path, opt->png_path, chart_why, why_size) != 0) {
        fprintf(stderr, "nz bench: --png %s: chart cannot be drawn: %s\n", opt->png_path,
                chart_why);
        return 1;
    }
    r->rep = nzb_report_open(r->txt_path, r->csv_path, opt->markdown, r->use_gpu);
    return r->rep == NULL ? 2 : 0;
}

/* The bandwidth reference, measured in this run, and the device's description. */
static void bench_bandwidth(bench_run_t *r) {
    int quick = r->opt.size == NZB_SIZE_QUICK;
    (void)quick;
#ifdef NZ_HAVE_CUDA
    if (r->use_gpu) {
        r->copy_gbs = nzb_gpu_copy_bandwidth(r->gpu, quick ? 5 : 20, &r->bandwidth_bytes);
        r->cache_bytes = nzb_gpu_l2_bytes(r->gpu);
        snprintf(r->device, sizeof r->device, "%s", nzb_gpu_description(r->gpu));
    }
#endif
    if (!r->use_gpu) {
        /* --quick is a smoke run: small arrays (indicative only, the header says their size). */
        nzb_cpu_stream_limited(r->opt.threads, quick ? 3 : 10, quick ? (size_t)32 << 20 : 0,
                               &r->copy_gbs, &r->triad_gbs, &r->bandwidth_bytes);
        r->cache_bytes = nzb_cpu_llc_bytes();
        cpu_description(r->device, sizeof r->device, r->threads);
    }
}

/* The report's header: date, device, bandwidth, what the columns mean, the large table. */
static void bench_header(bench_run_t *r) {
    nzb_report_t *rep = r->rep;
    const nzb_options_t *opt = &r->opt;
    const int use_gpu = r->use_gpu;
    time_t now = time(NULL);
    strftime(r->date, sizeof r->date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    const char *h = opt->markdown ? "- " : "# ";
    nzb_printf(rep, "%snz bench (%s), %s\n", opt->markdown ? "### " : "# ", r->backend, r->date);
    if (opt->markdown) nzb_printf(rep, "\n");
    nzb_printf(rep, "%sdevice: %s\n", h, r->device);
    if (use_gpu)
        nzb_printf(rep, "%scopy bandwidth: %.1f GB/s (device-to-device cudaMemcpy of %.0f MiB, "
                        "read + write, median)\n",
                   h, r->copy_gbs, (double)r->bandwidth_bytes / 1048576.0);
    else
        nzb_printf(rep, "%sSTREAM bandwidth: copy %.1f GB/s, triad %.1f GB/s (%.0f MiB arrays, "
                        "read + write, median)%s\n",
                   h, r->copy_gbs, r->triad_gbs, (double)r->bandwidth_bytes / 1048576.0,
                   r->bandwidth_bytes < r->cache_bytes
                       ? "; arrays smaller than the cache (--quick): indicative only"
                       : "");
    nzb_printf(rep, "%sruns: %d per kernel (median; y = A x, beta = 0)%s; offsets: %s\n", h,
               opt->runs,
               use_gpu ? ", CUDA events on one stream" : ", monotonic clock",
               use_gpu ? (opt->offset_bits == 64 ? "64-bit" : "32-bit") : "64-bit (host CSR)");
    nzb_printf(rep, "%sGB/s: minimal CSR bytes ((rows+1) x offset + nnz x (4 + value) + cols x "
                    "value + rows x value) / time; %%copy: of the copy bandwidth above%s\n",
               h, use_gpu ? "" : "; GB/s_st: the format's stored bytes (nz_matrix_info) + x + y");
    nzb_printf(rep, "%scache: %s = minimal footprint fits the %.0f MiB %s (bandwidth %% not "
                    "meaningful); max_err: max |y - ref| / sum |a x| vs the double reference\n",
               h, use_gpu ? "L2-res" : "LLC-res", (double)r->cache_bytes / 1048576.0,
               use_gpu ? "L2" : "last-level cache");
    if (use_gpu)
        nzb_printf(rep, "%svs_cusp: best cuSPARSE time (CSR ALG1/ALG2) / this time; plan_ms of "
                        "cuSPARSE rows: bufferSize + buffer allocation + SpMV_preprocess\n",
                   h);
    nzb_printf(rep, "%slarge real matrices: %s (pattern entries read as 1, as NZ_MATRIX_DIR's)\n",
               h, r->suite.large_line);
    nzb_printf(rep, "\n");
    if (r->fallback_note[0]) nzb_report_note(rep, "%s", r->fallback_note);
    if (r->suite.large_error[0]) {
        nzb_report_note(rep, "%s", r->suite.large_error);
        r->failures++;
    }
    if (r->suite.num_small > 0) nzb_report_header(rep, r->suite.name_width);
}

/* One matrix of the suite in each precision asked for: its reference and advice, then the
 * backend's kernels. */
static void bench_matrix(bench_run_t *r, const suite_entry_t *e, const nz_matrix_t *A64) {
    nz_context_t *ctx = r->ctx;
    const nzb_options_t *opt = &r->opt;
    for (int p = 0; p < 2; p++) {
        nz_matrix_t *A32 = NULL;
        nz_value_type_t vt = p == 0 ? NZ_F32 : NZ_F64;
        if ((vt == NZ_F32 && !opt->single) || (vt == NZ_F64 && !opt->dbl)) continue;
        const nz_matrix_t *A = A64;
        if (vt == NZ_F32) {
            if (nz_matrix_convert_values(ctx, &A32, A64, NZ_F32) != NZ_SUCCESS) {
                nzb_report_note(r->rep, "%s: cannot convert to single: %s", e->name,
                                nz_context_last_error(ctx));
                r->failures++;
                continue;
            }
            A = A32;
        }
        nzb_case_t c;
        case_arrays_t arrays;
        memset(&c, 0, sizeof c);
        memset(&arrays, 0, sizeof arrays);
        c.name = e->name;
        c.generated = e->kind != FROM_FILE;
        c.large = e->large;
        if (prepare_case(ctx, &c, &arrays, A, opt->threads) != 0) {
            nzb_report_note(r->rep, "%s: out of host memory for the reference", e->name);
            r->failures++;
        } else {
            nzb_case_advice(ctx, &c, r->use_gpu ? NZ_BACKEND_CUDA : NZ_BACKEND_CPU);
#ifdef NZ_HAVE_CUDA
            if (r->use_gpu) nzb_gpu_case(r->gpu, r->rep, opt, &c, opt->runs, r->copy_gbs);
#endif
            if (!r->use_gpu)
                nzb_cpu_case(ctx, r->rep, opt, &c, opt->runs, r->copy_gbs, r->cache_bytes);
        }
        free_case_arrays(&arrays);
        nz_matrix_destroy(&A32);
    }
}

/* Every entry of the suite: loaded (or generated), skipped when empty, then benchmarked; the
 * large matrices' table opened before the first of them. */
static void bench_entries(bench_run_t *r) {
    nz_context_t *ctx = r->ctx;
    const nzb_suite_t *suite = &r->suite;
    int interactive = isatty(2);
    for (int i = 0; i < suite->num_entries; i++) {
        const suite_entry_t *e = &suite->entries[i];
        nz_matrix_t *A64 = NULL;
        double t0 = nzb_wtime();
        if (i == suite->num_small) { /* the first large matrix: their table's title and header */
            nzb_printf(r->rep, "%s%sLarge real matrices (%s), the same columns:\n\n",
                       suite->num_small > 0 ? "\n" : "", r->opt.markdown ? "#### " : "",
                       suite->large_dir);
            nzb_report_header(r->rep, suite->name_width);
        }
        if (interactive) fprintf(stderr, "[%d/%d] %s ...\r", i + 1, suite->num_entries, e->name);
        nz_status_t s = nzb_suite_load(ctx, &A64, e);
        if (s != NZ_SUCCESS) {
            nzb_report_note(r->rep, "%s: cannot %s: %s: %s", e->name,
                            e->kind == FROM_FILE ? "read" : "generate", nz_status_string(s),
                            nz_context_last_error(ctx));
            r->failures++;
            continue;
        }
        nz_matrix_info_t info;
        nz_matrix_info(ctx, &info, A64);
        if (info.nnz == 0 || info.rows == 0 || info.cols == 0) {
            nzb_report_note(r->rep, "%s: skipped (%lld x %lld, no nonzeros)", e->name,
                            (long long)info.rows, (long long)info.cols);
            nz_matrix_destroy(&A64);
            continue;
        }
        if (e->kind != FROM_FILE && interactive)
            fprintf(stderr, "[%d/%d] %s generated in %.1f s\n", i + 1, suite->num_entries, e->name,
                    nzb_wtime() - t0);
        bench_matrix(r, e, A64);
        nz_matrix_destroy(&A64);
    }
}

/* The backend, the suite, the outputs, the bandwidth reference and the header; every matrix;
 * the summary and the chart. Returns 0, 1 (a run or the chart failed) or 2 (no report). */
int nzb_run(const nzb_options_t *options) {
    bench_run_t run;
    bench_run_t *r = &run;
    int exit_status = 0;
    chart_t chart;
    char chart_why[1400];
    memset(r, 0, sizeof *r);
    r->opt = *options;

    if (nz_context_create(&r->ctx) != NZ_SUCCESS) {
        fprintf(stderr, "nz bench: cannot create a context\n");
        return 2;
    }
    if (r->opt.threads > 0) nz_context_set_threads(r->ctx, r->opt.threads);
    if (r->opt.tunables != NULL) nz_context_set_tunables(r->ctx, r->opt.tunables);
    bench_backend(r);
    if ((exit_status = nzb_suite_build(&r->suite, &r->opt)) != 0) goto cleanup;
    if ((exit_status = bench_outputs(r, &chart, chart_why, sizeof chart_why)) != 0)
        goto cleanup;
    bench_bandwidth(r);
    bench_header(r);
    bench_entries(r);

    nzb_summary_info_t summary = {r->backend,   r->device,  r->date,       r->copy_gbs,
                                  r->triad_gbs, r->threads, r->cache_bytes};
    r->failures += nzb_report_finish(&r->rep, &summary); /* + the rows that failed */
    printf("table: %s\ncsv: %s\n", r->txt_path, r->csv_path);
    exit_status = r->failures > 0 ? 1 : 0;
    if (r->opt.png_path != NULL) {
        if (chart_draw(&chart, r->csv_path, r->opt.png_path, chart_why, sizeof chart_why) == 0) {
            printf("chart: %s\n", r->opt.png_path);
        } else {
            fprintf(stderr, "nz bench: --png %s: chart not drawn: %s\n", r->opt.png_path,
                    chart_why);
            exit_status = 1;
        }
    }

cleanup:
    if (r->rep != NULL) {
        nzb_summary_info_t summary = {r->backend, r->device, "", 0, 0, r->threads, 0};
        nzb_report_finish(&r->rep, &summary);
    }
    free(r->suite.entries);
    nz_context_destroy(&r->ctx);
#ifdef NZ_HAVE_CUDA
    nzb_gpu_close(&r->gpu);
#endif
    return exit_status;
}
