/* nonzero/matrix.h: matrices, Matrix Market and binary I/O, generators. Part of <nonzero.h>. */
#ifndef NONZERO_MATRIX_H
#define NONZERO_MATRIX_H

#include "nonzero/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Matrices                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* A sparse matrix on the host or a device, in one of the formats of nz_format_t (opaque). */
typedef struct nz_matrix nz_matrix_t;

/* Create a host CSR matrix by COPYING caller arrays: row_offsets has rows + 1 entries of type
 * offset_type, col_indices and values have row_offsets[rows] entries. values may be NULL (all
 * ones, a pattern). The structure is validated (offsets monotone from 0, indices in range); the
 * error names the first bad row. Unsorted columns are sorted and duplicates summed. */
nz_status_t nz_matrix_create_csr(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                                 nz_index_type_t offset_type, const void *row_offsets,
                                 const int32_t *col_indices, nz_value_type_t value_type,
                                 const void *values);

/* Create a host CSR matrix from COO triplets (any order; duplicates summed; values NULL = ones). */
nz_status_t nz_matrix_create_coo(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                                 int64_t nnz, const int32_t *row_indices,
                                 const int32_t *col_indices, nz_value_type_t value_type,
                                 const void *values);

/* Wrap caller-owned host CSR arrays without copying them (O(rows) extra memory at most).
 * BORROWED: col_indices and values (row_offsets[rows] entries each), and row_offsets when
 * offset_type is NZ_I64, are never written and never freed; the caller keeps them alive and
 * unchanged while *A lives. NZ_I32 row offsets are widened into an owned int64 copy of rows + 1
 * entries (the library's host CSR keeps int64 offsets). The structure is validated in O(nnz):
 * offsets start at 0 and never decrease, column indices lie in [0, cols) (NZ_ERR_INVALID_MATRIX),
 * and columns must be strictly increasing within each row: unsorted columns or duplicates are
 * refused with NZ_ERR_NOT_SORTED (borrowed arrays cannot be sorted; nz_matrix_create_csr copies
 * and canonicalises). The message names the first bad row. values must be non-NULL when there
 * are nonzeros. *A behaves as any host CSR matrix: conversions, transposes and products make new
 * matrices that own their arrays. */
nz_status_t nz_matrix_wrap_csr(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                               nz_index_type_t offset_type, const void *row_offsets,
                               const int32_t *col_indices, nz_value_type_t value_type,
                               const void *values);

/* Wrap CSR arrays already on the context's device (BORROWED, never written, never freed).
 * Row offsets int32 or int64; column indices sorted within rows. Validation (a device-to-host
 * copy) is done only when `validate` is non-zero. */
nz_status_t nz_matrix_wrap_csr_device(nz_context_t *ctx, nz_matrix_t **A, int64_t rows,
                                      int64_t cols, int64_t nnz, nz_index_type_t offset_type,
                                      const void *row_offsets, const int32_t *col_indices,
                                      nz_value_type_t value_type, const void *values,
                                      int validate);

/* Frees *A (host or device) and sets *A to NULL; NULL or *A == NULL is a no-op. */
nz_status_t nz_matrix_destroy(nz_matrix_t **A);

/* A new matrix with the same contents in another value type. */
nz_status_t nz_matrix_convert_values(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                                     nz_value_type_t value_type);

/* Format conversion options. Zero-initialise, then set what you need; zero means default. */
typedef struct nz_format_options {
    int sell_chunk;            /* SELL chunk height C (default 32; 4 or 8 for the CPU SIMD kernel) */
    int sell_sigma;            /* SELL sorting window in rows (default 1 = sliced ELLPACK) */
    int bsr_block;             /* BSR block size b (default 4; 1..32) */
    int64_t hyb_ell_width;     /* HYB ELL width (default: from the row-length histogram;
                                  capped at the longest row) */
    double max_padding_ratio;  /* refuse if padded bytes > ratio x CSR bytes (default 3.0) */
} nz_format_options_t;

