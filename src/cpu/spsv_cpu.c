/* spsv_cpu.c: CPU sparse triangular solve, level-scheduled analysis and OpenMP execution. */
#include "nzi.h"
#include "backend.h"
#include "cpu_kernels.h"

#include <string.h>

/*
 * Analysis (once, in the plan): the strict triangle of op(T) that the solve reads is copied into
 * the plan's own CSR, E (int64 offsets, columns ascending in every row); for op = NZ_OP_T it is
 * built transposed by a counting sort (T's lower triangle is op(T)'s upper one), so execute is
 * always the row-oriented solve
 *     y_i = (alpha x_i - sum_k e_ik y_k) / d_i          (d_i = 1 for NZ_UNIT)
 * whose rows run forward (E lower) or backward (E upper). Entries of T outside the requested
 * triangle are not copied: they are ignored, as cuSPARSE ignores them. The diagonal d is kept in
 * the value type; with NZ_NON_UNIT a row without a stored diagonal entry or with a zero one is
 * refused here, naming the row, so execute never divides by zero.
 * Level sets (Anderson & Saad 1989; Naumov, "Parallel solution of sparse triangular linear
 * systems in the preconditioned iterative methods on the GPU", NVIDIA TR 2011, section 2): a
 * row's level is 1 + the highest level of the rows k it reads (0 when it reads none), found in
 * one pass in solve order; the rows are then bucketed by level (counting sort, rows ascending
 * within a level). Rows of one level read only rows of lower levels, so they are independent.
 * Cost: O(nnz(T) + rows) time, rows x (8 + 4 + value) + nnz(E) x (4 + value) bytes.
 *
 * Execute: the levels in order, the rows of each level split statically over the team, one
 * barrier per level. Each row's sum is formed by one thread, in E's column order, in the storage
 * type, so y is bitwise the same for any team. One thread when the work is small
 * (NZI_CPU_SERIAL_WORK) or the levels are narrow (fewer than NZI_SPSV_MIN_LEVEL_ROWS rows on
 * average): a barrier costs about as much as solving that many rows. In place (x == y) is safe:
 * row i reads x_i only, before it writes y_i, and y_k only for rows k already solved.
 *
 * NZ_SPSV_JACOBI(k) (nonzero/spsv.h): no level sets; the plan keeps two vectors, and execute
 * runs y_0 = D^-1 alpha x and k sweeps y_m = D^-1 (alpha x - E y_{m-1}), every row of a sweep
 * in parallel (spsv_jacobi_*).
 */

/* Mean rows per level below which the solve runs on one thread (see above). */
#define NZI_SPSV_MIN_LEVEL_ROWS 64

typedef struct spsv_cpu_state {
    int64_t *row_offsets;   /* E: rows + 1 */
    int32_t *col_indices;   /* E: nnz, ascending within each row */
    void *values;           /* E: nnz of T's value type */
    void *diagonal;         /* rows of T's value type; NULL for NZ_UNIT */
    int64_t *level_offsets; /* levels + 1: the rows of level l are level_rows[offsets[l] ..) */
    int32_t *level_rows;    /* rows, grouped by level, ascending within a level */
    int sweeps;             /* NZ_SPSV_JACOBI(k): k (0: the exact solve, by levels) */
    void *sweep;            /* sweeps: 2 x rows of T's value type (the two iterates) */
} spsv_cpu_state_t;

static void state_free(nz_context_t *ctx, spsv_cpu_state_t *state) {
    if (state == NULL) return;
    nzi_free(ctx, state->row_offsets);
    nzi_free(ctx, state->col_indices);
    nzi_free(ctx, state->values);
    nzi_free(ctx, state->diagonal);
    nzi_free(ctx, state->level_offsets);
    nzi_free(ctx, state->level_rows);
    nzi_free(ctx, state->sweep);
    nzi_free(ctx, state);
}

/* 1 when T's entry (i, j) belongs to the strict triangle `fill` of T. */
static inline int in_triangle(nz_fill_mode_t fill, int64_t i, int64_t j) {
    return fill == NZ_LOWER ? j < i : j > i;
}

/* The diagonal of T into state->diagonal (NZ_NON_UNIT only): every row must store a nonzero
 * one. */
