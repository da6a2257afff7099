/* bench_amg.c: `nz bench --amg`: AMG-PCG against Jacobi-PCG (set-up, re-setup, iterations, time to solution) on fe3d, laplace3d, elasticity3d and the real symmetric matrices, on the CPU or the GPU. */
#include "bench_amg.h"
#include "bench.h"
#include "safe_output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RTOL 1e-8

typedef struct amg_row {
    int64_t rows, nnz;
    int levels;
    double opc;
    double setup_s, update_s, amg_solve_s;
    int64_t amg_it, jac_it;
    double jac_total_s;
    const char *amg_status, *jac_status;
    nz_amg_info_t info;         /* the set-up's phases */
} amg_row_t;

/* A problem where it runs: the host matrix (kept for b = A 1), the matrix of the solve, b and
 * x where the solve runs. */
typedef struct problem {
    nz_context_t *ctx;
    int cuda;
    const nz_matrix_t *A;
    nz_matrix_t *dA;
    void *b, *x;        /* host or device */
    double *hb;         /* host b */
    int64_t n;
} problem_t;

static void problem_close(problem_t *p) {
    if (p->cuda) {
        if (p->b != NULL) nz_device_free(p->ctx, p->b);
        if (p->x != NULL) nz_device_free(p->ctx, p->x);
    } else {
        free(p->b);
        free(p->x);
    }
    nz_matrix_destroy(&p->dA);
    free(p->hb);
    memset(p, 0, sizeof *p);
}

static int problem_open(nz_context_t *ctx, int cuda, const nz_matrix_t *A, problem_t *p) {
    nz_matrix_info_t info;
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->cuda = cuda;
    p->A = A;
    if (nz_matrix_info(ctx, &info, A) != NZ_SUCCESS) return 1;
    p->n = info.rows;
    const size_t bytes = (size_t)(p->n > 0 ? p->n : 1) * sizeof(double);
    double *one = malloc(bytes);
    p->hb = malloc(bytes);
    if (one == NULL || p->hb == NULL) {
        free(one);
        return 1;
    }
    for (int64_t i = 0; i < p->n; i++) one[i] = 1.0;
    nz_status_t st = nz_spmv(ctx, A, NZ_ALG_AUTO, 1.0, one, 0.0, p->hb);
    free(one);
    if (st != NZ_SUCCESS) return 1;
    if (cuda) {
        if (nz_matrix_to_device(ctx, &p->dA, A, NZ_INDEX_AUTO) != NZ_SUCCESS ||
            nz_device_malloc(ctx, &p->b, bytes) != NZ_SUCCESS ||
            nz_device_malloc(ctx, &p->x, bytes) != NZ_SUCCESS ||
            nz_device_copy_from_host(ctx, p->b, p->hb, (size_t)p->n * sizeof(double)) !=
                NZ_SUCCESS)
            return 1;
    } else {
        p->b = malloc(bytes);
        p->x = malloc(bytes);
        if (p->b == NULL || p->x == NULL) return 1;
        memcpy(p->b, p->hb, (size_t)p->n * sizeof(double));
    }
    return 0;
}

static const nz_matrix_t *problem_matrix(const problem_t *p) { return p->cuda ? p->dA : p->A; }

static nz_status_t zero_x(problem_t *p) {
    if (p->cuda) return nz_device_memset(p->ctx, p->x, 0, (size_t)p->n * sizeof(double));
    memset(p->x, 0, (size_t)p->n * sizeof(double));
    return NZ_SUCCESS;
}

static const char *status_word(nz_status_t st) {
    return st == NZ_SUCCESS ? "converged" : st > 0 ? "not converged" : "failed";
}

