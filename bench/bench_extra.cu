/* bench_extra.cu: transpose SpMV and SpMM (k right-hand sides, both layouts) on the GPU, Nonzero vs cuSPARSE. */
#include "bench_extra.h"
#include "bench.h"
#include "safe_output.h"

#include <cuda_runtime.h>
#include <cusparse.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Everything runs on one stream of our own: the Nonzero context is bound to it
 * (nz_context_set_device(ctx, 0, stream)) and so is the cuSPARSE handle, so a pair of events
 * around a call times exactly that call. Each kernel: 3 untimed runs, then `runs` runs each
 * between its own pair of events, median reported. cuSPARSE gets its own copy of the CSR arrays
 * (32-bit offsets when they fit), made with the CUDA runtime from nz_matrix_csr_arrays, so the
 * benchmark uses only the public API of Nonzero.
 */

#define EXTRA_WARMUP 3
#define EXTRA_MIN_RUNS 20
#define EXTRA_TOL_FACTOR 4.0

typedef struct bench {
    FILE *out, *csv;
    nzu_output_t csv_out; /* replaced only when complete (safe_output.h) */
    nz_context_t *ctx;
    cudaStream_t stream;
    cusparseHandle_t handle;
    cudaEvent_t *starts, *stops;
    int runs;
    nz_value_type_t vt;
    size_t vs;
    int failures;
} bench_t;

/* One row of the report. */
typedef struct row {
    const char *matrix;
    char op;
    int64_t k;
    const char *layout;
    char kernel[48];
    double seconds;     /* median; 0 = did not run */
    double gbs;
    double plan_seconds;
    char best[32];      /* best cuSPARSE kernel of the group ("" for cuSPARSE rows) */
    double best_seconds;
    const char *check;  /* "ok", "WRONG", "refused", "error" */
    char note[160];
} row_t;

