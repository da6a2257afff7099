/* bench_spgemm_verify.cu: the SpGEMM benchmark's checks: product counts, rows to verify, C against the CPU algorithm. */
#include "bench_spgemm_internal.h"
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A host CSR matrix's info and arrays, read once. */
typedef struct csr_view {
    nz_matrix_info_t info;
    const int64_t *o;
    const int32_t *c;
    const void *v;
} csr_view_t;

static csr_view_t csr_view(nz_context_t *ctx, const nz_matrix_t *A) {
    csr_view_t m;
    nz_matrix_info(ctx, &m.info, A);
    nz_matrix_csr_arrays(ctx, &m.o, &m.c, &m.v, A);
    return m;
}

void nzb_spgemm_count_products(nz_context_t *ctx, const nz_matrix_t *A, int64_t *products,
                               int64_t *c_bound, int64_t **per_row) {
    const csr_view_t m = csr_view(ctx, A);
    const int64_t *o = m.o;
    const int32_t *c = m.c;
    const int64_t n = m.info.rows;
    int64_t *rows = (int64_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    *products = 0;
    *c_bound = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t p = 0;
        for (int64_t k = o[i]; k < o[i + 1]; k++) p += o[c[k] + 1] - o[c[k]];
        rows[i] = p;
        *products += p;
        *c_bound += p < m.info.cols ? p : m.info.cols;
    }
    *per_row = rows;
}

/* Rows `list` of A as a new host CSR matrix, values in double, absolute or not. */
static nz_status_t select_rows(nz_context_t *ctx, nz_matrix_t **S, const nz_matrix_t *A,
                               const int64_t *list, int64_t count, int absolute) {
    const csr_view_t m = csr_view(ctx, A);
    const int64_t *o = m.o;
    const int32_t *c = m.c;
    const void *v = m.v;
    const nz_matrix_info_t info = m.info;
    int64_t nnz = 0;
    for (int64_t r = 0; r < count; r++) nnz += o[list[r] + 1] - o[list[r]];
    int64_t *so = (int64_t *)malloc((size_t)(count + 1) * sizeof(int64_t));
    int32_t *sc = (int32_t *)malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int32_t));
    double *sv = (double *)malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(double));
    nz_status_t status = NZ_ERR_OUT_OF_MEMORY;
    if (so != NULL && sc != NULL && sv != NULL) {
        so[0] = 0;
        for (int64_t r = 0; r < count; r++) {
            int64_t at = so[r];
            for (int64_t k = o[list[r]]; k < o[list[r] + 1]; k++, at++) {
                double x = nzb_value_get(v, info.value_type, k);
                sc[at] = c[k];
                sv[at] = absolute ? fabs(x) : x;
            }
            so[r + 1] = at;
        }
        status = nz_matrix_create_csr(ctx, S, count, info.cols, NZ_I64, so, sc, NZ_F64, sv);
    }
    free(so);
    free(sc);
    free(sv);
    return status;
}

int64_t nzb_spgemm_verify_rows(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *C,
                               const int64_t *list, int64_t count, char *note, size_t note_size) {
    nz_matrix_t *S = NULL, *absS = NULL, *A64 = NULL, *absA = NULL, *R = NULL, *bound = NULL;
    nz_spgemm_options_t cpu;
    int64_t bad = -1;
    memset(&cpu, 0, sizeof cpu);
    cpu.alg = NZ_SPGEMM_CPU;
    nz_matrix_info_t ai;
    nz_matrix_info(ctx, &ai, A);
    int64_t *all = (int64_t *)malloc((size_t)(ai.rows > 0 ? ai.rows : 1) * sizeof(int64_t));
    for (int64_t i = 0; i < ai.rows; i++) all[i] = i;
    if (select_rows(ctx, &S, A, list, count, 0) == NZ_SUCCESS &&
        select_rows(ctx, &absS, A, list, count, 1) == NZ_SUCCESS &&
        select_rows(ctx, &A64, A, all, ai.rows, 0) == NZ_SUCCESS &&
        select_rows(ctx, &absA, A, all, ai.rows, 1) == NZ_SUCCESS &&
        nz_spgemm(ctx, &R, S, A64, &cpu, NULL) == NZ_SUCCESS &&
        nz_spgemm(ctx, &bound, absS, absA, &cpu, NULL) == NZ_SUCCESS) {
        const int64_t *ao, *co, *ro, *bo;
        const int32_t *ac, *cc, *rc, *bc;
        const void *av, *cv, *rv, *bv;
        nz_matrix_info_t ci;
        nz_matrix_info(ctx, &ci, C);
        nz_matrix_csr_arrays(ctx, &ao, &ac, &av, A);
        nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C);
        nz_matrix_csr_arrays(ctx, &ro, &rc, &rv, R);
        nz_matrix_csr_arrays(ctx, &bo, &bc, &bv, bound);
        const double eps = ci.value_type == NZ_F32 ? 1.1920929e-7 : 2.220446049250313e-16;
        bad = 0;
        for (int64_t r = 0; r < count; r++) {
            const int64_t i = list[r];
            if (co[i + 1] - co[i] != ro[r + 1] - ro[r]) {
                if (bad++ == 0)
                    snprintf(note, note_size, "row %lld has %lld entries, CPU %lld", (long long)i,
                             (long long)(co[i + 1] - co[i]), (long long)(ro[r + 1] - ro[r]));
                continue;
            }
            const double k = (double)(ao[i + 1] - ao[i]);
            for (int64_t e = 0; e < ro[r + 1] - ro[r]; e++) {
                const int64_t ce = co[i] + e, re = ro[r] + e;
                double x = nzb_value_get(cv, ci.value_type, ce);
                double y = ((const double *)rv)[re];
                double tol = 4.0 * eps * (k + 2.0) * ((const double *)bv)[re];
                if (ci.value_type == NZ_F32) tol += 1.2e-7 * fabs(y); /* the CPU result is double */
                if (cc[ce] != rc[re] || !((isnan(x) && isnan(y)) || x == y || fabs(x - y) <= tol)) {
                    if (bad++ == 0)
                        snprintf(note, note_size, "row %lld: (%d, %.17g), CPU (%d, %.17g)",
                                 (long long)i, cc[ce], x, rc[re], y);
                }
            }
        }
    } else {
        snprintf(note, note_size, "CPU reference failed: %s", nz_context_last_error(ctx));
    }
    free(all);
    nz_matrix_destroy(&S);
    nz_matrix_destroy(&absS);
    nz_matrix_destroy(&A64);
    nz_matrix_destroy(&absA);
    nz_matrix_destroy(&R);
    nz_matrix_destroy(&bound);
    return bad;
}

int64_t *nzb_spgemm_verify_list(int64_t rows, int64_t products, int64_t *per_row,
                                int64_t *n_list) {
    int64_t *list = (int64_t *)malloc((size_t)(rows > 0 ? rows : 1) * sizeof(int64_t));
    *n_list = rows;
    if (products <= VERIFY_FULL_LIMIT) {
        for (int64_t i = 0; i < rows; i++) list[i] = i;
    } else {
        uint64_t x = 88172645463325252ull;
        *n_list = 0;
        for (int h = 0; h < VERIFY_HEAVY_ROWS; h++) {
            int64_t best = 0;
            for (int64_t i = 1; i < rows; i++)
                if (per_row[i] > per_row[best]) best = i;
            list[(*n_list)++] = best;
            per_row[best] = -1;
        }
        for (int s = 0; s < VERIFY_SAMPLE_ROWS; s++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            list[(*n_list)++] = (int64_t)(x % (uint64_t)rows);
        }
    }
    return list;
}
