/* cmd_gen.c: `nz gen`: write a generated test matrix (.mtx, .mtx.gz or .nzb by extension). */
#include "cli_options.h"
#include "commands.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

static const char *const CMD = "gen";

/* Every parameter option of any kind, in the order of the first entries of gen_options below;
 * which kinds accept which is in `kinds`. The value text is kept until the kind is known,
 * because --b is a probability for rmat and a file for fe3d. */
enum {
    OPT_NX, OPT_NY, OPT_NZ, OPT_N, OPT_SCALE, OPT_EDGE_FACTOR, OPT_A, OPT_B, OPT_C, OPT_SEED,
    OPT_ROWS, OPT_COLS, OPT_MEAN, OPT_ROW_LENGTH, OPT_SHORT, OPT_LONG_ROWS, OPT_LONG_LENGTH,
    OPT_LOWER, OPT_UPPER, OPT_U, OPT_PECLET, OPT_POISSON_RATIO, OPT_RHS, OPT_MODES, NUM_OPTS
};

enum { KIND_LAPLACE2D, KIND_LAPLACE3D, KIND_FE3D, KIND_RMAT, KIND_RANDOM, KIND_RAIL, KIND_MIXED,
       KIND_BANDED, KIND_CONVDIFF2D, KIND_CONVDIFF3D, KIND_ELASTICITY3D };
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
    {"convdiff2d", BIT(OPT_NX) | BIT(OPT_NY) | BIT(OPT_PECLET)},
    {"convdiff3d", BIT(OPT_NX) | BIT(OPT_NY) | BIT(OPT_NZ) | BIT(OPT_N) | BIT(OPT_PECLET)},
    {"elasticity3d", BIT(OPT_N) | BIT(OPT_POISSON_RATIO) | BIT(OPT_RHS) | BIT(OPT_MODES)},
};
#define NUM_KINDS ((int)(sizeof kinds / sizeof kinds[0]))

/* Sizes are capped well below what any machine can hold; the library checks the rest. */
#define MAX_DIM ((int64_t)2147483647)

/* The command line as given: the kind, the output, the value texts of the parameters. */
typedef struct gen_cli {
    const char *kind_name, *output;
    nz_value_type_t value_type;
    const char *given[NUM_OPTS];
    int kind;
} gen_cli_t;

/* The parameters with their defaults; only those of the kind can have been given. */
typedef struct gen_params {
    int64_t nx, ny, nz, n, scale, edge_factor, rows, cols;
    int64_t row_length, short_length, long_rows, long_length, lower, upper;
    double a, b, c, mean, peclet, poisson_ratio;
    uint64_t seed;
    const char *b_path, *u_path; /* fe3d: the load vector and the exact solution */
    const char *rhs_path, *modes_path; /* elasticity3d: the load and the rigid-body modes */
} gen_params_t;

static const nz_cli_command_t gen_command = {
    .name = "gen",
    .synopsis =
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
        "  banded     --n [1000] --lower [2] --upper [2]  diagonally dominant band\n"
        "  convdiff2d --nx [16] --ny [nx] --peclet [1]\n"
        "                                           upwind convection-diffusion, non-symmetric;\n"
        "                                           --peclet: mesh Peclet number |w| h / 2 >= 0\n"
        "  convdiff3d --nx [8] --ny [nx] --nz [nx] --peclet [1]\n"
        "                                           the same in 3-D (--n N sets all three);\n"
        "                                           --peclet 0 gives the Laplacian\n"
        "  elasticity3d --n [8] --poisson-ratio [0.3]\n"
        "                                           Q1 linear elasticity on the unit cube, n^3\n"
        "                                           elements, clamped at x = 0: 3 n (n+1)^2\n"
        "                                           unknowns (ux, uy, uz per node); Poisson\n"
        "                                           ratio in [0, 0.5), 0 = the default 0.3;\n"
        "             --rhs b.mtx --modes B.mtx     also write the gravity load and the 6\n"
        "                                           rigid-body modes (rows x 6) as Matrix\n"
        "                                           Market array files\n\n",
    .epilogue = "\nThe same parameters and seed always give the same matrix.\n",
    .column = 21,
};

/* The parameters first, in the OPT_* order (their names are gen_options[o].name); they are
 * documented with the kinds above, so they have no help lines of their own. */
