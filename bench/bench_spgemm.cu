/* bench_spgemm.cu: `nz bench --spgemm`: C = A*A with Nonzero's hash SpGEMM and cuSPARSE's three. */
#include "bench_spgemm_internal.h"
#include "bench.h"
#include "safe_output.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct spgemm_case {
    char name[96];
    int kind;          /* 0 laplace3d, 1 fe3d, 2 random, 3 rmat, 4 file */
    int64_t size;      /* grid n, FE n, rows, R-MAT scale */
    const char *path;
} spgemm_case_t;

/* The run: options, output, device, and the summary's sums. */
typedef struct run {
    nzb_spgemm_options_t o;
    FILE *out, *csv;
    nz_context_t *ctx;
    cusparseHandle_t handle;
    cudaStream_t stream;
    nz_value_type_t vt;
    size_t vs;
    int runs, edge_factor;
    double host_bytes;
    nz_spgemm_alg_t ours_alg;
    double log_speedup_device, log_speedup_e2e, log_speedup_e2e_cold;
    int compared, compared_cold, cusparse_failed_all, ours_correct_there;
    int exit_status;
} run_t;

/* Ours on one matrix: medians over the runs, the last run's info and stage profile, its C. */
typedef struct ours {
    int ok, verified, device_resident;
    double seconds, device, kernels, symbolic;
    double cold_seconds, cold_symbolic; /* hySpMM: one call in a new context (0: not measured) */
    double reuse_seconds, plan_seconds; /* hash: a plan's numeric product, its creation (0: none) */
    nz_spgemm_info_t info;
    nz_spgemm_profile_t profile;
    nz_matrix_t *C;
} ours_t;

static nz_status_t make_matrix(nz_context_t *ctx, nz_matrix_t **A, const spgemm_case_t *c,
                               nz_value_type_t vt, int edge_factor) {
    switch (c->kind) {
    case 0: return nz_gen_laplace3d(ctx, A, c->size, c->size, c->size, vt);
    case 1: return nz_gen_fe3d(ctx, A, NULL, NULL, c->size, vt);
    case 2: return nz_gen_random(ctx, A, c->size, c->size, 8.0, 7, vt);
    case 3: return nz_gen_rmat(ctx, A, (int)c->size, edge_factor, 0, 0, 0, 1, vt);
    default: return nz_matrix_read(ctx, A, c->path, vt);
    }
}

static int list_real(spgemm_case_t **cases, int *count, int *capacity) {
    const char *dir = getenv("NZ_MATRIX_DIR");
    if (dir == NULL) return 0;
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (!((len > 4 && strcmp(e->d_name + len - 4, ".mtx") == 0) ||
              (len > 7 && strcmp(e->d_name + len - 7, ".mtx.gz") == 0)))
            continue;
        if (*count == *capacity) {
            *capacity *= 2;
            *cases = (spgemm_case_t *)realloc(*cases, (size_t)*capacity * sizeof(spgemm_case_t));
        }
        spgemm_case_t *c = &(*cases)[(*count)++];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%.90s", e->d_name);
        c->kind = 4;
        size_t plen = strlen(dir) + len + 2;
        char *path = (char *)malloc(plen);
        snprintf(path, plen, "%s/%s", dir, e->d_name);
        c->path = path;
    }
    closedir(d);
    return 0;
}

/* esc / hyspmm: what each stage of the last run took, its wall time and the overlap (wall / sum
 * of the stages: below 1 where stages ran at the same time), and hySpMM's host bandwidths
 * (in the pipeline, and the expansion alone on all threads) against a plain host copy measured
 * in the same call. */
static void print_stages(FILE *out, const nz_spgemm_profile_t *p) {
    double sum = 0.0;
    fprintf(out, "    stages ms:");
    for (int i = 0; i < p->stage_count; i++) {
        fprintf(out, " %s %.2f", p->stage_names[i], 1e3 * p->stage_seconds[i]);
        sum += p->stage_seconds[i];
    }
    fprintf(out, " | sum %.2f wall %.2f overlap %.3f\n", 1e3 * sum, 1e3 * p->wall_seconds,
            sum > 0.0 ? p->wall_seconds / sum : 0.0);
    if (p->host_copy_bytes_per_second > 0.0)
        fprintf(out, "    host GB/s: in the pipeline (side by side, threads shared) expand %.2f "
                     "copy-out %.2f; on all threads: expand alone %.2f, memcpy %.2f (expand alone "
                     "%.0f%% of memcpy)\n",
                1e-9 * p->expand_bytes_per_second, 1e-9 * p->copy_out_bytes_per_second,
                1e-9 * p->expand_alone_bytes_per_second, 1e-9 * p->host_copy_bytes_per_second,
                100.0 * p->expand_alone_bytes_per_second / p->host_copy_bytes_per_second);
}

