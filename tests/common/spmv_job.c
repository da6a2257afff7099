/* spmv_job.c: the GPU SpMV tests' operands, checked run and matrix makers (see spmv_job.h). */
#include "spmv_job.h"

#include <math.h>
#include <string.h>

int64_t nzt_spmv_cases;

void nzt_spmv_job_begin(nzt_spmv_job_t *j, nz_context_t *ctx, const char *name,
                        const nz_matrix_t *A, nz_operation_t op, uint64_t seed, int nan_x) {
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, A));
    memset(j, 0, sizeof *j);
    j->ctx = ctx;
    j->name = name;
    j->A = A;
    j->op = op;
    j->vt = info.value_type;
    j->rows = info.rows;
    j->cols = info.cols;
    j->nnz = info.nnz;
    j->xn = op == NZ_OP_N ? info.cols : info.rows;
    j->yn = op == NZ_OP_N ? info.rows : info.cols;
    j->vs = j->vt == NZ_F32 ? 4 : 8;
    size_t nx = nzt_at_least_one(j->xn), ny = nzt_at_least_one(j->yn);
    j->xd = nzt_malloc(nx * 8);
    j->y0d = nzt_malloc(ny * 8);
    j->xh = nzt_malloc(nx * j->vs);
    j->y0h = nzt_malloc(ny * j->vs);
    j->yh = nzt_malloc(ny * j->vs);
    j->yh2 = nzt_malloc(ny * j->vs);
    j->ref_a = nzt_malloc(ny * 8);
    j->bound_a = nzt_malloc(ny * 8);
    j->ref_b = nzt_malloc(ny * 8);
    j->bound_b = nzt_malloc(ny * 8);
    j->len = nzt_malloc(ny * 8);
    nzt_random_vector(j->xd, j->xh, j->vt, j->xn, seed);
    nzt_random_vector(j->y0d, j->y0h, j->vt, j->yn, seed + 1);
    nzt_reference_spmv(A, op, 1.0, j->xd, 0.0, j->y0d, j->ref_a, j->bound_a, j->len);
    nzt_reference_spmv(A, op, -2.5, j->xd, 0.5, j->y0d, j->ref_b, j->bound_b, j->len);
    NZT_OK(ctx, nz_device_malloc(ctx, &j->dx, nx * j->vs));
    NZT_OK(ctx, nz_device_malloc(ctx, &j->dy, ny * j->vs));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, j->dx, j->xh, (size_t)j->xn * j->vs));
    if (!nan_x) return;
    j->xnd = nzt_malloc(nx * 8);
    j->xnh = nzt_malloc(nx * j->vs);
    j->ref_n = nzt_malloc(ny * 8);
    j->bound_n = nzt_malloc(ny * 8);
    memcpy(j->xnd, j->xd, (size_t)j->xn * 8);
    if (j->xn > 0) {
        j->xnd[0] = NAN;
        j->xnd[j->xn - 1] = j->xn > 1 ? INFINITY : NAN;
    }
    nzt_from_double(j->xnh, j->vt, j->xnd, j->xn);
    nzt_reference_spmv(A, op, 1.0, j->xnd, 0.0, j->y0d, j->ref_n, j->bound_n, j->len);
    NZT_OK(ctx, nz_device_malloc(ctx, &j->dxn, nx * j->vs));
    NZT_OK(ctx, nz_device_copy_from_host(ctx, j->dxn, j->xnh, (size_t)j->xn * j->vs));
}

