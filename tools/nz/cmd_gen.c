/* cmd_gen.c: `nz gen`: write a generated test matrix (.mtx, .mtx.gz or .nzb by extension). */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "gen";

/* Every parameter option of any kind; which kinds accept which is in `kinds` below. The value
 * text is kept until the kind is known, because --b is a probability for rmat and a file for
 * fe3d. */
enum {
    OPT_NX, OPT_NY, OPT_NZ, OPT_N, OPT_SCALE, OPT_EDGE_FACTOR, OPT_A, OPT_B, OPT_C, OPT_SEED,
    OPT_ROWS, OPT_COLS, OPT_MEAN, OPT_ROW_LENGTH, OPT_SHORT, OPT_LONG_ROWS, OPT_LONG_LENGTH,
    OPT_LOWER, OPT_UPPER, OPT_U, NUM_OPTS
};
static const char *const option_names[NUM_OPTS] = {
    "--nx", "--ny", "--nz", "--n", "--scale", "--edge-factor", "--a", "--b", "--c", "--seed",
    "--rows", "--cols", "--mean", "--row-length", "--short", "--long-rows", "--long-length",
    "--lower", "--upper", "--u"};

enum { KIND_LAPLACE2D, KIND_LAPLACE3D, KIND_FE3D, KIND_RMAT, KIND_RANDOM, KIND_RAIL, KIND_MIXED,
       KIND_BANDED };
#define BIT(o) (1u << (o))
static const struct {
    const char *name;
    unsigned options;
} kinds[] = { /* in the order of the KIND_* enum */
    {"laplace2d", BIT(OPT_NX) | BIT(OPT_NY)},
    {"laplace3d", BIT(OPT_NX) | BIT(OPT_NY) | BIT(OPT_NZ) | BIT(OPT_N)},
    {"fe3d", BIT(OPT_N) | BIT(OPT_B) | BIT(OPT_U)},
    {"rmat", BIT(OPT_SCALE) | BIT(OPT_EDGE_FACTOR) | BIT(OPT_A) | BIT(OPT_B) | BIT(OPT_C) |
                 BIT(OPT_SEED)},
    {"random", BIT(OPT_ROWS) | BIT(OPT_COLS) | BIT(OPT_MEAN) | BIT(OPT_SEED)},
    {"rail", BIT(OPT_ROWS) | BIT(OPT_COLS) | BIT(OPT_ROW_LENGTH) | BIT(OPT_SEED)},
    {"mixed", BIT(OPT_ROWS) | BIT(OPT_SHORT) | BIT(OPT_LONG_ROWS) | BIT(OPT_LONG_LENGTH) |
                  BIT(OPT_SEED)},
    {"banded", BIT(OPT_N) | BIT(OPT_LOWER) | BIT(OPT_UPPER)},
};
#define NUM_KINDS ((int)(sizeof kinds / sizeof kinds[0]))

/* Sizes are capped well below what any machine can hold; the library checks the rest. */
#define MAX_DIM ((int64_t)2147483647)

static void usage(void) {
    printf(
        "usage: nz gen KIND [parameters] -o A.(mtx|mtx.gz|nzb) [--precision single|double]\n\n"
        "kinds and their parameters (defaults in brackets):\n"
        "  laplace2d  --nx [16] --ny [nx]           5-point Laplacian on an nx x ny grid\n"
        "  laplace3d  --nx [8] --ny [nx] --nz [nx]  7-point Laplacian (--n N sets all three)\n"
        "  fe3d       --n [8]                       Q1 finite-element Poisson, (n-1)^3 unknowns;\n"
        "             --b b.mtx --u u.mtx           also write the load vector and the exact\n"
        "                                           solution as Matrix Market array files\n"
        "  rmat       --scale [10] --edge-factor [16] --a --b --c [Graph500 0.57 0.19 0.19]\n"
        "             --seed [1]                    R-MAT power-law graph, 2^scale vertices\n"
        "  random     --rows [1000] --cols [rows] --mean [8] --seed [1]\n"
        "                                           row lengths uniform in [0, 2 mean]\n"
        "  rail       --rows [100] --cols [10000] --row-length [100] --seed [1]\n"
        "                                           few long rows, clustered columns\n"
        "  mixed      --rows [1000] --short [4] --long-rows [4] --long-length [500] --seed [1]\n"
        "                                           short rows plus a few long ones\n"
        "  banded     --n [1000] --lower [2] --upper [2]  diagonally dominant band\n\n"
        "options:\n"
        "  -o FILE         output; .mtx, .mtx.gz (compressed) or .nzb (binary) by extension\n"
        "  --precision P   single or double (default double)\n"
        "  --help          this text\n\n"
        "The same parameters and seed always give the same matrix.\n");
}

