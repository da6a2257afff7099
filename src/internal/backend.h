/* backend.h: the backend interface (one table per backend), the plan objects, the entry points. */
#ifndef NZI_BACKEND_H
#define NZI_BACKEND_H

#include "nzi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nzi_backend;
struct nzi_cg_ops;
struct nzi_krylov_ops;

struct nz_spmv_plan {
    uint64_t magic;
    nz_context_t *ctx;
    const nz_matrix_t *A;
    nz_operation_t op;
    nz_alg_t alg;             /* resolved, never NZ_ALG_AUTO */
    unsigned flags;
    nz_backend_t backend;
    const struct nzi_backend *ops; /* the backend's table, looked up once at plan creation */
    const void *impl;         /* the backend's entry for (format, alg), looked up once by setup
                                 (CUDA: the algorithm family's nzi_cuda_spmv_ops_t), or NULL */
    int reproducible;
    int vector_width;
    int vector_warps;         /* CSR-vector: warps per row when rows are split, else 0 or 1 */
    int layout_parts;         /* column panels run (NZ_PLAN_COLUMN_PANELS), else 1 */
    double plan_seconds;
    size_t workspace_bytes;
    void *state;              /* backend-owned preprocessing (row blocks, counters, ...) */
};

/* The SpMM plan (src/ops/spmm.c): Y = alpha op(A) X + beta Y with k right-hand sides. */
#define NZI_SPMM_PLAN_MAGIC 0x4e5a534d4d000001ull /* "NZSMM" */
struct nz_spmm_plan {
    uint64_t magic;
    nz_context_t *ctx;
    const nz_matrix_t *A;
    nz_operation_t op;
    int64_t k;                /* right-hand sides, 1 .. NZI_SPMM_MAX_K */
    nz_dense_layout_t layout;
    nz_alg_t alg;             /* resolved, never NZ_ALG_AUTO */
    unsigned flags;
    nz_backend_t backend;
    const struct nzi_backend *ops; /* the backend's table, looked up once at plan creation */
    int reproducible;
    int vector_width;         /* lanes per row where it applies */
    double plan_seconds;
    size_t workspace_bytes;
    void *state;              /* backend-owned (CSR copy, transpose, kernel choice) */
};
#define NZI_SPMM_MAX_K 64

/* The SpSV plan (src/ops/spsv.c): y = op(T)^-1 alpha x for one triangle of a square matrix T. */
/* k of a plan's NZ_SPSV_JACOBI(k) flag; 0: the exact solve. */
static inline int nzi_spsv_sweeps(unsigned flags) { return (int)((flags >> 24) & 0xffu); }
#define NZI_SPSV_PLAN_MAGIC 0x4e5a535356000001ull /* "NZSSV" */
struct nz_spsv_plan {
    uint64_t magic;
    nz_context_t *ctx;
    const nz_matrix_t *T;
    nz_operation_t op;
    nz_fill_mode_t fill;
    nz_diag_type_t diag;
    unsigned flags;
    nz_backend_t backend;
    const struct nzi_backend *ops; /* the backend's table, looked up once at plan creation */
    int64_t nnz;              /* off-diagonal entries of the solved triangle */
    int64_t levels, max_level_rows;
    double analysis_seconds;
    size_t workspace_bytes;
    void *state;              /* backend-owned analysis (triangle, diagonal, level sets) */
};

/* An SpGEMM algorithm's entry point, the one type for it (the contract:
 * src/internal/spgemm_common.h; profile is NULL unless the caller asked for the stage timeline,
 * nz_spgemm_profile). */
typedef nz_status_t (*nzi_spgemm_entry_t)(nz_context_t *ctx, nz_matrix_t **C,
                                          const nz_matrix_t *A, const nz_matrix_t *B,
                                          const nz_spgemm_options_t *opt, nz_spgemm_info_t *info,
                                          nz_spgemm_profile_t *profile);

