/* bench_cpu.c: the CPU side of nz bench: STREAM-like bandwidth and every CPU (format, alg) kernel. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Seconds a kernel's timing may take before the run count is reduced (at least 3 runs stay). */
#define CPU_KERNEL_BUDGET_SECONDS 3.0
/* A sample shorter than this repeats the kernel in a batch so the clock's resolution and the
 * OpenMP fork cost do not dominate tiny matrices. */
#define CPU_MIN_SAMPLE_SECONDS 1e-4

/* status = expr; on an error jump to the function's cleanup block. */
#define CHECK(expr)                                                                             \
    do {                                                                                        \
        status = (expr);                                                                        \
        if (status < 0) goto cleanup;                                                           \
    } while (0)

/* Parse a sysfs cache size ("107520K", "32M"). */
static size_t parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0) return 0;
    if (*end == 'K' || *end == 'k') v *= 1024.0;
    else if (*end == 'M' || *end == 'm') v *= 1024.0 * 1024.0;
    else if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024.0 * 1024.0;
    return (size_t)v;
}

/* The highest-level data or unified cache of cpu0, from sysfs. */
size_t nzb_cpu_llc_bytes(void) {
    size_t best = 0;
    int best_level = 0;
    for (int index = 0; index < 16; index++) {
        char path[128], text[64], type[32];
        int level = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
        FILE *f = fopen(path, "r");
        if (f == NULL) break;
        if (fscanf(f, "%d", &level) != 1) level = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
        if ((f = fopen(path, "r")) == NULL) continue;
        if (fscanf(f, "%31s", type) != 1) type[0] = '\0';
        fclose(f);
        if (strcmp(type, "Instruction") == 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        if ((f = fopen(path, "r")) == NULL) continue;
        if (fscanf(f, "%63s", text) != 1) text[0] = '\0';
        fclose(f);
        size_t bytes = parse_size(text);
        if (level > best_level || (level == best_level && bytes > best)) {
            best_level = level;
            best = bytes;
        }
    }
    return best;
}

static volatile double stream_sink;

static int thread_count(int threads) {
#ifdef _OPENMP
    return threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
    return 1;
#endif
}

/* STREAM copy (c = a) and triad (a = b + s c) with OpenMP, static schedule and first-touch
 * initialisation so each thread streams its own pages, over three arrays of 4 x LLC each
 * (clamped to [64 MiB, 1 GiB], or to max_array_bytes when non-zero) so no pass is served from
 * cache. Bytes are counted as in STREAM: read + write, without write-allocate traffic. Median
 * over reps. */
void nzb_cpu_stream_limited(int threads, int reps, size_t max_array_bytes, double *copy_gbs,
                            double *triad_gbs, size_t *array_bytes) {
    size_t llc = nzb_cpu_llc_bytes();
    size_t bytes = 4 * (llc > 0 ? llc : (size_t)32 << 20);
    if (bytes < ((size_t)64 << 20)) bytes = (size_t)64 << 20;
    if (bytes > ((size_t)1 << 30)) bytes = (size_t)1 << 30;
    if (max_array_bytes > 0 && bytes > max_array_bytes) bytes = max_array_bytes;
    int64_t n = (int64_t)(bytes / sizeof(double));
    int nt = thread_count(threads);
    (void)nt;
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    double *c = malloc((size_t)n * sizeof *c);
    double *copy_t = malloc((size_t)reps * sizeof *copy_t);
    double *triad_t = malloc((size_t)reps * sizeof *triad_t);
    *copy_gbs = *triad_gbs = 0;
    *array_bytes = bytes;
    if (a == NULL || b == NULL || c == NULL || copy_t == NULL || triad_t == NULL || reps < 1)
        goto cleanup;
    NZB_OMP_FOR(nt)
    for (int64_t i = 0; i < n; i++) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.0;
    }
    const double s = 3.0;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
        double t0 = nzb_wtime();
        NZB_OMP_FOR(nt)
        for (int64_t i = 0; i < n; i++) c[i] = a[i];
        double t1 = nzb_wtime();
        NZB_OMP_FOR(nt)
        for (int64_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        double t2 = nzb_wtime();
        if (r >= 0) {
            copy_t[r] = t1 - t0;
            triad_t[r] = t2 - t1;
        }
    }
    stream_sink = a[n / 2] + c[n / 3]; /* the stores are used: the loops stay */
    *copy_gbs = 2.0 * (double)bytes / nzb_median(copy_t, reps) * 1e-9;
    *triad_gbs = 3.0 * (double)bytes / nzb_median(triad_t, reps) * 1e-9;
cleanup:
    free(a);
    free(b);
    free(c);
    free(copy_t);
    free(triad_t);
}

