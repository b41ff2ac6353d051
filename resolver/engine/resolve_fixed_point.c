/* The launch fixed point: the export views are fed to a launch, which
 * runs steps 4 to 6 again over them, so a shown value is honest only if a
 * second pass with the exported environment as the only image keeps it.
 * Every exported value that pass changes (for a flag list: its effective
 * flags, whatever their order) is a warning naming the step that replaces
 * it and what to set instead. */
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "template.h"
#include "text.h"

/* The exported environment of a pass, as an image (borrowing its bytes). */
static int environ_of(const struct sim *s, struct env_list *out)
{
	size_t k;
	int err;

	for (k = 0; k < s->nv; k++) {
		const struct evar *e = &s->v[k];

		if (sim_exported(e) &&
		    (err = env_list_add(out, e->name, e->name_len, e->val, e->len,
					"image:environ")) < 0)
			return err;
	}
	return 0;
}

static int flag_cmp(const void *a, const void *b)
{
	const struct snap_flag *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->token, y->token);
}

/* The same effective flags, whatever their order. */
static bool same_flags(const struct evar *a, const struct evar *b)
{
	struct snap_flag *x, *y;
	size_t k;
	bool same;

	if (a->nflags != b->nflags)
		return false;
	if (!a->nflags)
		return true;
	x = malloc(a->nflags * sizeof(*x));
	y = malloc(b->nflags * sizeof(*y));
	if (!x || !y) {
		free(x);
		free(y);
		return false;
	}
	memcpy(x, a->flags, a->nflags * sizeof(*x));
	memcpy(y, b->flags, b->nflags * sizeof(*y));
	qsort(x, a->nflags, sizeof(*x), flag_cmp);
	qsort(y, b->nflags, sizeof(*y), flag_cmp);
	for (k = 0, same = true; k < a->nflags && same; k++)
		same = !strcmp(x[k].key, y[k].key) && !strcmp(x[k].token, y[k].token);
	free(x);
	free(y);
	return same;
}

static bool survives(const struct evar *a, const struct evar *b)
{
	bool ea = a && sim_exported(a), eb = b && sim_exported(b);

	if (ea != eb)
		return false;
	if (!ea)
		return true;
	if (a->flags_decl && b->flags_decl && a->effective && b->effective)
		return same_flags(a, b);
	return a->len == b->len && !memcmp(a->val, b->val, a->len);
}

static int names_read(void *ctx, const char *name, size_t len)
{
	struct strbuf *sb = ctx;

	return sb_addf(sb, "%s%.*s", sb->len ? ", " : "", (int)len, name);
}

