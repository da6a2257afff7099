/* bench_spgemm_cusparse.cu: the SpGEMM benchmark's cuSPARSE side: cusparseSpGEMM ALG1..3 on A*A, timed with its allocations. */
#include "bench_spgemm_internal.h"
#include "bench.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    cusparseSpGEMMAlg_t alg;
    const char *name;
} cusparse_algs[NZB_SPGEMM_CUSPARSE_ALGS] = {
    {CUSPARSE_SPGEMM_ALG1, "alg1"}, {CUSPARSE_SPGEMM_ALG2, "alg2"}, {CUSPARSE_SPGEMM_ALG3, "alg3"}};

const char *nzb_spgemm_cusparse_name(int a) { return cusparse_algs[a].name; }

/* What every phase of cusparseSpGEMM takes here: C = A*A (op N for both), alpha 1, beta 0. */
typedef struct phase_args {
    cusparseHandle_t handle;
    cusparseSpMatDescr_t A, C;
    cudaDataType type;
    cusparseSpGEMMAlg_t alg;
    cusparseSpGEMMDescr_t desc;
    const void *alpha, *beta;
} phase_args_t;

static const cusparseOperation_t op_n = CUSPARSE_OPERATION_NON_TRANSPOSE;

/* Each phase: with buffer NULL it reports the buffer size it needs, then runs with the buffer. */
static cusparseStatus_t work_estimation(const phase_args_t *p, size_t *bytes, void *buffer) {
    return cusparseSpGEMM_workEstimation(p->handle, op_n, op_n, p->alpha, p->A, p->A, p->beta, p->C,
                                         p->type, p->alg, p->desc, bytes, buffer);
}
static cusparseStatus_t estimate_memory(const phase_args_t *p, size_t *bytes3, void *buffer3,
                                        size_t *bytes2) {
    return cusparseSpGEMM_estimateMemory(p->handle, op_n, op_n, p->alpha, p->A, p->A, p->beta, p->C,
                                         p->type, p->alg, p->desc, 0.2f, bytes3, buffer3, bytes2);
}
static cusparseStatus_t compute(const phase_args_t *p, size_t *bytes, void *buffer) {
    return cusparseSpGEMM_compute(p->handle, op_n, op_n, p->alpha, p->A, p->A, p->beta, p->C,
                                  p->type, p->alg, p->desc, bytes, buffer);
}

/* One cuSPARSE SpGEMM C = A*A on device arrays (int32 offsets), timed from work estimation to
 * the copy, allocations included; every status is caught and becomes a note. */