/* The cases: the files named, or the generated suite (quick or full) plus NZ_MATRIX_DIR's. */
static spgemm_case_t *build_suite(const nzb_spgemm_options_t *o, int *count) {
    int capacity = 32;
    spgemm_case_t *cases = (spgemm_case_t *)calloc((size_t)capacity, sizeof(spgemm_case_t));
    *count = 0;
    if (o->num_files > 0) {
        for (int f = 0; f < o->num_files; f++) {
            if (*count == capacity) {
                capacity *= 2;
                cases = (spgemm_case_t *)realloc(cases, (size_t)capacity * sizeof(spgemm_case_t));
            }
            spgemm_case_t *c = &cases[(*count)++];
            memset(c, 0, sizeof *c);
            const char *base = strrchr(o->files[f], '/');
            snprintf(c->name, sizeof c->name, "%.90s", base != NULL ? base + 1 : o->files[f]);
            c->kind = 4;
            c->path = o->files[f];
        }
    } else {
        const struct { int kind; int64_t full, quick; const char *fmt; } suite[] = {
            {0, 100, 40, "laplace3d %lld^3"}, {1, 64, 24, "fe3d %lld^3"},
            {2, 1000000, 100000, "random %lld x mean 8"}, {3, 16, 12, "rmat scale %lld"},
            {3, 18, 13, "rmat scale %lld"}, {3, 20, 14, "rmat scale %lld"}};
        for (size_t s = 0; s < sizeof suite / sizeof suite[0]; s++) {
            spgemm_case_t *c = &cases[(*count)++];
            memset(c, 0, sizeof *c);
            c->kind = suite[s].kind;
            c->size = o->quick ? suite[s].quick : suite[s].full;
            snprintf(c->name, sizeof c->name, suite[s].fmt, (long long)c->size);
        }
        if (o->real) list_real(&cases, count, &capacity);
    }
    return cases;
}

static void print_preamble(const run_t *g) {
    FILE *out = g->out;
    if (g->csv != NULL)
        fprintf(g->csv, "matrix,precision,rows,nnz,products,c_nnz,ours_seconds,ours_device_seconds,"
                     "ours_device_resident,ours_kernel_seconds,ours_symbolic_seconds,ours_gflops,panels,overlap,ours_peak_bytes,verified,alg1_seconds,alg2_seconds,"
                     "alg3_seconds,cusparse_best_seconds,cusparse_peak_bytes,speedup_device,"
                     "speedup_end_to_end,plan_numeric_seconds,plan_create_seconds,notes\n");
    fprintf(out, "# SpGEMM C = A*A, %s precision, %s, median of %d runs\n", g->o.single ? "single" : "double",
            nz_context_device_name(g->ctx), g->runs);
    fprintf(out, "# R-MAT edge factor %d (halved, shown as 'ef N', where C would not fit in host memory)\n",
            g->edge_factor);
    fprintf(out, "# ours: nz_spgemm %s; ours s = host A in, host C out; kern s = symbolic + numeric phases\n"
                 "# %s; sym s = symbolic phase;\n",
            nz_spgemm_alg_name(g->ours_alg),
            g->ours_alg == NZ_SPGEMM_HASH
                ? "(events); device s = the call on device A (int32 offsets) with C left on the\n"
                  "# device, wall clock, every allocation included (cuSPARSE's window)"
                : "(for esc and hyspmm the symbolic phase is host wall clock with the uploads,\n"
                  "# counts and allocations in it, and esc's numeric phase host wall clock with\n"
                  "# its copies back: device s = kern s overstates their device time)");
    fprintf(out,
                 "# cuSPARSE: cusparseSpGEMM work estimation .. copy, allocations included, device "
                 "arrays in and out;\n# end-to-end speedup adds cuSPARSE's copies of A in and C out.\n");
    fprintf(out, "%-24s %9s %11s %11s %9s %9s %9s %9s %7s %6s %7s %10s %-8s %9s %9s %9s %8s %8s\n", "matrix",
            "rows", "products", "nnz(C)", "ours s", "device s", "kern s", "sym s", "GFLOP/s", "panels", "overlap",
            "peak MB", "verified", "alg1 s", "alg2 s", "alg3 s", "x device", "x e2e");
}

