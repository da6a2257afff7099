/* bench_extra_common.cu: the transpose / SpMM benchmark's rows, timing, cuSPARSE calls, references and cases. */
#include "bench_extra_internal.h"
#include "bench.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- rows ----------------------------------------------------------------------------------- */

void nzb_extra_print_row(nzb_extra_t *b, const nzb_extra_row_t *r) {
    char time[32] = "-", gbs[32] = "-", plan[32] = "-", best[32] = "-", speedup[32] = "-";
    if (r->seconds > 0) {
        snprintf(time, sizeof time, "%.1f", r->seconds * 1e6);
        snprintf(gbs, sizeof gbs, "%.1f", r->gbs);
    }
    if (r->plan_seconds > 0) snprintf(plan, sizeof plan, "%.2f", r->plan_seconds * 1e3);
    if (r->best[0] != '\0' && r->best_seconds > 0) {
        snprintf(best, sizeof best, "%.1f", r->best_seconds * 1e6);
        if (r->seconds > 0) snprintf(speedup, sizeof speedup, "%.2f", r->best_seconds / r->seconds);
    }
    fprintf(b->out, "%-16s %-2c %3lld %-4s %-26s %10s %8s %9s %-18s %10s %7s  %s%s%s\n", r->matrix,
            r->op, (long long)r->k, r->layout, r->kernel, time, gbs, plan,
            r->best[0] ? r->best : "-", best, speedup, r->check, r->note[0] ? ": " : "", r->note);
    fflush(b->out);
    if (b->csv != NULL)
        fprintf(b->csv, "%s,%c,%lld,%s,%s,%.9g,%.6g,%.9g,%s,%.9g,%.6g,%s,\"%s\"\n", r->matrix, r->op,
                (long long)r->k, r->layout, r->kernel, r->seconds, r->gbs, r->plan_seconds,
                r->best, r->best_seconds,
                r->seconds > 0 && r->best_seconds > 0 ? r->best_seconds / r->seconds : 0.0,
                r->check, r->note);
    if (strcmp(r->check, "ok") != 0 && strcmp(r->check, "refused") != 0) b->failures++;
}

void nzb_extra_print_header(nzb_extra_t *b) {
    fprintf(b->out, "%-16s %-2s %3s %-4s %-26s %10s %8s %9s %-18s %10s %7s  %s\n", "matrix", "op",
            "k", "lay", "kernel", "time_us", "GB/s", "plan_ms", "cusparse_best", "best_us",
            "speedup", "check");
    if (b->csv != NULL)
        fprintf(b->csv, "matrix,op,k,layout,kernel,seconds,gbs,plan_seconds,cusparse_best,"
                        "cusparse_seconds,speedup,check,note\n");
}

void nzb_extra_row_start(nzb_extra_row_t *r, const nzb_extra_case_t *c, char op, int64_t k,
                         const char *layout, const char *kernel) {
    memset(r, 0, sizeof *r);
    r->matrix = c->name;
    r->op = op;
    r->k = k;
    r->layout = layout;
    snprintf(r->kernel, sizeof r->kernel, "%s", kernel);
}

/* ---- timing and checks ---------------------------------------------------------------------- */

static int time_launch(nzb_extra_t *b, nzb_extra_launch_fn fn, void *arg, double *median, char *msg,
                       size_t n) {
    double samples[1024];
    int runs = b->runs < 1024 ? b->runs : 1024;
    for (int i = 0; i < EXTRA_WARMUP; i++)
        if (fn(arg, msg, n) != 0) return 1;
    for (int i = 0; i < runs; i++) {
        cudaEventRecord(b->starts[i], b->stream);
        if (fn(arg, msg, n) != 0) return 1;
        cudaEventRecord(b->stops[i], b->stream);
    }
    cudaError_t err = cudaStreamSynchronize(b->stream);
    if (err != cudaSuccess) {
        snprintf(msg, n, "%s", cudaGetErrorString(err));
        return 1;
    }
    for (int i = 0; i < runs; i++) {
        float ms = 0;
        cudaEventElapsedTime(&ms, b->starts[i], b->stops[i]);
        samples[i] = 1e-3 * (double)ms;
    }
    *median = nzb_median(samples, runs);
    return 0;
}

