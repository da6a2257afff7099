/* nonzero.h: the header to include for Nonzero, sparse linear algebra on NVIDIA GPUs and CPUs. */
#ifndef NONZERO_H
#define NONZERO_H

/*
 * Conventions
 * -----------
 * - Every function returns an nz_status_t (0 = success, > 0 = finished with a caveat, < 0 = error),
 *   except the few that return a string or a size and say so.
 * - Argument order: the first argument is the context (or the plan that carries it); then
 *   outputs; then inputs. Compute calls (execute, solve, spmv) keep BLAS order (x before y).
 *   Outputs that are handles come as a pointer to the handle. nz_*_destroy(&h) accepts NULL (and
 *   *h == NULL) and sets the handle to NULL.
 * - Caller arrays passed as `const` are never written. Functions named *_create_* COPY caller
 *   arrays; functions named *_wrap_* BORROW them (the caller keeps them alive and unchanged for the
 *   life of the handle). What the library allocates, the library frees.
 * - The library never prints and never exits. After an error, nz_context_last_error() names the
 *   object and the problem (for files: the path and the line).
 * - Indices: column (and COO row) indices are int32; row offsets are int64 on the host, and int32
 *   or int64 on the device. Matrices with more than 2^31 - 1 rows or columns are refused
 *   (NZ_ERR_UNSUPPORTED); more than 2^31 nonzeros are supported.
 * - Thread safety: a context and every matrix and plan made from it belong to one host thread at a
 *   time; calls on one context must not overlap (its allocation counters, last-error message and
 *   CUDA stream are not synchronised). Separate contexts may be used from separate threads at
 *   once: the library keeps no global mutable state. Exceptions: nz_spmv_execute on a CPU plan
 *   writes only y, so threads may execute plans of one context at the same time into distinct y
 *   (an error would race on the last-error message); nz_matrix_info and nz_matrix_csr_arrays
 *   (which write the context only on an error), nz_status_string, nz_*_name and nz_device_count
 *   may be called from any thread. Functions that take a const matrix never modify it.
 */

#include <stddef.h>
#include <stdint.h>

#include "nonzero_version.h" /* NZ_VERSION_MAJOR / _MINOR / _PATCH, NZ_VERSION_STRING */

/* The API by topic, in nonzero/: each part includes the parts it needs and compiles alone. CMake
 * lists the exported functions from this file and the parts, in this order. */
#include "nonzero/core.h"
#include "nonzero/matrix.h"
#include "nonzero/spmv.h"
#include "nonzero/spsv.h"
#include "nonzero/solver.h"
#include "nonzero/spmm.h"
#include "nonzero/spgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library actually loaded ("0.2.0"); compare with NZ_VERSION_STRING, the
 * version of the headers compiled against. Never fails. */
const char *nz_version(void);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_H */