/* The case's square matrix A with its product counts (*per_row malloc'd); an R-MAT product whose
 * C cannot fit in host memory gets fewer edges per vertex, said in its name. NULL (a line says
 * why, or nothing for a matrix that is not square) when there is nothing to run. */
static nz_matrix_t *load_matrix(run_t *g, spgemm_case_t *c, nz_matrix_info_t *ai,
                                int64_t *products, int64_t **per_row) {
    nz_matrix_t *A = NULL;
    int64_t c_bound = 0;
    *per_row = NULL;
    if (make_matrix(g->ctx, &A, c, g->vt, g->edge_factor) != NZ_SUCCESS) {
        fprintf(g->out, "%-24s not available: %s\n", c->name, nz_context_last_error(g->ctx));
        return NULL;
    }
    nz_matrix_info(g->ctx, ai, A);
    if (ai->rows != ai->cols) {
        nz_matrix_destroy(&A);
        return NULL;
    }
    nzb_spgemm_count_products(g->ctx, A, products, &c_bound, per_row);
    for (int ef = g->edge_factor / 2;
         c->kind == 3 && ef >= 2 &&
         (double)c_bound * (double)(4 + g->vs) * 2.5 > 0.6 * g->host_bytes;
         ef /= 2) {
        free(*per_row);
        *per_row = NULL;
        nz_matrix_destroy(&A);
        if (make_matrix(g->ctx, &A, c, g->vt, ef) != NZ_SUCCESS) break;
        nz_matrix_info(g->ctx, ai, A);
        nzb_spgemm_count_products(g->ctx, A, products, &c_bound, per_row);
        snprintf(c->name, sizeof c->name, "rmat scale %lld ef %d", (long long)c->size, ef);
    }
    if (A == NULL) {
        fprintf(g->out, "%-24s not available: %s\n", c->name, nz_context_last_error(g->ctx));
        return NULL;
    }
    if ((double)c_bound * (double)(4 + g->vs) * 2.5 > 0.6 * g->host_bytes) {
        fprintf(g->out, "%-24s skipped: C may need %.1f GB of host memory\n", c->name,
                (double)c_bound * (double)(4 + g->vs) * 1e-9);
        free(*per_row);
        *per_row = NULL;
        nz_matrix_destroy(&A);
        return NULL;
    }
    return A;
}

/* Ours device resident (hash): A on the device once, with int32 row offsets like cuSPARSE's; C
 * stays on the device. The wall time of the whole call, every allocation and the symbolic phase
 * included: cuSPARSE's window. Its C is checked on the same rows as the host call's. */
