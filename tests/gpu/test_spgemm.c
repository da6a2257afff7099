/* test_spgemm.c (GPU): every GPU SpGEMM algorithm against the CPU algorithm: identical structure,
 * values within the summation bound; shapes, bins, dense rows, row panels, a limited device
 * budget. Device operands, allocation failures and the profile: test_spgemm_api.c. */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

static const nz_spgemm_alg_t gpu_algs[] = {NZ_SPGEMM_HASH, NZ_SPGEMM_ESC, NZ_SPGEMM_HYSPMM};
#define NUM_GPU_ALGS 3
static int64_t compared_entries, runs;
static int quick; /* NZ_TEST_QUICK (compute-sanitizer): lighter cases, see each test */

/* A host CSR copy of M with |values| in double. */
static nz_matrix_t *absolute_copy(nz_context_t *ctx, const nz_matrix_t *M) {
    const int64_t *o;
    const int32_t *c;
    const void *v;
    nz_matrix_info_t info;
    NZT_OK(ctx, nz_matrix_info(ctx, &info, M));
    NZT_OK(ctx, nz_matrix_csr_arrays(ctx, &o, &c, &v, M));
    double *a = nzt_malloc((size_t)(info.nnz > 0 ? info.nnz : 1) * sizeof(double));
    for (int64_t k = 0; k < info.nnz; k++)
        a[k] = fabs(info.value_type == NZ_F32 ? (double)((const float *)v)[k] : ((const double *)v)[k]);
    nz_matrix_t *out = NULL;
    NZT_OK(ctx, nz_matrix_create_csr(ctx, &out, info.rows, info.cols, NZ_I64, o, c, NZ_F64, a));
    free(a);
    return out;
}

/* The CPU result and the bound |A||B| for one product, computed once for all GPU algorithms. */
typedef struct reference {
    nz_matrix_t *R, *bound;
    nz_spgemm_info_t info;
} reference_t;

static void reference_make(nz_context_t *ctx, reference_t *ref, const nz_matrix_t *A,
                           const nz_matrix_t *B) {
    nz_spgemm_options_t cpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.alg = NZ_SPGEMM_CPU;
    NZT_OK(ctx, nz_spgemm(ctx, &ref->R, A, B, &cpu, &ref->info));
    nz_matrix_t *absA = absolute_copy(ctx, A), *absB = absolute_copy(ctx, B);
    NZT_OK(ctx, nz_spgemm(ctx, &ref->bound, absA, absB, &cpu, NULL));
    nz_matrix_destroy(&absA);
    nz_matrix_destroy(&absB);
}

static void reference_free(reference_t *ref) {
    nz_matrix_destroy(&ref->R);
    nz_matrix_destroy(&ref->bound);
}

/* Identical structure; |c - r| <= 4 eps (k_i + 2) (|A||B|)_ij with k_i the length of A's row i
 * (both sides round at most k_i additions); NaN where the CPU has NaN. */
