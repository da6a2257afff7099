/* cg_work.h: the CG workspace and the vector-operation table (the scalar state machine: cg_scalars.h). */
#ifndef NZI_CG_WORK_H
#define NZI_CG_WORK_H

#include "nzi.h"
#include "cg_scalars.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

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
    /* scalars->result = (scale v)'(scale v) (scale: a power of two, 1 unscaled; see
     * nzi_cg_scale_exponent). */
    nz_status_t (*norm2)(nzi_cg_work_t *w, const void *v, double scale);
    /* scalars->result = max_i |v_i|, NaN when v holds a NaN (nzi_cg_max; order-independent). */
    nz_status_t (*maxabs)(nzi_cg_work_t *w, const void *v);
    /* v *= factor in place (a power of two: exact unless it leaves the value type's range). */
    nz_status_t (*scale)(nzi_cg_work_t *w, void *v, double factor);
    /* x = 0 */
    nz_status_t (*zero)(nzi_cg_work_t *w, void *x);
    /* With q = A x: r = bscale b - q, p = M^-1 r, then by mode (NZI_CG_RESIDUAL_*, cg_scalars.h)
     * nzi_cg_after_init (INIT), nzi_cg_after_replace (REPLACE: a residual replacement, run on
     * the CHECK state), or just scalars->result = r'r (TRUE, the final true residual). */
    nz_status_t (*residual)(nzi_cg_work_t *w, const void *b, double bscale, int mode);
    /* scalars->x_pending = 0 (whatever the state); pq = p'q, then nzi_cg_after_pq. */
    nz_status_t (*dot_pq)(nzi_cg_work_t *w);
    /* r -= alpha q, rr = r'r, rz = r'M^-1 r, then nzi_cg_after_update (which sets x_pending). */
    nz_status_t (*update_r)(nzi_cg_work_t *w);
    /* x += alpha p where x_pending (even when the update stopped the iteration), then
     * p = M^-1 r + beta p while RUNNING: x rides on the pass that reads p anyway (n fewer values
     * moved an iteration than updating x beside r). */
    nz_status_t (*update_xp)(nzi_cg_work_t *w, void *x);
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
