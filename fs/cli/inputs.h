/* inputs: the INPUTS options shared by every subcommand (SPEC section 2). */
#ifndef ENVFS_INPUTS_H
#define ENVFS_INPUTS_H

#include <stddef.h>

#include "resolve.h"

struct cli_inputs {
	struct envfs_inputs in;        /* arrays below point into argv */
	const char *state;             /* --state FILE, or NULL */
	const char **inherit, **pass, **env, **arches;
	size_t ninherit, npass, nenv, narches;
};

/* Tries argv[*i] as an input option (--specs DIR, --specs=DIR, --config,
 * --inherit, --pass, --env, --arch, --state). Returns 1 and advances *i past
 * the option and its argument when it was one, 0 when argv[*i] is not an
 * input option, or -EINVAL after printing one line to stderr. */
int inputs_parse_option(struct cli_inputs *ci, int *i, int argc, char **argv);
/* Fills defaults (the shipped specs when --specs was not given, the host
 * environment) and checks the named files exist, printing one line per
 * problem. Returns 0 or a negative errno. */
int inputs_finish(struct cli_inputs *ci);
void inputs_release(struct cli_inputs *ci);

/* The shipped specs directory for this binary (installed or build tree).
 * Returns a static string, or NULL when none is found. */
const char *specs_default_dir(void);

#endif
