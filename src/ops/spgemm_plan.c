/* spgemm_plan.c: public entry points of SpGEMM plans, SpGEAM (plain and planned), the Galerkin
 * product and the matrix transpose: check the arguments once, then call the backend table. */
#include "nzi.h"
#include "backend.h"

#include <string.h>

#define NZI_SPGEMM_PLAN_MAGIC 0x4e5a53474d000001ull /* "NZSGM" */
#define NZI_SPGEAM_PLAN_MAGIC 0x4e5a534741000001ull /* "NZSGA" */
#define NZI_RAP_PLAN_MAGIC    0x4e5a524150000001ull /* "NZRAP" */

/* What a planned operation remembers of an operand: enough to refuse another shape, type,
 * location or nonzero count before touching memory. */
typedef struct operand_shape {
    int64_t rows, cols, nnz;
} operand_shape_t;

/* What every plan here keeps first: its kind, context and backend, its operands' location,
 * value type and shapes (the second operand: B, or P of the Galerkin product), and C's serial. */
typedef struct plan_base {
    uint64_t magic;
    nz_context_t *ctx;
    const nzi_backend_t *ops;
    nz_location_t location;
    nz_value_type_t value_type;
    operand_shape_t a, b;
    uint64_t c_serial;
} plan_base_t;

struct nz_spgemm_plan {
    plan_base_t base;
    void *state;
};

struct nz_spgeam_plan {
    plan_base_t base;
};

struct nz_rap_plan {
    plan_base_t base;
    nz_matrix_t *R, *AP;         /* P^T (values refreshed through perm) and A P */
    void *perm;                  /* R's value positions in P (the backend's memory) */
    nz_spgemm_plan_t *ap_plan, *c_plan;
};

static const char *location_name(nz_location_t l) { return l == NZ_DEVICE ? "device" : "host"; }
static const char *type_name(nz_value_type_t t) { return t == NZ_F32 ? "single" : "double"; }

static operand_shape_t shape_of(const nz_matrix_t *A) {
    operand_shape_t s = {A->rows, A->cols, A->nnz};
    return s;
}

/* A valid CSR matrix (host or device) for a plan; `name` and `what` for messages. */
static nz_status_t check_csr(nz_context_t *ctx, const nz_matrix_t *A, const char *name,
                            const char *what) {
    NZI_TRY(nzi_check_matrix(ctx, A, name));
    if (A->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: %s is a %s matrix; plans take csr (convert it with "
                         "nz_matrix_convert)",
                         what, name, nz_format_name(A->format));
    return NZ_SUCCESS;
}

/* Two operands of one location and value type. */
static nz_status_t check_pair(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B,
                              const char *a_name, const char *b_name, const char *what) {
    if (A->location != B->location)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION, "%s: %s is a %s matrix and %s a %s one",
                         what, a_name, location_name(A->location), b_name,
                         location_name(B->location));
    if (A->value_type != B->value_type)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: %s holds %s and %s %s values; convert one of them "
                         "(nz_matrix_convert_values)",
                         what, a_name, type_name(A->value_type), b_name,
                         type_name(B->value_type));
    return NZ_SUCCESS;
}

/* An execute's operand against the plan's: same location, type, shape and nonzero count. */
static nz_status_t check_operand(nz_context_t *ctx, const nz_matrix_t *A, const char *name,
                                 nz_location_t location, nz_value_type_t vt,
                                 const operand_shape_t *want, const char *what) {
    NZI_TRY(check_csr(ctx, A, name, what));
    if (A->location != location)
        return nzi_error(ctx, NZ_ERR_WRONG_LOCATION, "%s: %s is a %s matrix, the plan's is a %s one",
                         what, name, location_name(A->location), location_name(location));
    if (A->value_type != vt)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: %s holds %s values, the plan's %s",
                         what, name, type_name(A->value_type), type_name(vt));
    if (A->rows != want->rows || A->cols != want->cols || A->nnz != want->nnz)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: %s is %lld x %lld with %lld nonzeros, the plan's was %lld x %lld "
                         "with %lld (a plan takes new values, not a new pattern)",
                         what, name, (long long)A->rows, (long long)A->cols, (long long)A->nnz,
                         (long long)want->rows, (long long)want->cols, (long long)want->nnz);
    return NZ_SUCCESS;
}

