/* cli.c: helpers shared by the nz subcommands: numbers, one-line errors, files. */
#include "cli.h"
#include "safe_output.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Every error is one line: embedded newlines or other control characters (from a library
 * message quoting a file) are printed as spaces. The line is written at once, so that the
 * ranks of the distributed tool, which all report a failure they agree on, do not interleave. */
int nz_cli_quiet = 0;

static void print_one_line(const char *cmd, const char *message) {
    char line[1280];
    if (nz_cli_quiet) return;
    int prefix = cmd != NULL ? snprintf(line, sizeof line, "nz %s: ", cmd)
                             : snprintf(line, sizeof line, "nz: ");
    size_t used = prefix < 0 ? 0 : (size_t)prefix < sizeof line - 2 ? (size_t)prefix
                                                                    : sizeof line - 2;
    for (const char *p = message; *p != '\0' && used < sizeof line - 2; p++) {
        unsigned char c = (unsigned char)*p;
        line[used++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    line[used++] = '\n';
    line[used] = '\0';
    fflush(stdout); /* keep the error after what was already printed */
    fputs(line, stderr);
    fflush(stderr);
}

void nz_cli_error(const char *cmd, const char *fmt, ...) {
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    print_one_line(cmd, message);
}

int nz_cli_is_refusal(nz_status_t status) {
    return status == NZ_ERR_TOO_MUCH_PADDING || status == NZ_ERR_UNSUPPORTED ||
           status == NZ_ERR_NO_DEVICE;
}

void nz_cli_library_message(const char *cmd, const nz_context_t *ctx, nz_status_t status) {
    const char *message = ctx != NULL ? nz_context_last_error(ctx) : "";
    if (message == NULL || message[0] == '\0') message = nz_status_string(status);
    print_one_line(cmd, message);
}

int nz_cli_library_error(const char *cmd, const nz_context_t *ctx, nz_status_t status) {
    nz_cli_library_message(cmd, ctx, status);
    return nz_cli_is_refusal(status) ? NZ_EXIT_REFUSED : NZ_EXIT_FAIL;
}

int nz_cli_file_error(const char *cmd, const nz_context_t *ctx, nz_status_t status) {
    nz_cli_library_message(cmd, ctx, status);
    return NZ_EXIT_FAIL;
}

int nz_cli_is_help(const char *arg) {
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int nz_cli_int64(const char *cmd, const char *opt, const char *text, int64_t min, int64_t max,
                 int64_t *out) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE) {
        nz_cli_error(cmd, "option %s: '%s' is not an integer", opt, text);
        return 1;
    }
    if (v < min || v > max) {
        nz_cli_error(cmd, "option %s: %lld is out of range [%lld, %lld]", opt, v, (long long)min,
                     (long long)max);
        return 1;
    }
    *out = (int64_t)v;
    return 0;
}

int nz_cli_int(const char *cmd, const char *opt, const char *text, int min, int max, int *out) {
    int64_t v;
    if (nz_cli_int64(cmd, opt, text, min, max, &v) != 0) return 1;
    *out = (int)v;
    return 0;
}

int nz_cli_threads(const char *cmd, const char *opt, const char *text, int min, int *out) {
    int threads = 0;
    if (nz_cli_int(cmd, opt, text, min, INT32_MAX, &threads) != 0) return 1;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online >= 1 && threads > online) {
        if (!nz_cli_quiet)
            fprintf(stderr, "nz %s: warning: %s %d is more than the %ld online CPUs; using %ld\n", cmd,
                opt, threads, online, online);
        threads = (int)online;
    }
    if (threads > NZ_MAX_THREADS) threads = NZ_MAX_THREADS; /* CPU count unknown */
    *out = threads;
    return 0;
}

