/* bench_solve.c: the solver benchmark (`nz bench --solve`): GPU SpSV vs cuSPARSE, Krylov per iteration, time to solution. */
#include "bench_solve.h"

#ifdef NZ_HAVE_CUDA

#include "bench.h"
#include "bench_solve_internal.h"
#include "safe_output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Everything goes through the public nz_ API on device matrices, plus cuSPARSE in
 * bench_solve_cusparse.cu on the same device arrays. The context and the cuSPARSE handle share
 * one stream, so a pair of events around a call times that call. Every timed call has one
 * untimed run before it; the tables give medians.
 *
 * Part (a)'s factor rows use the triangles of the convection-diffusion matrix itself: the
 * IC(0) and ILU(0) factors have exactly that pattern (no fill), hence the same level sets and
 * the same work per solve, but the public API does not hand them out (nz_solve builds them
 * inside its preconditioner). Their values differ (e.g. ILU(0)'s L is unit lower triangular
 * with small multipliers); the stored diagonal of A is kept so both solves stay bounded.
 */

#define SOLVE_CONVDIFF_RESTART 30
#define SOLVE_TTS_RTOL 1e-8
#define SOLVE_TTS_MAX_ITERATIONS 10000
#define SOLVE_KRYLOV_MAX_RUNS 5
#define SOLVE_TOL_F64 1e-8  /* the brief's bound on the f64 difference between the solutions */
#define SOLVE_TOL_F32 1e-3  /* single precision: rounding of a solve ~3n levels deep */

typedef struct solve_run {
    nzb_solve_options_t o;
    FILE *out, *csv;
    nzu_output_t csv_out;
    nz_context_t *ctx;
    nzb_solve_gpu_t *gpu;
    int runs, krylov_runs;
    int failures, unsupported;
} solve_run_t;

/* Deterministic right-hand side in [0.5, 1.5) (the splitmix64 finaliser of i), so no entry of
 * the solution is near zero by construction and the relative difference means what it says. */
static double rhs_value(uint64_t i) {
    uint64_t z = i + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return 0.5 + (double)(z >> 11) * 0x1.0p-53;
}

static const char *status_word(nz_status_t s) {
    switch (s) {
    case NZ_SUCCESS: return "converged";
    case NZ_MAX_ITERATIONS: return "limit";
    case NZ_STAGNATED: return "stagnated";
    case NZ_ERR_BREAKDOWN: return "breakdown";
    case NZ_ERR_UNSUPPORTED: return "unsupported";
    default: return "FAILED";
    }
}

/* The CSV's one header for all three parts (empty fields where a part has no such column). */
static void csv_header(FILE *csv) {
    fprintf(csv, "part,matrix,precision,method,precond,rows,nnz,levels,nz_analysis_ms,nz_solve_us,"
                 "cusparse_analysis_ms,cusparse_solve_us,speedup,nz_spmv_us,max_rel_diff,"
                 "iterations,us_per_iteration,per_iteration_spmvs,setup_ms,solve_ms,"
                 "relative_residual,checked_relative_residual,status,note\n");
}

/* A note for the CSV: quotes doubled, line breaks flattened. */
static void csv_note(FILE *csv, const char *note) {
    fputc('"', csv);
    for (const char *p = note; *p; p++) {
        if (*p == '"') fputc('"', csv);
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, csv);
    }
    fputs("\"\n", csv);
}

/* ---- helpers on device arrays ------------------------------------------------------------- */

/* A device array of n values of vt filled by f(i) (or zeros when f is NULL). */
static nz_status_t device_vector(nz_context_t *ctx, void **d, int64_t n, nz_value_type_t vt,
                                 double (*f)(uint64_t)) {
    const size_t bytes = (size_t)(n > 0 ? n : 1) * nzb_value_size(vt);
    void *h = NULL;
    nz_status_t st = nz_device_malloc(ctx, d, bytes);
    if (st != NZ_SUCCESS) return st;
    if (f == NULL) return nz_device_memset(ctx, *d, 0, bytes);
    if ((st = nz_malloc(ctx, &h, bytes)) != NZ_SUCCESS) return st;
    for (int64_t i = 0; i < n; i++) nzb_value_set(h, vt, i, f((uint64_t)i));
    st = nz_device_copy_from_host(ctx, *d, h, bytes);
    nz_free(ctx, h);
    return st;
}

static double one_value(uint64_t i) {
    (void)i;
    return 1.0;
}

/* Median microseconds of `runs` SpMVs y = A x with plan (one untimed first); < 0 on error. */
static double time_spmv(solve_run_t *r, nz_spmv_plan_t *plan, const void *x, void *y, int runs) {
    double *times = malloc((size_t)runs * sizeof *times), us = -1;
    if (times == NULL || nz_spmv_execute(plan, 1.0, x, 0.0, y) != NZ_SUCCESS) goto done;
    for (int k = 0; k < runs; k++) {
        nzb_solve_gpu_start(r->gpu);
        if (nz_spmv_execute(plan, 1.0, x, 0.0, y) != NZ_SUCCESS) goto done;
        if ((times[k] = nzb_solve_gpu_stop(r->gpu)) < 0) goto done;
    }
    us = nzb_median(times, runs);
done:
    free(times);
    return us;
}

