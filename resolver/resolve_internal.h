/* Internal interface between the resolver engine and its rule checks. */
#ifndef ENVFS_RESOLVE_INTERNAL_H
#define ENVFS_RESOLVE_INTERNAL_H

#include "resolve.h"

/* Checks a snapshot under construction against the specs' types, owned
 * prefixes, pins, retired names and rules: adds diagnostics to s->diags
 * and explain lines (allocated from s->arena) to its vars. runner is NULL
 * when the backend does not use the runner base. Returns 0 or -ENOMEM. */
int validate_snapshot(const struct spec_set *set, const struct spec *backend,
		      const struct spec *runner, struct snapshot *s);

/* The catalog entry of name, for names asked in ascending byte order
 * (a snapshot's): *pos (0 before the first) keeps the place, so the
 * catalog is walked once instead of searched per name. NULL when absent
 * or set is NULL. */
const struct catalog_entry *catalog_walk(const struct spec_set *set, size_t *pos,
					 const char *name);

#endif
