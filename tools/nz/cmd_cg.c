/* cmd_cg.c: `nz cg`: conjugate gradients on a matrix file or the built-in 3-D Q1 FE problem. */
#include "cli.h"
#include "cmd_cg.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const CMD = "cg";

static void usage(void) {
    printf(
        "usage: nz cg A.(mtx|mtx.gz|nzb) [options]\n"
        "       nz cg --fe3d N [options]\n\n"
        "Solves A x = b (A symmetric positive definite) by conjugate gradients and prints\n"
        "'key: value' lines: status, iterations, relative residual (true, ||b - Ax|| / ||b||), time\n"
        "per iteration, MUPS (million unknown-updates per second: unknowns x iterations / solve\n"
        "time / 1e6), the time of one SpMV and, on the GPU, the host-to-device transfer time.\n"
        "--fe3d N: -Laplace(u) = f on the unit cube, Q1 elements on an N^3 grid, (N-1)^3 unknowns,\n"
        "u = sin(pi x) sin(pi y) sin(pi z); also prints 'L2 error' = ||u_h - u|| h^(3/2) over the\n"
        "nodes, and on the GPU the host assembly + transfer time against direct GPU assembly.\n\n"
        "options:\n"
        "  --b FILE           right-hand side (Matrix Market array; default b = A * ones)\n"
        "  -o FILE            write x (Matrix Market array)\n"
        "  --tol R            relative tolerance on ||b - Ax|| / ||b|| (default 1e-8)\n"
        "  --atol A           absolute tolerance (default 0)\n"
        "  --maxit N          iteration limit (default max(n, 10000))\n"
        "  --precond P        none or jacobi (default none)\n"
        "  --backend B        cpu or cuda (device 0) (default cpu)\n"
        "  --format F         storage format for the SpMV, or auto (default): the planner's\n"
        "                     format for the matrix and backend (with --alg auto; converted on\n"
        "                     the host, inside the solve's setup on the cpu, before the upload\n"
        "                     on cuda; csr for --fe3d with --assembly device)\n"
        "  --alg NAME         SpMV algorithm or auto (default auto)\n"
        "  --precision P      single or double (default double)\n"
        "  --x0 zero|random   initial guess (default: random for --fe3d, whose load is a discrete\n"
        "                     eigenvector, so that CG from zero would stop after one step; zero\n"
        "                     otherwise). random is deterministic: x0_i in [-1, 1) from a hash of i\n"
        "  --assembly A       --fe3d on cuda: host (assemble on the host and upload), device\n"
        "                     (assemble on the GPU), both (time both, solve the GPU one; default)\n"
        "  --graph            GPU: run the loop body as a CUDA graph\n"
        "  --check-interval K GPU: read the convergence scalars every K iterations (default 8)\n"
        "  --deterministic    only bitwise-reproducible SpMV algorithms\n"
        "  --history          print the residual norm of every iteration\n"
        "  --threads N        OpenMP threads (default: OpenMP's)\n"
        "  --help             this text\n\n"
        "status: converged only when the true residual ||b - Ax|| meets max(tol ||b||, atol);\n"
        "'not converged (iteration limit)' or 'not converged (stagnated above the tolerance)'\n"
        "(the attainable accuracy of the precision, e.g. single at --tol 1e-8) otherwise.\n"
        "exit status: 0 converged, 1 failure (breakdown: A not SPD; file or library error),\n"
        "2 bad command line, 3 refused (format / algorithm / backend), 4 not converged (x and\n"
        "the true residual are reported and written, but miss the tolerance).\n");
}

