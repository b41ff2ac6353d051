/* The snapshot of one directory, built from a finished simulation: its
 * variables sorted by name, each with its layers, shadowed values and
 * explain lines, and the directory's diagnostics with secrets scrubbed. */
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spec_share.h"
#include "view.h"

static int name_cmp(const void *a, const void *b)
{
	const struct snap_var *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);

	return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

/* "image host ..." in launch order, the winner last. */
static const char *layers_text(struct sim *s, const struct evar *e, struct strbuf *sb)
{
	unsigned seen = 0;
	uint32_t r;
	enum layer win = e->win != NONE ? (enum layer)s->recs[e->win].layer : LAYER_NONE;

	sb_reset(sb);
	for (r = e->head; r != NONE; r = s->recs[r].next) {
		enum layer l = (enum layer)s->recs[r].layer;

		if (l == win || (seen & (1u << l)))
			continue;
		seen |= 1u << l;
		if ((sb->len && sb_addc(sb, ' ') < 0) || sb_adds(sb, layer_name(l)) < 0)
			return NULL;
	}
	if (win != LAYER_NONE && ((sb->len && sb_addc(sb, ' ') < 0) || sb_adds(sb, layer_name(win)) < 0))
		return NULL;
	return sb->len ? arena_strndup(s->arena, sb->buf, sb->len) : NULL;
}

/* "layer=value" lines of every record that is not the value (secrets
 * redacted). */
static const char *shadowed_text(struct sim *s, const struct evar *e, struct strbuf *sb)
{
	uint32_t r;

	sb_reset(sb);
	for (r = e->head; r != NONE; r = s->recs[r].next) {
		const struct rec *rc = &s->recs[r];

		if (r == e->win || (rc->sv && rc->sv->kind == SPEC_KIND_FLAGS && !rc->len))
			continue;
		if (sb_adds(sb, layer_name((enum layer)rc->layer)) < 0 || sb_addc(sb, '=') < 0)
			return NULL;
		if (!rc->val ? sb_adds(sb, "(unset)") < 0 :
		    e->secret || rc->secret ? sb_adds(sb, "<redacted>") < 0 :
		    sb_add(sb, rc->val, rc->len) < 0)
			return NULL;
		if (sb_addc(sb, '\n') < 0)
			return NULL;
	}
	return sb->len ? arena_strndup(s->arena, sb->buf, sb->len) : NULL;
}

/* Directory notes at the head of explain. */
static int dir_notes(struct sim *s, const char **out)
{
	uint32_t vi;

	*out = NULL;
	if (!s->runner)
		return 0;
	vi = sim_find(s, "PRIMUS_PATH", 11);
	if (vi == NONE || !s->v[vi].set)
		*out = "PRIMUS_PATH: unknown here, so the launch derives PRIMUS_IMPORT_ROOT, "
		       "DATA_PATH (${PRIMUS_PATH}/data), HF_HOME (${DATA_PATH}/huggingface) and "
		       "PYTHONPATH from where Primus is in the container; --primus-path DIR (or an "
		       "image's PRIMUS_PATH) shows them\n";
	else
		*out = "PRIMUS_PATH: the runner derives PRIMUS_IMPORT_ROOT, DATA_PATH, HF_HOME and "
		       "PYTHONPATH from it; where the container has python, the launch also puts "
		       "its purelib directory after PRIMUS_IMPORT_ROOT in PYTHONPATH (not shown)\n";
	return 0;
}

/* A diagnostic never carries a secret value, whichever path made it. */
int sim_scrub_diags(struct sim *s, struct diag_list *l)
{
	size_t k;
	int err;

	for (k = 0; k < s->nv; k++) {
		const struct evar *e = &s->v[k];

		/* Shorter values are no telling secret, and too common. */
		if (!e->secret || !e->set || e->len < 4)
			continue;
		if ((err = diag_scrub(l, e->val, e->len)) < 0)
			return err;
	}
	return 0;
}

/* The names the specs mark scope: node, in snap (sorted). A mark holds
 * whatever the entry's arch; the runner's holds in a directory without
 * the runner base too (--env NODE_RANK=i reaches every directory). Only
 * what is exported can differ at launch. Marks are few: this walks the
 * specs once rather than searching them per name. explain says what the
 * mark does, once per variable. */
static int mark_node_scoped(const struct sim *s, struct snapshot *snap)
{
	static const char line[] = "scope: node (another value on every node by design): "
				   "left out of the digest; an override of it stays on the "
				   "node that wrote it (--sync never shares it)\n";
	const struct spec *both[2] = { s->w->specs->runner, s->backend };
	size_t j, k;

	for (j = 0; j < 2; j++)
		for (k = 0; both[j] && k < both[j]->nvars; k++) {
			const struct spec_var *sv = &both[j]->vars[k];
			/* snap is still ours to change: not published yet. */
			struct snap_var *v = (sv->scope & SCOPE_NODE) ?
				(struct snap_var *)snapshot_find(snap, sv->name, strlen(sv->name)) :
				NULL;
			size_t n;
			char *x;

			if (!v || !v->exported || v->node)
				continue;
			v->node = true;
			n = v->explain ? strlen(v->explain) : 0;
			if (!(x = arena_alloc(snap->arena, n + sizeof(line))))
				return -ENOMEM;
			memcpy(x, v->explain ? v->explain : "", n);
			memcpy(x + n, line, sizeof(line));
			v->explain = x;
		}
	return 0;
}

