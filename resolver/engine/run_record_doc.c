/* run_record_doc: freeing a record read back; see run_record.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diag_codes.h"
#include "layer.h"
#include "run_record.h"
#include "strbuf.h"
#include "view.h"

static void var_release(struct rr_var *v)
{
	size_t k;

	free(v->name);
	free(v->value);
	free(v->layer);
	free(v->source);
	for (k = 0; k < v->nflags; k++) {
		free(v->flags[k].flag);
		free(v->flags[k].token);
		free(v->flags[k].layer);
	}
	free(v->flags);
}

static void diag_release(struct rr_diag *d)
{
	free(d->severity);
	free(d->code);
	free(d->file);
	free(d->message);
}

void rr_doc_drop_vars(struct rr_doc *d)
{
	size_t k;

	for (k = 0; k < d->nvars; k++)
		var_release(&d->vars[k]);
	d->nvars = 0;
}

void rr_doc_drop_diags(struct rr_doc *d)
{
	size_t k;

	for (k = 0; k < d->ndiags; k++)
		diag_release(&d->diags[k]);
	d->ndiags = 0;
}

void rr_doc_free(struct rr_doc *d)
{
	if (!d)
		return;
	rr_doc_drop_vars(d);
	free(d->vars);
	rr_doc_drop_diags(d);
	free(d->diags);
	free(d->program_version);
	free(d->backend);
	free(d->arch);
	free(d->digest);
	free(d->specs_sha256);
	free(d);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int var_from(struct rr_var *v, const struct snap_var *sv, unsigned flags)
{
	uint32_t k;

	if (!(v->name = xstrndup(sv->name, sv->name_len)))
		return -ENOMEM;
	v->name_len = sv->name_len;
	v->set = sv->set;
	v->exported = sv->exported;
	v->secret = sv->secret;
	if (sv->value && (!sv->secret || (flags & RUN_RECORD_SECRET_VALUES))) {
		if (!(v->value = xstrndup(sv->value, sv->value_len)))
			return -ENOMEM;
		v->value_len = sv->value_len;
	}
	if ((sv->layer && !(v->layer = strdup(layer_name((enum layer)sv->layer)))) ||
	    (sv->source && !(v->source = strdup(sv->source))))
		return -ENOMEM;
	if (!(v->is_flags = sv->is_flags) || !sv->nflags)
		return 0;
	if (!(v->flags = calloc(sv->nflags, sizeof(*v->flags))))
		return -ENOMEM;
	for (k = 0; k < sv->nflags; k++) {
		const struct snap_flag *f = &sv->flags[k];
		struct rr_flag *rf = &v->flags[k];

		v->nflags++;
		if (!(rf->flag = strdup(f->key)) || !(rf->token = strdup(f->token)) ||
		    !(rf->layer = dup_or_null(layer_name(f->layer))))
			return -ENOMEM;
		rf->token_len = strlen(f->token);
	}
	return 0;
}

static int diag_from(struct rr_diag *d, const struct diag *sd)
{
	const struct diag_code_info *c = diag_code_info(sd->code);

	d->line = sd->line;
	d->column = sd->col;
	d->silenced = sd->silenced;
	if (!(d->severity = strdup(diag_sev_name(sd->sev))) ||
	    (c && !(d->code = strdup(c->code))) || (sd->file && !(d->file = strdup(sd->file))) ||
	    !(d->message = strdup(sd->msg)))
		return -ENOMEM;
	return 0;
}

int rr_doc_from_snapshot(const struct snapshot *s, unsigned flags, struct rr_doc **out)
{
	struct strbuf digest = STRBUF_INIT;
	struct rr_doc *d = calloc(1, sizeof(*d));
	size_t k;
	int err = -ENOMEM;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->version = RUN_RECORD_VERSION;
	if (!(d->backend = strdup(s->backend)) || !(d->arch = strdup(s->arch)))
		goto out;
	if (!(flags & RUN_RECORD_NO_DIGEST)) {
		if ((err = view_render(s, VIEW_DIGEST, &digest)) < 0)
			goto out;
		err = -ENOMEM;
		if (!(d->digest = xstrndup(sb_str(&digest), digest.len ? digest.len - 1 : 0)))
			goto out;
	}
	err = -ENOMEM;
	if (s->nvars && !(d->vars = calloc(s->nvars, sizeof(*d->vars))))
		goto out;
	for (k = 0; k < s->nvars; k++) {
		d->nvars++;
		if ((err = var_from(&d->vars[k], &s->vars[k], flags)) < 0)
			goto out;
	}
	err = -ENOMEM;
	if (s->diags.n && !(d->diags = calloc(s->diags.n, sizeof(*d->diags))))
		goto out;
	for (k = 0; k < s->diags.n; k++) {
		d->ndiags++;
		if ((err = diag_from(&d->diags[k], &s->diags.v[k])) < 0)
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
