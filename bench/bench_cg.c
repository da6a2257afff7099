/* bench_cg.c: the CG benchmark: the Q1 FE showcase per size, backend and format, and the CuPy case. */
#include "bench_cg.h"

#include "bench.h"
#include "safe_output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* bench/cupy_cg.py times CuPy's cg on the same problem in the same run (same device); its path
 * comes from the build (NZB_SOURCE_DIR) unless NZ_CUPY_CG_SCRIPT names another, and the
 * interpreter is NZ_PYTHON or python3. */
#ifndef NZB_SOURCE_DIR
#define NZB_SOURCE_DIR "."
#endif

/* CuPy's cg, us per iteration, for the 7-point Laplacian m^3 and `iterations` iterations: > 0
 * measured; 0 not available (why says so). */
static double cupy_cg_us(int64_t m, int iterations, char *why, size_t why_size) {
    const char *script = getenv("NZ_CUPY_CG_SCRIPT");
    const char *python = getenv("NZ_PYTHON");
    char command[1024], line[512], path[768];
    double us = 0;
    if (script == NULL) {
        snprintf(path, sizeof path, "%s/bench/cupy_cg.py", NZB_SOURCE_DIR);
        script = path;
    }
    if (access(script, R_OK) != 0) {
        snprintf(why, why_size, "%.200s not found (set NZ_CUPY_CG_SCRIPT)", script);
        return 0;
    }
    snprintf(command, sizeof command, "'%s' '%s' %lld %d 3 2>&1", python ? python : "python3",
             script, (long long)m, iterations);
    FILE *p = popen(command, "r");
    if (p == NULL) {
        snprintf(why, why_size, "cannot run %.200s", command);
        return 0;
    }
    snprintf(why, why_size, "no output from %.200s", script);
    while (fgets(line, sizeof line, p) != NULL) {
        const char *at = strstr(line, "us_per_iteration=");
        if (at != NULL)
            us = atof(at + strlen("us_per_iteration="));
        else
            snprintf(why, why_size, "%.*s", (int)(strcspn(line, "\n") < 200 ? strcspn(line, "\n") : 200), line);
    }
    int rc = pclose(p);
    if (rc != 0 || !(us > 0)) return 0;
    return us;
}

typedef struct cg_row {
    int64_t N, n, nnz;
    const char *backend;
    nz_format_t format;
    nz_alg_t alg;
    const char *status;
    int64_t iterations;
    double us_per_iteration, mups, spmv_us, floor_us;
    double transfer_ms, host_assembly_ms, device_assembly_ms;
    double l2_error;
    int graph;
} cg_row_t;

/* Deterministic start in [-1, 1) (the splitmix64 finaliser of i; the same as `nz cg`). */
static double hash_unit(uint64_t i) {
    uint64_t z = i + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return 2.0 * (double)(z >> 11) * 0x1.0p-53 - 1.0;
}