#define AT(member) NZ_CLI_AT(gen_cli_t, member)
#define PARAMETER(spelling, o) {.name = spelling, .kind = NZ_CLI_STRING, AT(given[o])}
static const nz_cli_option_t gen_options[] = {
    PARAMETER("--nx", OPT_NX),
    PARAMETER("--ny", OPT_NY),
    PARAMETER("--nz", OPT_NZ),
    PARAMETER("--n", OPT_N),
    PARAMETER("--scale", OPT_SCALE),
    PARAMETER("--edge-factor", OPT_EDGE_FACTOR),
    PARAMETER("--a", OPT_A),
    PARAMETER("--b", OPT_B),
    PARAMETER("--c", OPT_C),
    PARAMETER("--seed", OPT_SEED),
    PARAMETER("--rows", OPT_ROWS),
    PARAMETER("--cols", OPT_COLS),
    PARAMETER("--mean", OPT_MEAN),
    PARAMETER("--row-length", OPT_ROW_LENGTH),
    PARAMETER("--short", OPT_SHORT),
    PARAMETER("--long-rows", OPT_LONG_ROWS),
    PARAMETER("--long-length", OPT_LONG_LENGTH),
    PARAMETER("--lower", OPT_LOWER),
    PARAMETER("--upper", OPT_UPPER),
    PARAMETER("--u", OPT_U),
    PARAMETER("--peclet", OPT_PECLET),
    PARAMETER("--poisson-ratio", OPT_POISSON_RATIO),
    PARAMETER("--rhs", OPT_RHS),
    PARAMETER("--modes", OPT_MODES),
    {.kind = NZ_CLI_STRING, AT(kind_name)},
    {.name = "--output", .short_name = "-o", .kind = NZ_CLI_STRING, AT(output),
     .metavar = "FILE",
     .help = "output; .mtx, .mtx.gz (compressed) or .nzb (binary) by extension"},
    {.name = "--precision", .kind = NZ_CLI_ENUM, AT(value_type),
     .names = &nz_cli_precision_names, .metavar = "P",
     .help = "single or double (default double)"},
};
#undef PARAMETER
#undef AT

static const char *option_name(int o) { return gen_options[o].name; }

/* The command line: the kind, the parameters it accepts, the output path. NZ_EXIT_OK,
 * NZ_CLI_HELP, or NZ_EXIT_USAGE after one line. */
