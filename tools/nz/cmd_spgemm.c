/* cmd_spgemm.c: `nz spgemm`: C = A B on the CPU or the GPU, with a check against the CPU result. */
#include "cli_options.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const CMD = "spgemm";

typedef struct spgemm_options {
    const char *a_path, *b_path, *out_path;
    nz_value_type_t value_type;
    nz_spgemm_options_t spgemm;
    int check;
    unsigned profile; /* NZ_SPGEMM_PROFILE_* flags: --profile, --profile-bins */
} spgemm_options_t;

static const nz_cli_command_t spgemm_command = {
    .name = "spgemm",
    .synopsis =
        "usage: nz spgemm A.(mtx|mtx.gz|nzb) [B.(mtx|mtx.gz|nzb)] [options]\n\n"
        "Computes C = A B (B defaults to A) and prints one line: the shape of C, its nonzeros,\n"
        "the products (scalar multiplications), the algorithm, the time (symbolic and numeric\n"
        "phases, output allocation and transfers included), GFLOP/s (2 x products / time), the\n"
        "row panels and, for panels > 1, the overlap (time / sum of the stage times).\n\n",
    .epilogue =
        "\nexit status: 0 success, 1 failure (including a failed --check), 2 bad command line,\n"
        "3 refused (a GPU algorithm without a device).\n",
    .column = 23,
};

static int parse_alg(const char *cmd, const char *option, const char *value, void *options) {
    spgemm_options_t *o = options;
    if (nz_spgemm_alg_from_name(&o->spgemm.alg, value) == NZ_SUCCESS) return 0;
    nz_cli_error(cmd, "option %s: unknown algorithm '%s' (cpu, esc, hyspmm, hash or auto)",
                 option, value);
    return 1;
}

#define AT(member) NZ_CLI_AT(spgemm_options_t, member)
static const nz_cli_option_t spgemm_options[] = {
    {.kind = NZ_CLI_STRING, AT(a_path)},
    {.kind = NZ_CLI_STRING, AT(b_path)},
    {.name = "--alg", .kind = NZ_CLI_CUSTOM, .parse = parse_alg, .metavar = "NAME",
     .help = "cpu, esc, hyspmm, hash or auto (default auto: hash when a GPU is\n"
             "present, else cpu)"},
    {.name = "--gpu-mem-limit", .kind = NZ_CLI_SIZE, AT(spgemm.gpu_memory_limit), .min = 1,
     .max = INT64_MAX, .metavar = "B",
     .help = "device memory budget in bytes (default: the free device memory);\n"
             "products that do not fit are computed in row panels"},
    {.name = "--precision", .kind = NZ_CLI_ENUM, AT(value_type),
     .names = &nz_cli_precision_names, .metavar = "P",
     .help = "single or double (default double)"},
    {.name = "--threads", .kind = NZ_CLI_THREADS, AT(spgemm.threads), .min = 0, .metavar = "N",
     .help = "CPU threads (default: OpenMP's)"},
    {.name = "--output", .short_name = "-o", .kind = NZ_CLI_STRING, AT(out_path),
     .metavar = "FILE", .help = "write C (.mtx, .mtx.gz or .nzb)"},
    {.name = "--profile", .kind = NZ_CLI_BITS, AT(profile), .bits = NZ_SPGEMM_PROFILE_STAGES,
     .help = "also print where the time went: each stage of the call (host wall\n"
             "clock; hySpMM: stage totals, their overlap, host GB/s)"},
    {.name = "--profile-bins", .kind = NZ_CLI_BITS, AT(profile),
     .bits = NZ_SPGEMM_PROFILE_STAGES | NZ_SPGEMM_PROFILE_BINS,
     .help = "--profile, and the hash algorithm's time per row bin and phase\n"
             "(each bin timed alone: the bins run serially, the call is slower)"},
    {.name = "--check", .kind = NZ_CLI_FLAG, AT(check),
     .help = "compare with the CPU algorithm: the structure must be identical\n"
             "and every value within 4 eps (k + 2) (|A| |B|)_ij, k the length of\n"
             "row i of A; prints 'check ok', or fails naming the first mismatch"},
};
#undef AT