static nz_status_t check_output(nz_context_t *ctx, const nz_matrix_t *C, uint64_t serial,
                                const char *what) {
    NZI_TRY(nzi_check_matrix(ctx, C, "C"));
    if (C->serial != serial)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: C is not the matrix this plan created (its values go into that "
                         "matrix's pattern)",
                         what);
    return NZ_SUCCESS;
}

static void base_init(plan_base_t *P, uint64_t magic, nz_context_t *ctx, const nz_matrix_t *A,
                      const nz_matrix_t *B) {
    P->magic = magic;
    P->ctx = ctx;
    P->ops = nzi_backend_of(A);
    P->location = A->location;
    P->value_type = A->value_type;
    P->a = shape_of(A);
    P->b = shape_of(B);
}

/* An execute's operands (named "A" and b_name) and C against the plan's. */
static nz_status_t base_check(const plan_base_t *P, const nz_matrix_t *A, const nz_matrix_t *B,
                              const char *b_name, const nz_matrix_t *C, const char *what) {
    NZI_TRY(check_operand(P->ctx, A, "A", P->location, P->value_type, &P->a, what));
    NZI_TRY(check_operand(P->ctx, B, b_name, P->location, P->value_type, &P->b, what));
    return check_output(P->ctx, C, P->c_serial, what);
}

/* What every plan constructor checks first: a valid context (its last error then cleared),
 * non-NULL outputs, CSR operands of one location and value type (the second named b_name). */
static nz_status_t create_check(nz_context_t *ctx, const void *plan, const void *C,
                                const nz_matrix_t *A, const nz_matrix_t *B, const char *b_name,
                                const char *what) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (plan == NULL || C == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: plan or C is NULL", what);
    NZI_TRY(check_csr(ctx, A, "A", what));
    NZI_TRY(check_csr(ctx, B, b_name, what));
    return check_pair(ctx, A, B, "A", b_name, what);
}

/* ---- SpGEMM plans --------------------------------------------------------------------------- */

nz_status_t nz_spgemm_plan_create(nz_context_t *ctx, nz_spgemm_plan_t **plan, nz_matrix_t **C,
                                  const nz_matrix_t *A, const nz_matrix_t *B,
                                  const nz_spgemm_options_t *options, nz_spgemm_info_t *info) {
    nz_status_t status = NZ_SUCCESS;
    const char *what = "nz_spgemm_plan_create";
    nz_spgemm_plan_t *P = NULL;
    nz_matrix_t *M = NULL;
    nz_spgemm_options_t opt;
    NZI_TRY(create_check(ctx, plan, C, A, B, "B", what));
    if (options != NULL)
        opt = *options;
    else
        memset(&opt, 0, sizeof opt);
    if (opt.alg == NZ_SPGEMM_AUTO) opt.alg = A->location == NZ_DEVICE ? NZ_SPGEMM_HASH : NZ_SPGEMM_CPU;
    if (!(A->location == NZ_HOST && opt.alg == NZ_SPGEMM_CPU) &&
        !(A->location == NZ_DEVICE && opt.alg == NZ_SPGEMM_HASH))
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: algorithm %s on %s operands keeps no pattern to reuse; plans run "
                         "cpu on host operands and hash on device operands",
                         what, nz_spgemm_alg_name(opt.alg), location_name(A->location));
    P = (nz_spgemm_plan_t *)nzi_calloc(ctx, 1, sizeof *P);
    if (P == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the plan", what);
    base_init(&P->base, NZI_SPGEMM_PLAN_MAGIC, ctx, A, B);
    NZI_CHECK(nz_spgemm(ctx, &M, A, B, &opt, info));
    NZI_CHECK(P->base.ops->spgemm_numeric_setup(ctx, A, B, M, opt.threads, &P->state));
    /* the hash product adds with atomics: its plan's values all come from the numeric phase */
    if (P->base.location == NZ_DEVICE)
        NZI_CHECK(P->base.ops->spgemm_numeric(ctx, P->state, A, B, M));
    P->base.c_serial = M->serial;
    *plan = P;
    *C = M;
    return NZ_SUCCESS;
cleanup:
    if (P->state != NULL) P->base.ops->spgemm_numeric_release(ctx, P->state);
    P->base.magic = NZI_DEAD_MAGIC;
    nzi_free(ctx, P);
    nzi_matrix_free(M);
    return status;
}