void nzt_spmv_job_end(nzt_spmv_job_t *j) {
    nz_context_t *ctx = j->ctx;
    void *xback = nzt_malloc(nzt_at_least_one(j->xn) * j->vs);
    NZT_OK(ctx, nz_device_copy_to_host(ctx, xback, j->dx, (size_t)j->xn * j->vs));
    NZT_CHECK(memcmp(xback, j->xh, (size_t)j->xn * j->vs) == 0, "%s %s: x was modified", j->name,
              nzt_vt_name(j->vt));
    free(xback);
    NZT_OK(ctx, nz_device_free(ctx, j->dx));
    NZT_OK(ctx, nz_device_free(ctx, j->dy));
    if (j->dxn != NULL) NZT_OK(ctx, nz_device_free(ctx, j->dxn));
    void *arrays[] = {j->xd, j->y0d, j->xh, j->y0h, j->yh, j->yh2, j->ref_a, j->bound_a,
                      j->ref_b, j->bound_b, j->len, j->xnd, j->xnh, j->ref_n, j->bound_n};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) free(arrays[i]);
}

int64_t nzt_spmv_run(const nzt_spmv_job_t *j, nz_spmv_plan_t *plan, const char *label,
                     const void *dx, double alpha, double beta, const double *ref,
                     const double *bound, void *out) {
    nz_context_t *ctx = j->ctx;
    const int64_t failed = j->yn > 0 ? j->yn : 1;
    size_t ybytes = (size_t)j->yn * j->vs;
    if (beta == 0.0)
        NZT_OK(ctx, nz_device_memset(ctx, j->dy, 0xFF, ybytes));
    else
        NZT_OK(ctx, nz_device_copy_from_host(ctx, j->dy, j->y0h, ybytes));
    nz_status_t s = nz_spmv_execute(plan, alpha, dx, beta, j->dy);
    NZT_CHECK(s == NZ_SUCCESS, "%s: execute returned %d (%s): %s", label, (int)s,
              nz_status_string(s), nz_context_last_error(ctx));
    if (s != NZ_SUCCESS) return failed;
    s = nz_device_copy_to_host(ctx, out, j->dy, ybytes);
    NZT_CHECK(s == NZ_SUCCESS, "%s: copying y back returned %d: %s (a kernel fault?)", label,
              (int)s, nz_context_last_error(ctx));
    if (s != NZ_SUCCESS) return failed;
    nzt_spmv_cases++;
    int64_t bad = nzt_compare(label, j->vt, out, ref, bound, j->len, j->yn, NZT_SPMV_TOL);
    NZT_CHECK(bad == 0, "%s: %lld of %lld entries wrong (first ones above)", label,
              (long long)bad, (long long)j->yn);
    return bad;
}

int64_t nzt_first_difference(const void *a, const void *b, int64_t n, size_t vs) {
    for (int64_t i = 0; i < n; i++)
        if (memcmp((const char *)a + (size_t)i * vs, (const char *)b + (size_t)i * vs, vs) != 0)
            return i;
    return -1;
}

nz_status_t nzt_make_zoo(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt, const void *arg) {
    return nzt_zoo_matrix(ctx, A, *(const int *)arg, vt, nzt_seed);
}

nz_status_t nzt_make_file(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt,
                          const void *arg) {
    return nz_mm_read(ctx, A, (const char *)arg, vt);
}

nz_status_t nzt_make_gen(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt,
                         const void *arg) {
    const nzt_gen_case_t *g = arg;
    const int64_t *p = g->p;
    switch (g->kind) {
    case NZT_GEN_LAPLACE2D: return nz_gen_laplace2d(ctx, A, p[0], p[1], vt);
    case NZT_GEN_LAPLACE3D: return nz_gen_laplace3d(ctx, A, p[0], p[1], p[2], vt);
    case NZT_GEN_RANDOM: return nz_gen_random(ctx, A, p[0], p[1], (double)p[2], nzt_seed, vt);
    case NZT_GEN_RAIL: return nz_gen_rail(ctx, A, p[0], p[1], p[2], nzt_seed, vt);
    case NZT_GEN_MIXED: return nz_gen_mixed(ctx, A, p[0], p[1], p[2], p[3], nzt_seed, vt);
    case NZT_GEN_RMAT: return nz_gen_rmat(ctx, A, (int)p[0], (int)p[1], 0, 0, 0, nzt_seed, vt);
    case NZT_GEN_BANDED: return nz_gen_banded(ctx, A, p[0], p[1], p[2], vt);
    case NZT_GEN_FE3D: break;
    }
    return nz_gen_fe3d(ctx, A, NULL, NULL, p[0], vt);
}

