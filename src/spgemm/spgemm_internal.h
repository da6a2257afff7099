/* spgemm_internal.h: the contract every SpGEMM algorithm implements (declarations in spgemm_common.h). */
#ifndef NZI_SPGEMM_INTERNAL_H
#define NZI_SPGEMM_INTERNAL_H

#include "spgemm_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Algorithm entry points
 * ----------------------
 * Every algorithm computes C = A B with the same signature and contract. The dispatcher
 * (spgemm.c, nz_spgemm) has already checked, so an algorithm may assume:
 *   - A (m x k) and B (k x n) are host CSR matrices (nz_matrix_t, format NZ_FORMAT_CSR, location
 *     NZ_HOST) of ctx with the same value type, A->cols == B->rows, sorted columns without
 *     duplicates (the library's CSR invariant);
 *   - opt is never NULL and opt->alg is the algorithm being run (never NZ_SPGEMM_AUTO);
 *   - info is never NULL and zeroed; the dispatcher sets info->alg and info->seconds (wall
 *     time of the whole call) itself; the algorithm sets info->products (the exact count of
 *     scalar multiplications) and fills the rest it can (panels >= 1, symbolic / numeric /
 *     transfer seconds, stage_seconds_sum); the dispatcher measures info->peak_device_bytes (the
 *     high-water mark of the context's device bytes during the call, less those held before);
 *   - profile is NULL, or zeroed with alg and flags set by the dispatcher (which also sets
 *     wall_seconds); the algorithm appends its stages (nzi_spgemm_profile_stage) when
 *     flags has NZ_SPGEMM_PROFILE_STAGES and fills what else it measures;
 *   - GPU algorithms are called only when ctx is bound to a device (ctx->cuda != NULL).
 * Exception: nzi_spgemm_hash also takes A and B as device CSR matrices (int32 or int64 row
 * offsets; the dispatcher sends device operands nowhere else) and then returns a device C
 * (int64 row offsets), in core only.
 * On success *C is a new host CSR matrix (rows m, cols n, sorted columns, no explicit
 * duplicates; numerically cancelled entries are kept as explicit zeros, like every structural
 * product). On failure *C is left untouched and everything the algorithm allocated is freed.
 * Errors carry a message naming the algorithm ("nz_spgemm (hash): ...").
 *
 * Symbols: nzi_spgemm_cpu always exists. nzi_spgemm_hash (src/cuda/spgemm/hash_driver.cu) and
 * nzi_spgemm_esc (src/cuda/spgemm/esc.cu) exist only in CUDA builds (NZ_HAVE_CUDA); the
 * dispatcher references them only under #ifdef NZ_HAVE_CUDA. nzi_spgemm_hyspmm (src/spgemm/
 * hyspmm*.c with src/cuda/spgemm/hyspmm.cu) is likewise referenced only under NZ_HAVE_CUDA, so
 * its host files must compile without CUDA but need not define it there.
 */
/* The signature, the entry points and the shared helpers are declared in spgemm_common.h. */

#ifdef __cplusplus
}
#endif

#endif /* NZI_SPGEMM_INTERNAL_H */