static void ours_device_resident(run_t *g, const nz_matrix_t *A, const nz_matrix_info_t *ai,
                                 const nz_spgemm_options_t *opt, int nruns, const int64_t *list,
                                 int64_t n_list, ours_t *w, char *notes, size_t notes_size) {
    nz_matrix_t *dA = NULL, *dC = NULL, *hC = NULL;
    nz_spgemm_info_t dinfo;
    double dts[64], dts_product[64];
    char verify_note[200] = "";
    nz_status_t ds = nz_matrix_to_device(g->ctx, &dA, A, ai->nnz <= INT32_MAX ? NZ_I32 : NZ_I64);
    for (int r = 0; r < nruns && ds == NZ_SUCCESS; r++) {
        nz_matrix_destroy(&dC);
        ds = nz_spgemm(g->ctx, &dC, dA, dA, opt, &dinfo);
        dts_product[r] = dinfo.seconds;
    }
    /* a plan on the same operands: its creation once, then the numeric product into C's pattern
     * (wall clock: execute returns after the device finished), median of the runs; its C is
     * checked like the product's */
    if (ds == NZ_SUCCESS) {
        nz_spgemm_plan_t *plan = NULL;
        nz_matrix_t *pC = NULL, *hP = NULL;
        double t0 = nzb_wtime();
        nz_status_t ps = nz_spgemm_plan_create(g->ctx, &plan, &pC, dA, dA, opt, NULL);
        w->plan_seconds = nzb_wtime() - t0;
        for (int r = 0; r < nruns && ps == NZ_SUCCESS; r++) {
            t0 = nzb_wtime();
            ps = nz_spgemm_plan_execute(plan, dA, dA, pC);
            dts[r] = nzb_wtime() - t0;
        }
        if (ps == NZ_SUCCESS && (ps = nz_matrix_to_host(g->ctx, &hP, pC)) == NZ_SUCCESS) {
            w->reuse_seconds = nzb_median(dts, nruns);
            if (nzb_spgemm_verify_rows(g->ctx, A, hP, list, n_list, verify_note,
                                       sizeof verify_note) != 0) {
                w->verified = 0;
                g->exit_status = 1;
                size_t l0 = strlen(notes);
                snprintf(notes + l0, notes_size - l0, "plan C WRONG (%s); ", verify_note);
            }
        } else {
            w->plan_seconds = 0.0;
            size_t l0 = strlen(notes);
            snprintf(notes + l0, notes_size - l0, "plan: %s; ", nz_context_last_error(g->ctx));
        }
        nz_matrix_destroy(&hP);
        nz_matrix_destroy(&pC);
        nz_spgemm_plan_destroy(&plan);
    }
    size_t l = strlen(notes);
    if (ds == NZ_SUCCESS && (ds = nz_matrix_to_host(g->ctx, &hC, dC)) == NZ_SUCCESS) {
        w->device = nzb_median(dts_product, nruns);
        w->device_resident = 1;
        int64_t bad = nzb_spgemm_verify_rows(g->ctx, A, hC, list, n_list, verify_note,
                                             sizeof verify_note);
        if (bad != 0) {
            w->verified = 0;
            g->exit_status = 1;
            snprintf(notes + l, notes_size - l, "device C WRONG: %lld mismatches (%s); ",
                     (long long)bad, verify_note);
        }
    } else {
        snprintf(notes + l, notes_size - l,
                 "device C: %s (x device from the host-in/host-out time); ",
                 nz_context_last_error(g->ctx));
    }
    nz_matrix_destroy(&hC);
    nz_matrix_destroy(&dC);
    nz_matrix_destroy(&dA);
}

/* hySpMM keeps its pinned staging in the context between calls, so the runs above (after the
 * first) find it ready: one more call in a new context on the same device measures what a single
 * product pays (the pinned allocation in its symbolic phase). */
static void ours_cold(run_t *g, const nz_matrix_t *A, const nz_spgemm_options_t *opt, ours_t *w) {
    nz_context_t *cold = NULL;
    nz_matrix_t *C = NULL, *W = NULL;
    nz_spgemm_info_t info;
    nz_matrix_info_t ai;
    const int64_t *offsets = NULL;
    const int32_t *cols = NULL;
    const void *values = NULL;
    memset(&info, 0, sizeof info);
    /* A belongs to the benchmark's context: the new one borrows its arrays */
    if (nz_matrix_info(g->ctx, &ai, A) == NZ_SUCCESS &&
        nz_matrix_csr_arrays(g->ctx, &offsets, &cols, &values, A) == NZ_SUCCESS &&
        nz_context_create(&cold) == NZ_SUCCESS && nz_context_set_device(cold, 0, NULL) == NZ_SUCCESS &&
        nz_matrix_wrap_csr(cold, &W, ai.rows, ai.cols, NZ_I64, offsets, cols, ai.value_type, values) ==
            NZ_SUCCESS &&
        nz_spgemm(cold, &C, W, W, opt, &info) == NZ_SUCCESS) {
        w->cold_seconds = info.seconds;
        w->cold_symbolic = info.symbolic_seconds;
    } else if (cold != NULL) {
        fprintf(stderr, "nz bench --spgemm: the call in a new context failed: %s\n",
                nz_context_last_error(cold));
    }
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&W);
    nz_context_destroy(&cold);
}

/* Ours: nruns calls host A in, host C out (medians; the last run's info, profile and C), then C
 * verified once (every row, or a sample plus the heaviest rows), then for hash the device-resident
 * call. */
