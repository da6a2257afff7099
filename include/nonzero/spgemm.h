/* nonzero/spgemm.h: SpGEMM (C = A B): options, information, profile. Part of <nonzero.h>. */
#ifndef NONZERO_SPGEMM_H
#define NONZERO_SPGEMM_H

#include "nonzero/core.h"
#include "nonzero/matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* SpGEMM: C = A B                                                                             */
/* ------------------------------------------------------------------------------------------ */

/* SpGEMM algorithms (nz_spgemm_alg_name / nz_spgemm_alg_from_name give their names). */
typedef enum nz_spgemm_alg {
    NZ_SPGEMM_AUTO = 0,
    NZ_SPGEMM_CPU = 1,      /* CPU Gustavson (OpenMP), the reference and fallback */
    NZ_SPGEMM_ESC = 2,      /* GPU expand, sort, compress (CUSP) */
    NZ_SPGEMM_HYSPMM = 3,   /* hybrid CPU-GPU pipelined design (Wu, Georgia State 2015) */
    NZ_SPGEMM_HASH = 4      /* GPU hash-based Gustavson with row binning (default on the GPU) */
} nz_spgemm_alg_t;

/* Options of nz_spgemm (zero-initialised: the defaults). */
typedef struct nz_spgemm_options {
    nz_spgemm_alg_t alg;
    size_t gpu_memory_limit;   /* bytes of device memory to use (0 = the free device memory) */
    int threads;               /* CPU threads (0 = the context's; clamped to the online CPUs) */
} nz_spgemm_options_t;

/* What nz_spgemm did: the algorithm, the work and where the time went. */
typedef struct nz_spgemm_info {
    nz_spgemm_alg_t alg;       /* the algorithm that ran */
    int64_t products;          /* scalar multiplications (flop = 2 x products) */
    int64_t panels;            /* row panels processed (1 = in core) */
    double seconds;            /* total, including symbolic phase and output allocation */
    /* symbolic_seconds: hash, device events of the symbolic kernels; ESC and hySpMM, host wall
     * clock of their set-up (uploads, product counts, panels, allocations). numeric_seconds:
     * hash and hySpMM, device events of the numeric kernels; ESC, host wall clock of each panel's
     * kernels and its copy back. */
    double symbolic_seconds, numeric_seconds, transfer_seconds;
    double stage_seconds_sum;  /* sum of the pipelined stages' times (overlap = seconds / this) */
    int64_t peak_device_bytes;
} nz_spgemm_info_t;

/* C = A B with A, B of the same value type (C: CSR, sorted columns, no explicit duplicates).
 * Host A, B (any host format): C is a host matrix; GPU algorithms need a context bound to a
 * device; products too large for the memory budget are processed in row panels with C streamed
 * back to host memory. Device CSR A, B (int32 or int64 row offsets): the hash algorithm (alg
 * AUTO or HASH) computes a device C (int64 row offsets) with no host transfer of A, B or C;
 * it must fit in the device memory budget (NZ_ERR_DEVICE_OUT_OF_MEMORY otherwise: pass host
 * matrices for products larger than the GPU). A host and a device operand: NZ_ERR_WRONG_LOCATION.
 * info may be NULL. */
nz_status_t nz_spgemm(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                      const nz_matrix_t *B, const nz_spgemm_options_t *options,
                      nz_spgemm_info_t *info);

/* Flags of nz_spgemm_profile. */
#define NZ_SPGEMM_PROFILE_STAGES 1u /* the call's stages, host wall clock (no extra synchronisation) */
#define NZ_SPGEMM_PROFILE_BINS 2u   /* hash: also time each row bin's kernels alone, per phase (the
                                     * bins then run one after another, synchronised: slower) */
#define NZ_SPGEMM_PROFILE_MAX_STAGES 32
#define NZ_SPGEMM_PROFILE_MAX_BINS 16

/* Where the time of one nz_spgemm call went: data for the caller (the library prints nothing;
 * `nz spgemm --profile` prints it). Stages are in the order they ran; names are static strings.
 * Hash: stage i is the host wall-clock time since stage i - 1 ended (budget, events, operands,
 * scratch, binned, symbolic, ..., release). hySpMM: its symbolic part by step (count, split,
 * reserve-c, slots), then per-stage totals over the panels (expand, h2d, multiply, d2h, copy-out,
 * assemble); since stages overlap, wall_seconds may be less than their sum. ESC: setup, then per
 * panel stages summed. */