static void compare(nz_context_t *ctx, const char *what, const nz_matrix_t *A, const nz_matrix_t *C,
                    const reference_t *ref) {
    const int64_t *ao, *co, *ro;
    const int32_t *ac, *cc, *rc, *bc;
    const void *av, *cv, *rv, *bv;
    const int64_t *bo;
    nz_matrix_info_t ci, ri;
    NZT_OK(NULL, nz_matrix_info(ctx, &ci, C));
    NZT_OK(NULL, nz_matrix_info(ctx, &ri, ref->R));
    NZT_OK(NULL, nz_matrix_csr_arrays(ctx, &ao, &ac, &av, A));
    NZT_OK(NULL, nz_matrix_csr_arrays(ctx, &co, &cc, &cv, C));
    NZT_OK(NULL, nz_matrix_csr_arrays(ctx, &ro, &rc, &rv, ref->R));
    NZT_OK(NULL, nz_matrix_csr_arrays(ctx, &bo, &bc, &bv, ref->bound));
    if (ci.rows != ri.rows || ci.cols != ri.cols || ci.nnz != ri.nnz ||
        ci.value_type != ri.value_type || ci.format != NZ_FORMAT_CSR || ci.location != NZ_HOST) {
        NZT_CHECK(0, "%s: C %lld x %lld nnz %lld, CPU %lld x %lld nnz %lld", what,
                  (long long)ci.rows, (long long)ci.cols, (long long)ci.nnz, (long long)ri.rows,
                  (long long)ri.cols, (long long)ri.nnz);
        return;
    }
    const double eps = ci.value_type == NZ_F32 ? 1.1920929e-7 : 2.220446049250313e-16;
    int64_t bad = 0;
    for (int64_t i = 0; i < ri.rows && bad < 3; i++) {
        if (co[i + 1] != ro[i + 1]) {
            NZT_CHECK(0, "%s: row %lld ends at %lld, CPU %lld", what, (long long)i,
                      (long long)co[i + 1], (long long)ro[i + 1]);
            bad++;
            continue;
        }
        const double k = (double)(ao[i + 1] - ao[i]);
        for (int64_t e = ro[i]; e < ro[i + 1] && bad < 3; e++) {
            double c = nzi_get(cv, ci.value_type, e), r = nzi_get(rv, ri.value_type, e);
            double tol = 4.0 * eps * (k + 2.0) * ((const double *)bv)[e];
            if (cc[e] != rc[e] || !((isnan(c) && isnan(r)) || c == r || fabs(c - r) <= tol)) {
                NZT_CHECK(0, "%s: row %lld: (%d, %.17g), CPU (%d, %.17g), tol %.3g", what,
                          (long long)i, cc[e], c, rc[e], r, tol);
                bad++;
            }
        }
    }
    compared_entries += ri.nnz;
}

/* The hash algorithm on device copies of A and B (row offsets int32 / int64, alternating, and
 * the other width for B; alg HASH or AUTO): the device C, copied back, must match the same
 * reference. A device C that does not fit a limited budget may be refused, with
 * NZ_ERR_DEVICE_OUT_OF_MEMORY and nothing returned. */
static void run_device(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                       const nz_matrix_t *B, const reference_t *ref, size_t limit) {
    static int64_t device_runs;
    nz_matrix_t *dA = NULL, *dB = NULL, *dC = NULL, *C = NULL;
    nz_matrix_info_t ia, ib, ic;
    nz_spgemm_options_t opt;
    nz_spgemm_info_t info;
    char label[340];
    NZT_OK(ctx, nz_matrix_info(ctx, &ia, A));
    NZT_OK(ctx, nz_matrix_info(ctx, &ib, B));
    if (ia.format != NZ_FORMAT_CSR || ib.format != NZ_FORMAT_CSR) return;
    const int bits = device_runs % 2 == 0 ? 32 : 64;
    memset(&opt, 0, sizeof opt);
    opt.alg = device_runs % 4 < 2 ? NZ_SPGEMM_HASH : NZ_SPGEMM_AUTO;
    opt.gpu_memory_limit = limit;
    device_runs++;
    snprintf(label, sizeof label, "%s [hash, device, offsets %d%s]", what, bits,
             limit != 0 ? ", limited" : "");
    NZT_OK(ctx, nz_matrix_to_device(ctx, &dA, A, bits == 32 ? NZ_I32 : NZ_I64));
    if (B == A) {
        dB = dA;
    } else {
        NZT_OK(ctx, nz_matrix_to_device(ctx, &dB, B, bits == 32 ? NZ_I64 : NZ_I32));
    }
    nz_status_t s = nz_spgemm(ctx, &dC, dA, dB, &opt, &info);
    if (s == NZ_SUCCESS) {
        runs++;
        NZT_OK(ctx, nz_matrix_info(ctx, &ic, dC));
        NZT_CHECK(ic.location == NZ_DEVICE && ic.format == NZ_FORMAT_CSR &&
                      ic.offset_type == NZ_I64 && info.alg == NZ_SPGEMM_HASH && info.panels == 1 &&
                      info.products == ref->info.products && info.seconds > 0.0 &&
                      info.transfer_seconds == 0.0,
                  "%s: location %d offsets %d alg %s panels %lld products %lld (CPU %lld)", label,
                  (int)ic.location, (int)ic.offset_type, nz_spgemm_alg_name(info.alg),
                  (long long)info.panels, (long long)info.products,
                  (long long)ref->info.products);
        NZT_OK(ctx, nz_matrix_to_host(ctx, &C, dC));
        compare(ctx, label, A, C, ref);
    } else {
        NZT_CHECK(limit != 0 && s == NZ_ERR_DEVICE_OUT_OF_MEMORY && dC == NULL,
                  "%s: status %d: %s", label, (int)s, nz_context_last_error(ctx));
    }
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&dC);
    if (dB != dA) nz_matrix_destroy(&dB);
    nz_matrix_destroy(&dA);
}

