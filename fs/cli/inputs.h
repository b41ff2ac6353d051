/* inputs: the INPUTS options every command shares (--specs, --config,
 * --inherit, --pass, --env, --env-file, --extra-arch, --state,
 * --host-root), taken from getopt_long or from the mount's -o list. */
#ifndef ENVFS_INPUTS_H
#define ENVFS_INPUTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "resolve.h"

/* getopt_long values of the INPUTS options, above every short option. */
enum inputs_key {
	INPUTS_SPECS = 0x100,
	INPUTS_CONFIG,
	INPUTS_INHERIT,
	INPUTS_PASS,
	INPUTS_ENV,
	INPUTS_ENV_FILE,
	INPUTS_EXTRA_ARCH,
	INPUTS_STATE,
	INPUTS_HOST_ROOT,
	INPUTS_KEY_END,
};

/* The entries of a getopt_long table for the INPUTS options. */
#define INPUTS_LONG_OPTIONS \
	{ "specs", required_argument, NULL, INPUTS_SPECS }, \
	{ "config", required_argument, NULL, INPUTS_CONFIG }, \
	{ "inherit", required_argument, NULL, INPUTS_INHERIT }, \
	{ "pass", required_argument, NULL, INPUTS_PASS }, \
	{ "env", required_argument, NULL, INPUTS_ENV }, \
	{ "env-file", required_argument, NULL, INPUTS_ENV_FILE }, \
	{ "extra-arch", required_argument, NULL, INPUTS_EXTRA_ARCH }, \
	{ "state", required_argument, NULL, INPUTS_STATE }, \
	{ "host-root", required_argument, NULL, INPUTS_HOST_ROOT }

/* The INPUTS part of every --help. */
extern const char inputs_help[];

struct cli_inputs {
	struct envfs_inputs in;        /* the arrays below, once finished */
	char *state;                   /* --state FILE, or NULL */
	/* Every string is owned (copied from argv or -o), so the daemon may
	 * scrub its argv (inputs_scrub_argv). */
	char *specs, *config, *host_root;
	char **inherit, **pass, **arches;
	size_t ninherit, npass, narches;
	/* --env, in order: NAME=VALUE, or NAME alone (the value comes from
	 * the caller's environment at inputs_finish). */
	char **env_args;
	size_t nenv_args;
	char **env_files;              /* --env-file FILE, in order */
	size_t nenv_files;
	/* Built by inputs_finish: the cli layer's NAME=VALUE strings and,
	 * beside each, where it came from (NULL: written inline as --env
	 * NAME=VALUE). */
	char **env;
	char **env_sources;
	size_t nenv;
};

/* Applies one INPUTS option (key from INPUTS_LONG_OPTIONS, its argument).
 * Returns 0, or -EINVAL after printing one line naming the problem. */
int inputs_take(struct cli_inputs *ci, int key, const char *arg);
/* Fills defaults (the shipped specs when --specs was not given, the host
 * environment), reads the --env-files and the caller's values of bare
 * --env NAMEs, and checks that the named files can be read, printing one
 * line per problem. Returns 0 or a negative errno. */
int inputs_finish(struct cli_inputs *ci);
void inputs_release(struct cli_inputs *ci);

/* Overwrite with NUL bytes, in the process's own argv, the value of an
 * --env argument (arg is getopt's optarg, NAME=VALUE) or of every env=
 * item of a -o list, so /proc/PID/cmdline and ps no longer show them.
 * Call once parsed: cli_inputs holds copies. */
void inputs_scrub_env_arg(char *arg);
void inputs_scrub_opt_list(char *list);

/* One warning line on stderr per secret (world_secret_declared) written
 * inline as --env NAME=VALUE, naming it, never its value. */
void inputs_warn_inline_secrets(const struct cli_inputs *ci, const struct world *w);

/* The shipped specs directory for this binary (installed or build tree).
 * Returns a static string, or NULL when none is found. */
const char *specs_default_dir(void);

#endif
