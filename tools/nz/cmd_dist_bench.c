/* cmd_dist_bench.c: `nz bench --dist`: strong and weak scaling of the distributed SpMV and CG. */
#ifdef NZ_HAVE_DIST
#include "cmd_dist.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One row of a scaling table on the first p ranks of the world (the others wait). */
typedef struct scaling_row {
    int ranks;
    int64_t unknowns, nnz, halo_max;
    nz_dist_spmv_profile_t prof;
    double cg_iteration;
    double allreduce; /* seconds for one MPI_Allreduce of 3 doubles, max over ranks */
} scaling_row_t;

/* The problems of the scaling tables. */
typedef enum { SCALING_FE3D, SCALING_LAPLACE3D } scaling_problem_t;

/* The mean time of one MPI_Allreduce of three doubles (what each CG reduction sends) over
 * `repeats`, after a barrier; the maximum over the ranks of comm. */
#define DIST_ALLREDUCE_REPEATS 200
static double time_allreduce(MPI_Comm comm) {
    double buffer[3] = {1.0, 2.0, 0.0}, t, worst;
    MPI_Allreduce(MPI_IN_PLACE, buffer, 3, MPI_DOUBLE, MPI_SUM, comm); /* warm-up */
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (int k = 0; k < DIST_ALLREDUCE_REPEATS; k++)
        MPI_Allreduce(MPI_IN_PLACE, buffer, 3, MPI_DOUBLE, MPI_SUM, comm);
    t = (MPI_Wtime() - t0) / DIST_ALLREDUCE_REPEATS;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
    return worst;
}

static nz_status_t scaling_run(nz_context_t *ctx, const dist_cli_t *o,
                               const nz_dist_options_t *opt, MPI_Comm comm,
                               scaling_problem_t problem, int64_t n, scaling_row_t *row) {
    nz_status_t status;
    nz_dist_matrix_t *dA = NULL;
    nz_dist_layout_t L;
    void *b = NULL, *x = NULL, *y = NULL;
    const int device = opt->device != NULL;
    const size_t vs = o->value_type == NZ_F32 ? 4 : 8;
    if (problem == SCALING_FE3D)
        status = nz_dist_gen_fe3d(ctx, &dA, comm, n, o->value_type, opt, &b, NULL);
    else
        status = nz_dist_gen_laplace3d(ctx, &dA, comm, n, n, n, o->value_type, opt);
    if (status != NZ_SUCCESS) return status;
    status = nz_dist_matrix_layout(dA, &L);
    const int64_t rows = L.row_end - L.row_begin;
    if (status == NZ_SUCCESS && problem == SCALING_LAPLACE3D) {
        /* b = 1 (the Laplacian generator makes no right-hand side) */
        void *ones = NULL;
        status = nz_malloc(ctx, &ones, (size_t)rows * vs + 16);
        for (int64_t i = 0; status == NZ_SUCCESS && i < rows; i++)
            nz_cli_value_set(ones, o->value_type, i, 1.0);
        if (status == NZ_SUCCESS)
            status = nz_cli_dist_to_location(ctx, device, ones, (size_t)rows * vs, &b);
        nz_free(ctx, ones);
    }
    if (status == NZ_SUCCESS)
        status = device ? nz_device_malloc(ctx, &x, (size_t)rows * vs + 16)
                        : nz_malloc(ctx, &x, (size_t)rows * vs + 16);
    if (status == NZ_SUCCESS)
        status = device ? nz_device_malloc(ctx, &y, (size_t)rows * vs + 16)
                        : nz_malloc(ctx, &y, (size_t)rows * vs + 16);
    if (status == NZ_SUCCESS)
        status = device ? nz_device_memset(ctx, x, 0, (size_t)rows * vs)
                        : (memset(x, 0, (size_t)rows * vs), NZ_SUCCESS);
    status = nz_dist_agree(ctx, comm, status);
    if (status == NZ_SUCCESS) status = nz_dist_spmv_profile(dA, b, y, o->repeat, &row->prof);
    if (status == NZ_SUCCESS) {
        /* a fixed number of iterations: rtol below reach, the limit as the stop */
        nz_cg_options_t co;
        nz_cg_result_t res;
        memset(&co, 0, sizeof co);
        co.rtol = 1e-300;
        co.max_iterations = o->bench_iterations;
        status = nz_dist_cg_solve(ctx, dA, b, x, &co, &res);
        if (status == NZ_MAX_ITERATIONS) status = NZ_SUCCESS;
        row->cg_iteration = res.seconds_per_iteration;
        row->allreduce = time_allreduce(comm);
    }
    if (status == NZ_SUCCESS) {
        row->unknowns = L.global_rows;
        row->nnz = L.global_nnz;
        MPI_Allreduce(&L.halo, &row->halo_max, 1, MPI_INT64_T, MPI_MAX, comm);
    }
    nz_cli_dist_free_location(ctx, device, b);
    nz_cli_dist_free_location(ctx, device, x);
    nz_cli_dist_free_location(ctx, device, y);
    nz_dist_matrix_destroy(&dA);
    return status;
}

