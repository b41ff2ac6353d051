/* run_record_doc: a record read back, made, emptied and freed; see run_record.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "diag_codes.h"
#include "layer.h"
#include "run_record.h"
#include "strbuf.h"
#include "view.h"

struct rr_doc *rr_doc_new(void)
{
	struct rr_doc *d = calloc(1, sizeof(*d));

	if (d && !(d->arena = arena_new())) {
		free(d);
		d = NULL;
	}
	return d;
}

void rr_doc_drop_vars(struct rr_doc *d)
{
	d->nvars = 0;
}

void rr_doc_drop_diags(struct rr_doc *d)
{
	d->ndiags = 0;
}

int rr_var_name_cmp(const struct rr_var *a, const struct rr_var *b)
{
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(a->name, b->name, n);

	return c ? c : (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

void rr_doc_free(struct rr_doc *d)
{
	if (!d)
		return;
	free(d->vars);
	free(d->diags);
	arena_free(d->arena);
	free(d);
}

static int var_from(struct arena *a, struct rr_var *v, const struct snap_var *sv,
		    unsigned flags)
{
	uint32_t k;

	if (!(v->name = arena_strndup(a, sv->name, sv->name_len)))
		return -ENOMEM;
	v->name_len = sv->name_len;
	v->set = sv->set;
	v->exported = sv->exported;
	v->secret = sv->secret;
	if (sv->value && (!sv->secret || (flags & RUN_RECORD_SECRET_VALUES))) {
		if (!(v->value = arena_strndup(a, sv->value, sv->value_len)))
			return -ENOMEM;
		v->value_len = sv->value_len;
	}
	if ((sv->layer && !(v->layer = arena_strdup(a, layer_name((enum layer)sv->layer)))) ||
	    (sv->source && !(v->source = arena_strdup(a, sv->source))))
		return -ENOMEM;
	if (!(v->is_flags = sv->is_flags) || !sv->nflags)
		return 0;
	if (!(v->flags = arena_alloc(a, sv->nflags * sizeof(*v->flags))))
		return -ENOMEM;
	for (k = 0; k < sv->nflags; k++) {
		const struct snap_flag *f = &sv->flags[k];
		struct rr_flag *rf = &v->flags[k];

		v->nflags++;
		if (!(rf->flag = arena_strdup(a, f->key)) ||
		    !(rf->token = arena_strdup(a, f->token)) ||
		    (layer_name(f->layer) && !(rf->layer = arena_strdup(a, layer_name(f->layer)))))
			return -ENOMEM;
		rf->token_len = strlen(f->token);
	}
	return 0;
}

static int diag_from(struct arena *a, struct rr_diag *d, const struct diag *sd)
{
	const struct diag_code_info *c = diag_code_info(sd->code);

	d->line = sd->line;
	d->column = sd->col;
	d->silenced = sd->silenced;
	if (!(d->severity = arena_strdup(a, diag_sev_name(sd->sev))) ||
	    (c && !(d->code = arena_strdup(a, c->code))) ||
	    (sd->file && !(d->file = arena_strdup(a, sd->file))) ||
	    !(d->message = arena_strdup(a, sd->msg)))
		return -ENOMEM;
	return 0;
}

int rr_doc_from_snapshot(const struct snapshot *s, unsigned flags, struct rr_doc **out)
{
	struct strbuf digest = STRBUF_INIT;
	struct rr_doc *d = rr_doc_new();
	size_t k;
	int err = -ENOMEM;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->version = RUN_RECORD_VERSION;
	if (!(d->backend = arena_strdup(d->arena, s->backend)) ||
	    !(d->arch = arena_strdup(d->arena, s->arch)))
		goto out;
	if (!(flags & RUN_RECORD_NO_DIGEST)) {
		if ((err = view_render(s, VIEW_DIGEST, &digest)) < 0)
			goto out;
		err = -ENOMEM;
		if (!(d->digest = arena_strndup(d->arena, sb_str(&digest),
						digest.len ? digest.len - 1 : 0)))
			goto out;
	}
	err = -ENOMEM;
	if (s->nvars && !(d->vars = calloc(s->nvars, sizeof(*d->vars))))
		goto out;
	for (k = 0; k < s->nvars; k++) {
		d->nvars++;
		if ((err = var_from(d->arena, &d->vars[k], &s->vars[k], flags)) < 0)
			goto out;
	}
	err = -ENOMEM;
	if (s->diags.n && !(d->diags = calloc(s->diags.n, sizeof(*d->diags))))
		goto out;
	for (k = 0; k < s->diags.n; k++) {
		d->ndiags++;
		if ((err = diag_from(d->arena, &d->diags[k], &s->diags.v[k])) < 0)
			goto out;
	}
	*out = d;
	d = NULL;
	err = 0;
out:
	sb_release(&digest);
	rr_doc_free(d);
	return err;
}