static int gen_parse(int argc, char **argv, gen_cli_t *g) {
    memset(g, 0, sizeof *g);
    g->value_type = NZ_F64;
    const nz_cli_table_t table = {gen_options, NZ_CLI_COUNT(gen_options), g, "options:\n"};
    int rc = nz_cli_parse(&gen_command, &table, 1, argc, argv);
    if (rc != NZ_EXIT_OK) return rc;
    if (g->kind_name == NULL) return nz_cli_missing(CMD, "KIND (laplace2d, laplace3d, fe3d, ...)");
    while (g->kind < NUM_KINDS && strcmp(g->kind_name, kinds[g->kind].name) != 0) g->kind++;
    if (g->kind == NUM_KINDS) {
        nz_cli_error(CMD, "unknown kind '%s' (see nz gen --help)", g->kind_name);
        return NZ_EXIT_USAGE;
    }
    for (int o = 0; o < NUM_OPTS; o++)
        if (g->given[o] != NULL && !(kinds[g->kind].options & BIT(o))) {
            nz_cli_error(CMD, "option %s does not apply to %s (see nz gen --help)",
                         option_name(o), g->kind_name);
            return NZ_EXIT_USAGE;
        }
    if (g->output == NULL) return nz_cli_missing(CMD, "output file (-o FILE)");
    if (nz_cli_check_matrix_path(CMD, g->output) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
    return NZ_EXIT_OK;
}

/* Parse option o (if given) as an integer in [min, max]; keep *out otherwise. */
static int opt_int64(const gen_cli_t *g, int o, int64_t min, int64_t max, int64_t *out) {
    if (g->given[o] == NULL) return 0;
    return nz_cli_int64(CMD, option_name(o), g->given[o], min, max, out);
}

static int opt_double(const gen_cli_t *g, int o, double min, double max, double *out) {
    if (g->given[o] == NULL) return 0;
    if (nz_cli_double(CMD, option_name(o), g->given[o], out)) return 1;
    if (*out < min || *out > max) {
        nz_cli_error(CMD, "option %s: %g is out of range [%g, %g]", option_name(o), *out, min,
                     max);
        return 1;
    }
    return 0;
}

/* The values of the parameters given (the first bad one named), then the checks that need
 * them: the output files, rmat's probabilities. NZ_EXIT_OK or NZ_EXIT_USAGE. */
static int gen_parameters(const gen_cli_t *g, gen_params_t *p) {
    const gen_params_t defaults = {.scale = 10, .edge_factor = 16, .row_length = 100,
                                   .short_length = 4, .long_rows = 4, .long_length = 500,
                                   .lower = 2, .upper = 2, .mean = 8.0, .peclet = 1.0,
                                   .poisson_ratio = 0.3, .seed = 1};
    *p = defaults;
    int bad = 0;
    bad |= opt_int64(g, OPT_NX, 1, MAX_DIM, &p->nx);
    bad |= !bad && opt_int64(g, OPT_NY, 1, MAX_DIM, &p->ny);
    bad |= !bad && opt_int64(g, OPT_NZ, 1, MAX_DIM, &p->nz);
    bad |= !bad && opt_int64(g, OPT_N, 1, MAX_DIM, &p->n);
    bad |= !bad && opt_int64(g, OPT_SCALE, 1, 30, &p->scale);
    bad |= !bad && opt_int64(g, OPT_EDGE_FACTOR, 1, 1 << 20, &p->edge_factor);
    bad |= !bad && opt_int64(g, OPT_ROWS, 0, MAX_DIM, &p->rows);
    bad |= !bad && opt_int64(g, OPT_COLS, 0, MAX_DIM, &p->cols);
    bad |= !bad && opt_int64(g, OPT_ROW_LENGTH, 0, MAX_DIM, &p->row_length);
    bad |= !bad && opt_int64(g, OPT_SHORT, 1, MAX_DIM, &p->short_length);
    bad |= !bad && opt_int64(g, OPT_LONG_ROWS, 0, MAX_DIM, &p->long_rows);
    bad |= !bad && opt_int64(g, OPT_LONG_LENGTH, 0, MAX_DIM, &p->long_length);
    bad |= !bad && opt_int64(g, OPT_LOWER, 0, MAX_DIM, &p->lower);
    bad |= !bad && opt_int64(g, OPT_UPPER, 0, MAX_DIM, &p->upper);
    bad |= !bad && opt_double(g, OPT_MEAN, 0.0, 1e9, &p->mean);
    bad |= !bad && opt_double(g, OPT_A, 0.0, 1.0, &p->a);
    bad |= !bad && opt_double(g, OPT_C, 0.0, 1.0, &p->c);
    bad |= !bad && opt_double(g, OPT_PECLET, 0.0, DBL_MAX, &p->peclet);
    /* [0, 0.5): 0.5 is incompressible, where the displacement formulation breaks down */
    if (!bad && g->given[OPT_POISSON_RATIO] != NULL) {
        bad |= nz_cli_double(CMD, option_name(OPT_POISSON_RATIO), g->given[OPT_POISSON_RATIO],
                             &p->poisson_ratio);
        if (!bad && !(p->poisson_ratio >= 0.0 && p->poisson_ratio < 0.5)) {
            nz_cli_error(CMD, "option %s: %g is out of range [0, 0.5)",
                         option_name(OPT_POISSON_RATIO), p->poisson_ratio);
            bad = 1;
        }
    }
    if (!bad && g->given[OPT_SEED] != NULL)
        bad |= nz_cli_uint64(CMD, option_name(OPT_SEED), g->given[OPT_SEED], &p->seed);
    if (!bad && g->given[OPT_B] != NULL) {
        if (g->kind == KIND_FE3D)
            p->b_path = g->given[OPT_B];
        else
            bad |= opt_double(g, OPT_B, 0.0, 1.0, &p->b);
    }
    p->u_path = g->given[OPT_U];
    p->rhs_path = g->given[OPT_RHS];
    p->modes_path = g->given[OPT_MODES];
    if (bad) return NZ_EXIT_USAGE;
    const nz_cli_file_t outputs[] = {{"-o", g->output},         {"--b", p->b_path},
                                     {"--u", p->u_path},        {"--rhs", p->rhs_path},
                                     {"--modes", p->modes_path}};
    if (nz_cli_check_files(CMD, outputs, 5, NULL, 0) != NZ_EXIT_OK) return NZ_EXIT_USAGE;
    if (g->kind == KIND_RMAT && p->a + p->b + p->c > 1.0) {
        nz_cli_error(CMD, "options --a --b --c: a + b + c = %g exceeds 1", p->a + p->b + p->c);
        return NZ_EXIT_USAGE;
    }
    return NZ_EXIT_OK;
}

/* The matrix of the kind (with fe3d's load and exact solution, elasticity3d's load and rigid-body
 * modes, when asked for); the defaults that depend on other parameters are filled in here. */
static nz_status_t gen_generate(nz_context_t *ctx, const gen_cli_t *g, gen_params_t *p,
                                nz_matrix_t **A, void **load, void **exact, void **modes) {
    const nz_value_type_t vt = g->value_type;
    switch (g->kind) {
    case KIND_LAPLACE2D:
        if (p->nx == 0) p->nx = 16;
        if (p->ny == 0) p->ny = p->nx;
        return nz_gen_laplace2d(ctx, A, p->nx, p->ny, vt);
    case KIND_LAPLACE3D:
        if (p->n == 0) p->n = p->nx != 0 ? p->nx : 8;
        if (p->nx == 0) p->nx = p->n;
        if (p->ny == 0) p->ny = p->n;
        if (p->nz == 0) p->nz = p->n;
        return nz_gen_laplace3d(ctx, A, p->nx, p->ny, p->nz, vt);
    case KIND_FE3D:
        if (p->n == 0) p->n = 8;
        return nz_gen_fe3d(ctx, A, p->b_path != NULL ? load : NULL,
                           p->u_path != NULL ? exact : NULL, p->n, vt);
    case KIND_RMAT:
        return nz_gen_rmat(ctx, A, (int)p->scale, (int)p->edge_factor, p->a, p->b, p->c, p->seed,
                           vt);
    case KIND_RANDOM:
        if (p->rows == 0 && g->given[OPT_ROWS] == NULL) p->rows = 1000;
        if (g->given[OPT_COLS] == NULL) p->cols = p->rows;
        return nz_gen_random(ctx, A, p->rows, p->cols, p->mean, p->seed, vt);
    case KIND_RAIL:
        if (g->given[OPT_ROWS] == NULL) p->rows = 100;
        if (g->given[OPT_COLS] == NULL) p->cols = 10000;
        return nz_gen_rail(ctx, A, p->rows, p->cols, p->row_length, p->seed, vt);
    case KIND_MIXED:
        if (g->given[OPT_ROWS] == NULL) p->rows = 1000;
        return nz_gen_mixed(ctx, A, p->rows, p->short_length, p->long_rows, p->long_length,
                            p->seed, vt);
    case KIND_CONVDIFF2D:
        if (p->nx == 0) p->nx = 16;
        if (p->ny == 0) p->ny = p->nx;
        return nz_gen_convdiff2d(ctx, A, p->nx, p->ny, p->peclet, vt);
    case KIND_CONVDIFF3D:
        if (p->n == 0) p->n = p->nx != 0 ? p->nx : 8;
        if (p->nx == 0) p->nx = p->n;
        if (p->ny == 0) p->ny = p->n;
        if (p->nz == 0) p->nz = p->n;
        return nz_gen_convdiff3d(ctx, A, p->nx, p->ny, p->nz, p->peclet, vt);
    case KIND_ELASTICITY3D:
        if (p->n == 0) p->n = 8;
        return nz_gen_elasticity3d(ctx, A, p->rhs_path != NULL ? load : NULL,
                                   p->modes_path != NULL ? modes : NULL, p->n, p->poisson_ratio,
                                   vt);
    default: /* KIND_BANDED */
        if (p->n == 0) p->n = 1000;
        return nz_gen_banded(ctx, A, p->n, p->lower, p->upper, vt);
    }
}

/* Parse and check everything; generate; write the matrix (and fe3d's or elasticity3d's vectors);
 * one line. */
int nz_cmd_gen(int argc, char **argv) {
    gen_cli_t g;
    gen_params_t p;
    int rc = gen_parse(argc, argv, &g);
    if (rc == NZ_CLI_HELP) return NZ_EXIT_OK;
    if (rc != NZ_EXIT_OK) return rc;
    if ((rc = gen_parameters(&g, &p)) != NZ_EXIT_OK) return rc;

    nz_context_t *ctx = NULL;
    nz_matrix_t *A = NULL;
    void *load = NULL, *exact = NULL, *modes = NULL;
    nz_matrix_info_t info;
    nz_status_t status = nz_cli_context_create(&ctx);
    NZ_CLI_TRY(status);
    NZ_CLI_TRY(gen_generate(ctx, &g, &p, &A, &load, &exact, &modes));
    NZ_CLI_TRY(nz_matrix_info(ctx, &info, A));
    if ((rc = nz_cli_write_matrix(CMD, ctx, A, g.output)) != NZ_EXIT_OK) goto cleanup;
    if (p.b_path != NULL)
        NZ_CLI_TRY(nz_mm_write_dense(ctx, p.b_path, g.value_type, info.rows, 1, load));
    if (p.u_path != NULL)
        NZ_CLI_TRY(nz_mm_write_dense(ctx, p.u_path, g.value_type, info.rows, 1, exact));
    if (p.rhs_path != NULL)
        NZ_CLI_TRY(nz_mm_write_dense(ctx, p.rhs_path, g.value_type, info.rows, 1, load));
    if (p.modes_path != NULL)
        NZ_CLI_TRY(nz_mm_write_dense(ctx, p.modes_path, g.value_type, info.rows, 6, modes));
    printf("%s: %lld x %lld, %lld nonzeros, %s -> %s\n", kinds[g.kind].name,
           (long long)info.rows, (long long)info.cols, (long long)info.nnz,
           nz_cli_precision_name(g.value_type), g.output);

cleanup:
    if (ctx != NULL) {
        nz_free(ctx, load);
        nz_free(ctx, exact);
        nz_free(ctx, modes);
    }
    nz_matrix_destroy(&A);
    nz_context_destroy(&ctx);
    return rc;
}
