/* Flag-list variables (XLA_FLAGS), merged rather than picked
 * (specs/README.md, "Flag lists"): an override is the whole value,
 * verbatim; otherwise the base is the config's value when its env: block
 * sets the variable (the config owns it and the managed flags are skipped)
 * or else the inherited value, then the spec's managed flags are appended,
 * then the value of the append_from variable (XLA_FLAGS_APPEND), which
 * wins and is consumed, never exported. The effective flags are the tokens
 * keyed by the text before '=', the last winning, in order of first
 * appearance. */
#include "flag_token.h"
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

struct part {
	const char *text;
	size_t len;
	enum layer layer;
	const char *source;           /* arena, or NULL */
};

/* A flag given again: the last wins, which is worth knowing (info), and a
 * warning when the one that loses came with --env and a later step's
 * flags replace it, since the user asked for it on the command line. */
static int flag_repeated(struct sim *s, const struct evar *e, const struct snap_flag *was,
			 const char *tok, enum layer now)
{
	if (was->layer != LAYER_CLI || now <= LAYER_CLI || !strcmp(was->token, tok))
		return diag_add(&s->diags, DC_FLAG_REPEATED, NULL, 0, 0,
				"%s: %s is given more than once; the last (%s) wins",
				e->name, was->key, tok);
	return diag_add(&s->diags, DC_CLI_FLAG_REPLACED, "cli", 0, 0,
			"%s: --env gives %s, which the %s step (%s%s) replaces with %s; "
			"set XLA_FLAGS_APPEND=%s to keep it", e->name, was->token,
			layer_name(now), now == LAYER_BACKEND && s->backend ? s->backend->backend :
			layer_name(now), now == LAYER_BACKEND ? "'s managed flags" : "",
			tok, was->token);
}

/* The effective flags of parts: keyed by the text before '=', the last
 * token winning, in order of first appearance. */
static int effective_flags(struct sim *s, struct evar *e, const struct part *parts,
			   size_t nparts, bool report)
{
	struct snap_flag *f = NULL;
	struct strbuf eff = STRBUF_INIT;
	size_t n = 0, cap = 0, p, k;
	int err = -ENOMEM;

	for (p = 0; p < nparts; p++) {
		const char *t = parts[p].text, *end = t + parts[p].len, *at;
		size_t len, key_len;

		while (flag_token_next(&t, end, &at, &len, &key_len)) {
			char *key, *tok;

			if (!(tok = arena_strndup(s->arena, at, len)) ||
			    !(key = arena_strndup(s->arena, at, key_len)))
				goto out;
			for (k = 0; k < n && strcmp(f[k].key, key); k++)
				;
			if (k < n) {
				if (report && !e->secret &&
				    flag_repeated(s, e, &f[k], tok, parts[p].layer) < 0)
					goto out;
			} else {
				if (GROW(f, cap, n, 16) < 0)
					goto out;
				f[n++].key = key;
			}
			f[k].token = tok;
			f[k].layer = parts[p].layer;
			f[k].source = parts[p].source;
		}
	}
	for (k = 0; k < n; k++)
		if (sb_adds(&eff, f[k].token) < 0 || sb_addc(&eff, '\n') < 0)
			goto out;
	if (!(e->flags = arena_alloc(s->arena, (n ? n : 1) * sizeof(*e->flags))))
		goto out;
	if (n)
		memcpy(e->flags, f, n * sizeof(*f));
	e->nflags = (uint32_t)n;
	if (!(e->effective = arena_strndup(s->arena, sb_str(&eff), eff.len)))
		goto out;
	err = 0;
out:
	free(f);
	sb_release(&eff);
	return err;
}

/* The managed flags of decl, each flag's when: evaluated and template
 * expanded, joined by single spaces (arena). */
int sim_managed_flags(struct sim *s, const struct spec *sp, const struct spec_var *decl,
		      struct eval *out)
{
	struct strbuf sb = STRBUF_INIT;
	size_t k;
	int err = 0;

	*out = (struct eval){ .applies = true, .ok = true };
	for (k = 0; k < decl->nflags && !err; k++) {
		const struct spec_flag *fl = &decl->flags[k];
		struct spec_var as = *decl;
		struct eval one;
		bool ok;

		/* A flag's diagnostics name the variable at the flag's line. */
		as.line = fl->line;
		as.col = fl->col;
		if ((err = sim_entry_when(s, sp, &as, fl->when, fl->when_expr, &ok)) < 0 || !ok)
			continue;
		one = (struct eval){ 0 };
		if ((err = sim_entry_template(s, sp, &as, fl->text, &one)) < 0 || !one.ok ||
		    !one.len)
			continue;
		out->secret |= one.secret;
		if ((sb.len && (err = sb_addc(&sb, ' ')) < 0) || (err = sb_add(&sb, one.val, one.len)) < 0)
			break;
	}
	if (!err && !(out->val = arena_strndup(s->arena, sb.buf ? sb.buf : "", sb.len)))
		err = -ENOMEM;
	out->len = sb.len;
	sb_release(&sb);
	return err;
}

/* Where e's value was written, in the arena (it outlives the inputs'
 * strings in the snapshot), or NULL. */
static const char *win_source(struct sim *s, const struct evar *e)
{
	const char *src = e->set && e->win != NONE ? sim_rec_source(s, &s->recs[e->win]) : NULL;

	return src ? arena_strdup(s->arena, src) : NULL;
}