int nz_cli_uint64(const char *cmd, const char *opt, const char *text, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    if (text[0] == '-' || text[0] == '\0') {
        nz_cli_error(cmd, "option %s: '%s' is not a non-negative integer", opt, text);
        return 1;
    }
    unsigned long long v = strtoull(text, &end, 10);
    if (*end != '\0' || errno == ERANGE) {
        nz_cli_error(cmd, "option %s: '%s' is not a non-negative integer", opt, text);
        return 1;
    }
    *out = (uint64_t)v;
    return 0;
}

int nz_cli_double(const char *cmd, const char *opt, const char *text, double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    /* ERANGE also flags underflow to a subnormal or zero, which is a fine value. */
    int overflow = errno == ERANGE && fabs(v) > 1.0;
    if (end == text || *end != '\0' || overflow || !isfinite(v)) {
        nz_cli_error(cmd, "option %s: '%s' is not a finite number", opt, text);
        return 1;
    }
    *out = v;
    return 0;
}

int nz_cli_unknown_option(const char *cmd, const char *arg) {
    nz_cli_error(cmd, "unknown option %s (see nz %s --help)", arg, cmd);
    return NZ_EXIT_USAGE;
}

int nz_cli_extra_argument(const char *cmd, const char *arg) {
    nz_cli_error(cmd, "unexpected argument '%s' (see nz %s --help)", arg, cmd);
    return NZ_EXIT_USAGE;
}

int nz_cli_missing(const char *cmd, const char *what) {
    nz_cli_error(cmd, "missing %s (see nz %s --help)", what, cmd);
    return NZ_EXIT_USAGE;
}

double nz_cli_wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t nz_cli_file_size(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    return (int64_t)st.st_size;
}

int nz_cli_ends_with(const char *text, const char *suffix) {
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

const char *nz_cli_precision_name(nz_value_type_t value_type) {
    return value_type == NZ_F32 ? "single" : "double";
}

int nz_cli_check_matrix_path(const char *cmd, const char *path) {
    if (nz_cli_ends_with(path, ".nzb") || nz_cli_ends_with(path, ".mtx") ||
        nz_cli_ends_with(path, ".mtx.gz"))
        return NZ_EXIT_OK;
    nz_cli_error(cmd, "%s: unknown output extension (use .mtx, .mtx.gz or .nzb)", path);
    return NZ_EXIT_USAGE;
}

int nz_cli_write_matrix(const char *cmd, nz_context_t *ctx, const nz_matrix_t *A,
                        const char *path) {
    int rc = nz_cli_check_matrix_path(cmd, path);
    if (rc != NZ_EXIT_OK) return rc;
    nz_status_t status = nz_cli_ends_with(path, ".nzb") ? nz_binary_write(ctx, path, A)
                                                        : nz_mm_write(ctx, path, A);
    if (status != NZ_SUCCESS) return nz_cli_library_error(cmd, ctx, status);
    return NZ_EXIT_OK;
}

/* What a path names, for the output check: a regular file by device and inode; a path that does
 * not exist yet by the canonical path a write would create (nzu_output_resolve); the literal
 * text when even that cannot be resolved (a missing directory: the write fails anyway). "-" and
 * existing files that are not regular files (devices, FIFOs, directories) are not compared:
 * writing them replaces nothing. */
typedef struct file_id {
    enum { FILE_ID_NONE, FILE_ID_INODE, FILE_ID_PATH } kind;
    dev_t dev;
    ino_t ino;
    char path[NZU_OUTPUT_PATH_MAX];
} file_id_t;

static void file_id(file_id_t *id, const char *path) {
    struct stat st;
    id->kind = FILE_ID_NONE;
    if (path == NULL || strcmp(path, "-") == 0) return;
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) return;
        id->kind = FILE_ID_INODE;
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return;
    }
    id->kind = FILE_ID_PATH;
    if (nzu_output_resolve(path, id->path) != 0) snprintf(id->path, sizeof id->path, "%s", path);
}

