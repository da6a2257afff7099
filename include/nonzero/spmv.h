/* nonzero/spmv.h: SpMV plans and execution, the planner's choice. Part of <nonzero.h>. */
#ifndef NONZERO_SPMV_H
#define NONZERO_SPMV_H

#include "nonzero/core.h"
#include "nonzero/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* SpMV: y = alpha op(A) x + beta y                                                            */
/* ------------------------------------------------------------------------------------------ */

/* op(A): A itself (NZ_OP_N) or its transpose (NZ_OP_T). */
typedef enum nz_operation { NZ_OP_N = 0, NZ_OP_T = 1 } nz_operation_t;

/* Plan flags */
#define NZ_PLAN_DETERMINISTIC 0x1u /* only bitwise run-to-run reproducible algorithms */
#define NZ_PLAN_TUNE          0x2u /* time the plausible candidates once and keep the fastest
                                       (NZ_ALG_AUTO only; plan_seconds includes the tuning) */
#define NZ_PLAN_MIXED         0x4u /* single-precision storage, double accumulation */
#define NZ_PLAN_CACHE_HINTS   0x8u /* GPU csr vector, merge and split: load the matrix arrays
                                       as streaming (ld.global.cs, evict-first) so they do not
                                       evict x from L2; x keeps the read-only path. Same results
                                       bit for bit; other algorithms ignore the flag. NZ_ALG_AUTO
                                       sets it where it measured faster (docs/PLANNER.md). */
#define NZ_PLAN_LIGHT_PER_ROW 0x10u /* GPU csr light-vector / light-warp: the paper's distribution,
                                       one atomic per row (vector level) or per warp step (warp
                                       level) and, at warp level, the paper's vector width,
                                       instead of the default chunks of rows per atomic (and
                                       about four nonzeros per lane at warp level); for
                                       comparisons. Both forms are bitwise
                                       reproducible; other algorithms ignore the flag. */
/* Plan layouts of a GPU CSR matrix (op N; one at a time; the plan builds them at creation, keeps
 * them in its workspace and leaves A untouched; docs/dev/PERF_NOTES.md has the measurements): */
#define NZ_PLAN_COLUMN_PANELS 0x20u /* any GPU csr algorithm: A split by column ranges into panels
                                       whose slice of x fits in a sixth of the L2 cache, run one
                                       after another into y (gather-bound matrices whose x is
                                       larger than L2). Results are summed panel by panel: not
                                       bitwise equal to the unsplit plan, reproducible as the
                                       algorithm is. One panel (x fits): the plain plan. */
#define NZ_PLAN_REORDER       0x40u /* any GPU csr algorithm: columns renumbered by descending
                                       nonzero count, so the most-read entries of x share cache
                                       lines (power-law graphs); each execute first gathers x
                                       into the new order; the caller's x and y keep theirs.
                                       With atomic the plan also keeps each nonzero's row (4
                                       bytes per nonzero) and runs COO's scatter. NZ_ALG_AUTO
                                       picks atomic with it where the NZ_STATS_HOT_COLUMNS
                                       most-read columns hold a quarter of the nonzeros or
                                       more (nz_matrix_stats_t.hot_share), the product is
                                       large and does not fit in L2, and the caller said it
                                       will reuse the plan (NZ_PLAN_REUSE or NZ_PLAN_TUNE):
                                       the renumbering costs ~15-100 products' time
                                       (docs/PLANNER.md). Asked for by the caller, it is
                                       always built. */
#define NZ_PLAN_COMPRESS_INDICES 0x80u /* GPU csr vector: column indices as 16-bit offsets
                                       from a 32-bit base per 32 consecutive nonzeros (a group
                                       whose columns span more than 65535 keeps its 32-bit
                                       indices): ~1.9 bytes less per nonzero on banded and
                                       clustered matrices. The same sums, bit for bit, as plain
                                       csr/vector. NZ_ALG_AUTO adds it to csr/vector where at
                                       least 80% of the groups fit. */

#define NZ_PLAN_REUSE         0x100u /* the caller will run this plan many times (hundreds of
                                       products or more): NZ_ALG_AUTO may then choose
                                       preprocessing that pays back only over that many calls
                                       (the column renumbering of NZ_PLAN_REORDER). Without it
                                       (and without NZ_PLAN_TUNE, which implies it) AUTO models
                                       about 20 calls and spends no more than about 20
                                       products' time on such preprocessing
                                       (docs/PLANNER.md, "Setup proportional to use"). Named
                                       algorithms and layouts ignore it. */

typedef struct nz_spmv_plan nz_spmv_plan_t;

