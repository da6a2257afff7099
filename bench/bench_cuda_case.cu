/* bench_cuda_case.cu: one case of nz bench on the GPU: cuSPARSE's CSR algorithms, then ours (variants, tuning sweeps). */
#include "bench_cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    cusparseSpMVAlg_t alg;
    const char *name;
} cusparse_algs[] = {
    {CUSPARSE_SPMV_CSR_ALG1, "cusparse/alg1"},
    {CUSPARSE_SPMV_CSR_ALG2, "cusparse/alg2"},
};

/* cuSPARSE SpMV with one algorithm on the same device arrays as our kernels: descriptors, buffer
 * and cusparseSpMV_preprocess once, outside the timing (their wall time is reported as plan
 * time), then verified and timed exactly as ours. Returns the median time or 0. */
static double run_cusparse(nzb_gpu_t *g, nzb_report_t *rep, const nzb_case_t *c,
                           const nz_matrix_t *dA, void *dx, void *dy, void *host_y, int k,
                           int runs, const nzb_result_t *base) {
    nzb_result_t r = *base;
    nzb_gpu_launch_t l;
    memset(&l, 0, sizeof l);
    snprintf(r.kernel, sizeof r.kernel, "%s", cusparse_algs[k].name);
    r.is_cusparse = 1;
    r.transfer_seconds = 0;
    l.handle = g->handle;
    l.x = dx;
    l.y = dy;
    l.alg = cusparse_algs[k].alg;
    l.data_type = c->value_type == NZ_F32 ? CUDA_R_32F : CUDA_R_64F;
    size_t vs = c->value_type == NZ_F32 ? 4 : 8;
    size_t buffer_size = 0;
    float one_f = 1.0f, zero_f = 0.0f;
    double one_d = 1.0, zero_d = 0.0;
    const void *alpha = c->value_type == NZ_F32 ? (const void *)&one_f : (const void *)&one_d;
    const void *beta = c->value_type == NZ_F32 ? (const void *)&zero_f : (const void *)&zero_d;
    /* the library's device arrays through the public API (the caller uploaded dA as CSR) */
    nz_matrix_info_t info;
    const void *row_offsets = NULL, *values = NULL;
    const int32_t *col_indices = NULL;
    nz_index_type_t index_type = NZ_I32;
    if (nz_matrix_info(g->ctx, &info, dA) != NZ_SUCCESS ||
        nz_matrix_csr_device_arrays(g->ctx, &row_offsets, &index_type, &col_indices, &values, dA) !=
            NZ_SUCCESS) {
        r.status = NZB_FAILED;
        snprintf(r.note, sizeof r.note, "device arrays: %s", nz_context_last_error(g->ctx));
        nzb_report_row(rep, &r);
        return 0;
    }
    cusparseIndexType_t offset_type = index_type == NZ_I32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
    cusparseStatus_t cs;
    cudaError_t err;

    cudaStreamSynchronize(g->stream);
    double t0 = nzb_wtime();
    if ((cs = cusparseCreateConstCsr(&l.mat, info.rows, info.cols, info.nnz, row_offsets,
                                     col_indices, values, offset_type,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, l.data_type)) !=
            CUSPARSE_STATUS_SUCCESS ||
        (cs = cusparseCreateConstDnVec(&l.vec_x, info.cols, dx, l.data_type)) !=
            CUSPARSE_STATUS_SUCCESS ||
        (cs = cusparseCreateDnVec(&l.vec_y, info.rows, dy, l.data_type)) != CUSPARSE_STATUS_SUCCESS ||
        (cs = cusparseSpMV_bufferSize(g->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, l.mat,
                                      l.vec_x, beta, l.vec_y, l.data_type, l.alg, &buffer_size)) !=
            CUSPARSE_STATUS_SUCCESS) {
        snprintf(l.error, sizeof l.error, "setup: %s", cusparseGetErrorString(cs));
        l.unsupported = cs == CUSPARSE_STATUS_NOT_SUPPORTED;
        goto done;
    }
    if ((err = cudaMalloc(&l.buffer, buffer_size > 0 ? buffer_size : 1)) != cudaSuccess) {
        snprintf(l.error, sizeof l.error, "buffer of %zu bytes: %s", buffer_size,
                 cudaGetErrorString(err));
        goto done;
    }
    if ((cs = cusparseSpMV_preprocess(g->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, l.mat,
                                      l.vec_x, beta, l.vec_y, l.data_type, l.alg, l.buffer)) !=
        CUSPARSE_STATUS_SUCCESS) {
        snprintf(l.error, sizeof l.error, "preprocess: %s", cusparseGetErrorString(cs));
        l.unsupported = cs == CUSPARSE_STATUS_NOT_SUPPORTED;
        goto done;
    }
    if ((err = cudaStreamSynchronize(g->stream)) != cudaSuccess) {
        snprintf(l.error, sizeof l.error, "preprocess: %s", cudaGetErrorString(err));
        goto done;
    }
    r.plan_seconds = nzb_wtime() - t0;
    if (nzb_gpu_verify_launch(g, &l, c, host_y, (size_t)info.rows * vs, &r) != 0) goto done;
    if (r.status == NZB_OK && nzb_gpu_time_launch(g, &l, runs, &r) != 0) goto done;
    nzb_result_rates(&r);

done:
    if (l.error[0]) {
        /* A combination cuSPARSE does not support (e.g. 64-bit offsets with 32-bit columns)
         * is a refusal, not a failure of the benchmark. */
        r.status = l.unsupported ? NZB_REFUSED : NZB_FAILED;
        snprintf(r.note, sizeof r.note, "%s%s", l.unsupported ? "refused: " : "", l.error);
        (void)cudaGetLastError();
    }
    if (l.buffer != NULL) cudaFree(l.buffer);
    if (l.vec_y != NULL) cusparseDestroyDnVec(l.vec_y);
    if (l.vec_x != NULL) cusparseDestroyDnVec(l.vec_x);
    if (l.mat != NULL) cusparseDestroySpMat(l.mat);
    nzb_report_row(rep, &r);
    return r.status == NZB_OK ? r.median_seconds : 0;
}

