/* alg_names.c: the SpMV / SpMM algorithm names, for every layer's messages and the public lookups. */
#include "nzi.h"

#include <string.h>

static const struct {
    nz_alg_t alg;
    const char *name;
} alg_names[] = {
    {NZ_ALG_AUTO, "auto"},           {NZ_ALG_SERIAL, "serial"},
    {NZ_ALG_PARALLEL, "parallel"},   {NZ_ALG_SIMD, "simd"},
    {NZ_ALG_SCALAR, "scalar"},       {NZ_ALG_VECTOR, "vector"},
    {NZ_ALG_LIGHT_VECTOR, "light-vector"}, {NZ_ALG_LIGHT_WARP, "light-warp"},
    {NZ_ALG_IPCSR, "ipcsr"},         {NZ_ALG_ADAPTIVE, "adaptive"},
    {NZ_ALG_MERGE, "merge"},         {NZ_ALG_ATOMIC, "atomic"},
    {NZ_ALG_SEGMENTED, "segmented"}, {NZ_ALG_BSR_ROW, "bsr-row"},
    {NZ_ALG_BSR_COL, "bsr-col"},     {NZ_ALG_TILES, "tiles"},
    {NZ_ALG_SPLIT, "split"},
};
#define NUM_ALGS ((int)(sizeof alg_names / sizeof alg_names[0]))

const char *nz_alg_name(nz_alg_t alg) {
    for (int i = 0; i < NUM_ALGS; i++)
        if (alg_names[i].alg == alg) return alg_names[i].name;
    return "unknown";
}

nz_status_t nz_alg_from_name(nz_alg_t *alg, const char *name) {
    if (alg == NULL || name == NULL) return NZ_ERR_NULL_ARGUMENT;
    for (int i = 0; i < NUM_ALGS; i++)
        if (strcmp(alg_names[i].name, name) == 0) {
            *alg = alg_names[i].alg;
            return NZ_SUCCESS;
        }
    return NZ_ERR_INVALID_ARGUMENT;
}

nz_alg_t nzi_alg_at(int index) {
    return index >= 0 && index < NUM_ALGS ? alg_names[index].alg : NZ_ALG_AUTO;
}
