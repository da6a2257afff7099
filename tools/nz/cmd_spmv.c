/* cmd_spmv.c: `nz spmv`: y = alpha A x + beta y in any format and backend, with a checked result. */
#include "cli.h"
#include "cmd_spmv.h"
#include "commands.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const CMD = "spmv";

/* Tolerances of --check on the norm-wise relative error against the double CSR reference. */
#define CHECK_TOL_DOUBLE 1e-12
#define CHECK_TOL_SINGLE 1e-5


/* What one run (a format and an algorithm) produced. */
typedef struct spmv_result {
    nz_alg_t alg;               /* the algorithm the plan chose */
    double plan_seconds, execute_mean, execute_min;
    double relerr;              /* --check only */
} spmv_result_t;

static int list_pairs(nz_backend_t backend) {
    nz_format_t format;
    nz_alg_t alg;
    for (int k = 0; nz_spmv_list(&format, &alg, backend, k) == NZ_SUCCESS; k++)
        printf("%s/%s\n", nz_format_name(format), nz_alg_name(alg));
    return NZ_EXIT_OK;
}

/* True if the backend lists at least one algorithm for the format (and alg, unless auto). */
static int backend_has(nz_backend_t backend, nz_format_t format, nz_alg_t alg) {
    nz_format_t f;
    nz_alg_t a;
    for (int k = 0; nz_spmv_list(&f, &a, backend, k) == NZ_SUCCESS; k++)
        if (f == format && (alg == NZ_ALG_AUTO || a == alg)) return 1;
    return 0;
}

static void to_double(double *dst, const void *src, nz_value_type_t value_type, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        dst[i] = value_type == NZ_F32 ? (double)((const float *)src)[i]
                                      : ((const double *)src)[i];
}

/* A 2-norm accumulated with LAPACK dnrm2's scaling, so huge or tiny entries neither overflow
 * nor underflow: the norm is scale * sqrt(ssq). */
typedef struct norm_acc {
    double scale, ssq;
} norm_acc_t;

static void norm_add(norm_acc_t *acc, double v) {
    v = fabs(v);
    if (v == 0.0) return;
    if (acc->scale < v) {
        acc->ssq = 1.0 + acc->ssq * (acc->scale / v) * (acc->scale / v);
        acc->scale = v;
    } else {
        acc->ssq += (v / acc->scale) * (v / acc->scale);
    }
}

static double norm_value(const norm_acc_t *acc) { return acc->scale * sqrt(acc->ssq); }

static double norm2(const double *a, int64_t n) {
    norm_acc_t acc = {0.0, 1.0};
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(a[i])) return a[i] != a[i] ? NAN : INFINITY;
        norm_add(&acc, a[i]);
    }
    return norm_value(&acc);
}

/* ||y - y_ref||_2 / ||y_ref||_2 over the entries where y_ref is finite (the absolute norm when
 * those are all zero). Where y_ref is NaN or infinite (the matrix holds NaN or Inf), y must be
 * NaN too, or the same infinity; any other mismatch, or NaN where y_ref is finite, gives NaN,
 * which fails every tolerance. */
static double relative_error(const double *y, const double *y_ref, int64_t n) {
    norm_acc_t diff = {0.0, 1.0}, ref = {0.0, 1.0};
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(y_ref[i])) {
            int same = isnan(y_ref[i]) ? isnan(y[i]) : y[i] == y_ref[i];
            if (!same) return NAN;
            continue;
        }
        if (!isfinite(y[i])) return NAN;
        norm_add(&diff, y[i] - y_ref[i]);
        norm_add(&ref, y_ref[i]);
    }
    double ref_norm = norm_value(&ref);
    return ref_norm > 0.0 ? norm_value(&diff) / ref_norm : norm_value(&diff);
}

/* Read a dense vector file with exactly n entries (n x 1 or 1 x n) into *data (nz_malloc'ed). */
static int read_vector(nz_context_t *ctx, const char *path, const char *what, nz_value_type_t vt,
                       int64_t n, const char *dimension, void **data) {
    int64_t rows = 0, cols = 0;
    nz_status_t status = nz_mm_read_dense(ctx, data, &rows, &cols, path, vt);
    if (status != NZ_SUCCESS) return nz_cli_file_error(CMD, ctx, status);
    return nz_cli_check_vector_length(CMD, path, what, rows, cols, n, dimension);
}

