/* nonzero_dist.h: distributed SpMV and CG over MPI, built on the public Nonzero API (optional). */
#ifndef NONZERO_DIST_H
#define NONZERO_DIST_H

/*
 * The distributed layer (library nonzero_dist, docs/DISTRIBUTED.md) splits a matrix into contiguous
 * row blocks, one per rank of an MPI communicator. Each rank holds
 *   - a local block: its rows x the columns it owns (renumbered from 0), and
 *   - a non-local block: its rows x the halo, the columns owned by other ranks that its rows touch,
 *     compacted to 0 .. halo - 1 in global order;
 * and a communication pattern, built once, naming which entries of x it sends to which
 * neighbour and which it receives. Both blocks are ordinary nz_matrix_t with single-device SpMV
 * plans (NZ_ALG_AUTO or the algorithm asked for), on the host or on the context's GPU.
 *
 * Vectors are distributed like the matrix: y (length rows) by the row partition, x (length cols)
 * by the column partition, which for a square matrix is the row partition. A rank passes only its
 * part ("local" vectors), in the matrix's location (host arrays or device arrays).
 *
 * Every function is collective over the matrix's communicator (unless it says otherwise) and
 * returns an nz_status_t. Errors are agreed: when any rank fails, every rank returns the same
 * status, and nz_context_last_error() holds the same message on every rank ("rank R: ..." naming
 * the lowest failing rank), so no rank is left waiting in a later collective.
 */

#include <mpi.h>

#include "nonzero.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nz_dist_matrix nz_dist_matrix_t;
typedef struct nz_dist_device nz_dist_device_t;

/* Options of the constructors. Zero-initialise, then set what you need; zero means default. */
typedef struct nz_dist_options {
    nz_dist_device_t *device;  /* non-NULL: blocks and vectors on this rank's GPU (from
                                  nz_dist_device_bind on the same context); NULL: host */
    nz_alg_t alg;              /* SpMV algorithm of both blocks' plans (NZ_ALG_AUTO: planner) */
    unsigned plan_flags;       /* NZ_PLAN_* flags of both plans */
    const int64_t *row_partition; /* size + 1 ascending row offsets of the ranks' blocks
                                  (NULL: balanced by nonzeros; generators: by rows) */
} nz_dist_options_t;

/* ---- GPU ranks ---------------------------------------------------------------------------- */

/* Bind ctx to a GPU for this rank: device = (rank among the ranks of this node) % device count,
 * a new non-blocking stream, nz_context_set_device(ctx, device, stream). CUDA-aware MPI is
 * detected at run time (Open MPI's MPIX_Query_cuda_support); force_staging != 0 stages halo
 * messages through pinned host buffers even then. NZ_ERR_NO_DEVICE on every rank when any rank
 * has no device (or the build has no CUDA). The binding owns the stream and outlives the
 * context: release it after nz_context_destroy(ctx). Collective (a node-local split and the
 * agreement). */
nz_status_t nz_dist_device_bind(nz_context_t *ctx, MPI_Comm comm, int force_staging,
                                nz_dist_device_t **device);
/* Destroy the stream; accepts NULL; sets *device = NULL. Local (not collective). */
nz_status_t nz_dist_device_release(nz_dist_device_t **device);
/* What the binding uses: the CUDA device index, and 1 if halo buffers go to MPI as device
 * pointers (CUDA-aware MPI, not forced to stage), 0 if staged through pinned host memory. */
nz_status_t nz_dist_device_info(const nz_dist_device_t *device, int *cuda_device,
                                int *cuda_aware);

/* ---- construction ------------------------------------------------------------------------- */

/* Rank `root` holds the whole host matrix A (any format; others pass NULL); it is split by rows
 * (options->row_partition or balanced by nonzeros) and each rank receives its rows only (one
 * MPI_Scatterv of the CSR arrays). Memory: root holds A plus one CSR copy (if A is not CSR); the
 * others hold their rows only, twice during setup (received rows, then the two blocks). */