static nz_status_t take_diagonal(nz_context_t *ctx, const nz_matrix_t *T, spsv_cpu_state_t *state) {
    const int64_t n = T->rows;
    const int64_t *row_offsets = T->host.csr.row_offsets;
    const int32_t *col_indices = T->host.csr.col_indices;
    const nz_value_type_t vt = T->value_type;
    NZI_TRY(nzi_alloc_array(ctx, &state->diagonal, (size_t)(n > 0 ? n : 1), nzi_value_size(vt),
                            "the SpSV diagonal"));
    for (int64_t i = 0; i < n; i++) {
        int64_t found = -1;
        for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++)
            if (col_indices[k] == i) {
                found = k;
                break;
            }
        if (found < 0)
            return nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                             "nz_spsv_plan_create: row %lld of T has no diagonal entry (singular "
                             "with NZ_NON_UNIT)", (long long)i);
        double d = nzi_get(T->host.csr.values, vt, found);
        if (d == 0)
            return nzi_error(ctx, NZ_ERR_INVALID_MATRIX,
                             "nz_spsv_plan_create: row %lld of T has a zero diagonal entry "
                             "(singular with NZ_NON_UNIT)", (long long)i);
        if (vt == NZ_F32)
            ((float *)state->diagonal)[i] = ((const float *)T->host.csr.values)[found];
        else
            ((double *)state->diagonal)[i] = ((const double *)T->host.csr.values)[found];
    }
    return NZ_SUCCESS;
}

/* E, the strict `fill` triangle of op(T), into state (see the opening comment). */
static nz_status_t take_triangle(nz_context_t *ctx, const nz_matrix_t *T, nz_operation_t op,
                                 nz_fill_mode_t fill, spsv_cpu_state_t *state, int64_t *nnz) {
    const int64_t n = T->rows;
    const int64_t *row_offsets = T->host.csr.row_offsets;
    const int32_t *col_indices = T->host.csr.col_indices;
    const size_t vs = nzi_value_size(T->value_type);
    const char *src = (const char *)T->host.csr.values;
    NZI_TRY(nzi_alloc_array(ctx, (void **)&state->row_offsets, (size_t)n + 1, sizeof(int64_t),
                            "the SpSV triangle's row offsets"));
    int64_t *offsets = state->row_offsets;
    memset(offsets, 0, ((size_t)n + 1) * sizeof(int64_t));
    /* count the entries of each row of E (T's row for op N, T's column for op T) */
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++)
            if (in_triangle(fill, i, col_indices[k]))
                offsets[(op == NZ_OP_N ? i : col_indices[k]) + 1]++;
    for (int64_t i = 0; i < n; i++) offsets[i + 1] += offsets[i];
    const int64_t count = offsets[n];
    NZI_TRY(nzi_alloc_array(ctx, (void **)&state->col_indices, (size_t)(count > 0 ? count : 1),
                            sizeof(int32_t), "the SpSV triangle's column indices"));
    NZI_TRY(nzi_alloc_array(ctx, &state->values, (size_t)(count > 0 ? count : 1), vs,
                            "the SpSV triangle's values"));
    char *dst = (char *)state->values;
    if (op == NZ_OP_N) {
        int64_t out = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++)
                if (in_triangle(fill, i, col_indices[k])) {
                    state->col_indices[out] = col_indices[k];
                    memcpy(dst + (size_t)out * vs, src + (size_t)k * vs, vs);
                    out++;
                }
    } else {
        /* scatter T's rows in ascending order: every row of E comes out with ascending columns;
         * offsets[j] walks from the start of row j to its end and is shifted back after */
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++) {
                int64_t j = col_indices[k];
                if (!in_triangle(fill, i, j)) continue;
                int64_t out = offsets[j]++;
                state->col_indices[out] = (int32_t)i;
                memcpy(dst + (size_t)out * vs, src + (size_t)k * vs, vs);
            }
        for (int64_t j = n; j > 0; j--) offsets[j] = offsets[j - 1];
        offsets[0] = 0;
    }
    *nnz = count;
    return NZ_SUCCESS;
}

