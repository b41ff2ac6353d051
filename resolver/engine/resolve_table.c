/* The simulation's table: one variable per name the launch knows, the
 * records of what each layer offered it, the rule that decides whether an
 * offer becomes the value, and the diagnostics and explain lines placed at
 * a spec entry. */
#include "hindex.h"
#include "resolve_sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "names.h"
#include "text.h"

/* ---- the table ----------------------------------------------------------- */

void sim_release(struct sim *s)
{
	free(s->entry_var[0]);
	free(s->entry_var[1]);
	sb_release(&s->scratch);
	free(s->v);
	hindex_release(&s->index);
	free(s->recs);
	free(s->readers);
	diag_list_release(&s->diags);
	arena_free(s->arena);
}

bool sim_exported(const struct evar *e)
{
	return e->set && !e->consumed;
}

/* sim_find with the name's hash given: sim_var hashes a name once for
 * its lookup, its insert and the first pass's lookup. */
static uint32_t find_hashed(const struct sim *s, const char *name, size_t len, uint64_t h)
{
	struct hindex_probe p;
	size_t i;

	for (i = hindex_first(&s->index, h, &p); i != HINDEX_NONE; i = hindex_next(&s->index, &p)) {
		const struct evar *e = &s->v[i];

		if (e->name_len == len && !memcmp(e->name, name, len))
			return (uint32_t)i;
	}
	return NONE;
}

uint32_t sim_find(const struct sim *s, const char *name, size_t len)
{
	return find_hashed(s, name, len, hindex_hash(name, len, HINDEX_SEED));
}

/* The variable name (borrowed: it must outlive the simulation), added
 * when new. */
/* Whether name is a secret by name: a --secret glob matches it, or (not
 * only_cli) a secret pattern of the runner base (which holds in every
 * directory, a backend without the runner's included) or of this
 * directory's spec. A spec entry's secret: false is applied after. */
bool sim_secret_by_name(const struct sim *s, const char *name, size_t len, bool only_cli)
{
	const struct spec *runner = s->w->specs ? s->w->specs->runner : NULL;
	char buf[NAMES_VAR_MAX + 1], *z = buf;
	bool yes;

	if (!s->w->nsecrets && (only_cli || ((!runner || !runner->nsecret_patterns) &&
					     (!s->backend || !s->backend->nsecret_patterns))))
		return false;
	if (len >= sizeof(buf) && !(z = xstrndup(name, len)))
		return true;            /* out of memory: the safe side */
	if (z == buf) {
		memcpy(buf, name, len);
		buf[len] = '\0';
	}
	yes = world_secret_by_pattern(s->w, s->backend, z, len, only_cli);
	if (z != buf)
		free(z);
	return yes;
}

int sim_var(struct sim *s, const char *name, size_t len, uint32_t *out)
{
	uint64_t h = hindex_hash(name, len, HINDEX_SEED);
	uint32_t i = find_hashed(s, name, len, h);

	if (i != NONE) {
		*out = i;
		return 0;
	}
	if (s->nv >= UINT32_MAX - 1)
		return -EFBIG;
	if (GROW(s->v, s->capv, s->nv, 256) < 0 ||
	    hindex_insert(&s->index, h, s->nv) < 0)
		return -ENOMEM;
	s->v[s->nv] = (struct evar){ .name = name, .name_len = len, .win = NONE,
				     .head = NONE, .tail = NONE };
	/* The patterns' answer for a name the first pass knows is its answer
	 * there: matching every pattern against every name again was a tenth
	 * of a resolve. */
	if (s->names_from && (i = find_hashed(s->names_from, name, len, h)) != NONE)
		s->v[s->nv].name_secret = s->names_from->v[i].name_secret;
	else
		s->v[s->nv].name_secret = sim_secret_by_name(s, name, len, false);
	s->v[s->nv].secret = s->v[s->nv].name_secret;
	*out = (uint32_t)s->nv++;
	return 0;
}

int sim_rec_add(struct sim *s, uint32_t vi, struct rec r, uint32_t *out)
{
	struct evar *e = &s->v[vi];

	if (GROW(s->recs, s->caprecs, s->nrecs, 512) < 0)
		return -ENOMEM;
	if (s->nrecs >= UINT32_MAX - 1)
		return -EFBIG;
	r.next = NONE;
	s->recs[s->nrecs] = r;
	if (e->tail != NONE)
		s->recs[e->tail].next = (uint32_t)s->nrecs;
	else
		e->head = (uint32_t)s->nrecs;
	e->tail = (uint32_t)s->nrecs;
	if (out)
		*out = (uint32_t)s->nrecs;
	s->nrecs++;
	return 0;
}

