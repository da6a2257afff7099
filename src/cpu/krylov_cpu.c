/* krylov_cpu.c: the CPU vector operations of the Krylov methods (OpenMP loops, fixed-order block reductions). */
#include "nzi.h"
#include "backend.h"
#include "krylov.h"
#include "cpu_kernels.h"

#include <math.h>
#include <string.h>

/* Reductions are NZI_CPU_FOR_BLOCKS block sums (cpu_kernels.h), the block sums added in block
 * order: bitwise the same for any thread count. partials holds 2 max_dots sums per block
 * (multi_dot2). */
typedef struct krylov_cpu_state {
    int64_t blocks;
    int threads;
    double *partials; /* blocks x 2 max(max_dots, 1) */
} krylov_cpu_state_t;

static krylov_cpu_state_t *cpu_state(const nzi_krylov_space_t *s) {
    return (krylov_cpu_state_t *)s->backend;
}

#define FOR_BLOCKS(s, st, ...) NZI_CPU_FOR_BLOCKS((s)->n, (st)->blocks, (st)->threads, __VA_ARGS__)

/* The typed loops over one block [lo, hi): arithmetic in double, each stored entry rounded once
 * to T. V is an array of k vectors of T. */
#define NZI_KRYLOV_CPU_LOOPS(T, S)                                                              \
    static double block_dot_##S(const void *x_, const void *y_, int64_t lo, int64_t hi) {       \
        const T *x = (const T *)x_, *y = (const T *)y_;                                         \
        double sum = 0.0;                                                                       \
        for (int64_t i = lo; i < hi; i++) sum += (double)x[i] * (double)y[i];                   \
        return sum;                                                                             \
    }                                                                                           \
    static double block_maxabs_##S(const void *x_, int64_t lo, int64_t hi) {                    \
        const T *x = (const T *)x_;                                                             \
        double m = 0.0;                                                                         \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            const double a = fabs((double)x[i]);                                                \
            m = (a > m || a != a) ? a : m;                                                      \
            if (m != m) break;                                                                  \
        }                                                                                       \
        return m;                                                                               \
    }                                                                                           \
    static void block_multi_axpy_##S(int k, const double *coef, void *const *V, void *y_,       \
                                     int64_t lo, int64_t hi) {                                  \
        T *y = (T *)y_;                                                                         \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            double sum = (double)y[i];                                                          \
            for (int j = 0; j < k; j++) sum += coef[j] * (double)((const T *)V[j])[i];          \
            y[i] = (T)sum;                                                                      \
        }                                                                                       \
    }                                                                                           \
    static void block_dot2_##S(const void *v_, const void *x_, const void *y_, int64_t lo,       \
                               int64_t hi, double *ox, double *oy) {                            \
        const T *v = (const T *)v_, *x = (const T *)x_, *y = (const T *)y_;                     \
        double sx = 0.0, sy = 0.0;                                                              \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            const double vi = (double)v[i];                                                     \
            sx += vi * (double)x[i];                                                            \
            sy += vi * (double)y[i];                                                            \
        }                                                                                       \
        *ox = sx;                                                                               \
        *oy = sy;                                                                               \
    }                                                                                           \
    static void block_multi_axpy2_##S(int k, const double *a, const double *b, void *const *V,  \
                                      double ya, void *y_, double zz, double zy, void *z_,      \
                                      int64_t lo, int64_t hi) {                                 \
        T *y = (T *)y_, *z = (T *)z_;                                                           \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            const double yo = (double)y[i];                                                     \
            double sy = ya == 0.0 ? 0.0 : ya * yo; /* a zero factor overwrites a NaN */         \
            double sz = (zz == 0.0 ? 0.0 : zz * (double)z[i]) + (zy == 0.0 ? 0.0 : zy * yo);    \
            for (int j = 0; j < k; j++) {                                                       \
                const double vj = (double)((const T *)V[j])[i];                                 \
                sy += a[j] * vj;                                                                \
                sz += b[j] * vj;                                                                \
            }                                                                                   \
            y[i] = (T)sy;                                                                       \
            z[i] = (T)sz;                                                                       \
        }                                                                                       \
    }                                                                                           \
    static void block_axpbypcz_##S(double a, const void *x_, double b, const void *y_,          \
                                   double c, void *z_, int64_t lo, int64_t hi) {                \
        const T *x = (const T *)x_, *y = (const T *)y_;                                         \
        T *z = (T *)z_;                                                                         \
        for (int64_t i = lo; i < hi; i++) {                                                     \
            double v = c == 0.0 ? 0.0 : c * (double)z[i]; /* c = 0 overwrites a NaN z */        \
            if (y != NULL) v += b * (double)y[i];                                               \
            z[i] = (T)(a * (double)x[i] + v);                                                   \
        }                                                                                       \
    }                                                                                           \
    static void block_scale_##S(double a, void *x_, int64_t lo, int64_t hi) {                   \
        T *x = (T *)x_;                                                                         \
        for (int64_t i = lo; i < hi; i++) x[i] = (T)(a * (double)x[i]);                         \
    }                                                                                           \
    static void block_fill_##S(double value, void *x_, int64_t lo, int64_t hi) {                \
        T *x = (T *)x_;                                                                         \
        for (int64_t i = lo; i < hi; i++) x[i] = (T)value;                                      \
    }                                                                                           \
    static void block_jacobi_##S(const void *dinv_, const void *r_, void *z_, int64_t lo,       \
                                 int64_t hi) {                                                  \
        const T *dinv = (const T *)dinv_, *r = (const T *)r_;                                   \
        T *z = (T *)z_;                                                                         \
        for (int64_t i = lo; i < hi; i++) z[i] = (T)((double)dinv[i] * (double)r[i]);           \
    }

