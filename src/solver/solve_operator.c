/* solve_operator.c: nz_solve_operator, the Krylov family on a caller's operator (matrix-free, and the distributed layer's halo SpMV and allreduce). */
#include "nzi.h"
#include "backend.h"
#include "krylov_method.h"
#include "solve_internal.h"

#include <math.h>
#include <string.h>

/*
 * The methods run on the table of the backend where the operator's vectors live (the CPU's for
 * NZ_HOST, the GPU's for NZ_DEVICE), wrapped: apply is the caller's operator, and every
 * reduction is the table's local fixed-order sum followed by the caller's allreduce (when
 * given): dot, multi_dot and multi_dot2 sum their partial results, norm2 sums the squares
 * before its square root, maxabs takes the maximum. So a method written once runs on one
 * process or many, and a distributed solve is bitwise reproducible whenever the allreduce is
 * (the distributed layer's sums the ranks' parts in rank order).
 */

typedef struct operator_table {
    nzi_krylov_ops_t ops;          /* the base table with the entries below replaced */
    const nzi_krylov_ops_t *base;
    const nz_operator_t *op;
} operator_table_t;

static const operator_table_t *table_of(const nzi_krylov_space_t *s) {
    return (const operator_table_t *)s->solver;
}

static nz_status_t reduce(nzi_krylov_space_t *s, double *values, int count, nz_reduce_op_t how) {
    const nz_operator_t *op = table_of(s)->op;
    if (op->allreduce == NULL) return NZ_SUCCESS;
    nz_status_t status = op->allreduce(op->reduce_user, values, count, how);
    if (status != NZ_SUCCESS && nz_context_last_error(s->ctx)[0] == '\0')
        return nzi_error(s->ctx, status, "nz_solve_operator: the allreduce callback failed (%s)",
                         nz_status_string(status));
    return status;
}

/* The worst status of every process (statuses are negative for errors: the maximum of -status
 * is the worst); a process that did not fail itself learns which status another one met. */
static nz_status_t op_agree(nzi_krylov_space_t *s, nz_status_t status) {
    double worst = -(double)status;
    nz_status_t st = reduce(s, &worst, 1, NZ_REDUCE_MAX);
    if (st != NZ_SUCCESS) return status < 0 ? status : st;
    if (status >= 0 && worst > 0.0) {
        const nz_status_t other = (nz_status_t)(-worst);
        return nzi_error(s->ctx, other, "nz_solve_operator: another process failed (%s)",
                         nz_status_string(other));
    }
    return status;
}

static nz_status_t op_apply(nzi_krylov_space_t *s, const void *x, void *y) {
    const nz_operator_t *op = table_of(s)->op;
    nz_status_t status = op->apply(op->user, x, y);
    if (status != NZ_SUCCESS && nz_context_last_error(s->ctx)[0] == '\0')
        return nzi_error(s->ctx, status, "nz_solve_operator: the apply callback failed (%s)",
                         nz_status_string(status));
    return status;
}

static nz_status_t op_dot(nzi_krylov_space_t *s, const void *x, const void *y, double *out) {
    NZI_TRY(table_of(s)->base->dot(s, x, y, out));
    return reduce(s, out, 1, NZ_REDUCE_SUM);
}

static nz_status_t op_norm2(nzi_krylov_space_t *s, const void *x, double *out) {
    const operator_table_t *t = table_of(s);
    if (t->op->allreduce == NULL) return t->base->norm2(s, x, out);
    double sq;
    NZI_TRY(t->base->dot(s, x, x, &sq));
    NZI_TRY(reduce(s, &sq, 1, NZ_REDUCE_SUM));
    *out = sqrt(sq);
    return NZ_SUCCESS;
}

static nz_status_t op_maxabs(nzi_krylov_space_t *s, const void *x, double *out) {
    NZI_TRY(table_of(s)->base->maxabs(s, x, out));
    return reduce(s, out, 1, NZ_REDUCE_MAX);
}

static nz_status_t op_multi_dot(nzi_krylov_space_t *s, int k, void *const *V, const void *w,
                                double *out) {
    NZI_TRY(table_of(s)->base->multi_dot(s, k, V, w, out));
    return reduce(s, out, k, NZ_REDUCE_SUM);
}

/* The 2k sums of multi_dot2 in one allreduce. */
static nz_status_t op_multi_dot2(nzi_krylov_space_t *s, int k, void *const *V, const void *x,
                                 const void *y, double *out) {
    NZI_TRY(table_of(s)->base->multi_dot2(s, k, V, x, y, out));
    return reduce(s, out, k > 0 ? 2 * k : 0, NZ_REDUCE_SUM);
}