/* Merges a flag list into its variable at the step of its spec. */
int sim_flags_apply(struct sim *s, uint32_t vi, const struct spec *sp,
		    const struct spec_var *decl, const struct eval *managed)
{
	struct evar *e = &s->v[vi];
	enum layer ml = sim_layer_of(sp, decl);
	struct strbuf val = STRBUF_INIT;
	struct part parts[3];
	uint32_t ai = NONE;
	size_t np = 0, k;
	bool owned = e->config_set, was_set = e->set;
	enum layer base_layer = (enum layer)e->layer;
	int err = 0;

	if (decl->append_from)
		ai = sim_find(s, decl->append_from, strlen(decl->append_from));
	if (ai != NONE)
		s->v[ai].consumed = true;
	e = &s->v[vi];
	if (e->pinned) {
		/* The override is the whole value, verbatim. */
		err = sim_offer(s, vi, ml, managed->val, managed->len, NULL, decl,
				RULE_ALWAYS, managed->secret);
		goto flags;
	}
	if (owned) {
		parts[np++] = (struct part){ e->val, e->len, LAYER_CONFIG, win_source(s, e) };
		if ((err = sim_explain_add(s, e, "%s comes from the config env: block; managed "
					   "defaults skipped", e->name)) < 0)
			goto out;
		if (managed->len && s->full) {
			/* The managed list is built from other variables
			 * (XLA_GPU_AUTOTUNE_LEVEL): quoted only when nothing
			 * secret went into it. */
			const char *at = e->secret || managed->secret ? NULL :
					 strstr(managed->val, "--xla_gpu_autotune_level=");
			const struct config_entry *ce = NULL;

			for (k = 0; s->w->config && k < s->w->config->nenv; k++)
				if (!strcmp(s->w->config->env[k].name, e->name))
					ce = &s->w->config->env[k];
			err = diag_add(&s->diags, DC_CONFIG_OWNS_FLAGS, s->w->config->file, ce ? ce->line : 0,
				       ce ? ce->col : 0,
				       "%s is set in the config env: block, so it owns the variable "
				       "and the %s managed defaults%s%.*s%s are skipped; use %s to "
				       "change one flag", e->name, sp->backend ? sp->backend : "runner",
				       at ? " (including " : "", at ? (int)strcspn(at, " ") : 0,
				       at ? at : "", at ? ")" : "",
				       decl->append_from ? decl->append_from : "an append variable");
			if (err < 0)
				goto out;
		}
	} else {
		if (e->set && e->len)
			parts[np++] = (struct part){ e->val, e->len, base_layer, win_source(s, e) };
		if (managed->len) {
			parts[np++] = (struct part){ managed->val, managed->len, ml,
						     sim_spec_entry_source(s, sp, decl) };
			if (e->set && e->len &&
			    (err = sim_explain_add(s, e, "%s appended (managed defaults override "
						   "inherited)", e->name)) < 0)
				goto out;
		}
	}
	if (ai != NONE && s->v[ai].set && s->v[ai].len) {
		struct evar *a = &s->v[ai];

		parts[np++] = (struct part){ a->val, a->len, (enum layer)a->layer, win_source(s, a) };
		if (a->secret || e->secret)
			err = sim_explain_add(s, e, "%s appended (wins): <redacted>", a->name);
		else
			err = sim_explain_add(s, e, "%s appended (wins): %.*s", a->name,
					      (int)a->len, a->val);
		if (err < 0)
			goto out;
		e->secret |= a->secret;
	}
	for (k = 0; k < np; k++)
		if ((k && (err = sb_addc(&val, ' ')) < 0) ||
		    (err = sb_add(&val, parts[k].text, parts[k].len)) < 0)
			goto out;
	if (!np && !was_set) {
		/* Every part empty and no layer set it: unset. Still offered,
		 * so the managed list is the default explain shows. */
		err = sim_rec_add(s, vi, (struct rec){ .val = managed->val, .len = managed->len,
				  .source = NULL, .sv = decl,
				  .layer = (unsigned char)ml }, NULL);
		e = &s->v[vi];
		if (!e->have_def && managed->len) {
			e->def = managed->val;
			e->have_def = true;
		}
		goto out;
	}
	if ((err = sim_count_total(s, val.len)) < 0)
		goto out;
	{
		const char *text = arena_strndup(s->arena, val.buf ? val.buf : "", val.len);
		struct rec r = { .val = managed->val, .len = managed->len,
				 .source = NULL, .sv = decl,
				 .layer = (unsigned char)ml, .applied = !owned && managed->len };

		if (!text) {
			err = -ENOMEM;
			goto out;
		}
		/* The managed list is recorded as the spec's offer; the merged
		 * text is the value, with the layer that decided it. */
		if ((err = sim_rec_add(s, vi, r, NULL)) < 0)
			goto out;
		e = &s->v[vi];
		if (!e->have_def && managed->len) {
			e->def = managed->val;
			e->have_def = true;
		}
		if (!owned && managed->len) {
			e->layer = (unsigned char)ml;
			e->win = e->tail;
		} else if (!owned && !was_set && ai != NONE) {
			/* Only the append supplied it. */
			e->layer = s->v[ai].layer;
			e->win = s->v[ai].win;
		}
		e->val = text;
		e->len = val.len;
		e->set = true;
		e->secret |= managed->secret;
	}
flags:
	e = &s->v[vi];
	if (e->set) {
		if (e->pinned) {
			parts[0] = (struct part){ e->val, e->len, LAYER_OVERRIDE, "override" };
			np = 1;
		}
		err = effective_flags(s, e, parts, np, s->full);
	}
out:
	sb_release(&val);
	return err;
}