static void print_header(FILE *out) {
    fprintf(out, "| problem | backend | format | alg | unknowns | status | iter | us/iter | MUPS | "
                 "SpMV us | floor us | /floor | H2D ms | H2D/SpMV | host asm ms | GPU asm ms | "
                 "L2 error |\n");
    fprintf(out, "|---|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

static void print_row(FILE *out, FILE *csv, const char *problem, const cg_row_t *r) {
    fprintf(out, "| %s | %s | %s | %s%s | %lld | %s | %lld | %.1f | %.1f | %.1f | %.1f | %.2f | ",
            problem, r->backend, nz_format_name(r->format), nz_alg_name(r->alg),
            r->graph ? "+graph" : "", (long long)r->n, r->status, (long long)r->iterations,
            r->us_per_iteration, r->mups, r->spmv_us, r->floor_us,
            r->floor_us > 0 ? r->us_per_iteration / r->floor_us : 0.0);
    if (r->transfer_ms > 0)
        fprintf(out, "%.2f | %.1f | ", r->transfer_ms,
                r->spmv_us > 0 ? 1e3 * r->transfer_ms / r->spmv_us : 0.0);
    else
        fprintf(out, "- | - | ");
    fprintf(out, "%.2f | ", r->host_assembly_ms);
    if (r->device_assembly_ms > 0)
        fprintf(out, "%.2f | ", r->device_assembly_ms);
    else
        fprintf(out, "- | ");
    if (r->l2_error > 0)
        fprintf(out, "%.4e |\n", r->l2_error);
    else
        fprintf(out, "- |\n");
    if (csv != NULL)
        fprintf(csv, "%s,%s,%s,%s,%d,%lld,%lld,%s,%lld,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%.6e\n",
                problem, r->backend, nz_format_name(r->format), nz_alg_name(r->alg), r->graph,
                (long long)r->n, (long long)r->nnz, r->status, (long long)r->iterations,
                r->us_per_iteration, r->mups, r->spmv_us, r->floor_us, r->transfer_ms,
                r->host_assembly_ms, r->device_assembly_ms, r->l2_error);
}

/* Device-to-device copy bandwidth (read + write bytes / time), median of 5 copies of 256 MB. */
static double gpu_copy_gbs(nz_context_t *ctx) {
    const size_t bytes = (size_t)256 << 20;
    void *a = NULL, *b = NULL;
    double times[5], gbs = 0;
    if (nz_device_malloc(ctx, &a, bytes) != NZ_SUCCESS || nz_device_malloc(ctx, &b, bytes) != NZ_SUCCESS)
        goto done;
    if (nz_device_memset(ctx, a, 0, bytes) != NZ_SUCCESS) goto done;
    for (int k = 0; k < 5; k++) {
        nz_context_synchronize(ctx);
        double t0 = nzb_wtime();
        if (nz_device_copy(ctx, b, a, bytes) != NZ_SUCCESS) goto done;
        nz_context_synchronize(ctx);
        times[k] = nzb_wtime() - t0;
    }
    gbs = 2.0 * (double)bytes / nzb_median(times, 5) / 1e9;
done:
    if (a != NULL) nz_device_free(ctx, a);
    if (b != NULL) nz_device_free(ctx, b);
    return gbs;
}

/* "ok" only when the true residual met the tolerance (nz_cg_solve); the caveats by name */
static const char *status_name(nz_status_t s) {
    return s == NZ_SUCCESS ? "ok" : s == NZ_MAX_ITERATIONS ? "limit"
                                  : s == NZ_STAGNATED      ? "stagnated"
                                                           : "FAILED";
}

/* The row's solve columns from CG's result (r->n set): MUPS = unknowns x iterations / solve time. */
static void row_from_result(cg_row_t *r, const nz_matrix_info_t *mi, nz_status_t st,
                            const nz_cg_result_t *res) {
    r->nnz = mi->nnz;
    r->format = res->format;
    r->alg = res->alg;
    r->graph = res->used_graph;
    r->status = status_name(st);
    r->iterations = res->iterations;
    r->us_per_iteration = 1e6 * res->seconds_per_iteration;
    r->mups = res->solve_seconds > 0
                  ? (double)r->n * (double)res->iterations / res->solve_seconds / 1e6
                  : 0;
    r->spmv_us = 1e6 * res->spmv_seconds;
}

/* One FE run. Returns 0, 1 (failed) or 2 (refused: format not available; a note is printed). */
static int fe_case(nz_context_t *ctx, const nzb_cg_options_t *o, int64_t N, int gpu,
                   nz_format_t format, double copy_gbs, FILE *out, FILE *csv) {
    const nz_value_type_t vt = o->single ? NZ_F32 : NZ_F64;
    const size_t vs = nzb_value_size(vt);
    nz_matrix_t *A = NULL, *S = NULL, *dA = NULL, *gA = NULL;
    void *b = NULL, *u = NULL, *x = NULL, *db = NULL, *dx = NULL;
    cg_row_t r;
    int rc = 1;
    nz_status_t st;
    memset(&r, 0, sizeof r);
    r.N = N;
    r.n = (N - 1) * (N - 1) * (N - 1);
    r.backend = gpu ? "gpu" : "cpu";
    r.format = format;
    const int64_t n = r.n;
    char problem[64];
    snprintf(problem, sizeof problem, "fe3d %lld", (long long)N);

    double t0 = nzb_wtime();
    if ((st = nz_gen_fe3d(ctx, &A, &b, &u, N, vt)) != NZ_SUCCESS) goto fail;
    r.host_assembly_ms = 1e3 * (nzb_wtime() - t0);
    const nz_matrix_t *M = A;
    if (format != NZ_FORMAT_CSR) {
        nz_format_options_t fo;
        memset(&fo, 0, sizeof fo);
        fo.sell_chunk = gpu ? 32 : 8;
        if ((st = nz_matrix_convert(ctx, &S, A, format, &fo)) != NZ_SUCCESS) goto refused;
        M = S;
    }
    if ((st = nz_malloc(ctx, &x, (size_t)n * vs)) != NZ_SUCCESS) goto fail;
    for (int64_t i = 0; i < n; i++) nzb_value_set(x, vt, i, hash_unit((uint64_t)i));
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = o->rtol;
    opt.precond = o->precond;
    opt.use_graph = o->use_graph;
    opt.keep_format = 1; /* the showcase times each format as named */
    nz_cg_result_t res;
    memset(&res, 0, sizeof res);
    if (gpu) {
        if ((st = nz_matrix_to_device(ctx, &dA, M, NZ_INDEX_AUTO)) != NZ_SUCCESS) {
            if (st == NZ_ERR_UNSUPPORTED) goto refused;
            goto fail;
        }
        if ((st = nz_device_malloc(ctx, &db, (size_t)n * vs)) != NZ_SUCCESS ||
            (st = nz_device_malloc(ctx, &dx, (size_t)n * vs)) != NZ_SUCCESS)
            goto fail;
        t0 = nzb_wtime();
        if ((st = nz_device_copy_from_host(ctx, db, b, (size_t)n * vs)) != NZ_SUCCESS) goto fail;
        nz_matrix_info_t di;
        nz_matrix_info(ctx, &di, dA);
        r.transfer_ms = 1e3 * (di.transfer_seconds + nzb_wtime() - t0);
        if (format == NZ_FORMAT_CSR) {
            void *gb = NULL, *gu = NULL;
            t0 = nzb_wtime();
            if ((st = nz_gen_fe3d_device(ctx, &gA, &gb, &gu, N, vt)) != NZ_SUCCESS) goto fail;
            r.device_assembly_ms = 1e3 * (nzb_wtime() - t0);
            nz_device_free(ctx, gb);
            nz_device_free(ctx, gu);
            nz_matrix_destroy(&gA);
        }
        if ((st = nz_device_copy_from_host(ctx, dx, x, (size_t)n * vs)) != NZ_SUCCESS) goto fail;
        st = nz_cg_solve(ctx, dA, db, dx, &opt, &res);
        if (st >= 0 && nz_device_copy_to_host(ctx, x, dx, (size_t)n * vs) != NZ_SUCCESS) st = NZ_ERR_DEVICE;
    } else {
        st = nz_cg_solve(ctx, M, b, x, &opt, &res);
    }
    if (st == NZ_ERR_UNSUPPORTED) goto refused;
    if (st < 0) goto fail;
    nz_matrix_info_t mi;
    nz_matrix_info(ctx, &mi, gpu ? dA : M);
    row_from_result(&r, &mi, st, &res);
    {
        double vectors = (o->precond == NZ_PRECOND_JACOBI ? 12.0 : 10.0) * (double)n * (double)vs;
        double spmv = (double)mi.bytes + 2.0 * (double)n * (double)vs;
        r.floor_us = copy_gbs > 0 ? 1e6 * (spmv + vectors) / (copy_gbs * 1e9) : 0;
    }
    {
        double e = 0, h = 1.0 / (double)N;
        for (int64_t i = 0; i < n; i++) {
            double d = nzb_value_get(x, vt, i) - nzb_value_get(u, vt, i);
            e += d * d;
        }
        r.l2_error = sqrt(e) * pow(h, 1.5);
    }
    print_row(out, csv, problem, &r);
    rc = st == NZ_SUCCESS ? 0 : 1;
    goto cleanup;
refused:
    fprintf(out, "| %s | %s | %s | - | %lld | skipped: %s |\n", problem, r.backend,
            nz_format_name(format), (long long)n, nz_context_last_error(ctx));
    rc = 2;
    goto cleanup;
fail:
    fprintf(out, "| %s | %s | %s | - | %lld | FAILED: %s |\n", problem, r.backend,
            nz_format_name(format), (long long)n, nz_context_last_error(ctx));
    rc = 1;
cleanup:
    if (db != NULL) nz_device_free(ctx, db);
    if (dx != NULL) nz_device_free(ctx, dx);
    nz_free(ctx, b);
    nz_free(ctx, u);
    nz_free(ctx, x);
    nz_matrix_destroy(&gA);
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&S);
    nz_matrix_destroy(&A);
    return rc;
}

/* One CuPy-comparison solve on host matrix M (uploaded here): b = ones, x0 = 0, a fixed
 * iteration count; prints its row. Returns 0 or 1 (failed); *us_per_iteration on success. */
static int laplace_solve(nz_context_t *ctx, const nzb_cg_options_t *o, const nz_matrix_t *M,
                         const char *problem, int64_t n, int iterations, double copy_gbs,
                         FILE *out, FILE *csv, double *us_per_iteration) {
    nz_matrix_t *dA = NULL;
    double *ones = NULL;
    void *db = NULL, *dx = NULL;
    int rc = 1;
    nz_status_t st;
    cg_row_t r;
    memset(&r, 0, sizeof r);
    r.n = n;
    r.backend = "gpu";
    const size_t bytes = (size_t)n * sizeof(double);
    nz_matrix_info_t mi;
    if ((st = nz_matrix_info(ctx, &mi, M)) != NZ_SUCCESS ||
        (st = nz_matrix_to_device(ctx, &dA, M, NZ_INDEX_AUTO)) != NZ_SUCCESS ||
        (st = nz_malloc(ctx, (void **)&ones, bytes)) != NZ_SUCCESS ||
        (st = nz_device_malloc(ctx, &db, bytes)) != NZ_SUCCESS ||
        (st = nz_device_malloc(ctx, &dx, bytes)) != NZ_SUCCESS)
        goto fail;
    r.format = mi.format;
    for (int64_t i = 0; i < n; i++) ones[i] = 1.0;
    if ((st = nz_device_copy_from_host(ctx, db, ones, bytes)) != NZ_SUCCESS ||
        (st = nz_device_memset(ctx, dx, 0, bytes)) != NZ_SUCCESS)
        goto fail;
    nz_cg_options_t opt;
    memset(&opt, 0, sizeof opt);
    opt.rtol = 1e-300; /* run the whole fixed count */
    opt.max_iterations = iterations;
    opt.use_graph = o->use_graph;
    nz_cg_result_t res;
    st = nz_cg_solve(ctx, dA, db, dx, &opt, &res);
    if (st < 0) goto fail;
    nz_matrix_info(ctx, &mi, dA);
    row_from_result(&r, &mi, st, &res);
    r.floor_us = copy_gbs > 0 ? 1e6 * ((double)mi.bytes + 13.0 * (double)bytes) / (copy_gbs * 1e9) : 0;
    r.transfer_ms = 1e3 * mi.transfer_seconds;
    print_row(out, csv, problem, &r);
    *us_per_iteration = r.us_per_iteration;
    rc = 0;
    goto cleanup;
fail:
    fprintf(out, "| %s | gpu | %s | - | %lld | FAILED: %s |\n", problem, nz_format_name(r.format),
            (long long)n, nz_context_last_error(ctx));
cleanup:
    if (db != NULL) nz_device_free(ctx, db);
    if (dx != NULL) nz_device_free(ctx, dx);
    nz_free(ctx, ones);
    nz_matrix_destroy(&dA);
    return rc;
}

/* The CuPy comparison: 7-point Laplacian n^3, double, b = ones, x0 = 0, a fixed iteration count,
 * in the planner's format for the GPU (converted on the host before the upload, as `nz cg` does;
 * the library cannot convert a device matrix) and, when that is not CSR, in CSR too (the form
 * before the planner's format), both in the same run. The CuPy line uses the planner's row. */
static int laplace_case(nz_context_t *ctx, const nzb_cg_options_t *o, double copy_gbs, FILE *out,
                        FILE *csv) {
    const int64_t m = o->laplace_n > 0 ? o->laplace_n : 200;
    const int iterations = o->laplace_iterations > 0 ? o->laplace_iterations : 200;
    nz_matrix_t *A = NULL, *P = NULL;
    nz_format_t format = NZ_FORMAT_CSR;
    nz_alg_t alg;
    nz_matrix_stats_t stats;
    double us_planner = 0, us_csr = 0;
    int rc = 0;
    char problem[96];
    const int64_t n = m * m * m;
    nz_status_t st = nz_gen_laplace3d(ctx, &A, m, m, m, NZ_F64);
    if (st == NZ_SUCCESS) st = nz_matrix_stats(ctx, &stats, A);
    if (st != NZ_SUCCESS) {
        fprintf(out, "| laplace3d %lld^3 | gpu | csr | - | %lld | FAILED: %s |\n", (long long)m,
                (long long)n, nz_context_last_error(ctx));
        nz_matrix_destroy(&A);
        return 1;
    }
    if (nz_spmv_plan_choose(&format, &alg, NULL, 0, &stats, NZ_BACKEND_CUDA, NZ_FORMAT_COUNT, 0) !=
            NZ_SUCCESS ||
        (format != NZ_FORMAT_CSR && nz_matrix_convert(ctx, &P, A, format, NULL) != NZ_SUCCESS))
        format = NZ_FORMAT_CSR; /* no advice, or the conversion was refused */
    snprintf(problem, sizeof problem, "laplace3d %lld^3 (planner's format)", (long long)m);
    rc |= laplace_solve(ctx, o, P != NULL ? P : A, problem, n, iterations, copy_gbs, out, csv,
                        &us_planner);
    if (P != NULL) {
        snprintf(problem, sizeof problem, "laplace3d %lld^3 (csr)", (long long)m);
        rc |= laplace_solve(ctx, o, A, problem, n, iterations, copy_gbs, out, csv, &us_csr);
        if (us_planner > 0 && us_csr > 0)
            fprintf(out, "\nplanner's format %s: %.1f us/iteration vs csr %.1f us/iteration "
                         "(%.2fx)\n", nz_format_name(format), us_planner, us_csr,
                    us_csr / us_planner);
    }
    if (us_planner > 0) {
        char why[256];
        const double cupy_us = cupy_cg_us(m, iterations, why, sizeof why);
        if (cupy_us > 0)
            fprintf(out, "\nCuPy cg on the same problem, same device, this run: %.1f us/iteration; "
                         "Nonzero (%s): %.1f us/iteration = %.2fx faster (target >= 2x)\n",
                    cupy_us, nz_format_name(format), us_planner, cupy_us / us_planner);
        else
            fprintf(out, "\nCuPy cg not measured (%s): no comparison\n", why);
    }
    nz_matrix_destroy(&P);
    nz_matrix_destroy(&A);
    return rc;
}

int nzb_bench_cg(const nzb_cg_options_t *options) {
    nzb_cg_options_t o;
    if (options != NULL)
        o = *options;
    else
        memset(&o, 0, sizeof o);
    FILE *out = o.out != NULL ? o.out : stdout;
    FILE *csv = NULL;
    nzu_output_t csv_out; /* the CSV replaces an old one only when complete (safe_output.h) */
    nz_context_t *ctx = NULL;
    int failures = 0;
    if (o.rtol <= 0) o.rtol = 1e-8;
    if (o.cpu_max_n <= 0) o.cpu_max_n = 64;
    if (o.num_sizes <= 0) {
        const int64_t defaults[] = {16, 32, 64, 128, 256};
        o.num_sizes = 5;
        memcpy(o.sizes, defaults, sizeof defaults);
    }
    if (o.num_sizes > NZB_CG_MAX_SIZES) o.num_sizes = NZB_CG_MAX_SIZES;
    int want_cpu = o.backend <= 0 || o.backend == 1 + NZ_BACKEND_CPU;
    int want_gpu = o.backend <= 0 || o.backend == 1 + NZ_BACKEND_CUDA;
    if (o.csv_path != NULL && (csv = nzu_output_fopen(&csv_out, o.csv_path)) == NULL) {
        fprintf(stderr, "nz bench: cannot write %s\n", o.csv_path);
        return 1;
    }
    if (csv != NULL)
        fprintf(csv, "problem,backend,format,alg,graph,unknowns,nnz,status,iterations,us_per_iteration,"
                     "mups,spmv_us,floor_us,transfer_ms,host_assembly_ms,device_assembly_ms,l2_error\n");
    if (nz_context_create(&ctx) != NZ_SUCCESS) {
        if (csv != NULL) nzu_output_fclose(&csv_out, csv);
        return 1;
    }
    if (o.threads > 0) nz_context_set_threads(ctx, o.threads);
    if (o.tunables != NULL) nz_context_set_tunables(ctx, o.tunables);
    fprintf(out, "CG on the Q1 FE problem (nz_gen_fe3d): %s, precond %s, rtol %.0e, random start\n",
            o.single ? "single" : "double", o.precond == NZ_PRECOND_JACOBI ? "jacobi" : "none",
            o.rtol);
    fprintf(out, "floor = (matrix arrays + x + y + %d n vector values) / copy bandwidth per "
                 "iteration; MUPS = unknowns x iterations / solve time / 1e6\n\n",
            o.precond == NZ_PRECOND_JACOBI ? 12 : 10);
    if (want_cpu) {
        double copy = o.cpu_copy_gbs, triad = 0;
        size_t array_bytes = 0;
        if (copy <= 0) nzb_cpu_stream(o.threads, 5, &copy, &triad, &array_bytes);
        fprintf(out, "CPU copy bandwidth: %.1f GB/s\n\n", copy);
        print_header(out);
        for (int k = 0; k < o.num_sizes; k++) {
            if (o.sizes[k] > o.cpu_max_n) continue;
            const nz_format_t formats[2] = {NZ_FORMAT_CSR, NZ_FORMAT_SELL};
            for (int f = 0; f < 2; f++)
                failures += fe_case(ctx, &o, o.sizes[k], 0, formats[f], copy, out, csv) == 1;
        }
        fprintf(out, "\n");
    }
    if (want_gpu) {
        if (nz_device_count() == 0 || nz_context_set_device(ctx, 0, NULL) != NZ_SUCCESS) {
            fprintf(out, "GPU: none (%s); GPU rows skipped\n", nz_device_count() == 0
                                                                 ? "no CUDA device or no CUDA build"
                                                                 : nz_context_last_error(ctx));
        } else {
            double copy = o.gpu_copy_gbs > 0 ? o.gpu_copy_gbs : gpu_copy_gbs(ctx);
            fprintf(out, "GPU: %s, copy bandwidth %.1f GB/s%s\n\n", nz_context_device_name(ctx),
                    copy, o.use_graph ? ", CUDA graph" : "");
            print_header(out);
            for (int k = 0; k < o.num_sizes; k++) {
                const nz_format_t formats[2] = {NZ_FORMAT_CSR, NZ_FORMAT_SELL};
                for (int f = 0; f < 2; f++)
                    failures += fe_case(ctx, &o, o.sizes[k], 1, formats[f], copy, out, csv) == 1;
            }
            if (o.laplace_n >= 0) failures += laplace_case(ctx, &o, copy, out, csv);
        }
    }
    nz_context_destroy(&ctx);
    if (csv != NULL && nzu_output_fclose(&csv_out, csv) != 0) {
        fprintf(stderr, "nz bench: cannot write %s\n", o.csv_path);
        failures++;
    }
    return failures != 0;
}