/* Run one GPU algorithm; returns its status (the caller decides which refusals are allowed).
 * The hash algorithm also runs on device copies (run_device). */
static nz_status_t run_one(nz_context_t *ctx, const char *what, nz_spgemm_alg_t alg,
                           const nz_matrix_t *A, const nz_matrix_t *B, const reference_t *ref,
                           size_t limit, nz_spgemm_info_t *info_out) {
    nz_spgemm_options_t opt;
    nz_spgemm_info_t info;
    nz_matrix_t *C = NULL;
    char label[300];
    memset(&opt, 0, sizeof opt);
    opt.alg = alg;
    opt.gpu_memory_limit = limit;
    snprintf(label, sizeof label, "%s [%s%s]", what, nz_spgemm_alg_name(alg),
             limit != 0 ? ", limited" : "");
    nz_status_t s = nz_spgemm(ctx, &C, A, B, &opt, &info);
    if (s == NZ_SUCCESS) {
        runs++;
        compare(ctx, label, A, C, ref);
        NZT_CHECK(info.alg == alg && info.products == ref->info.products && info.panels >= 1,
                  "%s: info alg %s products %lld (CPU %lld) panels %lld", label,
                  nz_spgemm_alg_name(info.alg), (long long)info.products,
                  (long long)ref->info.products, (long long)info.panels);
        NZT_CHECK(info.seconds > 0.0 && info.stage_seconds_sum >= 0.0, "%s: seconds %g", label,
                  info.seconds);
        if (info_out != NULL) *info_out = info;
    } else {
        NZT_CHECK(C == NULL, "%s: C set on failure", label);
    }
    nz_matrix_destroy(&C);
    if (alg == NZ_SPGEMM_HASH) run_device(ctx, what, A, B, ref, limit);
    return s;
}

/* Every GPU algorithm on A B; all must succeed in core. */
static void check_all(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                      const nz_matrix_t *B) {
    reference_t ref;
    memset(&ref, 0, sizeof ref);
    reference_make(ctx, &ref, A, B);
    for (int g = 0; g < NUM_GPU_ALGS; g++) {
        nz_status_t s = run_one(ctx, what, gpu_algs[g], A, B, &ref, 0, NULL);
        NZT_CHECK(s == NZ_SUCCESS, "%s [%s]: status %d: %s", what, nz_spgemm_alg_name(gpu_algs[g]),
                  (int)s, nz_context_last_error(ctx));
    }
    reference_free(&ref);
}

static void test_zoo(nz_context_t *ctx) {
    for (int k = 0; k < nzt_zoo_count(); k++) {
        for (int p = 0; p < 2; p++) {
            if (!nzt_shard_take()) continue;
            nz_value_type_t vt = p == 0 ? NZ_F64 : NZ_F32;
            nz_matrix_t *A = NULL, *T = NULL;
            char what[160];
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, vt, nzt_seed + (uint64_t)k));
            NZT_OK(ctx, nz_matrix_transpose(ctx, &T, A));
            nz_matrix_info_t ia;
            NZT_OK(ctx, nz_matrix_info(ctx, &ia, A));
            if (quick && ia.rows > 8 * ia.cols) {
                /* quick mode (compute-sanitizer): A*A^T of the tall matrix is nearly dense
                 * (4e8 entries); A^T*A takes the same long rows (of A^T) into a small C */
                snprintf(what, sizeof what, "zoo %s A^T*A %s", nzt_zoo_name(k), p ? "f32" : "f64");
                check_all(ctx, what, T, A);
            } else {
                snprintf(what, sizeof what, "zoo %s A*A^T %s", nzt_zoo_name(k), p ? "f32" : "f64");
                check_all(ctx, what, A, T);
            }
            if (ia.rows == ia.cols) {
                snprintf(what, sizeof what, "zoo %s A*A %s", nzt_zoo_name(k), p ? "f32" : "f64");
                check_all(ctx, what, A, A);
            }
            nz_matrix_destroy(&A);
            nz_matrix_destroy(&T);
        }
    }
}

