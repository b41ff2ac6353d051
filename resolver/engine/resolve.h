/* resolve: the layering of a Primus launch over loaded inputs
 * (specs/README.md, "Layers and the launch order").
 *
 * world_load() (world.h) reads every input once (specs, config, inherit
 * files, host passthrough, --env); resolve_dir() turns a world plus the
 * overrides (override.h) into the snapshot of one <backend>/<arch>;
 * resolve_all() does every directory. */
#ifndef ENVFS_RESOLVE_H
#define ENVFS_RESOLVE_H

#include <stddef.h>

#include "diag.h"
#include "override.h"
#include "snapshot.h"
#include "world.h"

struct resolution {
	struct snapshot **dirs;        /* backends by name, arches in spec order */
	size_t ndirs;
	struct diag_list diags;        /* load-time plus every directory's */
};

/* Resolves one directory. ov may be NULL. *out holds one reference. */
int resolve_dir(const struct world *w, const struct override_set *ov,
		const char *backend, const char *arch, struct snapshot **out);
/* Resolves every directory. *out is freed with resolution_free(). */
int resolve_all(const struct world *w, const struct override_set *ov,
		struct resolution **out);
void resolution_free(struct resolution *r);

#endif