/* Make a plan for A (host matrix: CPU backend; device matrix: CUDA backend) with algorithm alg
 * (NZ_ALG_AUTO: the planner, which moves on to its next candidate when one is refused or runs out
 * of memory; docs/PLANNER.md). All preprocessing happens here and is timed; executing allocates
 * nothing. A must outlive the plan.
 * op = NZ_OP_T on the GPU (csr matrices): every csr algorithm except atomic builds A^T on the
 * device once, here (a stable radix sort; a second copy of A, counted in workspace_bytes), and
 * runs the op-N algorithm on it: atomic-free, as reproducible as op N. NZ_ALG_ATOMIC scatters
 * alpha a_ij x_i into y_j with atomics: no preprocessing or memory, not reproducible (for a
 * single product). nz_spmv_list lists the pairs for NZ_OP_N; all of its csr pairs accept NZ_OP_T.
 * NZ_PLAN_MIXED on the GPU: csr with scalar, vector or merge (others are refused); float
 * matrices keep float x and y but form products and sums in double; double matrices are
 * unchanged. */
nz_status_t nz_spmv_plan_create(nz_context_t *ctx, nz_spmv_plan_t **plan, const nz_matrix_t *A,
                                nz_operation_t op, nz_alg_t alg, unsigned flags);
/* y = alpha op(A) x + beta y. x and y are arrays of A's value type in A's location (host or
 * device). With beta == 0, y is not read (NaN in y does not propagate). x and y must not overlap
 * (x == y included): overlapping byte ranges are refused with NZ_ERR_INVALID_ARGUMENT (device
 * pointers are compared the same way, by address). */
nz_status_t nz_spmv_execute(nz_spmv_plan_t *plan, double alpha, const void *x, double beta,
                            void *y);
nz_status_t nz_spmv_plan_destroy(nz_spmv_plan_t **plan);

/* What an SpMV plan chose and holds: backend, format, algorithm, flags, set-up time, workspace
 * and the kernel's shape (nz_spmv_plan_info). */
typedef struct nz_spmv_plan_info {
    nz_format_t format;
    nz_alg_t alg;              /* the algorithm actually chosen */
    nz_backend_t backend;
    int reproducible;          /* 1 if results are bitwise identical run to run */
    int vector_width;          /* threads per row where it applies (CSR-vector, LightSpMV) */
    double plan_seconds;       /* preprocessing time: everything nz_spmv_plan_create did
                                  (with NZ_ALG_AUTO the statistics, every layout build such as
                                  the column renumbering, conversions and tuning) */
    size_t workspace_bytes;    /* bytes the plan holds beyond the matrix */
    unsigned flags;            /* the flags the plan runs with: the caller's, plus the layout
                                  and hint flags NZ_ALG_AUTO added (NZ_PLAN_CACHE_HINTS,
                                  NZ_PLAN_COLUMN_PANELS, ...) */
    int layout_parts;          /* column panels the plan runs (1 without NZ_PLAN_COLUMN_PANELS) */
    int vector_warps;          /* warps per row: more than 1 where CSR-vector splits rows of 32
                                  lanes over several warps (too few rows to fill the device) */
} nz_spmv_plan_info_t;
/* Fills *info for plan. */
nz_status_t nz_spmv_plan_info(const nz_spmv_plan_t *plan, nz_spmv_plan_info_t *info);

/* One-shot convenience: plan with alg, execute once, destroy. */
nz_status_t nz_spmv(nz_context_t *ctx, const nz_matrix_t *A, nz_alg_t alg, double alpha,
                    const void *x, double beta, void *y);

/* The index-th (format, algorithm) pair the backend accepts, into *format and *alg; index 0, 1,
 * ... until NZ_ERR_INVALID_ARGUMENT. */
nz_status_t nz_spmv_list(nz_format_t *format, nz_alg_t *alg, nz_backend_t backend, int index);

/* The planner's choice without making a plan (docs/PLANNER.md), into *chosen_format, *alg and
 * why: from statistics of A (nz_matrix_stats), the algorithm NZ_ALG_AUTO picks for op(A) = A in
 * `format` on `backend`, or, with format = NZ_FORMAT_COUNT, also the format to convert to (the
 * one whose SpMV reads the fewest bytes, from stats->bytes[], if it saves at least 10% over CSR; else CSR). flags:
 * NZ_PLAN_DETERMINISTIC restricts the choice to bitwise reproducible algorithms; NZ_PLAN_TUNE is
 * ignored (tuning needs the matrix: the plan's choice may then differ). The algorithm depends only
 * on rows, cols, nnz and the row-length statistics, which a device plan computes itself, so a
 * device CSR plan with NZ_ALG_AUTO picks the same algorithm. why (may be NULL) receives one line
 * naming the choice and the statistics behind it, truncated to why_size bytes.
 * NZ_ERR_UNSUPPORTED (with the reason in why) when the backend of this build has no (reproducible)
 * algorithm for the format. */
nz_status_t nz_spmv_plan_choose(nz_format_t *chosen_format, nz_alg_t *alg, char *why,
                                size_t why_size, const nz_matrix_stats_t *stats,
                                nz_backend_t backend, nz_format_t format, unsigned flags);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_SPMV_H */
