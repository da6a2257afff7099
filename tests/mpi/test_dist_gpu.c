/* test_dist_gpu.c: GPU ranks (several may share one device): distributed SpMV and CG with device
 * blocks and vectors, halo messages passed as device pointers (CUDA-aware MPI) and staged
 * through pinned host memory, against the host ranks. Skips (77) without a device. */
#include "dist_test.h"

static void gpu_pass(int force_staging) {
    nz_context_t *ctx = NULL, *hctx = NULL;
    nz_dist_device_t *dev = NULL;
    nz_dist_matrix_t *dA = NULL, *hA = NULL;
    nz_dist_options_t opt;
    nz_dist_layout_t L;
    int cuda_device = -1, aware = 0;
    DT_OK(ctx, nz_context_create(&ctx));
    DT_OK(hctx, nz_context_create(&hctx));
    DT_OK(ctx, nz_dist_device_bind(ctx, MPI_COMM_WORLD, force_staging, &dev));
    DT_OK(ctx, nz_dist_device_info(dev, &cuda_device, &aware));
    memset(&opt, 0, sizeof opt);
    opt.device = dev;
    for (int t = 0; t < 2; t++) {
        const nz_value_type_t vt = t == 0 ? NZ_F64 : NZ_F32;
        const size_t vs = dt_size_of(vt);
        void *b = NULL, *hb = NULL;
        DT_OK(ctx, nz_dist_gen_fe3d(ctx, &dA, MPI_COMM_WORLD, 12, vt, &opt, &b, NULL));
        DT_OK(hctx, nz_dist_gen_fe3d(hctx, &hA, MPI_COMM_WORLD, 12, vt, NULL, &hb, NULL));
        DT_OK(ctx, nz_dist_matrix_layout(dA, &L));
        DT_CHECK(L.location == NZ_DEVICE, "device layout");
        const int64_t rows = L.row_end - L.row_begin;
        char *x = malloc(rows * vs + 8), *y = malloc(rows * vs + 8), *hy = malloc(rows * vs + 8);
        void *dx = NULL, *dy = NULL;
        for (int64_t i = 0; i < rows; i++) dt_set(x, vt, i, dt_value(L.row_begin + i, 4));
        DT_OK(ctx, nz_device_malloc(ctx, &dx, rows * vs + 8));
        DT_OK(ctx, nz_device_malloc(ctx, &dy, rows * vs + 8));
        DT_OK(ctx, nz_device_copy_from_host(ctx, dx, x, rows * vs));
        /* SpMV: device against host ranks */
        DT_OK(ctx, nz_dist_spmv(dA, 1.0, dx, 0.0, dy));
        DT_OK(ctx, nz_device_copy_to_host(ctx, y, dy, rows * vs));
        DT_OK(hctx, nz_dist_spmv(hA, 1.0, x, 0.0, hy));
        double worst = 0.0;
        for (int64_t i = 0; i < rows; i++)
            worst = fmax(worst, fabs(dt_get(y, vt, i) - dt_get(hy, vt, i)));
        DT_CHECK(worst <= (vt == NZ_F32 ? 1e-5 : 1e-13), "spmv %s staging %d: max diff %g",
                 vt == NZ_F32 ? "f32" : "f64", force_staging, worst);
        /* CG from the same x0 */
        nz_cg_options_t co;
        nz_cg_result_t dres, hres;
        memset(&co, 0, sizeof co);
        co.rtol = vt == NZ_F32 ? 1e-5 : 1e-10;
        co.precond = t == 0 ? NZ_PRECOND_JACOBI : NZ_PRECOND_NONE;
        memcpy(hy, x, rows * vs);
        DT_OK(ctx, nz_dist_cg_solve(ctx, dA, b, dx, &co, &dres));
        DT_OK(hctx, nz_dist_cg_solve(hctx, hA, hb, hy, &co, &hres));
        DT_OK(ctx, nz_device_copy_to_host(ctx, y, dx, rows * vs));
        long long di = dres.iterations, hi = hres.iterations;
        DT_CHECK(di >= hi - 1 && di <= hi + 1, "cg %lld iterations on the GPU, %lld on the host", di, hi);
        worst = 0.0;
        double xmax = 0.0;
        for (int64_t i = 0; i < rows; i++) {
            worst = fmax(worst, fabs(dt_get(y, vt, i) - dt_get(hy, vt, i)));
            xmax = fmax(xmax, fabs(dt_get(hy, vt, i)));
        }
        MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &xmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        DT_CHECK(worst <= (vt == NZ_F32 ? 1e-3 : 1e-7) * xmax, "cg solution differs by %g", worst);
        if (dt_rank == 0)
            printf("  gpu %s %s: device %d, %s, cg %lld iterations (host %lld), diff %.2e\n",
                   vt == NZ_F32 ? "f32" : "f64", co.precond ? "jacobi" : "plain", cuda_device,
                   aware ? "CUDA-aware MPI" : "staged through pinned host memory", di, hi, worst);
        free(x);
        free(y);
        free(hy);
        nz_device_free(ctx, dx);
        nz_device_free(ctx, dy);
        nz_device_free(ctx, b);
        nz_free(hctx, hb);
        nz_dist_matrix_destroy(&dA);
        nz_dist_matrix_destroy(&hA);
    }
    nz_context_destroy(&ctx);
    nz_context_destroy(&hctx);
    nz_dist_device_release(&dev);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &dt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dt_size);
    int count = nz_device_count(), fewest = 0;
    MPI_Allreduce(&count, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (fewest == 0) {
        /* the binding must refuse on every rank, with the same message */
        nz_context_t *ctx = NULL;
        nz_dist_device_t *dev = NULL;
        DT_OK(ctx, nz_context_create(&ctx));
        nz_status_t s = nz_dist_device_bind(ctx, MPI_COMM_WORLD, 0, &dev);
        DT_CHECK(s == NZ_ERR_NO_DEVICE && dev == NULL, "bind without a device: %d", (int)s);
        nz_context_destroy(&ctx);
        int failed = dt_finish("test_dist_gpu (no device)");
        if (dt_rank == 0 && !failed) printf("SKIP: no CUDA device (or built without CUDA)\n");
        MPI_Finalize();
        return failed ? 1 : 77;
    }
    gpu_pass(0);
    gpu_pass(1);
    int status = dt_finish("test_dist_gpu");
    MPI_Finalize();
    return status;
}