static void run_cusparse(cusparseHandle_t handle, cudaStream_t stream, cusparseSpGEMMAlg_t alg,
                         int64_t n, int64_t nnz, const int32_t *d_off, const int32_t *d_col,
                         const void *d_val, nz_value_type_t vt, size_t a_bytes,
                         nzb_spgemm_cusparse_t *res) {
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    phase_args_t p;
    p.handle = handle;
    p.A = p.C = NULL;
    p.type = vt == NZ_F32 ? CUDA_R_32F : CUDA_R_64F;
    p.alg = alg;
    p.desc = NULL;
    p.alpha = vt == NZ_F32 ? (const void *)&one_f : (const void *)&one_d;
    p.beta = vt == NZ_F32 ? (const void *)&zero_f : (const void *)&zero_d;
    void *buf1 = NULL, *buf2 = NULL, *buf3 = NULL, *c_off = NULL, *c_col = NULL, *c_val = NULL;
    size_t size1 = 0, size2 = 0, size3 = 0, held = a_bytes;
    int64_t c_rows = 0, c_cols = 0, c_nnz = 0;
    cusparseStatus_t st = CUSPARSE_STATUS_SUCCESS;
    cudaError_t err = cudaSuccess;
    const char *where = "";
    memset(res, 0, sizeof *res);
    res->peak_bytes = a_bytes;

#define CS(call, name)                                                                          \
    do {                                                                                        \
        where = name;                                                                           \
        if ((st = (call)) != CUSPARSE_STATUS_SUCCESS) goto done;                                \
    } while (0)
#define CM(ptr, bytes, name)                                                                    \
    do {                                                                                        \
        where = name;                                                                           \
        if ((err = cudaMalloc(&(ptr), (bytes) > 0 ? (bytes) : 1)) != cudaSuccess) goto done;    \
        held += (bytes);                                                                        \
        if (held > res->peak_bytes) res->peak_bytes = held;                                     \
    } while (0)

    cudaStreamSynchronize(stream);
    double t0 = nzb_wtime();
    CS(cusparseCreateCsr(&p.A, n, n, nnz, (void *)d_off, (void *)d_col, (void *)d_val,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, p.type),
       "cusparseCreateCsr");
    CS(cusparseCreateCsr(&p.C, n, n, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, p.type),
       "cusparseCreateCsr");
    CS(cusparseSpGEMM_createDescr(&p.desc), "cusparseSpGEMM_createDescr");
    CS(work_estimation(&p, &size1, NULL), "cusparseSpGEMM_workEstimation");
    CM(buf1, size1, "cudaMalloc(buffer1)");
    CS(work_estimation(&p, &size1, buf1), "cusparseSpGEMM_workEstimation");
    if (alg != CUSPARSE_SPGEMM_ALG1) {
        CS(estimate_memory(&p, &size3, NULL, NULL), "cusparseSpGEMM_estimateMemory");
        CM(buf3, size3, "cudaMalloc(buffer3)");
        CS(estimate_memory(&p, &size3, buf3, &size2), "cusparseSpGEMM_estimateMemory");
        cudaFree(buf3);
        buf3 = NULL;
        held -= size3;
    } else {
        CS(compute(&p, &size2, NULL), "cusparseSpGEMM_compute");
    }
    CM(buf2, size2, "cudaMalloc(buffer2)");
    CS(compute(&p, &size2, buf2), "cusparseSpGEMM_compute");
    CS(cusparseSpMatGetSize(p.C, &c_rows, &c_cols, &c_nnz), "cusparseSpMatGetSize");
    CM(c_off, (size_t)(n + 1) * 4, "cudaMalloc(C offsets)");
    CM(c_col, (size_t)c_nnz * 4, "cudaMalloc(C columns)");
    CM(c_val, (size_t)c_nnz * (vt == NZ_F32 ? 4 : 8), "cudaMalloc(C values)");
    CS(cusparseCsrSetPointers(p.C, c_off, c_col, c_val), "cusparseCsrSetPointers");
    CS(cusparseSpGEMM_copy(handle, op_n, op_n, p.alpha, p.A, p.A, p.beta, p.C, p.type, alg, p.desc),
       "cusparseSpGEMM_copy");
    where = "cudaStreamSynchronize";
    if ((err = cudaStreamSynchronize(stream)) != cudaSuccess) goto done;
    res->seconds = nzb_wtime() - t0;
    res->c_nnz = c_nnz;
    res->ok = 1;
done:
    if (!res->ok) {
        if (st != CUSPARSE_STATUS_SUCCESS)
            snprintf(res->note, sizeof res->note, "%s: %s", where, cusparseGetErrorString(st));
        else
            snprintf(res->note, sizeof res->note, "%s: %s", where, cudaGetErrorString(err));
        (void)cudaGetLastError();
    }
    cudaStreamSynchronize(stream);
    (void)cudaGetLastError();
    cudaFree(buf1);
    cudaFree(buf2);
    cudaFree(buf3);
    cudaFree(c_off);
    cudaFree(c_col);
    cudaFree(c_val);
    if (p.desc != NULL) cusparseSpGEMM_destroyDescr(p.desc);
    if (p.A != NULL) cusparseDestroySpMat(p.A);
    if (p.C != NULL) cusparseDestroySpMat(p.C);
#undef CS
#undef CM
}

