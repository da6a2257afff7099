/* bench_common.c: helpers shared by the CPU and GPU benchmark drivers: rates, verification, filters. */
#include "bench.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void nzb_case_advice(nz_context_t *ctx, nzb_case_t *c, nz_backend_t backend) {
    nz_matrix_stats_t stats;
    nz_format_t format;
    nz_alg_t alg;
    c->advice[0] = '\0';
    if (nz_matrix_stats(ctx, &stats, c->A) == NZ_SUCCESS &&
        nz_spmv_plan_choose(&format, &alg, NULL, 0, &stats, backend, NZ_FORMAT_COUNT, 0) ==
            NZ_SUCCESS)
        snprintf(c->advice, sizeof c->advice, "%s/%s", nz_format_name(format), nz_alg_name(alg));
}

void nzb_plan_choice_note(char *note, size_t size, const nz_spmv_plan_info_t *info) {
    snprintf(note, size, "planner chose %s%s%s%s%s", nz_alg_name(info->alg),
             (info->flags & NZ_PLAN_CACHE_HINTS) ? "+hints" : "",
             (info->flags & NZ_PLAN_COLUMN_PANELS) ? "+panels" : "",
             (info->flags & NZ_PLAN_REORDER) ? "+reorder" : "",
             (info->flags & NZ_PLAN_COMPRESS_INDICES) ? "+compressed" : "");
}

void nzb_result_init(nzb_result_t *r, const nzb_case_t *c, const char *kernel) {
    memset(r, 0, sizeof *r);
    snprintf(r->matrix, sizeof r->matrix, "%s", c->name);
    snprintf(r->kernel, sizeof r->kernel, "%s", kernel);
    r->generated = c->generated;
    r->large = c->large;
    nz_matrix_info_t info;
    if (nz_matrix_info(c->ctx, &info, c->A) == NZ_SUCCESS) {
        r->rows = info.rows;
        r->cols = info.cols;
        r->nnz = info.nnz;
    }
    r->value_type = c->value_type;
    snprintf(r->advice, sizeof r->advice, "%s", c->advice);
    r->status = NZB_OK;
}

void nzb_result_rates(nzb_result_t *r) {
    double t = r->median_seconds;
    if (!(t > 0)) return;
    r->gflops = 2.0 * (double)r->nnz / t * 1e-9;
    r->gbs_min = (double)r->bytes_min / t * 1e-9;
    r->gbs_stored = (double)r->bytes_stored / t * 1e-9;
    r->pct_bandwidth = r->bandwidth_gbs > 0 ? 100.0 * r->gbs_min / r->bandwidth_gbs : 0;
}

size_t nzb_min_bytes(int64_t rows, int64_t cols, int64_t nnz, size_t offset_width,
                     nz_value_type_t value_type) {
    size_t vs = value_type == NZ_F32 ? 4 : 8;
    return (size_t)(rows + 1) * offset_width + (size_t)nnz * (4 + vs) + (size_t)cols * vs +
           (size_t)rows * vs;
}

void nzb_poison(void *y, nz_value_type_t value_type, int64_t n) {
    if (value_type == NZ_F32)
        for (int64_t i = 0; i < n; i++) ((float *)y)[i] = NAN;
    else
        for (int64_t i = 0; i < n; i++) ((double *)y)[i] = NAN;
}

/* Row i passes when |y_i - ref_i| <= 2 (len_i + 2) eps sum_j |a_ij x_j|: the bound on any
 * summation order of len_i products in the storage precision (Higham, ch. 3), doubled for slack.
 * A NaN (an unwritten row) fails. The reported error is relative to that magnitude, so
 * cancellation in a row does not make a correct kernel look wrong. */
void nzb_verify(nzb_result_t *r, const nzb_case_t *c, const void *y) {
    const double eps = c->value_type == NZ_F32 ? (double)FLT_EPSILON : DBL_EPSILON;
    const int64_t rows = r->rows;
    double max_error = 0;
    int64_t bad = 0, first_bad = -1;
    double first_value = 0;
    /* Self-test of this check (tests/cli/test_bench.sh): NZ_BENCH_CORRUPT=<kernel> makes the
     * middle row of that kernel's output read as 1 too large. */
    const char *corrupt = getenv("NZ_BENCH_CORRUPT");
    int64_t corrupt_row = corrupt != NULL && strcmp(corrupt, r->kernel) == 0 ? rows / 2 : -1;
    for (int64_t i = 0; i < rows; i++) {
        double yi = c->value_type == NZ_F32 ? (double)((const float *)y)[i] : ((const double *)y)[i];
        if (i == corrupt_row) yi += 1.0;
        if (!isfinite(c->y_ref[i])) {
            /* A NaN or Inf in A (some test matrices carry them) gives the same class of result
             * in any summation order: require exactly that, and leave it out of max_error. */
            int same = isnan(c->y_ref[i]) ? isnan(yi) : yi == c->y_ref[i];
            if (!same && bad++ == 0) {
                first_bad = i;
                first_value = yi;
            }
            continue;
        }
        double diff = fabs(yi - c->y_ref[i]);
        double scale = c->bound[i] > DBL_MIN ? c->bound[i] : DBL_MIN;
        double err = diff / scale;
        if (isnan(yi) || isnan(diff)) err = INFINITY;
        if (err > max_error) max_error = err;
        double tol = 2.0 * (double)(c->row_length[i] + 2) * eps * c->bound[i];
        if (!(diff <= tol)) {
            if (bad++ == 0) {
                first_bad = i;
                first_value = yi;
            }
        }
    }
    r->max_error = max_error;
    r->checked = 1;
    if (bad > 0) {
        r->status = NZB_FAILED;
        snprintf(r->note, sizeof r->note,
                 "WRONG RESULT: %lld bad rows, first row %lld: got %.9g, expected %.9g",
                 (long long)bad, (long long)first_bad, first_value, c->y_ref[first_bad]);
    }
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double nzb_median(double *values, int n) {
    if (n <= 0) return 0;
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* A filter matches the algorithm name ("merge"), the format name ("sell") or the pair
 * ("sell/simd"). */
int nzb_selected(const nzb_options_t *options, nz_format_t format, nz_alg_t alg) {
    if (options->num_filters == 0) return 1;
    char pair[NZB_NAME_SIZE];
    snprintf(pair, sizeof pair, "%s/%s", nz_format_name(format), nz_alg_name(alg));
    for (int i = 0; i < options->num_filters; i++) {
        const char *f = options->filters[i];
        if (strcmp(f, nz_alg_name(alg)) == 0 || strcmp(f, nz_format_name(format)) == 0 ||
            strcmp(f, pair) == 0)
            return 1;
    }
    return 0;
}

double nzb_wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