/* One SpMV of device matrix dA (the planner's plan, NZ_PLAN_REUSE as nz_solve makes it), median
 * microseconds; < 0 on error (the message is the context's). */
static double spmv_us(solve_run_t *r, const nz_matrix_t *dA, int64_t rows, nz_value_type_t vt) {
    nz_spmv_plan_t *plan = NULL;
    void *x = NULL, *y = NULL;
    double us = -1;
    if (device_vector(r->ctx, &x, rows, vt, rhs_value) != NZ_SUCCESS ||
        device_vector(r->ctx, &y, rows, vt, NULL) != NZ_SUCCESS ||
        nz_spmv_plan_create(r->ctx, &plan, dA, NZ_OP_N, NZ_ALG_AUTO, NZ_PLAN_REUSE) != NZ_SUCCESS)
        goto done;
    us = time_spmv(r, plan, x, y, r->runs);
done:
    nz_spmv_plan_destroy(&plan);
    if (x != NULL) nz_device_free(r->ctx, x);
    if (y != NULL) nz_device_free(r->ctx, y);
    return us;
}

/* ---- part (a): SpSV ------------------------------------------------------------------------ */

/* The `fill` triangle of host CSR A, diagonal included, as a new host CSR matrix. */
static nz_status_t triangle_of(nz_context_t *ctx, nz_matrix_t **T, const nz_matrix_t *A,
                               nz_fill_mode_t fill) {
    const int64_t *offsets;
    const int32_t *cols;
    const void *values;
    nz_matrix_info_t info;
    int64_t *t_off = NULL;
    int32_t *t_col = NULL;
    void *t_val = NULL;
    nz_status_t st;
    if ((st = nz_matrix_info(ctx, &info, A)) != NZ_SUCCESS ||
        (st = nz_matrix_csr_arrays(ctx, &offsets, &cols, &values, A)) != NZ_SUCCESS)
        return st;
    const size_t vs = nzb_value_size(info.value_type);
    const size_t nnz = (size_t)(info.nnz > 0 ? info.nnz : 1);
    const size_t offset_bytes = (size_t)(info.rows + 1) * sizeof *t_off;
    if ((st = nz_malloc(ctx, (void **)&t_off, offset_bytes)) != NZ_SUCCESS ||
        (st = nz_malloc(ctx, (void **)&t_col, nnz * sizeof *t_col)) != NZ_SUCCESS ||
        (st = nz_malloc(ctx, &t_val, nnz * vs)) != NZ_SUCCESS)
        goto cleanup;
    int64_t k = 0;
    t_off[0] = 0;
    for (int64_t i = 0; i < info.rows; i++) {
        for (int64_t p = offsets[i]; p < offsets[i + 1]; p++) {
            const int64_t j = cols[p];
            if (fill == NZ_LOWER ? j > i : j < i) continue;
            t_col[k] = cols[p];
            memcpy((char *)t_val + (size_t)k * vs, (const char *)values + (size_t)p * vs, vs);
            k++;
        }
        t_off[i + 1] = k;
    }
    st = nz_matrix_create_csr(ctx, T, info.rows, info.cols, NZ_I64, t_off, t_col,
                              info.value_type, t_val);
cleanup:
    nz_free(ctx, t_off);
    nz_free(ctx, t_col);
    nz_free(ctx, t_val);
    return st;
}

typedef struct spsv_row {
    char matrix[64];
    const char *precision;
    int64_t rows, nnz, levels;
    double nz_analysis_ms, nz_solve_us;     /* 0: did not run */
    double cu_analysis_ms, cu_solve_us;
    double spmv_us;
    double max_rel_diff;                    /* < 0: not compared */
    const char *check;                      /* "ok", "FAIL", "-" */
    char note[600];
} spsv_row_t;

static void spsv_print(solve_run_t *r, const spsv_row_t *w) {
    FILE *out = r->out;
    fprintf(out, "| %s | %s | %lld | %lld | ", w->matrix, w->precision ? w->precision : "-",
            (long long)w->rows, (long long)w->nnz);
    if (w->nz_solve_us > 0)
        fprintf(out, "%lld | %.2f | %.1f | ", (long long)w->levels, w->nz_analysis_ms,
                w->nz_solve_us);
    else
        fprintf(out, "- | - | - | ");
    if (w->cu_solve_us > 0)
        fprintf(out, "%.2f | %.1f | ", w->cu_analysis_ms, w->cu_solve_us);
    else
        fprintf(out, "- | - | ");
    if (w->nz_solve_us > 0 && w->cu_solve_us > 0)
        fprintf(out, "%.2fx | ", w->cu_solve_us / w->nz_solve_us);
    else
        fprintf(out, "- | ");
    if (w->spmv_us > 0)
        fprintf(out, "%.1f | ", w->spmv_us);
    else
        fprintf(out, "- | ");
    if (w->max_rel_diff >= 0)
        fprintf(out, "%.2e | ", w->max_rel_diff);
    else
        fprintf(out, "- | ");
    fprintf(out, "%s |%s%s\n", w->check, w->note[0] ? " " : "", w->note);
    if (r->csv != NULL) {
        char diff[32] = "";
        if (w->max_rel_diff >= 0) snprintf(diff, sizeof diff, "%.3e", w->max_rel_diff);
        fprintf(r->csv,
                "spsv,\"%s\",%s,,,%lld,%lld,%lld,%.4f,%.3f,%.4f,%.3f,%.4f,%.3f,%s,,,,,,,,%s,",
                w->matrix, w->precision ? w->precision : "", (long long)w->rows,
                (long long)w->nnz, (long long)w->levels, w->nz_analysis_ms, w->nz_solve_us,
                w->cu_analysis_ms, w->cu_solve_us,
                w->nz_solve_us > 0 && w->cu_solve_us > 0 ? w->cu_solve_us / w->nz_solve_us : 0.0,
                w->spmv_us, diff, w->check);
        csv_note(r->csv, w->note);
    }
}