/*
 * The backend interface: every operation the layers above (ops, plan, solver) reach a
 * backend by, one constant table per backend (src/backend/backend.c), as Ginkgo's executor is its
 * one way in. A plan looks its table up once, at creation, and keeps the pointer; the planner asks
 * the same table which (format, algorithm) pairs exist and which are bitwise reproducible, so no
 * second list of pairs exists anywhere. Nothing outside nzi_backend_get / nzi_backend_of /
 * nzi_backend_of_context chooses between the CPU and the GPU.
 *
 * Adding an SpMV algorithm to a backend is one entry in that backend's own list (CUDA: the
 * table in src/cuda/spmv/spmv_cuda.cu; CPU: nz_cpu_spmv_supports); the planner then ranks it.
 * Entries a backend does not have are NULL (the CPU backend has no device matrices).
 */
typedef struct nzi_backend {
    nz_backend_t id;
    const char *name; /* "CPU" or "GPU", for messages */

    /* SpMV. supports: the pair exists. reproducible: 1 bitwise identical run to run, 0 not, -1 a
     * pair the backend does not have. setup does all preprocessing (plan->state, impl,
     * reproducible, vector_width, workspace_bytes); execute allocates nothing; release frees
     * plan->state (NULL allowed). time: median seconds of `runs` (1..NZI_TIME_MAX_RUNS) products
     * y = A x of a set-up plan after one warm-up. csr_row_stats: row-length statistics of op(A)
     * for a CSR matrix of this backend (nzi_plan_row_stats says which fields). csr_hot_share:
     * stats->hot_share of a CSR matrix of this backend (NULL: the backend's rules never read it). */
    bool (*spmv_supports)(nz_format_t format, nz_alg_t alg);
    int (*spmv_reproducible)(nz_format_t format, nz_alg_t alg, nz_operation_t op);
    nz_status_t (*spmv_plan_setup)(nz_spmv_plan_t *plan);
    nz_status_t (*spmv_execute)(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                double beta, void *y);
    void (*spmv_plan_release)(nz_spmv_plan_t *plan);
    nz_status_t (*spmv_time)(const nz_spmv_plan_t *plan, const void *x, void *y, int runs,
                             double *median_seconds);
    nz_status_t (*csr_row_stats)(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                                 nz_matrix_stats_t *stats);
    nz_status_t (*csr_hot_share)(nz_context_t *ctx, const nz_matrix_t *A, double *share);

    /* SpMM: the same lifecycle; default_alg is what NZ_ALG_AUTO means for a format. */
    nz_alg_t (*spmm_default_alg)(nz_format_t format);
    bool (*spmm_supports)(nz_format_t format, nz_alg_t alg);
    nz_status_t (*spmm_plan_setup)(nz_spmm_plan_t *plan);
    nz_status_t (*spmm_execute)(const nz_spmm_plan_t *plan, double alpha, const void *X,
                                int64_t ldx, double beta, void *Y, int64_t ldy);
    void (*spmm_plan_release)(nz_spmm_plan_t *plan);

    /* SpGEMM: the entry point of algorithm alg on this backend, NULL when it runs elsewhere (or
     * is not in this build); spgemm_default_alg is what NZ_SPGEMM_AUTO means on this backend. */
    nzi_spgemm_entry_t (*spgemm)(nz_spgemm_alg_t alg);
    nz_spgemm_alg_t spgemm_default_alg;

    /* The pieces of SpGEMM plans, SpGEAM and the Galerkin product (src/ops/spgemm_plan.c), all
     * on CSR matrices of this backend with one value type (the entry has checked shapes, types
     * and nonzero counts). A product "outside C's pattern" is NZ_ERR_INVALID_ARGUMENT with C's
     * values left unspecified.
     *   spgemm_numeric_setup: what the numeric phase of A B into C's pattern needs (*state);
     *   spgemm_numeric: C's values = A B, into C's pattern, allocating nothing; bitwise the CPU
     *     product's (a product, then an addition, in the order of A's row then B's row);
     *   spgemm_numeric_release: frees the state (NULL allowed);
     *   spgeam_symbolic: a new C whose pattern is the union of A's and B's (values unset);
     *   spgeam_numeric: C's values = alpha A + beta B into C's pattern (alpha == 0 never reads
     *     A's values, beta == 0 never B's);
     *   transpose: A^T as a new CSR matrix and the positions it took its values from (*perm,
     *     the backend's memory, released by transpose_release); transpose_values: AT's values
     *     from a matrix of A's pattern through *perm. */
    nz_status_t (*spgemm_numeric_setup)(nz_context_t *ctx, const nz_matrix_t *A,
                                        const nz_matrix_t *B, const nz_matrix_t *C, int threads,
                                        void **state);
    nz_status_t (*spgemm_numeric)(nz_context_t *ctx, void *state, const nz_matrix_t *A,
                                  const nz_matrix_t *B, nz_matrix_t *C);
    void (*spgemm_numeric_release)(nz_context_t *ctx, void *state);
    nz_status_t (*spgeam_symbolic)(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B,
                                   nz_matrix_t **C);
    nz_status_t (*spgeam_numeric)(nz_context_t *ctx, double alpha, const nz_matrix_t *A,
                                  double beta, const nz_matrix_t *B, nz_matrix_t *C);
    nz_status_t (*transpose)(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t **AT,
                             void **perm);
    nz_status_t (*transpose_values)(nz_context_t *ctx, const void *perm, const nz_matrix_t *A,
                                    nz_matrix_t *AT);
    void (*transpose_release)(nz_context_t *ctx, void *perm);

    /* SpSV (y = op(T)^-1 alpha x): setup does the analysis (plan->state, nnz, levels,
     * max_level_rows, workspace_bytes) and checks the diagonal; execute allocates nothing;
     * release frees plan->state (NULL allowed). NULL: the backend has no SpSV. */
    nz_status_t (*spsv_plan_setup)(nz_spsv_plan_t *plan);
    nz_status_t (*spsv_execute)(const nz_spsv_plan_t *plan, double alpha, const void *x, void *y);
    void (*spsv_plan_release)(nz_spsv_plan_t *plan);

    /* ILU(0) / IC(0) factors of a square CSR matrix of this backend, with nzi_factor_compute's
     * contract (src/internal/precond.h; *F a matrix of this backend). NULL: the host's
     * nzi_factor_compute (the CPU). */
    nz_status_t (*factor_compute)(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                                  nz_matrix_t **F, double *shift, int *attempts);

    /* CG: the vector-operation table (struct nzi_cg_ops, cg_work.h); NULL when absent. */
    const struct nzi_cg_ops *(*cg_ops)(void);
    /* BiCGSTAB / GMRES / FGMRES / MINRES: the vector-operation table (struct nzi_krylov_ops,
     * krylov.h); NULL when absent. */
    const struct nzi_krylov_ops *(*krylov_ops)(void);
    /* Whether a caller's vector (b, x of a solve) is memory this backend's kernels may use:
     * NZ_SUCCESS, else NZ_ERR_WRONG_LOCATION with a message that starts with `what`. NULL where
     * nothing can be checked (the CPU). */
    nz_status_t (*vector_check)(nz_context_t *ctx, const void *ptr, const char *what);

    /* Memory where this backend's vectors live, counted by the context (failure injection
     * included). alloc returns zeroed memory on the CPU, uninitialised memory on the GPU; free
     * takes bytes == (size_t)-1 to look the size up (GPU). */
    nz_status_t (*mem_alloc)(nz_context_t *ctx, void **ptr, size_t bytes, const char *what);
    void (*mem_free)(nz_context_t *ctx, void *ptr, size_t bytes);
    nz_status_t (*mem_set)(nz_context_t *ctx, void *dst, int byte, size_t bytes);

    /* The device (NULL on the CPU backend): binding, copies, matrices on the device. */
    int (*device_count)(void);
    nz_status_t (*context_bind)(nz_context_t *ctx, int device, void *stream);
    void (*context_release)(nz_context_t *ctx);
    nz_status_t (*synchronize)(nz_context_t *ctx);
    nz_status_t (*mem_copy)(nz_context_t *ctx, void *dst, const void *src, size_t bytes, int kind);
    nz_status_t (*matrix_upload)(nz_context_t *ctx, nz_matrix_t *dA, const nz_matrix_t *A,
                                 int offset_bits);
    nz_status_t (*matrix_validate)(nz_context_t *ctx, const nz_matrix_t *dA);
    nz_status_t (*matrix_download)(nz_context_t *ctx, nz_matrix_t **H, const nz_matrix_t *dA);
    void (*matrix_release)(nz_matrix_t *dA);
    nz_status_t (*gen_fe3d)(nz_context_t *ctx, nz_matrix_t **dA, int64_t n,
                            nz_value_type_t value_type, void **d_b, void **d_u_exact);
    /* The bound device's L2 cache in bytes (0 unbound): the planner sizes GPU CSR layouts by it. */
    size_t (*l2_bytes)(const nz_context_t *ctx);
    /* Threads resident at once on the bound device, SMs x threads per SM (0 unbound): the GPU
     * CSR rules measure load balance and idle lanes against it. */
    int64_t (*resident_threads)(const nz_context_t *ctx);
} nzi_backend_t;

