/* world_names: what a world's specs and options say of a name by the
 * name alone (secret, node-scoped), for the loaders' messages and the
 * simulation. */
#include "names.h"
#include "world.h"

#include <stdbool.h>
#include <string.h>

/* True when a spec of w, the runner or any backend, marks name m. */
static bool world_marked(const struct world *w, const char *name, enum spec_mark m)
{
	size_t k;

	if (!w->specs)
		return false;
	if (spec_name_marked(w->specs->runner, name, m))
		return true;
	for (k = 0; k < w->specs->nbackends; k++)
		if (spec_name_marked(w->specs->backends[k], name, m))
			return true;
	return false;
}

bool world_secret_declared(const struct world *w, const char *name)
{
	return world_marked(w, name, SPEC_MARK_SECRET);
}

bool world_secret_by_pattern(const struct world *w, const struct spec *backend,
			     const char *name, size_t len, bool only_cli)
{
	const struct spec *r = w->specs ? w->specs->runner : NULL;

	return names_glob_any(w->secrets, w->nsecrets, name) ||
	       (!only_cli && r && names_glob_set_any(&r->secret_set, name, len)) ||
	       (!only_cli && backend && backend != r &&
		names_glob_set_any(&backend->secret_set, name, len));
}

bool world_name_secret_in(const struct world *w, const char *backend, const char *name)
{
	const struct spec *b = w->specs && backend ? spec_set_backend(w->specs, backend) : NULL;

	return world_secret_declared(w, name) ||
	       world_secret_by_pattern(w, b, name, strlen(name), false);
}

bool world_node_scoped(const struct world *w, const char *name)
{
	return world_marked(w, name, SPEC_MARK_NODE);
}

bool world_name_secret(void *ctx, const char *name)
{
	const struct world *w = ctx;
	size_t k, n = strlen(name);

	/* Asked before any backend is chosen (a config serves them all): a
	 * name is a secret here when it is one in any directory, so no
	 * message quotes what some directory keeps private. */
	if (world_secret_declared(w, name) || world_secret_by_pattern(w, NULL, name, n, false))
		return true;
	for (k = 0; w->specs && k < w->specs->nbackends; k++)
		if (names_glob_set_any(&w->specs->backends[k]->secret_set, name, n))
			return true;
	return false;
}
