/* cuda_absent.c: the CUDA backend's entry points when the library is built without CUDA. */
#include "nzi.h"
#include "backend.h"
#include "hyspmm_device.h"

static nz_status_t absent(nz_context_t *ctx) {
    return nzi_error(ctx, NZ_ERR_NO_DEVICE, "this build of Nonzero has no CUDA backend");
}

int nz_cuda_device_count(void) { return 0; }
size_t nz_cuda_l2_bytes(const nz_context_t *ctx) {
    (void)ctx;
    return 0;
}
int64_t nz_cuda_resident_threads(const nz_context_t *ctx) {
    (void)ctx;
    return 0;
}
nz_status_t nz_cuda_context_bind(nz_context_t *ctx, int device, void *stream) {
    (void)device;
    (void)stream;
    return absent(ctx);
}
void nz_cuda_context_release(nz_context_t *ctx) { (void)ctx; }
nz_status_t nz_cuda_synchronize(nz_context_t *ctx) { return absent(ctx); }
nz_status_t nz_cuda_malloc(nz_context_t *ctx, void **ptr, size_t bytes, const char *what) {
    (void)ptr;
    (void)bytes;
    (void)what;
    return absent(ctx);
}
void nz_cuda_free(nz_context_t *ctx, void *ptr, size_t bytes) {
    (void)ctx;
    (void)ptr;
    (void)bytes;
}
nz_status_t nz_cuda_memcpy(nz_context_t *ctx, void *dst, const void *src, size_t bytes, int kind) {
    (void)dst;
    (void)src;
    (void)bytes;
    (void)kind;
    return absent(ctx);
}
nz_status_t nz_cuda_memset(nz_context_t *ctx, void *dst, int byte, size_t bytes) {
    (void)dst;
    (void)byte;
    (void)bytes;
    return absent(ctx);
}
nz_status_t nz_cuda_matrix_upload(nz_context_t *ctx, nz_matrix_t *dA, const nz_matrix_t *A,
                                  int offset_bits) {
    (void)dA;
    (void)A;
    (void)offset_bits;
    return absent(ctx);
}
nz_status_t nz_cuda_matrix_validate(nz_context_t *ctx, const nz_matrix_t *dA) {
    (void)dA;
    return absent(ctx);
}
nz_status_t nz_cuda_matrix_download(nz_context_t *ctx, nz_matrix_t **H, const nz_matrix_t *dA) {
    (void)H;
    (void)dA;
    return absent(ctx);
}
void nz_cuda_matrix_release(nz_matrix_t *dA) { (void)dA; }
bool nz_cuda_spmv_supports(nz_format_t format, nz_alg_t alg) {
    (void)format;
    (void)alg;
    return false;
}
int nz_cuda_spmv_reproducible(nz_format_t format, nz_alg_t alg, nz_operation_t op) {
    (void)format;
    (void)alg;
    (void)op;
    return -1;
}
nz_status_t nz_cuda_spmv_plan_setup(nz_spmv_plan_t *plan) { return absent(plan->ctx); }
nz_status_t nz_cuda_spmv_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                 double beta, void *y) {
    (void)alpha;
    (void)x;
    (void)beta;
    (void)y;
    return absent(plan->ctx);
}
void nz_cuda_spmv_plan_release(nz_spmv_plan_t *plan) { (void)plan; }
nz_status_t nz_cuda_spsv_plan_setup(nz_spsv_plan_t *plan) { return absent(plan->ctx); }
nz_status_t nz_cuda_spsv_execute(const nz_spsv_plan_t *plan, double alpha, const void *x,
                                 void *y) {
    (void)alpha;
    (void)x;
    (void)y;
    return absent(plan->ctx);
}
void nz_cuda_spsv_plan_release(nz_spsv_plan_t *plan) { (void)plan; }
nz_status_t nz_cuda_factor_compute(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                                   nz_matrix_t **F, double *shift, int *attempts) {
    (void)A;
    (void)kind;
    (void)F;
    (void)shift;
    (void)attempts;
    return absent(ctx);
}
const struct nzi_cg_ops *nz_cuda_cg_ops(void) { return NULL; }
const struct nzi_krylov_ops *nz_cuda_krylov_ops(void) { return NULL; }
nz_status_t nz_cuda_vector_check(nz_context_t *ctx, const void *ptr, const char *what) {
    (void)ptr;
    (void)what;
    return absent(ctx);
}
nz_status_t nz_cuda_gen_fe3d(nz_context_t *ctx, nz_matrix_t **dA, int64_t n,
                             nz_value_type_t value_type, void **d_b, void **d_u_exact) {
    (void)dA;
    (void)n;
    (void)value_type;
    (void)d_b;
    (void)d_u_exact;
    return absent(ctx);
}
nz_status_t nz_cuda_time_plan(const nz_spmv_plan_t *plan, const void *x, void *y, int runs,
                              double *median_seconds) {
    (void)x;
    (void)y;
    (void)runs;
    (void)median_seconds;
    return absent(plan->ctx);
}
nz_status_t nz_cuda_csr_row_stats(nz_context_t *ctx, const nz_matrix_t *dA, nz_operation_t op,
                                  nz_matrix_stats_t *stats) {
    (void)dA;
    (void)op;
    (void)stats;
    return absent(ctx);
}
nz_status_t nz_cuda_csr_hot_share(nz_context_t *ctx, const nz_matrix_t *dA, double *share) {
    (void)dA;
    (void)share;
    return absent(ctx);
}
nz_status_t nz_cuda_csr_transpose(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t **AT) {
    (void)A;
    (void)AT;
    return absent(ctx);
}
nz_status_t nz_cuda_spgemm_numeric_setup(nz_context_t *ctx, const nz_matrix_t *A,
                                         const nz_matrix_t *B, const nz_matrix_t *C, int threads,
                                         void **state) {
    (void)A;
    (void)B;
    (void)C;
    (void)threads;
    (void)state;
    return absent(ctx);
}
nz_status_t nz_cuda_spgemm_numeric(nz_context_t *ctx, void *state, const nz_matrix_t *A,
                                   const nz_matrix_t *B, nz_matrix_t *C) {
    (void)state;
    (void)A;
    (void)B;
    (void)C;
    return absent(ctx);
}
void nz_cuda_spgemm_numeric_release(nz_context_t *ctx, void *state) {
    (void)ctx;
    (void)state;
}
nz_status_t nz_cuda_spgeam_symbolic(nz_context_t *ctx, const nz_matrix_t *A,
                                    const nz_matrix_t *B, nz_matrix_t **C) {
    (void)A;
    (void)B;
    (void)C;
    return absent(ctx);
}
nz_status_t nz_cuda_spgeam_numeric(nz_context_t *ctx, double alpha, const nz_matrix_t *A,
                                   double beta, const nz_matrix_t *B, nz_matrix_t *C) {
    (void)alpha;
    (void)A;
    (void)beta;
    (void)B;
    (void)C;
    return absent(ctx);
}
nz_status_t nz_cuda_transpose(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t **AT,
                              void **perm) {
    (void)A;
    (void)AT;
    (void)perm;
    return absent(ctx);
}
nz_status_t nz_cuda_transpose_values(nz_context_t *ctx, const void *perm, const nz_matrix_t *A,
                                     nz_matrix_t *AT) {
    (void)perm;
    (void)A;
    (void)AT;
    return absent(ctx);
}
void nz_cuda_transpose_release(nz_context_t *ctx, void *perm) {
    (void)ctx;
    (void)perm;
}
nz_alg_t nz_cuda_spmm_default_alg(nz_format_t format) {
    return format == NZ_FORMAT_SELL ? NZ_ALG_SCALAR : NZ_ALG_VECTOR;
}
bool nz_cuda_spmm_supports(nz_format_t format, nz_alg_t alg) {
    (void)format;
    (void)alg;
    return false;
}
nz_status_t nz_cuda_spmm_plan_setup(nz_spmm_plan_t *plan) { return absent(plan->ctx); }
nz_status_t nz_cuda_spmm_execute(const nz_spmm_plan_t *plan, double alpha, const void *X,
                                 int64_t ldx, double beta, void *Y, int64_t ldy) {
    (void)alpha;
    (void)X;
    (void)ldx;
    (void)beta;
    (void)Y;
    (void)ldy;
    return absent(plan->ctx);
}
void nz_cuda_spmm_plan_release(nz_spmm_plan_t *plan) { (void)plan; }