/* Convert a host matrix into another host format (any format to any format). The new matrix
 * holds its own copy. NZ_ERR_TOO_MUCH_PADDING when ELL/SELL/HYB/BSR/DIA padding exceeds the
 * limit; the message gives the padded and CSR sizes. COO, CSC, ELL, SELL and HYB keep the exact
 * CSR pattern (stored zeros too). BSR and DIA cannot tell a stored zero from their zero fill:
 * converting them back to another format drops every entry whose value is exactly 0 (nnz still
 * counts the original entries), and their SpMV multiplies the fill (0 * Inf = NaN). */
nz_status_t nz_matrix_convert(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A,
                              nz_format_t format, const nz_format_options_t *options);

/* B = A^T as a new CSR matrix: host A of any format (host CSR out), or device CSR A (device CSR
 * out with A's offset width, columns sorted; a radix sort on the device, deterministic). */
nz_status_t nz_matrix_transpose(nz_context_t *ctx, nz_matrix_t **B, const nz_matrix_t *A);

/* Copy a host matrix to the context's device (pinned staging). offset_type: NZ_INDEX_AUTO =
 * 32-bit row offsets when they fit, else 64; NZ_I32 / NZ_I64 force the width (NZ_ERR_OVERFLOW
 * when nnz does not fit NZ_I32). The transfer time is recorded in
 * nz_matrix_info_t.transfer_seconds. CSR, COO, ELL, SELL, HYB, BSR and DIA: formats other than
 * CSR are copied as they are (convert on the host first; offset_type applies to CSR only). The
 * GPU kernels need SELL chunk heights that are multiples of 32 and BSR blocks of 2..8
 * (NZ_ERR_UNSUPPORTED otherwise); CSC is refused. */
nz_status_t nz_matrix_to_device(nz_context_t *ctx, nz_matrix_t **dA, const nz_matrix_t *A,
                                nz_index_type_t offset_type);
/* Copy a device CSR matrix (e.g. the C of a device nz_spgemm) back to a new host CSR matrix
 * (int64 row offsets). NZ_ERR_WRONG_LOCATION for a host matrix, NZ_ERR_UNSUPPORTED for other
 * device formats. */
nz_status_t nz_matrix_to_host(nz_context_t *ctx, nz_matrix_t **A, const nz_matrix_t *dA);

/* What nz_matrix_info reports about a matrix: shape, format, types, location, bytes. */
typedef struct nz_matrix_info {
    int64_t rows, cols;
    int64_t nnz;               /* logical nonzeros (without padding) */
    int64_t stored;            /* stored entries including padding */
    nz_format_t format;
    nz_value_type_t value_type;
    nz_index_type_t offset_type; /* width of row offsets (host CSR: NZ_I64) */
    nz_location_t location;
    size_t bytes;              /* bytes of the format's arrays */
    double transfer_seconds;   /* host-to-device copy time for device matrices, else 0 */
    /* Format parameters (0 when not applicable). */
    int sell_chunk, sell_sigma, bsr_block;
    int64_t ell_width;         /* ELL width, or the ELL part's width in HYB */
    int64_t num_diagonals;     /* DIA */
} nz_matrix_info_t;
/* Shape, format and storage of A (host or device). ctx must be a valid context (A's own, errors
 * are recorded on it). */
nz_status_t nz_matrix_info(nz_context_t *ctx, nz_matrix_info_t *info, const nz_matrix_t *A);

/* Read-only views of a host CSR matrix's arrays (valid while A lives; for a wrapped matrix, the
 * caller's own arrays, except widened int32 offsets). values is float* or double* per the value
 * type. Any of the three outputs may be NULL. ctx must be a valid context (A's own, errors are
 * recorded on it). */
nz_status_t nz_matrix_csr_arrays(nz_context_t *ctx, const int64_t **row_offsets,
                                 const int32_t **col_indices, const void **values,
                                 const nz_matrix_t *A);
/* The same for a device CSR matrix (e.g. the C of a device nz_spgemm): device pointers valid
 * while A lives, never to be freed by the caller; *offset_type is NZ_I32 or NZ_I64. Lets a
 * binding hand C to another library without a copy. NZ_ERR_WRONG_LOCATION for a host matrix. */
nz_status_t nz_matrix_csr_device_arrays(nz_context_t *ctx, const void **row_offsets,
                                        nz_index_type_t *offset_type,
                                        const int32_t **col_indices, const void **values,
                                        const nz_matrix_t *A);

/* Row-length statistics and structure (host matrices; any format). ctx must be a valid context
 * (A's own, errors are recorded on it). */
