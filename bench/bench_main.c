/* bench_main.c: nz bench's driver: the suite, the bandwidth reference, per-case setup, the chart. */
#include "bench.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define NZB_SEED 20240611u

/* The large real matrices (1-3.2M nonzeros, a table of their own): this directory, looked for
 * from the current directory and then from the source tree the benchmark was built from. */
#define LARGE_DIR_DEFAULT "../shared/matrices-large"
#ifndef NZB_SOURCE_DIR
#define NZB_SOURCE_DIR ""
#endif

typedef enum source_kind {
    GEN_LAPLACE3D, GEN_FE3D, GEN_RANDOM, GEN_RMAT, GEN_RAIL, GEN_MIXED, FROM_FILE
} source_kind_t;

typedef struct suite_entry {
    char name[NZB_NAME_SIZE];
    source_kind_t kind;
    int64_t p[4];             /* generator parameters, in the generator's order */
    char path[4096];          /* FROM_FILE */
    int large;                /* from the large directory: the second table */
} suite_entry_t;

typedef struct generated_spec {
    source_kind_t kind;
    int64_t p[4];
    const char *name;
} generated_spec_t;

/* The generated suite per size. full: the GPU sizes, each well above the H100's 50 MB L2;
 * small: the CPU sizes, about a second per kernel on two cores, the Laplacian and FE matrices
 * just above a 105 MiB L3; quick: a smoke test. */
#define SUITE_LENGTH 6
static const generated_spec_t suite_quick[SUITE_LENGTH] = {
    {GEN_LAPLACE3D, {16}, "laplace3d-16"},
    {GEN_FE3D, {12}, "fe3d-12"},
    {GEN_RANDOM, {16384, 16}, "random-16K-16"},
    {GEN_RMAT, {12, 16}, "rmat-12-16"},
    {GEN_RAIL, {64, 16384, 500}, "rail-64x16K"},
    {GEN_MIXED, {16384, 8, 2, 8192}, "mixed-16K"},
};
static const generated_spec_t suite_small[SUITE_LENGTH] = {
    {GEN_LAPLACE3D, {128}, "laplace3d-128"},
    {GEN_FE3D, {80}, "fe3d-80"},
    {GEN_RANDOM, {1048576, 16}, "random-1M-16"},
    {GEN_RMAT, {18, 16}, "rmat-18-16"},
    {GEN_RAIL, {1024, 262144, 2500}, "rail-1024x256K"},
    {GEN_MIXED, {524288, 8, 8, 262144}, "mixed-512K"},
};
static const generated_spec_t suite_full[SUITE_LENGTH] = {
    {GEN_LAPLACE3D, {200}, "laplace3d-200"},
    {GEN_FE3D, {128}, "fe3d-128"},
    {GEN_RANDOM, {4194304, 16}, "random-4M-16"},
    {GEN_RMAT, {20, 16}, "rmat-20-16"},
    {GEN_RAIL, {4096, 1048576, 2500}, "rail-4096x1M"},
    {GEN_MIXED, {2097152, 8, 8, 1048576}, "mixed-2M"},
};

static nz_status_t load_entry(nz_context_t *ctx, nz_matrix_t **A, const suite_entry_t *e) {
    const int64_t *p = e->p;
    switch (e->kind) {
    case GEN_LAPLACE3D: return nz_gen_laplace3d(ctx, A, p[0], p[0], p[0], NZ_F64);
    case GEN_FE3D: return nz_gen_fe3d(ctx, A, NULL, NULL, p[0], NZ_F64);
    case GEN_RANDOM: return nz_gen_random(ctx, A, p[0], p[0], (double)p[1], NZB_SEED, NZ_F64);
    case GEN_RMAT:
        return nz_gen_rmat(ctx, A, (int)p[0], (int)p[1], 0, 0, 0, NZB_SEED, NZ_F64);
    case GEN_RAIL: return nz_gen_rail(ctx, A, p[0], p[1], p[2], NZB_SEED, NZ_F64);
    case GEN_MIXED: return nz_gen_mixed(ctx, A, p[0], p[1], p[2], p[3], NZB_SEED, NZ_F64);
    case FROM_FILE: return nz_matrix_read(ctx, A, e->path, NZ_F64);
    }
    return NZ_ERR_INVALID_ARGUMENT;
}

/* The matrix's name: the file name without directory and .mtx / .mtx.gz / .nzb. */
static void name_from_path(char *name, size_t size, const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(name, size, "%s", base);
    const char *suffixes[] = {".mtx.gz", ".mtx", ".nzb"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(name), m = strlen(suffixes[i]);
        if (n > m && strcmp(name + n - m, suffixes[i]) == 0) {
            name[n - m] = '\0';
            break;
        }
    }
}