void nzb_spgemm_cusparse_all(cusparseHandle_t handle, cudaStream_t stream, nz_context_t *ctx,
                             const nz_matrix_t *A, nz_value_type_t vt, int nruns, int64_t c_nnz,
                             nzb_spgemm_cusparse_t *res, double *upload_seconds, char *notes,
                             size_t notes_size) {
    const size_t vs = vt == NZ_F32 ? 4 : 8;
    int32_t *d_off = NULL, *d_col = NULL;
    void *d_val = NULL;
    const int64_t *ho;
    const int32_t *hc;
    const void *hv;
    nz_matrix_info_t ai;
    memset(res, 0, NZB_SPGEMM_CUSPARSE_ALGS * sizeof *res);
    *upload_seconds = 0.0;
    nz_matrix_info(ctx, &ai, A);
    nz_matrix_csr_arrays(ctx, &ho, &hc, &hv, A);
    size_t a_bytes = (size_t)(ai.rows + 1) * 4 + (size_t)ai.nnz * (4 + vs);
    if (ai.nnz <= INT32_MAX) {
        int32_t *off32 = (int32_t *)malloc((size_t)(ai.rows + 1) * 4);
        for (int64_t i = 0; i <= ai.rows; i++) off32[i] = (int32_t)ho[i];
        double t = nzb_wtime();
        if (cudaMalloc((void **)&d_off, (size_t)(ai.rows + 1) * 4) == cudaSuccess &&
            cudaMalloc((void **)&d_col, (size_t)ai.nnz * 4 + 4) == cudaSuccess &&
            cudaMalloc(&d_val, (size_t)ai.nnz * vs + 8) == cudaSuccess &&
            cudaMemcpy(d_off, off32, (size_t)(ai.rows + 1) * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
            cudaMemcpy(d_col, hc, (size_t)ai.nnz * 4, cudaMemcpyHostToDevice) == cudaSuccess &&
            cudaMemcpy(d_val, hv, (size_t)ai.nnz * vs, cudaMemcpyHostToDevice) == cudaSuccess) {
            *upload_seconds = nzb_wtime() - t;
            for (int a = 0; a < NZB_SPGEMM_CUSPARSE_ALGS; a++) {
                double ts[64];
                int good = 1;
                for (int r = 0; r < nruns && good; r++) {
                    run_cusparse(handle, stream, cusparse_algs[a].alg, ai.rows, ai.nnz, d_off,
                                 d_col, d_val, vt, a_bytes, &res[a]);
                    good = res[a].ok;
                    ts[r] = res[a].seconds;
                }
                if (good) res[a].seconds = nzb_median(ts, nruns);
                if (good && res[a].c_nnz != c_nnz) {
                    size_t l = strlen(notes);
                    snprintf(notes + l, notes_size - l, "cusparse/%s nnz(C) %lld differs; ",
                             cusparse_algs[a].name, (long long)res[a].c_nnz);
                }
            }
        } else {
            for (int a = 0; a < NZB_SPGEMM_CUSPARSE_ALGS; a++)
                snprintf(res[a].note, sizeof res[a].note, "cannot upload A: %s",
                         cudaGetErrorString(cudaGetLastError()));
        }
        free(off32);
    } else {
        for (int a = 0; a < NZB_SPGEMM_CUSPARSE_ALGS; a++)
            snprintf(res[a].note, sizeof res[a].note, "nnz above 2^31 (int32 offsets)");
    }
    cudaFree(d_off);
    cudaFree(d_col);
    cudaFree(d_val);
}

double nzb_spgemm_download_seconds(size_t bytes) {
    double seconds = 0.0;
    void *dbuf = NULL, *hbuf = malloc(bytes);
    if (hbuf != NULL && cudaMalloc(&dbuf, bytes) == cudaSuccess) {
        double t = nzb_wtime();
        if (cudaMemcpy(hbuf, dbuf, bytes, cudaMemcpyDeviceToHost) == cudaSuccess)
            seconds = nzb_wtime() - t;
    }
    (void)cudaGetLastError();
    cudaFree(dbuf);
    free(hbuf);
    return seconds;
}
