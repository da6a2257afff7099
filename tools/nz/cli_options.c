/* cli_options.c: the table-driven option parser of the nz subcommands and the usage text it prints. */
#include "cli_options.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static const nz_cli_choice_t precision_choices[] = {
    {"single", NZ_F32}, {"double", NZ_F64}, {"float", NZ_F32}, {"f32", NZ_F32}, {"f64", NZ_F64},
    {NULL, 0}};
const nz_cli_enum_t nz_cli_precision_names = {precision_choices,
                                              "'%s' is not a precision (%s)"};

static const nz_cli_choice_t backend_choices[] = {
    {"cpu", NZ_BACKEND_CPU}, {"cuda", NZ_BACKEND_CUDA}, {"gpu", NZ_BACKEND_CUDA}, {NULL, 0}};
const nz_cli_enum_t nz_cli_backend_names = {backend_choices, "'%s' is not a backend (%s)"};

static int takes_value(nz_cli_kind_t kind) {
    return kind != NZ_CLI_FLAG && kind != NZ_CLI_SET && kind != NZ_CLI_BITS &&
           kind != NZ_CLI_REFUSED;
}

/* A choice that repeats the value of an earlier one is an alias. */
static int is_alias(const nz_cli_choice_t *choices, int k) {
    for (int j = 0; j < k; j++)
        if (choices[j].value == choices[k].value) return 1;
    return 0;
}

/* The names of an enum without its aliases, separated as "a, b or c" (separator NULL) or by
 * `separator` ("a|b|c"). */
static void list_names(const nz_cli_enum_t *names, const char *separator, char *text,
                       size_t size) {
    const nz_cli_choice_t *choices = names->choices;
    int count = 0, listed = 0;
    for (int k = 0; choices[k].name != NULL; k++) count += !is_alias(choices, k);
    text[0] = '\0';
    for (int k = 0; choices[k].name != NULL; k++) {
        if (is_alias(choices, k)) continue;
        const char *gap = listed == 0           ? ""
                          : separator != NULL   ? separator
                          : listed == count - 1 ? " or "
                                                : ", ";
        size_t used = strlen(text);
        snprintf(text + used, size - used, "%s%s", gap, choices[k].name);
        listed++;
    }
}

static int store_enum(const char *cmd, const nz_cli_option_t *opt, const char *option,
                      const char *value, int *field) {
    const nz_cli_choice_t *choices = opt->names->choices;
    for (int k = 0; choices[k].name != NULL; k++)
        if (strcmp(value, choices[k].name) == 0) {
            *field = choices[k].value;
            return 0;
        }
    char list[256], message[512];
    list_names(opt->names, NULL, list, sizeof list);
    snprintf(message, sizeof message,
             opt->names->invalid != NULL ? opt->names->invalid : "'%s' is not %s", value, list);
    nz_cli_error(cmd, "option %s: %s", option, message);
    return 1;
}

static int store_double(const char *cmd, const nz_cli_option_t *opt, const char *option,
                        const char *value, double *field) {
    double v;
    if (nz_cli_double(cmd, option, value, &v)) return 1;
    if (opt->dmin < opt->dmax && (v < opt->dmin || v > opt->dmax)) {
        nz_cli_error(cmd, "option %s: %g is out of range [%g, %g]", option, v, opt->dmin,
                     opt->dmax);
        return 1;
    }
    *field = v;
    return 0;
}

/* Store `value` (NULL for the kinds without one) of option `opt`, spelled `option`, into its
 * field of target: 0, or 1 after one line. */
static int store(const char *cmd, const nz_cli_option_t *opt, const char *option,
                 const char *value, void *target) {
    void *field = (char *)target + opt->offset;
    int64_t v64 = 0;
    switch (opt->kind) {
    case NZ_CLI_FLAG:
        assert(opt->size == sizeof(int));
        *(int *)field = 1;
        return 0;
    case NZ_CLI_SET:
        assert(opt->size == sizeof(int));
        *(int *)field = opt->set_value;
        return 0;
    case NZ_CLI_BITS:
        assert(opt->size == sizeof(unsigned));
        *(unsigned *)field |= opt->bits;
        return 0;
    case NZ_CLI_INT:
        assert(opt->size == sizeof(int));
        return nz_cli_int(cmd, option, value, (int)opt->min, (int)opt->max, (int *)field);
    case NZ_CLI_INT64:
        assert(opt->size == sizeof(int64_t));
        return nz_cli_int64(cmd, option, value, opt->min, opt->max, (int64_t *)field);
    case NZ_CLI_SIZE:
        assert(opt->size == sizeof(size_t));
        if (nz_cli_int64(cmd, option, value, opt->min, opt->max, &v64)) return 1;
        *(size_t *)field = (size_t)v64;
        return 0;
    case NZ_CLI_UINT64:
        assert(opt->size == sizeof(uint64_t));
        return nz_cli_uint64(cmd, option, value, (uint64_t *)field);
    case NZ_CLI_THREADS:
        assert(opt->size == sizeof(int));
        return nz_cli_threads(cmd, option, value, (int)opt->min, (int *)field);
    case NZ_CLI_DOUBLE:
        assert(opt->size == sizeof(double));
        return store_double(cmd, opt, option, value, (double *)field);
    case NZ_CLI_STRING:
        assert(opt->size == sizeof(const char *));
        *(const char **)field = value;
        return 0;
    case NZ_CLI_ENUM:
        assert(opt->size == sizeof(int));
        return store_enum(cmd, opt, option, value, (int *)field);
    case NZ_CLI_CUSTOM:
        return opt->parse(cmd, option, value, target);
    case NZ_CLI_REFUSED:
        break;
    }
    nz_cli_error(cmd, "option %s %s", option, opt->refusal);
    return 1;
}