nz_status_t nz_dist_matrix_scatter(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                                   int root, const nz_matrix_t *A,
                                   const nz_dist_options_t *options);

/* Build from this rank's rows in global numbering (COPIED): rows row_begin .. row_end - 1 of a
 * global_rows x global_cols matrix, as CSR arrays (row_offsets from 0, global column indices).
 * The row ranges of the ranks must tile 0 .. global_rows in rank order; the column partition is
 * the row partition for square matrices, else an even split of the columns. */
nz_status_t nz_dist_matrix_create_rows(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                                       int64_t global_rows, int64_t global_cols,
                                       int64_t row_begin, int64_t row_end,
                                       const int64_t *row_offsets, const int32_t *col_indices,
                                       nz_value_type_t value_type, const void *values,
                                       const nz_dist_options_t *options);

/* Each rank generates only its own rows (no rank holds the whole matrix) of the Q1 FE problem
 * of nz_gen_fe3d (same numbering, bitwise the same values) split evenly by rows; b_local /
 * u_local, if non-NULL, receive this rank's part of the load and the exact nodal solution
 * (host: nz_malloc, device: nz_device_malloc on ctx; free with nz_free / nz_device_free). */
nz_status_t nz_dist_gen_fe3d(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm, int64_t n,
                             nz_value_type_t value_type, const nz_dist_options_t *options,
                             void **b_local, void **u_local);
/* The same for the 7-point Laplacian of nz_gen_laplace3d on an nx x ny x nz grid. */
nz_status_t nz_dist_gen_laplace3d(nz_context_t *ctx, nz_dist_matrix_t **dA, MPI_Comm comm,
                                  int64_t nx, int64_t ny, int64_t nz, nz_value_type_t value_type,
                                  const nz_dist_options_t *options);

/* Frees this rank's part (local; accepts NULL; sets *dA = NULL). */
nz_status_t nz_dist_matrix_destroy(nz_dist_matrix_t **dA);

/* ---- layout ------------------------------------------------------------------------------- */

typedef struct nz_dist_layout {
    int rank, size;
    int64_t global_rows, global_cols, global_nnz;
    int64_t row_begin, row_end;   /* this rank's rows (y entries) */
    int64_t col_begin, col_end;   /* this rank's x entries */
    int64_t local_nnz, nonlocal_nnz;
    int64_t halo;                 /* x entries received per SpMV */
    int64_t send;                 /* x entries sent per SpMV */
    int neighbours_in, neighbours_out;
    nz_location_t location;
    nz_value_type_t value_type;
    nz_alg_t local_alg, nonlocal_alg; /* the algorithms the two plans chose */
} nz_dist_layout_t;
/* Local (not collective). */
nz_status_t nz_dist_matrix_layout(const nz_dist_matrix_t *dA, nz_dist_layout_t *layout);

/* ---- SpMV --------------------------------------------------------------------------------- */

/* y_local = alpha A x + beta y_local: post the receives, pack and send this rank's x entries
 * that others need, local block SpMV (overlapping the messages), wait, non-local SpMV with beta
 * 1. With beta == 0, y is not read. Device matrices: device arrays, work queued on the
 * binding's stream (complete on return for the caller's next call on the context). */
nz_status_t nz_dist_spmv(nz_dist_matrix_t *dA, double alpha, const void *x_local, double beta,
                         void *y_local);

/* Time `repeats` SpMVs, then their parts one by one (each synchronised): seconds per call,
 * maximum over the ranks. overlap = 1 - whole / (exchange + local + nonlocal): 0 = none (or
 * no communication), up to exchange / sum when the exchange hides completely behind the local
 * product. */