static void ours_case(run_t *g, const nz_matrix_t *A, const nz_matrix_info_t *ai, int64_t products,
                      int64_t *per_row, int nruns, ours_t *w, char *notes, size_t notes_size) {
    double times[64], kernel_times[64], sym_times[64];
    char verify_note[200] = "";
    nz_spgemm_options_t opt;
    memset(&opt, 0, sizeof opt);
    memset(w, 0, sizeof *w);
    opt.alg = g->ours_alg;
    opt.gpu_memory_limit = g->o.gpu_memory_limit;
    w->ok = 1;
    for (int r = 0; r < nruns && w->ok; r++) {
        nz_matrix_destroy(&w->C);
        nz_status_t s = nz_spgemm_profile(g->ctx, &w->C, &w->profile, A, A, &opt,
                                          NZ_SPGEMM_PROFILE_STAGES, &w->info);
        if (s != NZ_SUCCESS) {
            snprintf(notes, notes_size, "ours failed: %s", nz_context_last_error(g->ctx));
            w->ok = 0;
            break;
        }
        times[r] = w->info.seconds;
        kernel_times[r] = w->info.symbolic_seconds + w->info.numeric_seconds;
        sym_times[r] = w->info.symbolic_seconds;
    }
    if (!w->ok) {
        g->exit_status = 1;
        return;
    }
    w->seconds = nzb_median(times, nruns);
    w->kernels = nzb_median(kernel_times, nruns);
    /* hash: the device-resident call below (or the host one if C does not fit the device);
     * esc / hyspmm: their phase times, as documented in the header */
    w->device = g->ours_alg == NZ_SPGEMM_HASH ? w->seconds : w->kernels;
    w->symbolic = nzb_median(sym_times, nruns);
    int64_t n_list = 0;
    int64_t *list = nzb_spgemm_verify_list(ai->rows, products, per_row, &n_list);
    int64_t bad = nzb_spgemm_verify_rows(g->ctx, A, w->C, list, n_list, verify_note,
                                         sizeof verify_note);
    w->verified = bad == 0;
    if (!w->verified) {
        g->exit_status = 1;
        snprintf(notes, notes_size, "WRONG: %lld mismatches (%s)", (long long)bad, verify_note);
    } else if (products > VERIFY_FULL_LIMIT) {
        snprintf(notes, notes_size, "verified on %d sampled + %d heaviest rows; ",
                 VERIFY_SAMPLE_ROWS, VERIFY_HEAVY_ROWS);
    }
    if (g->ours_alg == NZ_SPGEMM_HASH)
        ours_device_resident(g, A, ai, &opt, nruns, list, n_list, w, notes, notes_size);
    if (g->ours_alg == NZ_SPGEMM_HYSPMM) ours_cold(g, A, &opt, w);
    free(list);
}