/* NZ_TEST_QUICK=1 (compute-sanitizer): R-MAT up to scale 10 and a quarter of the mixed rows. */
static void test_generated(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *B = NULL;
    char what[160];
    for (int p = 0; p < 2; p++) {
        if (!nzt_shard_take()) continue;
        nz_value_type_t vt = p == 0 ? NZ_F64 : NZ_F32;
        const char *prec = p ? "f32" : "f64";
        NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 12, 11, 10, vt));
        snprintf(what, sizeof what, "laplace3d 12x11x10 squared %s", prec);
        check_all(ctx, what, A, A);
        nz_matrix_destroy(&A);
        NZT_OK(ctx, nz_gen_fe3d(ctx, &A, NULL, NULL, 12, vt));
        snprintf(what, sizeof what, "fe3d 12 squared %s", prec);
        check_all(ctx, what, A, A);
        nz_matrix_destroy(&A);
        for (int scale = 8; scale <= (quick ? 10 : 12); scale += 2) {
            NZT_OK(ctx, nz_gen_rmat(ctx, &A, scale, 16, 0, 0, 0, nzt_seed + (uint64_t)scale, vt));
            snprintf(what, sizeof what, "rmat scale %d squared %s", scale, prec);
            check_all(ctx, what, A, A);
            nz_matrix_destroy(&A);
        }
        /* rectangular with empty rows */
        NZT_OK(ctx, nz_gen_random(ctx, &A, 3000, 700, 1.5, nzt_seed + 31, vt));
        NZT_OK(ctx, nz_gen_random(ctx, &B, 700, 5000, 6, nzt_seed + 32, vt));
        snprintf(what, sizeof what, "random 3000x700 times 700x5000 %s", prec);
        check_all(ctx, what, A, B);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&B);
        /* every bin: row lengths of A from 1 to ~600 times rows of B of 40 over 60000 columns:
         * C rows from ~40 to ~20000 entries (the longest go to the dense accumulator) */
        const int64_t mixed_n = quick ? 500 : 2000; /* A is mixed_n x mixed_n */
        NZT_OK(ctx, nz_gen_mixed(ctx, &A, mixed_n, 3, 40, 600, nzt_seed + 33, vt));
        NZT_OK(ctx, nz_gen_random(ctx, &B, mixed_n, 60000, 40, nzt_seed + 34, vt));
        snprintf(what, sizeof what, "mixed %lld times random %lldx60000 %s", (long long)mixed_n,
                 (long long)mixed_n, prec);
        check_all(ctx, what, A, B);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&B);
        /* B wider than a shared-memory bitmap (2^21 columns, 256 KB of bits): C's rows of ~16000
         * entries take the dense path with its bitmap in global memory, in both phases */
        NZT_OK(ctx, nz_gen_random(ctx, &A, 100, 100, 8, nzt_seed + 35, vt));
        NZT_OK(ctx, nz_gen_random(ctx, &B, 100, (int64_t)1 << 21, 2000,
                                  nzt_seed + 36, vt));
        snprintf(what, sizeof what, "random 100x100 times random 100x2^21 %s", prec);
        check_all(ctx, what, A, B);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&B);
    }
    /* a product with no nonzeros: A's columns all meet empty rows of B */
    {
        NZT_OK(ctx, nzt_spgemm_empty_product(ctx, &A, &B));
        check_all(ctx, "no-nonzero product", A, B);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&B);
    }
}

