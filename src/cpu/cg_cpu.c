/* cg_cpu.c: the CPU vector operations for CG (OpenMP, fused updates, reproducible dot products). */
#include "nzi.h"
#include "cg_work.h"
#include "cpu_kernels.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Dot products are fixed-order block sums (NZI_CPU_FOR_BLOCKS, cpu_kernels.h): bitwise the same
 * for any thread count. */
#define NZI_CG_BLOCK NZI_CPU_REDUCE_BLOCK

typedef struct cg_cpu_state {
    int64_t blocks;
    double *partials; /* 2 x blocks */
    int threads;
} cg_cpu_state_t;

static cg_cpu_state_t *cpu_state(const nzi_cg_work_t *w) { return (cg_cpu_state_t *)w->backend; }


/* The typed loops over one block [lo, hi). Arithmetic in double, results rounded to T. */
#define NZI_CG_CPU_LOOPS(T, S)                                                                  \
    static double block_dot_##S(const void *a_, const void *b_, int64_t lo, int64_t hi) {       \
        const T *a = (const T *)a_, *b = (const T *)b_;                                         \
        double sum = 0.0;                                                                       \
        for (int64_t i = lo; i < hi; i++) sum += (double)a[i] * (double)b[i];                   \
        return sum;                                                                             \
    }                                                                                           \
    static double block_norm2_##S(const void *v_, double scale, int64_t lo, int64_t hi) {       \
        const T *v = (const T *)v_;                                                             \
        double sum = 0.0;                                                                       \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            const double vi = scale * (double)v[i];                                             \
            sum += vi * vi;                                                                     \
        }                                                                                       \
        return sum;                                                                             \
    }                                                                                           \
    static double block_maxabs_##S(const void *v_, int64_t lo, int64_t hi) {                    \
        const T *v = (const T *)v_;                                                             \
        double m = 0.0;                                                                         \
        for (int64_t i = lo; i < hi; i++) m = nzi_cg_max(fabs((double)v[i]), m);               \
        return m;                                                                               \
    }                                                                                           \
    static void block_scale_##S(void *v_, double factor, int64_t lo, int64_t hi) {              \
        T *v = (T *)v_;                                                                         \
        for (int64_t i = lo; i < hi; i++) v[i] = (T)(factor * (double)v[i]);                    \
    }                                                                                           \
    static void block_update_r_##S(void *r_, const void *q_, const void *dinv_, double alpha,   \
                                   int64_t lo, int64_t hi, double *rr, double *rz) {            \
        T *r = (T *)r_;                                                                         \
        const T *q = (const T *)q_, *dinv = (const T *)dinv_;                                   \
        double srr = 0.0, srz = 0.0;                                                            \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            T ri = (T)((double)r[i] - alpha * (double)q[i]);                                    \
            r[i] = ri;                                                                          \
            double zi = dinv != NULL ? (double)ri * (double)dinv[i] : (double)ri;              \
            srr += (double)ri * (double)ri;                                                     \
            srz += (double)ri * zi;                                                             \
        }                                                                                       \
        *rr = srr;                                                                              \
        *rz = srz;                                                                              \
    }                                                                                           \
    /* x += alpha p (x != NULL), then p = M^-1 r + beta p (update_p) */                          \
    static void block_update_xp_##S(void *x_, void *p_, const void *r_, const void *dinv_,      \
                                    double alpha, double beta, int update_p, int64_t lo,        \
                                    int64_t hi) {                                               \
        T *x = (T *)x_, *p = (T *)p_;                                                           \
        const T *r = (const T *)r_, *dinv = (const T *)dinv_;                                   \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            const double pi = (double)p[i];                                                     \
            if (x != NULL) x[i] = (T)((double)x[i] + alpha * pi);                               \
            if (update_p) {                                                                     \
                double zi = dinv != NULL ? (double)r[i] * (double)dinv[i] : (double)r[i];      \
                p[i] = (T)(zi + beta * pi);                                                     \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    static void block_residual_##S(void *r_, void *p_, const void *b_, double bscale,           \
                                   const void *q_, const void *dinv_, int64_t lo, int64_t hi,   \
                                   double *rr, double *rz) {                                    \
        T *r = (T *)r_, *p = (T *)p_;                                                           \
        const T *b = (const T *)b_, *q = (const T *)q_, *dinv = (const T *)dinv_;               \
        double srr = 0.0, srz = 0.0;                                                            \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            T ri = (T)(bscale * (double)b[i] - (double)q[i]);                                   \
            r[i] = ri;                                                                          \
            double zi = dinv != NULL ? (double)ri * (double)dinv[i] : (double)ri;              \
            p[i] = (T)zi;                                                                       \
            srr += (double)ri * (double)ri;                                                     \
            srz += (double)ri * zi;                                                             \
        }                                                                                       \
        *rr = srr;                                                                              \
        *rz = srz;                                                                              \
    }