/* One row: AMG (with the options, the near-nullspace when given) against Jacobi-PCG. */
static int run_row(nz_context_t *ctx, const nzb_amg_options_t *o, problem_t *p,
                   const nz_amg_options_t *ao, amg_row_t *r) {
    nz_preconditioner_t *M = NULL;
    nz_precond_options_t po;
    nz_solve_options_t so;
    nz_solve_result_t res;
    nz_amg_info_t info;
    double times[16];
    const int runs = o->runs > 0 ? (o->runs < 16 ? o->runs : 16) : 3;
    int rc = 0;
    memset(r, 0, sizeof *r);
    memset(&po, 0, sizeof po);
    po.amg = ao;
    const nz_matrix_t *A = problem_matrix(p);
    nz_context_synchronize(ctx);
    double t0 = nzb_wtime();
    nz_status_t st = nz_precond_create(ctx, &M, A, NZ_PRECOND_AMG, &po);
    nz_context_synchronize(ctx);
    r->setup_s = nzb_wtime() - t0;
    r->amg_status = "set-up failed";
    if (st == NZ_SUCCESS) {
        t0 = nzb_wtime();
        st = nz_precond_update(M, A);
        nz_context_synchronize(ctx);
        r->update_s = nzb_wtime() - t0;
    }
    if (st == NZ_SUCCESS && nz_amg_info(M, &info) == NZ_SUCCESS) {
        r->info = info;
        r->levels = info.levels;
        r->opc = info.operator_complexity;
        for (int k = 0; k < runs; k++) {
            memset(&so, 0, sizeof so);
            so.method = NZ_METHOD_CG;
            so.rtol = RTOL;
            so.preconditioner = M;
            zero_x(p);
            st = nz_solve(ctx, A, p->b, p->x, &so, &res);
            nz_free(ctx, res.history);
            times[k] = res.solve_seconds;
            r->amg_it = res.iterations;
            r->amg_status = status_word(st);
            if (st < 0 && st != NZ_ERR_BREAKDOWN) break;
        }
        r->amg_solve_s = nzb_median(times, runs);
    } else {
        /* a refusal (e.g. a zero diagonal) is a row of the table; a required row fails below */
        fprintf(stderr, "nz bench: AMG set-up: %s\n", nz_context_last_error(ctx));
        r->amg_status = "set-up refused";
    }
    nz_precond_destroy(&M);
    for (int k = 0; k < runs; k++) {
        memset(&so, 0, sizeof so);
        so.method = NZ_METHOD_CG;
        so.rtol = RTOL;
        so.precond = NZ_PRECOND_JACOBI;
        so.max_iterations = 20000;
        zero_x(p);
        st = nz_solve(ctx, A, p->b, p->x, &so, &res);
        nz_free(ctx, res.history);
        times[k] = res.setup_seconds + res.solve_seconds;
        r->jac_it = res.iterations;
        r->jac_status = status_word(st);
    }
    r->jac_total_s = nzb_median(times, runs);
    return rc;
}

static void print_header(FILE *out, FILE *csv) {
    fprintf(out, "%-26s %9s %10s %3s %5s %8s %8s %4s %8s %8s | %5s %8s | %6s %s\n", "problem",
             "rows", "nnz", "lev", "opc", "setup_s", "resetup", "it", "solve_s", "total_s",
             "jac_it", "total_s", "speed", "status (amg / jacobi)");
    if (csv != NULL)
        fprintf(csv, "problem,backend,rows,nnz,levels,operator_complexity,setup_s,resetup_s,"
                     "amg_iterations,amg_solve_s,amg_total_s,jacobi_iterations,jacobi_total_s,"
                     "speedup,amg_status,jacobi_status\n");
}

static void print_row(FILE *out, FILE *csv, const char *name, int cuda, const amg_row_t *r) {
    const double total = r->setup_s + r->amg_solve_s;
    const double speed = total > 0 ? r->jac_total_s / total : 0.0;
    fprintf(out, "%-26s %9lld %10lld %3d %5.3f %8.4f %8.4f %4lld %8.4f %8.4f | %5lld %8.4f | %5.2fx %s / %s\n",
            name, (long long)r->rows, (long long)r->nnz, r->levels, r->opc, r->setup_s,
            r->update_s, (long long)r->amg_it, r->amg_solve_s, total, (long long)r->jac_it,
            r->jac_total_s, speed, r->amg_status, r->jac_status);
    if (r->levels > 0)
        fprintf(out, "%-26s set-up phases (s): strength %.4f aggregate %.4f tentative %.4f "
                     "smooth %.4f rap %.4f coarse %.4f transfer %.4f\n", "",
                r->info.strength_seconds, r->info.aggregate_seconds, r->info.tentative_seconds,
                r->info.smooth_seconds, r->info.rap_seconds, r->info.coarse_seconds,
                r->info.transfer_seconds);
    if (csv != NULL)
        fprintf(csv, "%s,%s,%lld,%lld,%d,%.4f,%.6f,%.6f,%lld,%.6f,%.6f,%lld,%.6f,%.3f,%s,%s\n",
                name, cuda ? "cuda" : "cpu", (long long)r->rows, (long long)r->nnz, r->levels,
                r->opc, r->setup_s, r->update_s, (long long)r->amg_it, r->amg_solve_s, total,
                (long long)r->jac_it, r->jac_total_s, speed, r->amg_status, r->jac_status);
    fflush(out);
}

