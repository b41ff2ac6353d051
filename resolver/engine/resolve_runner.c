/* Step 4 of the launch: the runner base's lines in file order, its
 * `at: runner` rules, then the launcher exporting --env again. */
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "grow.h"
#include "rule.h"
#include "template.h"

static int note_reader(void *ctx, const char *name, size_t len)
{
	struct sim *s = ctx;

	if (GROW(s->readers, s->capreaders, s->nreaders, 64) < 0)
		return -ENOMEM;
	/* Borrowed, as by is: the names are in the spec's template text or
	 * its parsed when:, which outlive the simulation. */
	s->readers[s->nreaders].name = name;
	s->readers[s->nreaders].len = len;
	s->readers[s->nreaders].by = NULL;
	s->nreaders++;
	return 0;
}

/* Which names a runner entry reads, for the config diagnostics. */
static int note_reads(struct sim *s, const struct spec_var *sv)
{
	size_t from = s->nreaders, k;
	int err = 0;

	if (sv->value)
		err = tmpl_names(sv->value, note_reader, s);
	if (!err)
		err = expr_names(sv->when_expr, note_reader, s);
	for (k = from; k < s->nreaders; k++)
		s->readers[k].by = sv;
	return err;
}

static bool in_cli(const struct sim *s, const char *name)
{
	size_t k;

	for (k = 0; k < s->w->cli.n; k++)
		if (!strcmp(s->w->cli.v[k].name, name))
			return true;
	return false;
}

/* The launcher's last step (primus-cli-direct.sh, STEP 8): every --env
 * (the container launcher's forwarded host variables first, then the
 * user's) is exported again after the runner, from one newline-joined
 * list read back a line at a time. So whatever a runner line replaced
 * comes back, and a value holding a newline comes back split: its first
 * line is the value, each further NAME=VALUE line a variable of its own,
 * and a line without '=' makes the launcher exit. */
static bool in_list(const struct env_list *l, const char *name)
{
	size_t k;

	for (k = 0; k < l->n; k++)
		if (!strcmp(l->v[k].name, name))
			return true;
	return false;
}

static int reexport(struct sim *s, const struct env_list *l, enum layer layer)
{
	size_t k;
	uint32_t vi;
	int err;

	for (k = 0; k < l->n; k++) {
		const struct env_pair *p = &l->v[k];
		size_t nl = strlen(p->name), pos = 0;
		uint32_t pi = sim_find(s, p->name, nl);
		/* Each line a secret's value is split into is a piece of it. */
		bool secret = pi != NONE ? s->v[pi].secret : sim_secret_by_name(s, p->name, nl, false);
		bool first = true;

		if (layer == LAYER_HOST && !world_host_allowed(s->w, s->backend, p))
			continue;
		/* The Slurm entry forwards what it derived, not the host's. */
		if (layer == LAYER_HOST && in_list(&s->w->slurm, p->name))
			continue;
		/* The user's --env of the same name comes after: it wins. */
		if (layer != LAYER_CLI && !memchr(p->value, '\n', p->value_len) &&
		    in_cli(s, p->name))
			continue;
		while (pos <= p->value_len) {
			const char *line = first ? p->name : p->value + pos;
			const char *nlc = memchr(p->value + pos, '\n', p->value_len - pos);
			size_t end = nlc ? (size_t)(nlc - p->value) : p->value_len;
			const char *name = first ? p->name : line, *eq, *val;
			size_t name_len, val_len;

			if (first) {
				name_len = nl;
				val = p->value;
				val_len = end;
			} else {
				if (end == pos) {        /* empty lines are skipped */
					pos = end + 1;
					continue;
				}
				if (!(eq = memchr(line, '=', end - pos)))
					return diag_add(&s->diags, DC_ENV_LINE_NO_EQUALS, NULL, 0, 0,
							"%s: a line of its value holds no '=': "
							"primus-cli exits (Invalid env format) when it "
							"exports --env again after the runner", p->name);
				name_len = (size_t)(eq - line);
				val = eq + 1;
				val_len = end - pos - name_len - 1;
				if (!env_name_valid(name, name_len))
					return diag_add(&s->diags, DC_ENV_LINE_NO_NAME, NULL, 0, 0,
							"%s: a line of its value names no variable: "
							"primus-cli exits (export: not a valid "
							"identifier) when it exports --env again after "
							"the runner", p->name);
				if (!(name = arena_strndup(s->arena, name, name_len)))
					return -ENOMEM;
			}
			first = false;
			pos = end + 1;
			if ((err = sim_var(s, name, name_len, &vi)) < 0)
				return err;
			/* Unchanged since the first export, or held by an override:
			 * nothing to record. */
			if (s->v[vi].pinned ||
			    (s->v[vi].layer == layer && s->v[vi].set && s->v[vi].len == val_len &&
			     !memcmp(s->v[vi].val, val, val_len)))
				continue;
			if ((err = sim_offer(s, vi, layer, val, val_len, p->source, NULL,
					     RULE_ALWAYS, secret)) < 0)
				return err;
		}
	}
	return 0;
}