/* The hash algorithm with the context's tunable NZ_TUNE_SPGEMM_SWEEP at each of 1 (from B's mean row length), 4, 8
 * and 32 lanes against one CPU reference: narrower sweeps than the group in bins 0..3 must give
 * the same structure and values within the bound (the default is 2 lanes with RANK=2, which the
 * other tests run). ranks: also NZ_TUNE_SPGEMM_RANK=1 (the earlier default: bins 0..2 sorted by
 * counting, every entry rescanning its row) with the default sweep (narrow kernels) and with 32
 * (the groups' own kernels), and RANK=0 (bitonic sort everywhere); NZ_TUNE_SPGEMM_ONEBIN=0
 * (small products binned again for the numeric phase, as large ones are), also with
 * NZ_TUNE_SPGEMM_SYMDENSE=2 and 0 (the symbolic phase's dense rule without its floor, and
 * only rows too long for shared memory dense). Each variant is parsed (nz_tunables_parse) onto the
 * context's tunables as they were and set on the context; they are restored after each run. */
static void check_sweeps(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                         const nz_matrix_t *B, bool ranks) {
    /* up to two NAME=VALUE settings per variant; the first `ranks ? 10 : 5` are run */
    static const char *const variants[][2] = {
        {"NZ_TUNE_SPGEMM_SWEEP=1", NULL},  {"NZ_TUNE_SPGEMM_SWEEP=4", NULL},
        {"NZ_TUNE_SPGEMM_SWEEP=8", NULL},  {"NZ_TUNE_SPGEMM_SWEEP=32", NULL},
        {"NZ_TUNE_SPGEMM_ONEBIN=0", NULL}, {"NZ_TUNE_SPGEMM_RANK=1", NULL},
        {"NZ_TUNE_SPGEMM_SWEEP=32", "NZ_TUNE_SPGEMM_RANK=1"}, {"NZ_TUNE_SPGEMM_RANK=0", NULL},
        {"NZ_TUNE_SPGEMM_ONEBIN=0", "NZ_TUNE_SPGEMM_SYMDENSE=2"},
        {"NZ_TUNE_SPGEMM_ONEBIN=0", "NZ_TUNE_SPGEMM_SYMDENSE=0"}};
    reference_t ref;
    nz_tunables_t saved;
    char label[300];
    memset(&ref, 0, sizeof ref);
    reference_make(ctx, &ref, A, B);
    NZT_OK(ctx, nz_context_get_tunables(ctx, &saved));
    for (int v = 0; v < (ranks ? 10 : 5); v++) {
        nzt_set_tunables(ctx, &saved, variants[v], 2);
        snprintf(label, sizeof label, "%s, %s%s%s", what, variants[v][0],
                 variants[v][1] != NULL ? " " : "", variants[v][1] != NULL ? variants[v][1] : "");
        nz_status_t s = run_one(ctx, label, NZ_SPGEMM_HASH, A, B, &ref, 0, NULL);
        NZT_CHECK(s == NZ_SUCCESS, "%s [hash]: status %d: %s", label, (int)s,
                  nz_context_last_error(ctx));
        NZT_OK(ctx, nz_context_set_tunables(ctx, &saved));
    }
    reference_free(&ref);
}

/* Shapes whose rows of C fall in the bins of groups of 4..32 lanes, where the sweep width
 * applies: uniform random of mean 8 squared (rows of C of ~64 products over B rows of 0..16,
 * the benchmark's case), a random product with short rows of B (the automatic width is 4), the
 * zoo (a long row of A over rows of B of one entry, empty rows, power-law rows, dense 64 x 64,
 * ...; tall shapes as A^T*A, as in quick mode above) and R-MAT scales 10 and 12; each also with
 * NZ_TUNE_SPGEMM_RANK=1 and 0 (check_sweeps).
 * NZ_TEST_QUICK=1: double only, random 5000 x 5000, R-MAT scale 10 only; the RANK variants on
 * the two random products only. */