/* The level sets of E (lower: rows solved first to last; upper: last to first). */
static nz_status_t take_levels(nz_context_t *ctx, int64_t n, int lower, spsv_cpu_state_t *state,
                               int64_t *levels, int64_t *max_level_rows) {
    nz_status_t status = NZ_SUCCESS;
    int64_t *level = NULL;
    const int64_t *offsets = state->row_offsets;
    const int32_t *cols = state->col_indices;
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&level, (size_t)(n > 0 ? n : 1), sizeof(int64_t),
                              "the SpSV row levels"));
    int64_t depth = 0;
    for (int64_t step = 0; step < n; step++) {
        int64_t i = lower ? step : n - 1 - step, l = 0;
        for (int64_t k = offsets[i]; k < offsets[i + 1]; k++)
            if (level[cols[k]] + 1 > l) l = level[cols[k]] + 1;
        level[i] = l;
        if (l + 1 > depth) depth = l + 1;
    }
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&state->level_offsets, (size_t)depth + 1,
                              sizeof(int64_t), "the SpSV level offsets"));
    NZI_CHECK(nzi_alloc_array(ctx, (void **)&state->level_rows, (size_t)(n > 0 ? n : 1),
                              sizeof(int32_t), "the SpSV level rows"));
    int64_t *level_offsets = state->level_offsets;
    memset(level_offsets, 0, ((size_t)depth + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) level_offsets[level[i] + 1]++;
    int64_t widest = 0;
    for (int64_t l = 0; l < depth; l++) {
        if (level_offsets[l + 1] > widest) widest = level_offsets[l + 1];
        level_offsets[l + 1] += level_offsets[l];
    }
    /* rows ascending within each level; level[] becomes the next free slot of each level */
    for (int64_t i = 0; i < n; i++) state->level_rows[level_offsets[level[i]]++] = (int32_t)i;
    for (int64_t l = depth; l > 0; l--) level_offsets[l] = level_offsets[l - 1];
    level_offsets[0] = 0;
    *levels = depth;
    *max_level_rows = widest;
cleanup:
    nzi_free(ctx, level);
    return status;
}

nz_status_t nz_cpu_spsv_plan_setup(nz_spsv_plan_t *plan) {
    nz_status_t status = NZ_SUCCESS;
    nz_context_t *ctx = plan->ctx;
    const nz_matrix_t *T = plan->T;
    spsv_cpu_state_t *state = NULL;
    if (T->location != NZ_HOST || T->format != NZ_FORMAT_CSR)
        return nzi_error(ctx, NZ_ERR_UNSUPPORTED, "the CPU SpSV needs a host csr matrix");
    state = (spsv_cpu_state_t *)nzi_calloc(ctx, 1, sizeof *state);
    if (state == NULL)
        return nzi_error(ctx, NZ_ERR_OUT_OF_MEMORY, "cannot allocate the CPU SpSV plan state");
    if (plan->diag == NZ_NON_UNIT) NZI_CHECK(take_diagonal(ctx, T, state));
    int64_t nnz = 0, levels = 0, widest = 0;
    NZI_CHECK(take_triangle(ctx, T, plan->op, plan->fill, state, &nnz));
    /* op(T)'s triangle: T's own for op N, the other one for op T */
    const int lower = (plan->fill == NZ_LOWER) == (plan->op == NZ_OP_N);
    const int64_t n = T->rows;
    const size_t vs = nzi_value_size(T->value_type);
    state->sweeps = nzi_spsv_sweeps(plan->flags);
    if (state->sweeps > 0)
        NZI_CHECK(nzi_alloc_array(ctx, &state->sweep, 2 * (size_t)(n > 0 ? n : 1), vs,
                                  "the SpSV sweeps' vectors"));
    else
        NZI_CHECK(take_levels(ctx, T->rows, lower, state, &levels, &widest));
    plan->nnz = nnz;
    plan->levels = levels;
    plan->max_level_rows = widest;
    plan->workspace_bytes = ((size_t)n + 1) * sizeof(int64_t) +
                            (size_t)nnz * (sizeof(int32_t) + vs) +
                            (plan->diag == NZ_NON_UNIT ? (size_t)n * vs : 0) +
                            (state->sweeps > 0 ? 2 * (size_t)n * vs
                                               : ((size_t)levels + 1) * sizeof(int64_t) +
                                                     (size_t)n * sizeof(int32_t));
    plan->state = state;
    state = NULL;
cleanup:
    state_free(ctx, state);
    return status;
}

void nz_cpu_spsv_plan_release(nz_spsv_plan_t *plan) {
    state_free(plan->ctx, (spsv_cpu_state_t *)plan->state);
    plan->state = NULL;
}

#ifdef _OPENMP
#define NZI_SPSV_PARALLEL(team) NZI_PRAGMA(omp parallel if ((team) > 1) num_threads(team))
#define NZI_SPSV_FOR NZI_PRAGMA(omp for schedule(static))
#else
#define NZI_SPSV_PARALLEL(team)
#define NZI_SPSV_FOR
#endif

/* The level-scheduled solve for one value type (see the opening comment). Inside one parallel
 * region every thread walks the levels; the worksharing loop's implicit barrier ends each
 * level before the next one reads its rows. */