/* Check the first k columns of Y (layout, ld) against ref (n x kref, row-major). */
static int verify(const double *ref, const double *bound, const int64_t *len, int64_t kref,
                  const void *Y, nz_value_type_t vt, int64_t n, int64_t k, int row_major,
                  int64_t ld, char *msg, size_t msg_size) {
    const double eps = vt == NZ_F32 ? FLT_EPSILON : DBL_EPSILON;
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < k; c++) {
            const double y = nzb_value_get(Y, vt, row_major ? r * ld + c : c * ld + r);
            const double e = ref[r * kref + c], m = bound[r * kref + c];
            bool ok;
            if (!isfinite(e) || !isfinite(m))
                ok = !isfinite(y) || isnan(e) == isnan(y);
            else
                ok = fabs(y - e) <= EXTRA_TOL_FACTOR * eps * (double)(len[r] + 2) * m + 1e-300;
            if (!ok) {
                snprintf(msg, msg_size, "Y[%lld, %lld] = %.10g, reference %.10g", (long long)r,
                         (long long)c, y, e);
                return 1;
            }
        }
    return 0;
}

int nzb_extra_measure(nzb_extra_t *b, nzb_extra_row_t *r, nzb_extra_launch_fn fn, void *arg,
                      const nzb_extra_output_t *out) {
    if (time_launch(b, fn, arg, &r->seconds, r->note, sizeof r->note) != 0) {
        r->check = "error";
        r->seconds = 0;
        return 0;
    }
    cudaMemcpy(out->host, out->device, out->copy_bytes, cudaMemcpyDeviceToHost);
    r->check = verify(out->ref, out->bound, out->len, out->kref, out->host, b->vt, out->n, out->k,
                      out->row_major, out->ld, r->note, sizeof r->note)
                   ? "WRONG"
                   : "ok";
    r->gbs = (double)out->bytes / r->seconds * 1e-9;
    return strcmp(r->check, "ok") == 0;
}

/* ---- launches ------------------------------------------------------------------------------- */

int nzb_extra_run_spmv(void *arg, char *msg, size_t n) {
    nzb_extra_spmv_t *o = (nzb_extra_spmv_t *)arg;
    if (nz_spmv_execute(o->plan, 1.0, o->x, 0.0, o->y) == NZ_SUCCESS) return 0;
    snprintf(msg, n, "%s", nz_context_last_error(o->ctx));
    return 1;
}

int nzb_extra_run_spmm(void *arg, char *msg, size_t n) {
    nzb_extra_spmm_t *o = (nzb_extra_spmm_t *)arg;
    if (nz_spmm_execute(o->plan, 1.0, o->X, o->ldx, 0.0, o->Y, o->ldy) == NZ_SUCCESS) return 0;
    snprintf(msg, n, "%s", nz_context_last_error(o->ctx));
    return 1;
}

static const void *scalar_one(const nzb_extra_t *b) {
    static const float one_f = 1.0f;
    static const double one_d = 1.0;
    return b->vt == NZ_F32 ? (const void *)&one_f : (const void *)&one_d;
}
static const void *scalar_zero(const nzb_extra_t *b) {
    static const float zero_f = 0.0f;
    static const double zero_d = 0.0;
    return b->vt == NZ_F32 ? (const void *)&zero_f : (const void *)&zero_d;
}
static cudaDataType data_type(const nzb_extra_t *b) {
    return b->vt == NZ_F32 ? CUDA_R_32F : CUDA_R_64F;
}

static int run_cusparse(void *arg, char *msg, size_t n) {
    nzb_extra_cusparse_t *c = (nzb_extra_cusparse_t *)arg;
    nzb_extra_t *b = c->b;
    cusparseStatus_t s =
        c->spmm ? cusparseSpMM(b->handle, c->op, CUSPARSE_OPERATION_NON_TRANSPOSE, scalar_one(b),
                               c->mat, c->mx, scalar_zero(b), c->my, data_type(b), c->spmm_alg,
                               c->buffer)
                : cusparseSpMV(b->handle, c->op, scalar_one(b), c->mat, c->vx, scalar_zero(b),
                               c->vy, data_type(b), c->spmv_alg, c->buffer);
    if (s == CUSPARSE_STATUS_SUCCESS) return 0;
    snprintf(msg, n, "%s", cusparseGetErrorString(s));
    return 1;
}

/* ---- cuSPARSE ------------------------------------------------------------------------------- */

/* Buffer size, buffer, preprocess: their wall time (to the end of the preprocessing on the
 * stream) is the plan time, as nz_spmv_plan_info's plan_seconds is for ours. Non-zero =
 * refused. */
