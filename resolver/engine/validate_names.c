/* Owned prefixes and retired names: a name in a spec's owned_prefix that
 * is neither declared, nor in a dynamic family, nor retired is a warning
 * with a did-you-mean; a retired name is silent, and explain says what
 * replaced it. */
#include "validate_ctx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* ---- owned prefixes and retired names ----------------------------------- */

static const struct spec_retired *find_retired(const struct spec *sp, const char *name)
{
	return spec_retired_find(sp, name);
}

static bool declared(const struct spec *sp, const char *name)
{
	size_t first;

	return spec_entries(sp, name, &first) > 0;
}

static bool in_family(const struct spec *sp, const char *name)
{
	size_t k;

	for (k = 0; k < sp->nfamilies; k++)
		if (!strncmp(name, sp->families[k], strlen(sp->families[k])))
			return true;
	return false;
}

static int add_retired_text(struct strbuf *sb, const struct spec_retired *r)
{
	int err = 0;

	if (r->replaced_by)
		err = sb_addf(sb, "replaced by %s", r->replaced_by);
	if (!err && r->note)
		err = sb_addf(sb, "%s%s", r->replaced_by ? " (" : "", r->note);
	if (!err && r->note && r->replaced_by)
		err = sb_addc(sb, ')');
	if (!err && !r->replaced_by && !r->note)
		err = sb_adds(sb, "replaced by nothing");
	return err;
}

int validate_explain_retired(struct vctx *c, size_t idx)
{
	const struct snap_var *v = &c->s->vars[idx];
	const struct spec_retired *r = find_retired(c->backend, v->name);
	struct strbuf m = STRBUF_INIT;
	int err;

	if (!r)
		r = find_retired(c->runner, v->name);
	if (!r || !v->set)
		return 0;
	if (!(err = sb_adds(&m, "retired: inert, nothing reads it; ")) &&
	    !(err = add_retired_text(&m, r)))
		err = explain_add(c, idx, sb_str(&m));
	sb_release(&m);
	return err;
}

/* The declared or retired name of sp closest to name, when close enough. */
static const char *suggest(const struct spec *sp, const char *name,
			   const struct spec_retired **as_retired)
{
	size_t n = strlen(name), best = (size_t)-1, k;
	const char *pick = NULL;

	*as_retired = NULL;
	for (k = 0; k < sp->nvars; k++) {
		size_t d = text_edit_distance(name, n, sp->vars[k].name, strlen(sp->vars[k].name));

		if (d < best) {
			best = d;
			pick = sp->vars[k].name;
		}
	}
	for (k = 0; k < sp->nretired; k++) {
		size_t d = text_edit_distance(name, n, sp->retired[k].name,
					 strlen(sp->retired[k].name));

		if (d < best) {
			best = d;
			pick = sp->retired[k].name;
			*as_retired = &sp->retired[k];
		}
	}
	if (!pick || !validate_close_enough(best, n)) {
		*as_retired = NULL;
		return NULL;
	}
	return pick;
}

int validate_check_owned(struct vctx *c, size_t idx, const struct spec *sp)
{
	const struct snap_var *v = &c->s->vars[idx];
	const struct spec_retired *r;
	struct strbuf m = STRBUF_INIT;
	const char *sug;
	int err;

	if (!sp || !sp->owned_prefix || !v->set ||
	    strncmp(v->name, sp->owned_prefix, strlen(sp->owned_prefix)))
		return 0;
	/* Declared by either spec of this directory counts: a backend may
	 * declare a name in the runner's prefix (and vice versa). */
	if (in_family(sp, v->name) ||
	    find_retired(c->backend, v->name) || find_retired(c->runner, v->name) ||
	    (c->backend && declared(c->backend, v->name)) ||
	    (c->runner && declared(c->runner, v->name)))
		return 0;
	err = sb_addf(&m, "%s is not a %s variable; nothing reads it.", v->name,
		      sp->backend ? sp->backend : "runner");
	if (!err && (sug = suggest(sp, v->name, &r))) {
		err = sb_addf(&m, " Did you mean %s?", sug);
		if (!err && r) {
			if (!(err = sb_adds(&m, " (retired: ")) && !(err = add_retired_text(&m, r)))
				err = sb_addc(&m, ')');
		}
	}
	if (!err)
		err = validate_report(c, idx, DC_OWNED_UNKNOWN, &m);
	sb_release(&m);
	return err;
}