NZI_KRYLOV_CPU_LOOPS(float, f32)
NZI_KRYLOV_CPU_LOOPS(double, f64)

static void cpu_destroy(nzi_krylov_space_t *s) {
    krylov_cpu_state_t *st = cpu_state(s);
    if (st != NULL) nzi_free(s->ctx, st->partials);
    nzi_free(s->ctx, st);
    nzi_free(s->ctx, s->dinv);
    s->backend = NULL;
    s->dinv = NULL;
}

static nz_status_t cpu_create(nzi_krylov_space_t *s) {
    nz_status_t status = NZ_SUCCESS;
    krylov_cpu_state_t *st = (krylov_cpu_state_t *)nzi_calloc(s->ctx, 1, sizeof *st);
    if (st == NULL) return nzi_error(s->ctx, NZ_ERR_OUT_OF_MEMORY, "nz_solve: CPU workspace");
    s->backend = st;
    st->blocks = NZI_CPU_REDUCE_BLOCKS(s->n);
    st->threads = nzi_context_threads(s->ctx);
    /* multi_dot2: two sums per vector */
    const size_t width = 2 * (s->max_dots > 1 ? (size_t)s->max_dots : 1);
    NZI_CHECK(nzi_alloc_array(s->ctx, (void **)&st->partials, (size_t)st->blocks * width + 1,
                              sizeof(double), "nz_solve: partial sums"));
cleanup:
    if (status < 0) cpu_destroy(s);
    return status;
}

static nz_status_t cpu_vec_create(nzi_krylov_space_t *s, void **v, const char *what) {
    const size_t count = s->n > 0 ? (size_t)s->n : 1;
    NZI_TRY(nzi_alloc_array(s->ctx, v, count, nzi_value_size(s->value_type), what));
    memset(*v, 0, count * nzi_value_size(s->value_type));
    return NZ_SUCCESS;
}

static void cpu_vec_destroy(nzi_krylov_space_t *s, void *v) { nzi_free(s->ctx, v); }

/* 1 / a_ii in the value type; a row whose diagonal is missing, zero or non-finite (or whose
 * inverse overflows the value type) is reported, its entry set to 0. Setup cost: one pass over
 * A's entries. */
static nz_status_t cpu_precond_setup(nzi_krylov_space_t *s, const nz_matrix_t *A,
                                     int64_t *bad_row) {
    nz_status_t status = NZ_SUCCESS;
    double *d = NULL;
    *bad_row = s->n;
    NZI_CHECK(cpu_vec_create(s, &s->dinv, "nz_solve: inverse diagonal"));
    NZI_CHECK(nzi_alloc_array(s->ctx, (void **)&d, s->n > 0 ? (size_t)s->n : 1, sizeof(double),
                              "nz_solve: diagonal"));
    memset(d, 0, (s->n > 0 ? (size_t)s->n : 1) * sizeof(double));
    if (s->precond == NZ_PRECOND_L1_JACOBI) {
        /* the l1 row norms sum_j |a_ij| (A is CSR here: nz_solve converts it); a non-finite
         * entry makes its row's norm non-finite, reported below */
        const nzi_csr_t *c = &A->host.csr;
        for (int64_t i = 0; i < s->n; i++)
            for (int64_t k = c->row_offsets[i]; k < c->row_offsets[i + 1]; k++)
                d[i] += fabs(nzi_get(c->values, A->value_type, k));
    } else {
        nzi_cpu_extract_diagonal(A, d);
    }
    for (int64_t i = 0; i < s->n; i++) {
        double inv = 1.0 / d[i];
        nzi_set(s->dinv, s->value_type, i, inv);
        const double stored = nzi_get(s->dinv, s->value_type, i);
        if (!(d[i] != 0.0) || !isfinite(d[i]) || !isfinite(stored)) {
            if (*bad_row == s->n) *bad_row = i;
            nzi_set(s->dinv, s->value_type, i, 0.0);
        }
    }
cleanup:
    nzi_free(s->ctx, d);
    return status;
}