static void print_row(const scaling_row_t *r, double base, int weak, size_t value_size) {
    /* efficiency: strong T1 / (p Tp); weak T1 / Tp (per-rank work constant) */
    double eff = r->cg_iteration > 0 ? (weak ? base / r->cg_iteration
                                             : base / (r->ranks * r->cg_iteration)) : 0.0;
    printf("%5d %10lld %11lld %9.3f %9.3f %9.3f %9.3f %7.0f%% %8lld %8.1f %7.1f %9.3f %6.0f%%\n",
           r->ranks, (long long)r->unknowns, (long long)r->nnz, 1e3 * r->prof.whole,
           1e3 * r->prof.exchange, 1e3 * r->prof.local, 1e3 * r->prof.nonlocal,
           100.0 * r->prof.overlap, (long long)r->halo_max,
           (double)r->halo_max * (double)value_size / 1024.0, 1e6 * r->allreduce,
           1e3 * r->cg_iteration, 100.0 * eff);
}

/* The lines above the tables (rank 0): the setup, the halo path on the GPU, the columns. */
static void print_header(nz_context_t *ctx, const dist_cli_t *o, const nz_dist_options_t *opt,
                         int size) {
    printf("nz bench --dist: %d ranks, %s, %s, %d SpMV repeats, %lld CG iterations\n", size,
           nz_cli_precision_name(o->value_type),
           opt->device != NULL ? nz_context_device_name(ctx) : "cpu", o->repeat,
           (long long)o->bench_iterations);
    if (opt->device != NULL) {
        int cuda_device = -1, cuda_aware = 0;
        if (nz_dist_device_info(opt->device, &cuda_device, &cuda_aware) == NZ_SUCCESS)
            printf("halo messages: %s (rank 0 on CUDA device %d; one rank a device while "
                   "ranks <= devices)\n",
                   cuda_aware ? "device pointers to CUDA-aware MPI"
                              : "staged through pinned host memory",
                   cuda_device);
    }
    printf("times in ms, maximum over ranks; exchange / local / non-local timed alone; "
           "overlap = 1 - spmv / (sum of parts); halo = entries (KB) one rank receives per "
           "SpMV, the largest; allreduce = one MPI_Allreduce of 3 doubles, us\n");
}

/* One scaling table: its problem, weak or strong, and its size (weak: per rank). */
typedef struct scaling_table {
    scaling_problem_t problem;
    int weak;
    int64_t n;
} scaling_table_t;

/* A table's rows on the first counts[k] ranks each (rank 0 prints them); every rank returns
 * the same exit status. */
static int scaling_table(nz_context_t *ctx, const dist_cli_t *o, const nz_dist_options_t *opt,
                         const scaling_table_t *T, const int *counts, int ncounts) {
    const char *const CMD = "bench";
    const size_t vs = o->value_type == NZ_F32 ? 4 : 8;
    int rc = NZ_EXIT_OK, rank = 0;
    double base = 0.0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        if (T->weak)
            printf("\nweak scaling: fe3d, about %lld unknowns per rank\n",
                   (long long)((T->n - 1) * (T->n - 1) * (T->n - 1)));
        else if (T->problem == SCALING_LAPLACE3D)
            printf("\nstrong scaling: laplace3d %lld^3\n", (long long)T->n);
        else
            printf("\nstrong scaling: fe3d N=%lld\n", (long long)T->n);
        printf("ranks   unknowns         nnz  spmv(ms)  exchange     local  nonlocal overlap"
               "     halo  halo KB allred   cg(ms/it) effic.\n");
    }
    for (int k = 0; k < ncounts; k++) {
        const int p = counts[k];
        MPI_Comm sub = MPI_COMM_NULL;
        MPI_Comm_split(MPI_COMM_WORLD, rank < p ? 0 : MPI_UNDEFINED, rank, &sub);
        scaling_row_t row;
        memset(&row, 0, sizeof row);
        row.ranks = p;
        nz_status_t status = NZ_SUCCESS;
        if (sub != MPI_COMM_NULL) {
            /* weak: (n-1)^3 = p (T->n - 1)^3 unknowns, n rounded */
            const int64_t n =
                T->weak ? (int64_t)llround((double)(T->n - 1) * cbrt((double)p)) + 1 : T->n;
            status = scaling_run(ctx, o, opt, sub, T->problem, n, &row);
            MPI_Comm_free(&sub);
        }
        NZ_CLI_TRY(nz_dist_agree(ctx, MPI_COMM_WORLD, status));
        if (rank == 0) {
            if (k == 0) base = row.cg_iteration;
            print_row(&row, base, T->weak, vs);
            fflush(stdout);
        }
    }
cleanup:
    return rc;
}

int nz_cli_dist_bench(nz_context_t *ctx, const dist_cli_t *o, const nz_dist_options_t *opt) {
    int rc = NZ_EXIT_OK, size = 1, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int counts[64], ncounts = 0;
    for (int p = 1; p < size; p *= 2) counts[ncounts++] = p;
    counts[ncounts++] = size;
    if (rank == 0) print_header(ctx, o, opt, size);
    /* the tables: FE strong, Laplacian strong (--laplace), then one FE weak table per size */
    scaling_table_t tables[2 + DIST_MAX_WEAK];
    int ntables = 0;
    tables[ntables++] = (scaling_table_t){SCALING_FE3D, 0, o->strong_n};
    if (o->laplace_n > 0) tables[ntables++] = (scaling_table_t){SCALING_LAPLACE3D, 0, o->laplace_n};
    for (int w = 0; w < (o->weak_count > 0 ? o->weak_count : 1); w++)
        tables[ntables++] = (scaling_table_t){SCALING_FE3D, 1, o->weak_n[w]};
    for (int t = 0; t < ntables && rc == NZ_EXIT_OK; t++)
        rc = scaling_table(ctx, o, opt, &tables[t], counts, ncounts);
    return rc;
}

#else
typedef int nz_cmd_dist_bench_unused_t; /* built without the distributed layer (no MPI) */
#endif