/* One Nonzero algorithm: plan with `flags` (timed by the library), verify, time. Returns the
 * median time, or 0 when the row was refused or failed. */
static double run_ours(nzb_gpu_t *g, nzb_report_t *rep, const nzb_case_t *c,
                       const nz_matrix_t *dA, nz_alg_t alg, unsigned flags, void *dx, void *dy,
                       void *host_y, int runs, double best_cusparse, const nzb_result_t *base,
                       const char *variant) {
    nzb_result_t r = *base;
    nzb_gpu_launch_t l;
    nz_matrix_info_t mi;
    memset(&l, 0, sizeof l);
    memset(&mi, 0, sizeof mi);
    (void)nz_matrix_info(g->ctx, &mi, dA);
    snprintf(r.kernel, sizeof r.kernel, "%s/%s%s%s", nz_format_name(mi.format),
             nz_alg_name(alg), variant ? ":" : "", variant ? variant : "");
    l.x = dx;
    l.y = dy;
    size_t vs = c->value_type == NZ_F32 ? 4 : 8;
    nz_status_t s = nz_spmv_plan_create(g->ctx, &l.plan, dA, NZ_OP_N, alg, flags);
    if (s != NZ_SUCCESS) {
        r.status = s == NZ_ERR_UNSUPPORTED ? NZB_REFUSED : NZB_FAILED;
        const char *msg = nz_context_last_error(g->ctx);
        snprintf(r.note, sizeof r.note, "%s: %s",
                 r.status == NZB_REFUSED ? "refused" : "plan failed",
                 msg[0] ? msg : nz_status_string(s));
        r.reason = s;
        l.plan = NULL;
    } else {
        nz_spmv_plan_info_t info;
        if (nz_spmv_plan_info(l.plan, &info) == NZ_SUCCESS) {
            r.plan_seconds = info.plan_seconds;
            if (alg == NZ_ALG_AUTO) /* the planner's row: say what it chose */
                nzb_plan_choice_note(r.note, sizeof r.note, &info);
        }
        if (nzb_gpu_verify_launch(g, &l, c, host_y, (size_t)mi.rows * vs, &r) != 0 ||
            (r.status == NZB_OK && nzb_gpu_time_launch(g, &l, runs, &r) != 0)) {
            r.status = NZB_FAILED;
            snprintf(r.note, sizeof r.note, "%s", l.error);
            (void)cudaGetLastError();
        } else {
            nzb_result_rates(&r);
            if (r.status == NZB_OK && best_cusparse > 0 && r.median_seconds > 0)
                r.speedup = best_cusparse / r.median_seconds;
        }
    }
    nz_spmv_plan_destroy(&l.plan);
    nzb_report_row(rep, &r);
    return r.status == NZB_OK ? r.median_seconds : 0;
}

