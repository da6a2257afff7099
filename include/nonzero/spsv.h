/* nonzero/spsv.h: sparse triangular solve (SpSV) plans and execution. Part of <nonzero.h>. */
#ifndef NONZERO_SPSV_H
#define NONZERO_SPSV_H

#include "nonzero/core.h"
#include "nonzero/matrix.h"
#include "nonzero/spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* SpSV: y = op(T)^-1 alpha x, T triangular                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Which triangle of T the solve uses. Entries of the other triangle that T stores are ignored
 * (not read by the solve, never an error), as cuSPARSE's SpSV does: a full matrix A with
 * NZ_LOWER solves with the lower triangle of A. */
typedef enum nz_fill_mode { NZ_LOWER = 0, NZ_UPPER = 1 } nz_fill_mode_t;
/* NZ_NON_UNIT: the diagonal is T's stored diagonal, which must be present and nonzero in every
 * row. NZ_UNIT: the diagonal is taken as all ones; stored diagonal entries are ignored. */
typedef enum nz_diag_type { NZ_NON_UNIT = 0, NZ_UNIT = 1 } nz_diag_type_t;

/* A triangular-solve plan: the analysis of T, made once, run by nz_spsv_execute (opaque). */
typedef struct nz_spsv_plan nz_spsv_plan_t;

/* A plan flag: an approximate solve by k Jacobi sweeps (1 <= k <= 255) instead of the exact
 * one. With D the diagonal (the identity for NZ_UNIT) and E the strict triangle,
 *     y_0 = D^-1 alpha x,   y_m = D^-1 (alpha x - E y_{m-1}),   y = y_k,
 * k passes of SpMV cost (the first forms y_0 as it goes), all parallel: no level sets, no
 * dependency waits (Anzt, Chow and Dongarra, "Iterative sparse triangular solves for
 * preconditioning", Euro-Par 2015). y is exact once k reaches the number of level sets minus
 * one (D^-1 E is nilpotent); a few sweeps approximate well where the triangle is diagonally
 * dominant, as ILU(0)/IC(0) factors of well-behaved problems are. Meant for preconditioners (nz_precond_options_t.sweeps), never
 * for a solve that must be exact. nz_spsv_plan_info reports levels = max_level_rows = 0 (not
 * analysed). */
#define NZ_SPSV_JACOBI(k) (((unsigned)(k) & 0xffu) << 24)

/* Make a plan to solve op(T) y = alpha x for the `fill` triangle of T with `diag`. T: a square
 * host or device CSR matrix of either value type (other formats: NZ_ERR_UNSUPPORTED, convert
 * with nz_matrix_convert); a device T (32- or 64-bit row offsets) is solved on its device, with
 * the analysis on the device too; T must outlive the plan and stay unchanged. flags: 0 or NZ_PLAN_DETERMINISTIC (every SpSV
 * plan is bitwise reproducible). The analysis, done here once and timed: the triangle of op(T)
 * without its diagonal is copied into the plan's own CSR (for op = NZ_OP_T the transpose is
 * built, so execute always runs row by row), the diagonal is checked (NZ_NON_UNIT: a row
 * without a diagonal entry, or with a zero one, is NZ_ERR_INVALID_MATRIX naming the row), and
 * the rows are grouped into level sets: a row's level is one more than the highest level of
 * the rows its solve reads (0 for rows that read none). On the GPU the same analysis runs as
 * device kernels (op T builds the transpose of T first, a radix sort of T's nonzeros), and the
 * triangle is stored with its rows sorted by level, the order the solve takes them in. Its cost
 * is a few passes over T plus a few small copies back to the host; it synchronises the
 * context's stream. NZ_SPSV_JACOBI(k) skips the level sets. */
nz_status_t nz_spsv_plan_create(nz_context_t *ctx, nz_spsv_plan_t **plan, const nz_matrix_t *T,
                                nz_operation_t op, nz_fill_mode_t fill, nz_diag_type_t diag,
                                unsigned flags);
/* y = op(T)^-1 (alpha x): x and y are arrays of T's value type with T's row count, where T is
 * (host arrays for a host T; device or managed memory of the context's device for a device T,
 * else NZ_ERR_WRONG_LOCATION).
 * Host: the levels run in order, the rows of a level in parallel over the context's threads (one
 * thread when the work or the rows per level are few); each row's sum runs in a fixed order, so
 * y is bitwise the same run to run and for any thread count. Device: the synchronisation-free
 * solve (Liu, Li, Hogg and Vinter, Euro-Par 2016), queued on the context's stream: one thread
 * per row, rows started in level order from a global counter, each waiting until the rows it
 * reads have published their values, its sum in double in column order, so y is bitwise the
 * same run to run (not bitwise the CPU's, which sums in the value type). NZ_SPSV_JACOBI(k): k
 * parallel passes (host: over the context's threads; device: kernels on its stream), bitwise
 * reproducible too. x == y (in place) is allowed; x and y overlapping otherwise is
 * NZ_ERR_INVALID_ARGUMENT. alpha == 0: y = 0 and x is not read. Allocates nothing. */
nz_status_t nz_spsv_execute(nz_spsv_plan_t *plan, double alpha, const void *x, void *y);
nz_status_t nz_spsv_plan_destroy(nz_spsv_plan_t **plan);

/* What an SpSV plan holds: its analysis and its cost (nz_spsv_plan_info). */
typedef struct nz_spsv_plan_info {
    nz_backend_t backend;
    nz_operation_t op;
    nz_fill_mode_t fill;       /* the triangle of T the plan solves with */
    nz_diag_type_t diag;
    int64_t rows;
    int64_t nnz;               /* off-diagonal entries of the triangle the solve reads */
    int64_t levels;            /* level sets (0 for an empty matrix; rows for a chain) */
    int64_t max_level_rows;    /* rows of the widest level */
    int reproducible;          /* 1: bitwise identical run to run (and, on the CPU, for any
                                  thread count) */
    double analysis_seconds;   /* everything nz_spsv_plan_create did */
    size_t workspace_bytes;    /* bytes the plan holds beyond T */
} nz_spsv_plan_info_t;
/* Fills *info for plan. */
nz_status_t nz_spsv_plan_info(const nz_spsv_plan_t *plan, nz_spsv_plan_info_t *info);

/* One-shot convenience: plan, execute once, destroy. */
nz_status_t nz_spsv(nz_context_t *ctx, const nz_matrix_t *T, nz_operation_t op,
                    nz_fill_mode_t fill, nz_diag_type_t diag, double alpha, const void *x,
                    void *y);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_SPSV_H */