typedef struct nz_matrix_stats {
    int64_t rows, cols, nnz;
    int64_t row_min, row_max;  /* nonzeros per row */
    double row_mean, row_std;
    int64_t empty_rows;
    int64_t lower_bandwidth, upper_bandwidth; /* max (i - j), max (j - i) over nonzeros, >= 0 */
    int64_t num_diagonals;     /* distinct j - i */
    int symmetric;             /* 1: A == A^T (pattern and values), 0: not, -1: not square */
    size_t bytes[NZ_FORMAT_COUNT]; /* bytes per format with default options (0 = refused) */
    double hot_share;          /* share of the nonzeros in the NZ_STATS_HOT_COLUMNS most-read
                                  columns (1 when there are no more columns; 0 without nonzeros):
                                  near 1 for power-law graphs with many columns, tiny for
                                  uniformly scattered ones */
} nz_matrix_stats_t;
#define NZ_STATS_HOT_COLUMNS 16384
nz_status_t nz_matrix_stats(nz_context_t *ctx, nz_matrix_stats_t *stats, const nz_matrix_t *A);

/* ------------------------------------------------------------------------------------------ */
/* Matrix Market and binary I/O                                                                */
/* ------------------------------------------------------------------------------------------ */

/* Longest line the Matrix Market readers accept (plain, gzip and buffer), newline excluded. A
 * longer line (an entry is under 100 bytes; a 2 GB line of spaces, /dev/zero) is refused with
 * NZ_ERR_PARSE naming the file and line, after reading at most one buffer of it. */
#define NZ_MM_MAX_LINE_BYTES ((size_t)1 << 20)

/* Read a Matrix Market file (.mtx or .mtx.gz) into a host CSR matrix of the given value type.
 * Coordinate or array; real, integer or pattern (complex refused); general, symmetric,
 * skew-symmetric and hermitian (real) expanded. Errors name the path and line; a NUL byte is
 * named as such. Values of any length are read (correctly rounded). What the header declares is
 * checked against the memory budget (nz_context_set_memory_budget) before allocating. */
nz_status_t nz_mm_read(nz_context_t *ctx, nz_matrix_t **A, const char *path,
                       nz_value_type_t value_type);
/* The same from a memory buffer (name is used in messages). */
nz_status_t nz_mm_read_buffer(nz_context_t *ctx, nz_matrix_t **A, const char *data, size_t size,
                              const char *name, nz_value_type_t value_type);
/* Write a host matrix (any format) to path as coordinate real general, round-trip precision. A
 * path ending in .gz is compressed.
 * Every writer (nz_mm_write, nz_mm_write_dense, nz_binary_write) writes a temporary file in the
 * target's directory and renames it over `path` only after a complete write, fsync and close; on
 * any failure only the temporary file is removed, so an existing file at `path` is left intact.
 * "-" is standard output; existing character devices and FIFOs are written in place and never
 * removed; a symbolic link is followed (the file it names is replaced). The Matrix Market
 * writers refuse a path ending in .nzb and nz_binary_write one ending in .mtx, .mtx.gz or .gz
 * (NZ_ERR_INVALID_ARGUMENT, nothing written): the name would lie about the contents. */
nz_status_t nz_mm_write(nz_context_t *ctx, const char *path, const nz_matrix_t *A);

/* Dense matrices / vectors in Matrix Market array format (column-major). nz_mm_read_dense reads
 * path into *data (allocated, free with nz_free), *rows and *cols; a coordinate file is accepted
 * and densified. nz_mm_write_dense writes the rows x cols array data to path (not a .nzb path). */
nz_status_t nz_mm_read_dense(nz_context_t *ctx, void **data, int64_t *rows, int64_t *cols,
                             const char *path, nz_value_type_t value_type);
nz_status_t nz_mm_write_dense(nz_context_t *ctx, const char *path, nz_value_type_t value_type,
                              int64_t rows, int64_t cols, const void *data);

/* Compact binary format (.nzb): a header, then the CSR arrays; reloads at memory speed.
 * nz_binary_write writes host matrix A (any format) to path (not a .mtx, .mtx.gz or .gz path). */
