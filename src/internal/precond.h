/* precond.h: the factored preconditioners of nz_solve (ILU(0), IC(0)): factorisation with a diagonal shift, and the apply through SpSV plans. */
#ifndef NZI_PRECOND_H
#define NZI_PRECOND_H

#include "nzi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most factorisations one setup tries (the first unshifted, then growing shifts). */
#define NZI_PRECOND_MAX_ATTEMPTS 8
/* A pivot counts as zero below this fraction of max|a_ij| (PETSc's default zero-pivot
 * tolerance is 1e-12 as well, absolute there; relative here so a scaled A factors the same). */
#define NZI_PRECOND_ZERO_PIVOT 1e-12
/* The first shift, as a fraction of max|a_ii|; each further attempt multiplies it by 10. */
#define NZI_PRECOND_FIRST_SHIFT 1e-3

/* The shift sequence of a factorisation with restarts, shared (header-only, so the backends
 * below the solver layer use it too) by the host factorisation (nzi_factor_compute) and the
 * GPU's (src/cuda/precond/factor_syncfree.cu), so both try the same shifts bit for bit: attempt 1 with
 * shift 0, attempt 2 with NZI_PRECOND_FIRST_SHIFT base, then 10 times the previous one, at most
 * NZI_PRECOND_MAX_ATTEMPTS attempts. base = max|a_ii| (max|a_ij| when the diagonal is zero, 1 for
 * A = 0); tiny = NZI_PRECOND_ZERO_PIVOT max|a_ij|, the bad-pivot threshold. */
typedef struct nzi_shift_sequence {
    double tiny, base;
    double shift;               /* of the current attempt */
    int attempt;                /* the current attempt, 1 .. NZI_PRECOND_MAX_ATTEMPTS */
} nzi_shift_sequence_t;
/* The first attempt (shift 0) for a matrix with max|a_ij| = amax and max|a_ii| = dmax. */
static inline void nzi_shift_start(nzi_shift_sequence_t *seq, double amax, double dmax) {
    seq->tiny = NZI_PRECOND_ZERO_PIVOT * amax;
    seq->base = dmax > 0.0 ? dmax : amax > 0.0 ? amax : 1.0;
    seq->shift = 0.0;
    seq->attempt = 1;
}
/* The next attempt's shift; false (nothing changed) when the attempts are used up. */
static inline bool nzi_shift_next(nzi_shift_sequence_t *seq) {
    if (seq->attempt >= NZI_PRECOND_MAX_ATTEMPTS) return false;
    seq->shift = seq->shift == 0.0 ? NZI_PRECOND_FIRST_SHIFT * seq->base : 10.0 * seq->shift;
    seq->attempt++;
    return true;
}
/* NZ_ERR_BREAKDOWN naming `bad_row` (0-based; printed 1-based) after the last attempt of seq. */
static inline nz_status_t nzi_shift_breakdown(nz_context_t *ctx, const char *name,
                                              int64_t bad_row, const nzi_shift_sequence_t *seq) {
    return nzi_error(ctx, NZ_ERR_BREAKDOWN,
                     "nz_solve: %s preconditioner: pivot of row %lld is zero, negative or not "
                     "finite even with the diagonal shifted by %.3e (%d attempts)",
                     name, (long long)bad_row + 1, seq->shift, seq->attempt);
}

/* A factored preconditioner: F holds the factors in one CSR matrix of A's pattern with every
 * diagonal entry present (ILU(0): L strictly below the diagonal, unit diagonal implied, U on and
 * above it; IC(0): L on and below it, the upper triangle unused), lower / upper the SpSV plans of
 * the two triangular solves, work a vector of A's value type and length between them. */
typedef struct nzi_factor_precond {
    nz_context_t *ctx;
    nz_precond_t kind;          /* NZ_PRECOND_ILU0 or NZ_PRECOND_IC0 */
    nz_matrix_t *F;
    nz_spsv_plan_t *lower;
    nz_spsv_plan_t *upper;
    void *work;                 /* memory of A's backend (device memory for a device A) */
    nz_backend_t backend;       /* A's backend: where F, the plans and work live */
    double shift;               /* the diagonal shift of the accepted factorisation (0: none) */
    int attempts;               /* factorisations tried (1: the unshifted one succeeded) */
    int sweeps;                 /* Jacobi sweeps per triangular solve (NZ_SPSV_JACOBI); 0: exact */
} nzi_factor_precond_t;

/* The factors only: *F (a new host CSR matrix of A's value type and A's pattern with the diagonal
 * added where missing) = ILU(0) or IC(0) of the host CSR matrix A (square, sorted columns),
 * computed in double. A pivot that is not finite, or |pivot| <= 1e-12 max|a_ij| (ILU(0)), or
 * pivot <= 1e-12 max|a_ij| (IC(0), before its square root), restarts the factorisation of
 * A + shift I with shift = 1e-3 max|a_ii| (max|a_ij| when the diagonal is zero, 1 for A = 0),
 * multiplied by 10 per attempt, at most NZI_PRECOND_MAX_ATTEMPTS in all (then NZ_ERR_BREAKDOWN).
 * *shift and *attempts report the accepted one. A non-finite entry of A is
 * NZ_ERR_INVALID_MATRIX naming it. Cost: ILU(0) sum over rows i of sum over k < i in row i of
 * nnz(row k); IC(0) the same over the lower triangle. */
nz_status_t nzi_factor_compute(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                               nz_matrix_t **F, double *shift, int *attempts);

/* Factor A and plan the two triangular solves (ILU(0): L unit lower, U upper; IC(0): L and
 * L^T as op T of the lower triangle), exact or, sweeps > 0, by NZ_SPSV_JACOBI(sweeps). A host CSR A factors on the host (nzi_factor_compute); a
 * device CSR A on its device (the backend's factor_compute: the same shifts and attempts), and F,
 * the SpSV plans and the work vector are then on the device too. *out is freed by
 * nzi_factor_precond_destroy, which accepts NULL. */
nz_status_t nzi_factor_precond_create(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                                      int sweeps, nzi_factor_precond_t **out);
void nzi_factor_precond_destroy(nzi_factor_precond_t **p);
/* z = U^-1 L^-1 r (ILU(0)) or L^-T L^-1 r (IC(0)); r and z distinct, arrays where A is;
 * allocates nothing. The
 * signature of nz_precond_apply_t, user = the nzi_factor_precond_t. */
nz_status_t nzi_factor_precond_apply(void *user, const void *r, void *z);

#ifdef __cplusplus
}
#endif

#endif /* NZI_PRECOND_H */