/* The plan-flag variants of an algorithm, timed in the same run as its default form (kernel
 * "csr/alg:label"; they count as Nonzero kernels in the summary), each with a note
 * comparing it with the default form:
 *   light-vector, light-warp: ":per-row", NZ_PLAN_LIGHT_PER_ROW (the paper's one row per
 *     atomic; the default takes chunks of rows per atomic);
 *   vector, merge, split: ":hints", NZ_PLAN_CACHE_HINTS (matrix arrays loaded as streaming);
 *   vector, merge:
 *     ":panels" (NZ_PLAN_COLUMN_PANELS, with hints);
 *   vector, merge, adaptive, atomic: ":reorder" (NZ_PLAN_REORDER; with hints for vector and
 *     merge);
 *   vector: ":compressed" (NZ_PLAN_COMPRESS_INDICES, 16-bit column segments). */
#define ALG_BIT(a) (1u << (unsigned)(a))
static void run_flag_variants(nzb_gpu_t *g, nzb_report_t *rep, const nzb_case_t *c,
                              const nz_matrix_t *dA, nz_alg_t alg, double default_seconds,
                              void *dx, void *dy, void *host_y, int runs, double best_cusparse,
                              const nzb_result_t *base) {
    static const struct {
        unsigned flags;
        const char *label, *meaning;
        unsigned algs; /* ALG_BIT of each algorithm the variant is timed for */
    } variants[] = {
        {NZ_PLAN_LIGHT_PER_ROW, "per-row", "one row per atomic vs chunked rows per atomic",
         ALG_BIT(NZ_ALG_LIGHT_VECTOR) | ALG_BIT(NZ_ALG_LIGHT_WARP)},
        {NZ_PLAN_CACHE_HINTS, "hints", "streaming cache hints vs plain loads",
         ALG_BIT(NZ_ALG_VECTOR) | ALG_BIT(NZ_ALG_MERGE) | ALG_BIT(NZ_ALG_SPLIT)},
        {NZ_PLAN_COLUMN_PANELS | NZ_PLAN_CACHE_HINTS, "panels", "column panels (+hints) vs plain",
         ALG_BIT(NZ_ALG_VECTOR) | ALG_BIT(NZ_ALG_MERGE)},
        {NZ_PLAN_REORDER | NZ_PLAN_CACHE_HINTS, "reorder", "columns by degree (+hints) vs plain",
         ALG_BIT(NZ_ALG_VECTOR) | ALG_BIT(NZ_ALG_MERGE)},
        {NZ_PLAN_REORDER, "reorder", "columns by degree vs plain",
         ALG_BIT(NZ_ALG_ADAPTIVE) | ALG_BIT(NZ_ALG_ATOMIC)},
        {NZ_PLAN_COMPRESS_INDICES, "compressed", "16-bit column segments vs plain",
         ALG_BIT(NZ_ALG_VECTOR)},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        if (!(variants[v].algs & ALG_BIT(alg))) continue;
        const unsigned flags = variants[v].flags;
        double t = run_ours(g, rep, c, dA, alg, flags, dx, dy, host_y, runs, best_cusparse, base,
                            variants[v].label);
        if (t > 0 && default_seconds > 0)
            nzb_report_note(rep, "%s %s csr/%s: %s: %.1f us vs %.1f us (%.2fx)", c->name,
                            c->value_type == NZ_F32 ? "single" : "double", nz_alg_name(alg),
                            variants[v].meaning, t * 1e6, default_seconds * 1e6,
                            default_seconds / t);
    }
}

/* Tuning sweeps (scripts/tune-sweep.sh): NZ_BENCH_TUNE="alg:VAR=v+VAR=v;alg:VAR=v;..." runs
 * algorithm `alg` once more per entry with those tunables (nz_tunables_parse names, NZ_TUNE_*)
 * set on the context while its plan is made (the kernels read them at plan setup), as kernel
 * "csr/alg:VAR=v+..." without the NZ_TUNE_ prefixes; the context's tunables are restored
 * afterwards. Entries for other algorithms are skipped. */
