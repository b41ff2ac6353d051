/* One launch played over the table (resolve.c says the order and why):
 * the steps in their order, then what a secret's value makes secret. */
#include "hindex.h"
#include "resolve_sim.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* The secrets' values: ix indexes the records holding one; lens has bit
 * len % 64 set for each one's length, so most values are passed over
 * without being hashed. */
struct secret_values {
	struct hindex ix;
	uint64_t lens;
};

/* Whether len bytes at val are a secret's value. */
static bool is_secret_value(const struct sim *s, const struct secret_values *sv,
			    const char *val, size_t len)
{
	const struct hindex *ix = &sv->ix;
	struct hindex_probe p;
	size_t i;

	if (!val || !len || !(sv->lens & (1ull << (len % 64))))
		return false;
	for (i = hindex_first(ix, hindex_hash(val, len, HINDEX_SEED), &p); i != HINDEX_NONE;
	     i = hindex_next(ix, &p))
		if (s->recs[i].len == len && !memcmp(s->recs[i].val, val, len))
			return true;
	return false;
}

static int index_secret(const struct sim *s, struct secret_values *sv, uint32_t r)
{
	const struct rec *rc = &s->recs[r];

	if (!rc->val || !rc->len)
		return 0;
	sv->lens |= 1ull << (rc->len % 64);
	return hindex_insert(&sv->ix, hindex_hash(rc->val, rc->len, HINDEX_SEED), r);
}

/* A value equal to a secret's is as secret as it, wherever it shows: a
 * variable's (a `mv` of a secret, a copy of a token), a value another
 * layer shadows, a default. The secrets' values are every value a secret
 * variable was offered (its shadowed ones too) but a spec's own text,
 * which the shipped files show anyway ("0" would make every "0" secret),
 * and every value built from one. Returns 0 or -ENOMEM. */
static int spread_secrets(struct sim *s)
{
	struct secret_values sec = { { 0 }, 0 };
	size_t k;
	uint32_t r;
	int err = 0;

	for (k = 0; k < s->nv && !err; k++)
		for (r = s->v[k].head; r != NONE && !err; r = s->recs[r].next)
			if ((s->v[k].secret && !s->recs[r].sv) || s->recs[r].secret)
				err = index_secret(s, &sec, r);
	if (err || !sec.ix.n)
		goto out;
	for (k = 0; k < s->nv; k++) {
		struct evar *b = &s->v[k];

		if (b->secret)
			continue;
		if (b->set && is_secret_value(s, &sec, b->val, b->len))
			b->secret = true;
		if (b->have_def && b->def && is_secret_value(s, &sec, b->def, strlen(b->def)))
			b->def_secret = true;
		for (r = b->head; r != NONE; r = s->recs[r].next)
			if (!s->recs[r].secret &&
			    is_secret_value(s, &sec, s->recs[r].val, s->recs[r].len))
				s->recs[r].secret = true;
	}
out:
	hindex_release(&sec.ix);
	return err;
}

int sim_run(struct sim *s)
{
	int err;

	if ((err = sim_declare_specs(s)) < 0 || (err = sim_pin_overrides(s)) < 0)
		return err;
	s->step = STEP_INPUTS;
	if ((err = sim_apply_list(s, s->image, LAYER_IMAGE, false)) < 0)
		return err;
	if (s->full && ((err = sim_apply_list(s, &s->w->host, LAYER_HOST, true)) < 0 ||
			(err = sim_apply_slurm(s)) < 0 ||
			(err = sim_apply_list(s, &s->w->cli, LAYER_CLI, false)) < 0))
		return err;
	if ((err = sim_step_runner(s)) < 0 || (err = sim_step_config(s)) < 0 ||
	    (err = sim_step_backend(s)) < 0 || (err = sim_finish_overrides(s)) < 0)
		return err;
	if (s->full && (err = sim_warn_empty_params(s)) < 0)
		return err;
	if (s->full && s->nforward > FORWARD_SHOWN &&
	    (err = diag_add(&s->diags, DC_REF_FORWARD, NULL, 0, 0,
			    "%zu more entries read a name their file sets only later",
			    s->nforward - FORWARD_SHOWN)) < 0)
		return err;
	return spread_secrets(s);
}
