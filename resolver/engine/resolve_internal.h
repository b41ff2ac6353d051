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

/* Checks the names a layer of s sets against what is known to read them
 * (the catalog, the specs, the name lists of set->names), every token of
 * XLA_FLAGS and XLA_FLAGS_APPEND against XLA's flag list, and whether a
 * --env value is replaced by the config env: block: adds diagnostics to
 * s->diags. Returns 0 or -ENOMEM. */
int names_check_snapshot(const struct spec_set *set, const struct spec *backend,
			 const struct spec *runner, struct snapshot *s);

/* Adds msg to l placed at a snap_var source: "file:line" gives that file
 * and line, a bare place ("cli", "override") is the file, NULL none.
 * Returns 0 or -ENOMEM. */
int diag_at_var_source(struct diag_list *l, enum diag_code code, const char *source,
		       const char *msg);
/* One warning per variable an export view leaves out (env_file, the
 * compose view, env.sh), naming the view, the variable and why, placed
 * where the value was set. Returns 0 or -ENOMEM. */
int view_omissions(const struct snapshot *s, struct diag_list *out);

#endif