static nz_status_t cpu_apply(nzi_krylov_space_t *s, const void *x, void *y) {
    return s->plan->ops->spmv_execute(s->plan, 1.0, x, 0.0, y);
}

static nz_status_t cpu_copy(nzi_krylov_space_t *s, const void *x, void *y) {
    if (s->n > 0) memcpy(y, x, (size_t)s->n * nzi_value_size(s->value_type));
    return NZ_SUCCESS;
}

static nz_status_t cpu_precond(nzi_krylov_space_t *s, const void *r, void *z) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    switch (s->precond) {
    case NZ_PRECOND_JACOBI:
    case NZ_PRECOND_L1_JACOBI:
        FOR_BLOCKS(s, st, {
            if (f32)
                block_jacobi_f32(s->dinv, r, z, lo, hi);
            else
                block_jacobi_f64(s->dinv, r, z, lo, hi);
        });
        return NZ_SUCCESS;
    case NZ_PRECOND_ILU0:
    case NZ_PRECOND_IC0: return s->user_apply(s->user, r, z);
    case NZ_PRECOND_USER: {
        nz_status_t status = s->user_apply(s->user, r, z);
        if (status != NZ_SUCCESS)
            return nzi_error(s->ctx, status < 0 ? status : NZ_ERR_INVALID_ARGUMENT,
                             "nz_solve: the preconditioner callback returned %d (%s)",
                             (int)status, nz_status_string(status));
        return NZ_SUCCESS;
    }
    default: return cpu_copy(s, r, z);
    }
}

static nz_status_t cpu_dot(nzi_krylov_space_t *s, const void *x, const void *y, double *out) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    FOR_BLOCKS(s, st, st->partials[blk] = f32 ? block_dot_f32(x, y, lo, hi)
                                               : block_dot_f64(x, y, lo, hi));
    double sum = 0.0;
    for (int64_t b = 0; b < st->blocks; b++) sum += st->partials[b];
    *out = sum;
    return NZ_SUCCESS;
}

static nz_status_t cpu_norm2(nzi_krylov_space_t *s, const void *x, double *out) {
    double sum;
    NZI_TRY(cpu_dot(s, x, x, &sum));
    *out = sqrt(sum);
    return NZ_SUCCESS;
}

static nz_status_t cpu_maxabs(nzi_krylov_space_t *s, const void *x, double *out) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    FOR_BLOCKS(s, st, st->partials[blk] = f32 ? block_maxabs_f32(x, lo, hi)
                                               : block_maxabs_f64(x, lo, hi));
    double m = 0.0;
    for (int64_t b = 0; b < st->blocks; b++)
        m = (st->partials[b] > m || st->partials[b] != st->partials[b]) ? st->partials[b] : m;
    *out = m;
    return NZ_SUCCESS;
}

/* Each block computes its k dots (w is read from cache k times); the k block sums go to
 * partials[blk * k + j] and are added in block order per j. */
static nz_status_t cpu_multi_dot(nzi_krylov_space_t *s, int k, void *const *V, const void *w,
                                 double *out) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    if (k <= 0) return NZ_SUCCESS;
    if (k > s->max_dots)
        return nzi_error(s->ctx, NZ_ERR_INVALID_ARGUMENT, "nz_solve: %d dots > %d", k, s->max_dots);
    FOR_BLOCKS(s, st, {
        for (int j = 0; j < k; j++)
            st->partials[blk * k + j] = f32 ? block_dot_f32(V[j], w, lo, hi)
                                            : block_dot_f64(V[j], w, lo, hi);
    });
    for (int j = 0; j < k; j++) {
        double sum = 0.0;
        for (int64_t b = 0; b < st->blocks; b++) sum += st->partials[b * k + j];
        out[j] = sum;
    }
    return NZ_SUCCESS;
}