static void run_tuned(nzb_gpu_t *g, nzb_report_t *rep, const nzb_case_t *c, const nz_matrix_t *dA,
                      nz_alg_t alg, void *dx, void *dy, void *host_y, int runs,
                      double best_cusparse, const nzb_result_t *base) {
    const char *spec = getenv("NZ_BENCH_TUNE");
    const char *name = nz_alg_name(alg);
    size_t name_len = strlen(name);
    nz_tunables_t saved, tuned;
    if (nz_context_get_tunables(g->ctx, &saved) != NZ_SUCCESS) return;
    while (spec != NULL && *spec != '\0') {
        char entry[256], label[NZB_NAME_SIZE];
        size_t len = strcspn(spec, ";"), num_vars = 0, used = 0;
        snprintf(entry, sizeof entry, "%.*s", (int)(len < sizeof entry ? len : sizeof entry - 1),
                 spec);
        spec += spec[len] == ';' ? len + 1 : len;
        if (strncmp(entry, name, name_len) != 0 || entry[name_len] != ':') continue;
        label[0] = '\0';
        tuned = saved;
        for (char *tok = strtok(entry + name_len + 1, "+"); tok != NULL && num_vars < 16;
             tok = strtok(NULL, "+")) {
            char *eq = strchr(tok, '=');
            if (eq == NULL) continue;
            (void)nz_tunables_parse(&tuned, tok); /* a value the library refuses stays auto */
            num_vars++;
            *eq = '\0';
            const char *shown = strncmp(tok, "NZ_TUNE_", 8) == 0 ? tok + 8 : tok;
            int n = snprintf(label + used, sizeof label - used, "%s%s=%s", used ? "+" : "", shown,
                             eq + 1);
            if (n > 0) used = used + (size_t)n < sizeof label ? used + (size_t)n : sizeof label - 1;
        }
        if (nz_context_set_tunables(g->ctx, &tuned) != NZ_SUCCESS) continue;
        run_ours(g, rep, c, dA, alg, 0, dx, dy, host_y, runs, best_cusparse, base, label);
        nz_context_set_tunables(g->ctx, &saved);
    }
}

/* Upload the case's matrix once (timed by the library: the transfer column), then cuSPARSE
 * ALG1 and ALG2 and every selected CUDA CSR algorithm on those same device arrays, x and y. */