/* One matrix: ours, cuSPARSE's three, the speedups; its table row, notes and CSV line. */
static void run_case(run_t *g, spgemm_case_t *c) {
    FILE *out = g->out;
    int64_t products = 0, *per_row = NULL;
    nz_matrix_info_t ai;
    char notes[600] = "";
    nz_matrix_t *A = load_matrix(g, c, &ai, &products, &per_row);
    if (A == NULL) return;
    const int nruns = g->runs < 64 ? g->runs : 64;
    ours_t w;
    ours_case(g, A, &ai, products, per_row, nruns, &w, notes, sizeof notes);
    nz_matrix_info_t cinfo;
    memset(&cinfo, 0, sizeof cinfo);
    if (w.C != NULL) nz_matrix_info(g->ctx, &cinfo, w.C);

    /* cuSPARSE on device copies with 32-bit offsets (uploaded once; the copy is timed) */
    nzb_spgemm_cusparse_t cres[NZB_SPGEMM_CUSPARSE_ALGS];
    double upload_seconds = 0.0, download_seconds = 0.0;
    nzb_spgemm_cusparse_all(g->handle, g->stream, g->ctx, A, g->vt, nruns, cinfo.nnz, cres,
                            &upload_seconds, notes, sizeof notes);
    /* the download of C that an end-to-end cuSPARSE user pays: the same bytes, pageable */
    if (cinfo.nnz > 0)
        download_seconds = nzb_spgemm_download_seconds((size_t)cinfo.nnz * (4 + g->vs) +
                                                       (size_t)(ai.rows + 1) * 4);

    int best = -1;
    for (int a = 0; a < NZB_SPGEMM_CUSPARSE_ALGS; a++)
        if (cres[a].ok && (best < 0 || cres[a].seconds < cres[best].seconds)) best = a;
    double speedup_device = 0.0, speedup_e2e = 0.0;
    if (best >= 0 && w.ok) {
        speedup_device = w.device > 0.0 ? cres[best].seconds / w.device : 0.0;
        speedup_e2e = w.seconds > 0.0 ? (cres[best].seconds + upload_seconds + download_seconds) / w.seconds : 0.0;
        if (speedup_device > 0.0 && speedup_e2e > 0.0) {
            g->log_speedup_device += log(speedup_device);
            g->log_speedup_e2e += log(speedup_e2e);
            if (w.cold_seconds > 0.0) {
                g->log_speedup_e2e_cold +=
                    log((cres[best].seconds + upload_seconds + download_seconds) / w.cold_seconds);
                g->compared_cold++;
            }
            g->compared++;
        }
    } else if (best < 0) {
        g->cusparse_failed_all++;
        if (w.ok && w.verified) g->ours_correct_there++;
    }
    char col[NZB_SPGEMM_CUSPARSE_ALGS][16];
    for (int a = 0; a < NZB_SPGEMM_CUSPARSE_ALGS; a++) {
        if (cres[a].ok)
            snprintf(col[a], sizeof col[a], "%.4f", cres[a].seconds);
        else
            snprintf(col[a], sizeof col[a], "failed");
        if (!cres[a].ok) {
            size_t l = strlen(notes);
            snprintf(notes + l, sizeof notes - l, "cusparse/%s: %s; ", nzb_spgemm_cusparse_name(a),
                     cres[a].note);
        }
    }
    const nz_spgemm_info_t *info = &w.info;
    double overlap = info->stage_seconds_sum > 0.0 ? info->seconds / info->stage_seconds_sum : 0.0;
    fprintf(out, "%-24s %9lld %11lld %11lld %9.4f %9.4f %9.4f %9.4f %7.2f %6lld %7.3f %10.1f %-8s %9s %9s %9s %8.2f %8.2f\n",
            c->name, (long long)ai.rows, (long long)products, (long long)cinfo.nnz, w.seconds,
            w.device, w.kernels, w.symbolic, w.seconds > 0.0 ? 2.0 * (double)products / w.seconds * 1e-9 : 0.0,
            (long long)info->panels, overlap, (double)info->peak_device_bytes / 1048576.0,
            !w.ok ? "failed" : w.verified ? "yes" : "WRONG", col[0], col[1], col[2], speedup_device,
            speedup_e2e);
    if (notes[0] != '\0') fprintf(out, "    note: %s\n", notes);
    if (w.ok && g->ours_alg != NZ_SPGEMM_HASH) print_stages(out, &w.profile);
    if (w.reuse_seconds > 0.0)
        fprintf(out, "    plan: numeric product %.4f s = %.2fx the device-resident product; plan "
                     "created in %.4f s\n",
                w.reuse_seconds, w.device > 0.0 ? w.reuse_seconds / w.device : 0.0, w.plan_seconds);
    if (w.cold_seconds > 0.0 && best >= 0)
        fprintf(out, "    first call in a new context: %.4f s (symbolic %.4f s), x e2e %.2f\n",
                w.cold_seconds, w.cold_symbolic,
                (cres[best].seconds + upload_seconds + download_seconds) / w.cold_seconds);
    fflush(out);
    if (g->csv != NULL)
        fprintf(g->csv, "%s,%s,%lld,%lld,%lld,%lld,%.6g,%.6g,%d,%.6g,%.6g,%.6g,%lld,%.4f,%lld,%d,%.6g,%.6g,%.6g,%.6g,%zu,%.4f,%.4f,%.6g,%.6g,\"%s\"\n",
                c->name, g->o.single ? "single" : "double", (long long)ai.rows, (long long)ai.nnz,
                (long long)products, (long long)cinfo.nnz, w.seconds, w.device, w.device_resident,
                w.kernels, w.symbolic,
                w.seconds > 0.0 ? 2.0 * (double)products / w.seconds * 1e-9 : 0.0, (long long)info->panels,
                overlap, (long long)info->peak_device_bytes, w.verified,
                cres[0].ok ? cres[0].seconds : -1.0, cres[1].ok ? cres[1].seconds : -1.0,
                cres[2].ok ? cres[2].seconds : -1.0, best >= 0 ? cres[best].seconds : -1.0,
                best >= 0 ? cres[best].peak_bytes : (size_t)0, speedup_device, speedup_e2e,
                w.reuse_seconds, w.plan_seconds, notes);
    free(per_row);
    nz_matrix_destroy(&w.C);
    nz_matrix_destroy(&A);
}