static int cusparse_prepare(nzb_extra_cusparse_t *c, double *plan_seconds, char *msg, size_t n) {
    nzb_extra_t *b = c->b;
    size_t bytes = 0;
    cusparseStatus_t s;
    const double t0 = nzb_wtime();
    s = c->spmm ? cusparseSpMM_bufferSize(b->handle, c->op, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                          scalar_one(b), c->mat, c->mx, scalar_zero(b), c->my,
                                          data_type(b), c->spmm_alg, &bytes)
                : cusparseSpMV_bufferSize(b->handle, c->op, scalar_one(b), c->mat, c->vx,
                                          scalar_zero(b), c->vy, data_type(b), c->spmv_alg, &bytes);
    if (s != CUSPARSE_STATUS_SUCCESS) {
        snprintf(msg, n, "buffer size: %s", cusparseGetErrorString(s));
        return 1;
    }
    if (cudaMalloc(&c->buffer, bytes > 0 ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(msg, n, "cannot allocate %zu buffer bytes", bytes);
        return 1;
    }
    s = c->spmm ? cusparseSpMM_preprocess(b->handle, c->op, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                          scalar_one(b), c->mat, c->mx, scalar_zero(b), c->my,
                                          data_type(b), c->spmm_alg, c->buffer)
                : cusparseSpMV_preprocess(b->handle, c->op, scalar_one(b), c->mat, c->vx,
                                          scalar_zero(b), c->vy, data_type(b), c->spmv_alg,
                                          c->buffer);
    if (s != CUSPARSE_STATUS_SUCCESS) {
        snprintf(msg, n, "preprocess: %s", cusparseGetErrorString(s));
        return 1;
    }
    if (cudaStreamSynchronize(b->stream) != cudaSuccess) {
        snprintf(msg, n, "preprocess: %s", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    *plan_seconds = nzb_wtime() - t0;
    return 0;
}

int nzb_extra_cusparse_matrix(const nzb_extra_t *b, const nzb_extra_case_t *c,
                              cusparseConstSpMatDescr_t *mat) {
    return cusparseCreateConstCsr(mat, c->rows, c->cols, c->nnz, c->c_offsets, c->c_columns,
                                  c->c_values, c->c_offset_type, CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_BASE_ZERO, data_type(b)) != CUSPARSE_STATUS_SUCCESS;
}

void nzb_extra_cusparse_row(nzb_extra_t *b, nzb_extra_row_t *r, nzb_extra_cusparse_t *call,
                            int made, const nzb_extra_output_t *out, double *best,
                            char *best_name, size_t best_name_size) {
    if (!made) {
        r->check = "error";
        snprintf(r->note, sizeof r->note, "cuSPARSE descriptors");
    } else if (cusparse_prepare(call, &r->plan_seconds, r->note, sizeof r->note) != 0) {
        r->check = "refused";
    } else if (nzb_extra_measure(b, r, run_cusparse, call, out) &&
               (*best == 0 || r->seconds < *best)) {
        *best = r->seconds;
        snprintf(best_name, best_name_size, "%s", r->kernel + strlen("cusparse/"));
    }
    nzb_extra_print_row(b, r);
    if (call->buffer != NULL) cudaFree(call->buffer);
    if (call->vy != NULL) cusparseDestroyDnVec(call->vy);
    if (call->vx != NULL) cusparseDestroyDnVec(call->vx);
    if (call->my != NULL) cusparseDestroyDnMat(call->my);
    if (call->mx != NULL) cusparseDestroyDnMat(call->mx);
    if (call->mat != NULL) cusparseDestroySpMat(call->mat);
}

/* ---- references and cases ------------------------------------------------------------------- */

double nzb_extra_input_value(int64_t r, int64_t c, nz_value_type_t vt) {
    uint64_t z = (uint64_t)r * 0x9E3779B97F4A7C15ull + (uint64_t)(c + 1) * 0xBF58476D1CE4E5B9ull;
    z ^= z >> 31;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 29;
    double v = (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    return vt == NZ_F32 ? (double)(float)v : v;
}

void nzb_extra_reference(const nzb_extra_case_t *c, nz_value_type_t vt, int transpose, int64_t k,
                         double *ref, double *bound, int64_t *len) {
    int64_t n = transpose ? c->cols : c->rows;
    memset(ref, 0, (size_t)n * (size_t)k * sizeof(double));
    memset(bound, 0, (size_t)n * (size_t)k * sizeof(double));
    memset(len, 0, (size_t)n * sizeof(int64_t));
    double *x = (double *)malloc((size_t)k * sizeof(double));
    for (int64_t i = 0; i < c->rows; i++)
        for (int64_t p = c->offsets[i]; p < c->offsets[i + 1]; p++) {
            const double a = nzb_value_get(c->values, vt, p);
            const int64_t in = transpose ? i : c->columns[p], out = transpose ? c->columns[p] : i;
            for (int64_t col = 0; col < k; col++) x[col] = nzb_extra_input_value(in, col, vt);
            for (int64_t col = 0; col < k; col++) {
                ref[out * k + col] += a * x[col];
                bound[out * k + col] += fabs(a * x[col]);
            }
            len[out]++;
        }
    free(x);
}

int nzb_extra_case_open(nzb_extra_t *b, nzb_extra_case_t *c, const char *name, nz_matrix_t *A,
                        char *msg, size_t n) {
    nz_matrix_info_t info;
    memset(c, 0, sizeof *c);
    c->name = name;
    c->A = A;
    nz_matrix_info(b->ctx, &info, A);
    c->rows = info.rows;
    c->cols = info.cols;
    c->nnz = info.nnz;
    if (nz_matrix_csr_arrays(b->ctx, &c->offsets, &c->columns, &c->values, A) != NZ_SUCCESS ||
        nz_matrix_to_device(b->ctx, &c->dA, A, NZ_INDEX_AUTO) != NZ_SUCCESS) {
        snprintf(msg, n, "%s", nz_context_last_error(b->ctx));
        return 1;
    }
    /* device SELL-32 (sigma 1) when this build can put SELL on the device */
    nz_matrix_t *S = NULL;
    nz_format_options_t options;
    memset(&options, 0, sizeof options);
    if (nz_matrix_convert(b->ctx, &S, A, NZ_FORMAT_SELL, &options) == NZ_SUCCESS &&
        nz_matrix_to_device(b->ctx, &c->dsell, S, NZ_INDEX_AUTO) != NZ_SUCCESS)
        c->dsell = NULL;
    nz_matrix_destroy(&S);

    const bool narrow = c->nnz <= INT32_MAX;
    const size_t offset_size = narrow ? 4 : 8;
    c->c_offset_type = narrow ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
    c->matrix_bytes = (size_t)(c->rows + 1) * offset_size + (size_t)c->nnz * (4 + b->vs);
    void *offsets = malloc((size_t)(c->rows + 1) * offset_size);
    for (int64_t i = 0; i <= c->rows; i++) {
        if (narrow)
            ((int32_t *)offsets)[i] = (int32_t)c->offsets[i];
        else
            ((int64_t *)offsets)[i] = c->offsets[i];
    }
    cudaError_t err;
    if ((err = cudaMalloc(&c->c_offsets, (size_t)(c->rows + 1) * offset_size)) != cudaSuccess ||
        (err = cudaMalloc(&c->c_columns, (size_t)(c->nnz > 0 ? c->nnz : 1) * 4)) != cudaSuccess ||
        (err = cudaMalloc(&c->c_values, (size_t)(c->nnz > 0 ? c->nnz : 1) * b->vs)) != cudaSuccess ||
        (err = cudaMemcpy(c->c_offsets, offsets, (size_t)(c->rows + 1) * offset_size,
                          cudaMemcpyHostToDevice)) != cudaSuccess ||
        (err = cudaMemcpy(c->c_columns, c->columns, (size_t)c->nnz * 4, cudaMemcpyHostToDevice)) !=
            cudaSuccess ||
        (err = cudaMemcpy(c->c_values, c->values, (size_t)c->nnz * b->vs,
                          cudaMemcpyHostToDevice)) != cudaSuccess) {
        free(offsets);
        snprintf(msg, n, "cuSPARSE copy: %s", cudaGetErrorString(err));
        return 1;
    }
    free(offsets);
    return 0;
}

void nzb_extra_case_close(nzb_extra_case_t *c) {
    nz_matrix_destroy(&c->dsell);
    nz_matrix_destroy(&c->dA);
    nz_matrix_destroy(&c->A);
    if (c->c_offsets != NULL) cudaFree(c->c_offsets);
    if (c->c_columns != NULL) cudaFree(c->c_columns);
    if (c->c_values != NULL) cudaFree(c->c_values);
}
