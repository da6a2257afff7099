/* bench_transpose.cu: transpose SpMV (y = A^T x) on the GPU, cuSPARSE CSR_ALG1 / ALG2 vs ours. */
#include "bench_extra_internal.h"
#include "bench.h"

#include <stdlib.h>
#include <string.h>

void nzb_extra_transpose(nzb_extra_t *b, nzb_extra_case_t *c) {
    const size_t vs = b->vs;
    const int64_t n_in = c->rows, n_out = c->cols;
    void *hx = malloc((size_t)(n_in > 0 ? n_in : 1) * vs), *hy = malloc((size_t)(n_out > 0 ? n_out : 1) * vs);
    double *ref = (double *)malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof(double));
    double *bound = (double *)malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof(double));
    int64_t *len = (int64_t *)malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof(int64_t));
    void *dx = NULL, *dy = NULL;
    double best = 0;
    char best_name[32] = "";
    nzb_extra_row_t r;

    for (int64_t i = 0; i < n_in; i++)
        nzb_value_set(hx, b->vt, i, nzb_extra_input_value(i, 0, b->vt));
    nzb_extra_reference(c, b->vt, 1, 1, ref, bound, len);
    cudaMalloc(&dx, (size_t)(n_in > 0 ? n_in : 1) * vs);
    cudaMalloc(&dy, (size_t)(n_out > 0 ? n_out : 1) * vs);
    cudaMemcpy(dx, hx, (size_t)n_in * vs, cudaMemcpyHostToDevice);
    /* y (n_out values) against the reference; bytes: the matrix, x and y */
    const nzb_extra_output_t out = {ref, bound, len, 1, hy, dy, (size_t)n_out * vs, n_out, 1, 1, 1,
                                    c->matrix_bytes + (size_t)(n_in + n_out) * vs};

    /* cuSPARSE transpose SpMV, ALG1 and ALG2 */
    const struct {
        cusparseSpMVAlg_t alg;
        const char *name;
    } cusp[] = {{CUSPARSE_SPMV_CSR_ALG1, "cusparse/csr_alg1"},
                {CUSPARSE_SPMV_CSR_ALG2, "cusparse/csr_alg2"}};
    for (size_t a = 0; a < sizeof cusp / sizeof cusp[0]; a++) {
        nzb_extra_cusparse_t call;
        memset(&call, 0, sizeof call);
        nzb_extra_row_start(&r, c, 'T', 1, "-", cusp[a].name);
        call.b = b;
        call.op = CUSPARSE_OPERATION_TRANSPOSE;
        call.spmv_alg = cusp[a].alg;
        const cudaDataType type = b->vt == NZ_F32 ? CUDA_R_32F : CUDA_R_64F;
        const int made =
            nzb_extra_cusparse_matrix(b, c, &call.mat) == 0 &&
            cusparseCreateConstDnVec(&call.vx, n_in, dx, type) == CUSPARSE_STATUS_SUCCESS &&
            cusparseCreateDnVec(&call.vy, n_out, dy, type) == CUSPARSE_STATUS_SUCCESS;
        nzb_extra_cusparse_row(b, &r, &call, made, &out, &best, best_name, sizeof best_name);
    }

    /* ours: cached transpose with merge and vector, and the atomic scatter */
    const struct {
        nz_alg_t alg;
        const char *name;
    } ours[] = {{NZ_ALG_MERGE, "csr/merge (cached A^T)"},
                {NZ_ALG_VECTOR, "csr/vector (cached A^T)"},
                {NZ_ALG_ATOMIC, "csr/atomic (scatter)"}};
    for (size_t a = 0; a < sizeof ours / sizeof ours[0]; a++) {
        nzb_extra_row_start(&r, c, 'T', 1, "-", ours[a].name);
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
            nzb_extra_spmv_t o = {plan, b->ctx, dx, dy};
            nzb_extra_measure(b, &r, nzb_extra_run_spmv, &o, &out);
        }
        nz_spmv_plan_destroy(&plan);
        nzb_extra_print_row(b, &r);
    }
    cudaFree(dx);
    cudaFree(dy);
    free(hx);
    free(hy);
    free(ref);
    free(bound);
    free(len);
}