/* Parse option o (if given) as an integer in [min, max]; keep *out otherwise. */
static int opt_int64(const char *const *given, int o, int64_t min, int64_t max, int64_t *out) {
    if (given[o] == NULL) return 0;
    return nz_cli_int64(CMD, option_names[o], given[o], min, max, out);
}

static int opt_double(const char *const *given, int o, double min, double max, double *out) {
    if (given[o] == NULL) return 0;
    if (nz_cli_double(CMD, option_names[o], given[o], out)) return 1;
    if (*out < min || *out > max) {
        nz_cli_error(CMD, "option %s: %g is out of range [%g, %g]", option_names[o], *out, min,
                     max);
        return 1;
    }
    return 0;
}

/* Write an n-vector in Matrix Market array format. */
static int write_vector(nz_context_t *ctx, const char *path, nz_value_type_t value_type,
                        int64_t n, const void *data) {
    nz_status_t status = nz_mm_write_dense(ctx, path, value_type, n, 1, data);
    if (status != NZ_SUCCESS) return nz_cli_library_error(CMD, ctx, status);
    return NZ_EXIT_OK;
}

int nz_cmd_gen(int argc, char **argv) {
    const char *given[NUM_OPTS] = {0};
    const char *kind_name = NULL, *output = NULL;
    nz_value_type_t value_type = NZ_F64;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (nz_cli_is_help(arg)) {
            usage();
            return NZ_EXIT_OK;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            if ((output = nz_cli_value(CMD, argc, argv, &i)) == NULL) return NZ_EXIT_USAGE;
        } else if (strcmp(arg, "--precision") == 0) {
            if (nz_cli_precision_option(CMD, argc, argv, &i, &value_type)) return NZ_EXIT_USAGE;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            int o = 0;
            while (o < NUM_OPTS && strcmp(arg, option_names[o]) != 0) o++;
            if (o == NUM_OPTS) return nz_cli_unknown_option(CMD, arg);
            if ((given[o] = nz_cli_value(CMD, argc, argv, &i)) == NULL) return NZ_EXIT_USAGE;
        } else if (kind_name == NULL) {
            kind_name = arg;
        } else {
            return nz_cli_extra_argument(CMD, arg);
        }
    }
    if (kind_name == NULL) return nz_cli_missing(CMD, "KIND (laplace2d, laplace3d, fe3d, ...)");
    int kind = 0;
    while (kind < NUM_KINDS && strcmp(kind_name, kinds[kind].name) != 0) kind++;
    if (kind == NUM_KINDS) {
        nz_cli_error(CMD, "unknown kind '%s' (see nz gen --help)", kind_name);
        return NZ_EXIT_USAGE;
    }
    for (int o = 0; o < NUM_OPTS; o++)
        if (given[o] != NULL && !(kinds[kind].options & BIT(o))) {
            nz_cli_error(CMD, "option %s does not apply to %s (see nz gen --help)",
                         option_names[o], kind_name);
            return NZ_EXIT_USAGE;
        }
    if (output == NULL) return nz_cli_missing(CMD, "output file (-o FILE)");
    if (nz_cli_check_matrix_path(CMD, output) != NZ_EXIT_OK) return NZ_EXIT_USAGE;

    /* Parameters with their defaults; only those of this kind can have been given. */
    int64_t nx = 0, ny = 0, nz = 0, n = 0, scale = 10, edge_factor = 16, rows = 0, cols = 0;
    int64_t row_length = 100, short_length = 4, long_rows = 4, long_length = 500;
    int64_t lower = 2, upper = 2;
    double a = 0.0, b = 0.0, c = 0.0, mean = 8.0;
    uint64_t seed = 1;
    const char *b_path = NULL, *u_path = NULL;
    const char *name = kinds[kind].name;
    int bad = 0;
    bad |= opt_int64(given, OPT_NX, 1, MAX_DIM, &nx);
    bad |= !bad && opt_int64(given, OPT_NY, 1, MAX_DIM, &ny);
    bad |= !bad && opt_int64(given, OPT_NZ, 1, MAX_DIM, &nz);
    bad |= !bad && opt_int64(given, OPT_N, 1, MAX_DIM, &n);
    bad |= !bad && opt_int64(given, OPT_SCALE, 1, 30, &scale);
    bad |= !bad && opt_int64(given, OPT_EDGE_FACTOR, 1, 1 << 20, &edge_factor);
    bad |= !bad && opt_int64(given, OPT_ROWS, 0, MAX_DIM, &rows);
    bad |= !bad && opt_int64(given, OPT_COLS, 0, MAX_DIM, &cols);
    bad |= !bad && opt_int64(given, OPT_ROW_LENGTH, 0, MAX_DIM, &row_length);
    bad |= !bad && opt_int64(given, OPT_SHORT, 1, MAX_DIM, &short_length);
    bad |= !bad && opt_int64(given, OPT_LONG_ROWS, 0, MAX_DIM, &long_rows);
    bad |= !bad && opt_int64(given, OPT_LONG_LENGTH, 0, MAX_DIM, &long_length);
    bad |= !bad && opt_int64(given, OPT_LOWER, 0, MAX_DIM, &lower);
    bad |= !bad && opt_int64(given, OPT_UPPER, 0, MAX_DIM, &upper);
    bad |= !bad && opt_double(given, OPT_MEAN, 0.0, 1e9, &mean);
    bad |= !bad && opt_double(given, OPT_A, 0.0, 1.0, &a);
    bad |= !bad && opt_double(given, OPT_C, 0.0, 1.0, &c);
    if (!bad && given[OPT_SEED] != NULL)
        bad |= nz_cli_uint64(CMD, option_names[OPT_SEED], given[OPT_SEED], &seed);
    if (!bad && given[OPT_B] != NULL) {
        if (kind == KIND_FE3D)
            b_path = given[OPT_B];
        else
            bad |= opt_double(given, OPT_B, 0.0, 1.0, &b);
    }
    u_path = given[OPT_U];
    if (bad) return NZ_EXIT_USAGE;
    const nz_cli_file_t outputs[] = {{"-o", output}, {"--b", b_path}, {"--u", u_path}};
    if (nz_cli_check_files(CMD, outputs, 3, NULL, 0) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
    if (kind == KIND_RMAT && a + b + c > 1.0) {
        nz_cli_error(CMD, "options --a --b --c: a + b + c = %g exceeds 1", a + b + c);
        return NZ_EXIT_USAGE;
    }

    int rc = NZ_EXIT_OK;
    nz_status_t status;
    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL;
    void *load = NULL, *exact = NULL;
    if ((status = nz_cli_context_create(&ctx)) != NZ_SUCCESS) {
        rc = nz_cli_library_error(CMD, ctx, status);
        goto cleanup;
    }
    switch (kind) {
    case KIND_LAPLACE2D:
        if (nx == 0) nx = 16;
        if (ny == 0) ny = nx;
        status = nz_gen_laplace2d(ctx, &A, nx, ny, value_type);
        break;
    case KIND_LAPLACE3D:
        if (n == 0) n = nx != 0 ? nx : 8;
        if (nx == 0) nx = n;
        if (ny == 0) ny = n;
        if (nz == 0) nz = n;
        status = nz_gen_laplace3d(ctx, &A, nx, ny, nz, value_type);
        break;
    case KIND_FE3D:
        if (n == 0) n = 8;
        status = nz_gen_fe3d(ctx, &A, b_path != NULL ? &load : NULL, u_path != NULL ? &exact : NULL,
                             n, value_type);
        break;
    case KIND_RMAT:
        status = nz_gen_rmat(ctx, &A, (int)scale, (int)edge_factor, a, b, c, seed, value_type);
        break;
    case KIND_RANDOM:
        if (rows == 0 && given[OPT_ROWS] == NULL) rows = 1000;
        if (given[OPT_COLS] == NULL) cols = rows;
        status = nz_gen_random(ctx, &A, rows, cols, mean, seed, value_type);
        break;
    case KIND_RAIL:
        if (given[OPT_ROWS] == NULL) rows = 100;
        if (given[OPT_COLS] == NULL) cols = 10000;
        status = nz_gen_rail(ctx, &A, rows, cols, row_length, seed, value_type);
        break;
    case KIND_MIXED:
        if (given[OPT_ROWS] == NULL) rows = 1000;
        status = nz_gen_mixed(ctx, &A, rows, short_length, long_rows, long_length, seed,
                              value_type);
        break;
    default: /* KIND_BANDED */
        if (n == 0) n = 1000;
        status = nz_gen_banded(ctx, &A, n, lower, upper, value_type);
        break;
    }
    if (status != NZ_SUCCESS) {
        rc = nz_cli_library_error(CMD, ctx, status);
        goto cleanup;
    }
    nz_matrix_info_t info;
    if ((status = nz_matrix_info(ctx, &info, A)) != NZ_SUCCESS) {
        rc = nz_cli_library_error(CMD, ctx, status);
        goto cleanup;
    }
    if ((rc = nz_cli_write_matrix(CMD, ctx, A, output)) != NZ_EXIT_OK) goto cleanup;
    if (b_path != NULL && (rc = write_vector(ctx, b_path, value_type, info.rows, load)) != 0)
        goto cleanup;
    if (u_path != NULL && (rc = write_vector(ctx, u_path, value_type, info.rows, exact)) != 0)
        goto cleanup;
    printf("%s: %lld x %lld, %lld nonzeros, %s -> %s\n", name, (long long)info.rows,
           (long long)info.cols, (long long)info.nnz, nz_cli_precision_name(value_type), output);

cleanup:
    if (ctx != NULL) {
        nz_free(ctx, load);
        nz_free(ctx, exact);
    }
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return rc;
}