static void test_sweep(nz_context_t *ctx) {
    char what[200];
    for (int p = 0; p < (quick ? 1 : 2); p++) {
        const nz_value_type_t vt = p == 0 ? NZ_F64 : NZ_F32;
        const char *prec = p ? "f32" : "f64";
        const int64_t n = quick ? 5000 : 20000;
        nz_matrix_t *A = NULL, *B = NULL, *T = NULL;
        if (nzt_shard_take()) {
            NZT_OK(ctx, nz_gen_random(ctx, &A, n, n, 8, nzt_seed + 61, vt));
            snprintf(what, sizeof what, "sweep: random %lld mean 8 squared %s", (long long)n, prec);
            check_sweeps(ctx, what, A, A, true);
            nz_matrix_destroy(&A);
        }
        if (nzt_shard_take()) {
            NZT_OK(ctx, nz_gen_random(ctx, &A, n, 3000, 12, nzt_seed + 62, vt));
            NZT_OK(ctx, nz_gen_random(ctx, &B, 3000, n, 3, nzt_seed + 63, vt));
            snprintf(what, sizeof what, "sweep: random mean 12 times random mean 3 %s", prec);
            check_sweeps(ctx, what, A, B, true);
            nz_matrix_destroy(&A);
            nz_matrix_destroy(&B);
        }
        for (int k = 0; k < nzt_zoo_count(); k++) {
            if (!nzt_shard_take()) continue;
            nz_matrix_info_t ia;
            NZT_OK(ctx, nzt_zoo_matrix(ctx, &A, k, vt, nzt_seed + (uint64_t)k));
            NZT_OK(ctx, nz_matrix_transpose(ctx, &T, A));
            NZT_OK(ctx, nz_matrix_info(ctx, &ia, A));
            if (ia.rows == ia.cols) {
                snprintf(what, sizeof what, "sweep: zoo %s A*A %s", nzt_zoo_name(k), prec);
                check_sweeps(ctx, what, A, A, !quick);
            } else if (ia.rows > 8 * ia.cols) {
                snprintf(what, sizeof what, "sweep: zoo %s A^T*A %s", nzt_zoo_name(k), prec);
                check_sweeps(ctx, what, T, A, !quick);
            } else {
                snprintf(what, sizeof what, "sweep: zoo %s A*A^T %s", nzt_zoo_name(k), prec);
                check_sweeps(ctx, what, A, T, !quick);
            }
            nz_matrix_destroy(&A);
            nz_matrix_destroy(&T);
        }
        for (int scale = 10; scale <= (quick ? 10 : 12); scale += 2) {
            if (!nzt_shard_take()) continue;
            NZT_OK(ctx, nz_gen_rmat(ctx, &A, scale, 16, 0, 0, 0, nzt_seed + 64 + (uint64_t)scale, vt));
            snprintf(what, sizeof what, "sweep: rmat scale %d squared %s", scale, prec);
            check_sweeps(ctx, what, A, A, !quick);
            nz_matrix_destroy(&A);
        }
    }
}

/* Real matrices: A*A for the square ones, A*A^T for the first few rectangular ones; every
 * shard walks the same files, and NZ_TEST_QUICK takes every fourth. */
static int real_take(int index) {
    const int take = nzt_shard_take();
    return take && !(quick && index % 4 != 0);
}

static void real_check(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                       const nz_matrix_t *B, void *arg) {
    (void)arg;
    check_all(ctx, what, A, B);
}

static void test_real(nz_context_t *ctx) {
    nzt_spgemm_real(ctx, "test_spgemm", 4000000, real_take, real_check, NULL);
}

/* A budget that holds A, B and the per-row arrays but only about a tenth of C: the hash
 * algorithm must split C into many panels and still match; the others either do the same or
 * refuse cleanly with NZ_ERR_DEVICE_OUT_OF_MEMORY. */
