/* args: the command lines of resolve, check, exec and list, parsed with
 * getopt_long: INPUTS, -b/--backend, -a/--arch, --format and each
 * command's own switches, in every form getopt knows (-bmaxtext,
 * -b maxtext, --backend=maxtext, --backend maxtext). */
#ifndef ENVFS_ARGS_H
#define ENVFS_ARGS_H

#include <stdbool.h>

#include "inputs.h"

/* sysexits.h's EX_USAGE: a command line that cannot be run as written,
 * apart from check's 1 (warnings) and 2 (errors). */
#define CLI_EX_USAGE 64

enum cli_flags {
	CLI_DIR = 1,          /* -b BACKEND and -a ARCH */
	CLI_FORMAT = 2,       /* --format NAME (one of cmd->formats) */
	CLI_FORCE = 4,        /* --force */
	CLI_QUIET = 8,        /* -q, --quiet */
	CLI_COMMAND = 16,     /* [--] COMMAND [ARG...] ends the options */
	CLI_DIR_REQUIRED = 32, /* -b and -a must both be given */
};

/* The --help lines of -b and -a for a command that needs both. */
#define CLI_DIR_HELP \
	"  -b, --backend BACKEND   a backend of the specs (primus-envfs list)\n" \
	"  -a, --arch ARCH         an arch of BACKEND, or host: this node's\n"

struct cli_cmd {
	const char *name;             /* "resolve" */
	unsigned flags;               /* CLI_* */
	const char *synopsis;         /* the usage: line after the name */
	const char *help;             /* the command's own options and exit
	                                 statuses, for --help */
	const char *const *formats;   /* CLI_FORMAT: the names, NULL-ended */
	const char *format_default;
};

struct cli_args {
	const struct cli_cmd *cmd;    /* the command being parsed */
	struct cli_inputs ci;
	const char *backend, *arch;   /* borrowed from argv; NULL when not given */
	const char *format;           /* borrowed; format_default when not given */
	bool force, quiet;
	bool report_only;             /* resolve --format explain: errors are
	                                 shown, not refused */
	bool help;                    /* -h: the help was printed, exit 0 */
	char **command;               /* CLI_COMMAND: argv's COMMAND [ARG...] */
};

/* Parses argv (argv[0] is the command's name). Returns 0, or -EINVAL
 * after printing one line naming the problem (exit CLI_EX_USAGE). Free
 * a->ci with inputs_release() either way. */
int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, struct cli_args *a);
/* The start every command shares: parses argv, prints the help for -h,
 * and reads the inputs (inputs_finish). Returns true when the command
 * goes on; false with *rc the exit status to return: 0 after the help,
 * CLI_EX_USAGE for the command line, 2 for an input that cannot be read.
 * Free a->ci with inputs_release() either way. */
bool cli_start(const struct cli_cmd *cmd, int argc, char **argv, struct cli_args *a, int *rc);
/* Prints "primus-envfs: CMD: MESSAGE (see primus-envfs CMD --help)" and
 * returns CLI_EX_USAGE. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
