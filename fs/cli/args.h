/* args: the command lines of resolve, check, exec and list, parsed with
 * getopt_long: INPUTS, -b/--backend, -a/--arch, --format and each
 * command's own switches, in every form getopt knows (-bmaxtext,
 * -b maxtext, --backend=maxtext, --backend maxtext). */
#ifndef ENVFS_ARGS_H
#define ENVFS_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "inputs.h"
#include "sync_opts.h"

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
	CLI_CLEAN = 64,       /* --clean; without it and without --inherit,
	                         the process's environment is the image */
	CLI_MOUNT = 128,      /* --mount DIR */
	CLI_OPERANDS = 256,   /* operands after the options (a->command, may
	                         be empty; the options end at the first) */
	CLI_OUTPUT = 512,     /* -o, --output FILE */
	CLI_SIDES = 1024,     /* operands among the options, permuted to the
	                         end, in operands (diff's sides) */
	CLI_ALL = 2048,       /* --all */
	CLI_SYNC = 4096,      /* the sync options (sync_opts.h), into so */
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
	const char *dir_from;         /* diff: the record:FILE operand that named
	                                 backend and arch (no -b, -a); borrowed */
	const char *format;           /* borrowed; format_default when not given */
	bool force, quiet, all;
	bool clean;                   /* --clean */
	const char *mount;            /* --mount DIR, borrowed; NULL when not given */
	bool report_only;             /* resolve --format explain: errors are
	                                 shown, not refused */
	bool help;                    /* -h: the help was printed, exit 0 */
	char **command;               /* CLI_COMMAND: argv's COMMAND [ARG...];
	                                 CLI_OPERANDS: the operands, NULL-ended */
	const char *output;           /* CLI_OUTPUT: -o's FILE; NULL when not given */
	char **operands;              /* CLI_SIDES: argv's operands */
	struct sync_opts so;          /* CLI_SYNC: freed with sync_opts_release() */
	int noperands;                /* CLI_OPERANDS, CLI_SIDES: how many */
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

/* Prints the line for what getopt refused (opterr off) as
 * cli_usage_error does, or for the mount's own command line (cmd NULL)
 * as "primus-envfs: MESSAGE (see primus-envfs --help)". c is getopt's
 * answer ('?' or ':'), or an option the caller does not take. An
 * option's own spelling is shown up to its '=', never the value it was
 * given. longopts, the table getopt_long had, tells an ambiguous
 * abbreviation (NULL: said to be unrecognized). Returns -EINVAL. */
struct option;
int cli_refused(const struct cli_cmd *cmd, int c, char *const *argv,
		const struct option *longopts);

#endif
