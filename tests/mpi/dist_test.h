/* dist_test.h: helpers of the MPI tests (public API only): checks, a serial reference on every
 * rank, deterministic vectors. */
#ifndef NZ_DIST_TEST_H
#define NZ_DIST_TEST_H

#include "nonzero_dist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dt_rank, dt_size, dt_failures;

#define DT_CHECK(cond, ...)                                                                     \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            dt_failures++;                                                                      \
            fprintf(stderr, "[rank %d of %d] %s:%d: check failed: %s: ", dt_rank, dt_size,      \
                    __FILE__, __LINE__, #cond);                                                 \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fputc('\n', stderr);                                                                \
        }                                                                                       \
    } while (0)

/* A call that must succeed: otherwise print and abort every rank (no hang). */
#define DT_OK(ctx, call)                                                                        \
    do {                                                                                        \
        nz_status_t dt_s_ = (call);                                                             \
        if (dt_s_ != NZ_SUCCESS) {                                                              \
            fprintf(stderr, "[rank %d] %s:%d: %s returned %d (%s): %s\n", dt_rank, __FILE__,    \
                    __LINE__, #call, (int)dt_s_, nz_status_string(dt_s_),                       \
                    nz_context_last_error(ctx));                                                \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
        }                                                                                       \
    } while (0)

/* x_i in [-1, 1) from a hash of the global index i (the same on every rank count). */
static inline double dt_value(int64_t i, uint64_t seed) {
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static inline double dt_get(const void *v, nz_value_type_t vt, int64_t i) {
    return vt == NZ_F32 ? (double)((const float *)v)[i] : ((const double *)v)[i];
}

static inline void dt_set(void *v, nz_value_type_t vt, int64_t i, double value) {
    if (vt == NZ_F32)
        ((float *)v)[i] = (float)value;
    else
        ((double *)v)[i] = value;
}

static inline size_t dt_size_of(nz_value_type_t vt) { return vt == NZ_F32 ? 4 : 8; }

/* Every rank agrees that a test failed somewhere: returns the process exit status. */
static int dt_finish(const char *name) {
    int total = 0;
    MPI_Allreduce(&dt_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (dt_rank == 0)
        printf("%s on %d ranks: %s (%d failed checks)\n", name, dt_size, total ? "FAIL" : "ok",
               total);
    return total ? 1 : 0;
}

#endif