nz_status_t nzt_make_long_rows(nz_context_t *ctx, nz_matrix_t **A, nz_value_type_t vt,
                               const void *arg) {
    const nzt_long_rows_t *lr = arg;
    int64_t *offsets = nzt_malloc(((size_t)lr->rows + 1) * 8);
    offsets[0] = 0;
    for (int64_t i = 0; i < lr->rows; i++) offsets[i + 1] = offsets[i] + lr->lengths[i];
    int64_t nnz = offsets[lr->rows];
    int32_t *columns = nzt_malloc(nzt_at_least_one(nnz) * 4);
    double *vd = nzt_malloc(nzt_at_least_one(nnz) * 8);
    void *values = nzt_malloc(nzt_at_least_one(nnz) * 8);
    for (int64_t i = 0; i < lr->rows; i++) {
        int64_t length = lr->lengths[i];
        for (int64_t k = 0; k < length; k++)
            columns[offsets[i] + k] = (int32_t)((k * lr->cols) / length);
    }
    nzt_random_vector(vd, values, vt, nnz, nzt_seed + 7);
    nz_status_t s = nz_matrix_create_csr(ctx, A, lr->rows, lr->cols, NZ_I64, offsets, columns, vt,
                                         values);
    free(offsets);
    free(columns);
    free(vd);
    free(values);
    return s;
}

void nzt_both_precisions(nz_context_t *ctx, const char *name, nzt_make_fn make,
                         const void *make_arg, nzt_matrix_check_fn check, const void *check_arg,
                         int width) {
    if (!nzt_shard_take()) return; /* one case per shard slot (NZ_TEST_SHARD) */
    for (int v = 0; v < 2; v++) {
        nz_value_type_t vt = v == 0 ? NZ_F32 : NZ_F64;
        nz_matrix_t *A = NULL;
        nz_status_t s = make(ctx, &A, vt, make_arg);
        if (s == NZ_ERR_UNSUPPORTED && make == nzt_make_file) {
            printf("  note: %s cannot be read by this build (%s); skipped\n", name,
                   nz_context_last_error(ctx));
            return;
        }
        NZT_CHECK(s == NZ_SUCCESS, "%s: making the matrix returned %d: %s", name, (int)s,
                  nz_context_last_error(ctx));
        if (s != NZ_SUCCESS) continue;
        int before = nzt_failures;
        check(name, A, check_arg);
        nz_matrix_destroy(&A);
        printf("  %-*s %s %s\n", width, name, nzt_vt_name(vt),
               nzt_failures == before ? "ok" : "FAILED");
        fflush(stdout);
    }
}

void nzt_both_precisions_zoo(nz_context_t *ctx, nzt_matrix_check_fn check, const void *check_arg,
                             int width) {
    printf("zoo:\n");
    for (int k = 0; k < nzt_zoo_count(); k++)
        nzt_both_precisions(ctx, nzt_zoo_name(k), nzt_make_zoo, &k, check, check_arg, width);
}

int nzt_both_precisions_real(nz_context_t *ctx, int step, int wanted, nzt_matrix_check_fn check,
                             const void *check_arg, int width) {
    const char *dir = nzt_matrix_dir();
    if (dir == NULL) {
        printf("real matrices: NZ_MATRIX_DIR not set, skipped\n");
        return 0;
    }
    char **names = NULL;
    int count = nzt_list_matrices(dir, &names);
    if (wanted > 0) step = count > wanted ? count / wanted : 1;
    printf("real matrices (every %d of %d in %s):\n", step, count, dir);
    for (int m = 0; m < count; m += step) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[m]);
        nzt_both_precisions(ctx, names[m], nzt_make_file, path, check, check_arg, width);
    }
    nzt_free_names(names, count);
    return 1;
}