/* The warning for one variable whose value the second pass changes. */
static int fixed_point_warning(struct sim *s1, struct evar *a, const struct sim *s2,
			       const struct evar *b)
{
	const struct rec *w = b && b->win != NONE ? &s2->recs[b->win] : NULL;
	struct strbuf msg = STRBUF_INIT, reads = STRBUF_INIT;
	bool secret = a->secret || (b && b->secret);
	const char *file = NULL;
	unsigned line = 0;
	int err = 0;

	if (a && sim_exported(a))
		err = sb_addf(&msg, "%s: the value shown (layer %s) does not survive the launch: "
			      "fed back as the image (docker run --env-file with these views), ",
			      a->name, layer_name((enum layer)a->layer));
	else
		err = sb_addf(&msg, "%s is not in this run's environment, but a launch fed these "
			      "views gets it: ", a->name);
	if (err < 0)
		goto out;
	if (!b || !sim_exported(b)) {
		err = sb_adds(&msg, "it is gone at launch");
	} else if (w && (w->layer == LAYER_RUNNER || w->layer == LAYER_DETECTED) && w->sv &&
		   !(a && sim_exported(a))) {
		file = s1->runner ? s1->runner->display : NULL;
		line = w->sv->line;
		err = expr_names(w->sv->when_expr, names_read, &reads);
		if (!err)
			err = sb_addf(&msg, "the runner's %s (%s:%u) sets it",
				      w->sv->mode == SPEC_MODE_SET ? "unconditional export" : "default",
				      file, line);
		if (!err && !secret) {
			err = sb_adds(&msg, " to ");
			if (!err)
				err = text_quote(&msg, b->val, b->len, 200);
		}
		if (!err && reads.len)
			err = sb_addf(&msg, ", because the views carry %s", sb_str(&reads));
	} else if (w && (w->layer == LAYER_RUNNER || w->layer == LAYER_DETECTED) && w->sv) {
		file = s1->runner ? s1->runner->display : NULL;
		line = w->sv->line;
		if (w->sv->value && (err = tmpl_names(w->sv->value, names_read, &reads)) < 0)
			goto out;
		err = sb_addf(&msg, "the runner's %s (%s:%u) %s it", w->sv->mode == SPEC_MODE_SET ?
			      "unconditional export" : "default", file, line,
			      w->sv->mode == SPEC_MODE_SET ? "replaces" : "fills in");
		if (!err && !secret) {
			err = sb_adds(&msg, " with ");
			if (!err)
				err = text_quote(&msg, b->val, b->len, 200);
		}
		if (!err && reads.len && !strstr(sb_str(&reads), a->name))
			err = sb_addf(&msg, "; it derives the value from %s: set %s instead",
				      sb_str(&reads), sb_str(&reads));
		else if (!err)
			err = sb_adds(&msg, "; deliver it with the env.sh view (primus-cli ... --env "
				      "env.sh) or primus-cli --env NAME=VALUE, which the launcher "
				      "applies after the runner");
	} else if (w && w->layer == LAYER_CONFIG) {
		const struct config *cfg = s1->w->config;
		size_t k;

		for (k = 0; cfg && k < cfg->nenv; k++)
			if (!strcmp(cfg->env[k].name, a->name)) {
				file = cfg->file;
				line = cfg->env[k].line;
			}
		err = sb_addf(&msg, "the config's env: block (%s:%u) sets it after every inherited "
			      "value, so neither docker --env-file nor primus-cli --env keeps it; "
			      "change it in the config", file ? file : "config", line);
	} else if (w && w->layer == LAYER_BACKEND && a->flags_decl) {
		file = s1->backend->display;
		line = a->flags_decl->line;
		err = sb_addf(&msg, "the backend (%s:%u) merges its managed flags into it again, so "
			      "the effective flags change", file, line);
		if (!err && a->flags_decl->append_from)
			err = sb_addf(&msg, " (%s is consumed and not in the views); set %s in the "
				      "config's env: block, or pass it to the launch itself",
				      a->flags_decl->append_from, a->flags_decl->append_from);
	} else if (w && w->sv) {
		file = sim_spec_of(s1, w->layer == LAYER_RUNNER)->display;
		line = w->sv->line;
		err = sb_addf(&msg, "%s:%u sets it", file, line);
	} else {
		err = sb_adds(&msg, "another step of the launch sets it");
	}
	if (!err && !secret && b && sim_exported(b) && w && w->layer != LAYER_RUNNER &&
	    w->layer != LAYER_DETECTED) {
		err = sb_adds(&msg, " (at launch: ");
		if (!err)
			err = text_quote(&msg, b->val, b->len, 200);
		if (!err)
			err = sb_addc(&msg, ')');
	}
	if (!err)
		err = diag_add(&s1->diags, DC_LAUNCH_REPLACES, file, line, 0, "%s", sb_str(&msg));
	/* explain says it under the variable, without the name it is under. */
	if (!err)
		err = sim_explain_add(s1, a, "launch: %s", sb_str(&msg) + a->name_len +
				      (sb_str(&msg)[a->name_len] == ':' ? 2 : 1));
out:
	sb_release(&msg);
	sb_release(&reads);
	return err;
}

int sim_fixed_point(struct sim *s1)
{
	struct env_list img = { 0 };
	struct sim s2 = { .w = s1->w, .backend = s1->backend, .runner = s1->runner,
			  .arch = s1->arch, .image = &img, .full = false, .names_from = s1 };
	size_t k;
	uint32_t vi;
	int err;

	if (!(s2.arena = arena_new()))
		return -ENOMEM;
	if ((err = environ_of(s1, &img)) < 0 || (err = sim_run(&s2)) < 0)
		goto out;
	for (k = 0; k < s1->nv && !err; k++) {
		struct evar *a = &s1->v[k];
		const struct evar *b = (vi = sim_find(&s2, a->name, a->name_len)) == NONE ? NULL :
				       &s2.v[vi];

		if (!survives(a, b))
			err = fixed_point_warning(s1, a, &s2, b);
	}
	for (k = 0; k < s2.nv && !err; k++) {
		const struct evar *b = &s2.v[k];

		if (sim_exported(b) && sim_find(s1, b->name, b->name_len) == NONE) {
			/* Set at launch but unknown to the first pass: cannot be,
			 * every name of the specs is declared in both. */
			err = diag_add(&s1->diags, DC_LAUNCH_ADDS, NULL, 0, 0,
				       "%s appears at launch though this run does not set it",
				       b->name);
		}
	}
out:
	env_list_release(&img);
	sim_release(&s2);
	return err;
}