int nzb_gpu_case(nzb_gpu_t *g, nzb_report_t *rep, const nzb_options_t *options,
                 const nzb_case_t *c, int runs, double copy_gbs) {
    nz_matrix_t *dA = NULL;
    void *dx = NULL, *dy = NULL, *host_y = NULL;
    nz_matrix_info_t info;
    nzb_result_t base;
    nz_status_t s;
    int failed = 0;
    size_t vs = c->value_type == NZ_F32 ? 4 : 8;

    nzb_result_init(&base, c, "csr/upload");
    base.bandwidth_gbs = copy_gbs;
    s = nz_matrix_to_device(g->ctx, &dA, c->A,
                            options->offset_bits == 64 ? NZ_I64 : NZ_I32);
    if (s == NZ_SUCCESS) s = nz_matrix_info(g->ctx, &info, dA);
    if (s == NZ_SUCCESS) s = nz_device_malloc(g->ctx, &dx, (size_t)info.cols * vs);
    if (s == NZ_SUCCESS) s = nz_device_malloc(g->ctx, &dy, (size_t)info.rows * vs);
    if (s == NZ_SUCCESS) s = nz_device_copy_from_host(g->ctx, dx, c->x, (size_t)info.cols * vs);
    if (s == NZ_SUCCESS && (host_y = malloc((size_t)info.rows * vs)) == NULL)
        s = NZ_ERR_OUT_OF_MEMORY;
    if (s != NZ_SUCCESS) {
        base.status = NZB_FAILED;
        const char *msg = nz_context_last_error(g->ctx);
        snprintf(base.note, sizeof base.note, "upload failed: %s",
                 msg[0] ? msg : nz_status_string(s));
        base.reason = s;
        nzb_report_row(rep, &base);
        failed = 1;
        goto cleanup;
    }
    base.transfer_seconds = info.transfer_seconds;
    base.bytes_min = nzb_min_bytes(info.rows, info.cols, info.nnz,
                                   info.offset_type == NZ_I32 ? 4 : 8, c->value_type);
    base.bytes_stored = info.bytes + (size_t)info.cols * vs + (size_t)info.rows * vs;
    base.resident = g->l2_bytes > 0 && base.bytes_min <= g->l2_bytes;

    {
        double best_cusparse = 0;
        for (int k = 0; k < 2; k++) {
            double t = run_cusparse(g, rep, c, dA, dx, dy, host_y, k, runs, &base);
            if (t > 0 && (best_cusparse == 0 || t < best_cusparse)) best_cusparse = t;
        }
        nz_format_t format;
        nz_alg_t alg;
        for (int index = 0; nz_spmv_list(&format, &alg, NZ_BACKEND_CUDA, index) == NZ_SUCCESS;
             index++) {
            if (format != NZ_FORMAT_CSR || !nzb_selected(options, format, alg)) continue;
            double t = run_ours(g, rep, c, dA, alg, 0, dx, dy, host_y, runs, best_cusparse,
                                &base, NULL);
            run_flag_variants(g, rep, c, dA, alg, t, dx, dy, host_y, runs, best_cusparse, &base);
            run_tuned(g, rep, c, dA, alg, dx, dy, host_y, runs, best_cusparse, &base);
        }
        /* The planner's choice (NZ_ALG_AUTO) on the same CSR arrays: the default plan (set-up
         * within ~20 products) and the plan for a caller that reuses it (NZ_PLAN_REUSE, as a
         * solver does), "csr/auto:reuse". */
        if (nzb_selected(options, NZ_FORMAT_CSR, NZ_ALG_AUTO)) {
            run_ours(g, rep, c, dA, NZ_ALG_AUTO, 0, dx, dy, host_y, runs, best_cusparse, &base,
                     NULL);
            run_ours(g, rep, c, dA, NZ_ALG_AUTO, NZ_PLAN_REUSE, dx, dy, host_y, runs,
                     best_cusparse, &base, "reuse");
        }
        /* The other device formats: converted on the host (default options; refusals for
         * padding are reported), uploaded once per format, every listed algorithm on it. */
        for (int f = 0; f < NZ_FORMAT_COUNT; f++) {
            if (f == NZ_FORMAT_CSR) continue;
            int wanted = 0;
            for (int index = 0; nz_spmv_list(&format, &alg, NZ_BACKEND_CUDA, index) == NZ_SUCCESS;
                 index++)
                if ((int)format == f && nzb_selected(options, format, alg)) wanted = 1;
            if (!wanted) continue;
            nz_matrix_t *hF = NULL, *dF = NULL;
            nz_matrix_info_t finfo;
            nzb_result_t fbase = base;
            s = nz_matrix_convert(g->ctx, &hF, c->A, (nz_format_t)f, NULL);
            if (s == NZ_SUCCESS) s = nz_matrix_to_device(g->ctx, &dF, hF, NZ_INDEX_AUTO);
            if (s == NZ_SUCCESS) s = nz_matrix_info(g->ctx, &finfo, dF);
            if (s != NZ_SUCCESS) {
                nzb_result_t r = base;
                snprintf(r.kernel, sizeof r.kernel, "%s/-", nz_format_name((nz_format_t)f));
                r.status = (s == NZ_ERR_TOO_MUCH_PADDING || s == NZ_ERR_UNSUPPORTED) ? NZB_REFUSED
                                                                                    : NZB_FAILED;
                const char *msg = nz_context_last_error(g->ctx);
                snprintf(r.note, sizeof r.note, "%s: %s",
                         r.status == NZB_REFUSED ? "refused" : "failed",
                         msg[0] ? msg : nz_status_string(s));
                r.reason = s;
                nzb_report_row(rep, &r);
                if (r.status == NZB_FAILED) failed = 1;
            } else {
                fbase.transfer_seconds = finfo.transfer_seconds;
                fbase.bytes_stored = finfo.bytes + (size_t)finfo.cols * vs + (size_t)finfo.rows * vs;
                for (int index = 0;
                     nz_spmv_list(&format, &alg, NZ_BACKEND_CUDA, index) == NZ_SUCCESS; index++)
                    if ((int)format == f && nzb_selected(options, format, alg))
                        run_ours(g, rep, c, dF, alg, 0, dx, dy, host_y, runs, best_cusparse,
                                 &fbase, NULL);
            }
            nz_matrix_destroy(&dF);
            nz_matrix_destroy(&hF);
        }
    }

cleanup:
    if (dx != NULL) nz_device_free(g->ctx, dx);
    if (dy != NULL) nz_device_free(g->ctx, dy);
    nz_matrix_destroy(&dA);
    free(host_y);
    return failed;
}