NZI_CG_CPU_LOOPS(float, f32)
NZI_CG_CPU_LOOPS(double, f64)

/* Run `body` for each block [lo, hi) of the n entries (cpu_kernels.h). */
#define NZI_CG_FOR_BLOCKS(w, st, body) NZI_CPU_FOR_BLOCKS((w)->n, (st)->blocks, (st)->threads, body)

/* Sum the partials of slot `slot` (0 or 1) in block order. */
static double sum_partials(const cg_cpu_state_t *st, int slot) {
    double sum = 0.0;
    for (int64_t k = 0; k < st->blocks; k++) sum += st->partials[2 * k + slot];
    return sum;
}

static void cpu_destroy(nzi_cg_work_t *w) {
    nz_context_t *ctx = w->ctx;
    cg_cpu_state_t *st = cpu_state(w);
    if (st != NULL) nzi_free(ctx, st->partials);
    nzi_free(ctx, st);
    nzi_free(ctx, w->r);
    nzi_free(ctx, w->p);
    nzi_free(ctx, w->q);
    nzi_free(ctx, w->dinv);
    nzi_free(ctx, w->scalars);
    nzi_free(ctx, w->history);
    w->backend = w->r = w->p = w->q = w->dinv = NULL;
    w->scalars = NULL;
    w->history = NULL;
}

static nz_status_t cpu_create(nzi_cg_work_t *w) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = w->ctx;
    const size_t vs = nzi_value_size(w->value_type), n = (size_t)w->n;
    cg_cpu_state_t *st = (cg_cpu_state_t *)nzi_calloc(ctx, 1, sizeof *st);
    if (st == NULL) return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "nz_cg_solve: CPU workspace");
    w->backend = st;
    st->blocks = (w->n + NZI_CG_BLOCK - 1) / NZI_CG_BLOCK;
    st->threads = nzi_context_threads(ctx);
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&st->partials, 2 * (size_t)st->blocks + 2,
                              sizeof(double), "nz_cg_solve: partial sums"));
    NZI_CHECK(nzi_alloc_array(ctx, &w->r, n, vs, "nz_cg_solve: residual r"));
    NZI_CHECK(nzi_alloc_array(ctx, &w->p, n, vs, "nz_cg_solve: direction p"));
    NZI_CHECK(nzi_alloc_array(ctx, &w->q, n, vs, "nz_cg_solve: product q = A p"));
    if (w->jacobi)
        NZI_CHECK(nzi_alloc_array(ctx, &w->dinv, n, vs, "nz_cg_solve: inverse diagonal"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&w->scalars, 1, sizeof(nzi_cg_scalars_t),
                              "nz_cg_solve: scalars"));
    memset(w->scalars, 0, sizeof *w->scalars);
    if (w->history_capacity > 0)
        NZI_CHECK(nzi_alloc_array(ctx, (void **)&w->history, (size_t)w->history_capacity,
                                  sizeof(double), "nz_cg_solve: residual history"));
cleanup:
    if (status < 0) cpu_destroy(w); /* a failed create leaves nothing behind */
    return status;
}

/* ---- the diagonal of a host matrix in any format (setup cost: one pass over the entries) ---- */

static void diag_visit(double *d, int64_t row, int64_t col, double v) {
    if (row == col) d[row] += v;
}

