/* Step 6 of the launch: the backend spec as env_spec.py builds and
 * applies it, and the warning for its parameters read set but empty. */
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Step 6: env_spec.py builds its list from the environment as it is,
 * then applies it in order; nothing it applies is read by another of its
 * entries. Parameters first: the code reads them while building. */
int sim_step_backend(struct sim *s)
{
	const struct spec *sp = s->backend;
	struct eval *evs = NULL;
	size_t k, pass;
	uint32_t vi;
	int err = 0;

	s->step = STEP_BACKEND;
	if (!sp->nvars)
		return 0;
	if (!(evs = calloc(sp->nvars, sizeof(*evs))))
		return -ENOMEM;
	for (pass = 0; pass < 2 && !err; pass++) {
		for (k = 0; k < sp->nvars && !err; k++) {
			const struct spec_var *sv = &sp->vars[k];
			struct evar *e;

			if ((sv->export || sv->kind == SPEC_KIND_FLAGS) == !pass)
				continue;
			if ((vi = s->entry_var[1][k]) == NONE)
				continue;
			if (spec_var_applies_to_arch(sv, s->arch) &&
			    (err = sim_check_forward(s, sp, k)) < 0)
				break;
			if (sv->kind == SPEC_KIND_FLAGS) {
				if (spec_var_applies_to_arch(sv, s->arch) && s->v[vi].flags_decl == sv)
					err = sim_managed_flags(s, sp, sv, &evs[k]);
				continue;
			}
			if ((err = sim_entry_eval(s, sp, sv, &evs[k])) < 0)
				break;
			e = &s->v[vi];
			if (!sv->export && evs[k].applies && evs[k].ok)
				err = sim_param_set(s, e, 1, sv, evs[k].val, evs[k].len,
						    evs[k].secret);
		}
	}
	for (k = 0; k < sp->nvars && !err; k++) {
		const struct spec_var *sv = &sp->vars[k];

		if (!sv->export || !evs[k].applies || !evs[k].ok ||
		    (vi = s->entry_var[1][k]) == NONE)
			continue;
		if (sv->kind == SPEC_KIND_FLAGS)
			err = s->v[vi].flags_decl == sv ?
			      sim_flags_apply(s, vi, sp, sv, &evs[k]) : 0;
		else
			err = sim_offer(s, vi, sim_layer_of(sp, sv), evs[k].val, evs[k].len,
					NULL, sv, sim_rule_of(sv), evs[k].secret);
	}
	free(evs);
	return err;
}

/* A parameter read with os.getenv(NAME, default) takes a set-but-empty
 * value as its value, where bash's ${NAME:-default} takes it for unset. */
int sim_warn_empty_params(struct sim *s)
{
	size_t k;
	int err = 0;

	for (k = 0; k < s->nv && !err; k++) {
		struct evar *e = &s->v[k];
		const struct evar_param *ep = sim_param_of(e, 1) ? sim_param_of(e, 1) :
					      sim_param_of(e, 0);
		const struct spec_var *p = ep ? ep->sv : NULL;
		const struct spec *sp;

		if (!p || !e->set || e->len || p->dialect != DIALECT_PYTHON)
			continue;
		sp = sim_spec_of(s, ep == sim_param_of(e, 0));
		/* A relaxed reader takes an empty value for unset. */
		if (sp->relaxed_values && sp->owned_prefix &&
		    !strncmp(e->name, sp->owned_prefix, strlen(sp->owned_prefix)))
			continue;
		err = sim_warn_at(s, DC_PARAM_EMPTY, sp, p,
				  "%s is set but empty: env_spec.py reads it with os.getenv(), "
				  "which gives the empty value, not the default %.*s", e->name,
				  e->secret ? 10 : (int)ep->len,
				  e->secret ? "<redacted>" : ep->val);
	}
	return err;
}