void nzb_cpu_stream(int threads, int reps, double *copy_gbs, double *triad_gbs,
                    size_t *array_bytes) {
    nzb_cpu_stream_limited(threads, reps, 0, copy_gbs, triad_gbs, array_bytes);
}

/* Time plan on (x, y) (already warmed up by the verification run): up to three runs, the
 * fastest of which sizes a batch so a sample lasts at least CPU_MIN_SAMPLE_SECONDS (one run
 * when it takes over a millisecond), then `runs` samples on the monotonic clock (fewer if the
 * kernel would exceed CPU_KERNEL_BUDGET_SECONDS, never fewer than 3). */
static nz_status_t time_plan(nz_spmv_plan_t *plan, const void *x, void *y, int runs,
                             nzb_result_t *r) {
    nz_status_t status;
    double *samples = NULL;
    double once = 1e30;
    for (int k = 0; k < 3; k++) {
        double t0 = nzb_wtime();
        CHECK(nz_spmv_execute(plan, 1.0, x, 0.0, y));
        double t = nzb_wtime() - t0;
        if (t < once) once = t;
        if (once > 1e-3) break;
    }
    if (once < 1e-7) once = 1e-7;
    int batch = 1;
    if (once < CPU_MIN_SAMPLE_SECONDS) batch = (int)ceil(CPU_MIN_SAMPLE_SECONDS / once);
    if (batch > 10000) batch = 10000;
    if (once * runs > CPU_KERNEL_BUDGET_SECONDS) runs = (int)(CPU_KERNEL_BUDGET_SECONDS / once);
    if (runs < 3) runs = 3;
    samples = malloc((size_t)runs * sizeof *samples);
    if (samples == NULL) {
        status = NZ_ERR_OUT_OF_MEMORY;
        goto cleanup;
    }
    for (int k = 0; k < runs; k++) {
        double start = nzb_wtime();
        for (int b = 0; b < batch; b++) CHECK(nz_spmv_execute(plan, 1.0, x, 0.0, y));
        samples[k] = (nzb_wtime() - start) / batch;
    }
    double min = samples[0];
    for (int k = 1; k < runs; k++)
        if (samples[k] < min) min = samples[k];
    r->min_seconds = min;
    r->median_seconds = nzb_median(samples, runs);
    r->runs = runs;
    r->batch = batch;
    status = NZ_SUCCESS;
cleanup:
    free(samples);
    return status;
}

/* Conversions refused for a reason that is not an error of the library. */
static int is_refusal(nz_status_t s) {
    return s == NZ_ERR_TOO_MUCH_PADDING || s == NZ_ERR_UNSUPPORTED || s == NZ_ERR_OUT_OF_MEMORY ||
           s == NZ_ERR_OVERFLOW;
}

/* "what: the library's message" (or the status string when there is no message). */
static void set_note(nzb_result_t *r, nz_context_t *ctx, const char *what, nz_status_t s) {
    const char *msg = nz_context_last_error(ctx);
    snprintf(r->note, sizeof r->note, "%s: %s", what, msg[0] ? msg : nz_status_string(s));
    r->reason = s;
}

/* Conversion options a kernel needs: the SELL simd kernel runs chunks of 8 rows (one AVX2 vector
 * of floats, two of doubles); every other kernel takes the defaults. */
static void kernel_format_options(nz_format_t format, nz_alg_t alg, nz_format_options_t *o) {
    memset(o, 0, sizeof *o);
    if (format == NZ_FORMAT_SELL && alg == NZ_ALG_SIMD) o->sell_chunk = 8;
}

/* Plan alg on M (the library times the setup: plan_ms), run it once on a poisoned y and verify,
 * then time it; the outcome and the note go into r. NZ_ALG_AUTO's note names what the planner
 * chose. */
static void run_plan(nz_context_t *ctx, const nzb_case_t *c, const nz_matrix_t *M, nz_alg_t alg,
                     int runs, void *y, nzb_result_t *r) {
    nz_spmv_plan_t *plan = NULL;
    nz_status_t s = nz_spmv_plan_create(ctx, &plan, M, NZ_OP_N, alg, 0);
    if (s != NZ_SUCCESS) {
        r->status = s == NZ_ERR_UNSUPPORTED ? NZB_REFUSED : NZB_FAILED;
        set_note(r, ctx, r->status == NZB_REFUSED ? "refused" : "plan failed", s);
        return;
    }
    nz_spmv_plan_info_t pinfo;
    if (nz_spmv_plan_info(plan, &pinfo) == NZ_SUCCESS) {
        r->plan_seconds = pinfo.plan_seconds;
        if (alg == NZ_ALG_AUTO) nzb_plan_choice_note(r->note, sizeof r->note, &pinfo);
    }
    nzb_poison(y, c->value_type, r->rows);
    s = nz_spmv_execute(plan, 1.0, c->x, 0.0, y);
    if (s != NZ_SUCCESS) {
        r->status = NZB_FAILED;
        set_note(r, ctx, "execute failed", s);
    } else {
        nzb_verify(r, c, y);
        if ((s = time_plan(plan, c->x, y, runs, r)) != NZ_SUCCESS) {
            r->status = NZB_FAILED;
            set_note(r, ctx, "execute failed", s);
        }
        nzb_result_rates(r);
    }
    nz_spmv_plan_destroy(&plan);
}