static int has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

void nzb_table_path(char *out, size_t size, const char *csv_path, int markdown) {
    snprintf(out, size, "%s", csv_path);
    if (has_suffix(out, ".csv")) out[strlen(out) - 4] = '\0';
    snprintf(out + strlen(out), size - strlen(out), "%s", markdown ? ".md" : ".txt");
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append the *.mtx and *.mtx.gz files of dir, sorted by name; large marks them for the large
 * real matrices' table. */
static int add_directory(suite_entry_t **entries, int *count, int *capacity, const char *dir,
                         int large) {
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    char **names = NULL;
    int n = 0, cap = 0, status = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!has_suffix(de->d_name, ".mtx") && !has_suffix(de->d_name, ".mtx.gz")) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, (size_t)cap * sizeof *grown);
            if (grown == NULL) {
                status = -1;
                break;
            }
            names = grown;
        }
        if ((names[n] = strdup(de->d_name)) == NULL) {
            status = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 0) qsort(names, (size_t)n, sizeof *names, compare_names);
    for (int i = 0; i < n && status == 0; i++) {
        if (*count == *capacity) {
            int grown_cap = *capacity ? 2 * *capacity : 64;
            suite_entry_t *grown = realloc(*entries, (size_t)grown_cap * sizeof *grown);
            if (grown == NULL) {
                status = -1;
                break;
            }
            *entries = grown;
            *capacity = grown_cap;
        }
        suite_entry_t *e = &(*entries)[(*count)++];
        memset(e, 0, sizeof *e);
        e->kind = FROM_FILE;
        e->large = large;
        snprintf(e->path, sizeof e->path, "%s/%s", dir, names[i]);
        name_from_path(e->name, sizeof e->name, names[i]);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return status;
}