typedef struct nz_dist_spmv_profile {
    double whole;              /* nz_dist_spmv */
    double exchange;           /* pack, send, receive, wait (and staging copies) */
    double local;              /* the local block's SpMV */
    double nonlocal;           /* the non-local block's SpMV */
    double overlap;
} nz_dist_spmv_profile_t;
nz_status_t nz_dist_spmv_profile(nz_dist_matrix_t *dA, const void *x_local, void *y_local,
                                 int repeats, nz_dist_spmv_profile_t *profile);

/* ---- CG ----------------------------------------------------------------------------------- */

/* Distributed (Jacobi-preconditioned) CG for a square SPD dA, the iteration of nz_cg_solve with
 * global dot products: per iteration one SpMV (with its halo exchange) and two MPI_Allreduce,
 * p'Ap alone and (r'r, r'z) fused in one message. x_local holds the initial guess on input.
 * Options and statuses as nz_cg_solve (use_graph and check_interval are ignored), including the
 * true-residual check with residual replacement (NZ_SUCCESS only when ||b - A x|| meets the
 * tolerance; NZ_STAGNATED at the attainable accuracy) and the scaling of a b whose squared norm
 * overflows or underflows (through a scaled copy of b, made only then); result fields are the
 * same on every rank (times: maximum over ranks; history recorded on every rank). */
nz_status_t nz_dist_cg_solve(nz_context_t *ctx, nz_dist_matrix_t *dA, const void *b_local,
                             void *x_local, const nz_cg_options_t *options,
                             nz_cg_result_t *result);

/* ---- the solver family ---------------------------------------------------------------------- */

/* nz_solve over the ranks: options->method (CG, BiCGSTAB, GMRES, FGMRES, MINRES) runs as
 * nz_solve_operator with nz_dist_spmv as the operator and every reduction gathered and summed in
 * rank order (bitwise reproducible for a given number of ranks). dA square with its columns
 * split as its rows; b_local and x_local this rank's rows (host, or device with a device
 * binding); x_local holds the initial guess. Preconditioners: NONE; USER (the callback applies
 * this rank's part: z_local = M^-1 r_local, vectors where dA lives) or options->preconditioner
 * (made by the caller, e.g. from its own rows); a matrix kind (JACOBI, L1_JACOBI, BLOCK_JACOBI,
 * CHEBYSHEV, ILU0, IC0) is made on each rank's diagonal block: block Jacobi over the ranks with
 * that kind inside each block (the ILU(0) or IC(0) of one rank's block, so the iterations grow
 * with the number of ranks; docs/DISTRIBUTED.md). A failure of the operator or the
 * preconditioner on one rank ends the solve on every rank at the next reduction with that
 * rank's message. Statuses, stopping rule and *result as nz_solve (the same on every rank;
 * times: the slowest rank's; precond_shift / precond_attempts: this rank's block). An
 * allocation failure inside the solve on some ranks only is not agreed (the others wait). */
nz_status_t nz_dist_solve(nz_context_t *ctx, nz_dist_matrix_t *dA, const void *b_local,
                          void *x_local, const nz_solve_options_t *options,
                          nz_solve_result_t *result);

/* ---- vectors ------------------------------------------------------------------------------ */

/* Gather a distributed host vector into global order on `root`: by rows (y-like, columns = 0)
 * or by columns (x-like, columns != 0). global (root only; NULL elsewhere) holds global_rows or
 * global_cols values of the matrix's value type. */
nz_status_t nz_dist_vector_gather(const nz_dist_matrix_t *dA, int columns, const void *local,
                                  int root, void *global);
/* The inverse: root's global host vector split into each rank's local host part. */
nz_status_t nz_dist_vector_scatter(const nz_dist_matrix_t *dA, int columns, const void *global,
                                   int root, void *local);

/* Agree on a status across comm: every rank returns the lowest (most severe) status of any rank
 * and, if it is not NZ_SUCCESS, receives the message of the lowest rank that had it on ctx. */
nz_status_t nz_dist_agree(nz_context_t *ctx, MPI_Comm comm, nz_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_DIST_H */