nz_context_t *nzt_csr_gpu_context(const char *note, nz_alg_t *algs, int max, int *num_algs) {
    nz_context_t *ctx = nzt_gpu_context(note);
    nz_tunables_t t;
    NZT_OK(ctx, nz_context_get_tunables(ctx, &t));
    t.column_panels = 3;
    NZT_OK(ctx, nz_context_set_tunables(ctx, &t));
    *num_algs = nzt_spmv_algs(NZ_BACKEND_CUDA, NZ_FORMAT_CSR, algs, max);
    NZT_CHECK(*num_algs >= 3, "only %d CUDA CSR algorithms listed", *num_algs);
    printf("algorithms:");
    for (int a = 0; a < *num_algs; a++) printf(" %s", nz_alg_name(algs[a]));
    printf("\n");
    return ctx;
}

void nzt_csr_each_offset_width(nz_context_t *ctx, const char *name, const nz_matrix_t *A,
                               nzt_device_check_fn check) {
    nzt_spmv_job_t j;
    nzt_spmv_job_begin(&j, ctx, name, A, NZ_OP_N, nzt_seed + 11, 0);
    for (int bits = 32; bits <= 64; bits += 32) {
        nz_matrix_t *dA = NULL;
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, bits == 32 ? NZ_I32 : NZ_I64));
        check(&j, dA, bits);
        NZT_OK(ctx, nz_matrix_destroy(&dA));
    }
    nzt_spmv_job_end(&j);
}

int nzt_csr_flag_settings(nz_alg_t alg, int with_forms, unsigned flags[NZT_CSR_MAX_FLAG_SETTINGS]) {
    int n = 0;
    flags[n++] = 0;
    if (!with_forms) return n;
    if (alg == NZ_ALG_LIGHT_VECTOR || alg == NZ_ALG_LIGHT_WARP) flags[n++] = NZ_PLAN_LIGHT_PER_ROW;
    if (alg == NZ_ALG_VECTOR || alg == NZ_ALG_MERGE || alg == NZ_ALG_SPLIT)
        flags[n++] = NZ_PLAN_CACHE_HINTS;
    if (alg == NZ_ALG_VECTOR || alg == NZ_ALG_MERGE || alg == NZ_ALG_ADAPTIVE ||
        alg == NZ_ALG_SPLIT)
        flags[n++] = NZ_PLAN_COLUMN_PANELS;
    /* csr/atomic reordered runs COO's scatter with x's head in shared memory (double) */
    if (alg == NZ_ALG_VECTOR || alg == NZ_ALG_MERGE || alg == NZ_ALG_ADAPTIVE ||
        alg == NZ_ALG_ATOMIC || alg == NZ_ALG_SPLIT)
        flags[n++] = NZ_PLAN_REORDER;
    if (alg == NZ_ALG_VECTOR) flags[n++] = NZ_PLAN_COMPRESS_INDICES;
    return n;
}

const char *nzt_csr_flags_label(unsigned flags) {
    return flags == NZ_PLAN_LIGHT_PER_ROW ? " per-row"
           : flags == NZ_PLAN_CACHE_HINTS ? " hints"
           : flags == (NZ_PLAN_CACHE_HINTS | NZ_PLAN_MIXED) ? " hints+mixed"
           : flags == NZ_PLAN_MIXED ? " mixed"
           : flags == NZ_PLAN_COLUMN_PANELS ? " panels"
           : flags == NZ_PLAN_REORDER ? " reorder"
           : flags == NZ_PLAN_COMPRESS_INDICES ? " compressed"
           : (flags & NZ_PLAN_COMPRESS_INDICES) ? " compressed+"
           : (flags & NZ_PLAN_COLUMN_PANELS) ? " panels+"
                                               : "";
}