typedef struct nz_spgemm_profile {
    nz_spgemm_alg_t alg;       /* the algorithm that ran */
    unsigned flags;            /* the flags the call was made with */
    double wall_seconds;       /* the whole call, host wall clock */
    int stage_count;
    const char *stage_names[NZ_SPGEMM_PROFILE_MAX_STAGES];
    double stage_seconds[NZ_SPGEMM_PROFILE_MAX_STAGES];
    /* hash with NZ_SPGEMM_PROFILE_BINS: per row bin (the last one is the dense path) */
    int bin_count, dense_from_bin, max_shared_bin;
    int bin_threads[NZ_SPGEMM_PROFILE_MAX_BINS];          /* threads per row */
    int64_t symbolic_rows[NZ_SPGEMM_PROFILE_MAX_BINS], numeric_rows[NZ_SPGEMM_PROFILE_MAX_BINS];
    int64_t numeric_entries[NZ_SPGEMM_PROFILE_MAX_BINS];  /* C's entries in the bin (host C) */
    double symbolic_bin_seconds[NZ_SPGEMM_PROFILE_MAX_BINS];
    double numeric_bin_seconds[NZ_SPGEMM_PROFILE_MAX_BINS];
    /* hySpMM: bytes per second of its host stages in the pipeline (expansion and copy-out run
     * side by side, each on its share of the threads), and, measured after the pipeline on all
     * the call's threads: one panel's expansion again (expand_alone) and a plain host copy over
     * the same buffers, so the expansion compares directly with the host's copy bandwidth.
     * The measurements after the pipeline are left out of wall_seconds. */
    double expand_bytes_per_second, copy_out_bytes_per_second, host_copy_bytes_per_second;
    double expand_alone_bytes_per_second;
} nz_spgemm_profile_t;

/* nz_spgemm, also filling *profile (zeroed first) as `flags` asks (NZ_SPGEMM_PROFILE_*). */
nz_status_t nz_spgemm_profile(nz_context_t *ctx, nz_matrix_t **C, nz_spgemm_profile_t *profile,
                              const nz_matrix_t *A, const nz_matrix_t *B,
                              const nz_spgemm_options_t *options, unsigned flags,
                              nz_spgemm_info_t *info);
const char *nz_spgemm_alg_name(nz_spgemm_alg_t alg);
nz_status_t nz_spgemm_alg_from_name(nz_spgemm_alg_t *alg, const char *name);
/* The backend that runs SpGEMM algorithm alg: NZ_SPGEMM_CPU the CPU; esc, hyspmm and hash the
 * GPU (even in a build without CUDA, where nz_spgemm refuses them); NZ_SPGEMM_AUTO the GPU when
 * this machine has one (nz_device_count() > 0: what nz_spgemm's AUTO picks once the context is
 * bound to it), else the CPU. For tools that bind a device only when the algorithm needs one.
 * NZ_ERR_INVALID_ARGUMENT for an unknown algorithm. */
nz_status_t nz_spgemm_alg_backend(nz_backend_t *backend, nz_spgemm_alg_t alg);

/* ------------------------------------------------------------------------------------------ */
/* SpGEMM plans: the pattern once, the values again                                            */
/* ------------------------------------------------------------------------------------------ */

/* A product whose operands keep their patterns and change their values (Galerkin products in
 * every AMG re-setup, Jacobians in Newton loops): nz_spgemm_plan_create computes C = A B once
 * (C's pattern and values) and keeps what a numeric product into C's pattern needs;
 * nz_spgemm_plan_execute then recomputes C's values from operands with new values, allocating
 * nothing. Host operands (CSR, alg NZ_SPGEMM_AUTO or NZ_SPGEMM_CPU) make a host plan: the CPU
 * product, then the CPU numeric phase (options->threads threads). Device operands (CSR, alg
 * AUTO or HASH) make a device plan: the hash product gives the pattern, then a numeric kernel
 * gives every value, at create as at execute. ESC and hySpMM (and GPU algorithms on host
 * operands) stream C in row panels and keep no pattern on the device: NZ_ERR_UNSUPPORTED.
 * Numeric values are summed in the order of A's row then B's row, a rounded product then a
 * rounded addition (no fused multiply-add) on the CPU and the GPU alike: plans are bitwise
 * reproducible, a host plan's values are bitwise those of nz_spgemm with NZ_SPGEMM_CPU, and a
 * device plan's equal a host plan's on the same operands. (The hash product itself adds with
 * atomics, so its last bits may vary run to run; its plan's do not.) */
typedef struct nz_spgemm_plan nz_spgemm_plan_t;

/* C = A B and a plan to recompute it. *C is a new matrix (host or device, as A and B); it stays
 * the caller's (free it with nz_matrix_destroy, after or before the plan). A and B need not
 * outlive the plan. info may be NULL. */
nz_status_t nz_spgemm_plan_create(nz_context_t *ctx, nz_spgemm_plan_t **plan, nz_matrix_t **C,
                                  const nz_matrix_t *A, const nz_matrix_t *B,
                                  const nz_spgemm_options_t *options, nz_spgemm_info_t *info);