/* max_i |a_i - b_i| / max_i |b_i| over n values of vt (host arrays). */
static double max_rel_diff(const void *a, const void *b, int64_t n, nz_value_type_t vt) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
        const double bi = nzb_value_get(b, vt, i), d = fabs(nzb_value_get(a, vt, i) - bi);
        if (d > diff || d != d) diff = d;
        if (fabs(bi) > scale) scale = fabs(bi);
    }
    return scale > 0 ? diff / scale : diff;
}

/* Nonzero's SpSV on device triangle dT: plan (levels, analysis), then one untimed and runs
 * timed solves. Fills the row's Nonzero columns; returns the status of the first failing call. */
static nz_status_t spsv_nonzero(solve_run_t *r, const nz_matrix_t *dT, nz_fill_mode_t fill,
                                const void *x, void *y, spsv_row_t *w) {
    nz_spsv_plan_t *plan = NULL;
    nz_spsv_plan_info_t info;
    double *times = malloc((size_t)r->runs * sizeof *times);
    nz_status_t st = NZ_ERR_OUT_OF_MEMORY;
    if (times == NULL) goto done;
    st = nz_spsv_plan_create(r->ctx, &plan, dT, NZ_OP_N, fill, NZ_NON_UNIT, 0);
    if (st != NZ_SUCCESS ||
        (st = nz_spsv_plan_info(plan, &info)) != NZ_SUCCESS ||
        (st = nz_spsv_execute(plan, 1.0, x, y)) != NZ_SUCCESS)
        goto done;
    for (int k = 0; k < r->runs; k++) {
        nzb_solve_gpu_start(r->gpu);
        if ((st = nz_spsv_execute(plan, 1.0, x, y)) != NZ_SUCCESS) goto done;
        if ((times[k] = nzb_solve_gpu_stop(r->gpu)) < 0) {
            st = NZ_ERR_DEVICE;
            nz_context_set_error(r->ctx, st, "CUDA event timing failed");
            goto done;
        }
    }
    w->levels = info.levels;
    w->nz_analysis_ms = 1e3 * info.analysis_seconds;
    w->nz_solve_us = nzb_median(times, r->runs);
done:
    free(times);
    nz_spsv_plan_destroy(&plan);
    return st;
}

/* One SpSV row: the triangle of host A on the device, Nonzero and cuSPARSE on the same right-hand
 * side, the SpMV of the same triangle, the two solutions compared. */