static nz_status_t cpu_multi_axpy(nzi_krylov_space_t *s, int k, const double *coef,
                                  void *const *V, void *y) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    if (k <= 0) return NZ_SUCCESS;
    FOR_BLOCKS(s, st, {
        if (f32)
            block_multi_axpy_f32(k, coef, V, y, lo, hi);
        else
            block_multi_axpy_f64(k, coef, V, y, lo, hi);
    });
    return NZ_SUCCESS;
}

/* Each block computes V[j]'x and V[j]'y for every j in one loop over its entries; the 2k block
 * sums go to partials[blk * 2k + ...] and are added in block order per value. */
static nz_status_t cpu_multi_dot2(nzi_krylov_space_t *s, int k, void *const *V, const void *x,
                                  const void *y, double *out) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    if (k <= 0) return NZ_SUCCESS;
    if (k > s->max_dots)
        return nzi_error(s->ctx, NZ_ERR_INVALID_ARGUMENT, "nz_solve: %d dots > %d", k, s->max_dots);
    const int64_t w = 2 * (int64_t)k;
    FOR_BLOCKS(s, st, {
        for (int j = 0; j < k; j++) {
            double *p = st->partials + blk * w;
            if (f32)
                block_dot2_f32(V[j], x, y, lo, hi, p + j, p + k + j);
            else
                block_dot2_f64(V[j], x, y, lo, hi, p + j, p + k + j);
        }
    });
    for (int64_t j = 0; j < w; j++) {
        double sum = 0.0;
        for (int64_t b = 0; b < st->blocks; b++) sum += st->partials[b * w + j];
        out[j] = sum;
    }
    return NZ_SUCCESS;
}

static nz_status_t cpu_multi_axpy2(nzi_krylov_space_t *s, int k, const double *a,
                                   const double *b, void *const *V, double ya, void *y,
                                   double zz, double zy, void *z) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    if (k < 0) k = 0;
    FOR_BLOCKS(s, st, {
        if (f32)
            block_multi_axpy2_f32(k, a, b, V, ya, y, zz, zy, z, lo, hi);
        else
            block_multi_axpy2_f64(k, a, b, V, ya, y, zz, zy, z, lo, hi);
    });
    return NZ_SUCCESS;
}

static nz_status_t cpu_axpbypcz(nzi_krylov_space_t *s, double a, const void *x, double b,
                                const void *y, double c, void *z) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    FOR_BLOCKS(s, st, {
        if (f32)
            block_axpbypcz_f32(a, x, b, y, c, z, lo, hi);
        else
            block_axpbypcz_f64(a, x, b, y, c, z, lo, hi);
    });
    return NZ_SUCCESS;
}

static nz_status_t cpu_axpby(nzi_krylov_space_t *s, double a, const void *x, double b, void *y) {
    return cpu_axpbypcz(s, a, x, 0.0, NULL, b, y);
}

static nz_status_t cpu_scale(nzi_krylov_space_t *s, double a, void *x) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    FOR_BLOCKS(s, st, {
        if (f32)
            block_scale_f32(a, x, lo, hi);
        else
            block_scale_f64(a, x, lo, hi);
    });
    return NZ_SUCCESS;
}

static nz_status_t cpu_fill(nzi_krylov_space_t *s, double value, void *x) {
    krylov_cpu_state_t *st = cpu_state(s);
    const int f32 = s->value_type == NZ_F32;
    FOR_BLOCKS(s, st, {
        if (f32)
            block_fill_f32(value, x, lo, hi);
        else
            block_fill_f64(value, x, lo, hi);
    });
    return NZ_SUCCESS;
}

const nzi_krylov_ops_t nzi_krylov_cpu_ops = {
    .create = cpu_create,
    .destroy = cpu_destroy,
    .vec_create = cpu_vec_create,
    .vec_destroy = cpu_vec_destroy,
    .precond_setup = cpu_precond_setup,
    .apply = cpu_apply,
    .precond = cpu_precond,
    .dot = cpu_dot,
    .norm2 = cpu_norm2,
    .maxabs = cpu_maxabs,
    .multi_dot = cpu_multi_dot,
    .multi_axpy = cpu_multi_axpy,
    .multi_dot2 = cpu_multi_dot2,
    .multi_axpy2 = cpu_multi_axpy2,
    .axpby = cpu_axpby,
    .axpbypcz = cpu_axpbypcz,
    .copy = cpu_copy,
    .scale = cpu_scale,
    .fill = cpu_fill,
};