void nzi_cpu_extract_diagonal(const nz_matrix_t *A, double *d) {
    const nz_value_type_t t = A->value_type;
    const int64_t n = A->rows;
    switch (A->format) {
    case NZ_FORMAT_CSR:
    case NZ_FORMAT_CSC: {
        /* CSC shares the CSR arrays for the transpose; the diagonal is the same. */
        const nzi_csr_t *c = &A->host.csr;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++)
                diag_visit(d, i, c->col_indices[k], nzi_get(c->values, t, k));
        break;
    }
    case NZ_FORMAT_COO:
        for (int64_t k = 0; k < A->nnz; k++)
            diag_visit(d, A->host.coo.row_indices[k], A->host.coo.col_indices[k],
                       nzi_get(A->host.coo.values, t, k));
        break;
    case NZ_FORMAT_ELL:
    case NZ_FORMAT_HYB: {
        const nzi_ell_t *e = A->format == NZ_FORMAT_ELL ? &A->host.ell : &A->host.hyb.ell;
        for (int64_t k = 0; k < e->width; k++)
            for (int64_t i = 0; i < n; i++)
                diag_visit(d, i, e->col_indices[k * n + i], nzi_get(e->values, t, k * n + i));
        if (A->format == NZ_FORMAT_HYB)
            for (int64_t k = 0; k < A->host.hyb.coo_nnz; k++)
                diag_visit(d, A->host.hyb.coo.row_indices[k], A->host.hyb.coo.col_indices[k],
                           nzi_get(A->host.hyb.coo.values, t, k));
        break;
    }
    case NZ_FORMAT_SELL: {
        const nzi_sell_t *s = &A->host.sell;
        for (int64_t c = 0; c < s->num_chunks; c++)
            for (int64_t k = 0; k < s->chunk_widths[c]; k++)
                for (int64_t slot = 0; slot < s->chunk; slot++) {
                    int64_t row = s->row_of_slot[c * s->chunk + slot];
                    int64_t at = s->chunk_offsets[c] + k * s->chunk + slot;
                    if (row >= 0) diag_visit(d, row, s->col_indices[at], nzi_get(s->values, t, at));
                }
        break;
    }
    case NZ_FORMAT_BSR: {
        const nzi_bsr_t *B = &A->host.bsr;
        const int64_t bs = B->block;
        for (int64_t br = 0; br < B->block_rows; br++)
            for (int64_t k = B->block_row_offsets[br]; k < B->block_row_offsets[br + 1]; k++) {
                if (B->block_col_indices[k] != br) continue;
                for (int64_t i = 0; i < bs && br * bs + i < n; i++)
                    d[br * bs + i] += nzi_get(B->values, t, (k * bs + i) * bs + i);
            }
        break;
    }
    case NZ_FORMAT_DIA:
        for (int64_t k = 0; k < A->host.dia.num_diagonals; k++)
            if (A->host.dia.offsets[k] == 0)
                for (int64_t i = 0; i < n; i++) d[i] += nzi_get(A->host.dia.values, t, k * n + i);
        break;
    default: break;
    }
}

static nz_status_t cpu_jacobi(nzi_cg_work_t *w, const nz_matrix_t *A) {
    nz_context_t *ctx = w->ctx;
    double *d = NULL;
    NZI_TRY(nzi_alloc_array(ctx, (void **)&d, (size_t)w->n, sizeof(double), "nz_cg_solve: diagonal"));
    memset(d, 0, (size_t)w->n * sizeof(double));
    nzi_cpu_extract_diagonal(A, d);
    w->scalars->bad_row = w->n;
    for (int64_t i = 0; i < w->n; i++) {
        double inv = 1.0 / d[i];
        if (!(d[i] > 0.0) || !nzi_cg_finite(inv) || !nzi_cg_finite(d[i])) {
            if (w->scalars->bad_row == w->n) w->scalars->bad_row = i;
            inv = 0.0;
        }
        nzi_set(w->dinv, w->value_type, i, inv);
    }
    nzi_free(ctx, d);
    return NZ_SUCCESS;
}

static nz_status_t cpu_norm2(nzi_cg_work_t *w, const void *v, double scale) {
    cg_cpu_state_t *st = cpu_state(w);
    const int f32 = w->value_type == NZ_F32;
    NZI_CG_FOR_BLOCKS(w, st,
                      st->partials[2 * blk] = f32 ? block_norm2_f32(v, scale, lo, hi)
                                                  : block_norm2_f64(v, scale, lo, hi));
    w->scalars->result = sum_partials(st, 0);
    return NZ_SUCCESS;
}

/* The maximum is exact and order-independent; NaN wins (nzi_cg_max), so the block order only
 * keeps the code shaped like the sums. */
static nz_status_t cpu_maxabs(nzi_cg_work_t *w, const void *v) {
    cg_cpu_state_t *st = cpu_state(w);
    const int f32 = w->value_type == NZ_F32;
    NZI_CG_FOR_BLOCKS(w, st,
                      st->partials[2 * blk] = f32 ? block_maxabs_f32(v, lo, hi)
                                                  : block_maxabs_f64(v, lo, hi));
    double m = 0.0;
    for (int64_t k = 0; k < st->blocks; k++) m = nzi_cg_max(st->partials[2 * k], m);
    w->scalars->result = m;
    return NZ_SUCCESS;
}

static nz_status_t cpu_scale(nzi_cg_work_t *w, void *v, double factor) {
    cg_cpu_state_t *st = cpu_state(w);
    const int f32 = w->value_type == NZ_F32;
    NZI_CG_FOR_BLOCKS(w, st, {
        if (f32)
            block_scale_f32(v, factor, lo, hi);
        else
            block_scale_f64(v, factor, lo, hi);
    });
    return NZ_SUCCESS;
}

static nz_status_t cpu_zero(nzi_cg_work_t *w, void *x) {
    memset(x, 0, (size_t)w->n * nzi_value_size(w->value_type));
    return NZ_SUCCESS;
}

