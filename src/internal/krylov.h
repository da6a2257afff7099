/* krylov.h: the vector-operation table the Krylov methods of src/solver (BiCGSTAB, GMRES, FGMRES) are written against. */
#ifndef NZI_KRYLOV_H
#define NZI_KRYLOV_H

#include "nzi.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The methods (src/solver/bicgstab.c, gmres.c) see vectors only as opaque pointers of the
 * space's value type and length, and touch them only through this table; a backend (the CPU:
 * src/cpu/krylov_cpu.c) supplies it through nzi_backend_t.krylov_ops. A GPU table keeps its
 * vectors in device memory; a distributed table adds an allreduce to the reductions and its
 * halo exchange to apply. No method changes for either.
 *
 * Reductions return their scalar to the host in double (a method's branch decisions are host
 * logic); every one is a fixed-order sum, so a backend must return bitwise identical scalars
 * for any thread count. Arithmetic is in double, each vector entry rounded once to the value
 * type when stored. Header of the internal layer: it lives here, not in src/solver, because the
 * backends (layer 4) implement it and may not include a header of the solver layer (5).
 */
typedef struct nzi_krylov_space {
    nz_context_t *ctx;
    nz_value_type_t value_type;
    int64_t n;
    const nz_spmv_plan_t *plan;  /* the operator A (NZ_OP_N), run through plan->ops */
    nz_precond_t precond;        /* NONE, JACOBI, USER, L1_JACOBI, ILU0 or IC0 */
    void *dinv;                  /* JACOBI: 1 / diag(A); L1_JACOBI: 1 / sum_j |a_ij|; a vector
                                    of the space (precond_setup) */
    nz_precond_apply_t user_apply; /* USER: the caller's z = M^-1 r; ILU0, IC0: the factored
                                      preconditioner's apply (its status returned as is) */
    void *user;
    int max_dots;                /* multi_dot(2) / multi_axpy(2) take at most this many vectors */
    void *backend;               /* backend-private state (CPU: the block partial sums) */
    void *solver;                /* the solver layer's (nz_solve_operator: its wrapped table);
                                    never read by a backend */
    /* The solver layer's: across processes, every process's status after a step that may fail
     * on some only (allocations), the worst returned everywhere; NULL on one process. */
    nz_status_t (*agree)(struct nzi_krylov_space *s, nz_status_t status);
} nzi_krylov_space_t;

typedef struct nzi_krylov_ops {
    /* The backend's state for reductions of up to s->max_dots vectors; destroy frees it and
     * s->dinv (NULL fields allowed). */
    nz_status_t (*create)(nzi_krylov_space_t *s);
    void (*destroy)(nzi_krylov_space_t *s);
    /* A vector of the space, zero-filled; vec_destroy accepts NULL. */
    nz_status_t (*vec_create)(nzi_krylov_space_t *s, void **v, const char *what);
    void (*vec_destroy)(nzi_krylov_space_t *s, void *v);
    /* JACOBI: s->dinv = 1 / diag(A); L1_JACOBI: 1 / sum_j |a_ij| (A a host CSR matrix);
     * *bad_row = the first row whose diagonal (l1 norm) is missing, zero or not finite (or whose
     * inverse is not finite), n when none. */
    nz_status_t (*precond_setup)(nzi_krylov_space_t *s, const nz_matrix_t *A, int64_t *bad_row);

    /* y = A x (the plan's SpMV; x and y distinct). */
    nz_status_t (*apply)(nzi_krylov_space_t *s, const void *x, void *y);
    /* z = M^-1 r: a copy (NONE), D^-1 r (JACOBI) or the callback (USER; its error returned as
     * is). r and z distinct. */
    nz_status_t (*precond)(nzi_krylov_space_t *s, const void *r, void *z);

    /* *out = x'y; *out = ||x||_2 (sqrt of the fixed-order sum of squares); *out = max |x_i|
     * (NaN when x holds one). */
    nz_status_t (*dot)(nzi_krylov_space_t *s, const void *x, const void *y, double *out);
    nz_status_t (*norm2)(nzi_krylov_space_t *s, const void *x, double *out);
    nz_status_t (*maxabs)(nzi_krylov_space_t *s, const void *x, double *out);
    /* out[j] = V[j]'w for j < k (k <= max_dots): one pass over w, one reduction for all k (what
     * makes classical Gram-Schmidt cheap on a GPU or across nodes). */
    nz_status_t (*multi_dot)(nzi_krylov_space_t *s, int k, void *const *V, const void *w,
                             double *out);
    /* y += sum_j coef[j] V[j] for j < k (k <= max_dots), summed in j order per entry. */
    nz_status_t (*multi_axpy)(nzi_krylov_space_t *s, int k, const double *coef, void *const *V,
                              void *y);
    /* out[j] = V[j]'x and out[k + j] = V[j]'y for j < k (k <= max_dots; out holds 2k): one
     * pass over x, y and the V[j], one reduction for all 2k (the one synchronisation of a
     * GMRES step with delayed re-orthogonalisation: gmres.c). Fixed order, bitwise identical for
     * any thread count, as multi_dot; x and y may be among the V[j]. */
    nz_status_t (*multi_dot2)(nzi_krylov_space_t *s, int k, void *const *V, const void *x,
                              const void *y, double *out);
    /* Two updates in one pass over the V[j] (j < k, k <= max_dots, k = 0 allowed), per entry
     *   y_new = ya y + sum_j a[j] V[j],   z_new = zz z + zy y + sum_j b[j] V[j]
     * with y the entry's old value in both, summed in j order after the scaled y (z) term,
     * each output rounded once (a backend that splits a large k into several passes rounds once
     * per pass). y and z distinct, neither among the V[j]. */
    nz_status_t (*multi_axpy2)(nzi_krylov_space_t *s, int k, const double *a, const double *b,
                               void *const *V, double ya, void *y, double zz, double zy,
                               void *z);

    /* y = a x + b y */
    nz_status_t (*axpby)(nzi_krylov_space_t *s, double a, const void *x, double b, void *y);
    /* z = a x + b y + c z (BiCGSTAB's p = r + beta p - beta omega v, x += alpha p^ + omega s^) */
    nz_status_t (*axpbypcz)(nzi_krylov_space_t *s, double a, const void *x, double b,
                            const void *y, double c, void *z);
    /* y = x; x *= a; x = value */
    nz_status_t (*copy)(nzi_krylov_space_t *s, const void *x, void *y);
    nz_status_t (*scale)(nzi_krylov_space_t *s, double a, void *x);
    nz_status_t (*fill)(nzi_krylov_space_t *s, double value, void *x);
} nzi_krylov_ops_t;

/* The CPU implementation (src/cpu/krylov_cpu.c). */
extern const nzi_krylov_ops_t nzi_krylov_cpu_ops;

#ifdef __cplusplus
}
#endif

#endif /* NZI_KRYLOV_H */