/* The table of a backend (NULL for an unknown id), the one that owns a matrix (host: CPU,
 * device: CUDA), and the one a context computes on when the caller leaves the backend to the
 * library (CUDA when the context is bound to a device, else CPU: SpGEMM's NZ_SPGEMM_AUTO). The
 * only places the library chooses between the CPU and the GPU. */
const nzi_backend_t *nzi_backend_get(nz_backend_t id);
const nzi_backend_t *nzi_backend_of(const nz_matrix_t *A);
const nzi_backend_t *nzi_backend_of_context(const nz_context_t *ctx);

#define NZI_TIME_MAX_RUNS 64

/* ---- CPU backend (src/cpu) --------------------------------------------------------------- */

/* True if the CPU backend implements (format, alg). */
bool nz_cpu_spmv_supports(nz_format_t format, nz_alg_t alg);
/* y = alpha op(A) x + beta y on the host, for plan->A's format and plan->alg. */
nz_status_t nz_cpu_spmv_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                double beta, void *y);
/* Preprocessing for CPU plans (e.g. NZ_OP_T); may leave plan->state NULL. */
nz_status_t nz_cpu_spmv_plan_setup(nz_spmv_plan_t *plan);
void nz_cpu_spmv_plan_release(nz_spmv_plan_t *plan);
/* Median wall-clock seconds of `runs` products y = A x of a set-up plan after one warm-up. */
nz_status_t nz_cpu_spmv_time(const nz_spmv_plan_t *plan, const void *x, void *y, int runs,
                             double *median_seconds);