/* A layer offers vi a value (val NULL: unset) under rule; the override
 * holds its variable against every other layer. */
int sim_offer(struct sim *s, uint32_t vi, enum layer layer, const char *val, size_t len,
	      const char *source, const struct spec_var *sv, enum rule rule, bool secret)
{
	struct evar *e = &s->v[vi];
	struct rec r = { .val = val, .len = len, .source = source, .sv = sv,
			 .layer = (unsigned char)layer, .secret = secret };
	uint32_t ri;
	int err;

	if (e->pinned && layer != LAYER_OVERRIDE)
		r.applied = false;
	else if (rule == RULE_ALWAYS)
		r.applied = true;
	else if (rule == RULE_UNSET_OR_EMPTY)
		r.applied = !e->set || !e->len;
	else
		r.applied = !e->set;
	if ((err = sim_rec_add(s, vi, r, &ri)) < 0)
		return err;
	e = &s->v[vi];
	if (sv && !e->have_def && val) {
		e->def = val;
		e->have_def = true;
		e->def_secret = secret;
	}
	if (!r.applied)
		return 0;
	e->val = val;
	e->len = len;
	e->set = val != NULL;
	e->layer = (unsigned char)layer;
	e->win = ri;
	e->secret |= secret;
	return 0;
}

/* ---- parameters ----------------------------------------------------------- */

/* e's export: false entry of side k (0 the runner, 1 the backend), or NULL. */
const struct evar_param *sim_param_of(const struct evar *e, int k)
{
	return e->param && e->param[k].sv ? &e->param[k] : NULL;
}

/* Records that sv, an export: false entry of side k, applies with val
 * (built from a secret: secret); the first such entry also gives the
 * variable its default. */
int sim_param_set(struct sim *s, struct evar *e, int k, const struct spec_var *sv,
		  const char *val, size_t len, bool secret)
{
	if (!e->param && !(e->param = arena_alloc(s->arena, 2 * sizeof(*e->param))))
		return -ENOMEM;
	e->param[k] = (struct evar_param){ .sv = sv, .val = val, .len = (uint32_t)len,
					   .secret = secret };
	if (!e->have_def) {
		e->def = val;
		e->have_def = true;
		e->def_secret = secret;
	}
	return 0;
}

/* ---- diagnostics ------------------------------------------------------- */

const struct spec *sim_spec_of(const struct sim *s, bool runner)
{
	return runner ? s->runner : s->backend;
}


int sim_warn_at(struct sim *s, enum diag_code code, const struct spec *sp,
		const struct spec_var *sv, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = diag_vadd(&s->diags, code, sp ? sp->display : NULL, sv ? sv->line : 0,
			sv ? sv->col : 0, fmt, ap);
	va_end(ap);
	return err;
}

/* Appends a line to v's explain text (arena). */
int sim_explain_add(struct sim *s, struct evar *e, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int err;

	if (e->explain && (err = sb_adds(&sb, e->explain)) < 0)
		goto out;
	va_start(ap, fmt);
	err = sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (!err && !(err = sb_addc(&sb, '\n')) &&
	    !(e->explain = arena_strndup(s->arena, sb.buf, sb.len)))
		err = -ENOMEM;
out:
	sb_release(&sb);
	return err;
}

/* "file:line" of a spec entry, in the arena. Built by hand: it is made
 * once per shown variable, and printf costs more than the rest of it. */
const char *sim_spec_entry_source(struct sim *s, const struct spec *sp, const struct spec_var *sv)
{
	char digits[16];
	size_t nd = 0, n = strlen(sp->display), i;
	unsigned line = sv->line;
	char *p;

	do
		digits[nd++] = (char)('0' + line % 10);
	while ((line /= 10) && nd < sizeof(digits));
	if (!(p = arena_alloc_text(s->arena, n + 1 + nd + 1)))
		return NULL;
	memcpy(p, sp->display, n);
	p[n] = ':';
	for (i = 0; i < nd; i++)
		p[n + 1 + i] = digits[nd - 1 - i];
	p[n + 1 + nd] = '\0';
	return p;
}

/* Where a record's value comes from: its source, or "file:line" of its
 * spec entry (made only for what is shown: a snapshot's winners). */
const char *sim_rec_source(struct sim *s, const struct rec *r)
{
	const struct spec *rn = s->runner;

	if (r->source || !r->sv)
		return r->source;
	return sim_spec_entry_source(s, rn && r->sv >= rn->vars && r->sv < rn->vars + rn->nvars ? rn :
			    s->backend, r->sv);
}