/* Every (format, alg) pair of the CPU backend on one case. Other formats are converted from the
 * case's CSR once per format; their stored bytes (nz_matrix_info.bytes, padding included) give
 * GB/s_st, while GB/s always uses the minimal CSR count so kernels compare on one scale. Last,
 * the planner's default plan on the CSR (csr/auto), as on the GPU. */
int nzb_cpu_case(nz_context_t *ctx, nzb_report_t *rep, const nzb_options_t *options,
                 const nzb_case_t *c, int runs, double copy_gbs, size_t llc_bytes) {
    int failed = 0;
    nz_matrix_t *converted = NULL;
    int converted_key = -1; /* format and SELL chunk of `converted` */
    nz_status_t convert_status = NZ_SUCCESS;
    char convert_message[NZB_NOTE_SIZE - 32] = ""; /* room for the note's prefix */
    size_t vs = c->value_type == NZ_F32 ? 4 : 8;
    nz_matrix_info_t info;
    if (nz_matrix_info(ctx, &info, c->A) != NZ_SUCCESS) return 1;
    void *y = malloc((size_t)(info.rows > 0 ? info.rows : 1) * vs);
    if (y == NULL) return 1;
    nz_format_t format;
    nz_alg_t alg;
    for (int index = 0; nz_spmv_list(&format, &alg, NZ_BACKEND_CPU, index) == NZ_SUCCESS; index++) {
        if (!nzb_selected(options, format, alg)) continue;
        char kernel[NZB_NAME_SIZE];
        snprintf(kernel, sizeof kernel, "%s/%s", nz_format_name(format), nz_alg_name(alg));
        nzb_result_t r;
        nzb_result_init(&r, c, kernel);
        r.bandwidth_gbs = copy_gbs;
        r.bytes_min = nzb_min_bytes(info.rows, info.cols, info.nnz, 8, c->value_type);
        r.resident = llc_bytes > 0 && r.bytes_min <= llc_bytes;

        const nz_matrix_t *M = c->A;
        if (format != NZ_FORMAT_CSR) {
            nz_format_options_t fopt;
            kernel_format_options(format, alg, &fopt);
            int key = (int)format * 1024 + fopt.sell_chunk;
            if (key != converted_key) {
                nz_matrix_destroy(&converted);
                convert_status = nz_matrix_convert(ctx, &converted, c->A, format, &fopt);
                converted_key = key;
                snprintf(convert_message, sizeof convert_message, "%s",
                         nz_context_last_error(ctx));
            }
            if (convert_status != NZ_SUCCESS) {
                r.status = is_refusal(convert_status) ? NZB_REFUSED : NZB_FAILED;
                snprintf(r.note, sizeof r.note, "%s: %s",
                         r.status == NZB_REFUSED ? "refused" : "conversion failed",
                         convert_message[0] ? convert_message : nz_status_string(convert_status));
                r.reason = convert_status;
                failed += r.status == NZB_FAILED;
                nzb_report_row(rep, &r);
                continue;
            }
            M = converted;
        }
        nz_matrix_info_t minfo;
        if (nz_matrix_info(ctx, &minfo, M) == NZ_SUCCESS)
            r.bytes_stored = minfo.bytes + (size_t)info.cols * vs + (size_t)info.rows * vs;

        run_plan(ctx, c, M, alg, runs, y, &r);
        failed += r.status == NZB_FAILED;
        nzb_report_row(rep, &r);
    }
    /* The planner's default plan (NZ_ALG_AUTO) on the case's CSR, as a user gets it. */
    if (nzb_selected(options, NZ_FORMAT_CSR, NZ_ALG_AUTO)) {
        nzb_result_t r;
        nzb_result_init(&r, c, "csr/auto");
        r.bandwidth_gbs = copy_gbs;
        r.bytes_min = nzb_min_bytes(info.rows, info.cols, info.nnz, 8, c->value_type);
        r.bytes_stored = info.bytes + (size_t)info.cols * vs + (size_t)info.rows * vs;
        r.resident = llc_bytes > 0 && r.bytes_min <= llc_bytes;
        run_plan(ctx, c, c->A, NZ_ALG_AUTO, runs, y, &r);
        failed += r.status == NZB_FAILED;
        nzb_report_row(rep, &r);
    }
    nz_matrix_destroy(&converted);
    free(y);
    return failed;
}
