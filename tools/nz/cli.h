/* cli.h: helpers shared by the nz subcommands: numbers, one-line errors, the error exit, files. */
#ifndef NZ_TOOL_CLI_H
#define NZ_TOOL_CLI_H

#include "nonzero.h"

#include <stddef.h>
#include <stdint.h>

/* Exit statuses of every subcommand. */
#define NZ_EXIT_OK 0      /* success */
#define NZ_EXIT_FAIL 1    /* an operation failed: file, library or check error */
#define NZ_EXIT_USAGE 2   /* bad command line: unknown option, missing or bad value */
#define NZ_EXIT_REFUSED 3 /* the requested format / algorithm / backend was refused cleanly */
#define NZ_EXIT_NOT_CONVERGED 4 /* nz cg finished without meeting the tolerance (iteration limit,
                                 * stagnation): x and the true residual are reported, not a solution */

/* Print exactly one line "nz <cmd>: <message>" on stderr ("nz: <message>" when cmd is NULL),
 * in one write so that the lines of several processes (the distributed tool's ranks) do not
 * interleave; newlines and other control characters in the message become spaces. */
void nz_cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Print the library's last error on ctx as one line "nz <cmd>: <message>" (the status string
 * when the context has no message). */
void nz_cli_library_message(const char *cmd, const nz_context_t *ctx, nz_status_t status);
/* The same, returning the exit status for it: NZ_EXIT_REFUSED for
 * refusals (too much padding, unsupported, no device), else NZ_EXIT_FAIL. */
int nz_cli_library_error(const char *cmd, const nz_context_t *ctx, nz_status_t status);
/* The message, returning NZ_EXIT_FAIL whatever the status: a file that cannot be read or
 * written is a failure, even one the library calls unsupported (a complex Matrix Market file). */
int nz_cli_file_error(const char *cmd, const nz_context_t *ctx, nz_status_t status);

/* True for the statuses reported as refusals: NZ_ERR_TOO_MUCH_PADDING, NZ_ERR_UNSUPPORTED,
 * NZ_ERR_NO_DEVICE. */
int nz_cli_is_refusal(nz_status_t status);

/* "-h" or "--help". */
int nz_cli_is_help(const char *arg);

/* The one error exit of the subcommands, as GraphBLAS's GB_OK: evaluate the library call; on
 * failure print its message (nz_cli_library_error), set rc to its exit status and leave
 * through the function's `cleanup:` label. Expects CMD (the subcommand's name), ctx (the
 * context whose last error explains the failure) and rc in scope. */
#define NZ_CLI_TRY(call)                                                                        \
    do {                                                                                        \
        nz_status_t nz_cli_try_status_ = (call);                                                \
        if (nz_cli_try_status_ != NZ_SUCCESS) {                                                 \
            rc = nz_cli_library_error(CMD, ctx, nz_cli_try_status_);                            \
            goto cleanup;                                                                       \
        }                                                                                       \
    } while (0)

/* Parse numbers for option `opt`; on any error (not a number, trailing characters, out of
 * [min, max]) print one line naming the option and return non-zero. */
int nz_cli_int64(const char *cmd, const char *opt, const char *text, int64_t min, int64_t max,
                 int64_t *out);
int nz_cli_int(const char *cmd, const char *opt, const char *text, int min, int max, int *out);
int nz_cli_uint64(const char *cmd, const char *opt, const char *text, uint64_t *out);
/* --threads N: an integer >= min; above the number of online CPUs it is
 * clamped to that number with a one-line warning on stderr (more threads than cores only
 * slows the OpenMP kernels down: CG on 90k unknowns took 60 s with 4096 threads on 2 cores
 * instead of 0.43 s). */
int nz_cli_threads(const char *cmd, const char *opt, const char *text, int min, int *out);
/* Finite doubles only. */
int nz_cli_double(const char *cmd, const char *opt, const char *text, double *out);
/* Error lines for the common argument mistakes; each returns NZ_EXIT_USAGE. */
int nz_cli_unknown_option(const char *cmd, const char *arg);
int nz_cli_extra_argument(const char *cmd, const char *arg);
int nz_cli_missing(const char *cmd, const char *what);

/* --memory-budget BYTES, accepted by every subcommand that reads or generates matrices (info,
 * gen, convert, spmv, cg, spgemm): main() takes it out of argv before the subcommand parses its
 * options. 0 = the library's default (3/4 of physical memory). */
extern size_t nz_cli_memory_budget;
/* Parse a byte count with an optional K, M, G or T suffix (powers of 1024; "1.5G" allowed). */
int nz_cli_bytes(const char *cmd, const char *opt, const char *text, size_t *out);
/* The NZ_TUNE_* environment variables onto *tunables, from the defaults (nz_tunables_parse; the
 * library reads no environment): what every subcommand and the benchmark run under. A value the
 * library does not accept is ignored (the tunable stays automatic), as the kernels ignored it
 * when they read the environment themselves. */