nz_status_t nz_spgemm_plan_execute(nz_spgemm_plan_t *plan, const nz_matrix_t *A,
                                   const nz_matrix_t *B, nz_matrix_t *C) {
    if (plan == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (plan->base.magic != NZI_SPGEMM_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    nzi_clear_error(plan->base.ctx);
    NZI_TRY(base_check(&plan->base, A, B, "B", C, "nz_spgemm_plan_execute"));
    return plan->base.ops->spgemm_numeric(plan->base.ctx, plan->state, A, B, C);
}

nz_status_t nz_spgemm_plan_destroy(nz_spgemm_plan_t **plan) {
    if (plan == NULL || *plan == NULL) return NZ_SUCCESS;
    nz_spgemm_plan_t *P = *plan;
    if (P->base.magic != NZI_SPGEMM_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    P->base.ops->spgemm_numeric_release(P->base.ctx, P->state);
    P->base.magic = NZI_DEAD_MAGIC;
    nzi_free(P->base.ctx, P);
    *plan = NULL;
    return NZ_SUCCESS;
}

/* ---- SpGEAM ---------------------------------------------------------------------------------- */

static nz_status_t spgeam_shapes(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B,
                                 const char *what) {
    if (A->rows != B->rows || A->cols != B->cols)
        return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH, "%s: A is %lld x %lld and B %lld x %lld",
                         what, (long long)A->rows, (long long)A->cols, (long long)B->rows,
                         (long long)B->cols);
    return NZ_SUCCESS;
}

nz_status_t nz_spgeam(nz_context_t *ctx, nz_matrix_t **C, double alpha, const nz_matrix_t *A,
                      double beta, const nz_matrix_t *B) {
    nz_status_t status = NZ_SUCCESS;
    const char *what = "nz_spgeam";
    const nz_matrix_t *a_csr = A, *b_csr = B;
    nz_matrix_t *a_owned = NULL, *b_owned = NULL, *M = NULL;
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (C == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: C is NULL", what);
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    NZI_TRY(nzi_check_matrix(ctx, B, "B"));
    NZI_TRY(check_pair(ctx, A, B, "A", "B", what));
    NZI_TRY(spgeam_shapes(ctx, A, B, what));
    if (A->location == NZ_DEVICE) {
        if (A->format != NZ_FORMAT_CSR || B->format != NZ_FORMAT_CSR)
            return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "%s: device operands must be csr", what);
    } else {
        NZI_CHECK(nzi_as_csr(ctx, A, &a_csr, &a_owned));
        NZI_CHECK(nzi_as_csr(ctx, B, &b_csr, &b_owned));
    }
    {
        const nzi_backend_t *ops = nzi_backend_of(A);
        NZI_CHECK(ops->spgeam_symbolic(ctx, a_csr, b_csr, &M));
        NZI_CHECK(ops->spgeam_numeric(ctx, alpha, a_csr, beta, b_csr, M));
    }
    *C = M;
    M = NULL;
cleanup:
    nzi_matrix_free(M);
    nzi_matrix_free(a_owned);
    nzi_matrix_free(b_owned);
    return status;
}

nz_status_t nz_spgeam_plan_create(nz_context_t *ctx, nz_spgeam_plan_t **plan, nz_matrix_t **C,
                                  double alpha, const nz_matrix_t *A, double beta,
                                  const nz_matrix_t *B) {
    nz_status_t status = NZ_SUCCESS;
    const char *what = "nz_spgeam_plan_create";
    nz_spgeam_plan_t *P = NULL;
    nz_matrix_t *M = NULL;
    NZI_TRY(create_check(ctx, plan, C, A, B, "B", what));
    NZI_TRY(spgeam_shapes(ctx, A, B, what));
    P = (nz_spgeam_plan_t *)nzi_calloc(ctx, 1, sizeof *P);
    if (P == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the plan", what);
    base_init(&P->base, NZI_SPGEAM_PLAN_MAGIC, ctx, A, B);
    NZI_CHECK(P->base.ops->spgeam_symbolic(ctx, A, B, &M));
    NZI_CHECK(P->base.ops->spgeam_numeric(ctx, alpha, A, beta, B, M));
    P->base.c_serial = M->serial;
    *plan = P;
    *C = M;
    return NZ_SUCCESS;
cleanup:
    P->base.magic = NZI_DEAD_MAGIC;
    nzi_free(ctx, P);
    nzi_matrix_free(M);
    return status;
}

nz_status_t nz_spgeam_plan_execute(nz_spgeam_plan_t *plan, double alpha, const nz_matrix_t *A,
                                   double beta, const nz_matrix_t *B, nz_matrix_t *C) {
    if (plan == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (plan->base.magic != NZI_SPGEAM_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    nzi_clear_error(plan->base.ctx);
    NZI_TRY(base_check(&plan->base, A, B, "B", C, "nz_spgeam_plan_execute"));
    return plan->base.ops->spgeam_numeric(plan->base.ctx, alpha, A, beta, B, C);
}

nz_status_t nz_spgeam_plan_destroy(nz_spgeam_plan_t **plan) {
    if (plan == NULL || *plan == NULL) return NZ_SUCCESS;
    nz_spgeam_plan_t *P = *plan;
    if (P->base.magic != NZI_SPGEAM_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    P->base.magic = NZI_DEAD_MAGIC;
    nzi_free(P->base.ctx, P);
    *plan = NULL;
    return NZ_SUCCESS;
}

/* ---- the Galerkin product -------------------------------------------------------------------- */

static void rap_free(nz_rap_plan_t *P) {
    nz_context_t *ctx = P->base.ctx;
    (void)nz_spgemm_plan_destroy(&P->ap_plan);
    (void)nz_spgemm_plan_destroy(&P->c_plan);
    nzi_matrix_free(P->R);
    nzi_matrix_free(P->AP);
    if (P->perm != NULL) P->base.ops->transpose_release(ctx, P->perm);
    P->base.magic = NZI_DEAD_MAGIC;
    nzi_free(ctx, P);
}

static void add_info(nz_spgemm_info_t *sum, const nz_spgemm_info_t *part) {
    sum->alg = part->alg;
    sum->products += part->products;
    sum->panels += part->panels;
    sum->seconds += part->seconds;
    sum->symbolic_seconds += part->symbolic_seconds;
    sum->numeric_seconds += part->numeric_seconds;
    sum->transfer_seconds += part->transfer_seconds;
    sum->stage_seconds_sum += part->stage_seconds_sum;
    if (part->peak_device_bytes > sum->peak_device_bytes)
        sum->peak_device_bytes = part->peak_device_bytes;
}

nz_status_t nz_rap_plan_create(nz_context_t *ctx, nz_rap_plan_t **plan, nz_matrix_t **C,
                               const nz_matrix_t *A, const nz_matrix_t *P,
                               const nz_spgemm_options_t *options, nz_spgemm_info_t *info) {
    nz_status_t status = NZ_SUCCESS;
    const char *what = "nz_rap_plan_create";
    nz_rap_plan_t *G = NULL;
    nz_matrix_t *M = NULL;
    nz_spgemm_info_t part, sum;
    double t0 = nzi_wtime();
    NZI_TRY(create_check(ctx, plan, C, A, P, "P", what));
    if (A->rows != A->cols || P->rows != A->rows)
        return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH,
                         "%s: A must be square and P have A's rows: A is %lld x %lld, P %lld x %lld",
                         what, (long long)A->rows, (long long)A->cols, (long long)P->rows,
                         (long long)P->cols);
    G = (nz_rap_plan_t *)nzi_calloc(ctx, 1, sizeof *G);
    if (G == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "%s: cannot allocate the plan", what);
    base_init(&G->base, NZI_RAP_PLAN_MAGIC, ctx, A, P);
    memset(&sum, 0, sizeof sum);
    NZI_CHECK(G->base.ops->transpose(ctx, P, &G->R, &G->perm));
    memset(&part, 0, sizeof part);
    NZI_CHECK(nz_spgemm_plan_create(ctx, &G->ap_plan, &G->AP, A, P, options, &part));
    add_info(&sum, &part);
    memset(&part, 0, sizeof part);
    NZI_CHECK(nz_spgemm_plan_create(ctx, &G->c_plan, &M, G->R, G->AP, options, &part));
    add_info(&sum, &part);
    sum.seconds = nzi_wtime() - t0;
    G->base.c_serial = M->serial;
    if (info != NULL) *info = sum;
    *plan = G;
    *C = M;
    return NZ_SUCCESS;
cleanup:
    nzi_matrix_free(M);
    rap_free(G);
    return status;
}

nz_status_t nz_rap_plan_execute(nz_rap_plan_t *plan, const nz_matrix_t *A, const nz_matrix_t *P,
                                nz_matrix_t *C) {
    if (plan == NULL) return NZ_ERR_NULL_ARGUMENT;
    if (plan->base.magic != NZI_RAP_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    nz_context_t *ctx = plan->base.ctx;
    nzi_clear_error(ctx);
    NZI_TRY(base_check(&plan->base, A, P, "P", C, "nz_rap_plan_execute"));
    NZI_TRY(plan->base.ops->transpose_values(ctx, plan->perm, P, plan->R));
    NZI_TRY(nz_spgemm_plan_execute(plan->ap_plan, A, P, plan->AP));
    return nz_spgemm_plan_execute(plan->c_plan, plan->R, plan->AP, C);
}

nz_status_t nz_rap_plan_destroy(nz_rap_plan_t **plan) {
    if (plan == NULL || *plan == NULL) return NZ_SUCCESS;
    if ((*plan)->base.magic != NZI_RAP_PLAN_MAGIC) return NZ_ERR_INVALID_HANDLE;
    rap_free(*plan);
    *plan = NULL;
    return NZ_SUCCESS;
}

nz_status_t nz_rap(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                   const nz_matrix_t *P, const nz_spgemm_options_t *options) {
    nz_rap_plan_t *plan = NULL;
    NZI_TRY(nz_rap_plan_create(ctx, &plan, C, A, P, options, NULL));
    return nz_rap_plan_destroy(&plan);
}

/* ---- the transpose --------------------------------------------------------------------------- */

nz_status_t nz_matrix_transpose(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (B == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_matrix_transpose: B is NULL");
    NZI_TRY(nzi_check_matrix(ctx, A, "A"));
    if (A->location == NZ_HOST) return nzi_host_transpose(ctx, B, A);
    if (A->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "nz_matrix_transpose: A is a device %s matrix; the device transpose "
                         "takes csr",
                         nz_format_name(A->format));
    return nzi_backend_of(A)->transpose(ctx, A, B, NULL);
}
