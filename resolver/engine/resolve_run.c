/* One launch played over the table (resolve.c says the order and why):
 * the steps in their order, then what a secret's value makes secret. */
#include "resolve_sim.h"

#include <errno.h>
#include <string.h>

/* A variable whose value equals a secret's is as secret as it: the
 * value shows nowhere (a `mv` of a secret, a copy of a token). */
static void spread_secrets(struct sim *s)
{
	size_t k, j;

	for (k = 0; k < s->nv; k++) {
		struct evar *a = &s->v[k];

		if (!a->secret || !a->set || !a->len)
			continue;
		for (j = 0; j < s->nv; j++) {
			struct evar *b = &s->v[j];

			if (!b->secret && b->set && b->len == a->len && !memcmp(b->val, a->val, a->len))
				b->secret = true;
		}
	}
}

int sim_run(struct sim *s)
{
	int err;

	if ((err = sim_declare_specs(s)) < 0 || (err = sim_pin_overrides(s)) < 0)
		return err;
	s->step = STEP_INPUTS;
	if ((err = sim_apply_list(s, s->image, LAYER_IMAGE, false)) < 0)
		return err;
	if (s->full && ((err = sim_apply_list(s, &s->w->host, LAYER_HOST, true)) < 0 ||
			(err = sim_apply_slurm(s)) < 0 ||
			(err = sim_apply_list(s, &s->w->cli, LAYER_CLI, false)) < 0))
		return err;
	if ((err = sim_step_runner(s)) < 0 || (err = sim_step_config(s)) < 0 ||
	    (err = sim_step_backend(s)) < 0 || (err = sim_finish_overrides(s)) < 0)
		return err;
	if (s->full && (err = sim_warn_empty_params(s)) < 0)
		return err;
	if (s->full && s->nforward > FORWARD_SHOWN &&
	    (err = diag_add(&s->diags, DC_REF_FORWARD, NULL, 0, 0,
			    "%zu more entries read a name their file sets only later",
			    s->nforward - FORWARD_SHOWN)) < 0)
		return err;
	spread_secrets(s);
	return 0;
}