/* Row-length statistics of op(A) for a host CSR matrix: op N one pass over the row offsets, no
 * allocation; op T rows, cols, nnz and the mean only (the CPU rules need no more). */
nz_status_t nz_cpu_csr_row_stats(nz_context_t *ctx, const nz_matrix_t *A, nz_operation_t op,
                                 nz_matrix_stats_t *stats);

/* SpMM on the host (src/cpu/spmm_cpu.c): any host format with NZ_ALG_SERIAL / NZ_ALG_PARALLEL.
 * Setup keeps A in CSR (a copy for other formats) or A^T in CSR (op T) in plan->state; execute
 * allocates nothing. Arguments are checked by src/ops/spmm.c. */
nz_alg_t nz_cpu_spmm_default_alg(nz_format_t format);
bool nz_cpu_spmm_supports(nz_format_t format, nz_alg_t alg);
nz_status_t nz_cpu_spmm_plan_setup(nz_spmm_plan_t *plan);
nz_status_t nz_cpu_spmm_execute(const nz_spmm_plan_t *plan, double alpha, const void *X,
                                int64_t ldx, double beta, void *Y, int64_t ldy);
void nz_cpu_spmm_plan_release(nz_spmm_plan_t *plan);

/* SpGEMM on the host (src/cpu/spgemm_cpu.c): the entry of NZ_SPGEMM_CPU (Gustavson), NULL for
 * every other algorithm. Arguments are checked by src/ops/spgemm.c. */
