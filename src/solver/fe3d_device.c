/* fe3d_device.c: public entry of the GPU-assembled Q1 finite-element problem (the CG showcase). */
#include "nzi.h"
#include "backend.h"

/* Checks the arguments once and hands the assembly to src/cuda/gen/gen_fe3d.cu. */
nz_status_t nz_gen_fe3d_device(nz_context_t *ctx, nz_matrix_t **dA, void **d_b, void **d_u_exact,
                               int64_t n, nz_value_type_t value_type) {
    const char *what = "nz_gen_fe3d_device";
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (dA == NULL) return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "%s: dA is NULL", what);
    if (!nzi_valid_value_type(value_type))
        return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT, "%s: invalid value type %d", what,
                         (int)value_type);
    int64_t rows = 0;
    NZI_TRY(nzi_fe3d_unknowns(ctx, n, what, &rows));
    if (ctx->cuda == NULL)
        return nzi_error(ctx, NZ_ERR_NO_DEVICE,
                         "%s: the context is not bound to a CUDA device (nz_context_set_device)",
                         what);
    return nzi_backend_get(NZ_BACKEND_CUDA)->gen_fe3d(ctx, dA, n, value_type, d_b, d_u_exact);
}