/* The checks made before anything is allocated. */
static nz_status_t operator_check(nz_context_t *ctx, const nz_operator_t *A, const void *b,
                                  const void *x, const nzi_krylov_ops_t **base) {
    const char *what = "nz_solve_operator";
    if (A == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: the operator is NULL", what);
    if (A->apply == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: the operator has no apply callback",
                         what);
    if (A->rows < 0)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: rows %lld < 0", what,
                         (long long)A->rows);
    if (A->value_type != NZ_F32 && A->value_type != NZ_F64)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: value_type %d is neither NZ_F32 nor NZ_F64", what,
                         (int)A->value_type);
    if (A->location != NZ_HOST && A->location != NZ_DEVICE)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: location %d is neither NZ_HOST nor NZ_DEVICE", what,
                         (int)A->location);
    const nzi_backend_t *backend =
        nzi_backend_get(A->location == NZ_HOST ? NZ_BACKEND_CPU : NZ_BACKEND_CUDA);
    if (A->location == NZ_DEVICE && nzi_backend_of_context(ctx) != backend)
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: the operator's vectors are on the device but the context is not "
                         "bound to one (nz_context_set_device)", what);
    *base = backend != NULL && backend->krylov_ops != NULL ? backend->krylov_ops() : NULL;
    if (*base == NULL)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                         "%s: this build has no Krylov vector operations on the %s", what,
                         A->location == NZ_HOST ? "host" : "device");
    if (A->rows > 0 && (b == NULL || x == NULL))
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: b or x is NULL", what);
    size_t bytes;
    if (nzi_mul_overflow_size((size_t)A->rows, nzi_value_size(A->value_type), &bytes))
        return nzi_error(ctx, NZ_ERR_OVERFLOW, "%s: %lld rows overflow the vector size", what,
                         (long long)A->rows);
    if (nzi_ranges_overlap(b, bytes, x, bytes))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                         "%s: b and x overlap in memory (x is updated while b is still needed); "
                         "use separate arrays", what);
    return NZ_SUCCESS;
}

static nz_status_t object_apply(void *user, const void *r, void *z) {
    return nz_precond_apply((const nz_preconditioner_t *)user, r, z);
}

/* What an operator can be preconditioned by: nothing, a callback or a preconditioner object. */
static nz_status_t operator_precond(nz_context_t *ctx, const nz_operator_t *A,
                                    const nz_solve_options_t *opt, nzi_krylov_space_t *space) {
    if (opt->preconditioner != NULL) {
        nz_precond_info_t info;
        NZI_TRY(nz_precond_info(opt->preconditioner, &info));
        if (info.rows != A->rows)
            return nzi_error(ctx, NZ_ERR_DIMENSION_MISMATCH,
                             "nz_solve_operator: the preconditioner is %lld x %lld, the "
                             "operator has %lld rows", (long long)info.rows,
                             (long long)info.rows, (long long)A->rows);
        if (info.value_type != A->value_type || info.location != A->location)
            return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                             "nz_solve_operator: the preconditioner's vectors are %s on the %s, "
                             "the operator's %s on the %s",
                             info.value_type == NZ_F32 ? "f32" : "f64",
                             info.location == NZ_HOST ? "host" : "device",
                             A->value_type == NZ_F32 ? "f32" : "f64",
                             A->location == NZ_HOST ? "host" : "device");
        space->precond = NZ_PRECOND_USER;
        space->user_apply = object_apply;
        space->user = (void *)opt->preconditioner;
        return NZ_SUCCESS;
    }
    if (opt->precond == NZ_PRECOND_NONE || opt->precond == NZ_PRECOND_USER) {
        space->precond = opt->precond;
        space->user_apply = opt->precond_apply;
        space->user = opt->precond_user;
        return NZ_SUCCESS;
    }
    return nzi_error(ctx, NZ_ERR_UNSUPPORTED,
                     "nz_solve_operator: an operator has no matrix to build a %s "
                     "preconditioner from: pass one made from a matrix (nz_precond_create) as "
                     "options->preconditioner, or a callback (NZ_PRECOND_USER)",
                     nz_precond_name(opt->precond));
}

nz_status_t nz_solve_operator(nz_context_t *ctx, const nz_operator_t *A, const void *b, void *x,
                              const nz_solve_options_t *options, nz_solve_result_t *result) {
    nz_solve_result_t res;
    nz_solve_options_t opt;
    nz_status_t status = NZ_SUCCESS;
    const nzi_krylov_ops_t *base = NULL;
    operator_table_t table;
    nzi_krylov_space_t space;
    int created = 0;
    memset(&res, 0, sizeof res);
    memset(&space, 0, sizeof space);
    res.residual_norm = res.relative_residual = NAN;
    res.reason = NZ_SOLVE_NOT_RUN;
    if (result != NULL) *result = res;
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    res.method = options != NULL ? options->method : NZ_METHOD_CG;
    const double t0 = nzi_wtime();
    NZI_CHECK(operator_check(ctx, A, b, x, &base));
    NZI_CHECK(nzi_solve_options(ctx, options, A->rows, &opt));
    table.ops = *base;
    table.base = base;
    table.op = A;
    table.ops.apply = op_apply;
    table.ops.dot = op_dot;
    table.ops.norm2 = op_norm2;
    table.ops.maxabs = op_maxabs;
    table.ops.multi_dot = op_multi_dot;
    table.ops.multi_dot2 = op_multi_dot2;
    table.ops.precond_setup = NULL;
    space.ctx = ctx;
    space.value_type = A->value_type;
    space.n = A->rows;
    space.solver = &table;
    space.max_dots = nzi_solve_max_dots(&opt);
    if (A->allreduce != NULL) space.agree = op_agree;
    NZI_CHECK(operator_precond(ctx, A, &opt, &space));
    status = base->create(&space);
    created = status == NZ_SUCCESS;
    if (space.agree != NULL) status = op_agree(&space, status);
    if (status != NZ_SUCCESS) goto cleanup;
    status = nzi_solve_run(ctx, &table.ops, &space, b, x, &opt, &res, t0);
cleanup:
    if (created) base->destroy(&space);
    res.status = status;
    if (result != NULL)
        *result = res;
    else
        nzi_free(ctx, res.history);
    return status;
}