/* Step 4: the runner's lines in order, then the launcher's --env again. */
/* What a rule reads at a step: the shell's variables so far. */
static int step_lookup(void *ctx, const char *name, size_t len, const char **val, size_t *vlen)
{
	struct sim *s = ctx;
	uint32_t i = sim_find(s, name, len);

	if (i == NONE || !s->v[i].set)
		return 0;
	*val = s->v[i].val;
	*vlen = s->v[i].len;
	return 1;
}

static int step_shown(void *ctx, const char *name, size_t len, const char **val, size_t *vlen)
{
	struct sim *s = ctx;
	int r = step_lookup(ctx, name, len, val, vlen);

	if (r > 0 && s->v[sim_find(s, name, len)].secret) {
		*val = "(secret)";
		*vlen = 8;
	}
	return r;
}

/* The `at: runner` rules: primus-env.sh validates the environment right
 * after base_env.sh and the GPU file, before the launcher exports --env
 * again (STEP 5 of primus-cli-direct.sh), and exits on a bad value. */
static int runner_rules(struct sim *s)
{
	const struct spec *both[2] = { s->runner, s->backend };
	size_t k, j;
	int err = 0;

	for (j = 0; j < 2; j++)
		for (k = 0; both[j] && k < both[j]->nrules && !err; k++)
			if (both[j]->rules[k].at == RULE_AT_RUNNER)
				err = rule_check(both[j], &both[j]->rules[k], step_lookup,
						 step_shown, s, &s->diags);
	return err;
}

int sim_step_runner(struct sim *s)
{
	const struct spec *sp = s->runner;
	size_t k;
	uint32_t vi;
	int err;

	s->step = STEP_RUNNER;
	for (k = 0; sp && k < sp->nvars; k++) {
		const struct spec_var *sv = &sp->vars[k];
		struct eval ev;
		struct evar *e;

		if (!spec_var_applies_to_arch(sv, s->arch))
			continue;
		if (s->full && ((err = note_reads(s, sv)) < 0 ||
				(err = sim_check_forward(s, sp, k)) < 0))
			return err;
		vi = s->entry_var[0][k];
		if (sv->kind == SPEC_KIND_FLAGS) {
			if (s->v[vi].flags_decl != sv)
				continue;   /* the backend's declaration replaces it */
			if ((err = sim_managed_flags(s, sp, sv, &ev)) < 0 ||
			    (err = sim_flags_apply(s, vi, sp, sv, &ev)) < 0)
				return err;
			continue;
		}
		if ((err = sim_entry_eval(s, sp, sv, &ev)) < 0)
			return err;
		if (!ev.applies || !ev.ok)
			continue;
		e = &s->v[vi];
		if (!sv->export) {
			if ((err = sim_param_set(s, e, 0, sv, ev.val, ev.len, ev.secret)) < 0)
				return err;
			continue;
		}
		if ((err = sim_offer(s, vi, sim_layer_of(sp, sv), ev.val, ev.len, NULL,
				     sv, sim_rule_of(sv), ev.secret)) < 0)
			return err;
	}
	if (s->full && (err = runner_rules(s)) < 0)
		return err;
	/* Only a Primus launch (one with the runner) has this launcher. */
	if (!s->full || !s->runner)
		return 0;
	if ((err = reexport(s, &s->w->host, LAYER_HOST)) < 0 ||
	    (err = reexport(s, &s->w->slurm, LAYER_DETECTED)) < 0)
		return err;
	return reexport(s, &s->w->cli, LAYER_CLI);
}