void nz_cli_tunables_from_environment(nz_tunables_t *tunables);
/* nz_context_create, then the --memory-budget setting and the environment's tunables. */
nz_status_t nz_cli_context_create(nz_context_t **ctx);
/* The start of a command on one matrix file: nz_cli_context_create (its error printed), then
 * nz_matrix_read of `path` in value_type (its message printed), *read_seconds the read's time.
 * Returns NZ_EXIT_OK, or the exit code; what was created is the caller's to destroy. */
int nz_cli_open_matrix(const char *cmd, nz_context_t **ctx, nz_matrix_t **A, const char *path,
                       nz_value_type_t value_type, double *read_seconds);

/* Monotonic wall-clock seconds. */
double nz_cli_wtime(void);
/* Size of a file in bytes, or -1. */
int64_t nz_cli_file_size(const char *path);
/* True if `text` ends with `suffix`. */
int nz_cli_ends_with(const char *text, const char *suffix);
/* "single" or "double". */
const char *nz_cli_precision_name(nz_value_type_t value_type);

/* Write a host matrix by extension: .nzb (binary), .mtx or .mtx.gz (Matrix Market). Prints the
 * error line itself and returns an exit status. */
int nz_cli_write_matrix(const char *cmd, nz_context_t *ctx, const nz_matrix_t *A,
                        const char *path);
/* One file of a command line: the option that names it ("-o", "--b"; NULL for a positional
 * matrix) and its path (NULL: not given). */
typedef struct nz_cli_file {
    const char *option;
    const char *path;
} nz_cli_file_t;
/* The one output check of every subcommand, serial and distributed, called by its parser before
 * anything is read or written: refuse (one error line, NZ_EXIT_USAGE) when an output is the same
 * file as an input or as another output. Existing regular files are compared by device and inode
 * (through symbolic and hard links); paths that do not exist yet by the canonical path a write
 * would create (nzu_output_resolve: dangling links followed, the directory's realpath), so
 * `--b m.mtx -o m.mtx` is refused for a new m.mtx too. Two outputs "-" (both standard output) are
 * refused; devices, FIFOs and "-" are otherwise not compared (writing them replaces nothing).
 * NULL paths are skipped. Returns NZ_EXIT_OK or NZ_EXIT_USAGE. */
int nz_cli_check_files(const char *cmd, const nz_cli_file_t *outputs, int num_outputs,
                       const nz_cli_file_t *inputs, int num_inputs);
/* For outputs that are not matrices (CSV, PNG): refuse a path ending in .mtx, .mtx.gz or .nzb
 * (any case) with one line naming the option and `what` is written; NULL is fine. NZ_EXIT_OK or
 * NZ_EXIT_USAGE. */
int nz_cli_check_not_matrix_path(const char *cmd, const char *option, const char *path,
                                 const char *what);

/* Non-zero: nz_cli_error and the other messages of this file print nothing (the distributed
 * tool sets it on every rank but 0 while the ranks parse the same command line). */
extern int nz_cli_quiet;

/* A vector file read as rows x cols for `what` ("x", "b") of A, which has n `dimension` ("rows"
 * or "columns"): NZ_EXIT_OK for n x 1 or 1 x n, else NZ_EXIT_FAIL after one line naming both. */
int nz_cli_check_vector_length(const char *cmd, const char *path, const char *what,
                               int64_t rows, int64_t cols, int64_t n, const char *dimension);
/* A NaN or Inf among the values of the host CSR matrix A (read from `path`): 1 with the message
 * "PATH: A holds V at (i, j); CG needs finite values" (1-based) in message, else 0. `nz cg` names
 * it before b = A ones would turn it into a NaN in b, serially and distributed. */
int nz_cli_cg_nonfinite(nz_context_t *ctx, const nz_matrix_t *A, const char *path,
                        char *message, size_t size);

/* Deterministic x0_i in [-1, 1) for global index i (the splitmix64 finaliser): the initial guess
 * of `nz cg`, single-process and distributed alike, so both start from the same x0. */
double nz_cli_hash_unit(uint64_t i);
/* Entry i of a float or double array as a double, and the other way. */
double nz_cli_value_get(const void *values, nz_value_type_t type, int64_t i);
void nz_cli_value_set(void *values, nz_value_type_t type, int64_t i, double value);

/* Check that an output path has a known matrix extension (before doing any work). */
int nz_cli_check_matrix_path(const char *cmd, const char *path);

#endif