/* Host and device vectors of a run (device ones only for the CUDA backend). */
typedef struct spmv_vectors {
    const void *x, *y0;         /* host, working precision */
    void *y;                    /* host result */
    void *dx, *dy;              /* device copies */
    size_t x_bytes, y_bytes;
} spmv_vectors_t;

/* The matrix a format runs on: A itself (CSR on the CPU), else a converted and / or device
 * copy, which the caller destroys. */
static nz_status_t prepare_format(nz_context_t *ctx, const spmv_options_t *o,
                                  const nz_matrix_t *A, nz_format_t format,
                                  nz_matrix_t **converted, nz_matrix_t **device_matrix,
                                  const nz_matrix_t **M) {
    nz_status_t status;
    *M = A;
    if (format != NZ_FORMAT_CSR) {
        status = nz_matrix_convert(ctx, converted, A, format, &o->format_options);
        if (status != NZ_SUCCESS) return status;
        *M = *converted;
    }
    if (o->backend == NZ_BACKEND_CUDA) {
        status = nz_matrix_to_device(ctx, device_matrix, *M, NZ_INDEX_AUTO);
        if (status != NZ_SUCCESS) return status;
        *M = *device_matrix;
    }
    return NZ_SUCCESS;
}

/* Plan alg for M, execute `repeat` times (every run from y0; only the execute is timed, with a
 * device synchronisation on the GPU), and leave y on the host. Returns the library status (the
 * message stays on ctx). */
static nz_status_t run_alg(nz_context_t *ctx, const spmv_options_t *o, const nz_matrix_t *M,
                           nz_alg_t alg, spmv_vectors_t *v, spmv_result_t *result) {
    nz_status_t status;
    nz_spmv_plan_t *plan = NULL;
    int device = o->backend == NZ_BACKEND_CUDA;
    if ((status = nz_spmv_plan_create(ctx, &plan, M, NZ_OP_N, alg, o->plan_flags)) != NZ_SUCCESS)
        goto cleanup;
    nz_spmv_plan_info_t plan_info;
    if ((status = nz_spmv_plan_info(plan, &plan_info)) != NZ_SUCCESS) goto cleanup;
    result->alg = plan_info.alg;
    result->plan_seconds = plan_info.plan_seconds;
    result->execute_min = INFINITY;
    double total = 0.0;
    for (int r = 0; r < o->repeat; r++) {
        double t0, t1;
        if (device) {
            if (v->y_bytes > 0 &&
                (status = nz_device_copy_from_host(ctx, v->dy, v->y0, v->y_bytes)) != NZ_SUCCESS)
                goto cleanup;
            if ((status = nz_context_synchronize(ctx)) != NZ_SUCCESS) goto cleanup;
            t0 = nz_cli_wtime();
            if ((status = nz_spmv_execute(plan, o->alpha, v->dx, o->beta, v->dy)) != NZ_SUCCESS ||
                (status = nz_context_synchronize(ctx)) != NZ_SUCCESS)
                goto cleanup;
            t1 = nz_cli_wtime();
        } else {
            if (v->y_bytes > 0) memcpy(v->y, v->y0, v->y_bytes);
            t0 = nz_cli_wtime();
            if ((status = nz_spmv_execute(plan, o->alpha, v->x, o->beta, v->y)) != NZ_SUCCESS)
                goto cleanup;
            t1 = nz_cli_wtime();
        }
        total += t1 - t0;
        if (t1 - t0 < result->execute_min) result->execute_min = t1 - t0;
    }
    result->execute_mean = total / o->repeat;
    if (device && v->y_bytes > 0) status = nz_device_copy_to_host(ctx, v->y, v->dy, v->y_bytes);

cleanup:
    nz_spmv_plan_destroy(&plan);
    return status;
}

/* The algorithms to run for a format: every one the backend lists (--alg all), or the one
 * asked for (auto included) if the backend has it. Returns their number (0: not available). */
