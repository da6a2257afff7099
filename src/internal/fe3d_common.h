/* fe3d_common.h: the Q1 FE problem's row pattern and load factors, shared by nz_gen_fe3d, its GPU assembly and nz_dist_gen_fe3d. */
#ifndef NZI_FE3D_COMMON_H
#define NZI_FE3D_COMMON_H

/* Header-only on plain types, so that the distributed layer (built on the public API) and the
 * CUDA file compute every value by the same expression as src/gen/gen_fe3d.c: bitwise equal
 * matrices and vectors everywhere. The derivation is in gen_fe3d.c. */
#include <math.h>
#include <stdint.h>

/* The row pattern runs on the host (nz_gen_fe3d, nz_dist_gen_fe3d) and in the GPU assembly
 * kernel (one thread a row), which compile the same inline functions below. */
#if defined(__CUDACC__)
#define NZI_FE3D_HD __host__ __device__
#else
#define NZI_FE3D_HD
#endif

/* Entries of row `row` = x + m (y + m z) of the m^3 unknowns: 2 or 3 candidates per axis. */
static inline NZI_FE3D_HD int64_t nzi_fe3d_row_length(int64_t m, int64_t row) {
    int64_t x = row % m, y = (row / m) % m, z = row / (m * m);
    return (1 + (x > 0) + (x < m - 1)) * (1 + (y > 0) + (y < m - 1)) *
           (1 + (z > 0) + (z < m - 1));
}

/* The entries before row `row` (its CSR row offset), in closed form: on an axis, coordinate k
 * has c(k) = 1 + [k > 0] + [k < m-1] neighbour candidates, the candidates before it sum to
 * C(k) = 0 (k = 0) or 3k - 1, and S = 3m - 2 in all. Row (x, y, z) therefore starts at
 * C(z) S^2 + c(z) (C(y) S + c(y) C(x)), and nnz = S^3. */
static inline NZI_FE3D_HD int64_t nzi_fe3d_row_begin(int64_t m, int64_t row) {
    const int64_t x = row % m, y = (row / m) % m, z = row / (m * m), S = 3 * m - 2;
    const int64_t cy = 1 + (y > 0) + (y < m - 1), cz = 1 + (z > 0) + (z < m - 1);
    const int64_t before_x = x == 0 ? 0 : 3 * x - 1, before_y = y == 0 ? 0 : 3 * y - 1,
                  before_z = z == 0 ? 0 : 3 * z - 1;
    return before_z * S * S + cz * (before_y * S + cy * before_x);
}

/* The row's columns (ascending: z, then y, then x offsets) and values, stencil[d] for a
 * neighbour whose offset has d nonzero coordinates (face neighbours stored as explicit zeros).
 * values holds doubles, or floats rounded from the doubles if `single` (a constant at every
 * call, so the choice folds away). Returns the entry count (nzi_fe3d_row_length). */
static inline NZI_FE3D_HD int64_t nzi_fe3d_row_typed(int64_t m, const double stencil[4],
                                                     int64_t row, int32_t *cols, void *values,
                                                     int single) {
    int64_t x = row % m, y = (row / m) % m, z = row / (m * m), k = 0;
    for (int dz = -1; dz <= 1; dz++) {
        if (z + dz < 0 || z + dz >= m) continue;
        for (int dy = -1; dy <= 1; dy++) {
            if (y + dy < 0 || y + dy >= m) continue;
            for (int dx = -1; dx <= 1; dx++) {
                if (x + dx < 0 || x + dx >= m) continue;
                int differ = (dx != 0) + (dy != 0) + (dz != 0);
                cols[k] = (int32_t)(row + dx + m * (dy + m * dz));
                if (single)
                    ((float *)values)[k] = (float)stencil[differ];
                else
                    ((double *)values)[k] = stencil[differ];
                k++;
            }
        }
    }
    return k;
}

/* nzi_fe3d_row_typed with values in double. */
static inline NZI_FE3D_HD int64_t nzi_fe3d_row(int64_t m, const double stencil[4], int64_t row,
                                               int32_t *cols, double *values) {
    return nzi_fe3d_row_typed(m, stencil, row, cols, values, 0);
}

/* The per-axis factors for n elements per side, k < n - 1: g[k] = the 3-point Gauss rule of
 * sin(pi t) times the hat function of node k (rising on [node - h, node], falling on
 * [node, node + h]), s[k] = sin(pi node). b_i = 3 pi^2 g g g and u_i = s s s by axis. */
static inline void nzi_fe3d_axis_factors(int64_t n, double *g, double *s) {
    const int64_t m = n - 1;
    const double pi = 3.14159265358979323846, h = 1.0 / (double)n;
    const double gauss_point[3] = {-0.77459666924148337704, 0.0, 0.77459666924148337704};
    const double gauss_weight[3] = {5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0};
    for (int64_t k = 0; k < m; k++) {
        double node = (double)(k + 1) * h, sum = 0.0;
        for (int q = 0; q < 3; q++) {
            double t = 0.5 * (1.0 + gauss_point[q]); /* in (0, 1) */
            sum += gauss_weight[q] * 0.5 * h * t * sin(pi * (node - h + t * h));
            sum += gauss_weight[q] * 0.5 * h * (1.0 - t) * sin(pi * (node + t * h));
        }
        g[k] = sum;
        s[k] = sin(pi * node);
    }
}

#endif /* NZI_FE3D_COMMON_H */
