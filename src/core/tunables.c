/* tunables.c: the context's performance tunables: defaults, the allowed values, set, get, parse. */
#include "nzi.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Every tunable: its name (as tools spell the environment variable), its field and the values
 * the kernels implement (each kernel's file header says why those). The kernels take a field as
 * it is (nzi_tune_pick): only allowed values ever reach them. */
#define MAX_ALLOWED 8
static const struct tunable {
    const char *name;
    size_t offset;
    int count;
    int allowed[MAX_ALLOWED];
} table[] = {
    {"NZ_TUNE_VECTOR_WIDTH", offsetof(nz_tunables_t, vector_width), 5, {2, 4, 8, 16, 32}},
    {"NZ_TUNE_VECTOR_UNROLL", offsetof(nz_tunables_t, vector_unroll), 4, {1, 2, 4, 8}},
    {"NZ_TUNE_ADAPTIVE_NNZ_PER_THREAD", offsetof(nz_tunables_t, adaptive_nnz_per_thread), 4,
     {4, 8, 16, 32}},
    {"NZ_TUNE_SPMM_LONG", offsetof(nz_tunables_t, spmm_long_row), 7,
     {0, 16, 64, 256, 1024, 4096, 16384}},
    {"NZ_TUNE_PANELS", offsetof(nz_tunables_t, column_panels), 8, {1, 2, 3, 4, 5, 6, 7, 8}},
    {"NZ_TUNE_SPGEMM_DENSE", offsetof(nz_tunables_t, spgemm_dense), 8,
     {0, 1, 2, 4, 8, 16, 32, 64}},
    {"NZ_TUNE_SPGEMM_RANK", offsetof(nz_tunables_t, spgemm_rank), 3, {0, 1, 2}},
    {"NZ_TUNE_SPGEMM_SWEEP", offsetof(nz_tunables_t, spgemm_sweep), 7, {0, 1, 2, 4, 8, 16, 32}},
    {"NZ_TUNE_SPGEMM_SYMDENSE", offsetof(nz_tunables_t, spgemm_symdense), 3, {0, 1, 2}},
    {"NZ_TUNE_SPGEMM_ONEBIN", offsetof(nz_tunables_t, spgemm_onebin), 2, {0, 1}},
    {"NZ_TUNE_VECTOR_WARPS", offsetof(nz_tunables_t, vector_warps), 4, {1, 2, 4, 8}},
};
#define TUNABLE_COUNT ((int)(sizeof table / sizeof table[0]))

static int *field(nz_tunables_t *t, const struct tunable *k) {
    return (int *)((char *)t + k->offset);
}

static bool allowed(const struct tunable *k, int value) {
    if (value == NZ_TUNE_AUTO) return true;
    for (int i = 0; i < k->count; i++)
        if (k->allowed[i] == value) return true;
    return false;
}

nz_status_t nz_tunables_default(nz_tunables_t *tunables) {
    if (tunables == NULL) return NZ_ERR_NULL_ARGUMENT;
    for (int i = 0; i < TUNABLE_COUNT; i++) *field(tunables, &table[i]) = NZ_TUNE_AUTO;
    return NZ_SUCCESS;
}

/* "NAME=value": the tunable NAME names, value an allowed integer or "auto". */
nz_status_t nz_tunables_parse(nz_tunables_t *tunables, const char *assignment) {
    if (tunables == NULL || assignment == NULL) return NZ_ERR_NULL_ARGUMENT;
    const char *eq = strchr(assignment, '=');
    if (eq == NULL) return NZ_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < TUNABLE_COUNT; i++) {
        const size_t len = strlen(table[i].name);
        if ((size_t)(eq - assignment) != len || strncmp(assignment, table[i].name, len) != 0)
            continue;
        const char *text = eq + 1;
        long value = NZ_TUNE_AUTO;
        if (strcmp(text, "auto") != 0) {
            char *end = NULL;
            value = strtol(text, &end, 10);
            if (end == text || *end != '\0' || value < INT32_MIN || value > INT32_MAX)
                return NZ_ERR_INVALID_ARGUMENT;
        }
        if (!allowed(&table[i], (int)value)) return NZ_ERR_INVALID_ARGUMENT;
        *field(tunables, &table[i]) = (int)value;
        return NZ_SUCCESS;
    }
    return NZ_ERR_INVALID_ARGUMENT;
}

nz_status_t nz_context_set_tunables(nz_context_t *ctx, const nz_tunables_t *tunables) {
    NZI_TRY(nzi_check_context(ctx));
    nzi_clear_error(ctx);
    if (tunables == NULL)
        return nzi_error(ctx, NZ_ERR_NULL_ARGUMENT, "nz_context_set_tunables: tunables is NULL");
    nz_tunables_t copy = *tunables;
    for (int i = 0; i < TUNABLE_COUNT; i++) {
        const int value = *field(&copy, &table[i]);
        if (!allowed(&table[i], value))
            return nzi_error(ctx, NZ_ERR_INVALID_ARGUMENT,
                             "nz_context_set_tunables: %d is not an allowed value of %s "
                             "(NZ_TUNE_AUTO or one of the values nonzero.h lists)",
                             value, table[i].name);
    }
    ctx->tunables = copy;
    return NZ_SUCCESS;
}

nz_status_t nz_context_get_tunables(const nz_context_t *ctx, nz_tunables_t *tunables) {
    NZI_TRY(nzi_check_context(ctx));
    if (tunables == NULL) return NZ_ERR_NULL_ARGUMENT;
    *tunables = ctx->tunables;
    return NZ_SUCCESS;
}