/* C's values = A B, for A and B of the plan's shapes, value type, location and nonzero counts,
 * and C the matrix this plan created (NZ_ERR_INVALID_ARGUMENT otherwise). A and B may be the
 * plan's own operands or new ones with the same patterns; a product that falls outside C's
 * pattern (a pattern that differs) is NZ_ERR_INVALID_ARGUMENT, naming the row, with C's values
 * unspecified. A device plan runs on the context's stream and returns after it finished (the
 * pattern check reads one flag back). */
nz_status_t nz_spgemm_plan_execute(nz_spgemm_plan_t *plan, const nz_matrix_t *A,
                                   const nz_matrix_t *B, nz_matrix_t *C);
/* Free the plan and set *plan to NULL (NULL or *plan NULL: nothing to do). */
nz_status_t nz_spgemm_plan_destroy(nz_spgemm_plan_t **plan);

/* ------------------------------------------------------------------------------------------ */
/* SpGEAM: C = alpha A + beta B                                                                */
/* ------------------------------------------------------------------------------------------ */

/* C = alpha A + beta B for A and B of one shape and value type, both host (any format, CSR
 * out) or both device CSR (device CSR out, int64 row offsets). C's pattern is the union of A's
 * and B's: entries that cancel stay as explicit zeros (SciPy's A + B drops them). alpha == 0
 * never reads A's values and beta == 0 never B's (their entries are zeros in C). alpha and beta
 * are rounded to the value type. Rows are merged in order: bitwise reproducible, and a device
 * C equals a host C of the same operands. */
nz_status_t nz_spgeam(nz_context_t *ctx, nz_matrix_t **C, double alpha, const nz_matrix_t *A,
                      double beta, const nz_matrix_t *B);

/* A sparse sum whose operands keep their patterns: C's pattern once, its values again. */
typedef struct nz_spgeam_plan nz_spgeam_plan_t;
/* C = alpha A + beta B and a plan that recomputes C's values from A and B with new values and
 * the same patterns (host or device CSR A and B). */
nz_status_t nz_spgeam_plan_create(nz_context_t *ctx, nz_spgeam_plan_t **plan, nz_matrix_t **C,
                                  double alpha, const nz_matrix_t *A, double beta,
                                  const nz_matrix_t *B);
/* C's values = alpha A + beta B into C's pattern (C: the matrix the plan created); an entry of
 * A or B outside it is NZ_ERR_INVALID_ARGUMENT with C's values unspecified. No allocation. */
nz_status_t nz_spgeam_plan_execute(nz_spgeam_plan_t *plan, double alpha, const nz_matrix_t *A,
                                   double beta, const nz_matrix_t *B, nz_matrix_t *C);
/* Free the plan and set *plan to NULL (NULL or *plan NULL: nothing to do). */
nz_status_t nz_spgeam_plan_destroy(nz_spgeam_plan_t **plan);

/* ------------------------------------------------------------------------------------------ */
/* The Galerkin product C = P^T A P                                                            */
/* ------------------------------------------------------------------------------------------ */

/* The coarse operator of multigrid, with R = P^T: R is built once by a transpose that keeps
 * where each of its values came from, then C = R (A P) through two SpGEMM plans. Host or device
 * CSR A (n x n) and P (n x k); options choose the algorithm as for nz_spgemm_plan_create. *C is
 * a new k x k matrix, the caller's. info (may be NULL) sums the two products' work and time. */
typedef struct nz_rap_plan nz_rap_plan_t;
nz_status_t nz_rap_plan_create(nz_context_t *ctx, nz_rap_plan_t **plan, nz_matrix_t **C,
                               const nz_matrix_t *A, const nz_matrix_t *P,
                               const nz_spgemm_options_t *options, nz_spgemm_info_t *info);
/* C's values = P^T A P for A and P with new values and the plan's patterns (R's values are
 * gathered from P, then both products run numerically); C: the matrix the plan created. No
 * allocation. Errors as nz_spgemm_plan_execute. */
nz_status_t nz_rap_plan_execute(nz_rap_plan_t *plan, const nz_matrix_t *A, const nz_matrix_t *P,
                                nz_matrix_t *C);
/* Free the plan (its R, A P and the two SpGEMM plans) and set *plan to NULL. */
nz_status_t nz_rap_plan_destroy(nz_rap_plan_t **plan);
/* C = P^T A P once (a plan made and freed). */
nz_status_t nz_rap(nz_context_t *ctx, nz_matrix_t **C, const nz_matrix_t *A,
                   const nz_matrix_t *P, const nz_spgemm_options_t *options);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_SPGEMM_H */