/* SpGEMM: no GPU algorithm, so nothing reaches hySpMM's host driver (src/cuda/spgemm/
 * hyspmm_pipeline.c, compiled in every build); its device side below only links it. */
nzi_spgemm_entry_t nz_cuda_spgemm(nz_spgemm_alg_t alg) {
    (void)alg;
    return NULL;
}
nz_status_t nzi_device_memory_budget(nz_context_t *ctx, size_t limit, size_t *budget) {
    (void)limit;
    (void)budget;
    return absent(ctx);
}
nz_status_t nzi_hyspmm_device_bytes(nz_context_t *ctx, nz_value_type_t vt, int slots,
                                    int64_t max_rows, int64_t max_a_nnz, int64_t max_products,
                                    size_t *bytes) {
    (void)vt;
    (void)slots;
    (void)max_rows;
    (void)max_a_nnz;
    (void)max_products;
    (void)bytes;
    return absent(ctx);
}
nz_status_t nzi_hyspmm_device_create(nz_context_t *ctx, nzi_hyspmm_device_t **dev,
                                     nz_value_type_t vt, int slots, int64_t max_rows,
                                     int64_t max_a_nnz, int64_t max_products,
                                     size_t *device_bytes) {
    (void)dev;
    (void)vt;
    (void)slots;
    (void)max_rows;
    (void)max_a_nnz;
    (void)max_products;
    (void)device_bytes;
    return absent(ctx);
}
void nzi_hyspmm_device_destroy(nz_context_t *ctx, nzi_hyspmm_device_t **dev) {
    (void)ctx;
    (void)dev;
}
nzi_hyspmm_input_t *nzi_hyspmm_slot_input(nzi_hyspmm_device_t *dev, int slot) {
    (void)dev;
    (void)slot;
    return NULL;
}
nzi_hyspmm_output_t *nzi_hyspmm_slot_output(nzi_hyspmm_device_t *dev, int slot) {
    (void)dev;
    (void)slot;
    return NULL;
}
nz_status_t nzi_hyspmm_enqueue(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                               int64_t rows, int64_t a_nnz, int64_t products) {
    (void)dev;
    (void)slot;
    (void)rows;
    (void)a_nnz;
    (void)products;
    return absent(ctx);
}
nz_status_t nzi_hyspmm_fetch(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                             int64_t *c_nnz) {
    (void)dev;
    (void)slot;
    (void)c_nnz;
    return absent(ctx);
}
void nzi_hyspmm_device_set_rates(nzi_hyspmm_device_t *dev, double expand_rate, double gpu_rate,
                                 double panel_overhead) {
    (void)dev;
    (void)expand_rate;
    (void)gpu_rate;
    (void)panel_overhead;
}
void nzi_hyspmm_pooled(nz_context_t *ctx, nz_value_type_t vt, double rates[3], int64_t *products) {
    (void)ctx;
    (void)vt;
    rates[0] = rates[1] = rates[2] = 0.0;
    *products = 0;
}
nz_status_t nzi_hyspmm_wait(nz_context_t *ctx, nzi_hyspmm_device_t *dev, int slot,
                            nzi_hyspmm_times_t *times) {
    (void)dev;
    (void)slot;
    (void)times;
    return absent(ctx);
}
