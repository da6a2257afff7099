/* spgemm.c: C = A·A for the 5-point Laplacian of an m x m grid, on the GPU (hash algorithm)
 * when one is present, else on the CPU, and a check of the result against what the stencil
 * says: A² is the 13-point stencil, whose nonzeros can be counted by hand.
 *
 *   cc spgemm.c $(pkg-config --cflags --libs nonzero) -o spgemm && ./spgemm 500
 */
#include <nonzero.h>
#include "example_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grid points reachable from (i, j) in at most two steps of the 5-point stencil. */
static long long stencil13(long long m, long long i, long long j) {
    long long count = 0;
    for (long long di = -2; di <= 2; di++)
        for (long long dj = -2; dj <= 2; dj++) {
            long long d = llabs(di) + llabs(dj);
            if (d > 2 || i + di < 0 || i + di >= m || j + dj < 0 || j + dj >= m) continue;
            count++;
        }
    return count;
}

int main(int argc, char **argv) {
    long long m = argc > 1 ? atoll(argv[1]) : 200;
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL, *C = NULL;
    nz_spgemm_options_t options;
    nz_spgemm_info_t sinfo;
    if (m < 3) return 2;
    if (nz_context_create(&ctx) != NZ_SUCCESS) return 1;
    CHECK(nz_gen_laplace2d(ctx, &A, m, m, NZ_F64));

    memset(&options, 0, sizeof options);
    options.alg = NZ_SPGEMM_AUTO; /* hash on the GPU, Gustavson on the CPU */
    if (nz_device_count() > 0) CHECK(nz_context_set_device(ctx, 0, NULL));
    CHECK(nz_spgemm(ctx, &C, A, A, &options, &sinfo));

    nz_matrix_info_t info;
    CHECK(nz_matrix_info(ctx, &info, C));
    long long expect = 0;
    for (long long i = 0; i < m; i++)
        for (long long j = 0; j < m; j++) expect += stencil13(m, i, j);
    /* The centre of an interior row: 4·4 from the diagonal plus 1 from each of 4 neighbours. */
    const int64_t *row_offsets;
    const int32_t *col_indices;
    const void *values;
    CHECK(nz_matrix_csr_arrays(ctx, &row_offsets, &col_indices, &values, C));
    long long centre = (m / 2) * m + m / 2;
    double c_ii = 0;
    for (int64_t k = row_offsets[centre]; k < row_offsets[centre + 1]; k++)
        if (col_indices[k] == centre) c_ii = ((const double *)values)[k];

    printf("A: %lld x %lld Laplacian; C = A*A by %s in %.3f ms, %lld products\n", m * m, m * m,
           nz_spgemm_alg_name(sinfo.alg), 1e3 * sinfo.seconds, (long long)sinfo.products);
    printf("nnz(C) = %lld (13-point stencil: %lld) %s\n", (long long)info.nnz, expect,
           info.nnz == expect ? "ok" : "WRONG");
    printf("C[centre, centre] = %g (expected 20) %s\n", c_ii, c_ii == 20.0 ? "ok" : "WRONG");
    int ok = info.nnz == expect && c_ii == 20.0;
    nz_matrix_destroy(&C);
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return ok ? 0 : 1;
}