static void spsv_case(solve_run_t *r, const char *name, const nz_matrix_t *A, nz_fill_mode_t fill) {
    nz_context_t *ctx = r->ctx;
    nz_matrix_t *T = NULL, *dT = NULL;
    nz_matrix_info_t info;
    void *x = NULL, *y_nz = NULL, *y_cu = NULL, *h_nz = NULL, *h_cu = NULL;
    spsv_row_t w;
    nz_status_t st;
    char cu_note[300];
    memset(&w, 0, sizeof w);
    snprintf(w.matrix, sizeof w.matrix, "%s", name);
    w.max_rel_diff = -1;
    w.check = "-";
    if ((st = triangle_of(ctx, &T, A, fill)) != NZ_SUCCESS ||
        (st = nz_matrix_info(ctx, &info, T)) != NZ_SUCCESS ||
        (st = nz_matrix_to_device(ctx, &dT, T, NZ_I32)) != NZ_SUCCESS)
        goto fail;
    w.precision = info.value_type == NZ_F32 ? "f32" : "f64";
    w.rows = info.rows;
    w.nnz = info.nnz;
    const nz_value_type_t vt = info.value_type;
    const size_t bytes = (size_t)info.rows * nzb_value_size(vt);
    if ((st = device_vector(ctx, &x, info.rows, vt, rhs_value)) != NZ_SUCCESS ||
        (st = device_vector(ctx, &y_nz, info.rows, vt, NULL)) != NZ_SUCCESS ||
        (st = device_vector(ctx, &y_cu, info.rows, vt, NULL)) != NZ_SUCCESS ||
        (st = nz_malloc(ctx, &h_nz, bytes)) != NZ_SUCCESS ||
        (st = nz_malloc(ctx, &h_cu, bytes)) != NZ_SUCCESS)
        goto fail;

    st = spsv_nonzero(r, dT, fill, x, y_nz, &w);
    if (st == NZ_ERR_UNSUPPORTED) {
        snprintf(w.note, sizeof w.note, "Nonzero SpSV unsupported on the device: %s",
                 nz_context_last_error(ctx));
        r->unsupported++;
    } else if (st != NZ_SUCCESS) {
        snprintf(w.note, sizeof w.note, "Nonzero SpSV FAILED: %s: %s", nz_status_string(st),
                 nz_context_last_error(ctx));
        w.check = "FAIL";
        r->failures++;
    }
    if (nzb_solve_cusparse_spsv(r->gpu, ctx, dT, fill, x, y_cu, r->runs, &w.cu_analysis_ms,
                                &w.cu_solve_us, cu_note, sizeof cu_note) != 0) {
        size_t l = strlen(w.note);
        snprintf(w.note + l, sizeof w.note - l, "%s%s", l ? "; " : "", cu_note);
        w.cu_solve_us = 0;
    }
    w.spmv_us = spmv_us(r, dT, info.rows, vt);
    if (w.spmv_us < 0) {
        size_t l = strlen(w.note);
        snprintf(w.note + l, sizeof w.note - l, "%sSpMV: %s", l ? "; " : "",
                 nz_context_last_error(ctx));
        w.spmv_us = 0;
    }
    if (w.nz_solve_us > 0 && w.cu_solve_us > 0) {
        if ((st = nz_context_synchronize(ctx)) != NZ_SUCCESS ||
            (st = nz_device_copy_to_host(ctx, h_nz, y_nz, bytes)) != NZ_SUCCESS ||
            (st = nz_device_copy_to_host(ctx, h_cu, y_cu, bytes)) != NZ_SUCCESS)
            goto fail;
        w.max_rel_diff = max_rel_diff(h_nz, h_cu, info.rows, vt);
        const double tol = vt == NZ_F32 ? SOLVE_TOL_F32 : SOLVE_TOL_F64;
        if (w.max_rel_diff <= tol) {
            w.check = "ok";
        } else {
            w.check = "FAIL";
            r->failures++;
            fprintf(stderr, "nz bench --solve: %s %s: Nonzero and cuSPARSE solutions differ by "
                            "%.3e (> %.0e)\n", name, w.precision, w.max_rel_diff, tol);
        }
    }
    spsv_print(r, &w);
    goto cleanup;
fail:
    snprintf(w.note, sizeof w.note, "FAILED: %s: %s", nz_status_string(st),
             nz_context_last_error(ctx));
    w.check = "FAIL";
    r->failures++;
    spsv_print(r, &w);
cleanup:
    if (x != NULL) nz_device_free(ctx, x);
    if (y_nz != NULL) nz_device_free(ctx, y_nz);
    if (y_cu != NULL) nz_device_free(ctx, y_cu);
    nz_free(ctx, h_nz);
    nz_free(ctx, h_cu);
    nz_matrix_destroy(&dT);
    nz_matrix_destroy(&T);
}

/* The matrix of an SpSV or Krylov case: laplace (1) or convdiff3d (0), n^3, value type vt. */
static nz_status_t make_matrix(solve_run_t *r, nz_matrix_t **A, int laplace, int64_t n,
                               nz_value_type_t vt) {
    return laplace ? nz_gen_laplace3d(r->ctx, A, n, n, n, vt)
                   : nz_gen_convdiff3d(r->ctx, A, n, n, n, r->o.peclet, vt);
}

