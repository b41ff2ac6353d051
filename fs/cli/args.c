/* cli_parse: one getopt_long loop for every command that prints or runs;
 * see args.h. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

enum {
	KEY_FORMAT = INPUTS_KEY_END,
	KEY_FORCE,
	KEY_CLEAN,
	KEY_MOUNT,
	KEY_ARCH_LONG,     /* --arch: -a's long name, or the old extra arch */
	KEY_ARCH_DIR,      /* --arch-dir: the old long name of -a */
	KEY_ALL,
};

static const struct option long_options[] = {
	INPUTS_LONG_OPTIONS
	{ "backend", required_argument, NULL, 'b' },
	{ "arch", required_argument, NULL, KEY_ARCH_LONG },
	{ "arch-dir", required_argument, NULL, KEY_ARCH_DIR },
	{ "format", required_argument, NULL, KEY_FORMAT },
	{ "force", no_argument, NULL, KEY_FORCE },
	{ "clean", no_argument, NULL, KEY_CLEAN },
	{ "mount", required_argument, NULL, KEY_MOUNT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "output", required_argument, NULL, 'o' },
	{ "all", no_argument, NULL, KEY_ALL },
	SYNC_LONG_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "primus-envfs: %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see primus-envfs %s --help)\n", cmd->name);
	return CLI_EX_USAGE;
}

static void print_help(const struct cli_cmd *cmd)
{
	printf("usage: primus-envfs %s %s\n\n%s\n%s", cmd->name, cmd->synopsis, cmd->help,
	       inputs_help());
}

static bool allowed(const struct cli_cmd *cmd, int key)
{
	switch (key) {
	case 'b':
	case 'a':
	case KEY_ARCH_LONG:
	case KEY_ARCH_DIR:
		return cmd->flags & CLI_DIR;
	case KEY_FORMAT:
		return cmd->flags & CLI_FORMAT;
	case KEY_FORCE:
		return cmd->flags & CLI_FORCE;
	case KEY_CLEAN:
		return cmd->flags & CLI_CLEAN;
	case KEY_MOUNT:
		return cmd->flags & CLI_MOUNT;
	case 'q':
		return cmd->flags & CLI_QUIET;
	case 'o':
		return cmd->flags & CLI_OUTPUT;
	case KEY_ALL:
		return cmd->flags & CLI_ALL;
	case SYNC_KEY_SYNC ... SYNC_KEY_END - 1:
		return cmd->flags & CLI_SYNC;
	default:
		return true;
	}
}

static bool format_known(const struct cli_cmd *cmd, const char *f)
{
	const char *const *p;

	for (p = cmd->formats; p && *p; p++)
		if (!strcmp(*p, f))
			return true;
	return false;
}

static int bad_format(const struct cli_cmd *cmd, const char *f)
{
	const char *const *p;

	fprintf(stderr, "primus-envfs: %s: unknown format '%s'; formats:", cmd->name, f);
	for (p = cmd->formats; *p; p++)
		fprintf(stderr, " %s", *p);
	fputc('\n', stderr);
	return -EINVAL;
}

/* Whether getopt_long refused the abbreviation name (n bytes) for
 * matching two of longopts. */
static bool ambiguous(const struct option *longopts, const char *name, size_t n)
{
	const struct option *o;
	int hits = 0;

	for (o = longopts; o->name; o++)
		hits += n && !strncmp(o->name, name, n);
	return hits > 1;
}

static const char *long_name(const struct option *longopts, int c)
{
	for (; longopts && longopts->name; longopts++)
		if (!longopts->flag && longopts->val == c)
			return longopts->name;
	return NULL;
}

static void refusal(char *msg, size_t size, int c, char *const *argv,
		    const struct option *longopts)
{
	const char *name;
	const char *a = argv[optind - 1] ? argv[optind - 1] : "";
	int n = (int)strcspn(a, "=");
	bool is_long = !strncmp(a, "--", 2);

	if (c == ':' && !is_long)
		snprintf(msg, size, "option '-%c' needs an argument", optopt);
	else if (c == ':')
		snprintf(msg, size, "option '%.*s' needs an argument", n, a);
	else if (c == '?' && is_long && optopt)
		snprintf(msg, size, "option '%.*s' takes no argument", n, a);
	else if (is_long && c == '?' && longopts && ambiguous(longopts, a + 2, (size_t)n - 2))
		snprintf(msg, size, "option '%.*s' is ambiguous", n, a);
	else if (is_long)
		snprintf(msg, size, "unrecognized option '%.*s'", n, a);
	else if (c != '?' && (c < 0 || c > 255 || !isgraph(c)) &&
		 (name = long_name(longopts, c)))
		/* A long-only option of another command whose value getopt took
		 * as the next word: argv names the value, its key is no character. */
		snprintf(msg, size, "unrecognized option '--%s'", name);
	else
		snprintf(msg, size, "unrecognized option '-%c'", c == '?' ? optopt : c);
}