static int parse_options(int argc, char **argv, spgemm_options_t *o) {
    memset(o, 0, sizeof *o);
    o->value_type = NZ_F64;
    o->spgemm.alg = NZ_SPGEMM_AUTO;
    const nz_cli_table_t table = {spgemm_options, NZ_CLI_COUNT(spgemm_options), o, "options:\n"};
    int rc = nz_cli_parse(&spgemm_command, &table, 1, argc, argv);
    if (rc != NZ_EXIT_OK) return rc;
    if (o->a_path == NULL) return nz_cli_missing(CMD, "input matrix file A");
    const nz_cli_file_t inputs[] = {{NULL, o->a_path}, {NULL, o->b_path}};
    const nz_cli_file_t outputs[] = {{"-o", o->out_path}};
    if (nz_cli_check_files(CMD, outputs, 1, inputs, 2) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
    if (o->out_path != NULL) return nz_cli_check_matrix_path(CMD, o->out_path);
    return NZ_EXIT_OK;
}

/* A host CSR copy of M with |values| (for the error bound of --check). */
static nz_status_t absolute_copy(nz_context_t *ctx, nz_matrix_t **out, const nz_matrix_t *M) {
    const int64_t *offsets;
    const int32_t *cols;
    const void *values;
    nz_matrix_info_t info;
    nz_status_t status = nz_matrix_info(ctx, &info, M);
    if (status == NZ_SUCCESS) status = nz_matrix_csr_arrays(ctx, &offsets, &cols, &values, M);
    if (status != NZ_SUCCESS) return status;
    double *abs_values = NULL;
    status = nz_malloc(ctx, (void **)&abs_values, (size_t)(info.nnz > 0 ? info.nnz : 1) * sizeof(double));
    if (status != NZ_SUCCESS) return status;
    for (int64_t k = 0; k < info.nnz; k++)
        abs_values[k] = fabs(info.value_type == NZ_F32 ? (double)((const float *)values)[k]
                                                       : ((const double *)values)[k]);
    status = nz_matrix_create_csr(ctx, out, info.rows, info.cols, NZ_I64, offsets, cols, NZ_F64,
                                  abs_values);
    nz_free(ctx, abs_values);
    return status;
}

static double value_at(const void *values, nz_value_type_t vt, int64_t k) {
    return vt == NZ_F32 ? (double)((const float *)values)[k] : ((const double *)values)[k];
}

/* Compare C with the CPU result R; bound holds (|A| |B|) on R's structure. Returns the number of
 * mismatches (structure or value) and describes the first in `first`. */
static int64_t compare(nz_context_t *ctx, const nz_matrix_t *A, const nz_matrix_t *C, const nz_matrix_t *R,
                       const nz_matrix_t *bound, nz_value_type_t vt, char *first, size_t size) {
    const int64_t *ao, *co, *ro, *bo;
    const int32_t *ac, *cc, *rc, *bc;
    const void *av, *cv, *rv, *bv;
    nz_matrix_info_t ci, ri;
    nz_matrix_info(ctx, &ci, C);
    nz_matrix_info(ctx, &ri, R);
    nz_matrix_csr_arrays(ctx, &ao, &ac, &av, A);
    nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C);
    nz_matrix_csr_arrays(ctx, &ro, &rc, &rv, R);
    nz_matrix_csr_arrays(ctx, &bo, &bc, &bv, bound);
    const double eps = vt == NZ_F32 ? 1.1920929e-7 : 2.220446049250313e-16;
    int64_t bad = 0;
    first[0] = '\0';
    if (ci.rows != ri.rows || ci.cols != ri.cols || ci.nnz != ri.nnz) {
        snprintf(first, size, "C is %lld x %lld with %lld nonzeros, the CPU result %lld x %lld "
                              "with %lld", (long long)ci.rows, (long long)ci.cols,
                 (long long)ci.nnz, (long long)ri.rows, (long long)ri.cols, (long long)ri.nnz);
        return 1;
    }
    for (int64_t i = 0; i < ri.rows; i++) {
        if (co[i + 1] != ro[i + 1]) {
            if (bad++ == 0)
                snprintf(first, size, "row %lld ends at %lld, CPU %lld", (long long)i,
                         (long long)co[i + 1], (long long)ro[i + 1]);
            continue;
        }
        const double k = (double)(ao[i + 1] - ao[i]);
        for (int64_t e = ro[i]; e < ro[i + 1]; e++) {
            double c = value_at(cv, vt, e), r = value_at(rv, vt, e);
            double tol = 4.0 * eps * (k + 2.0) * ((const double *)bv)[e];
            int same = cc[e] == rc[e] && ((isnan(c) && isnan(r)) || c == r || fabs(c - r) <= tol);
            if (!same && bad++ == 0)
                snprintf(first, size, "row %lld: (%d, %.17g), CPU (%d, %.17g)", (long long)i,
                         cc[e], c, rc[e], r);
        }
    }
    return bad;
}