nzi_spgemm_entry_t nz_cpu_spgemm(nz_spgemm_alg_t alg);
/* The SpGEMM-plan, SpGEAM and transpose entries of the table (src/cpu/spgemm_reuse_cpu.c). */
nz_status_t nz_cpu_spgemm_numeric_setup(nz_context_t *ctx, const nz_matrix_t *A,
                                        const nz_matrix_t *B, const nz_matrix_t *C, int threads,
                                        void **state);
nz_status_t nz_cpu_spgemm_numeric(nz_context_t *ctx, void *state, const nz_matrix_t *A,
                                  const nz_matrix_t *B, nz_matrix_t *C);
void nz_cpu_spgemm_numeric_release(nz_context_t *ctx, void *state);
nz_status_t nz_cpu_spgeam_symbolic(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *B,
                                   nz_matrix_t **C);
nz_status_t nz_cpu_spgeam_numeric(nz_context_t *ctx, double alpha, const nz_matrix_t *A,
                                  double beta, const nz_matrix_t *B, nz_matrix_t *C);
nz_status_t nz_cpu_transpose(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t **AT,
                             void **perm);
nz_status_t nz_cpu_transpose_values(nz_context_t *ctx, const void *perm, const nz_matrix_t *A,
                                    nz_matrix_t *AT);
void nz_cpu_transpose_release(nz_context_t *ctx, void *perm);

/* SpSV on the host (src/cpu/spsv_cpu.c): square CSR, level-scheduled over OpenMP. Arguments
 * are checked by src/ops/spsv.c; setup refuses a missing or zero diagonal (NZ_NON_UNIT). */
nz_status_t nz_cpu_spsv_plan_setup(nz_spsv_plan_t *plan);
nz_status_t nz_cpu_spsv_execute(const nz_spsv_plan_t *plan, double alpha, const void *x, void *y);
void nz_cpu_spsv_plan_release(nz_spsv_plan_t *plan);

/* ---- CUDA backend (src/cuda; stubs in src/core/cuda_absent.c without CUDA) -------------- */

int nz_cuda_device_count(void);
nz_status_t nz_cuda_context_bind(nz_context_t *ctx, int device, void *stream);
void nz_cuda_context_release(nz_context_t *ctx);
nz_status_t nz_cuda_synchronize(nz_context_t *ctx);

/* Device memory, counted by the context's allocator (failure injection included). */
nz_status_t nz_cuda_malloc(nz_context_t *ctx, void **ptr, size_t bytes, const char *what);
void nz_cuda_free(nz_context_t *ctx, void *ptr, size_t bytes);
nz_status_t nz_cuda_memcpy(nz_context_t *ctx, void *dst, const void *src, size_t bytes, int kind);
#define NZI_H2D 1
#define NZI_D2H 2
#define NZI_D2D 3
nz_status_t nz_cuda_memset(nz_context_t *ctx, void *dst, int byte, size_t bytes);

/* Make a device copy of host matrix A (CSR) into *dA (already allocated object, zeroed arrays),
 * with pinned staging; sets dA->transfer_seconds. */
nz_status_t nz_cuda_matrix_upload(nz_context_t *ctx, nz_matrix_t *dA, const nz_matrix_t *A,
                                  int offset_bits);
/* Validate wrapped device CSR arrays (copies them to the host). */
nz_status_t nz_cuda_matrix_validate(nz_context_t *ctx, const nz_matrix_t *dA);
/* Copy device CSR dA into a new host CSR matrix *H (int64 row offsets). */
nz_status_t nz_cuda_matrix_download(nz_context_t *ctx, nz_matrix_t **H, const nz_matrix_t *dA);
/* Free the device arrays a matrix owns (not borrowed ones). */
void nz_cuda_matrix_release(nz_matrix_t *dA);