static int same_id(const file_id_t *a, const file_id_t *b) {
    if (a->kind != b->kind || a->kind == FILE_ID_NONE) return 0;
    if (a->kind == FILE_ID_INODE) return a->dev == b->dev && a->ino == b->ino;
    return strcmp(a->path, b->path) == 0;
}

int nz_cli_check_files(const char *cmd, const nz_cli_file_t *outputs, int num_outputs,
                       const nz_cli_file_t *inputs, int num_inputs) {
    file_id_t out_id, other_id; /* 8 KB: kept off the caller's way, computed pair by pair */
    for (int o = 0; o < num_outputs; o++) {
        const char *path = outputs[o].path;
        if (path == NULL) continue;
        file_id(&out_id, path);
        for (int i = 0; i < num_inputs; i++) {
            if (inputs[i].path == NULL) continue;
            file_id(&other_id, inputs[i].path);
            if (!same_id(&out_id, &other_id)) continue;
            nz_cli_error(cmd, "option %s: %s is the input %s%s%s; refusing to overwrite an input "
                              "(write to another path)", outputs[o].option, path,
                         inputs[i].option != NULL ? inputs[i].option : "",
                         inputs[i].option != NULL ? " " : "", inputs[i].path);
            return NZ_EXIT_USAGE;
        }
        for (int k = 0; k < o; k++) {
            if (outputs[k].path == NULL) continue;
            int both_stdout = strcmp(path, "-") == 0 && strcmp(outputs[k].path, "-") == 0;
            if (!both_stdout) {
                file_id(&other_id, outputs[k].path);
                if (!same_id(&out_id, &other_id)) continue;
            }
            nz_cli_error(cmd, "options %s and %s: both write %s%s; refusing to let one output "
                              "overwrite the other (give each its own path)", outputs[k].option,
                         outputs[o].option, both_stdout ? "to standard output" : path,
                         both_stdout || strcmp(path, outputs[k].path) == 0 ? "" : " (the same file)");
            return NZ_EXIT_USAGE;
        }
    }
    return NZ_EXIT_OK;
}

int nz_cli_check_not_matrix_path(const char *cmd, const char *option, const char *path,
                                 const char *what) {
    static const char *const matrix_extensions[] = {".mtx", ".mtx.gz", ".nzb"};
    if (path == NULL) return NZ_EXIT_OK;
    size_t n = strlen(path);
    for (size_t k = 0; k < sizeof matrix_extensions / sizeof matrix_extensions[0]; k++) {
        size_t m = strlen(matrix_extensions[k]);
        if (n >= m && strcasecmp(path + n - m, matrix_extensions[k]) == 0) {
            nz_cli_error(cmd, "option %s: %s has a matrix extension (.mtx, .mtx.gz, .nzb); "
                              "refusing to write %s there (a shell glob such as *.mtx after %s?)",
                         option, path, what, option);
            return NZ_EXIT_USAGE;
        }
    }
    return NZ_EXIT_OK;
}

size_t nz_cli_memory_budget = 0;

int nz_cli_bytes(const char *cmd, const char *opt, const char *text, size_t *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    double scale = 1.0;
    if (end != text && *end != '\0') {
        switch (*end == 'k' ? 'K' : *end == 'm' ? 'M' : *end == 'g' ? 'G' : *end == 't' ? 'T' : *end) {
        case 'K': scale = 1024.0; break;
        case 'M': scale = 1024.0 * 1024.0; break;
        case 'G': scale = 1024.0 * 1024.0 * 1024.0; break;
        case 'T': scale = 1024.0 * 1024.0 * 1024.0 * 1024.0; break;
        default: scale = 0.0;
        }
        end++;
        if (*end == 'i' && end[-1] != 'i') end++; /* KiB, MiB, ... */
        if (*end == 'B') end++;
    }
    if (end == text || *end != '\0' || scale == 0.0 || !isfinite(v) || v < 1.0 ||
        v * scale >= 18446744073709551615.0) {
        nz_cli_error(cmd, "option %s: '%s' is not a byte count (a positive number with an "
                          "optional K, M, G or T suffix)", opt, text);
        return 1;
    }
    *out = (size_t)(v * scale);
    return 0;
}