#define NZI_DEFINE_SPSV(T, SUFFIX)                                                              \
    static void spsv_levels_##SUFFIX(const spsv_cpu_state_t *s, int64_t levels, T alpha,        \
                                     const T *x, T *y, int team) {                              \
        const int64_t *row_offsets = s->row_offsets;                                            \
        const int32_t *col_indices = s->col_indices;                                            \
        const T *values = (const T *)s->values;                                                 \
        const T *diagonal = (const T *)s->diagonal;                                             \
        NZI_SPSV_PARALLEL(team)                                                                 \
        for (int64_t l = 0; l < levels; l++) {                                                  \
            const int64_t first = s->level_offsets[l], last = s->level_offsets[l + 1];          \
            NZI_SPSV_FOR                                                                        \
            for (int64_t p = first; p < last; p++) {                                            \
                const int64_t i = s->level_rows[p];                                             \
                T sum = alpha * x[i];                                                           \
                for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++)                   \
                    sum -= values[k] * y[col_indices[k]];                                       \
                y[i] = diagonal != NULL ? sum / diagonal[i] : sum;                              \
            }                                                                                   \
        }                                                                                       \
    }

NZI_DEFINE_SPSV(float, f32)
NZI_DEFINE_SPSV(double, f64)

/* NZ_SPSV_JACOBI(k): y_0 = D^-1 alpha x, then k sweeps y_m = D^-1 (alpha x - E y_{m-1}),
 * alternating between the plan's two vectors, the last into y; every row of a sweep in parallel
 * (its sum in E's column order, in the storage type, so bitwise the same for any team). In place
 * (x == y) is safe: only the last sweep writes y, row i after reading x_i. */
#define NZI_DEFINE_SPSV_JACOBI(T, SUFFIX)                                                       \
    static void spsv_jacobi_##SUFFIX(const spsv_cpu_state_t *s, int64_t n, T alpha, const T *x, \
                                     T *y, int team) {                                          \
        const int64_t *row_offsets = s->row_offsets;                                            \
        const int32_t *col_indices = s->col_indices;                                            \
        const T *values = (const T *)s->values;                                                 \
        const T *diagonal = (const T *)s->diagonal;                                             \
        T *buffers[2] = {(T *)s->sweep, (T *)s->sweep + n};                                     \
        NZI_SPSV_PARALLEL(team)                                                                 \
        for (int m = 0; m <= s->sweeps; m++) {                                                  \
            const T *in = m > 0 ? buffers[(m - 1) & 1] : NULL;                                  \
            T *out = m == s->sweeps ? y : buffers[m & 1];                                       \
            NZI_SPSV_FOR                                                                        \
            for (int64_t i = 0; i < n; i++) {                                                   \
                T sum = alpha * x[i];                                                           \
                if (in != NULL)                                                                 \
                    for (int64_t k = row_offsets[i]; k < row_offsets[i + 1]; k++)               \
                        sum -= values[k] * in[col_indices[k]];                                  \
                out[i] = diagonal != NULL ? sum / diagonal[i] : sum;                            \
            }                                                                                   \
        }                                                                                       \
    }

NZI_DEFINE_SPSV_JACOBI(float, f32)
NZI_DEFINE_SPSV_JACOBI(double, f64)

nz_status_t nz_cpu_spsv_execute(const nz_spsv_plan_t *plan, double alpha, const void *x, void *y) {
    const spsv_cpu_state_t *state = (const spsv_cpu_state_t *)plan->state;
    const nz_value_type_t vt = plan->T->value_type;
    const int64_t n = plan->T->rows;
    if (state == NULL)
        return nzi_error(plan->ctx, NZ_ERR_INVALID_HANDLE, "the SpSV plan has no analysis");
    if (alpha == 0) {
        /* y = op(T)^-1 0 = 0 exactly; x is not read (NaN in x does not propagate) */
        for (int64_t i = 0; i < n; i++) nzi_set(y, vt, i, 0.0);
        return NZ_SUCCESS;
    }
    int team = nzi_cpu_team(1, plan->ctx->threads, (double)(plan->nnz + n));
    if (state->sweeps > 0) {
        if (vt == NZ_F32)
            spsv_jacobi_f32(state, n, (float)alpha, (const float *)x, (float *)y, team);
        else
            spsv_jacobi_f64(state, n, alpha, (const double *)x, (double *)y, team);
        return NZ_SUCCESS;
    }
    if (plan->levels > 0 && n / plan->levels < NZI_SPSV_MIN_LEVEL_ROWS) team = 1;
    if (vt == NZ_F32)
        spsv_levels_f32(state, plan->levels, (float)alpha, (const float *)x, (float *)y, team);
    else
        spsv_levels_f64(state, plan->levels, alpha, (const double *)x, (double *)y, team);
    return NZ_SUCCESS;
}