nz_status_t nz_binary_write(nz_context_t *ctx, const char *path, const nz_matrix_t *A);
nz_status_t nz_binary_read(nz_context_t *ctx, nz_matrix_t **A, const char *path);
/* Read .mtx, .mtx.gz or .nzb by extension (value_type applies to Matrix Market files; .nzb
 * files are converted if they hold the other type). */
nz_status_t nz_matrix_read(nz_context_t *ctx, nz_matrix_t **A, const char *path,
                           nz_value_type_t value_type);

/* ------------------------------------------------------------------------------------------ */
/* Generators (deterministic for a given seed; host CSR out)                                   */
/* ------------------------------------------------------------------------------------------ */

/* 2-D 5-point Laplacian on an nx x ny grid (Dirichlet, rows of 3..5). */
nz_status_t nz_gen_laplace2d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                             nz_value_type_t value_type);
/* 3-D 7-point Laplacian on an nx x ny x nz grid. */
nz_status_t nz_gen_laplace3d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                             int64_t nz, nz_value_type_t value_type);
/* Convection-diffusion -Δu + w·∇u, homogeneous Dirichlet, on an nx x ny (x ny x nz) grid of
 * width h (the unit square / cube when every extent is n: h = 1/(n+1)); non-symmetric M-matrix
 * test problems. Rows and columns as for the Laplacians (natural order, x fastest). The wind
 * w = |w| (1, 1, 1)/sqrt(3) (in 2-D (1, 1)/sqrt(2)); peclet is the mesh Péclet number
 * P = |w| h / 2 (diffusion coefficient 1), finite and >= 0. Scaled like the Laplacians (h^2 times
 * the operator), with first-order upwinding: with c = 2P/sqrt(d) (d = 2, 3) the diagonal is
 * 2d + d c, the -x/-y/-z neighbours -1 - c, the +x/+y/+z neighbours -1. peclet = 0 gives exactly
 * nz_gen_laplace2d/3d; for every P the matrix is a diagonally dominant M-matrix.
 * NZ_ERR_INVALID_ARGUMENT for a bad peclet or one whose entries overflow value_type. */
nz_status_t nz_gen_convdiff2d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                              double peclet, nz_value_type_t value_type);
nz_status_t nz_gen_convdiff3d(nz_context_t *ctx, nz_matrix_t **A, int64_t nx, int64_t ny,
                              int64_t nz, double peclet, nz_value_type_t value_type);
/* Trilinear (Q1) finite-element Poisson stiffness matrix (outputs A, b, u_exact first), -Δu = f
 * on the unit cube with an n x n x n grid of hexahedral elements; Dirichlet nodes eliminated,
 * (n-1)^3 unknowns, rows of 8, 12, 18 and 27 nonzeros. If b / u_exact are non-NULL they receive (nz_malloc'ed) the load
 * vector for the manufactured solution u = sin(pi x) sin(pi y) sin(pi z) and its nodal values.
 * Scaling: A is the Galerkin matrix, h = 1/n times the 27-point stencil (centre 8/3, face
 * neighbours 0 (stored), edge neighbours -1/6, corner neighbours -1/12); b_i ~ h^3 f(x_i), so
 * A u_exact - b = O(h^5) entrywise. n >= 2. */
nz_status_t nz_gen_fe3d(nz_context_t *ctx, nz_matrix_t **A, void **b, void **u_exact, int64_t n,
                        nz_value_type_t value_type);
/* The same Q1 problem assembled directly on the context's GPU (one thread per row; no host
 * arrays, no transfer): *dA is a device CSR matrix (int32 row offsets when they fit, else int64)
 * identical to nz_matrix_to_device(nz_gen_fe3d(...)); d_b / d_u_exact, if non-NULL, receive device
 * arrays (free with nz_device_free) equal to the host b / u_exact. */
nz_status_t nz_gen_fe3d_device(nz_context_t *ctx, nz_matrix_t **dA, void **d_b, void **d_u_exact,
                               int64_t n, nz_value_type_t value_type);