static int is_directory(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The large real matrices' directory: --large, else NZ_LARGE_MATRIX_DIR, else LARGE_DIR_DEFAULT
 * from the current directory, else from the source tree. Returns 1 with the path in dir when one
 * was named (*named = 1: a missing one is an error) or found, 0 when none was. */
static int large_directory(char *dir, size_t size, const nzb_options_t *opt, int *named) {
    const char *env = getenv("NZ_LARGE_MATRIX_DIR");
    *named = 1;
    if (opt->large_dir != NULL) {
        snprintf(dir, size, "%s", opt->large_dir);
        return 1;
    }
    if (env != NULL && env[0] != '\0') {
        snprintf(dir, size, "%s", env);
        return 1;
    }
    *named = 0;
    snprintf(dir, size, "%s", LARGE_DIR_DEFAULT);
    if (is_directory(dir)) return 1;
    if (NZB_SOURCE_DIR[0] != '\0') {
        snprintf(dir, size, "%s/%s", NZB_SOURCE_DIR, LARGE_DIR_DEFAULT);
        if (is_directory(dir)) return 1;
    }
    dir[0] = '\0';
    return 0;
}

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
 * bench/, or next to the executable's parent directory) run by $NZ_BENCH_PYTHON (default
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
                if (access(chart->script, R_OK) != 0) chart->script[0] = '\0';
            }
        }
    }
    if (chart->script[0] == '\0') {
        snprintf(why, why_size, "bench/plot.py not found (run from the source tree or set "
                                "NZ_BENCH_PLOT)");
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

int nzb_run(const nzb_options_t *options) {
    nzb_options_t opt = *options;
    nz_context_t *ctx = NULL;
    nzb_report_t *rep = NULL;
    suite_entry_t *entries = NULL;
    int num_entries = 0, capacity = 0, failures = 0, exit_status = 0;
    char device[512] = "", txt_path[4096], csv_path[4096];
    char fallback_note[512] = "";
#ifdef NZ_HAVE_CUDA
    nzb_gpu_t *gpu = NULL;
#endif
    int use_gpu = 0;

    if (nz_context_create(&ctx) != NZ_SUCCESS) {
        fprintf(stderr, "nz bench: cannot create a context\n");
        return 2;
    }
    if (opt.threads > 0) nz_context_set_threads(ctx, opt.threads);
    if (opt.tunables != NULL) nz_context_set_tunables(ctx, opt.tunables);

    /* Backend: the GPU when asked for or by default when present; fail soft to the CPU. */
    if (opt.backend != NZ_BACKEND_CPU) {
        if (nz_device_count() > 0) {
#ifdef NZ_HAVE_CUDA
            char msg[256];
            if (nzb_gpu_open(&gpu, ctx, msg, sizeof msg) == 0)
                use_gpu = 1;
            else
                snprintf(fallback_note, sizeof fallback_note,
                         "GPU unavailable (%s): running the CPU benchmark", msg);
#endif
        } else {
            snprintf(fallback_note, sizeof fallback_note,
                     "no CUDA device%s: running the CPU benchmark",
#ifdef NZ_HAVE_CUDA
                     ""
#else
                     " (built without CUDA)"
#endif
            );
        }
    }
    const char *backend = use_gpu ? "gpu" : "cpu";
    if (opt.size == NZB_SIZE_DEFAULT) opt.size = use_gpu ? NZB_SIZE_FULL : NZB_SIZE_SMALL;
    if (opt.runs <= 0) opt.runs = opt.size == NZB_SIZE_QUICK ? 5 : use_gpu ? 50 : 10;
    if (opt.offset_bits == 0) opt.offset_bits = 32;
    int threads = opt.threads;
#ifdef _OPENMP
    if (threads <= 0) threads = omp_get_max_threads();
#else
    threads = 1;
#endif

    /* The suite: generated matrices, files named on the command line, NZ_MATRIX_DIR; the large
     * real matrices last (their own table). */
    const generated_spec_t *gen = opt.size == NZB_SIZE_QUICK   ? suite_quick
                                  : opt.size == NZB_SIZE_SMALL ? suite_small
                                                               : suite_full;
    capacity = SUITE_LENGTH + opt.num_files;
    entries = calloc((size_t)capacity, sizeof *entries);
    if (entries == NULL) {
        exit_status = 2;
        goto cleanup;
    }
    for (int i = 0; i < SUITE_LENGTH && !opt.only_large; i++) {
        suite_entry_t *e = &entries[num_entries++];
        e->kind = gen[i].kind;
        memcpy(e->p, gen[i].p, sizeof e->p);
        snprintf(e->name, sizeof e->name, "%s", gen[i].name);
    }
    for (int i = 0; i < opt.num_files; i++) {
        suite_entry_t *e = &entries[num_entries++];
        e->kind = FROM_FILE;
        snprintf(e->path, sizeof e->path, "%s", opt.files[i]);
        name_from_path(e->name, sizeof e->name, opt.files[i]);
    }
    const char *matrix_dir = getenv("NZ_MATRIX_DIR");
    if (opt.real && !opt.only_large && matrix_dir != NULL && matrix_dir[0] != '\0' &&
        add_directory(&entries, &num_entries, &capacity, matrix_dir, 0) != 0)
        fprintf(stderr, "nz bench: cannot list NZ_MATRIX_DIR=%s\n", matrix_dir);
    /* The large real matrices, last: skipped by --no-real, and by --quick unless named with
     * --large (or asked for with --only-large). */
    char large_dir[4096] = "", large_line[4400], large_error[4400] = "";
    int num_small = num_entries, large_named = 0;
    if (!opt.real) {
        snprintf(large_line, sizeof large_line, "skipped (--no-real)");
    } else if (opt.size == NZB_SIZE_QUICK && opt.large_dir == NULL && !opt.only_large) {
        snprintf(large_line, sizeof large_line, "skipped (--quick; --large DIR runs them)");
    } else if (!large_directory(large_dir, sizeof large_dir, &opt, &large_named)) {
        snprintf(large_line, sizeof large_line, "none (no %s here or next to the source tree; "
                                                "--large DIR or NZ_LARGE_MATRIX_DIR names one)",
                 LARGE_DIR_DEFAULT);
        if (opt.only_large)
            snprintf(large_error, sizeof large_error, "--only-large: no %s here or next to the "
                                                      "source tree (name one with --large DIR)",
                     LARGE_DIR_DEFAULT);
    } else if (add_directory(&entries, &num_entries, &capacity, large_dir, 1) != 0) {
        snprintf(large_line, sizeof large_line, "cannot list %s", large_dir);
        snprintf(large_error, sizeof large_error, "cannot list the large matrices' directory %s%s",
                 large_dir, large_named ? "" : " (found by default)");
    } else {
        snprintf(large_line, sizeof large_line, "%d file(s) in %s, in a table of their own",
                 num_entries - num_small, large_dir);
        if (num_entries == num_small && opt.only_large)
            snprintf(large_error, sizeof large_error, "--only-large: no .mtx or .mtx.gz file in %s",
                     large_dir);
    }
    int name_width = 6;
    for (int i = 0; i < num_entries; i++) {
        int n = (int)strlen(entries[i].name);
        if (n > name_width) name_width = n;
    }

    /* Outputs: the CSV and, next to it, the text copy of the table. */
    if (opt.csv_path != NULL)
        snprintf(csv_path, sizeof csv_path, "%s", opt.csv_path);
    else
        snprintf(csv_path, sizeof csv_path, "bench-out/bench-%s.csv", backend);
    nzb_table_path(txt_path, sizeof txt_path, csv_path, opt.markdown);
    chart_t chart;
    char chart_why[1400];
    if (opt.png_path != NULL &&
        chart_prepare(&chart, csv_path, opt.png_path, chart_why, sizeof chart_why) != 0) {
        fprintf(stderr, "nz bench: --png %s: chart cannot be drawn: %s\n", opt.png_path,
                chart_why);
        exit_status = 1;
        goto cleanup;
    }
    rep = nzb_report_open(txt_path, csv_path, opt.markdown, use_gpu);
    if (rep == NULL) {
        exit_status = 2;
        goto cleanup;
    }

    /* The bandwidth reference, measured in this run. */
    double copy_gbs = 0, triad_gbs = 0;
    size_t bandwidth_bytes = 0, cache_bytes = 0;
    int quick = opt.size == NZB_SIZE_QUICK;
#ifdef NZ_HAVE_CUDA
    if (use_gpu) {
        copy_gbs = nzb_gpu_copy_bandwidth(gpu, quick ? 5 : 20, &bandwidth_bytes);
        cache_bytes = nzb_gpu_l2_bytes(gpu);
        snprintf(device, sizeof device, "%s", nzb_gpu_description(gpu));
    }
#endif
    if (!use_gpu) {
        /* --quick is a smoke run: small arrays (indicative only, the header says their size). */
        nzb_cpu_stream_limited(opt.threads, quick ? 3 : 10, quick ? (size_t)32 << 20 : 0,
                               &copy_gbs, &triad_gbs, &bandwidth_bytes);
        cache_bytes = nzb_cpu_llc_bytes();
        cpu_description(device, sizeof device, threads);
    }

    char date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    const char *h = opt.markdown ? "- " : "# ";
    nzb_printf(rep, "%snz bench (%s), %s\n", opt.markdown ? "### " : "# ", backend, date);
    if (opt.markdown) nzb_printf(rep, "\n");
    nzb_printf(rep, "%sdevice: %s\n", h, device);
    if (use_gpu)
        nzb_printf(rep, "%scopy bandwidth: %.1f GB/s (device-to-device cudaMemcpy of %.0f MiB, "
                        "read + write, median)\n",
                   h, copy_gbs, (double)bandwidth_bytes / 1048576.0);
    else
        nzb_printf(rep, "%sSTREAM bandwidth: copy %.1f GB/s, triad %.1f GB/s (%.0f MiB arrays, "
                        "read + write, median)%s\n",
                   h, copy_gbs, triad_gbs, (double)bandwidth_bytes / 1048576.0,
                   bandwidth_bytes < cache_bytes ? "; arrays smaller than the cache (--quick): "
                                                   "indicative only"
                                                 : "");
    nzb_printf(rep, "%sruns: %d per kernel (median; y = A x, beta = 0)%s; offsets: %s\n", h,
               opt.runs,
               use_gpu ? ", CUDA events on one stream" : ", monotonic clock",
               use_gpu ? (opt.offset_bits == 64 ? "64-bit" : "32-bit") : "64-bit (host CSR)");
    nzb_printf(rep, "%sGB/s: minimal CSR bytes ((rows+1) x offset + nnz x (4 + value) + cols x "
                    "value + rows x value) / time; %%copy: of the copy bandwidth above%s\n",
               h, use_gpu ? "" : "; GB/s_st: the format's stored bytes (nz_matrix_info) + x + y");
    nzb_printf(rep, "%scache: %s = minimal footprint fits the %.0f MiB %s (bandwidth %% not "
                    "meaningful); max_err: max |y - ref| / sum |a x| vs the double reference\n",
               h, use_gpu ? "L2-res" : "LLC-res", (double)cache_bytes / 1048576.0,
               use_gpu ? "L2" : "last-level cache");
    if (use_gpu)
        nzb_printf(rep, "%svs_cusp: best cuSPARSE time (CSR ALG1/ALG2) / this time; plan_ms of "
                        "cuSPARSE rows: bufferSize + buffer allocation + SpMV_preprocess\n",
                   h);
    nzb_printf(rep, "%slarge real matrices: %s (pattern entries read as 1, as NZ_MATRIX_DIR's)\n",
               h, large_line);
    nzb_printf(rep, "\n");
    if (fallback_note[0]) nzb_report_note(rep, "%s", fallback_note);
    if (large_error[0]) {
        nzb_report_note(rep, "%s", large_error);
        failures++;
    }
    if (num_small > 0) nzb_report_header(rep, name_width);

    int interactive = isatty(2);
    for (int i = 0; i < num_entries; i++) {
        const suite_entry_t *e = &entries[i];
        nz_matrix_t *A64 = NULL, *A32 = NULL;
        double t0 = nzb_wtime();
        if (i == num_small) { /* the first large matrix: their table's title and header */
            nzb_printf(rep, "%s%sLarge real matrices (%s), the same columns:\n\n",
                       num_small > 0 ? "\n" : "", opt.markdown ? "#### " : "", large_dir);
            nzb_report_header(rep, name_width);
        }
        if (interactive) fprintf(stderr, "[%d/%d] %s ...\r", i + 1, num_entries, e->name);
        nz_status_t s = load_entry(ctx, &A64, e);
        if (s != NZ_SUCCESS) {
            nzb_report_note(rep, "%s: cannot %s: %s: %s", e->name,
                            e->kind == FROM_FILE ? "read" : "generate", nz_status_string(s),
                            nz_context_last_error(ctx));
            failures++;
            continue;
        }
        nz_matrix_info_t info;
        nz_matrix_info(ctx, &info, A64);
        if (info.nnz == 0 || info.rows == 0 || info.cols == 0) {
            nzb_report_note(rep, "%s: skipped (%lld x %lld, no nonzeros)", e->name,
                            (long long)info.rows, (long long)info.cols);
            nz_matrix_destroy(&A64);
            continue;
        }
        if (e->kind != FROM_FILE && interactive)
            fprintf(stderr, "[%d/%d] %s generated in %.1f s\n", i + 1, num_entries, e->name,
                    nzb_wtime() - t0);
        for (int p = 0; p < 2; p++) {
            nz_value_type_t vt = p == 0 ? NZ_F32 : NZ_F64;
            if ((vt == NZ_F32 && !opt.single) || (vt == NZ_F64 && !opt.dbl)) continue;
            const nz_matrix_t *A = A64;
            if (vt == NZ_F32) {
                if ((s = nz_matrix_convert_values(ctx, &A32, A64, NZ_F32)) != NZ_SUCCESS) {
                    nzb_report_note(rep, "%s: cannot convert to single: %s", e->name,
                                    nz_context_last_error(ctx));
                    failures++;
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
            if (prepare_case(ctx, &c, &arrays, A, opt.threads) != 0) {
                nzb_report_note(rep, "%s: out of host memory for the reference", e->name);
                failures++;
            } else {
                nzb_case_advice(ctx, &c, use_gpu ? NZ_BACKEND_CUDA : NZ_BACKEND_CPU);
#ifdef NZ_HAVE_CUDA
                if (use_gpu) nzb_gpu_case(gpu, rep, &opt, &c, opt.runs, copy_gbs);
#endif
                if (!use_gpu) nzb_cpu_case(ctx, rep, &opt, &c, opt.runs, copy_gbs, cache_bytes);
            }
            free_case_arrays(&arrays);
            nz_matrix_destroy(&A32);
        }
        nz_matrix_destroy(&A64);
    }

    nzb_summary_info_t summary = {backend,   device,  date,       copy_gbs,
                                  triad_gbs, threads, cache_bytes};
    failures += nzb_report_finish(&rep, &summary); /* + the rows that failed */
    printf("table: %s\ncsv: %s\n", txt_path, csv_path);
    exit_status = failures > 0 ? 1 : 0;
    if (opt.png_path != NULL) {
        if (chart_draw(&chart, csv_path, opt.png_path, chart_why, sizeof chart_why) == 0) {
            printf("chart: %s\n", opt.png_path);
        } else {
            fprintf(stderr, "nz bench: --png %s: chart not drawn: %s\n", opt.png_path, chart_why);
            exit_status = 1;
        }
    }

cleanup:
    if (rep != NULL) {
        nzb_summary_info_t summary = {backend, device, "", 0, 0, threads, 0};
        nzb_report_finish(&rep, &summary);
    }
    free(entries);
    nz_context_destroy(&ctx);
#ifdef NZ_HAVE_CUDA
    nzb_gpu_close(&gpu);
#endif
    return exit_status;
}