void nz_cli_tunables_from_environment(nz_tunables_t *tunables) {
    extern char **environ;
    nz_tunables_default(tunables);
    for (char **entry = environ; *entry != NULL; entry++)
        if (strncmp(*entry, "NZ_TUNE_", 8) == 0) (void)nz_tunables_parse(tunables, *entry);
}

nz_status_t nz_cli_context_create(nz_context_t **ctx) {
    nz_status_t status = nz_context_create(ctx);
    if (status == NZ_SUCCESS && nz_cli_memory_budget != 0)
        status = nz_context_set_memory_budget(*ctx, nz_cli_memory_budget);
    if (status == NZ_SUCCESS) {
        nz_tunables_t tunables;
        nz_cli_tunables_from_environment(&tunables);
        status = nz_context_set_tunables(*ctx, &tunables);
    }
    return status;
}

int nz_cli_open_matrix(const char *cmd, nz_context_t **ctx, nz_matrix_t **A, const char *path,
                       nz_value_type_t value_type, double *read_seconds) {
    nz_status_t status = nz_cli_context_create(ctx);
    if (status != NZ_SUCCESS) return nz_cli_library_error(cmd, *ctx, status);
    double t0 = nz_cli_wtime();
    if ((status = nz_matrix_read(*ctx, A, path, value_type)) != NZ_SUCCESS)
        return nz_cli_file_error(cmd, *ctx, status);
    *read_seconds = nz_cli_wtime() - t0;
    return NZ_EXIT_OK;
}

int nz_cli_check_vector_length(const char *cmd, const char *path, const char *what,
                               int64_t rows, int64_t cols, int64_t n, const char *dimension) {
    if ((cols == 1 && rows == n) || (rows == 1 && cols == n)) return NZ_EXIT_OK;
    nz_cli_error(cmd, "%s: %s is %lld x %lld, but A has %lld %s (a %lld x 1 vector is needed)",
                 path, what, (long long)rows, (long long)cols, (long long)n, dimension,
                 (long long)n);
    return NZ_EXIT_FAIL;
}

int nz_cli_cg_nonfinite(nz_context_t *ctx, const nz_matrix_t *A, const char *path,
                        char *message, size_t size) {
    const int64_t *offsets = NULL;
    const int32_t *columns = NULL;
    const void *values = NULL;
    nz_matrix_info_t info;
    if (nz_matrix_info(ctx, &info, A) != NZ_SUCCESS ||
        nz_matrix_csr_arrays(ctx, &offsets, &columns, &values, A) != NZ_SUCCESS)
        return 0;
    for (int64_t i = 0; i < info.rows; i++)
        for (int64_t k = offsets[i]; k < offsets[i + 1]; k++) {
            double value = nz_cli_value_get(values, info.value_type, k);
            if (isfinite(value)) continue;
            snprintf(message, size, "%s: A holds %g at (%lld, %lld); CG needs finite values",
                     path, value, (long long)i + 1, (long long)columns[k] + 1);
            return 1;
        }
    return 0;
}

double nz_cli_hash_unit(uint64_t i) {
    uint64_t z = i + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return 2.0 * (double)(z >> 11) * 0x1.0p-53 - 1.0;
}

double nz_cli_value_get(const void *values, nz_value_type_t type, int64_t i) {
    return type == NZ_F32 ? (double)((const float *)values)[i] : ((const double *)values)[i];
}

void nz_cli_value_set(void *values, nz_value_type_t type, int64_t i, double value) {
    if (type == NZ_F32)
        ((float *)values)[i] = (float)value;
    else
        ((double *)values)[i] = value;
}
