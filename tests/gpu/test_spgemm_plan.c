/* test_spgemm_plan.c (GPU): device SpGEMM plans, SpGEAM, the Galerkin product and the device
 * transpose, each bitwise against the host's result on the same operands (32- and 64-bit row
 * offsets); pattern changes refused; allocation failures. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static nz_matrix_t *to_device(nz_context_t *ctx, const nz_matrix_t *A, nz_index_type_t ot) {
    nz_matrix_t *d = NULL;
    NZT_OK(ctx, nz_matrix_to_device(ctx, &d, A, ot));
    return d;
}

/* Device matrix dM equals host matrix H bitwise. */
static int device_equals(nz_context_t *ctx, const nz_matrix_t *dM, const nz_matrix_t *H) {
    nz_matrix_t *h = NULL;
    NZT_OK(ctx, nz_matrix_to_host(ctx, &h, dM));
    int same = nzt_csr_identical(ctx, h, H, 1);
    nz_matrix_destroy(&h);
    return same;
}

static void check_plan(nz_context_t *ctx, const char *what, const nz_matrix_t *A,
                       const nz_matrix_t *B, nz_index_type_t ot) {
    nz_spgemm_options_t cpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.alg = NZ_SPGEMM_CPU;
    nz_matrix_t *A2 = nzt_new_values(ctx, A, nzt_seed + 71), *B2 = nzt_new_values(ctx, B, nzt_seed + 72);
    nz_matrix_t *dA = to_device(ctx, A, ot), *dB = to_device(ctx, B, ot);
    nz_matrix_t *dA2 = to_device(ctx, A2, ot), *dB2 = to_device(ctx, B2, ot);
    nz_matrix_t *dC = NULL, *F = NULL, *F2 = NULL;
    nz_spgemm_plan_t *plan = NULL;
    NZT_OK(ctx, nz_spgemm_plan_create(ctx, &plan, &dC, dA, dB, NULL, NULL));
    NZT_OK(ctx, nz_spgemm(ctx, &F, A, B, &cpu, NULL));
    NZT_CHECK(device_equals(ctx, dC, F), "%s: the device plan's C differs from the CPU product", what);
    NZT_OK(ctx, nz_spgemm_plan_execute(plan, dA2, dB2, dC));
    NZT_OK(ctx, nz_spgemm(ctx, &F2, A2, B2, &cpu, NULL));
    NZT_CHECK(device_equals(ctx, dC, F2), "%s: new values differ from the CPU product", what);
    NZT_OK(ctx, nz_spgemm_plan_execute(plan, dA, dB, dC));
    NZT_CHECK(device_equals(ctx, dC, F), "%s: the first operands again differ", what);
    /* the plan across calls is deterministic: the same operands twice, the same bits */
    NZT_OK(ctx, nz_spgemm_plan_execute(plan, dA, dB, dC));
    NZT_CHECK(device_equals(ctx, dC, F), "%s: repeat differs", what);
    NZT_OK(ctx, nz_spgemm_plan_destroy(&plan));
    nz_matrix_destroy(&dC);
    nz_matrix_destroy(&F);
    nz_matrix_destroy(&F2);
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&dB);
    nz_matrix_destroy(&dA2);
    nz_matrix_destroy(&dB2);
    nz_matrix_destroy(&A2);
    nz_matrix_destroy(&B2);
}

static void real_plan(nz_context_t *ctx, const char *name, nz_matrix_t *M, void *arg) {
    (void)arg;
    check_plan(ctx, name, M, M, NZ_I32);
}

static void test_plans(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *B = NULL;
    for (int o = 0; o < 2; o++) {
        const nz_index_type_t ot = o ? NZ_I64 : NZ_I32;
        NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 12, 11, 10, NZ_F64));
        check_plan(ctx, "laplace3d squared", A, A, ot);
        nz_matrix_destroy(&A);
        NZT_OK(ctx, nz_gen_rmat(ctx, &A, 11, 8, 0, 0, 0, nzt_seed + 73, NZ_F64));
        check_plan(ctx, "rmat 11 squared (long rows)", A, A, ot);
        nz_matrix_destroy(&A);
        NZT_OK(ctx, nz_gen_random(ctx, &A, 300, 80, 1.5, nzt_seed + 74, NZ_F32));
        NZT_OK(ctx, nz_gen_random(ctx, &B, 80, 500, 40, nzt_seed + 75, NZ_F32));
        check_plan(ctx, "random 300x80 times 80x500 f32 (empty rows, 32 lanes)", A, B, ot);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&B);
    }
    /* real matrices of the test data */
    int done = nzt_each_square_data_matrix(ctx, 6, 200000, real_plan, NULL);
    NZT_CHECK(done > 0, "no real test matrix was checked");
}