/* The bound device's L2 cache in bytes (0 without a device); the planner sizes layouts by it. */
size_t nz_cuda_l2_bytes(const nz_context_t *ctx);
/* Threads resident at once on the bound device, SMs x threads per SM (0 without a device). */
int64_t nz_cuda_resident_threads(const nz_context_t *ctx);

bool nz_cuda_spmv_supports(nz_format_t format, nz_alg_t alg);
int nz_cuda_spmv_reproducible(nz_format_t format, nz_alg_t alg, nz_operation_t op);
nz_status_t nz_cuda_spmv_plan_setup(nz_spmv_plan_t *plan);
nz_status_t nz_cuda_spmv_execute(const nz_spmv_plan_t *plan, double alpha, const void *x,
                                 double beta, void *y);
void nz_cuda_spmv_plan_release(nz_spmv_plan_t *plan);

/* SpSV on the GPU (src/cuda/spsv/spsv_syncfree.cu): square device CSR, analysis on the device,
 * the synchronisation-free solve (Liu et al. 2016). Arguments are checked by src/ops/spsv.c;
 * setup refuses a missing or zero diagonal (NZ_NON_UNIT) as the CPU does; x and y of execute
 * are device arrays. */
nz_status_t nz_cuda_spsv_plan_setup(nz_spsv_plan_t *plan);
nz_status_t nz_cuda_spsv_execute(const nz_spsv_plan_t *plan, double alpha, const void *x,
                                 void *y);
void nz_cuda_spsv_plan_release(nz_spsv_plan_t *plan);

/* ILU(0) / IC(0) of a device CSR matrix on the device (src/cuda/precond/factor_syncfree.cu):
 * nzi_factor_compute's contract, shifts and attempts; *F a new device CSR matrix (int64
 * offsets). */
nz_status_t nz_cuda_factor_compute(nz_context_t *ctx, const nz_matrix_t *A, nz_precond_t kind,
                                   nz_matrix_t **F, double *shift, int *attempts);

/* A^T of a device CSR matrix as a new device CSR matrix (same offset width, columns sorted);
 * deterministic (src/cuda/spmv/spmv_transpose.cu). */
nz_status_t nz_cuda_csr_transpose(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t **AT);

/* SpMM on the GPU (src/cuda/spmm/spmm.cu): CSR with NZ_ALG_VECTOR, SELL with NZ_ALG_SCALAR. */
nz_alg_t nz_cuda_spmm_default_alg(nz_format_t format);
bool nz_cuda_spmm_supports(nz_format_t format, nz_alg_t alg);
nz_status_t nz_cuda_spmm_plan_setup(nz_spmm_plan_t *plan);
nz_status_t nz_cuda_spmm_execute(const nz_spmm_plan_t *plan, double alpha, const void *X,
                                 int64_t ldx, double beta, void *Y, int64_t ldy);
void nz_cuda_spmm_plan_release(nz_spmm_plan_t *plan);

/* SpGEMM on the GPU (src/cuda/spgemm/spgemm_cuda.cu): the entry of NZ_SPGEMM_HASH, _ESC and
 * _HYSPMM, NULL for every other algorithm (and for all of them in a build without CUDA). */
nzi_spgemm_entry_t nz_cuda_spgemm(nz_spgemm_alg_t alg);
/* The SpGEMM-plan, SpGEAM and transpose entries of the table
 * (src/cuda/spgemm/spgemm_reuse.cu), the CPU's contracts on device CSR matrices. */
nz_status_t nz_cuda_spgemm_numeric_setup(nz_context_t *ctx, const nz_matrix_t *A,
                                         const nz_matrix_t *B, const nz_matrix_t *C, int threads,
                                         void **state);
nz_status_t nz_cuda_spgemm_numeric(nz_context_t *ctx, void *state, const nz_matrix_t *A,
                                   const nz_matrix_t *B, nz_matrix_t *C);
