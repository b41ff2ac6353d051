/* The layering engine: one <backend>/<arch> resolved by playing a real
 * Primus launch, step by step, over an environment (specs/README.md,
 * "Layers and the launch order"):
 *
 *   1 image   --inherit files                         inherited
 *   2 host    the daemon's passthrough                beats image
 *   3 cli     --env                                   beats host
 *   4 runner  base.yaml, file order, as bash runs it  ${X:-d}: unset or empty;
 *             (then host and cli again: the launcher  mode: set replaces
 *              re-applies --env after the runner)
 *   5 config  env:, dict order, os.environ[k] = v     always; a refused key
 *                                                     stops the block
 *   6 backend <backend>.yaml as env_spec.py builds    setdefault: unset only
 *             and applies it (XLA_FLAGS merged)
 *   7 override a write through the mount              final
 *
 * Each entry reads the environment as it is at its step (a runner entry
 * never sees the config; a backend entry sees everything), so there are
 * no cycles to chase: a value is computed once, in order. Then the launch
 * fixed point: the same launch again with the exported environment as
 * the only image; whatever it changes is a warning.
 *
 * This file hands out the snapshots; resolve_run.c runs the steps in
 * order, each step a file of its own (resolve_sim.h lists them). */
#include "resolve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "resolve_internal.h"
#include "resolve_sim.h"

int resolve_dir(const struct world *w, const struct override_set *ov,
		const char *backend, const char *arch, struct snapshot **out)
{
	struct sim s = { .w = w, .arch = arch, .full = true, .ov = ov };
	struct snapshot *snap = NULL;
	int err;

	if (!w->specs || !(s.backend = spec_set_backend(w->specs, backend)))
		return -EINVAL;
	if (!world_has_dir(w, backend, arch))
		return -ENOENT;
	s.runner = s.backend->uses_runner ? w->specs->runner : NULL;
	s.image = &w->image;
	if (!(s.arena = arena_new()))
		return -ENOMEM;
	if ((err = sim_run(&s)) < 0 || (err = sim_fixed_point(&s)) < 0 ||
	    (err = sim_build_snapshot(&s, &snap)) < 0)
		goto out;
	if ((err = validate_snapshot(w->specs, s.backend, s.runner, snap)) < 0 ||
	    (err = names_check_snapshot(w->specs, s.backend, s.runner, snap)) < 0 ||
	    (err = view_omissions(snap, &snap->diags)) < 0 ||
	    (err = sim_scrub_diags(&s, &snap->diags)) < 0 ||
	    (err = world_inputs_to_snapshot(w, snap)) < 0)
		goto out;
	diag_silence_apply(&w->silence, &snap->diags, w->diags.n);
	*out = snap;
	snap = NULL;
out:
	snapshot_unref(snap);
	sim_release(&s);
	return err;
}

int resolve_all(const struct world *w, const struct override_set *ov,
		struct resolution **out)
{
	struct resolution *res;
	size_t k, j, cap = 0;
	int err = -ENOMEM;

	if (!w->specs)
		return -EINVAL;
	if (!(res = calloc(1, sizeof(*res))))
		return -ENOMEM;
	if ((err = diag_extend(&res->diags, &w->diags)) < 0)
		goto out;
	for (k = 0; k < w->specs->nbackends; k++) {
		const struct spec *s = w->specs->backends[k];
		const char **arches = NULL;
		size_t na = 0;

		if ((err = world_arches(w, s, &arches, &na)) < 0)
			goto out;
		for (j = 0; j < na; j++) {
			struct snapshot *snap = NULL;

			if ((err = GROW(res->dirs, cap, res->ndirs, 16)) < 0)
				break;
			if ((err = resolve_dir(w, ov, s->backend, arches[j], &snap)) < 0)
				break;
			res->dirs[res->ndirs++] = snap;
			/* Directory diagnostics beyond the load-time ones. */
			if ((err = diag_extend_from(&res->diags, &snap->diags, w->diags.n)) < 0)
				break;
		}
		free(arches);
		if (err < 0)
			goto out;
	}
	*out = res;
	return 0;
out:
	resolution_free(res);
	return err;
}

void resolution_free(struct resolution *r)
{
	size_t k;

	if (!r)
		return;
	for (k = 0; k < r->ndirs; k++)
		snapshot_unref(r->dirs[k]);
	free(r->dirs);
	diag_list_release(&r->diags);
	free(r);
}