static void print_row(bench_t *b, const row_t *r) {
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

static void print_header(bench_t *b) {
    fprintf(b->out, "%-16s %-2s %3s %-4s %-26s %10s %8s %9s %-18s %10s %7s  %s\n", "matrix", "op",
            "k", "lay", "kernel", "time_us", "GB/s", "plan_ms", "cusparse_best", "best_us",
            "speedup", "check");
    if (b->csv != NULL)
        fprintf(b->csv, "matrix,op,k,layout,kernel,seconds,gbs,plan_seconds,cusparse_best,"
                        "cusparse_seconds,speedup,check,note\n");
}

/* ---- timing ---------------------------------------------------------------------------------- */

/* Enqueue one execution on the stream; 0 or non-zero with a reason in msg. */
typedef int (*launch_fn)(void *arg, char *msg, size_t msg_size);

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int time_launch(bench_t *b, launch_fn fn, void *arg, double *median, char *msg, size_t n) {
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
    qsort(samples, (size_t)runs, sizeof(double), compare_doubles);
    *median = runs % 2 ? samples[runs / 2] : 0.5 * (samples[runs / 2 - 1] + samples[runs / 2]);
    return 0;
}

/* ---- launches ------------------------------------------------------------------------------- */

typedef struct ours_spmv {
    nz_spmv_plan_t *plan;
    nz_context_t *ctx;
    const void *x;
    void *y;
} ours_spmv_t;

static int run_ours_spmv(void *arg, char *msg, size_t n) {
    ours_spmv_t *o = (ours_spmv_t *)arg;
    if (nz_spmv_execute(o->plan, 1.0, o->x, 0.0, o->y) == NZ_SUCCESS) return 0;
    snprintf(msg, n, "%s", nz_context_last_error(o->ctx));
    return 1;
}

typedef struct ours_spmm {
    nz_spmm_plan_t *plan;
    nz_context_t *ctx;
    const void *X;
    int64_t ldx;
    void *Y;
    int64_t ldy;
} ours_spmm_t;

static int run_ours_spmm(void *arg, char *msg, size_t n) {
    ours_spmm_t *o = (ours_spmm_t *)arg;
    if (nz_spmm_execute(o->plan, 1.0, o->X, o->ldx, 0.0, o->Y, o->ldy) == NZ_SUCCESS) return 0;
    snprintf(msg, n, "%s", nz_context_last_error(o->ctx));
    return 1;
}

typedef struct cusp_call {
    bench_t *b;
    int spmm;
    cusparseOperation_t op;
    cusparseConstSpMatDescr_t mat;
    cusparseConstDnVecDescr_t vx;
    cusparseDnVecDescr_t vy;
    cusparseConstDnMatDescr_t mx;
    cusparseDnMatDescr_t my;
    cusparseSpMVAlg_t spmv_alg;
    cusparseSpMMAlg_t spmm_alg;
    void *buffer;
} cusp_call_t;

static const void *scalar_one(const bench_t *b) {
    static const float one_f = 1.0f;
    static const double one_d = 1.0;
    return b->vt == NZ_F32 ? (const void *)&one_f : (const void *)&one_d;
}
static const void *scalar_zero(const bench_t *b) {
    static const float zero_f = 0.0f;
    static const double zero_d = 0.0;
    return b->vt == NZ_F32 ? (const void *)&zero_f : (const void *)&zero_d;
}
static cudaDataType data_type(const bench_t *b) { return b->vt == NZ_F32 ? CUDA_R_32F : CUDA_R_64F; }

static int run_cusparse(void *arg, char *msg, size_t n) {
    cusp_call_t *c = (cusp_call_t *)arg;
    bench_t *b = c->b;
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

static double wall_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Buffer size, buffer, preprocess: their wall time (to the end of the preprocessing on the
 * stream) is the plan time, as nz_spmv_plan_info's plan_seconds is for ours. Non-zero =
 * refused. */
static int cusparse_prepare(cusp_call_t *c, double *plan_seconds, char *msg, size_t n) {
    bench_t *b = c->b;
    size_t bytes = 0;
    cusparseStatus_t s;
    const double t0 = wall_seconds();
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
    *plan_seconds = wall_seconds() - t0;
    return 0;
}

/* ---- the case: a host CSR matrix, its device copies and references -------------------------- */

typedef struct bcase {
    const char *name;
    nz_matrix_t *A;       /* host CSR */
    nz_matrix_t *dA;      /* Nonzero device copy */
    nz_matrix_t *dsell;   /* device SELL-32 copy, or NULL when device SELL is unavailable */
    int64_t rows, cols, nnz;
    const int64_t *offsets;
    const int32_t *columns;
    const void *values;
    void *c_offsets, *c_columns, *c_values; /* cuSPARSE's copy */
    cusparseIndexType_t c_offset_type;
    size_t matrix_bytes;  /* minimal CSR bytes: 32-bit offsets + nnz (index + value) */
} bcase_t;

/* Deterministic values in [-1, 1) for column c of a dense operand, rounded to the value type. */
static double input_value(int64_t r, int64_t c, nz_value_type_t vt) {
    uint64_t z = (uint64_t)r * 0x9E3779B97F4A7C15ull + (uint64_t)(c + 1) * 0xBF58476D1CE4E5B9ull;
    z ^= z >> 31;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 29;
    double v = (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    return vt == NZ_F32 ? (double)(float)v : v;
}

static void store(void *a, nz_value_type_t vt, int64_t i, double v) {
    if (vt == NZ_F32)
        ((float *)a)[i] = (float)v;
    else
        ((double *)a)[i] = v;
}
static double load(const void *a, nz_value_type_t vt, int64_t i) {
    return vt == NZ_F32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

/* References in double for k columns (input column c = input_value(., c)): op N, Y_ref[r k + c]
 * = sum_j a_rj x_jc; op T, over the transpose. bound: sum |a x|, len: terms. */
static void reference(const bcase_t *c, nz_value_type_t vt, int transpose, int64_t k, double *ref,
                      double *bound, int64_t *len) {
    int64_t n = transpose ? c->cols : c->rows;
    memset(ref, 0, (size_t)n * (size_t)k * sizeof(double));
    memset(bound, 0, (size_t)n * (size_t)k * sizeof(double));
    memset(len, 0, (size_t)n * sizeof(int64_t));
    double *x = (double *)malloc((size_t)k * sizeof(double));
    for (int64_t i = 0; i < c->rows; i++)
        for (int64_t p = c->offsets[i]; p < c->offsets[i + 1]; p++) {
            const double a = load(c->values, vt, p);
            const int64_t in = transpose ? i : c->columns[p], out = transpose ? c->columns[p] : i;
            for (int64_t col = 0; col < k; col++) x[col] = input_value(in, col, vt);
            for (int64_t col = 0; col < k; col++) {
                ref[out * k + col] += a * x[col];
                bound[out * k + col] += fabs(a * x[col]);
            }
            len[out]++;
        }
    free(x);
}

/* Check the first k columns of Y (layout, ld) against ref (n x kref, row-major). */
static int verify(const double *ref, const double *bound, const int64_t *len, int64_t kref,
                  const void *Y, nz_value_type_t vt, int64_t n, int64_t k, int row_major,
                  int64_t ld, char *msg, size_t msg_size) {
    const double eps = vt == NZ_F32 ? FLT_EPSILON : DBL_EPSILON;
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < k; c++) {
            const double y = load(Y, vt, row_major ? r * ld + c : c * ld + r);
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

/* ---- transpose ------------------------------------------------------------------------------ */

static void bench_transpose(bench_t *b, bcase_t *c) {
    const size_t vs = b->vs;
    const int64_t n_in = c->rows, n_out = c->cols;
    void *hx = malloc((size_t)(n_in > 0 ? n_in : 1) * vs), *hy = malloc((size_t)(n_out > 0 ? n_out : 1) * vs);
    double *ref = (double *)malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof(double));
    double *bound = (double *)malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof(double));
    int64_t *len = (int64_t *)malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof(int64_t));
    void *dx = NULL, *dy = NULL;
    const size_t bytes = c->matrix_bytes + (size_t)(n_in + n_out) * vs;
    double best = 0;
    char best_name[32] = "";
    row_t r;

    for (int64_t i = 0; i < n_in; i++) store(hx, b->vt, i, input_value(i, 0, b->vt));
    reference(c, b->vt, 1, 1, ref, bound, len);
    cudaMalloc(&dx, (size_t)(n_in > 0 ? n_in : 1) * vs);
    cudaMalloc(&dy, (size_t)(n_out > 0 ? n_out : 1) * vs);
    cudaMemcpy(dx, hx, (size_t)n_in * vs, cudaMemcpyHostToDevice);

    /* cuSPARSE transpose SpMV, ALG1 and ALG2 */
    const struct {
        cusparseSpMVAlg_t alg;
        const char *name;
    } cusp[] = {{CUSPARSE_SPMV_CSR_ALG1, "cusparse/csr_alg1"},
                {CUSPARSE_SPMV_CSR_ALG2, "cusparse/csr_alg2"}};
    for (size_t a = 0; a < sizeof cusp / sizeof cusp[0]; a++) {
        cusp_call_t call;
        memset(&call, 0, sizeof call);
        memset(&r, 0, sizeof r);
        r.matrix = c->name;
        r.op = 'T';
        r.k = 1;
        r.layout = "-";
        snprintf(r.kernel, sizeof r.kernel, "%s", cusp[a].name);
        call.b = b;
        call.op = CUSPARSE_OPERATION_TRANSPOSE;
        call.spmv_alg = cusp[a].alg;
        if (cusparseCreateConstCsr(&call.mat, c->rows, c->cols, c->nnz, c->c_offsets, c->c_columns,
                                   c->c_values, c->c_offset_type, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_BASE_ZERO, data_type(b)) != CUSPARSE_STATUS_SUCCESS ||
            cusparseCreateConstDnVec(&call.vx, n_in, dx, data_type(b)) != CUSPARSE_STATUS_SUCCESS ||
            cusparseCreateDnVec(&call.vy, n_out, dy, data_type(b)) != CUSPARSE_STATUS_SUCCESS) {
            r.check = "error";
            snprintf(r.note, sizeof r.note, "cuSPARSE descriptors");
        } else if (cusparse_prepare(&call, &r.plan_seconds, r.note, sizeof r.note) != 0) {
            r.check = "refused";
        } else if (time_launch(b, run_cusparse, &call, &r.seconds, r.note, sizeof r.note) != 0) {
            r.check = "error";
            r.seconds = 0;
        } else {
            cudaMemcpy(hy, dy, (size_t)n_out * vs, cudaMemcpyDeviceToHost);
            r.check = verify(ref, bound, len, 1, hy, b->vt, n_out, 1, 1, 1, r.note, sizeof r.note)
                          ? "WRONG" : "ok";
            r.gbs = (double)bytes / r.seconds * 1e-9;
            if (strcmp(r.check, "ok") == 0 && (best == 0 || r.seconds < best)) {
                best = r.seconds;
                snprintf(best_name, sizeof best_name, "%s", cusp[a].name + 9);
            }
        }
        print_row(b, &r);
        if (call.buffer != NULL) cudaFree(call.buffer);
        if (call.vy != NULL) cusparseDestroyDnVec(call.vy);
        if (call.vx != NULL) cusparseDestroyDnVec(call.vx);
        if (call.mat != NULL) cusparseDestroySpMat(call.mat);
    }

    /* ours: cached transpose with merge and vector, and the atomic scatter */
    const struct {
        nz_alg_t alg;
        const char *name;
    } ours[] = {{NZ_ALG_MERGE, "csr/merge (cached A^T)"},
                {NZ_ALG_VECTOR, "csr/vector (cached A^T)"},
                {NZ_ALG_ATOMIC, "csr/atomic (scatter)"}};
    for (size_t a = 0; a < sizeof ours / sizeof ours[0]; a++) {
        memset(&r, 0, sizeof r);
        r.matrix = c->name;
        r.op = 'T';
        r.k = 1;
        r.layout = "-";
        snprintf(r.kernel, sizeof r.kernel, "%s", ours[a].name);
        snprintf(r.best, sizeof r.best, "%s", best_name);
        r.best_seconds = best;
        nz_spmv_plan_t *plan = NULL;
        if (nz_spmv_plan_create(b->ctx, &plan, c->dA, NZ_OP_T, ours[a].alg, 0) != NZ_SUCCESS) {
            r.check = "error";
            snprintf(r.note, sizeof r.note, "%s", nz_context_last_error(b->ctx));
        } else {
            nz_spmv_plan_info_t info;
            nz_spmv_plan_info(plan, &info);
            r.plan_seconds = info.plan_seconds;
            ours_spmv_t o = {plan, b->ctx, dx, dy};
            if (time_launch(b, run_ours_spmv, &o, &r.seconds, r.note, sizeof r.note) != 0) {
                r.check = "error";
                r.seconds = 0;
            } else {
                cudaMemcpy(hy, dy, (size_t)n_out * vs, cudaMemcpyDeviceToHost);
                r.check = verify(ref, bound, len, 1, hy, b->vt, n_out, 1, 1, 1, r.note,
                                 sizeof r.note) ? "WRONG" : "ok";
                r.gbs = (double)bytes / r.seconds * 1e-9;
            }
        }
        nz_spmv_plan_destroy(&plan);
        print_row(b, &r);
    }
    cudaFree(dx);
    cudaFree(dy);
    free(hx);
    free(hy);
    free(ref);
    free(bound);
    free(len);
}

/* ---- SpMM ----------------------------------------------------------------------------------- */

static void bench_spmm(bench_t *b, bcase_t *c, const int64_t *ks, int num_ks) {
    const size_t vs = b->vs;
    int64_t kmax = 1;
    for (int i = 0; i < num_ks; i++)
        if (ks[i] > kmax) kmax = ks[i];
    const int64_t xr = c->cols > 0 ? c->cols : 1, yr = c->rows > 0 ? c->rows : 1;
    void *hX = malloc((size_t)(xr * kmax) * vs), *hY = malloc((size_t)(yr * kmax) * vs);
    double *ref = (double *)malloc((size_t)(yr * kmax) * sizeof(double));
    double *bound = (double *)malloc((size_t)(yr * kmax) * sizeof(double));
    int64_t *len = (int64_t *)malloc((size_t)yr * sizeof(int64_t));
    void *dX = NULL, *dY = NULL;
    row_t r;
    reference(c, b->vt, 0, kmax, ref, bound, len);
    cudaMalloc(&dX, (size_t)(xr * kmax) * vs);
    cudaMalloc(&dY, (size_t)(yr * kmax) * vs);

    for (int ki = 0; ki < num_ks; ki++) {
        const int64_t k = ks[ki];
        const size_t bytes = c->matrix_bytes + (size_t)((c->cols + c->rows) * k) * vs;
        for (int l = 0; l < 2; l++) {
            const int row_major = l == 0;
            const char *layout = row_major ? "row" : "col";
            const int64_t ldx = row_major ? k : xr, ldy = row_major ? k : yr;
            /* X in this layout: column c of X is input_value(., c) */
            for (int64_t i = 0; i < c->cols; i++)
                for (int64_t col = 0; col < k; col++)
                    store(hX, b->vt, row_major ? i * ldx + col : col * ldx + i,
                          input_value(i, col, b->vt));
            cudaMemcpy(dX, hX, (size_t)(xr * k) * vs, cudaMemcpyHostToDevice);
            double best = 0;
            char best_name[32] = "";

            const struct {
                cusparseSpMMAlg_t alg;
                const char *name;
            } cusp[] = {{CUSPARSE_SPMM_CSR_ALG1, "cusparse/csr_alg1"},
                        {CUSPARSE_SPMM_CSR_ALG2, "cusparse/csr_alg2"},
                        {CUSPARSE_SPMM_CSR_ALG3, "cusparse/csr_alg3"}};
            const cusparseOrder_t order = row_major ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
            for (size_t a = 0; a < sizeof cusp / sizeof cusp[0]; a++) {
                cusp_call_t call;
                memset(&call, 0, sizeof call);
                memset(&r, 0, sizeof r);
                r.matrix = c->name;
                r.op = 'N';
                r.k = k;
                r.layout = layout;
                snprintf(r.kernel, sizeof r.kernel, "%s", cusp[a].name);
                call.b = b;
                call.spmm = 1;
                call.op = CUSPARSE_OPERATION_NON_TRANSPOSE;
                call.spmm_alg = cusp[a].alg;
                if (cusparseCreateConstCsr(&call.mat, c->rows, c->cols, c->nnz, c->c_offsets,
                                           c->c_columns, c->c_values, c->c_offset_type,
                                           CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                           data_type(b)) != CUSPARSE_STATUS_SUCCESS ||
                    cusparseCreateConstDnMat(&call.mx, c->cols, k, ldx, dX, data_type(b), order) !=
                        CUSPARSE_STATUS_SUCCESS ||
                    cusparseCreateDnMat(&call.my, c->rows, k, ldy, dY, data_type(b), order) !=
                        CUSPARSE_STATUS_SUCCESS) {
                    r.check = "error";
                    snprintf(r.note, sizeof r.note, "cuSPARSE descriptors");
                } else if (cusparse_prepare(&call, &r.plan_seconds, r.note, sizeof r.note) != 0) {
                    r.check = "refused";
                } else if (time_launch(b, run_cusparse, &call, &r.seconds, r.note, sizeof r.note)) {
                    r.check = "error";
                    r.seconds = 0;
                } else {
                    cudaMemcpy(hY, dY, (size_t)(yr * k) * vs, cudaMemcpyDeviceToHost);
                    r.check = verify(ref, bound, len, kmax, hY, b->vt, c->rows, k, row_major, ldy,
                                     r.note, sizeof r.note) ? "WRONG" : "ok";
                    r.gbs = (double)bytes / r.seconds * 1e-9;
                    if (strcmp(r.check, "ok") == 0 && (best == 0 || r.seconds < best)) {
                        best = r.seconds;
                        snprintf(best_name, sizeof best_name, "%s", cusp[a].name + 9);
                    }
                }
                print_row(b, &r);
                if (call.buffer != NULL) cudaFree(call.buffer);
                if (call.my != NULL) cusparseDestroyDnMat(call.my);
                if (call.mx != NULL) cusparseDestroyDnMat(call.mx);
                if (call.mat != NULL) cusparseDestroySpMat(call.mat);
            }

            for (int f = 0; f < 2; f++) {
                const nz_matrix_t *M = f == 0 ? c->dA : c->dsell;
                if (M == NULL) continue;
                memset(&r, 0, sizeof r);
                r.matrix = c->name;
                r.op = 'N';
                r.k = k;
                r.layout = layout;
                snprintf(r.best, sizeof r.best, "%s", best_name);
                r.best_seconds = best;
                nz_spmm_plan_t *plan = NULL;
                if (nz_spmm_plan_create(b->ctx, &plan, M, NZ_OP_N, k,
                                        row_major ? NZ_ROW_MAJOR : NZ_COL_MAJOR, NZ_ALG_AUTO,
                                        0) != NZ_SUCCESS) {
                    snprintf(r.kernel, sizeof r.kernel, "%s", f == 0 ? "csr" : "sell");
                    r.check = "error";
                    snprintf(r.note, sizeof r.note, "%s", nz_context_last_error(b->ctx));
                } else {
                    nz_spmm_plan_info_t info;
                    nz_spmm_plan_info(plan, &info);
                    snprintf(r.kernel, sizeof r.kernel, "%s/%s (width %d)",
                             nz_format_name(info.format), nz_alg_name(info.alg), info.vector_width);
                    r.plan_seconds = info.plan_seconds;
                    ours_spmm_t o = {plan, b->ctx, dX, ldx, dY, ldy};
                    if (time_launch(b, run_ours_spmm, &o, &r.seconds, r.note, sizeof r.note)) {
                        r.check = "error";
                        r.seconds = 0;
                    } else {
                        cudaMemcpy(hY, dY, (size_t)(yr * k) * vs, cudaMemcpyDeviceToHost);
                        r.check = verify(ref, bound, len, kmax, hY, b->vt, c->rows, k, row_major,
                                         ldy, r.note, sizeof r.note) ? "WRONG" : "ok";
                        r.gbs = (double)bytes / r.seconds * 1e-9;
                    }
                }
                nz_spmm_plan_destroy(&plan);
                print_row(b, &r);
            }
        }
    }
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    free(ref);
    free(bound);
    free(len);
}

/* ---- cases ---------------------------------------------------------------------------------- */

static int case_open(bench_t *b, bcase_t *c, const char *name, nz_matrix_t *A, char *msg, size_t n) {
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

static void case_close(bcase_t *c) {
    nz_matrix_destroy(&c->dsell);
    nz_matrix_destroy(&c->dA);
    nz_matrix_destroy(&c->A);
    if (c->c_offsets != NULL) cudaFree(c->c_offsets);
    if (c->c_columns != NULL) cudaFree(c->c_columns);
    if (c->c_values != NULL) cudaFree(c->c_values);
}

/* The built-in suite: FE (27-point rows), 7-point Laplacian, power-law R-MAT, and a rail matrix
 * whose transpose has a million short rows (its columns). */
static nz_status_t make_builtin(nz_context_t *ctx, int which, nz_value_type_t vt, nz_matrix_t **A,
                                const char **name) {
    switch (which) {
    case 0: *name = "fe3d-64"; return nz_gen_fe3d(ctx, A, NULL, NULL, 64, vt);
    case 1: *name = "laplace3d-64"; return nz_gen_laplace3d(ctx, A, 64, 64, 64, vt);
    case 2: *name = "rmat-18"; return nz_gen_rmat(ctx, A, 18, 16, 0, 0, 0, 20261121u, vt);
    default: *name = "rail-1K-300K"; return nz_gen_rail(ctx, A, 1000, 300000, 1000, 20261121u, vt);
    }
}
#define NUM_BUILTIN 4

int nzb_bench_transpose_spmm(FILE *out, const nzb_extra_options_t *options) {
    bench_t b;
    nzb_extra_options_t o;
    memset(&b, 0, sizeof b);
    memset(&o, 0, sizeof o);
    if (options != NULL) o = *options;
    b.out = out != NULL ? out : stdout;
    b.runs = o.runs >= EXTRA_MIN_RUNS ? (o.runs < 1024 ? o.runs : 1024) : EXTRA_MIN_RUNS;
    b.vt = o.single ? NZ_F32 : NZ_F64;
    b.vs = o.single ? 4 : 8;
    const int64_t default_ks[] = {1, 4, 8, 16, 32, 64};
    const int64_t *ks = o.num_ks > 0 ? o.ks : default_ks;
    const int num_ks = o.num_ks > 0 ? (o.num_ks < NZB_EXTRA_MAX_K ? o.num_ks : NZB_EXTRA_MAX_K) : 6;
    int status = 0;

    if (nz_device_count() == 0) {
        fprintf(b.out, "transpose / SpMM benchmark: no CUDA device (or a build without CUDA)\n");
        return 2;
    }
    if (nz_context_create(&b.ctx) != NZ_SUCCESS ||
        cudaSetDevice(0) != cudaSuccess ||
        cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking) != cudaSuccess ||
        nz_context_set_device(b.ctx, 0, (void *)b.stream) != NZ_SUCCESS ||
        (o.tunables != NULL && nz_context_set_tunables(b.ctx, o.tunables) != NZ_SUCCESS) ||
        cusparseCreate(&b.handle) != CUSPARSE_STATUS_SUCCESS ||
        cusparseSetStream(b.handle, b.stream) != CUSPARSE_STATUS_SUCCESS) {
        fprintf(b.out, "transpose / SpMM benchmark: GPU setup failed: %s\n",
                b.ctx != NULL ? nz_context_last_error(b.ctx) : "no context");
        status = 2;
        goto done;
    }
    b.starts = (cudaEvent_t *)calloc((size_t)b.runs, sizeof(cudaEvent_t));
    b.stops = (cudaEvent_t *)calloc((size_t)b.runs, sizeof(cudaEvent_t));
    for (int i = 0; i < b.runs; i++) {
        cudaEventCreate(&b.starts[i]);
        cudaEventCreate(&b.stops[i]);
    }
    if (o.csv_path != NULL && (b.csv = nzu_output_fopen(&b.csv_out, o.csv_path)) == NULL)
        fprintf(b.out, "note: cannot write %s; no CSV\n", o.csv_path);
    fprintf(b.out, "transpose SpMV and SpMM, %s, %s, median of %d runs after %d warm-up runs; "
                   "speedup = cuSPARSE best / ours\n",
            nz_context_device_name(b.ctx), o.single ? "single" : "double", b.runs, EXTRA_WARMUP);
    print_header(&b);

    for (int m = 0; m < (o.num_files > 0 ? o.num_files : NUM_BUILTIN); m++) {
        nz_matrix_t *A = NULL;
        const char *name = NULL;
        nz_status_t s;
        if (o.num_files > 0) {
            name = strrchr(o.files[m], '/') != NULL ? strrchr(o.files[m], '/') + 1 : o.files[m];
            s = nz_matrix_read(b.ctx, &A, o.files[m], b.vt);
        } else {
            s = make_builtin(b.ctx, m, b.vt, &A, &name);
        }
        if (s != NZ_SUCCESS) {
            fprintf(b.out, "%s: cannot make the matrix: %s\n", name, nz_context_last_error(b.ctx));
            b.failures++;
            continue;
        }
        bcase_t c;
        char msg[256];
        if (case_open(&b, &c, name, A, msg, sizeof msg) != 0) {
            fprintf(b.out, "%s: device setup failed: %s\n", name, msg);
            b.failures++;
            case_close(&c);
            continue;
        }
        if (!o.spmm_only) bench_transpose(&b, &c);
        if (!o.transpose_only) bench_spmm(&b, &c, ks, num_ks);
        case_close(&c);
    }
    status = b.failures > 0 ? 1 : 0;
    if (b.failures > 0) fprintf(b.out, "%d row(s) failed or were wrong\n", b.failures);

done:
    if (b.csv != NULL && nzu_output_fclose(&b.csv_out, b.csv) != 0) {
        fprintf(stderr, "nz bench: cannot write %s\n", o.csv_path);
        b.failures++;
    }
    nz_context_destroy(&b.ctx);
    for (int i = 0; b.starts != NULL && i < b.runs; i++) {
        cudaEventDestroy(b.starts[i]);
        cudaEventDestroy(b.stops[i]);
    }
    free(b.starts);
    free(b.stops);
    if (b.handle != NULL) cusparseDestroy(b.handle);
    if (b.stream != NULL) cudaStreamDestroy(b.stream);
    return status;
}