void nz_cuda_spgemm_numeric_release(nz_context_t *ctx, void *state);
nz_status_t nz_cuda_spgeam_symbolic(nz_context_t *ctx, const nz_matrix_t *A,
                                    const nz_matrix_t *B, nz_matrix_t **C);
nz_status_t nz_cuda_spgeam_numeric(nz_context_t *ctx, double alpha, const nz_matrix_t *A,
                                   double beta, const nz_matrix_t *B, nz_matrix_t *C);
nz_status_t nz_cuda_transpose(nz_context_t *ctx, const nz_matrix_t *A, nz_matrix_t **AT,
                              void **perm);
nz_status_t nz_cuda_transpose_values(nz_context_t *ctx, const void *perm, const nz_matrix_t *A,
                                     nz_matrix_t *AT);
void nz_cuda_transpose_release(nz_context_t *ctx, void *perm);

/* ---- CUDA solver tables and FE assembly (src/cuda/cg, src/cuda/krylov, gen/gen_fe3d.cu) -- */

/* The GPU's CG vector-operation table (struct nzi_cg_ops, src/internal/cg_work.h): fused update
 * + dot kernels with on-device scalars. NULL when the library is built without CUDA. */
const struct nzi_cg_ops *nz_cuda_cg_ops(void);
/* The GPU's Krylov vector-operation table (struct nzi_krylov_ops, src/internal/krylov.h) for
 * BiCGSTAB, GMRES, FGMRES and MINRES (src/cuda/krylov/krylov_ops.cu): grid-stride updates,
 * fixed-order two-stage reductions read back once per call. NULL without CUDA. */
const struct nzi_krylov_ops *nz_cuda_krylov_ops(void);
/* ptr is device memory of the context's device or managed memory (NZ_SUCCESS), else
 * NZ_ERR_WRONG_LOCATION naming `what` (src/cuda/runtime/vector_check.cu). */
nz_status_t nz_cuda_vector_check(nz_context_t *ctx, const void *ptr, const char *what);
/* Assemble the Q1 FE problem of nz_gen_fe3d on the device (arguments checked by the caller;
 * *dA is a new device CSR matrix; d_b / d_u_exact may be NULL). */
nz_status_t nz_cuda_gen_fe3d(nz_context_t *ctx, nz_matrix_t **dA, int64_t n,
                             nz_value_type_t value_type, void **d_b, void **d_u_exact);

/* ---- CUDA planner support (src/cuda/runtime/plan_timing.cu) ----------------------------- */

/* Median seconds of `runs` (1..NZI_TIME_MAX_RUNS) executions of a set-up plan, y = 1 A x + 0 y on
 * the device vectors x and y, each timed with the context's CUDA events on its stream after one
 * untimed warm-up execution. */
nz_status_t nz_cuda_time_plan(const nz_spmv_plan_t *plan, const void *x, void *y, int runs,
                              double *median_seconds);
/* Row-length statistics of op(dA) for a device CSR matrix (rows, cols, nnz, row_min, row_max,
 * row_mean, row_std, empty_rows, and for op N lower / upper bandwidth from each row's first and
 * last column; other fields 0): op N one reduction kernel over the row offsets; op T (the rows of A^T are A's columns) a column count over the nonzeros first. */
nz_status_t nz_cuda_csr_row_stats(nz_context_t *ctx, const nz_matrix_t *dA, nz_operation_t op,
                                  nz_matrix_stats_t *stats);
/* nz_matrix_stats_t.hot_share of a device CSR matrix: a column count over the nonzeros, a radix
 * sort of the counts, the NZ_STATS_HOT_COLUMNS largest summed (the planner asks for it only where
 * its hot-columns rule could apply, nzi_plan_row_stats). */
nz_status_t nz_cuda_csr_hot_share(nz_context_t *ctx, const nz_matrix_t *dA, double *share);

#ifdef __cplusplus
}
#endif

#endif /* NZI_BACKEND_H */