/* The profile the library returned, as text: one line of stages, then (hySpMM) the host
 * bandwidths, then (--profile-bins) a table of the row bins. */
static void print_profile(const nz_spgemm_profile_t *p) {
    double sum = 0.0;
    printf("profile (%s): wall %.3f ms, stages ms:", nz_spgemm_alg_name(p->alg),
           1e3 * p->wall_seconds);
    for (int i = 0; i < p->stage_count; i++) {
        printf(" %s %.3f", p->stage_names[i], 1e3 * p->stage_seconds[i]);
        sum += p->stage_seconds[i];
    }
    printf(" | sum %.3f", 1e3 * sum);
    if (sum > 0.0) printf(" overlap %.3f", p->wall_seconds / sum);
    printf("\n");
    if (p->host_copy_bytes_per_second > 0.0)
        printf("profile host GB/s: in the pipeline expand %.2f, copy-out %.2f; on all threads "
               "expand alone %.2f, host memcpy %.2f (expand alone %.0f%% of memcpy)\n",
               1e-9 * p->expand_bytes_per_second, 1e-9 * p->copy_out_bytes_per_second,
               1e-9 * p->expand_alone_bytes_per_second, 1e-9 * p->host_copy_bytes_per_second,
               100.0 * p->expand_alone_bytes_per_second / p->host_copy_bytes_per_second);
    if (p->bin_count == 0) return;
    printf("profile bins: dense_from bin %d, max shared bin %d\n", p->dense_from_bin,
           p->max_shared_bin);
    printf("  bin  group  sym rows    sym ms  num rows   C entries    num ms\n");
    for (int b = 0; b < p->bin_count; b++) {
        if (p->symbolic_rows[b] == 0 && p->numeric_rows[b] == 0) continue;
        printf("  %3d %6d %9lld %9.3f %9lld %11lld %9.3f\n", b, p->bin_threads[b],
               (long long)p->symbolic_rows[b], 1e3 * p->symbolic_bin_seconds[b],
               (long long)p->numeric_rows[b], (long long)p->numeric_entries[b],
               1e3 * p->numeric_bin_seconds[b]);
    }
}

/* One `nz spgemm` between its phases. */
typedef struct spgemm_command {
    spgemm_options_t o;
    nz_context_t *ctx;
    nz_matrix_t *A, *B, *C;
    const nz_matrix_t *right;        /* B, or A when no B is given */
    nz_matrix_t *R, *absA, *absB, *bound; /* --check: the CPU result and its error bound */
    nz_spgemm_info_t info;
    nz_spgemm_profile_t profile;
} spgemm_command_t;

/* Read A (and B), take device 0 for a GPU algorithm, and compute C (with its profile). */
static int spgemm_multiply(spgemm_command_t *c) {
    nz_context_t *ctx = c->ctx;
    const spgemm_options_t *o = &c->o;
    const nz_spgemm_alg_t alg = o->spgemm.alg;
    int rc = NZ_EXIT_OK;
    NZ_CLI_TRY(nz_matrix_read(ctx, &c->A, o->a_path, o->value_type));
    if (o->b_path != NULL) NZ_CLI_TRY(nz_matrix_read(ctx, &c->B, o->b_path, o->value_type));
    c->right = c->B != NULL ? c->B : c->A;
    int gpu = alg == NZ_SPGEMM_ESC || alg == NZ_SPGEMM_HYSPMM || alg == NZ_SPGEMM_HASH ||
              (alg == NZ_SPGEMM_AUTO && nz_device_count() > 0);
    if (gpu) NZ_CLI_TRY(nz_context_set_device(ctx, 0, NULL));
    NZ_CLI_TRY(o->profile != 0 ? nz_spgemm_profile(ctx, &c->C, &c->profile, c->A, c->right,
                                                   &o->spgemm, o->profile, &c->info)
                               : nz_spgemm(ctx, &c->C, c->A, c->right, &o->spgemm, &c->info));
cleanup:
    return rc;
}

