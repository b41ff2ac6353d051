/* The specs' cross-variable `rules:` over one directory, with what the
 * run gets: set values only. */
#include "validate_ctx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* ---- rules ---------------------------------------------------------------- */

/* Rules see what the run gets: set values only. */
static int set_lookup(void *ctx, const char *name, size_t len, const char **val,
		      size_t *vlen)
{
	const struct snap_var *v = snapshot_find(ctx, name, len);

	if (!v || !v->set || !v->value)
		return 0;
	*val = v->value;
	*vlen = v->value_len;
	return 1;
}

/* The same, for a rule's message: a secret shows as (secret). */
static int shown_lookup(void *ctx, const char *name, size_t len, const char **val,
			size_t *vlen)
{
	int r = set_lookup(ctx, name, len, val, vlen);

	if (r > 0 && snapshot_find(ctx, name, len)->secret) {
		*val = "(secret)";
		*vlen = 8;
	}
	return r;
}

/* The final rules; `at: runner` ones ran during the simulation. */
int validate_check_rules(struct vctx *c, const struct spec *sp)
{
	size_t k;
	int err = 0;

	for (k = 0; sp && k < sp->nrules && !err; k++)
		if (sp->rules[k].at == RULE_AT_FINAL)
			err = rule_check(sp, &sp->rules[k], set_lookup, shown_lookup, c->s,
					 &c->s->diags);
	return err;
}
