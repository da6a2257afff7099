/* bench_spmm.cu: SpMM (Y = A X, k right-hand sides, both layouts) on the GPU, cuSPARSE CSR_ALG1..3 vs ours. */
#include "bench_extra_internal.h"
#include "bench.h"

#include <stdlib.h>
#include <string.h>

void nzb_extra_spmm(nzb_extra_t *b, nzb_extra_case_t *c, const int64_t *ks, int num_ks) {
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
    const cudaDataType type = b->vt == NZ_F32 ? CUDA_R_32F : CUDA_R_64F;
    nzb_extra_row_t r;
    nzb_extra_reference(c, b->vt, 0, kmax, ref, bound, len);
    cudaMalloc(&dX, (size_t)(xr * kmax) * vs);
    cudaMalloc(&dY, (size_t)(yr * kmax) * vs);

    for (int ki = 0; ki < num_ks; ki++) {
        const int64_t k = ks[ki];
        for (int l = 0; l < 2; l++) {
            const int row_major = l == 0;
            const char *layout = row_major ? "row" : "col";
            const int64_t ldx = row_major ? k : xr, ldy = row_major ? k : yr;
            /* X in this layout: column c of X is nzb_extra_input_value(., c) */
            for (int64_t i = 0; i < c->cols; i++)
                for (int64_t col = 0; col < k; col++)
                    nzb_value_set(hX, b->vt, row_major ? i * ldx + col : col * ldx + i,
                                  nzb_extra_input_value(i, col, b->vt));
            cudaMemcpy(dX, hX, (size_t)(xr * k) * vs, cudaMemcpyHostToDevice);
            /* Y (rows x k, this layout) against the reference; bytes: the matrix, X and Y */
            const nzb_extra_output_t out = {
                ref, bound, len, kmax, hY, dY, (size_t)(yr * k) * vs, c->rows, k, row_major, ldy,
                c->matrix_bytes + (size_t)((c->cols + c->rows) * k) * vs};
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
                nzb_extra_cusparse_t call;
                memset(&call, 0, sizeof call);
                nzb_extra_row_start(&r, c, 'N', k, layout, cusp[a].name);
                call.b = b;
                call.spmm = 1;
                call.op = CUSPARSE_OPERATION_NON_TRANSPOSE;
                call.spmm_alg = cusp[a].alg;
                const int made =
                    nzb_extra_cusparse_matrix(b, c, &call.mat) == 0 &&
                    cusparseCreateConstDnMat(&call.mx, c->cols, k, ldx, dX, type, order) ==
                        CUSPARSE_STATUS_SUCCESS &&
                    cusparseCreateDnMat(&call.my, c->rows, k, ldy, dY, type, order) ==
                        CUSPARSE_STATUS_SUCCESS;
                nzb_extra_cusparse_row(b, &r, &call, made, &out, &best, best_name, sizeof best_name);
            }

            for (int f = 0; f < 2; f++) {
                const nz_matrix_t *M = f == 0 ? c->dA : c->dsell;
                if (M == NULL) continue;
                nzb_extra_row_start(&r, c, 'N', k, layout, "");
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
                    nzb_extra_spmm_t o = {plan, b->ctx, dX, ldx, dY, ldy};
                    nzb_extra_measure(b, &r, nzb_extra_run_spmm, &o, &out);
                }
                nz_spmm_plan_destroy(&plan);
                nzb_extra_print_row(b, &r);
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
