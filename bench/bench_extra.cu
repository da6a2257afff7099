/* bench_extra.cu: transpose SpMV and SpMM (k right-hand sides, both layouts) on the GPU, Nonzero vs cuSPARSE. */
#include "bench_extra_internal.h"

#include <stdlib.h>
#include <string.h>

/* The run's setup and its loop over the matrices; the rows, timing and checks are in
 * bench_extra_common.cu, the two parts in bench_transpose.cu and bench_spmm.cu. */

/* The built-in suite: FE (27-point rows), 7-point Laplacian, power-law R-MAT, and a rail matrix
 * whose transpose has a million short rows (its columns). */
static nz_status_t make_builtin(nz_context_t *ctx, int which, nz_value_type_t vt, nz_matrix_t **A,
                                const char **name) {
    switch (which) {
    case 0: *name = "fe3d-64"; return nz_gen_fe3d(ctx, A, NULL, NULL, 64, vt);
    case 1: *name = "laplace3d-64"; return nz_gen_laplace3d(ctx, A, 64, 64, 64, vt);
    case 2: *name = "rmat-18"; return nz_gen_rmat(ctx, A, 18, 16, 0, 0, 0, 20261121u, vt);
    default: *name = "rail-1K-300K"; return nz_gen_rail(ctx, A, 1000, 300000, 1000, 20261121u, vt);
    }
}
#define NUM_BUILTIN 4

int nzb_bench_transpose_spmm(FILE *out, const nzb_extra_options_t *options) {
    nzb_extra_t b;
    nzb_extra_options_t o;
    memset(&b, 0, sizeof b);
    memset(&o, 0, sizeof o);
    if (options != NULL) o = *options;
    b.out = out != NULL ? out : stdout;
    b.runs = o.runs >= EXTRA_MIN_RUNS ? (o.runs < 1024 ? o.runs : 1024) : EXTRA_MIN_RUNS;
    b.vt = o.single ? NZ_F32 : NZ_F64;
    b.vs = o.single ? 4 : 8;
    const int64_t default_ks[] = {1, 4, 8, 16, 32, 64};
    const int64_t *ks = o.num_ks > 0 ? o.ks : default_ks;
    const int num_ks = o.num_ks > 0 ? (o.num_ks < NZB_EXTRA_MAX_K ? o.num_ks : NZB_EXTRA_MAX_K) : 6;
    int status = 0;

    if (nz_device_count() == 0) {
        fprintf(b.out, "transpose / SpMM benchmark: no CUDA device (or a build without CUDA)\n");
        return 2;
    }
    if (nz_context_create(&b.ctx) != NZ_SUCCESS ||
        cudaSetDevice(0) != cudaSuccess ||
        cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking) != cudaSuccess ||
        nz_context_set_device(b.ctx, 0, (void *)b.stream) != NZ_SUCCESS ||
        (o.tunables != NULL && nz_context_set_tunables(b.ctx, o.tunables) != NZ_SUCCESS) ||
        cusparseCreate(&b.handle) != CUSPARSE_STATUS_SUCCESS ||
        cusparseSetStream(b.handle, b.stream) != CUSPARSE_STATUS_SUCCESS) {
        fprintf(b.out, "transpose / SpMM benchmark: GPU setup failed: %s\n",
                b.ctx != NULL ? nz_context_last_error(b.ctx) : "no context");
        status = 2;
        goto done;
    }
    b.starts = (cudaEvent_t *)calloc((size_t)b.runs, sizeof(cudaEvent_t));
    b.stops = (cudaEvent_t *)calloc((size_t)b.runs, sizeof(cudaEvent_t));
    for (int i = 0; i < b.runs; i++) {
        cudaEventCreate(&b.starts[i]);
        cudaEventCreate(&b.stops[i]);
    }
    if (o.csv_path != NULL && (b.csv = nzu_output_fopen(&b.csv_out, o.csv_path)) == NULL)
        fprintf(b.out, "note: cannot write %s; no CSV\n", o.csv_path);
    fprintf(b.out, "transpose SpMV and SpMM, %s, %s, median of %d runs after %d warm-up runs; "
                   "speedup = cuSPARSE best / ours\n",
            nz_context_device_name(b.ctx), o.single ? "single" : "double", b.runs, EXTRA_WARMUP);
    nzb_extra_print_header(&b);

    for (int m = 0; m < (o.num_files > 0 ? o.num_files : NUM_BUILTIN); m++) {
        nz_matrix_t *A = NULL;
        const char *name = NULL;
        nz_status_t s;
        if (o.num_files > 0) {
            name = strrchr(o.files[m], '/') != NULL ? strrchr(o.files[m], '/') + 1 : o.files[m];
            s = nz_matrix_read(b.ctx, &A, o.files[m], b.vt);
        } else {
            s = make_builtin(b.ctx, m, b.vt, &A, &name);
        }
        if (s != NZ_SUCCESS) {
            fprintf(b.out, "%s: cannot make the matrix: %s\n", name, nz_context_last_error(b.ctx));
            b.failures++;
            continue;
        }
        nzb_extra_case_t c;
        char msg[256];
        if (nzb_extra_case_open(&b, &c, name, A, msg, sizeof msg) != 0) {
            fprintf(b.out, "%s: device setup failed: %s\n", name, msg);
            b.failures++;
            nzb_extra_case_close(&c);
            continue;
        }
        if (!o.spmm_only) nzb_extra_transpose(&b, &c);
        if (!o.transpose_only) nzb_extra_spmm(&b, &c, ks, num_ks);
        nzb_extra_case_close(&c);
    }
    status = b.failures > 0 ? 1 : 0;
    if (b.failures > 0) fprintf(b.out, "%d row(s) failed or were wrong\n", b.failures);

done:
    if (b.csv != NULL && nzu_output_fclose(&b.csv_out, b.csv) != 0) {
        fprintf(stderr, "nz bench: cannot write %s\n", o.csv_path);
        b.failures++;
    }
    nz_context_destroy(&b.ctx);
    for (int i = 0; b.starts != NULL && i < b.runs; i++) {
        cudaEventDestroy(b.starts[i]);
        cudaEventDestroy(b.stops[i]);
    }
    free(b.starts);
    free(b.stops);
    if (b.handle != NULL) cusparseDestroy(b.handle);
    if (b.stream != NULL) cudaStreamDestroy(b.stream);
    return status;
}