static nz_status_t cpu_residual(nzi_cg_work_t *w, const void *b, double bscale, int mode) {
    cg_cpu_state_t *st = cpu_state(w);
    const int f32 = w->value_type == NZ_F32;
    NZI_CG_FOR_BLOCKS(w, st, {
        if (f32)
            block_residual_f32(w->r, w->p, b, bscale, w->q, w->dinv, lo, hi,
                               &st->partials[2 * blk], &st->partials[2 * blk + 1]);
        else
            block_residual_f64(w->r, w->p, b, bscale, w->q, w->dinv, lo, hi,
                               &st->partials[2 * blk], &st->partials[2 * blk + 1]);
    });
    double rr = sum_partials(st, 0), rz = sum_partials(st, 1);
    if (mode == NZI_CG_RESIDUAL_INIT)
        nzi_cg_after_init(w->scalars, rr, rz);
    else if (mode == NZI_CG_RESIDUAL_REPLACE)
        nzi_cg_after_replace(w->scalars, rr, rz);
    else
        w->scalars->result = rr;
    return NZ_SUCCESS;
}

static nz_status_t cpu_dot_pq(nzi_cg_work_t *w) {
    cg_cpu_state_t *st = cpu_state(w);
    w->scalars->x_pending = 0;
    if (w->scalars->state != NZI_CG_RUNNING) return NZ_SUCCESS;
    const int f32 = w->value_type == NZ_F32;
    NZI_CG_FOR_BLOCKS(w, st,
                      st->partials[2 * blk] = f32 ? block_dot_f32(w->p, w->q, lo, hi)
                                                  : block_dot_f64(w->p, w->q, lo, hi));
    nzi_cg_after_pq(w->scalars, sum_partials(st, 0));
    return NZ_SUCCESS;
}

static nz_status_t cpu_update_r(nzi_cg_work_t *w) {
    cg_cpu_state_t *st = cpu_state(w);
    if (w->scalars->state != NZI_CG_RUNNING) return NZ_SUCCESS;
    const int f32 = w->value_type == NZ_F32;
    const double alpha = w->scalars->alpha;
    NZI_CG_FOR_BLOCKS(w, st, {
        if (f32)
            block_update_r_f32(w->r, w->q, w->dinv, alpha, lo, hi, &st->partials[2 * blk],
                               &st->partials[2 * blk + 1]);
        else
            block_update_r_f64(w->r, w->q, w->dinv, alpha, lo, hi, &st->partials[2 * blk],
                               &st->partials[2 * blk + 1]);
    });
    nzi_cg_after_update(w->scalars, sum_partials(st, 0), sum_partials(st, 1));
    return NZ_SUCCESS;
}

static nz_status_t cpu_update_xp(nzi_cg_work_t *w, void *x) {
    cg_cpu_state_t *st = cpu_state(w);
    const int update_p = w->scalars->state == NZI_CG_RUNNING;
    void *xs = w->scalars->x_pending ? x : NULL;
    if (xs == NULL && !update_p) return NZ_SUCCESS;
    const int f32 = w->value_type == NZ_F32;
    const double alpha = w->scalars->alpha, beta = w->scalars->beta;
    NZI_CG_FOR_BLOCKS(w, st, {
        if (f32)
            block_update_xp_f32(xs, w->p, w->r, w->dinv, alpha, beta, update_p, lo, hi);
        else
            block_update_xp_f64(xs, w->p, w->r, w->dinv, alpha, beta, update_p, lo, hi);
    });
    return NZ_SUCCESS;
}

static nz_status_t cpu_get_scalars(nzi_cg_work_t *w, nzi_cg_scalars_t *host) {
    *host = *w->scalars;
    return NZ_SUCCESS;
}

static nz_status_t cpu_set_scalars(nzi_cg_work_t *w, const nzi_cg_scalars_t *host) {
    *w->scalars = *host;
    return NZ_SUCCESS;
}

static nz_status_t cpu_get_history(nzi_cg_work_t *w, double *host, int64_t count) {
    if (count > 0) memcpy(host, w->history, (size_t)count * sizeof(double));
    return NZ_SUCCESS;
}

static nz_status_t cpu_synchronize(nzi_cg_work_t *w) {
    (void)w;
    return NZ_SUCCESS;
}

const nzi_cg_ops_t nzi_cg_cpu_ops = {
    cpu_create,      cpu_destroy,     cpu_jacobi,      cpu_norm2,    cpu_maxabs, cpu_scale,
    cpu_zero,        cpu_residual,    cpu_dot_pq,      cpu_update_r, cpu_update_xp,
    cpu_get_scalars, cpu_set_scalars, cpu_get_history, cpu_synchronize,
    NULL,            NULL,            NULL,
};