/* The line of the result, then the profile (--profile). */
static void spgemm_report(const spgemm_command_t *c) {
    const nz_spgemm_info_t *info = &c->info;
    nz_matrix_info_t ci;
    nz_matrix_info(c->ctx, &ci, c->C);
    printf("C %lld x %lld nnz %lld products %lld alg %s time %.6f s (symbolic %.6f numeric %.6f "
           "transfer %.6f) GFLOP/s %.3f panels %lld",
           (long long)ci.rows, (long long)ci.cols, (long long)ci.nnz, (long long)info->products,
           nz_spgemm_alg_name(info->alg), info->seconds, info->symbolic_seconds,
           info->numeric_seconds, info->transfer_seconds,
           info->seconds > 0.0 ? 2.0 * (double)info->products / info->seconds * 1e-9 : 0.0,
           (long long)info->panels);
    if (info->panels > 1 && info->stage_seconds_sum > 0.0)
        printf(" overlap %.3f", info->seconds / info->stage_seconds_sum);
    if (info->peak_device_bytes > 0)
        printf(" peak-device-bytes %lld", (long long)info->peak_device_bytes);
    printf("\n");
    if (c->o.profile != 0) print_profile(&c->profile);
    fflush(stdout);
}

/* --check: C against the CPU algorithm's result, within the bound of compare(). */
static int spgemm_check(spgemm_command_t *c) {
    nz_context_t *ctx = c->ctx;
    nz_spgemm_options_t cpu = c->o.spgemm;
    int rc = NZ_EXIT_OK;
    cpu.alg = NZ_SPGEMM_CPU;
    NZ_CLI_TRY(nz_spgemm(ctx, &c->R, c->A, c->right, &cpu, NULL));
    NZ_CLI_TRY(absolute_copy(ctx, &c->absA, c->A));
    NZ_CLI_TRY(absolute_copy(ctx, &c->absB, c->right));
    NZ_CLI_TRY(nz_spgemm(ctx, &c->bound, c->absA, c->absB, &cpu, NULL));
    char first[256];
    int64_t bad = compare(ctx, c->A, c->C, c->R, c->bound, c->o.value_type, first, sizeof first);
    if (bad != 0) {
        nz_cli_error(CMD, "check failed: %lld mismatches against the CPU result, first: %s",
                     (long long)bad, first);
        return NZ_EXIT_FAIL;
    }
    printf("check ok\n");
cleanup:
    return rc;
}

/* Parse; C = A B and its line; --check; -o. */
int nz_cmd_spgemm(int argc, char **argv) {
    spgemm_command_t c;
    memset(&c, 0, sizeof c);
    int rc = parse_options(argc, argv, &c.o);
    if (rc == NZ_CLI_HELP) return NZ_EXIT_OK;
    if (rc != NZ_EXIT_OK) return rc;
    nz_status_t status = nz_cli_context_create(&c.ctx);
    if (status != NZ_SUCCESS) {
        nz_cli_error(CMD, "cannot create a context: %s", nz_status_string(status));
        rc = NZ_EXIT_FAIL;
        goto cleanup;
    }
    if ((rc = spgemm_multiply(&c)) != NZ_EXIT_OK) goto cleanup;
    spgemm_report(&c);
    if (c.o.check && (rc = spgemm_check(&c)) != NZ_EXIT_OK) goto cleanup;
    if (c.o.out_path != NULL) rc = nz_cli_write_matrix(CMD, c.ctx, c.C, c.o.out_path);

cleanup:
    nz_matrix_destroy(&c.A);
    nz_matrix_destroy(&c.B);
    nz_matrix_destroy(&c.C);
    nz_matrix_destroy(&c.R);
    nz_matrix_destroy(&c.absA);
    nz_matrix_destroy(&c.absB);
    nz_matrix_destroy(&c.bound);
    nz_context_destroy(&c.ctx);
    return rc;
}