/* A generated or read matrix A (taken): a row with the options (near-nullspace included). */
static int bench_matrix(nz_context_t *ctx, const nzb_amg_options_t *o, const char *name,
                        nz_matrix_t *A, const nz_amg_options_t *ao, FILE *out, FILE *csv,
                        int must_converge) {
    problem_t p;
    amg_row_t r;
    nz_matrix_info_t info;
    int rc = problem_open(ctx, o->cuda, A, &p);
    if (rc == 0) rc = run_row(ctx, o, &p, ao, &r);
    if (rc == 0 && nz_matrix_info(ctx, &info, A) == NZ_SUCCESS) {
        r.rows = info.rows;
        r.nnz = info.nnz;
        print_row(out, csv, name, o->cuda, &r);
        if (must_converge && strcmp(r.amg_status, "converged") != 0) rc = 1;
    } else if (rc != 0) {
        fprintf(stderr, "nz bench: %s: %s\n", name, nz_context_last_error(ctx));
    }
    problem_close(&p);
    nz_matrix_destroy(&A);
    return rc;
}

/* The symmetric real square matrices listed in dir/MANIFEST.tsv (columns: file, origin, rows,
 * cols, nnz, symmetry, field, ...). */
static int bench_real(nz_context_t *ctx, const nzb_amg_options_t *o, const char *dir, FILE *out,
                      FILE *csv) {
    char path[4096], line[2048];
    int rc = 0;
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(out, "(no %s: the real matrices are skipped)\n", path);
        return 0;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        char *field[8] = {0};
        int nf = 0;
        for (char *tok = strtok(line, "\t\n"); tok != NULL && nf < 8; tok = strtok(NULL, "\t\n"))
            field[nf++] = tok;
        if (nf < 7 || strcmp(field[5], "symmetric") != 0 || strcmp(field[6], "real") != 0 ||
            strcmp(field[2], field[3]) != 0 || strncmp(field[0], "mmtest", 6) == 0)
            continue;
        nz_matrix_t *A = NULL;
        snprintf(path, sizeof path, "%s/%s", dir, field[0]);
        if (nz_mm_read(ctx, &A, path, NZ_F64) != NZ_SUCCESS) {
            fprintf(out, "%-26s (not read: %s)\n", field[0], nz_context_last_error(ctx));
            continue;
        }
        /* the matrices Jacobi-PCG cannot solve (indefinite) are reported, not required */
        rc |= bench_matrix(ctx, o, field[0], A, NULL, out, csv, 0);
    }
    fclose(f);
    return rc;
}

