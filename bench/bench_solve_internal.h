/* bench_solve_internal.h: what the solver benchmark's C driver asks of its CUDA side: a stream, events and cuSPARSE SpSV. */
#ifndef NZ_BENCH_SOLVE_INTERNAL_H
#define NZ_BENCH_SOLVE_INTERNAL_H

#include "nonzero.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A stream of our own that the Nonzero context and the cuSPARSE handle are both bound to, so a
 * pair of events around a call times exactly that call, and the events. */
typedef struct nzb_solve_gpu nzb_solve_gpu_t;

/* Create the stream, bind ctx to device 0 on it, create the cuSPARSE handle and the events.
 * Non-zero with a one-line reason in msg on failure. */
int nzb_solve_gpu_open(nzb_solve_gpu_t **gpu, nz_context_t *ctx, char *msg, size_t msg_size);
void nzb_solve_gpu_close(nzb_solve_gpu_t **gpu);

/* Record the start event; nzb_solve_gpu_stop records the stop event, waits for it and returns
 * the microseconds between the two (negative on a CUDA error). */
void nzb_solve_gpu_start(nzb_solve_gpu_t *gpu);
double nzb_solve_gpu_stop(nzb_solve_gpu_t *gpu);

/* cuSPARSE SpSV (CUSPARSE_SPSV_ALG_DEFAULT, op N, alpha 1, compute type = the value type) of
 * the `fill` triangle of the device CSR matrix dT (32-bit offsets, its own arrays: no copy)
 * with the stored diagonal: analysis (bufferSize + buffer allocation + analysis, host clock
 * around a synchronised call) once, then 1 untimed and `runs` timed solves of y = T^-1 x,
 * median. d_x and d_y are device arrays of dT's value type. Returns 0, or non-zero with the
 * failing call in note. */
int nzb_solve_cusparse_spsv(nzb_solve_gpu_t *gpu, nz_context_t *ctx, const nz_matrix_t *dT,
                            nz_fill_mode_t fill, const void *d_x, void *d_y, int runs,
                            double *analysis_ms, double *solve_us, char *note, size_t note_size);

#ifdef __cplusplus
}
#endif

#endif /* NZ_BENCH_SOLVE_INTERNAL_H */