int cli_refused(const struct cli_cmd *cmd, int c, char *const *argv,
		const struct option *longopts)
{
	char msg[512];

	refusal(msg, sizeof(msg), c, argv, longopts);
	if (cmd)
		cli_usage_error(cmd, "%s", msg);
	else
		fprintf(stderr, "primus-envfs: %s (see primus-envfs --help)\n", msg);
	return -EINVAL;
}

/* --arch X and -a Y on one command line is how --arch (an extra arch
 * directory, before --extra-arch) was used with resolve and exec: that
 * spelling keeps its old meaning for one release, with a note. */
static int take_old_arches(struct cli_args *a, char **old, size_t nold)
{
	size_t k;
	int err;

	for (k = 0; k < nold; k++) {
		fprintf(stderr, "primus-envfs: note: --arch %s beside -a adds an extra arch "
			"directory, as before; that spelling is deprecated and will select "
			"the arch like -a: write --extra-arch %s\n", old[k], old[k]);
		if ((err = inputs_take(&a->ci, INPUTS_EXTRA_ARCH, old[k])) < 0)
			return err;
	}
	return 0;
}

int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, struct cli_args *a)
{
	/* '+': options end at the first operand, so exec's COMMAND keeps its
	 * own options; '-' never (the operands are counted below). */
	const char *shorts = cmd->flags & CLI_DIR ? "+:b:a:o:qh" : "+:o:qh";
	char *long_arch[16];
	size_t nlong = 0;
	bool short_arch = false;
	int c, err;

	/* Operands among the options: getopt permutes them to the end. */
	if (cmd->flags & CLI_SIDES)
		shorts++;
	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	a->format = cmd->format_default;
	opterr = 0;
	/* 0, not 1: glibc then starts afresh (diff parses twice). */
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, long_options, NULL)) != -1) {
		if (c == '?' || c == ':')
			return cli_refused(cmd, c, argv, long_options);
		if (!allowed(cmd, c))
			return cli_refused(cmd, c, argv, long_options);
		switch (c) {
		case 'h':
			print_help(cmd);
			a->help = true;
			return 0;
		case 'b':
			a->backend = optarg;
			break;
		case 'a':
		case KEY_ARCH_DIR:
			if (c == KEY_ARCH_DIR)
				fprintf(stderr, "primus-envfs: note: --arch-dir is deprecated: "
					"write -a or --arch\n");
			a->arch = optarg;
			short_arch = true;
			break;
		case KEY_ARCH_LONG:
			if (nlong == sizeof(long_arch) / sizeof(long_arch[0]))
				return cli_usage_error(cmd, "too many --arch options"), -EINVAL;
			long_arch[nlong++] = optarg;
			break;
		case KEY_FORMAT:
			if (!format_known(cmd, optarg))
				return bad_format(cmd, optarg);
			a->format = optarg;
			break;
		case KEY_FORCE:
			a->force = true;
			break;
		case KEY_CLEAN:
			a->clean = true;
			break;
		case KEY_MOUNT:
			a->mount = optarg;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'o':
			a->output = optarg;
			break;
		case KEY_ALL:
			a->all = true;
			break;
		default:
			if (SYNC_IS_KEY(c)) {
				if ((err = sync_opts_take(&a->so, c, optarg, true)) < 0)
					return err;
				break;
			}
			if ((err = inputs_take(&a->ci, c, optarg)) < 0)
				return err;
		}
	}
	if (short_arch) {
		if ((err = take_old_arches(a, long_arch, nlong)) < 0)
			return err;
	} else if (nlong) {
		a->arch = long_arch[nlong - 1];
	}
	if (a->clean && a->ci.inherit_env)
		return cli_usage_error(cmd, "--clean and --inherit-env contradict each other"),
		       -EINVAL;
	/* As env(1): a run keeps its caller's environment unless told. */
	if ((cmd->flags & CLI_CLEAN) && !a->clean && !a->ci.ninherit)
		a->ci.inherit_env = true;
	if ((cmd->flags & CLI_DIR_REQUIRED) && (!a->backend || !a->arch))
		return cli_usage_error(cmd, "-b BACKEND and -a ARCH are required"), -EINVAL;
	if (cmd->flags & CLI_COMMAND) {
		if (optind >= argc)
			return cli_usage_error(cmd, "no COMMAND to run"), -EINVAL;
		a->command = argv + optind;
		return 0;
	}
	if (cmd->flags & CLI_OPERANDS) {
		a->command = argv + optind;
		a->noperands = argc - optind;
		return 0;
	}
	if (cmd->flags & CLI_SIDES) {
		a->operands = argv + optind;
		a->noperands = argc - optind;
		return 0;
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]), -EINVAL;
	return 0;
}

bool cli_start(const struct cli_cmd *cmd, int argc, char **argv, struct cli_args *a, int *rc)
{
	*rc = CLI_EX_USAGE;
	if (cli_parse(cmd, argc, argv, a) < 0)
		return false;
	*rc = 0;
	if (a->help)
		return false;
	*rc = 2;
	return inputs_finish(&a->ci) == 0;
}
