/* bench_suite.c: nz bench's suite: the generated matrices per size, files, directories. */
#include "bench_suite.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The large real matrices (1-3.2M nonzeros, a table of their own): this directory, looked for
 * from the current directory and then from the source tree the benchmark was built from. */
#define LARGE_DIR_DEFAULT "../shared/matrices-large"
#ifndef NZB_SOURCE_DIR
#define NZB_SOURCE_DIR ""
#endif

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

nz_status_t nzb_suite_load(nz_context_t *ctx, nz_matrix_t **A, const suite_entry_t *e) {
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

/* The large real matrices, last: skipped by --no-real, and by --quick unless named with
 * --large (or asked for with --only-large); large_line says which, large_error why an asked-for
 * table is missing. */
static void large_entries(nzb_suite_t *r, const nzb_options_t *opt) {
    int large_named = 0;
    if (!opt->real) {
        snprintf(r->large_line, sizeof r->large_line, "skipped (--no-real)");
    } else if (opt->size == NZB_SIZE_QUICK && opt->large_dir == NULL && !opt->only_large) {
        snprintf(r->large_line, sizeof r->large_line, "skipped (--quick; --large DIR runs them)");
    } else if (!large_directory(r->large_dir, sizeof r->large_dir, opt, &large_named)) {
        snprintf(r->large_line, sizeof r->large_line,
                 "none (no %s here or next to the source tree; "
                 "--large DIR or NZ_LARGE_MATRIX_DIR names one)",
                 LARGE_DIR_DEFAULT);
        if (opt->only_large)
            snprintf(r->large_error, sizeof r->large_error,
                     "--only-large: no %s here or next to the "
                     "source tree (name one with --large DIR)",
                     LARGE_DIR_DEFAULT);
    } else if (add_directory(&r->entries, &r->num_entries, &r->capacity, r->large_dir, 1) != 0) {
        snprintf(r->large_line, sizeof r->large_line, "cannot list %s", r->large_dir);
        snprintf(r->large_error, sizeof r->large_error,
                 "cannot list the large matrices' directory %s%s", r->large_dir,
                 large_named ? "" : " (found by default)");
    } else {
        snprintf(r->large_line, sizeof r->large_line, "%d file(s) in %s, in a table of their own",
                 r->num_entries - r->num_small, r->large_dir);
        if (r->num_entries == r->num_small && opt->only_large)
            snprintf(r->large_error, sizeof r->large_error,
                     "--only-large: no .mtx or .mtx.gz file in %s", r->large_dir);
    }
}

/* The suite: generated matrices, files named on the command line, NZ_MATRIX_DIR; the large
 * real matrices last (their own table). */
int nzb_suite_build(nzb_suite_t *r, const nzb_options_t *opt) {
    const generated_spec_t *gen = opt->size == NZB_SIZE_QUICK   ? suite_quick
                                  : opt->size == NZB_SIZE_SMALL ? suite_small
                                                                : suite_full;
    r->capacity = SUITE_LENGTH + opt->num_files;
    r->entries = calloc((size_t)r->capacity, sizeof *r->entries);
    if (r->entries == NULL) return 2;
    for (int i = 0; i < SUITE_LENGTH && !opt->only_large; i++) {
        suite_entry_t *e = &r->entries[r->num_entries++];
        e->kind = gen[i].kind;
        memcpy(e->p, gen[i].p, sizeof e->p);
        snprintf(e->name, sizeof e->name, "%s", gen[i].name);
    }
    for (int i = 0; i < opt->num_files; i++) {
        suite_entry_t *e = &r->entries[r->num_entries++];
        e->kind = FROM_FILE;
        snprintf(e->path, sizeof e->path, "%s", opt->files[i]);
        name_from_path(e->name, sizeof e->name, opt->files[i]);
    }
    const char *matrix_dir = getenv("NZ_MATRIX_DIR");
    if (opt->real && !opt->only_large && matrix_dir != NULL && matrix_dir[0] != '\0' &&
        add_directory(&r->entries, &r->num_entries, &r->capacity, matrix_dir, 0) != 0)
        fprintf(stderr, "nz bench: cannot list NZ_MATRIX_DIR=%s\n", matrix_dir);
    r->num_small = r->num_entries;
    large_entries(r, opt);
    r->name_width = 6;
    for (int i = 0; i < r->num_entries; i++) {
        int n = (int)strlen(r->entries[i].name);
        if (n > r->name_width) r->name_width = n;
    }
    return 0;
}
