/* cli_options.h: the table-driven option parser of the nz subcommands and the usage text it prints. */
#ifndef NZ_TOOL_CLI_OPTIONS_H
#define NZ_TOOL_CLI_OPTIONS_H

#include "cli.h"

#include <stddef.h>

/* What an option does with its value. The kinds without a value are FLAG, SET, BITS and
 * REFUSED; every other kind takes the next argument as its value (even one that starts with
 * '-', so `--alpha -1` works). */
typedef enum nz_cli_kind {
    NZ_CLI_FLAG,    /* int = 1 */
    NZ_CLI_SET,     /* int = set_value */
    NZ_CLI_BITS,    /* unsigned |= bits */
    NZ_CLI_INT,     /* int in [min, max] (nz_cli_int) */
    NZ_CLI_INT64,   /* int64_t in [min, max] (nz_cli_int64) */
    NZ_CLI_SIZE,    /* size_t from an integer in [min, max] */
    NZ_CLI_UINT64,  /* uint64_t, any non-negative integer (nz_cli_uint64) */
    NZ_CLI_THREADS, /* int >= min, clamped to the online CPUs (nz_cli_threads) */
    NZ_CLI_DOUBLE,  /* a finite double (nz_cli_double), in [dmin, dmax] when dmin < dmax */
    NZ_CLI_STRING,  /* const char *: the argument itself */
    NZ_CLI_ENUM,    /* int-sized (an int or a C enum): the value of the choice named */
    NZ_CLI_CUSTOM,  /* parse(): checks and stores whatever the kinds above cannot */
    NZ_CLI_REFUSED  /* a known option that this command cannot run: "option X <refusal>" */
} nz_cli_kind_t;

/* One name of an NZ_CLI_ENUM option and its value. */
typedef struct nz_cli_choice {
    const char *name;
    int value;
} nz_cli_choice_t;

/* The names an NZ_CLI_ENUM option accepts. A name whose value an earlier name has is an
 * alias: accepted, but left out of the lists in messages and in the usage text. */
typedef struct nz_cli_enum {
    const nz_cli_choice_t *choices; /* ends with a NULL name */
    /* The message after "option X: " for a name not in the list, a format taking the value
     * and the list ("a, b or c"); NULL: "'%s' is not %s". */
    const char *invalid;
} nz_cli_enum_t;

/* The names of --precision (single, double; float, f32, f64) and --backend (cpu, cuda; gpu),
 * with the messages of every subcommand. */
extern const nz_cli_enum_t nz_cli_precision_names;
extern const nz_cli_enum_t nz_cli_backend_names;

/* One option of a subcommand: how it is spelled, what it stores where, and its line of the
 * usage text. A table of them (static const) is the whole definition of a command line. */
typedef struct nz_cli_option {
    const char *name;          /* "--tol"; NULL: a positional argument (below) */
    const char *short_name;    /* "-o" beside "--output", or NULL */
    nz_cli_kind_t kind;
    size_t offset, size;       /* the field in the options struct: NZ_CLI_AT */
    int64_t min, max;          /* INT, INT64, SIZE: the range; THREADS: the least */
    double dmin, dmax;         /* DOUBLE: the range, when dmin < dmax */
    int set_value;             /* SET */
    unsigned bits;             /* BITS */
    const nz_cli_enum_t *names; /* ENUM */
    /* CUSTOM: parse and store value (option: the spelling used); 0, or 1 after one line. */
    int (*parse)(const char *cmd, const char *option, const char *value, void *options);
    const char *refusal;       /* REFUSED: the rest of the line after "option X " */
    const char *metavar;       /* the value's name in the usage text ("FILE"; NULL for an ENUM:
                                  its names, "a|b") */
    const char *help;          /* the usage text, lines split by '\n'; NULL: not listed (an
                                  option documented by the command's own text) */
} nz_cli_option_t;

/* The field `member` of the options struct `type`, for an nz_cli_option_t initializer. */
#define NZ_CLI_AT(type, member) \
    .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)

/* Positional arguments are entries without a name, filled in table order: an NZ_CLI_STRING
 * takes one argument (the first one still NULL gets it), an NZ_CLI_CUSTOM every argument left
 * (parse is called with option NULL). An argument no entry takes is "unexpected". */

/* A table of options and the struct its offsets point into. */
typedef struct nz_cli_table {
    const nz_cli_option_t *options;
    size_t count;
    void *target;              /* NULL when the table is only printed */
    const char *heading;       /* the usage text's line before these options ("options:") */
} nz_cli_table_t;

#define NZ_CLI_COUNT(array) (sizeof (array) / sizeof (array)[0])

/* A subcommand's usage text around its options. */
typedef struct nz_cli_command {
    const char *name;          /* "cg": error lines read "nz cg: ...", help hints "nz cg --help" */
    const char *synopsis;      /* the text before the options */
    const char *epilogue;      /* the text after them (NULL: none) */
    int column;                /* where the help texts start */
} nz_cli_command_t;

/* What nz_cli_parse returns after -h / --help printed the usage (the command exits 0). */
#define NZ_CLI_HELP (-1)

/* Parse argv[1 .. argc-1] against the tables (searched in order: an option of an earlier
 * table hides one of the same name in a later one). -h and --help print the usage and return
 * NZ_CLI_HELP; every problem prints one line naming it and returns NZ_EXIT_USAGE: an unknown
 * option, a missing or bad value, a refused option, an unexpected argument. NZ_EXIT_OK
 * otherwise. Fields whose options are not given keep what the caller put there (the
 * defaults). Nothing is printed while nz_cli_quiet is set. */
int nz_cli_parse(const nz_cli_command_t *command, const nz_cli_table_t *tables, int num_tables,
                 int argc, char **argv);

/* The usage text: synopsis, the options of every table (nz_cli_print_options), epilogue. */
void nz_cli_print_usage(const nz_cli_command_t *command, const nz_cli_table_t *tables,
                        int num_tables);
/* The options part of the usage text: per table its heading, then one entry per option (its
 * names, its metavar, its help from `column` on; hidden options and options hidden by an
 * earlier table left out), then the line of -h, --help. */
void nz_cli_print_options(const nz_cli_command_t *command, const nz_cli_table_t *tables,
                          int num_tables);

#endif /* NZ_TOOL_CLI_OPTIONS_H */