/* Trilinear (Q1) finite-element linear elasticity (outputs A, b, rigid_body_modes first), a test
 * problem for algebraic multigrid with a near-nullspace: the unit cube meshed by n x n x n
 * hexahedral elements of side h = 1/n, isotropic material with Young's modulus 1 and Poisson
 * ratio poisson_ratio (0 <= nu < 0.5; 0 selects the default 0.3; anything else, NaN included,
 * is NZ_ERR_INVALID_ARGUMENT), displacement clamped (Dirichlet, eliminated) on the face x = 0
 * only, the other five faces traction-free. The unknowns are the 3 displacement components of
 * every node (i, j, k) h with i >= 1, interleaved per node (ux, uy, uz): unknown 3 p + c for
 * node p = (i - 1) + n (j + (n + 1) k) (x fastest), 3 n (n+1)^2 in all. A is the Galerkin
 * stiffness matrix, the element matrix integral of B^T D B by 2 x 2 x 2 Gauss quadrature (exact;
 * one matrix for every element), scaled as h times an h-independent matrix. Rows are sorted with
 * unique columns and store the full 3 x 3 block of every node pair sharing an element (zeros
 * included): 3 cx cy cz entries, 81 for a node away from the clamped face and the other faces,
 * nnz = 9 (3n - 2) (3n + 1)^2. A is exactly symmetric (A == A^T bit for bit) and positive
 * definite. If b is non-NULL it receives the load of a unit body force in -z (gravity),
 * integrated consistently: b_i = integral of N_i f, i.e. -(elements at the node) h^3 / 8 in the
 * z entries and 0 in the x and y entries. If rigid_body_modes is non-NULL it receives a
 * rows x 6 array, column-major (column m at [m * rows]): the translations in x, y, z and the
 * rotations (-y, x, 0), (0, -z, y), (z, 0, -x), with (x, y, z) measured from the cube's centre
 * (1/2, 1/2, 1/2), evaluated at the nodes; A annihilates them (up to rounding) in every row of a
 * node with i >= 2, i.e. away from the clamped face. b and the modes hold values of value_type
 * and are allocated by the library (free with nz_free); they and *A are written only on
 * success. n >= 1; NZ_ERR_OVERFLOW / NZ_ERR_UNSUPPORTED when the unknown count overflows or
 * passes the 2^31 - 1 row limit. */
nz_status_t nz_gen_elasticity3d(nz_context_t *ctx, nz_matrix_t **A, void **b,
                                void **rigid_body_modes, int64_t n, double poisson_ratio,
                                nz_value_type_t value_type);
/* Kronecker / R-MAT power-law graph: 2^scale vertices, edge_factor x 2^scale edges drawn with
 * probabilities (a, b, c, 1-a-b-c) (Graph500: 0.57, 0.19, 0.19); duplicates merged, values in
 * (0, 1]. a = b = c = 0 selects the Graph500 parameters. Directed (row = source), self loops
 * kept, vertex labels scrambled by a seeded permutation as in Graph500. scale 1..30. */
nz_status_t nz_gen_rmat(nz_context_t *ctx, nz_matrix_t **A, int scale, int edge_factor, double a,
                        double b, double c, uint64_t seed, nz_value_type_t value_type);
/* Uniform random rows x cols with row lengths uniform in [0, 2 * mean_row_length], distinct
 * uniform columns, values in [-1, 1). (Also for rail and mixed: values in [-1, 1).) */
nz_status_t nz_gen_random(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                          double mean_row_length, uint64_t seed, nz_value_type_t value_type);
/* Rail-like (crew scheduling LP): few rows, many columns, every row long (mean row_length,
 * +-50%), columns clustered. */
nz_status_t nz_gen_rail(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t cols,
                        int64_t row_length, uint64_t seed, nz_value_type_t value_type);
/* Mixed: rows x rows, short rows (uniform in [1, 2 * short_length - 1]) plus long_rows rows of
 * long_length nonzeros spread over the matrix. */
nz_status_t nz_gen_mixed(nz_context_t *ctx, nz_matrix_t **A, int64_t rows, int64_t short_length,
                         int64_t long_rows, int64_t long_length, uint64_t seed,
                         nz_value_type_t value_type);
/* Banded n x n with `lower` sub- and `upper` super-diagonals, diagonally dominant. */
nz_status_t nz_gen_banded(nz_context_t *ctx, nz_matrix_t **A, int64_t n, int64_t lower,
                          int64_t upper, nz_value_type_t value_type);

#ifdef __cplusplus
}
#endif

#endif /* NONZERO_MATRIX_H */