/* The option named `arg` in the first table that has it, and that table. */
static const nz_cli_option_t *find(const nz_cli_table_t *tables, int num_tables, const char *arg,
                                   const nz_cli_table_t **table) {
    for (int t = 0; t < num_tables; t++)
        for (size_t k = 0; k < tables[t].count; k++) {
            const nz_cli_option_t *opt = &tables[t].options[k];
            if (opt->name == NULL) continue;
            if (strcmp(arg, opt->name) == 0 ||
                (opt->short_name != NULL && strcmp(arg, opt->short_name) == 0)) {
                *table = &tables[t];
                return opt;
            }
        }
    return NULL;
}

/* An argument that names no option: "-x" is an unknown option ("-" alone is an argument, the
 * standard input or output); otherwise the first positional entry still free takes it. */
static int positional(const nz_cli_command_t *command, const nz_cli_table_t *tables,
                      int num_tables, const char *arg) {
    const char *cmd = command->name;
    if (arg[0] == '-' && arg[1] != '\0') return nz_cli_unknown_option(cmd, arg);
    for (int t = 0; t < num_tables; t++)
        for (size_t k = 0; k < tables[t].count; k++) {
            const nz_cli_option_t *opt = &tables[t].options[k];
            if (opt->name != NULL) continue;
            void *field = (char *)tables[t].target + opt->offset;
            if (opt->kind == NZ_CLI_CUSTOM)
                return opt->parse(cmd, NULL, arg, tables[t].target) ? NZ_EXIT_USAGE
                                                                    : NZ_EXIT_OK;
            if (opt->kind == NZ_CLI_STRING && *(const char **)field == NULL) {
                *(const char **)field = arg;
                return NZ_EXIT_OK;
            }
        }
    return nz_cli_extra_argument(cmd, arg);
}

int nz_cli_parse(const nz_cli_command_t *command, const nz_cli_table_t *tables, int num_tables,
                 int argc, char **argv) {
    const char *cmd = command->name;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        if (nz_cli_is_help(arg)) {
            if (!nz_cli_quiet) nz_cli_print_usage(command, tables, num_tables);
            return NZ_CLI_HELP;
        }
        const nz_cli_table_t *table = NULL;
        const nz_cli_option_t *opt = find(tables, num_tables, arg, &table);
        if (opt == NULL) {
            int rc = positional(command, tables, num_tables, arg);
            if (rc != NZ_EXIT_OK) return rc;
            continue;
        }
        if (takes_value(opt->kind)) {
            if (i + 1 >= argc) {
                nz_cli_error(cmd, "option %s needs a value", arg);
                return NZ_EXIT_USAGE;
            }
            value = argv[++i];
        }
        if (store(cmd, opt, arg, value, table->target) != 0) return NZ_EXIT_USAGE;
    }
    return NZ_EXIT_OK;
}

/* An option in the usage text: "  -o, --output FILE", padded to `column` (or alone on its line
 * when it reaches it), then the help, its continuation lines indented to `column`. */
static void print_option(const nz_cli_option_t *opt, int column) {
    int width = printf("  %s%s%s", opt->short_name != NULL ? opt->short_name : "",
                       opt->short_name != NULL ? ", " : "", opt->name);
    if (takes_value(opt->kind)) {
        char names[256];
        const char *metavar = opt->metavar;
        if (metavar == NULL && opt->kind == NZ_CLI_ENUM) {
            list_names(opt->names, "|", names, sizeof names);
            metavar = names;
        }
        width += printf(" %s", metavar != NULL ? metavar : "VALUE");
    }
    if (width >= column || opt->help[0] == '\0') {
        putchar('\n');
        width = 0;
    }
    for (const char *line = opt->help; *line != '\0';) {
        size_t length = strcspn(line, "\n");
        printf("%*s%.*s\n", column - width, "", (int)length, line);
        width = 0;
        line += line[length] == '\n' ? length + 1 : length;
    }
}

/* True when an earlier table has an option of this name (the parser finds that one). */
static int hidden_by_earlier(const nz_cli_table_t *tables, int t, const char *name) {
    const nz_cli_table_t *table = NULL;
    return find(tables, t, name, &table) != NULL;
}

void nz_cli_print_options(const nz_cli_command_t *command, const nz_cli_table_t *tables,
                          int num_tables) {
    static const nz_cli_option_t help = {.name = "--help", .short_name = "-h",
                                         .kind = NZ_CLI_FLAG, .help = "this text"};
    for (int t = 0; t < num_tables; t++) {
        if (tables[t].heading != NULL) fputs(tables[t].heading, stdout);
        for (size_t k = 0; k < tables[t].count; k++) {
            const nz_cli_option_t *opt = &tables[t].options[k];
            if (opt->name == NULL || opt->help == NULL ||
                hidden_by_earlier(tables, t, opt->name))
                continue;
            print_option(opt, command->column);
        }
    }
    print_option(&help, command->column);
}

void nz_cli_print_usage(const nz_cli_command_t *command, const nz_cli_table_t *tables,
                        int num_tables) {
    fputs(command->synopsis, stdout);
    nz_cli_print_options(command, tables, num_tables);
    if (command->epilogue != NULL) fputs(command->epilogue, stdout);
}