static void test_out_of_core(nz_context_t *ctx) {
    for (int p = 0; p < 2; p++) {
        /* one precision x algorithm per shard slot; nothing to prepare if this shard has none */
        int take[NUM_GPU_ALGS], any = 0;
        for (int g = 0; g < NUM_GPU_ALGS; g++) any |= take[g] = nzt_shard_take();
        if (!any) continue;
        nz_value_type_t vt = p == 0 ? NZ_F64 : NZ_F32;
        const size_t entry = 4 + (vt == NZ_F32 ? 4 : 8);
        nz_matrix_t *A = NULL;
        NZT_OK(ctx, nz_gen_rmat(ctx, &A, 12, 16, 0, 0, 0, nzt_seed + 41, vt));
        reference_t ref;
        memset(&ref, 0, sizeof ref);
        reference_make(ctx, &ref, A, A);
        nz_matrix_info_t ia, ci;
        NZT_OK(ctx, nz_matrix_info(ctx, &ia, A));
        NZT_OK(ctx, nz_matrix_info(ctx, &ci, ref.R));
        size_t resident = (size_t)ia.nnz * entry + (size_t)(ia.rows + 1) * 16 +
                          (size_t)ia.rows * 4 + ((size_t)1 << 20);
        size_t limit = resident + (size_t)ci.nnz * entry / 10;
        for (int g = 0; g < NUM_GPU_ALGS; g++) {
            if (!take[g]) continue;
            nz_spgemm_info_t info;
            memset(&info, 0, sizeof info);
            nz_status_t s = run_one(ctx, p ? "rmat 12 out of core f32" : "rmat 12 out of core f64",
                                    gpu_algs[g], A, A, &ref, limit, &info);
            if (gpu_algs[g] == NZ_SPGEMM_HASH) {
                NZT_CHECK(s == NZ_SUCCESS && info.panels >= 5,
                          "hash with a %zu-byte budget (C %lld entries): status %d, %lld panels: %s",
                          limit, (long long)ci.nnz, (int)s, (long long)info.panels,
                          nz_context_last_error(ctx));
                NZT_CHECK(s != NZ_SUCCESS || info.peak_device_bytes <= (int64_t)limit,
                          "hash peak device bytes %lld above the budget %zu",
                          (long long)info.peak_device_bytes, limit);
                printf("test_spgemm: hash out of core: %lld panels, time %.4f s, stage sum %.4f s\n",
                       (long long)info.panels, info.seconds, info.stage_seconds_sum);
            } else {
                NZT_CHECK(s == NZ_SUCCESS || s == NZ_ERR_DEVICE_OUT_OF_MEMORY,
                          "%s with a %zu-byte budget: status %d: %s",
                          nz_spgemm_alg_name(gpu_algs[g]), limit, (int)s, nz_context_last_error(ctx));
                printf("test_spgemm: %s with a %zu-byte budget: %s, %lld panels\n",
                       nz_spgemm_alg_name(gpu_algs[g]), limit, nz_status_string(s),
                       (long long)info.panels);
            }
        }
        /* a budget too small for A itself is refused cleanly */
        nz_spgemm_options_t opt;
        nz_matrix_t *C = NULL;
        memset(&opt, 0, sizeof opt);
        opt.alg = NZ_SPGEMM_HASH;
        opt.gpu_memory_limit = 1024;
        NZT_CHECK(nz_spgemm(ctx, &C, A, A, &opt, NULL) == NZ_ERR_DEVICE_OUT_OF_MEMORY && C == NULL,
                  "1 KiB budget");
        reference_free(&ref);
        nz_matrix_destroy(&A);
    }
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    quick = nzt_env_flag("NZ_TEST_QUICK");
    if (nz_device_count() == 0) NZT_SKIP("no CUDA device");
    nz_context_t *ctx = NULL;
    NZT_OK(ctx, nz_context_create(&ctx));
    NZT_OK(ctx, nz_context_set_device(ctx, 0, NULL));
    test_zoo(ctx);
    test_generated(ctx);
    test_sweep(ctx);
    test_real(ctx);
    test_out_of_core(ctx);
    printf("test_spgemm: %lld GPU runs, %lld entries compared\n", (long long)runs,
           (long long)compared_entries);
    nz_context_destroy(&ctx);
    return nzt_finish("test_spgemm");
}