int sim_build_snapshot(struct sim *s, struct snapshot **out)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	struct strbuf sb = STRBUF_INIT;
	const struct spec *m;
	size_t k, n = 0;
	int err = -ENOMEM;

	if (!snap)
		return -ENOMEM;
	atomic_init(&snap->refs, 1);
	snap->arena = s->arena;      /* handed over only on success */
	snap->specs = spec_share_ref(s->w->spec_share);
	snap->backend = s->backend->backend;
	if (!(snap->arch = arena_strdup(snap->arena, s->arch)) ||
	    !(snap->vars = calloc(s->nv ? s->nv : 1, sizeof(*snap->vars))))
		goto out;
	for (k = 0; k < s->nv; k++) {
		struct evar *e = &s->v[k];
		struct snap_var *sv = &snap->vars[n];
		bool param = !e->set && (sim_param_of(e, 0) || sim_param_of(e, 1));

		/* Unset and undeclared by any default: no entry, unless explain
		 * has something to say about it (a launch fed the views sets it). */
		if (!e->set && !param && !e->have_def && !e->explain)
			continue;
		err = -EFBIG;
		if (e->name_len > UINT32_MAX || e->len > UINT32_MAX)
			goto out;
		err = -ENOMEM;
		sv->name = arena_strndup(snap->arena, e->name, e->name_len);
		sv->name_len = (uint32_t)e->name_len;
		sv->set = e->set;
		sv->value = e->set ? arena_strndup(snap->arena, e->val ? e->val : "", e->len) : NULL;
		sv->value_len = e->set ? (uint32_t)e->len : 0;
		sv->exported = sim_exported(e);
		sv->secret = e->secret;
		sv->pending = e->pending;
		sv->is_flags = e->flags_decl != NULL;
		sv->layer = e->set ? e->layer : LAYER_NONE;
		sv->source = e->set && e->win != NONE ? sim_rec_source(s, &s->recs[e->win]) :
			     e->set ? "override" : NULL;
		if (sv->source && !(sv->source = arena_strdup(snap->arena, sv->source)))
			goto out;
		sv->def = e->have_def ? e->def : NULL;
		sv->def_secret = e->def_secret;
		sv->note = e->note;
		sv->flags = e->flags;
		sv->nflags = e->nflags;
		sv->effective = e->set ? e->effective : NULL;
		sv->layers = e->set ? layers_text(s, e, &sb) : NULL;
		sv->shadowed = shadowed_text(s, e, &sb);
		sv->explain = e->explain;
		if ((!sv->name) || (e->set && !sv->value))
			goto out;
		if (e->set && e->consumed &&
		    (err = sim_explain_add(s, e, "consumed: appended to a flag list, never "
					   "exported")) < 0)
			goto out;
		if (param) {
			const struct evar_param *ep = sim_param_of(e, 1) ? sim_param_of(e, 1) :
						      sim_param_of(e, 0);

			bool hide = e->secret || ep->secret;

			if ((err = sim_explain_add(s, e, "parameter: not exported; its default is "
						   "%.*s", hide ? 10 : (int)ep->len,
						   hide ? "<redacted>" : ep->val)) < 0)
				goto out;
			sv->def = ep->val;
			sv->def_secret = ep->secret;
		}
		sv->explain = e->explain;
		if (sv->def && !(sv->def = arena_strdup(snap->arena, sv->def)))
			goto out;
		if (e->set && view_is_name(sv->name)) {
			sv->view_name = true;
			if ((err = diag_add(&snap->diags, DC_NAME_IS_VIEW, sv->source, 0, 0,
					    "%s is named like a view file; it is only reachable "
					    "through the views", e->name)) < 0)
				goto out;
		}
		if (sv->set)
			snap->nset++;
		if (sv->exported && sv->secret)
			snap->secret_in_views = true;
		n++;
	}
	snap->nvars = n;
	qsort(snap->vars, n, sizeof(*snap->vars), name_cmp);
	if ((err = mark_node_scoped(s, snap)) < 0 ||
	    (err = dir_notes(s, &snap->explain)) < 0)
		goto out;
	if ((m = spec_set_models(s->w->specs, s->backend))) {
		sb_reset(&sb);
		if ((err = sb_addf(&sb, "%s %s, commit %s", m->models_source, m->models_version,
				   m->models_commit)) < 0)
			goto out;
		err = -ENOMEM;
		if (!(snap->models = arena_strndup(s->arena, sb.buf, sb.len)))
			goto out;
	}
	if ((err = diag_extend(&snap->diags, &s->w->diags)) < 0 ||
	    (err = diag_extend(&snap->diags, &s->diags)) < 0 ||
	    (err = sim_scrub_diags(s, &snap->diags)) < 0)
		goto out;
	s->arena = NULL;
	sb_release(&sb);
	*out = snap;
	return 0;
out:
	sb_release(&sb);
	snap->arena = NULL;
	snapshot_unref(snap);
	return err;
}