static void test_pattern_refused(nz_context_t *ctx) {
    for (int which = 0; which < 2; which++) {
        nz_matrix_t *A = NULL, *S = NULL, *dA = NULL, *dS = NULL, *dC = NULL;
        nz_spgemm_plan_t *plan = NULL;
        if (which == 0)
            NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 5, 5, 5, NZ_F64)); /* light rows */
        else
            NZT_OK(ctx, nz_gen_rmat(ctx, &A, 11, 8, 0, 0, 0, nzt_seed + 76, NZ_F64)); /* heavy too */
        S = nzt_shifted_pattern(ctx, A, which == 0 ? 40 : 700);
        dA = to_device(ctx, A, NZ_I32);
        dS = to_device(ctx, S, NZ_I32);
        NZT_OK(ctx, nz_spgemm_plan_create(ctx, &plan, &dC, dA, dA, NULL, NULL));
        nz_status_t s = nz_spgemm_plan_execute(plan, dS, dA, dC);
        NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT && strstr(nz_context_last_error(ctx), "pattern"),
                  "device %d: a changed pattern: status %d (%s)", which, (int)s,
                  nz_context_last_error(ctx));
        s = nz_spgemm_plan_execute(plan, dA, dS, dC);
        NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "device %d: a changed B: status %d", which, (int)s);
        NZT_CHECK(nz_spgemm_plan_execute(plan, A, A, dC) == NZ_ERR_WRONG_LOCATION, "host operands");
        /* the plan still works after the refusals */
        NZT_OK(ctx, nz_spgemm_plan_execute(plan, dA, dA, dC));
        NZT_OK(ctx, nz_spgemm_plan_destroy(&plan));
        nz_matrix_destroy(&dC);
        nz_matrix_destroy(&dA);
        nz_matrix_destroy(&dS);
        nz_matrix_destroy(&A);
        nz_matrix_destroy(&S);
    }
}

static void test_spgeam(nz_context_t *ctx) {
    for (int o = 0; o < 2; o++) {
        const nz_index_type_t ot = o ? NZ_I64 : NZ_I32;
        for (int v = 0; v < 2; v++) {
            const nz_value_type_t vt = v ? NZ_F64 : NZ_F32;
            nz_matrix_t *A = NULL, *B = NULL, *H = NULL, *dC = NULL, *A2 = NULL, *dA2 = NULL;
            NZT_OK(ctx, nz_gen_random(ctx, &A, 400, 300, 6, nzt_seed + 80, vt));
            NZT_OK(ctx, nz_gen_random(ctx, &B, 400, 300, 40, nzt_seed + 81, vt));
            nz_matrix_t *dA = to_device(ctx, A, ot), *dB = to_device(ctx, B, ot);
            const double ab[3][2] = {{1.5, -2.0}, {0.0, 1.0}, {3.0, 0.0}};
            for (int t = 0; t < 3; t++) {
                NZT_OK(ctx, nz_spgeam(ctx, &H, ab[t][0], A, ab[t][1], B));
                NZT_OK(ctx, nz_spgeam(ctx, &dC, ab[t][0], dA, ab[t][1], dB));
                NZT_CHECK(device_equals(ctx, dC, H), "spgeam %s offsets %d alpha %g beta %g: "
                          "device differs from host", nzt_vt_name(vt), o ? 64 : 32, ab[t][0], ab[t][1]);
                nz_matrix_destroy(&H);
                nz_matrix_destroy(&dC);
            }
            nz_spgeam_plan_t *plan = NULL;
            NZT_OK(ctx, nz_spgeam_plan_create(ctx, &plan, &dC, 1.0, dA, 1.0, dB));
            A2 = nzt_new_values(ctx, A, nzt_seed + 82);
            dA2 = to_device(ctx, A2, ot);
            NZT_OK(ctx, nz_spgeam_plan_execute(plan, -1.0, dA2, 0.5, dB, dC));
            NZT_OK(ctx, nz_spgeam(ctx, &H, -1.0, A2, 0.5, B));
            NZT_CHECK(device_equals(ctx, dC, H), "spgeam plan %s: device differs", nzt_vt_name(vt));
            nz_status_t s = nz_spgeam_plan_execute(plan, 1.0, dB, 1.0, dA, dC);
            NZT_CHECK(s == NZ_ERR_INVALID_ARGUMENT, "spgeam plan, swapped operands: status %d", (int)s);
            NZT_OK(ctx, nz_spgeam_plan_destroy(&plan));
            nz_matrix_destroy(&H);
            nz_matrix_destroy(&dC);
            nz_matrix_destroy(&dA);
            nz_matrix_destroy(&dB);
            nz_matrix_destroy(&dA2);
            nz_matrix_destroy(&A2);
            nz_matrix_destroy(&A);
            nz_matrix_destroy(&B);
        }
    }
}

