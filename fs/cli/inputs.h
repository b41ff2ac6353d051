/* inputs: the INPUTS options every command shares (--specs, --config,
 * --inherit, --pass, --env, --env-file, --extra-arch, --state,
 * --host-root, --secret, --ignore, --primus-path), taken from getopt_long or
 * from the mount's -o list. */
#ifndef ENVFS_INPUTS_H
#define ENVFS_INPUTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "resolve.h"

#include "inputs_table.h"

/* getopt_long values of the INPUTS options, above every short option. */
#define INPUTS_ENUM_ARG(key, lng, mnt, arg, help, man) key,
#define INPUTS_ENUM_FLAG(key, lng, mnt, help, man) key,
#define INPUTS_SKIP_ALT(lng, arg, help, man)
enum inputs_key {
	INPUTS_KEY_BEGIN = 0xff,
	INPUTS_TABLE(INPUTS_ENUM_ARG, INPUTS_ENUM_FLAG, INPUTS_SKIP_ALT)
	INPUTS_KEY_END,
};

/* The entries of a getopt_long table for the INPUTS options. */
#define INPUTS_LONG_ARG(key, lng, mnt, arg, help, man) { lng, required_argument, NULL, key },
#define INPUTS_LONG_FLAG(key, lng, mnt, help, man) { lng, no_argument, NULL, key },
#define INPUTS_LONG_OPTIONS \
	INPUTS_TABLE(INPUTS_LONG_ARG, INPUTS_LONG_FLAG, INPUTS_SKIP_ALT)

/* The same for a fuse_opt table: NAME=VALUE, or NAME for a flag. */
#define INPUTS_FUSE_ARG(key, lng, mnt, arg, help, man) FUSE_OPT_KEY(mnt "=", key),
#define INPUTS_FUSE_FLAG(key, lng, mnt, help, man) FUSE_OPT_KEY(mnt, key),
#define INPUTS_FUSE_OPTS \
	INPUTS_TABLE(INPUTS_FUSE_ARG, INPUTS_FUSE_FLAG, INPUTS_SKIP_ALT)

/* Whether a getopt_long or fuse_opt key is an INPUTS option's. */
#define INPUTS_IS_KEY(k) ((k) > INPUTS_KEY_BEGIN && (k) < INPUTS_KEY_END)

/* The INPUTS part of every --help, formatted from the table once (a
 * static buffer: call from the main thread). */
const char *inputs_help(void);

struct cli_inputs {
	struct envfs_inputs in;        /* the arrays below, once finished */
	char *state;                   /* --state FILE, or NULL */
	bool inherit_env;              /* --inherit-env: this process's own
	                                  environment is an image input */
	/* Every string is owned (copied from argv or -o), so the daemon may
	 * scrub its argv (inputs_scrub_argv). */
	char *specs, *config, *host_root;
	char *primus_path;             /* --primus-path, absolute, normalized */
	char **inherit, **pass, **arches, **secrets;
	size_t ninherit, npass, narches, nsecrets;
	/* --env, in order: NAME=VALUE, or NAME alone (the value comes from
	 * the caller's environment at inputs_finish). */
	char **env_args;
	size_t nenv_args;
	char **env_files;              /* --env-file FILE, in order */
	size_t nenv_files;
	struct file_digest *env_file_digests; /* by inputs_finish: beside
	                                  each, the digest of the bytes read */
	struct diag_silence silence;   /* --ignore CODE[,CODE] */
	/* Built by inputs_finish: the cli layer's NAME=VALUE strings and,
	 * beside each, where it came from (NULL: written inline as --env
	 * NAME=VALUE). */
	char **env;
	char **env_sources;
	size_t nenv;
	/* When set (check --format json), inputs_finish adds a file it
	 * cannot read and an --env-file's bad line here, as diagnostics,
	 * instead of printing them. */
	struct diag_list *sink;
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
