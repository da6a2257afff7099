/* cg_work.h: the CG workspace, its scalar state machine, and the vector-operation table. */
#ifndef NZI_CG_WORK_H
#define NZI_CG_WORK_H

#include "nzi.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The scalar state machine runs wherever the scalars live: on the host for the CPU backend, in the
 * last block of a reduction kernel for the GPU backend (so a GPU iteration needs no host round
 * trip). Both compile the same inline functions below. */
#if defined(__CUDACC__)
#define NZI_CG_HD __host__ __device__
#else
#define NZI_CG_HD
#endif

/* Solver state codes (nzi_cg_scalars_t.state). */
#define NZI_CG_RUNNING 0
#define NZI_CG_CONVERGED 1
#define NZI_CG_MAX_ITERATIONS 2
#define NZI_CG_BREAKDOWN_PAP -1 /* p'Ap <= 0: A is not positive definite */
#define NZI_CG_BREAKDOWN_NAN -2 /* a NaN or Inf in a dot product */

/* All scalars of one solve, in double whatever the value type. */
typedef struct nzi_cg_scalars {
    double rz;          /* r'z of the current residual (z = M^-1 r; z = r without preconditioner) */
    double rr;          /* r'r of the current (recursive) residual */
    double pq;          /* p'Ap of the current direction */
    double alpha, beta;
    double tol2;        /* stop when rr <= tol2 */
    double result;      /* output slot of a plain dot product (norms, the final true residual) */
    double *history;    /* ||r_k|| for k = 0 .. (history_capacity - 1); in the scalars' memory */
    int64_t history_capacity;
    int64_t iterations;
    int64_t max_iterations;
    int64_t bad_row;    /* Jacobi setup: first row with a non-positive or missing diagonal */
    int32_t state;      /* NZI_CG_* */
    int32_t pad;
} nzi_cg_scalars_t;

/* The finite test without <math.h> in device code: NaN fails x == x, Inf fails x - x == 0. */
static inline NZI_CG_HD int nzi_cg_finite(double v) { return v == v && v - v == 0.0; }

static inline NZI_CG_HD void nzi_cg_record(nzi_cg_scalars_t *s, double rr) {
    if (s->history != 0 && s->iterations < s->history_capacity)
        s->history[s->iterations] = rr >= 0.0 ? sqrt(rr) : rr;
}

/* After r0 = b - A x0 and z0 = M^-1 r0 (and p0 = z0). */
static inline NZI_CG_HD void nzi_cg_after_init(nzi_cg_scalars_t *s, double rr, double rz) {
    s->rr = rr;
    s->rz = rz;
    s->iterations = 0;
    nzi_cg_record(s, rr);
    if (!nzi_cg_finite(rr) || !nzi_cg_finite(rz))
        s->state = NZI_CG_BREAKDOWN_NAN;
    else if (rr <= s->tol2)
        s->state = NZI_CG_CONVERGED;
    else if (s->max_iterations <= 0)
        s->state = NZI_CG_MAX_ITERATIONS;
    else
        s->state = NZI_CG_RUNNING;
}

/* After q = A p and pq = p'q: the step length, or breakdown. */
static inline NZI_CG_HD void nzi_cg_after_pq(nzi_cg_scalars_t *s, double pq) {
    if (s->state != NZI_CG_RUNNING) return;
    s->pq = pq;
    if (!nzi_cg_finite(pq))
        s->state = NZI_CG_BREAKDOWN_NAN;
    else if (!(pq > 0.0))
        s->state = NZI_CG_BREAKDOWN_PAP;
    else
        s->alpha = s->rz / pq;
}

/* After x += alpha p, r -= alpha q, z = M^-1 r with the new rr = r'r and rz = r'z. */
static inline NZI_CG_HD void nzi_cg_after_update(nzi_cg_scalars_t *s, double rr, double rz) {
    if (s->state != NZI_CG_RUNNING) return;
    s->iterations++;
    s->rr = rr;
    nzi_cg_record(s, rr);
    if (!nzi_cg_finite(rr) || !nzi_cg_finite(rz)) {
        s->state = NZI_CG_BREAKDOWN_NAN;
    } else if (rr <= s->tol2) {
        s->state = NZI_CG_CONVERGED;
    } else if (s->iterations >= s->max_iterations) {
        s->state = NZI_CG_MAX_ITERATIONS;
    } else if (!(rz > 0.0)) {
        s->state = NZI_CG_BREAKDOWN_PAP; /* r'M^-1 r <= 0 with r != 0: M not positive */
    } else {
        s->beta = rz / s->rz;
        s->rz = rz;
    }
}