static void test_rap_and_transpose(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *P = NULL, *T = NULL, *dT = NULL, *H = NULL, *dC = NULL;
    nz_spgemm_options_t cpu;
    memset(&cpu, 0, sizeof cpu);
    cpu.alg = NZ_SPGEMM_CPU;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 12, 12, 12, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &P, 1728, 300, 2, nzt_seed + 90, NZ_F64));
    for (int o = 0; o < 2; o++) {
        const nz_index_type_t ot = o ? NZ_I64 : NZ_I32;
        nz_matrix_t *dA = to_device(ctx, A, ot), *dP = to_device(ctx, P, ot);
        NZT_OK(ctx, nz_matrix_transpose(ctx, &T, P));
        NZT_OK(ctx, nz_matrix_transpose(ctx, &dT, dP));
        NZT_CHECK(device_equals(ctx, dT, T), "device transpose differs (offsets %d)", o ? 64 : 32);
        nz_rap_plan_t *plan = NULL;
        NZT_OK(ctx, nz_rap_plan_create(ctx, &plan, &dC, dA, dP, NULL, NULL));
        NZT_OK(ctx, nz_rap(ctx, &H, A, P, &cpu));
        NZT_CHECK(device_equals(ctx, dC, H), "rap: device differs from host (offsets %d)", o ? 64 : 32);
        nz_matrix_destroy(&H);
        nz_matrix_t *A2 = nzt_new_values(ctx, A, nzt_seed + 91), *P2 = nzt_new_values(ctx, P, nzt_seed + 92);
        nz_matrix_t *dA2 = to_device(ctx, A2, ot), *dP2 = to_device(ctx, P2, ot);
        NZT_OK(ctx, nz_rap_plan_execute(plan, dA2, dP2, dC));
        NZT_OK(ctx, nz_rap(ctx, &H, A2, P2, &cpu));
        NZT_CHECK(device_equals(ctx, dC, H), "rap plan, new values: device differs from host");
        NZT_OK(ctx, nz_rap_plan_destroy(&plan));
        nz_matrix_destroy(&H);
        nz_matrix_destroy(&dC);
        nz_matrix_destroy(&T);
        nz_matrix_destroy(&dT);
        nz_matrix_destroy(&dA);
        nz_matrix_destroy(&dP);
        nz_matrix_destroy(&dA2);
        nz_matrix_destroy(&dP2);
        nz_matrix_destroy(&A2);
        nz_matrix_destroy(&P2);
    }
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&P);
}

/* Fail the k-th allocation (host or device) until the device RAP plan (transpose, two SpGEMM
 * plans, their numeric phases) and a device SpGEAM succeed; nothing may leak. */
static void test_allocation_failures(nz_context_t *ctx) {
    nz_matrix_t *A = NULL, *P = NULL;
    NZT_OK(ctx, nz_gen_laplace3d(ctx, &A, 6, 6, 6, NZ_F64));
    NZT_OK(ctx, nz_gen_random(ctx, &P, 216, 40, 2, nzt_seed + 95, NZ_F64));
    nz_matrix_t *dA = to_device(ctx, A, NZ_I32), *dP = to_device(ctx, P, NZ_I32);
    for (int which = 0; which < 2; which++) {
        nz_alloc_stats_t before, after;
        int k, succeeded = 0;
        NZT_OK(ctx, nz_context_alloc_stats(ctx, &before));
        for (k = 1; k < 400 && !succeeded; k++) {
            nz_matrix_t *C = NULL;
            nz_rap_plan_t *plan = NULL;
            nz_status_t s;
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, k));
            if (which == 0) {
                s = nz_rap_plan_create(ctx, &plan, &C, dA, dP, NULL, NULL);
                if (s == NZ_SUCCESS) s = nz_rap_plan_execute(plan, dA, dP, C);
            } else {
                s = nz_spgeam(ctx, &C, 1.0, dA, 2.0, dA);
            }
            NZT_OK(ctx, nz_context_fail_alloc_after(ctx, 0));
            if (s == NZ_SUCCESS)
                succeeded = 1;
            else
                NZT_CHECK(s == NZ_ERR_OUT_OF_MEMORY || s == NZ_ERR_DEVICE_OUT_OF_MEMORY,
                          "case %d k %d: status %d (%s)", which, k, (int)s, nz_context_last_error(ctx));
            nz_rap_plan_destroy(&plan);
            nz_matrix_destroy(&C);
            NZT_OK(ctx, nz_context_alloc_stats(ctx, &after));
            NZT_CHECK(after.live_blocks == before.live_blocks, "case %d k %d: %lld blocks leaked",
                      which, k, (long long)(after.live_blocks - before.live_blocks));
        }
        NZT_CHECK(succeeded && k > 3, "case %d: succeeded after %d injected failures", which, k - 1);
    }
    nz_matrix_destroy(&dA);
    nz_matrix_destroy(&dP);
    nz_matrix_destroy(&A);
    nz_matrix_destroy(&P);
}

int main(int argc, char **argv) {
    nzt_init(argc, argv);
    nz_context_t *ctx = nzt_gpu_context("");
    test_plans(ctx);
    test_pattern_refused(ctx);
    test_spgeam(ctx);
    test_rap_and_transpose(ctx);
    test_allocation_failures(ctx);
    nz_context_destroy(&ctx);
    return nzt_finish("gpu/test_spgemm_plan");
}