static void part_spsv(solve_run_t *r) {
    FILE *out = r->out;
    fprintf(out, "## (a) SpSV y = T^-1 x on the device: Nonzero (nz_spsv_plan) vs cuSPARSE SpSV "
                 "(ALG_DEFAULT)\n\n");
    fprintf(out, "T: tril of the 7-point Laplacian (the pattern of its IC(0) factor L); tril / "
                 "triu of convdiff3d (Peclet %g) standing in for its ILU(0) L and U factors -- "
                 "same pattern and level sets, not the factors' values (the public API does not "
                 "expose nz_solve's ILU(0)); stored diagonal used (non-unit). x in [0.5, 1.5); "
                 "%d runs after one untimed, CUDA events, median; analysis: Nonzero's "
                 "nz_spsv_plan_info, cuSPARSE's bufferSize + buffer allocation + analysis (host "
                 "clock). speedup = cuSPARSE us / Nonzero us; SpMV: Nonzero's nz_spmv_plan "
                 "(auto) on the same triangle; diff = max|y_nz - y_cusparse| / max|y_cusparse| "
                 "(FAIL above %.0e f64, %.0e f32).\n\n",
            r->o.peclet, r->runs, SOLVE_TOL_F64, SOLVE_TOL_F32);
    fprintf(out, "| matrix | prec | rows | nnz | levels | nz analysis ms | nz solve us | "
                 "cusparse analysis ms | cusparse solve us | speedup | nz SpMV us | max rel diff "
                 "| check |\n");
    fprintf(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (int p = 0; p < 2; p++) {
        const nz_value_type_t vt = p == 0 ? NZ_F64 : NZ_F32;
        if ((vt == NZ_F64 && !r->o.dbl) || (vt == NZ_F32 && !r->o.single)) continue;
        for (int s = 0; s < r->o.num_sizes; s++) {
            const int64_t n = r->o.sizes[s];
            for (int laplace = 1; laplace >= 0; laplace--) {
                nz_matrix_t *A = NULL;
                char name[64];
                nz_status_t st = make_matrix(r, &A, laplace, n, vt);
                if (st != NZ_SUCCESS) {
                    fprintf(out, "| %s %lld^3 | %s | FAILED to generate: %s |\n",
                            laplace ? "laplace3d" : "convdiff3d", (long long)n,
                            vt == NZ_F32 ? "f32" : "f64", nz_context_last_error(r->ctx));
                    r->failures++;
                    continue;
                }
                if (laplace) {
                    snprintf(name, sizeof name, "laplace3d %lld^3 L (IC0 pattern)", (long long)n);
                    spsv_case(r, name, A, NZ_LOWER);
                } else {
                    snprintf(name, sizeof name, "convdiff3d %lld^3 L (ILU0 pattern)", (long long)n);
                    spsv_case(r, name, A, NZ_LOWER);
                    snprintf(name, sizeof name, "convdiff3d %lld^3 U (ILU0 pattern)", (long long)n);
                    spsv_case(r, name, A, NZ_UPPER);
                }
                nz_matrix_destroy(&A);
            }
        }
    }
    fprintf(out, "\n");
}

/* ---- parts (b) and (c): nz_solve on the device ---------------------------------------------- */

typedef struct krylov_case {
    nz_matrix_t *dA;
    void *b, *x, *r;        /* device: right-hand side (ones), iterate, residual scratch */
    int64_t rows, nnz;
    double spmv_us;
    nz_spmv_plan_t *plan;   /* for the independent residual check */
} krylov_case_t;

static void krylov_case_free(solve_run_t *r, krylov_case_t *k) {
    nz_spmv_plan_destroy(&k->plan);
    if (k->b != NULL) nz_device_free(r->ctx, k->b);
    if (k->x != NULL) nz_device_free(r->ctx, k->x);
    if (k->r != NULL) nz_device_free(r->ctx, k->r);
    nz_matrix_destroy(&k->dA);
    memset(k, 0, sizeof *k);
}

/* convdiff3d n^3 (f64) on the device with b = ones, x and a residual buffer; its SpMV timed. */
static nz_status_t krylov_case_make(solve_run_t *r, krylov_case_t *k, int64_t n) {
    nz_matrix_t *A = NULL;
    nz_matrix_info_t info;
    nz_status_t st;
    memset(k, 0, sizeof *k);
    if ((st = make_matrix(r, &A, 0, n, NZ_F64)) != NZ_SUCCESS ||
        (st = nz_matrix_info(r->ctx, &info, A)) != NZ_SUCCESS ||
        (st = nz_matrix_to_device(r->ctx, &k->dA, A, NZ_INDEX_AUTO)) != NZ_SUCCESS)
        goto done;
    k->rows = info.rows;
    k->nnz = info.nnz;
    if ((st = device_vector(r->ctx, &k->b, k->rows, NZ_F64, one_value)) != NZ_SUCCESS ||
        (st = device_vector(r->ctx, &k->x, k->rows, NZ_F64, NULL)) != NZ_SUCCESS ||
        (st = device_vector(r->ctx, &k->r, k->rows, NZ_F64, NULL)) != NZ_SUCCESS ||
        (st = nz_spmv_plan_create(r->ctx, &k->plan, k->dA, NZ_OP_N, NZ_ALG_AUTO, NZ_PLAN_REUSE)) !=
            NZ_SUCCESS)
        goto done;
    k->spmv_us = time_spmv(r, k->plan, k->b, k->r, r->runs);
    if (k->spmv_us < 0) st = NZ_ERR_DEVICE;
done:
    nz_matrix_destroy(&A);
    if (st != NZ_SUCCESS) krylov_case_free(r, k);
    return st;
}

/* ||b - A x|| / ||b|| for the case's device x, by our own SpMV and host norms (checks the
 * relative_residual nz_solve reports). NaN on error. */
static double checked_residual(solve_run_t *r, krylov_case_t *k) {
    const size_t bytes = (size_t)k->rows * sizeof(double);
    double *h = NULL, rr = 0;
    if (nz_device_copy(r->ctx, k->r, k->b, bytes) != NZ_SUCCESS ||
        nz_spmv_execute(k->plan, -1.0, k->x, 1.0, k->r) != NZ_SUCCESS ||
        nz_malloc(r->ctx, (void **)&h, bytes) != NZ_SUCCESS ||
        nz_device_copy_to_host(r->ctx, h, k->r, bytes) != NZ_SUCCESS) {
        nz_free(r->ctx, h);
        return NAN;
    }
    for (int64_t i = 0; i < k->rows; i++) rr += h[i] * h[i];
    nz_free(r->ctx, h);
    return sqrt(rr) / sqrt((double)k->rows); /* ||b|| = sqrt(n) for b = ones */
}

/* One nz_solve from x = 0; the wall time of the call by events in *call_ms. */
static nz_status_t krylov_solve(solve_run_t *r, krylov_case_t *k, const nz_solve_options_t *opt,
                                nz_solve_result_t *res, double *call_ms) {
    nz_status_t st = nz_device_memset(r->ctx, k->x, 0, (size_t)k->rows * sizeof(double));
    if (st != NZ_SUCCESS) return st;
    memset(res, 0, sizeof *res);
    nzb_solve_gpu_start(r->gpu);
    st = nz_solve(r->ctx, k->dA, k->b, k->x, opt, res);
    *call_ms = 1e-3 * nzb_solve_gpu_stop(r->gpu);
    return st;
}

static const nz_method_t krylov_methods[2] = {NZ_METHOD_BICGSTAB, NZ_METHOD_GMRES};

static const char *method_label(nz_method_t m) {
    return m == NZ_METHOD_GMRES ? "gmres(30)" : nz_method_name(m);
}

/* Part (b) for one size: each method with a fixed iteration count, median over runs. */
static void per_iteration_case(solve_run_t *r, krylov_case_t *k, int64_t n) {
    FILE *out = r->out;
    for (int m = 0; m < 2; m++) {
        nz_solve_options_t opt;
        nz_solve_result_t res;
        double per_it[SOLVE_KRYLOV_MAX_RUNS], call[SOLVE_KRYLOV_MAX_RUNS], call_ms = 0;
        int64_t iterations = 0;
        nz_status_t st;
        memset(&opt, 0, sizeof opt);
        opt.method = krylov_methods[m];
        opt.rtol = 1e-300; /* never met: the whole fixed count runs */
        opt.max_iterations = r->o.krylov_iterations;
        opt.restart = SOLVE_CONVDIFF_RESTART;
        opt.precond = NZ_PRECOND_NONE;
        st = krylov_solve(r, k, &opt, &res, &call_ms); /* warm-up */
        for (int run = 0; run < r->krylov_runs && st >= 0; run++) {
            st = krylov_solve(r, k, &opt, &res, &call_ms);
            iterations = res.iterations;
            per_it[run] = res.iterations > 0 ? 1e6 * res.solve_seconds / (double)res.iterations : 0;
            call[run] = call_ms;
        }
        char prob[64];
        snprintf(prob, sizeof prob, "convdiff3d %lld^3", (long long)n);
        if (st < 0) {
            const int unsupported = st == NZ_ERR_UNSUPPORTED;
            fprintf(out, "| %s | %s | %lld | %lld | - | - | %.1f | - | - | %s: %s |\n", prob,
                    method_label(opt.method), (long long)k->rows, (long long)k->nnz, k->spmv_us,
                    unsupported ? "unsupported on the device" : "FAILED",
                    nz_context_last_error(r->ctx));
            if (unsupported)
                r->unsupported++;
            else
                r->failures++;
            if (r->csv != NULL) {
                fprintf(r->csv, "krylov,\"%s\",f64,%s,none,%lld,%lld,,,,,,,%.3f,,,,,,,,,%s,", prob,
                        method_label(opt.method), (long long)k->rows, (long long)k->nnz,
                        k->spmv_us, status_word(st));
                csv_note(r->csv, nz_context_last_error(r->ctx));
            }
            continue;
        }
        const double us = nzb_median(per_it, r->krylov_runs);
        const double ms = nzb_median(call, r->krylov_runs);
        /* limit is the expected end (rtol is never met); anything else is worth a look */
        const char *word = st == NZ_MAX_ITERATIONS ? "limit (expected)" : status_word(st);
        fprintf(out, "| %s | %s | %lld | %lld | %lld | %.1f | %.1f | %.2f | %.2f | %s |\n", prob,
                method_label(opt.method), (long long)k->rows, (long long)k->nnz,
                (long long)iterations, us, k->spmv_us, k->spmv_us > 0 ? us / k->spmv_us : 0.0, ms,
                word);
        if (r->csv != NULL) {
            fprintf(r->csv, "krylov,\"%s\",f64,%s,none,%lld,%lld,,,,,,,%.3f,,%lld,%.3f,%.3f,,%.3f,"
                            "%.3e,,%s,", prob, method_label(opt.method), (long long)k->rows,
                    (long long)k->nnz, k->spmv_us, (long long)iterations, us,
                    k->spmv_us > 0 ? us / k->spmv_us : 0.0, ms, res.relative_residual,
                    status_word(st));
            csv_note(r->csv, "");
        }
    }
}

/* Part (c): ILU(0)-preconditioned solves to rtol 1e-8, one run after the warm-up of part (b):
 * exact triangular solves and NZ_SPSV_JACOBI sweeps (nz_solve_options_t.precond_sweeps). */
static const int tts_sweeps[] = {0, 2, 3};
static void time_to_solution(solve_run_t *r, krylov_case_t *k, int64_t n) {
    FILE *out = r->out;
    char prob[64];
    snprintf(prob, sizeof prob, "convdiff3d %lld^3", (long long)n);
    for (int c = 0; c < 2 * (int)(sizeof tts_sweeps / sizeof tts_sweeps[0]); c++) {
        const int m = c % 2, sweeps = tts_sweeps[c / 2];
        char pre[32];
        if (sweeps > 0)
            snprintf(pre, sizeof pre, "ilu0, %d sweeps", sweeps);
        else
            snprintf(pre, sizeof pre, "ilu0");
        nz_solve_options_t opt;
        nz_solve_result_t res;
        double call_ms = 0;
        memset(&opt, 0, sizeof opt);
        opt.method = krylov_methods[m];
        opt.rtol = SOLVE_TTS_RTOL;
        opt.max_iterations = SOLVE_TTS_MAX_ITERATIONS;
        opt.restart = SOLVE_CONVDIFF_RESTART;
        opt.precond = NZ_PRECOND_ILU0;
        opt.precond_sweeps = sweeps;
        nz_status_t st = krylov_solve(r, k, &opt, &res, &call_ms);
        if (st < 0 && st != NZ_ERR_BREAKDOWN) {
            const int unsupported = st == NZ_ERR_UNSUPPORTED;
            fprintf(out, "| %s | %s | %s | - | - | - | - | - | - | %s: %s |\n", prob,
                    method_label(opt.method), pre,
                    unsupported ? "unsupported on the device" : "FAILED",
                    nz_context_last_error(r->ctx));
            if (unsupported)
                r->unsupported++;
            else
                r->failures++;
            if (r->csv != NULL) {
                fprintf(r->csv, "solve,\"%s\",f64,%s,\"%s\",%lld,%lld,,,,,,,,,,,,,,,,%s,", prob,
                        method_label(opt.method), pre, (long long)k->rows, (long long)k->nnz,
                        status_word(st));
                csv_note(r->csv, nz_context_last_error(r->ctx));
            }
            continue;
        }
        const double checked = checked_residual(r, k);
        /* the reported true residual must agree with ours (both meet rtol or neither) */
        const int agree = checked == checked &&
                          fabs(checked - res.relative_residual) <=
                              1e-2 * fmax(checked, res.relative_residual) + 1e-14;
        if (st != NZ_SUCCESS || !agree) r->failures++;
        fprintf(out, "| %s | %s | %s | %.2f | %.2f | %.2f | %lld | %.3e | %.3e | %s%s |\n", prob,
                method_label(opt.method), pre, 1e3 * res.setup_seconds, 1e3 * res.solve_seconds,
                call_ms, (long long)res.iterations, res.relative_residual, checked,
                status_word(st), agree ? "" : " (residual check DISAGREES)");
        if (r->csv != NULL) {
            fprintf(r->csv, "solve,\"%s\",f64,%s,\"%s\",%lld,%lld,,,,,,,%.3f,,%lld,,,%.3f,%.3f,"
                            "%.3e,%.3e,%s,", prob, method_label(opt.method), pre,
                    (long long)k->rows, (long long)k->nnz, k->spmv_us, (long long)res.iterations,
                    1e3 * res.setup_seconds, 1e3 * res.solve_seconds, res.relative_residual,
                    checked, status_word(st));
            char note[64];
            snprintf(note, sizeof note, "precond_shift %g, attempts %d, restarts %lld",
                     res.precond_shift, res.precond_attempts, (long long)res.restarts);
            csv_note(r->csv, note);
        }
        nz_free(r->ctx, res.history);
    }
}

static void part_krylov(solve_run_t *r) {
    FILE *out = r->out;
    fprintf(out, "## (b) Krylov cost per iteration on the device: nz_solve, f64, no "
                 "preconditioner, %d iterations (rtol 1e-300: never met), b = ones, x0 = 0\n\n",
            r->o.krylov_iterations);
    fprintf(out, "us/iter = solve_seconds / iterations of nz_solve_result_t (initial and final "
                 "true residuals included), median of %d runs after one untimed; SpMV: one "
                 "nz_spmv_plan (auto, NZ_PLAN_REUSE) product with the same matrix, median of %d; "
                 "BiCGSTAB does 2 SpMVs per iteration, GMRES 1 plus the CGS2 orthogonalisation; "
                 "call ms: CUDA events around the whole nz_solve call (setup included).\n\n",
            r->krylov_runs, r->runs);
    fprintf(out, "| matrix | method | rows | nnz | iterations | us/iter | SpMV us | iter/SpMV | "
                 "call ms | status |\n");
    fprintf(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    krylov_case_t first;
    int have_first = 0;
    memset(&first, 0, sizeof first);
    for (int s = 0; s < r->o.num_sizes; s++) {
        krylov_case_t k;
        const int64_t n = r->o.sizes[s];
        nz_status_t st = krylov_case_make(r, &k, n);
        if (st != NZ_SUCCESS) {
            fprintf(out, "| convdiff3d %lld^3 | - | FAILED to set up: %s: %s |\n", (long long)n,
                    nz_status_string(st), nz_context_last_error(r->ctx));
            r->failures++;
            continue;
        }
        per_iteration_case(r, &k, n);
        if (s == 0) {
            first = k;
            have_first = 1;
        } else {
            krylov_case_free(r, &k);
        }
    }
    fprintf(out, "\n## (c) Time to solution on the device: ILU(0)-preconditioned, rtol %.0e, "
                 "f64, b = ones, x0 = 0, one run; \"k sweeps\": each triangular solve of the "
                 "preconditioner is k Jacobi sweeps (NZ_SPSV_JACOBI(k)) instead of the exact "
                 "solve\n\n", SOLVE_TTS_RTOL);
    fprintf(out, "setup: nz_solve's plan, workspace and ILU(0) factorisation; solve: its "
                 "iterations; call: CUDA events around the call; rel. residual: the true one "
                 "nz_solve reports; checked: ||b - A x|| / ||b|| recomputed here with our own "
                 "SpMV.\n\n");
    fprintf(out, "| matrix | method | precond | setup ms | solve ms | call ms | iterations | "
                 "rel. residual | checked | status |\n");
    fprintf(out, "|---|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    if (have_first) {
        time_to_solution(r, &first, r->o.sizes[0]);
        krylov_case_free(r, &first);
    } else {
        fprintf(out, "| convdiff3d %lld^3 | - | - | not run: its matrix could not be set up |\n",
                (long long)r->o.sizes[0]);
    }
    fprintf(out, "\n");
}

int nzb_bench_solve(const nzb_solve_options_t *options) {
    solve_run_t run;
    solve_run_t *r = &run;
    char msg[512];
    int exit_status = 1;
    memset(r, 0, sizeof *r);
    if (options != NULL) r->o = *options;
    r->out = r->o.out != NULL ? r->o.out : stdout;
    if (r->o.num_sizes <= 0) {
        r->o.num_sizes = 2;
        r->o.sizes[0] = r->o.quick ? 32 : 128;
        r->o.sizes[1] = r->o.quick ? 48 : 200;
    }
    if (r->o.num_sizes > NZB_SOLVE_MAX_SIZES) r->o.num_sizes = NZB_SOLVE_MAX_SIZES;
    if (!r->o.single && !r->o.dbl) r->o.single = r->o.dbl = 1;
    if (r->o.peclet <= 0) r->o.peclet = 1.0;
    if (r->o.krylov_iterations <= 0) r->o.krylov_iterations = 50;
    r->runs = r->o.runs > 0 ? r->o.runs : 20;
    r->krylov_runs = r->runs < SOLVE_KRYLOV_MAX_RUNS ? r->runs : SOLVE_KRYLOV_MAX_RUNS;

    if (nz_device_count() == 0) {
        fprintf(stderr, "nz bench: --solve: no CUDA device (the SpSV and Krylov benchmarks run "
                        "on the GPU only)\n");
        return 1;
    }
    if (nz_context_create(&r->ctx) != NZ_SUCCESS) {
        fprintf(stderr, "nz bench: --solve: cannot create a context\n");
        return 1;
    }
    if (r->o.tunables != NULL) nz_context_set_tunables(r->ctx, r->o.tunables);
    if (nzb_solve_gpu_open(&r->gpu, r->ctx, msg, sizeof msg) != 0) {
        fprintf(stderr, "nz bench: --solve: cannot set up the device: %s\n", msg);
        goto cleanup;
    }
    if (r->o.csv_path != NULL) {
        if ((r->csv = nzu_output_fopen(&r->csv_out, r->o.csv_path)) == NULL) {
            fprintf(stderr, "nz bench: cannot write %s\n", r->o.csv_path);
            goto cleanup;
        }
        csv_header(r->csv);
    }
    fprintf(r->out, "# nz bench --solve: %s; CUDA events on one stream shared by Nonzero and "
                    "cuSPARSE\n\n", nz_context_device_name(r->ctx));
    part_spsv(r);
    part_krylov(r);
    if (r->unsupported > 0)
        fprintf(r->out, "%d row(s): unsupported on the device (NZ_ERR_UNSUPPORTED): not a "
                        "failure\n", r->unsupported);
    fprintf(r->out, "%s\n", r->failures > 0 ? "solve benchmark: FAILURES above"
                                            : "solve benchmark: every result checked");
    exit_status = r->failures > 0 ? 1 : 0;

cleanup:
    if (r->csv != NULL && nzu_output_fclose(&r->csv_out, r->csv) != 0) {
        fprintf(stderr, "nz bench: cannot write %s\n", r->o.csv_path);
        exit_status = 1;
    }
    nz_context_destroy(&r->ctx);
    nzb_solve_gpu_close(&r->gpu);
    return exit_status;
}

#else

/* Without CUDA `nz bench --solve` is refused by the command line; nothing here. */
typedef int nzb_solve_no_cuda_t;

#endif /* NZ_HAVE_CUDA */