int nz_cmd_cg_parse_options(int argc, char **argv, cg_cli_options_t *o, int64_t laplace3d) {
    memset(o, 0, sizeof *o);
    o->laplace3d = laplace3d;
    o->value_type = NZ_F64;
    o->format = NZ_FORMAT_CSR;
    o->format_auto = 1;
    o->alg = NZ_ALG_AUTO;
    o->backend = NZ_BACKEND_CPU;
    o->x0_random = -1;
    o->assembly = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v = NULL;
        static const char *const with_value[] = {
            "--b", "-o", "--output", "--tol", "--atol", "--maxit", "--precond", "--backend",
            "--format", "--alg", "--precision", "--x0", "--assembly", "--check-interval",
            "--threads", "--fe3d"};
        if (nz_cli_option_value(CMD, argc, argv, &i, with_value,
                                sizeof with_value / sizeof with_value[0], &v) != NZ_EXIT_OK)
            return NZ_EXIT_USAGE;
        int bad = 0;
        if (nz_cli_is_help(arg)) {
            usage();
            return -1;
        } else if (strcmp(arg, "--b") == 0) {
            o->b_path = v;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            o->out_path = v;
        } else if (strcmp(arg, "--fe3d") == 0) {
            bad = nz_cli_int64(CMD, arg, v, 2, 1291, &o->fe3d); /* (N-1)^3 < 2^31 */
        } else if (strcmp(arg, "--tol") == 0) {
            bad = nz_cli_double(CMD, arg, v, &o->cg.rtol);
            if (!bad && !(o->cg.rtol > 0 && o->cg.rtol < 1)) {
                nz_cli_error(CMD, "option --tol: %s is not in (0, 1)", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--atol") == 0) {
            bad = nz_cli_double(CMD, arg, v, &o->cg.atol);
            if (!bad && o->cg.atol < 0) {
                nz_cli_error(CMD, "option --atol: %s is negative", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--maxit") == 0) {
            bad = nz_cli_int64(CMD, arg, v, 1, INT64_MAX / 2, &o->cg.max_iterations);
        } else if (strcmp(arg, "--precond") == 0) {
            if (strcmp(v, "none") == 0)
                o->cg.precond = NZ_PRECOND_NONE;
            else if (strcmp(v, "jacobi") == 0)
                o->cg.precond = NZ_PRECOND_JACOBI;
            else {
                nz_cli_error(CMD, "option --precond: unknown preconditioner '%s' (none or jacobi)", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--backend") == 0) {
            bad = nz_cli_backend(CMD, arg, v, &o->backend);
        } else if (strcmp(arg, "--format") == 0) {
            o->format_auto = strcmp(v, "auto") == 0;
            if (o->format_auto) {
                o->format = NZ_FORMAT_CSR;
            } else if (nz_format_from_name(&o->format, v) != NZ_SUCCESS) {
                nz_cli_error(CMD, "option --format: unknown format '%s'", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--alg") == 0) {
            if (nz_alg_from_name(&o->alg, v) != NZ_SUCCESS) {
                nz_cli_error(CMD, "option --alg: unknown algorithm '%s'", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--precision") == 0) {
            bad = nz_cli_precision(CMD, arg, v, &o->value_type);
        } else if (strcmp(arg, "--x0") == 0) {
            if (strcmp(v, "zero") == 0)
                o->x0_random = 0;
            else if (strcmp(v, "random") == 0)
                o->x0_random = 1;
            else {
                nz_cli_error(CMD, "option --x0: '%s' is not zero or random", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--assembly") == 0) {
            if (strcmp(v, "host") == 0)
                o->assembly = 0;
            else if (strcmp(v, "device") == 0)
                o->assembly = 1;
            else if (strcmp(v, "both") == 0)
                o->assembly = 2;
            else {
                nz_cli_error(CMD, "option --assembly: '%s' is not host, device or both", v);
                bad = 1;
            }
        } else if (strcmp(arg, "--check-interval") == 0) {
            bad = nz_cli_int(CMD, arg, v, 1, 1 << 20, &o->cg.check_interval);
        } else if (strcmp(arg, "--threads") == 0) {
            bad = nz_cli_threads(CMD, arg, v, 1, &o->threads);
        } else if (strcmp(arg, "--graph") == 0) {
            o->cg.use_graph = 1;
        } else if (strcmp(arg, "--deterministic") == 0) {
            o->cg.plan_flags |= NZ_PLAN_DETERMINISTIC;
        } else if (strcmp(arg, "--history") == 0) {
            o->history = 1;
        } else {
            const char **const positional[] = {&o->matrix_path};
            if (nz_cli_positional(CMD, arg, positional, 1) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
        }
        if (bad) return NZ_EXIT_USAGE;
    }
    const int problems = (o->matrix_path != NULL) + (o->fe3d > 0) + (o->laplace3d > 0);
    if (problems == 0) return nz_cli_missing(CMD, "a matrix file or --fe3d N");
    if (problems > 1 && o->laplace3d == 0) return nz_cli_extra_argument(CMD, o->matrix_path);
    if (problems > 1) {
        nz_cli_error(CMD, "give exactly one of a matrix file, --fe3d N or --laplace3d N");
        return NZ_EXIT_USAGE;
    }
    const nz_cli_file_t inputs[] = {{NULL, o->matrix_path}, {"--b", o->b_path}};
    const nz_cli_file_t outputs[] = {{"-o", o->out_path}};
    if (nz_cli_check_files(CMD, outputs, 1, inputs, 2) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
    if (o->fe3d && o->b_path != NULL) {
        nz_cli_error(CMD, "--b cannot be combined with --fe3d (the FE problem has its own load)");
        return NZ_EXIT_USAGE;
    }
    if (o->assembly >= 0 && (o->fe3d == 0 || o->backend != NZ_BACKEND_CUDA)) {
        nz_cli_error(CMD, "--assembly applies to --fe3d with --backend cuda only");
        return NZ_EXIT_USAGE;
    }
    if (o->x0_random < 0) o->x0_random = o->fe3d > 0;
    if (o->assembly < 0) o->assembly = 2;
    o->cg.alg = o->alg;
    o->cg.record_history = o->history;
    /* the planner's format needs the planner's algorithm; a named format is kept as it is */
    if (o->alg != NZ_ALG_AUTO) o->format_auto = 0;
    o->cg.keep_format = !o->format_auto;
    return NZ_EXIT_OK;
}

/* Library failures inside the phases of nz_cmd_cg: print the message, return the exit status. */
#define LIB(call)                                                                               \
    do {                                                                                        \
        nz_status_t lib_status_ = (call);                                                       \
        if (lib_status_ != NZ_SUCCESS) return nz_cli_library_error(CMD, c->ctx, lib_status_);   \
    } while (0)

/* One `nz cg` between its phases. */
typedef struct cg_command {
    cg_cli_options_t o;
    nz_context_t *ctx;
    int cuda;                       /* the CUDA backend */
    nz_value_type_t vt;
    size_t vs;                      /* bytes per value */
    int64_t n;                      /* unknowns */
    nz_matrix_t *A, *B;             /* host: the problem; B its copy in the format asked for */
    nz_matrix_t *dA, *dA_assembled; /* device: A or B uploaded; the GPU-assembled FE matrix */
    void *b, *u, *x;                /* host: right-hand side, FE exact solution, solution */
    void *db, *dx, *du, *db_gen;    /* device copies; db_gen: the GPU-assembled b */
    const nz_matrix_t *solve_matrix;
    const void *solve_b;
    nz_cg_result_t res;
    nz_status_t solve_status;
    double host_assembly, device_assembly, b_transfer, format_seconds;
} cg_command_t;

/* The context: threads and, for the CUDA backend, device 0. */
static int cg_open_context(cg_command_t *c) {
    nz_status_t status;
    if ((status = nz_cli_context_create(&c->ctx)) != NZ_SUCCESS)
        return nz_cli_library_error(CMD, c->ctx, status);
    if (c->o.threads > 0) LIB(nz_context_set_threads(c->ctx, c->o.threads));
    if (c->cuda) LIB(nz_context_set_device(c->ctx, 0, NULL));
    return NZ_EXIT_OK;
}

/* The FE problem: assembled on the host (unless only the GPU's CSR is wanted) and on the GPU
 * (--assembly device or both on cuda), each timed. */
static int cg_generate(cg_command_t *c) {
    const cg_cli_options_t *o = &c->o;
    const int need_host = !(c->cuda && o->fe3d && o->assembly == 1 && o->format == NZ_FORMAT_CSR);
    if (need_host) {
        double t0 = nz_cli_wtime();
        LIB(nz_gen_fe3d(c->ctx, &c->A, &c->b, &c->u, o->fe3d, c->vt));
        c->host_assembly = nz_cli_wtime() - t0;
    }
    if (c->cuda && o->assembly >= 1) {
        double t0 = nz_cli_wtime();
        LIB(nz_gen_fe3d_device(c->ctx, &c->dA_assembled, &c->db_gen, &c->du, o->fe3d, c->vt));
        c->device_assembly = nz_cli_wtime() - t0;
    }
    c->n = (o->fe3d - 1) * (o->fe3d - 1) * (o->fe3d - 1);
    return NZ_EXIT_OK;
}

/* A square matrix from its file, and b from --b or b = A ones (so the exact solution is known
 * to be ones; a NaN or Inf in A is named here, the solver would see only b). */
static int cg_read_file(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const cg_cli_options_t *o = &c->o;
    nz_status_t status;
    if ((status = nz_matrix_read(ctx, &c->A, o->matrix_path, c->vt)) != NZ_SUCCESS) {
        nz_cli_library_message(CMD, ctx, status);
        return NZ_EXIT_FAIL;
    }
    nz_matrix_info_t info;
    LIB(nz_matrix_info(ctx, &info, c->A));
    if (info.rows != info.cols) {
        nz_cli_error(CMD, "%s is %lld x %lld; CG needs a square (SPD) matrix", o->matrix_path,
                     (long long)info.rows, (long long)info.cols);
        return NZ_EXIT_FAIL;
    }
    const int64_t n = c->n = info.rows;
    if (o->b_path != NULL) {
        int64_t rows = 0, cols = 0;
        if ((status = nz_mm_read_dense(ctx, &c->b, &rows, &cols, o->b_path, c->vt)) !=
            NZ_SUCCESS) {
            nz_cli_library_message(CMD, ctx, status);
            return NZ_EXIT_FAIL;
        }
        if (rows * cols != n || (rows != 1 && cols != 1)) {
            nz_cli_error(CMD, "%s: b is %lld x %lld, A has %lld rows", o->b_path,
                         (long long)rows, (long long)cols, (long long)n);
            return NZ_EXIT_FAIL;
        }
        return NZ_EXIT_OK;
    }
    char nonfinite[1024];
    if (nz_cli_cg_nonfinite(ctx, c->A, o->matrix_path, nonfinite, sizeof nonfinite)) {
        nz_cli_error(CMD, "%s", nonfinite);
        return NZ_EXIT_FAIL;
    }
    void *ones = NULL;
    LIB(nz_malloc(ctx, &ones, (size_t)n * c->vs + 1));
    for (int64_t i = 0; i < n; i++) nz_cli_value_set(ones, c->vt, i, 1.0);
    status = nz_malloc(ctx, &c->b, (size_t)n * c->vs + 1);
    if (status == NZ_SUCCESS) status = nz_spmv(ctx, c->A, NZ_ALG_AUTO, 1.0, ones, 0.0, c->b);
    nz_free(ctx, ones);
    LIB(status);
    return NZ_EXIT_OK;
}

/* --format auto on cuda: the planner's format for the GPU, converted here on the host before
 * the upload (the library converts only host matrices, inside the solve, as on the cpu). */
static int cg_gpu_format(cg_command_t *c) {
    nz_matrix_stats_t stats;
    nz_format_t advised = NZ_FORMAT_CSR;
    nz_alg_t advised_alg;
    double t0 = nz_cli_wtime();
    LIB(nz_matrix_stats(c->ctx, &stats, c->A));
    if (nz_spmv_plan_choose(&advised, &advised_alg, NULL, 0, &stats, NZ_BACKEND_CUDA,
                            NZ_FORMAT_COUNT, c->o.cg.plan_flags & NZ_PLAN_DETERMINISTIC) ==
            NZ_SUCCESS &&
        advised != NZ_FORMAT_CSR) {
        nz_status_t status = nz_matrix_convert(c->ctx, &c->B, c->A, advised, NULL);
        if (status == NZ_SUCCESS)
            c->o.format = advised;
        else if (status != NZ_ERR_TOO_MUCH_PADDING && status != NZ_ERR_UNSUPPORTED)
            LIB(status);
    }
    c->format_seconds = nz_cli_wtime() - t0;
    return NZ_EXIT_OK;
}

/* The matrix and vectors the solve runs on: the format asked for (the planner's on cuda), and
 * on cuda the upload with b (the timed transfer) or the GPU-assembled problem, and x. */
static int cg_place(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const cg_cli_options_t *o = &c->o;
    const size_t bytes = (size_t)c->n * c->vs;
    int rc;
    if (c->A != NULL && c->cuda && o->format_auto && (rc = cg_gpu_format(c)) != NZ_EXIT_OK)
        return rc;
    c->solve_matrix = c->B != NULL ? c->B : c->A;
    if (c->A != NULL && c->B == NULL && o->format != NZ_FORMAT_CSR) {
        nz_format_options_t fo;
        memset(&fo, 0, sizeof fo);
        if (!c->cuda && o->format == NZ_FORMAT_SELL && o->alg == NZ_ALG_SIMD) fo.sell_chunk = 8;
        LIB(nz_matrix_convert(ctx, &c->B, c->A, o->format, &fo));
        c->solve_matrix = c->B;
    }
    c->solve_b = c->b;
    if (!c->cuda) return NZ_EXIT_OK;
    if (c->A != NULL) {
        /* the host matrix (read, or host-assembled) uploaded, with b: the timed transfer */
        LIB(nz_matrix_to_device(ctx, &c->dA, c->solve_matrix, NZ_INDEX_AUTO));
        LIB(nz_device_malloc(ctx, &c->db, bytes + 1));
        double t0 = nz_cli_wtime();
        LIB(nz_device_copy_from_host(ctx, c->db, c->b, bytes));
        c->b_transfer = nz_cli_wtime() - t0;
    }
    /* the GPU-assembled problem is solved whenever it exists in the requested format */
    const int generated = c->dA_assembled != NULL && o->format == NZ_FORMAT_CSR;
    c->solve_matrix = generated ? c->dA_assembled : c->dA;
    c->solve_b = generated ? c->db_gen : c->db;
    LIB(nz_device_malloc(ctx, &c->dx, bytes + 1));
    LIB(nz_device_copy_from_host(ctx, c->dx, c->x, bytes));
    return NZ_EXIT_OK;
}

/* The transfer and assembly lines of the report (cuda). */
static int cg_report_transfers(cg_command_t *c) {
    const nz_cg_result_t *res = &c->res;
    if (c->cuda && c->dA != NULL) {
        nz_matrix_info_t di;
        LIB(nz_matrix_info(c->ctx, &di, c->dA));
        double t = di.transfer_seconds + c->b_transfer;
        printf("transfer: %.3f ms (matrix %.3f ms, %.1f MB + b) = %.1f SpMVs\n", 1e3 * t,
               1e3 * di.transfer_seconds, (double)di.bytes / 1e6,
               res->spmv_seconds > 0 ? t / res->spmv_seconds : 0.0);
    }
    if (c->cuda && c->o.fe3d && (c->host_assembly > 0 || c->device_assembly > 0)) {
        nz_matrix_info_t di;
        double up = 0;
        if (c->dA != NULL && nz_matrix_info(c->ctx, &di, c->dA) == NZ_SUCCESS)
            up = di.transfer_seconds + c->b_transfer;
        printf("assembly: host %.3f ms + transfer %.3f ms vs device %.3f ms\n",
               1e3 * c->host_assembly, 1e3 * up, 1e3 * c->device_assembly);
    }
    return NZ_EXIT_OK;
}

/* The report: problem, setup, status, iterations, residual, times, the FE L2 error, transfers,
 * history; then --out. Returns the exit status of the solve. */
static int cg_report(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const cg_cli_options_t *o = &c->o;
    const nz_cg_result_t *res = &c->res;
    const nz_status_t solve_status = c->solve_status;
    const int64_t n = c->n;
    int rc;
    nz_matrix_info_t mi;
    LIB(nz_matrix_info(ctx, &mi, c->solve_matrix));
    if (o->fe3d)
        printf("problem: fe3d N=%lld (%lld unknowns, %lld nonzeros)\n", (long long)o->fe3d,
               (long long)n, (long long)mi.nnz);
    else
        printf("problem: %s (%lld unknowns, %lld nonzeros)\n", o->matrix_path, (long long)n,
               (long long)mi.nnz);
    printf("setup: %s, %s%s, %s, alg %s, precond %s, x0 %s%s\n", nz_cli_precision_name(c->vt),
           nz_format_name(res->format), o->format_auto ? " (planner)" : "",
           c->cuda ? nz_context_device_name(ctx) : "cpu",
           nz_alg_name(res->alg), o->cg.precond == NZ_PRECOND_JACOBI ? "jacobi" : "none",
           o->x0_random ? "random" : "zero", res->used_graph ? ", cuda graph" : "");
    /* converged only when the true residual meets the tolerance (nz_cg_solve) */
    printf("status: %s\n", solve_status == NZ_SUCCESS ? "converged"
                           : solve_status == NZ_MAX_ITERATIONS ? "not converged (iteration limit)"
                           : solve_status == NZ_STAGNATED
                               ? "not converged (stagnated above the tolerance)"
                               : "breakdown");
    if (solve_status != NZ_SUCCESS) nz_cli_library_message(CMD, ctx, solve_status);
    printf("iterations: %lld\n", (long long)res->iterations);
    if (!isnan(res->relative_residual)) /* NaN: the solve stopped before computing one */
        printf("relative residual: %.3e\n", res->relative_residual);
    printf("time per iteration: %.3f ms\n", 1e3 * res->seconds_per_iteration);
    printf("solve time: %.4f s (setup %.4f s)\n", res->solve_seconds, res->setup_seconds);
    if (c->format_seconds > 0)
        printf("format: %s chosen and converted on the host in %.4f s (before the upload)\n",
               nz_format_name(res->format), c->format_seconds);
    printf("MUPS: %.1f\n", res->solve_seconds > 0 ? (double)n * (double)res->iterations /
                                                        res->solve_seconds / 1e6 : 0.0);
    printf("spmv: %.3f ms\n", 1e3 * res->spmv_seconds);
    if (o->fe3d) {
        double err = 0;
        if (c->u == NULL) { /* GPU assembly only: fetch its u_exact */
            LIB(nz_malloc(ctx, &c->u, (size_t)n * c->vs + 1));
            LIB(nz_device_copy_to_host(ctx, c->u, c->du, (size_t)n * c->vs));
        }
        for (int64_t i = 0; i < n; i++) {
            double d = nz_cli_value_get(c->x, c->vt, i) - nz_cli_value_get(c->u, c->vt, i);
            err += d * d;
        }
        double h = 1.0 / (double)o->fe3d;
        printf("L2 error: %.6e\n", sqrt(err) * pow(h, 1.5));
    }
    if ((rc = cg_report_transfers(c)) != NZ_EXIT_OK) return rc;
    if (o->history)
        for (int64_t k = 0; k < res->history_length; k++)
            printf("history %lld: %.6e\n", (long long)k, res->history[k]);
    nz_status_t status;
    if (o->out_path != NULL &&
        (status = nz_mm_write_dense(ctx, o->out_path, c->vt, n, 1, c->x)) != NZ_SUCCESS) {
        nz_cli_library_message(CMD, ctx, status);
        return NZ_EXIT_FAIL;
    }
    return solve_status == NZ_SUCCESS ? NZ_EXIT_OK
           : solve_status > 0         ? NZ_EXIT_NOT_CONVERGED /* finished, not converged */
                                      : NZ_EXIT_FAIL;
}

static void cg_command_free(cg_command_t *c) {
    nz_context_t *ctx = c->ctx;
    if (ctx == NULL) return;
    nz_free(ctx, c->res.history);
    nz_free(ctx, c->b);
    nz_free(ctx, c->u);
    nz_free(ctx, c->x);
    if (c->db != NULL) nz_device_free(ctx, c->db);
    if (c->dx != NULL) nz_device_free(ctx, c->dx);
    if (c->du != NULL) nz_device_free(ctx, c->du);
    if (c->db_gen != NULL) nz_device_free(ctx, c->db_gen);
    nz_matrix_destroy(&c->dA);
    nz_matrix_destroy(&c->dA_assembled);
    nz_matrix_destroy(&c->B);
    nz_matrix_destroy(&c->A);
    nz_context_destroy(&c->ctx);
}

/* Parse; the problem (generated or read) and x0; its format and location; the solve; the
 * report. A breakdown is reported like a finished solve. */
int nz_cmd_cg(int argc, char **argv) {
    cg_command_t cmd;
    cg_command_t *c = &cmd;
    memset(c, 0, sizeof *c);
    int rc = nz_cmd_cg_parse_options(argc, argv, &c->o, 0);
    if (rc < 0) return NZ_EXIT_OK;
    if (rc != NZ_EXIT_OK) return rc;
    c->vt = c->o.value_type;
    c->vs = c->vt == NZ_F32 ? 4 : 8;
    c->cuda = c->o.backend == NZ_BACKEND_CUDA;

    if ((rc = cg_open_context(c)) != NZ_EXIT_OK) goto cleanup;
    if ((rc = c->o.fe3d ? cg_generate(c) : cg_read_file(c)) != NZ_EXIT_OK) goto cleanup;
    nz_status_t status = nz_malloc(c->ctx, &c->x, (size_t)c->n * c->vs + 1);
    if (status != NZ_SUCCESS) {
        rc = nz_cli_library_error(CMD, c->ctx, status);
        goto cleanup;
    }
    for (int64_t i = 0; i < c->n; i++)
        nz_cli_value_set(c->x, c->vt, i, c->o.x0_random ? nz_cli_hash_unit((uint64_t)i) : 0.0);
    if ((rc = cg_place(c)) != NZ_EXIT_OK) goto cleanup;

    c->solve_status = nz_cg_solve(c->ctx, c->solve_matrix, c->solve_b, c->cuda ? c->dx : c->x,
                                  &c->o.cg, &c->res);
    if (c->solve_status < 0 && c->solve_status != NZ_ERR_BREAKDOWN) {
        rc = nz_cli_library_error(CMD, c->ctx, c->solve_status);
        goto cleanup;
    }
    if (c->cuda &&
        (status = nz_device_copy_to_host(c->ctx, c->x, c->dx, (size_t)c->n * c->vs)) !=
            NZ_SUCCESS) {
        rc = nz_cli_library_error(CMD, c->ctx, status);
        goto cleanup;
    }
    rc = cg_report(c);

cleanup:
    cg_command_free(c);
    return rc;
}
