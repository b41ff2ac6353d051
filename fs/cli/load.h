/* load: loading the world and choosing a directory, with the messages on
 * stderr, for the commands that print or run. */
#ifndef ENVFS_LOAD_H
#define ENVFS_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "args.h"
#include "inputs.h"
#include "report.h"

/* Loads the world. Error diagnostics are printed (one line each) when
 * print_errors; returns 0, or the world_load error with *out still set
 * when the world came back (caller-owned, world_free()). */
int load_world(const struct cli_inputs *ci, bool print_errors, struct world **out);
/* The same, taking donor's specs as they are (world_load_sharing). */
int load_world_sharing(const struct cli_inputs *ci, const struct world *donor,
		       bool print_errors, struct world **out);
/* Prints every diagnostic of l at or above min on stderr, identical lines
 * once; counts[sev] grows per printed line when counts is not NULL. */
void print_diags(const struct diag_list *l, enum diag_sev min, size_t counts[REPORT_NCOUNTS]);
/* After a load that failed: one line on stderr per silenced error of l,
 * saying that its input did not load all the same (--ignore silences a
 * diagnostic, never the failure: a run made without the input is not
 * the run). Returns how many it said. */
size_t say_unloaded(const struct diag_list *l);

/* Whether w has backend: 0, or CLI_EX_USAGE after "unknown backend 'x';
 * backends: a b c". */
int select_backend(const struct world *w, const char *backend);
/* The arch directory that -a arch names in backend: arch itself when the
 * world has it, or for "host" the arch of this node (world_host_arch).
 * *out is borrowed (argv or the world). Returns 0; 2 when host names
 * nothing here (the reason printed); CLI_EX_USAGE for an arch the backend
 * does not have, naming those it has. */
int select_arch(const struct world *w, const char *backend,
		const char *arch, const char **out);

/* resolve_one_sharing's first half: loads a's inputs (over donor's specs,
 * NULL: loaded) for -b/-a and selects the directory. Returns 0 with *w
 * (caller-owned, world_free()) and *arch (borrowed) set and *loaded the
 * load's return, else the exit status with the reason printed. */
int load_one(struct cli_args *a, const struct world *donor, struct world **w,
	     const char **arch, int *loaded);
/* What resolve_one prints when resolve_dir of w failed with err. */
void print_resolve_failure(const struct world *w, const char *backend, const char *arch,
			   int err);

/* resolve and exec, after cli_start: loads the inputs, resolves -b/-a into *out (one
 * reference), and refuses (exit 2) an environment that has an error
 * diagnostic unless --force, printing the errors either way. Returns the
 * exit status: 0 when *out is set. */
int resolve_one(struct cli_args *a, struct snapshot **out);
/* The same over donor's specs (NULL: loaded), for a second set of inputs
 * over the same specs directory and backend. When keep is not NULL and
 * the exit status is 0, the world is handed to the caller in *keep
 * (world_free()), to be the donor of the next. */
int resolve_one_sharing(struct cli_args *a, const struct world *donor, struct world **keep,
			struct snapshot **out);

#endif