int nzb_bench_amg(const nzb_amg_options_t *options) {
    nzb_amg_options_t o = *options;
    FILE *out = o.out != NULL ? o.out : stdout;
    FILE *csv = NULL;
    nzu_output_t csv_out;
    nz_context_t *ctx = NULL;
    int rc = 0;
    if (o.num_sizes == 0) {
        const int64_t cpu[2] = {32, 64}, gpu[2] = {64, 128}, quick[2] = {16, 24};
        const int64_t *s = o.quick ? quick : o.cuda ? gpu : cpu;
        o.num_sizes = 2;
        o.sizes[0] = s[0];
        o.sizes[1] = s[1];
    }
    if (nz_context_create(&ctx) != NZ_SUCCESS) {
        fprintf(stderr, "nz bench: cannot create a context\n");
        return 1;
    }
    if (o.threads > 0) nz_context_set_threads(ctx, o.threads);
    if (o.cuda && nz_context_set_device(ctx, 0, NULL) != NZ_SUCCESS) {
        fprintf(stderr, "nz bench: --amg --backend cuda: %s\n", nz_context_last_error(ctx));
        nz_context_destroy(&ctx);
        return 1;
    }
    if (o.csv_path != NULL && (csv = nzu_output_fopen(&csv_out, o.csv_path)) == NULL) {
        fprintf(stderr, "nz bench: cannot write %s\n", o.csv_path);
        nz_context_destroy(&ctx);
        return 1;
    }
    fprintf(out, "AMG-PCG (smoothed aggregation, default options) vs Jacobi-PCG, rtol %.0e on the "
                 "true residual, b = A 1, x0 = 0, double, %s; total = set-up + solve (median of "
                 "%d); speed = Jacobi total / AMG total\n",
            RTOL, o.cuda ? "GPU (device 0)" : "CPU", o.runs > 0 ? o.runs : 3);
    print_header(out, csv);
    for (int k = 0; k < o.num_sizes && rc == 0; k++) {
        const int64_t n = o.sizes[k];
        char name[64];
        nz_matrix_t *A = NULL;
        /* the Poisson problems with the default V-cycle and with a W-cycle */
        nz_amg_options_t wo;
        memset(&wo, 0, sizeof wo);
        wo.cycle = NZ_AMG_CYCLE_W;
        for (int w = 0; w < 2; w++) {
            if (nz_gen_fe3d(ctx, &A, NULL, NULL, n, NZ_F64) == NZ_SUCCESS) {
                snprintf(name, sizeof name, "fe3d n=%lld%s", (long long)n, w ? " W" : "");
                rc |= bench_matrix(ctx, &o, name, A, w ? &wo : NULL, out, csv, 1);
            }
            if (nz_gen_laplace3d(ctx, &A, n, n, n, NZ_F64) == NZ_SUCCESS) {
                snprintf(name, sizeof name, "laplace3d %lld^3%s", (long long)n, w ? " W" : "");
                rc |= bench_matrix(ctx, &o, name, A, w ? &wo : NULL, out, csv, 1);
            }
        }
        /* elasticity on n / 2 elements a side: about the same unknowns as the Poisson rows
         * (81 non-zeros a row: up to n = 128) */
        void *modes = NULL;
        const int64_t ne = n / 2 > 1 ? n / 2 : 1;
        if (n <= 128 && nz_gen_elasticity3d(ctx, &A, NULL, &modes, ne, 0.0, NZ_F64) == NZ_SUCCESS) {
            nz_amg_options_t ao;
            memset(&ao, 0, sizeof ao);
            ao.block_size = 3;
            ao.nullspace_dim = 6;
            ao.near_nullspace = modes;
            snprintf(name, sizeof name, "elasticity3d n=%lld rbm", (long long)ne);
            rc |= bench_matrix(ctx, &o, name, A, &ao, out, csv, 1);
            nz_free(ctx, modes);
            if (nz_gen_elasticity3d(ctx, &A, NULL, NULL, ne, 0.0, NZ_F64) == NZ_SUCCESS) {
                memset(&ao, 0, sizeof ao);
                ao.block_size = 3;
                snprintf(name, sizeof name, "elasticity3d n=%lld const", (long long)ne);
                rc |= bench_matrix(ctx, &o, name, A, &ao, out, csv, 0);
            }
        }
    }
    if (o.real && rc == 0) {
        const char *dir = getenv("NZ_MATRIX_DIR");
        char fallback[4096];
        if (dir == NULL || dir[0] == '\0') {
            snprintf(fallback, sizeof fallback, "%s/../shared/matrices", NZB_SOURCE_DIR);
            dir = fallback;
        }
        rc |= bench_real(ctx, &o, dir, out, csv);
    }
    nz_context_destroy(&ctx);
    if (csv != NULL && nzu_output_fclose(&csv_out, csv) != 0) {
        fprintf(stderr, "nz bench: cannot write %s\n", o.csv_path);
        rc = 1;
    }
    return rc;
}
