/* Internal interface between the resolver engine and its rule checks. */
#ifndef ENVFS_RESOLVE_INTERNAL_H
#define ENVFS_RESOLVE_INTERNAL_H

#include "resolve.h"

/* Checks a snapshot under construction against the specs' types, owned
 * prefixes, pins, retired names and rules: adds diagnostics to s->diags
 * and explain lines (allocated from s->arena) to its vars, and sets the
 * note of a var without one to its catalog description. runner is NULL
 * when the backend does not use the runner base. Returns 0 or -ENOMEM. */
int validate_snapshot(const struct spec_set *set, const struct spec *backend,
		      const struct spec *runner, struct snapshot *s);

#endif
