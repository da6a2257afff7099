/* bench_cuda_internal.h: what the GPU side of nz bench shares: the device state, one launch, its timing and check. */
#ifndef NZ_BENCH_CUDA_INTERNAL_H
#define NZ_BENCH_CUDA_INTERNAL_H

#include "bench.h"

#include <cuda_runtime.h>
#include <cusparse.h>

struct nzb_gpu {
    nz_context_t *ctx;          /* bound to device 0 and `stream` */
    cudaStream_t stream;        /* ours: every event, kernel and cuSPARSE call goes on it */
    cusparseHandle_t handle;
    size_t l2_bytes;
    char description[512];
    cudaEvent_t *starts, *stops;
    int num_events;
};

/* One SpMV y = A x (beta = 0) on the stream, either a Nonzero plan or a cuSPARSE call. */
typedef struct nzb_gpu_launch {
    nz_spmv_plan_t *plan;       /* ours when non-NULL */
    const void *x;
    void *y;
    /* cuSPARSE */
    cusparseHandle_t handle;
    cusparseConstSpMatDescr_t mat;
    cusparseConstDnVecDescr_t vec_x;
    cusparseDnVecDescr_t vec_y;
    cudaDataType data_type;
    cusparseSpMVAlg_t alg;
    void *buffer;
    int unsupported;            /* cuSPARSE answered CUSPARSE_STATUS_NOT_SUPPORTED */
    char error[NZB_NOTE_SIZE];
} nzb_gpu_launch_t;

/* Median and minimum of `runs` samples into r, each a pair of events on the stream around a batch
 * of launches (bench_cuda.cu); non-zero with the reason in l->error. */
int nzb_gpu_time_launch(nzb_gpu_t *g, nzb_gpu_launch_t *l, int runs, nzb_result_t *r);
/* Poison y, launch once, copy y back and verify it against the case (nzb_verify). */
int nzb_gpu_verify_launch(nzb_gpu_t *g, nzb_gpu_launch_t *l, const nzb_case_t *c, void *host_y,
                          size_t y_bytes, nzb_result_t *r);

#endif /* NZ_BENCH_CUDA_INTERNAL_H */
