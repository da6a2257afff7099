/* spgemm_cuda.cu: the CUDA backend's SpGEMM entry: the GPU algorithms the backend table reaches. */
#include "spgemm_common.h"

/* Hash (the backend's default, and the only one that takes device operands), ESC and hySpMM;
 * src/core/cuda_absent.c answers NULL for all of them in a build without CUDA. */
extern "C" nzi_spgemm_entry_t nz_cuda_spgemm(nz_spgemm_alg_t alg) {
    switch (alg) {
    case NZ_SPGEMM_HASH: return nzi_spgemm_hash;
    case NZ_SPGEMM_ESC: return nzi_spgemm_esc;
    case NZ_SPGEMM_HYSPMM: return nzi_spgemm_hyspmm;
    default: return NULL;
    }
}
