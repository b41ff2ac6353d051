/* Steps 1 to 3 of the launch (image, host, cli) and the Slurm entry's
 * values, the names the specs declare, and the overrides that hold their
 * variables against every step. */
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every name a spec entry of this directory declares, with what the
 * specs say of it (secret, note, flag list, parameter). */
int sim_declare_specs(struct sim *s)
{
	const struct spec *both[2] = { s->runner, s->backend };
	size_t k, j;
	uint32_t vi;
	int err;

	for (j = 0; j < 2; j++) {
		const struct spec *sp = both[j];

		if (sp && !(s->entry_var[sp->is_runner ? 0 : 1] =
			    malloc((sp->nvars ? sp->nvars : 1) * sizeof(uint32_t))))
			return -ENOMEM;
		for (k = 0; sp && k < sp->nvars; k++) {
			const struct spec_var *sv = &sp->vars[k];
			struct evar *e;

			s->entry_var[sp->is_runner ? 0 : 1][k] = NONE;
			if (!spec_var_applies_to_arch(sv, s->arch))
				continue;
			if ((err = sim_var(s, sv->name, strlen(sv->name), &vi)) < 0)
				return err;
			s->entry_var[sp->is_runner ? 0 : 1][k] = vi;
			e = &s->v[vi];
			/* The specs' copy of the name outlives the simulation. */
			e->name = sv->name;
			if (sv->secret_given && !sv->secret)
				e->secret = sim_secret_by_name(s, sv->name, strlen(sv->name), true);
			e->secret |= sv->secret;
			if (sv->note && !e->note)
				e->note = sv->note;
			if (sv->kind == SPEC_KIND_FLAGS && (!e->flags_decl || !sp->is_runner)) {
				e->flags_decl = sv;
				e->flags_runner = sp->is_runner;
			}
			if (sv->export && (sv->value || sv->detect || sv->kind == SPEC_KIND_FLAGS))
				e->last_entry[sp->is_runner ? 0 : 1] = (uint32_t)k + 1;
		}
	}
	/* A secret is secret in every directory: a backend without the
	 * runner base (torch_fl) must still not show the base's secrets
	 * world-readable when an input sets them. */
	for (k = 0; !s->runner && s->w->specs->runner && k < s->w->specs->runner->nvars; k++) {
		const struct spec_var *sv = &s->w->specs->runner->vars[k];

		if (!sv->secret)
			continue;
		if ((err = sim_var(s, sv->name, strlen(sv->name), &vi)) < 0)
			return err;
		s->v[vi].secret = true;
	}
	return 0;
}

int sim_apply_list(struct sim *s, const struct env_list *l, enum layer layer, bool host)
{
	size_t k;
	uint32_t vi;
	int err;

	for (k = 0; l && k < l->n; k++) {
		const struct env_pair *p = &l->v[k];

		if (host && !world_host_allowed(s->w, s->backend, p))
			continue;
		if ((err = sim_var(s, p->name, strlen(p->name), &vi)) < 0 ||
		    (err = sim_offer(s, vi, layer, p->value, p->value_len, p->source, NULL,
				 RULE_ALWAYS, false)) < 0)
			return err;
	}
	return 0;
}

/* A Primus launch under Slurm goes through primus-cli-slurm-entry.sh,
 * which replaces the environment's NNODES, NODE_RANK and MASTER_ADDR
 * with what the job says and hands them on as --env before the user's
 * own --env: above image and host, below cli. */
int sim_apply_slurm(struct sim *s)
{
	int err;

	if (!s->runner)
		return 0;
	if ((err = sim_apply_list(s, &s->w->slurm, LAYER_DETECTED, false)) < 0)
		return err;
	return diag_extend(&s->diags, &s->w->slurm_diags);
}

/* Whether s takes override o: o is of the directory s simulates, and s is
 * the full pass (the only one that takes overrides). */
static bool override_here(const struct sim *s, const struct override *o)
{
	return s->full && !strcmp(o->backend, s->backend->backend) && !strcmp(o->arch, s->arch);
}

int sim_pin_overrides(struct sim *s)
{
	const struct override_set *ov = s->ov;
	size_t k;
	uint32_t vi;
	int err;

	for (k = 0; ov && k < ov->n; k++) {
		const struct override *o = &ov->v[k];
		struct evar *e;

		if (!override_here(s, o))
			continue;
		if ((err = sim_var(s, o->name, strlen(o->name), &vi)) < 0)
			return err;
		e = &s->v[vi];
		e->pinned = true;
		e->set = o->value != NULL;
		e->val = o->value;
		e->len = o->value ? o->value_len : 0;
		e->layer = LAYER_OVERRIDE;
		/* A file made private through the mount (0600) is a secret. */
		e->secret |= o->private;
		e->pending = o->pending;
	}
	return 0;
}

/* The override's own record, last: the top of `layers`. */
/* "last changed ..." under an overridden variable in explain: its last
 * change, as the mount's history has it. */
static int explain_stamp(struct sim *s, struct evar *e, const struct override_stamp *st)
{
	time_t sec = (time_t)(st->when_ms / 1000);
	struct tm tm;
	char when[40];

	gmtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (st->has_writer)
		return sim_explain_add(s, e, "override last changed %s, through the mount by "
				       "uid %u pid %d (primus-envfs history)", when, st->uid,
				       st->pid);
	return sim_explain_add(s, e, "override last changed %s, by another node of the run "
			       "(primus-envfs history)", when);
}

int sim_finish_overrides(struct sim *s)
{
	const struct override_set *ov = s->ov;
	size_t k;
	uint32_t vi;
	int err;

	for (k = 0; ov && k < ov->n; k++) {
		const struct override *o = &ov->v[k];
		struct evar *e;

		if (!override_here(s, o))
			continue;
		if ((vi = sim_find(s, o->name, strlen(o->name))) == NONE)
			continue;
		if ((err = sim_rec_add(s, vi, (struct rec){ .val = o->value, .len = o->value_len,
			      .source = "override", .layer = LAYER_OVERRIDE, .applied = true },
			      NULL)) < 0)
			return err;
		e = &s->v[vi];
		e->win = e->tail;
		if (o->stamp.when_ms && (err = explain_stamp(s, e, &o->stamp)) < 0)
			return err;
	}
	return 0;
}