/* One solve's workspace. Vectors live where A lives (host or device), of A's value type. */
typedef struct nzi_cg_work {
    nz_context_t *ctx;
    nz_value_type_t value_type;
    int64_t n;
    int jacobi;
    void *r, *p, *q;        /* residual, direction, A p */
    void *dinv;             /* 1 / diag(A) (Jacobi only) */
    nzi_cg_scalars_t *scalars; /* host (CPU) or device (GPU) */
    double *history;        /* host (CPU) or device (GPU), history_capacity entries, or NULL */
    int64_t history_capacity;
    void *backend;          /* backend-private state (GPU: grid, partials, counter, graph) */
} nzi_cg_work_t;

/* The operations the algorithm in cg.c is written against. Each returns a status; none allocates
 * except create. Operations after the first non-RUNNING state are no-ops (the state is read by the
 * kernel on the GPU), so a batch of iterations past convergence changes nothing. */
typedef struct nzi_cg_ops {
    /* Allocate r, p, q, dinv (if jacobi), scalars and history (if history_capacity > 0). */
    nz_status_t (*create)(nzi_cg_work_t *w);
    void (*destroy)(nzi_cg_work_t *w);
    /* dinv = 1 / diag(A); scalars->bad_row = first row with a_ii <= 0 or missing, else n. */
    nz_status_t (*jacobi)(nzi_cg_work_t *w, const nz_matrix_t *A);
    /* scalars->result = v'v. */
    nz_status_t (*norm2)(nzi_cg_work_t *w, const void *v);
    /* x = 0 */
    nz_status_t (*zero)(nzi_cg_work_t *w, void *x);
    /* With q = A x: r = b - q, p = M^-1 r, then nzi_cg_after_init (init != 0) or just
     * scalars->result = r'r (init == 0, the final true residual). */
    nz_status_t (*residual)(nzi_cg_work_t *w, const void *b, int init);
    /* pq = p'q, then nzi_cg_after_pq. */
    nz_status_t (*dot_pq)(nzi_cg_work_t *w);
    /* x += alpha p, r -= alpha q, rr = r'r, rz = r'M^-1 r, then nzi_cg_after_update. */
    nz_status_t (*update_xr)(nzi_cg_work_t *w, void *x);
    /* p = M^-1 r + beta p */
    nz_status_t (*update_p)(nzi_cg_work_t *w);
    /* Copy the scalars to / from the host (GPU: waits for the stream). */
    nz_status_t (*get_scalars)(nzi_cg_work_t *w, nzi_cg_scalars_t *host);
    nz_status_t (*set_scalars)(nzi_cg_work_t *w, const nzi_cg_scalars_t *host);
    /* Copy count history entries to a host array. */
    nz_status_t (*get_history)(nzi_cg_work_t *w, double *host, int64_t count);
    /* Wait for queued work (timing). */
    nz_status_t (*synchronize)(nzi_cg_work_t *w);
    /* Optional (GPU): capture the operations issued between begin and end into a replayable
     * graph; end sets *ok = 0 (and restores normal launches) when capture failed. */
    nz_status_t (*capture_begin)(nzi_cg_work_t *w);
    nz_status_t (*capture_end)(nzi_cg_work_t *w, int *ok);
    nz_status_t (*replay)(nzi_cg_work_t *w);
} nzi_cg_ops_t;

/* The CPU implementation (cg_cpu.c); the GPU one is nz_cuda_cg_ops() (src/cuda/cg/cg_kernels.cu). */
extern const nzi_cg_ops_t nzi_cg_cpu_ops;

#ifdef __cplusplus
}
#endif

#endif /* NZI_CG_WORK_H */