int nzb_bench_spgemm(const nzb_spgemm_options_t *options) {
    run_t g;
    nzu_output_t csv_out; /* replaced only when complete (safe_output.h) */
    int count = 0;
    memset(&g, 0, sizeof g);
    g.o = *options;
    g.out = g.o.out != NULL ? g.o.out : stdout;
    g.vt = g.o.single ? NZ_F32 : NZ_F64;
    g.vs = g.o.single ? 4 : 8;
    g.runs = g.o.runs > 0 ? g.o.runs : 3;
    g.edge_factor = g.o.rmat_edge_factor > 0 ? g.o.rmat_edge_factor : 16;
    g.host_bytes = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
    /* ours: hash unless --alg named ESC or hySpMM (the CLI refuses cpu; AUTO is hash) */
    g.ours_alg = g.o.alg == NZ_SPGEMM_ESC || g.o.alg == NZ_SPGEMM_HYSPMM ? g.o.alg : NZ_SPGEMM_HASH;
    spgemm_case_t *cases = build_suite(&g.o, &count);

    if (nz_device_count() == 0) {
        fprintf(g.out, "nz bench --spgemm: no CUDA device\n");
        g.exit_status = 1;
        goto cleanup;
    }
    if (nz_context_create(&g.ctx) != NZ_SUCCESS || nz_context_set_device(g.ctx, 0, NULL) != NZ_SUCCESS ||
        cudaStreamCreate(&g.stream) != cudaSuccess || cusparseCreate(&g.handle) != CUSPARSE_STATUS_SUCCESS ||
        cusparseSetStream(g.handle, g.stream) != CUSPARSE_STATUS_SUCCESS) {
        fprintf(g.out, "nz bench --spgemm: cannot set up the device: %s\n",
                g.ctx != NULL ? nz_context_last_error(g.ctx) : "no context");
        g.exit_status = 1;
        goto cleanup;
    }
    if (g.o.csv_path != NULL) g.csv = nzu_output_fopen(&csv_out, g.o.csv_path);
    print_preamble(&g);
    for (int ci = 0; ci < count; ci++) run_case(&g, &cases[ci]);
    fprintf(g.out, "# summary: %d matrices where cuSPARSE succeeds: geometric-mean speedup vs its best "
                   "%.2fx on the device, %.2fx end to end; %d where every cuSPARSE algorithm failed, "
                   "ours correct on %d of them\n",
            g.compared, g.compared > 0 ? exp(g.log_speedup_device / g.compared) : 0.0,
            g.compared > 0 ? exp(g.log_speedup_e2e / g.compared) : 0.0, g.cusparse_failed_all,
            g.ours_correct_there);
    if (g.compared_cold > 0)
        fprintf(g.out, "# summary: first call in a new context (pinned staging allocated), %d "
                       "matrices: %.2fx end to end\n",
                g.compared_cold, exp(g.log_speedup_e2e_cold / g.compared_cold));

cleanup:
    if (g.csv != NULL && nzu_output_fclose(&csv_out, g.csv) != 0) {
        fprintf(stderr, "nz bench: cannot write %s\n", g.o.csv_path);
        g.exit_status = 1;
    }
    if (g.handle != NULL) cusparseDestroy(g.handle);
    if (g.stream != NULL) cudaStreamDestroy(g.stream);
    nz_context_destroy(&g.ctx);
    if (g.o.num_files == 0)
        for (int ci = 0; ci < count; ci++)
            if (cases[ci].kind == 4) free((void *)cases[ci].path);
    free(cases);
    return g.exit_status;
}