static int algorithms_for(const spmv_options_t *o, nz_format_t format, nz_alg_t *algs, int max) {
    if (!o->alg_all) {
        algs[0] = o->alg;
        return backend_has(o->backend, format, o->alg);
    }
    int n = 0;
    nz_format_t f;
    nz_alg_t a;
    for (int k = 0; nz_spmv_list(&f, &a, o->backend, k) == NZ_SUCCESS && n < max; k++)
        if (f == format) algs[n++] = a;
    return n;
}

/* Failures collected in the multi-run modes, reported at the end on one stderr line. */
typedef struct failure_list {
    int count;
    char text[768];
} failure_list_t;

static void add_failure(failure_list_t *failures, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void add_failure(failure_list_t *failures, const char *fmt, ...) {
    size_t used = strlen(failures->text);
    if (failures->count++ > 0 && used + 2 < sizeof failures->text) {
        strcpy(failures->text + used, ", ");
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(failures->text + used, sizeof failures->text - used, fmt, ap);
    va_end(ap);
}

/* One `nz spmv` between its phases: the options, the matrix, the vectors, the reference. */
typedef struct spmv_command {
    spmv_options_t o;
    nz_context_t *ctx;
    nz_matrix_t *A, *A_double;      /* A_double: the file in double, for --check in single */
    nz_matrix_t *converted, *device_matrix; /* the current format's copies */
    nz_matrix_info_t info;
    void *x, *y0, *y;               /* host, working precision */
    double *x_double, *y0_double, *y_double, *y_ref;
    spmv_vectors_t vectors;
    failure_list_t failures;
    int multi;                      /* one output line per run */
    const char *backend_name;
    double tol;                     /* --check's tolerance */
} spmv_command_t;

/* The context: threads and, for the CUDA backend, device 0. */
static int spmv_open_context(spmv_command_t *c) {
    int rc = NZ_EXIT_OK;
    nz_status_t status = nz_cli_context_create(&c->ctx);
    nz_context_t *ctx = c->ctx;
    NZ_CLI_TRY(status);
    if (c->o.threads > 0) NZ_CLI_TRY(nz_context_set_threads(ctx, c->o.threads));
    if (c->o.backend == NZ_BACKEND_CUDA) NZ_CLI_TRY(nz_context_set_device(ctx, 0, NULL));
cleanup:
    return rc;
}

/* The matrix: for --check also in double (the reference reads the file in double). */
static int spmv_read_matrix(spmv_command_t *c) {
    nz_context_t *ctx = c->ctx;
    int rc = NZ_EXIT_OK;
    nz_value_type_t read_type = c->o.check ? NZ_F64 : c->o.value_type;
    nz_status_t status = nz_matrix_read(ctx, &c->A, c->o.matrix_path, read_type);
    if (status != NZ_SUCCESS) return nz_cli_file_error(CMD, ctx, status);
    if (read_type != c->o.value_type) {
        c->A_double = c->A;
        c->A = NULL;
        NZ_CLI_TRY(nz_matrix_convert_values(ctx, &c->A, c->A_double, c->o.value_type));
    }
    NZ_CLI_TRY(nz_matrix_info(ctx, &c->info, c->A));
cleanup:
    return rc;
}

/* x and y0 in the working precision: read, or x = 1 + (j mod 7) / 8 and y0 = 0. */
static int spmv_input_vectors(spmv_command_t *c, size_t value_size) {
    nz_context_t *ctx = c->ctx;
    const spmv_options_t *o = &c->o;
    const int64_t rows = c->info.rows, cols = c->info.cols;
    int rc = NZ_EXIT_OK;
    if (o->x_path != NULL) {
        if ((rc = read_vector(ctx, o->x_path, "x", o->value_type, cols, "columns", &c->x)) != 0)
            return rc;
    } else {
        NZ_CLI_TRY(nz_malloc(ctx, &c->x, (size_t)cols * value_size));
        for (int64_t j = 0; j < cols; j++)
            nz_cli_value_set(c->x, o->value_type, j, 1.0 + (double)(j % 7) / 8.0);
    }
    if (o->y_path != NULL) {
        if ((rc = read_vector(ctx, o->y_path, "y", o->value_type, rows, "rows", &c->y0)) != 0)
            return rc;
    } else {
        NZ_CLI_TRY(nz_malloc(ctx, &c->y0, (size_t)rows * value_size));
        memset(c->y0, 0, (size_t)rows * value_size);
    }
cleanup:
    return rc;
}

/* The inputs x and y0 and the outputs y, --write-x, and their device copies for the CUDA
 * backend. */
static int spmv_read_vectors(spmv_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const spmv_options_t *o = &c->o;
    const int64_t rows = c->info.rows, cols = c->info.cols;
    const size_t value_size = o->value_type == NZ_F32 ? sizeof(float) : sizeof(double);
    int rc;
    if ((rc = spmv_input_vectors(c, value_size)) != NZ_EXIT_OK) return rc;
    NZ_CLI_TRY(nz_malloc(ctx, &c->y, (size_t)rows * value_size));
    NZ_CLI_TRY(nz_malloc(ctx, (void **)&c->y_double, (size_t)rows * sizeof(double)));
    if (o->x_out_path != NULL)
        NZ_CLI_TRY(nz_mm_write_dense(ctx, o->x_out_path, o->value_type, cols, 1, c->x));
    spmv_vectors_t *v = &c->vectors;
    v->x = c->x;
    v->y0 = c->y0;
    v->y = c->y;
    v->x_bytes = (size_t)cols * value_size;
    v->y_bytes = (size_t)rows * value_size;
    if (o->backend == NZ_BACKEND_CUDA) {
        NZ_CLI_TRY(nz_device_malloc(ctx, &v->dx, v->x_bytes + 1));
        NZ_CLI_TRY(nz_device_malloc(ctx, &v->dy, v->y_bytes + 1));
        if (v->x_bytes > 0) NZ_CLI_TRY(nz_device_copy_from_host(ctx, v->dx, c->x, v->x_bytes));
    }
cleanup:
    return rc;
}

/* The reference of --check: serial CSR in double on the same x and y0 values. */
static int spmv_reference(spmv_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const int64_t rows = c->info.rows, cols = c->info.cols;
    const nz_matrix_t *R = c->A_double != NULL ? c->A_double : c->A;
    int rc = NZ_EXIT_OK;
    NZ_CLI_TRY(nz_malloc(ctx, (void **)&c->x_double, (size_t)cols * sizeof(double)));
    NZ_CLI_TRY(nz_malloc(ctx, (void **)&c->y0_double, (size_t)rows * sizeof(double)));
    NZ_CLI_TRY(nz_malloc(ctx, (void **)&c->y_ref, (size_t)rows * sizeof(double)));
    to_double(c->x_double, c->x, c->o.value_type, cols);
    to_double(c->y0_double, c->y0, c->o.value_type, rows);
    memcpy(c->y_ref, c->y0_double, (size_t)rows * sizeof(double));
    NZ_CLI_TRY(nz_spmv(ctx, R, NZ_ALG_SERIAL, c->o.alpha, c->x_double, c->o.beta, c->y_ref));
cleanup:
    return rc;
}

/* --format auto: the planner's advice from the matrix statistics (nz_spmv_plan_choose, format
 * open) into o.format. */
static int spmv_choose_format(spmv_command_t *c) {
    nz_context_t *ctx = c->ctx;
    nz_matrix_stats_t stats;
    nz_alg_t advised_alg;
    char why[512];
    int rc = NZ_EXIT_OK;
    NZ_CLI_TRY(nz_matrix_stats(ctx, &stats, c->A));
    if (nz_spmv_plan_choose(&c->o.format, &advised_alg, why, sizeof why, &stats, c->o.backend,
                            NZ_FORMAT_COUNT, 0) != NZ_SUCCESS) {
        nz_cli_error(CMD, "%s: --format auto: no format on the %s backend (%s)",
                     c->o.matrix_path, c->backend_name, why);
        return NZ_EXIT_REFUSED;
    }
    if (c->o.verbose) {
        fflush(stdout);
        fprintf(stderr, "planner: %s\n", why);
    }
cleanup:
    return rc;
}

/* y of a single run: written to -o, or its norm on one line. */
static int spmv_output_y(spmv_command_t *c, const char *format_name, const char *alg_name) {
    nz_context_t *ctx = c->ctx;
    const spmv_options_t *o = &c->o;
    const int64_t rows = c->info.rows, cols = c->info.cols;
    int rc = NZ_EXIT_OK;
    if (o->out_path != NULL)
        NZ_CLI_TRY(nz_mm_write_dense(ctx, o->out_path, o->value_type, rows, 1, c->y));
    else
        printf("y = A x: %lld x %lld, %lld nonzeros, %s/%s on %s, %s, ||y||_2 = %.17g\n",
               (long long)rows, (long long)cols, (long long)c->info.nnz, format_name, alg_name,
               c->backend_name, nz_cli_precision_name(o->value_type), norm2(c->y_double, rows));
cleanup:
    return rc;
}

/* The report of a run that succeeded: --verbose timings, its line (multi-run modes) or y (to
 * --out or as its norm), the check; a failed check joins the failures. */
static int spmv_report_run(spmv_command_t *c, const char *format_name, spmv_result_t *result) {
    const spmv_options_t *o = &c->o;
    int rc;
    to_double(c->y_double, c->y, o->value_type, c->info.rows);
    int check_failed = 0;
    if (o->check) {
        result->relerr = relative_error(c->y_double, c->y_ref, c->info.rows);
        check_failed = !(result->relerr <= c->tol); /* NaN fails */
    }
    const char *alg_name = nz_alg_name(result->alg);
    if (o->verbose) {
        double flops = 2.0 * (double)c->info.nnz;
        fflush(stdout);
        fprintf(stderr, "%s/%s: plan %.3e s, execute %.3e s (mean of %d, min %.3e s, "
                        "%.3f GFLOP/s)\n",
                format_name, alg_name, result->plan_seconds, result->execute_mean, o->repeat,
                result->execute_min,
                result->execute_min > 0.0 ? flops / result->execute_min / 1e9 : 0.0);
    }
    if (c->multi) {
        printf("%s/%s", format_name, alg_name);
        if (o->check) printf(" relerr %.3e%s", result->relerr, check_failed ? " FAILED" : "");
        printf("\n");
    } else {
        if ((rc = spmv_output_y(c, format_name, alg_name)) != NZ_EXIT_OK) return rc;
        if (o->check) printf("relerr %.3e\n", result->relerr);
    }
    if (check_failed)
        add_failure(&c->failures, "%s/%s relerr %.3e > %.0e", format_name, alg_name,
                    result->relerr, c->tol);
    return NZ_EXIT_OK;
}

/* A format the backend has no algorithm for (or not the one asked for): a refusal, which the
 * multi-run modes print as their line. */
static int spmv_not_available(const spmv_command_t *c, const char *format_name) {
    char what[64] = "";
    if (c->o.alg != NZ_ALG_AUTO)
        snprintf(what, sizeof what, " with algorithm %s", nz_alg_name(c->o.alg));
    if (c->multi) {
        printf("%s refused: not available%s on the %s backend\n", format_name, what,
               c->backend_name);
        return NZ_EXIT_OK;
    }
    nz_cli_error(CMD, "format %s%s is not available on the %s backend (see nz spmv --list "
                      "--backend %s)", format_name, what, c->backend_name, c->backend_name);
    return NZ_EXIT_REFUSED;
}

/* A run that failed in a multi-run mode, as its line "FORMAT[/ALG] refused|error: reason";
 * refusals are expected outcomes, other errors join the failures. alg NULL: the format's
 * conversion or its copy to the device failed. */
static void spmv_multi_failure(spmv_command_t *c, const char *format_name, const nz_alg_t *alg,
                               nz_status_t status) {
    const int refused = nz_cli_is_refusal(status);
    printf("%s", format_name);
    if (alg != NULL && *alg != NZ_ALG_AUTO) printf("/%s", nz_alg_name(*alg));
    printf(" %s: %s\n", refused ? "refused" : "error", nz_context_last_error(c->ctx));
    if (refused) return;
    if (alg != NULL)
        add_failure(&c->failures, "%s/%s (%s)", format_name, nz_alg_name(*alg),
                    nz_status_string(status));
    else
        add_failure(&c->failures, "%s (%s)", format_name, nz_status_string(status));
}

/* Every algorithm of one format (its copies made first): a library error ends a single run; in
 * the multi-run modes it is the run's line. */
static int spmv_run_format(spmv_command_t *c, nz_format_t format) {
    nz_context_t *ctx = c->ctx;
    const spmv_options_t *o = &c->o;
    const char *format_name = nz_format_name(format);
    const nz_matrix_t *M = NULL;
    nz_alg_t algs[32];
    int rc = NZ_EXIT_OK;
    int num_algs = algorithms_for(o, format, algs, 32);
    if (num_algs == 0) return spmv_not_available(c, format_name);
    nz_status_t status =
        prepare_format(ctx, o, c->A, format, &c->converted, &c->device_matrix, &M);
    if (status != NZ_SUCCESS && c->multi) {
        spmv_multi_failure(c, format_name, NULL, status);
        goto cleanup;
    }
    NZ_CLI_TRY(status);
    for (int k = 0; k < num_algs; k++) {
        spmv_result_t result;
        memset(&result, 0, sizeof result);
        status = run_alg(ctx, o, M, algs[k], &c->vectors, &result);
        if (status == NZ_SUCCESS) {
            if ((rc = spmv_report_run(c, format_name, &result)) != NZ_EXIT_OK) goto cleanup;
        } else if (c->multi) {
            spmv_multi_failure(c, format_name, &algs[k], status);
        } else {
            NZ_CLI_TRY(status);
        }
    }
cleanup:
    nz_matrix_destroy(&c->device_matrix);
    nz_matrix_destroy(&c->converted);
    return rc;
}

static void spmv_command_free(spmv_command_t *c) {
    nz_context_t *ctx = c->ctx;
    if (ctx != NULL) {
        nz_free(ctx, c->x);
        nz_free(ctx, c->y0);
        nz_free(ctx, c->y);
        nz_free(ctx, c->x_double);
        nz_free(ctx, c->y0_double);
        nz_free(ctx, c->y_double);
        nz_free(ctx, c->y_ref);
        if (c->vectors.dx != NULL) nz_device_free(ctx, c->vectors.dx);
        if (c->vectors.dy != NULL) nz_device_free(ctx, c->vectors.dy);
    }
    nz_matrix_destroy(&c->device_matrix);
    nz_matrix_destroy(&c->converted);
    nz_matrix_destroy(&c->A);
    nz_matrix_destroy(&c->A_double);
    nz_context_destroy(&c->ctx);
}

/* Parse; read the matrix and vectors (and the reference); run every format and algorithm asked
 * for; report the failures of the multi-run modes on one line. */
int nz_cmd_spmv(int argc, char **argv) {
    spmv_command_t c;
    memset(&c, 0, sizeof c);
    int rc = nz_cmd_spmv_parse_options(argc, argv, &c.o);
    if (rc == NZ_CLI_HELP) return NZ_EXIT_OK;
    if (rc != NZ_EXIT_OK) return rc;
    if (c.o.list) return list_pairs(c.o.backend);
    c.multi = c.o.all_formats || c.o.alg_all;
    c.backend_name = c.o.backend == NZ_BACKEND_CUDA ? "cuda" : "cpu";
    c.tol = c.o.value_type == NZ_F32 ? CHECK_TOL_SINGLE : CHECK_TOL_DOUBLE;

    if ((rc = spmv_open_context(&c)) != NZ_EXIT_OK) goto cleanup;
    if ((rc = spmv_read_matrix(&c)) != NZ_EXIT_OK) goto cleanup;
    if ((rc = spmv_read_vectors(&c)) != NZ_EXIT_OK) goto cleanup;
    if (c.o.check && (rc = spmv_reference(&c)) != NZ_EXIT_OK) goto cleanup;
    if (c.o.format_auto && (rc = spmv_choose_format(&c)) != NZ_EXIT_OK) goto cleanup;
    int first = c.o.all_formats ? 0 : (int)c.o.format;
    int last = c.o.all_formats ? NZ_FORMAT_COUNT - 1 : (int)c.o.format;
    for (int f = first; f <= last; f++)
        if ((rc = spmv_run_format(&c, (nz_format_t)f)) != NZ_EXIT_OK) goto cleanup;
    if (c.failures.count > 0) {
        nz_cli_error(CMD, "%s: %s (%s): %s", c.o.matrix_path,
                     c.failures.count == 1 ? "1 run failed" : "runs failed",
                     nz_cli_precision_name(c.o.value_type), c.failures.text);
        rc = NZ_EXIT_FAIL;
    }

cleanup:
    spmv_command_free(&c);
    return rc;
}
