/* The layering engine of SPEC section 3: one <backend>/<arch> resolved by
 * playing a real Primus launch, step by step, over an environment:
 *
 *   1 image   --inherit files                         inherited
 *   2 host    the daemon's passthrough                beats image
 *   3 cli     --env                                   beats host
 *   4 runner  base.yaml, file order, as bash runs it  ${X:-d}: unset or empty;
 *             (then host and cli again: the launcher  mode: set replaces
 *              re-applies --env after the runner)
 *   5 config  env:, dict order, os.environ[k] = v     always; a refused key
 *                                                     stops the block
 *   6 backend <backend>.yaml as env_spec.py builds    setdefault: unset only
 *             and applies it (XLA_FLAGS merged)
 *   7 override a write through the mount              final
 *
 * Each entry reads the environment as it is at its step (a runner entry
 * never sees the config; a backend entry sees everything), so there are
 * no cycles to chase: a value is computed once, in order. Then the launch
 * fixed point (SPEC 3.0): the same launch again with the exported
 * environment as the only image; whatever it changes is a warning. */
#include "resolve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "resolve_internal.h"
#include "rule.h"
#include "spec_share.h"
#include "template.h"
#include "text.h"
#include "view.h"

#define NONE UINT32_MAX
/* One NAME=value may not pass this: execve refuses it (MAX_ARG_STRLEN). */
#define RESOLVE_MAX_VALUE CONFIG_MAX_VALUE
/* What the expansions of one directory may produce in all, so doubling
 * templates or config values stay linear in their input. */
#define RESOLVE_MAX_TOTAL (16u << 20)
/* Names listed in one message. */
#define MSG_NAMES_MAX 6

enum rule {
	RULE_ALWAYS,          /* export NAME=... ; os.environ[k] = v */
	RULE_UNSET_OR_EMPTY,  /* export NAME=${NAME:-v} */
	RULE_UNSET,           /* os.environ.setdefault(NAME, v) */
};

enum step { STEP_INPUTS, STEP_RUNNER, STEP_CONFIG, STEP_BACKEND };

/* One value a layer offered a variable, in launch order. */
struct rec {
	const char *val;              /* NULL: unset (an override's rm) */
	size_t len;
	const char *source;           /* outlives the simulation; NULL for a
	                                 spec entry (rec_source() names it) */
	const struct spec_var *sv;    /* the spec entry, if any */
	uint32_t next;                /* the variable's next record */
	unsigned char layer;
	bool applied;                 /* it became the value */
};

/* An export: false entry that applies: [0] the runner's, [1] the backend's. */
struct evar_param {
	const struct spec_var *sv;
	const char *val;
	uint32_t len;
};

/* One per name the launch knows: 10,000 of them twice over during the
 * fixed point (two simulations), so the layout is kept tight (the peak
 * RSS target of docs/PERFORMANCE.md): lengths in 32 bits (no value
 * exceeds the value limit, no input file 1 MiB), flags as bits, and the
 * rare export: false parameters behind one pointer. */
struct evar {
	const char *name;
	const char *val;              /* the environment */
	uint32_t name_len;
	uint32_t len;
	uint32_t win;                 /* the record of the value, or NONE */
	uint32_t head, tail;          /* records */
	uint32_t last_entry[2];       /* 1 + the index of the last entry of the
	                                 runner [0] / the backend [1] that sets
	                                 it, 0 when none does */
	uint32_t nflags;
	uint32_t runner_seen_len;
	unsigned char layer;
	bool set : 1;
	bool flags_runner : 1;
	bool have_def : 1;
	bool pinned : 1;              /* an override: nothing else changes it */
	bool secret : 1;
	bool consumed : 1;            /* an append_from: never exported */
	bool config_set : 1;          /* the config's env: set it */
	bool runner_seen_set : 1;
	/* what the specs say */
	const struct spec_var *flags_decl;
	struct evar_param *param;     /* [2] in the arena; NULL: neither */
	const char *note;
	const char *def;
	const char *runner_seen;      /* its value when the runner ran */
	/* flag lists */
	struct snap_flag *flags;
	const char *effective;
	const char *explain;          /* arena, lines */
};

struct sim {
	const struct world *w;
	const struct spec *backend, *runner;
	const char *arch;
	struct arena *arena;          /* texts that outlive the simulation */
	struct evar *v;
	size_t nv, capv;
	uint32_t *table;              /* name hash -> index + 1 */
	size_t mask;
	struct rec *recs;
	size_t nrecs, caprecs;
	struct diag_list diags;
	size_t total;
	bool total_reported;
	/* what the current step reads */
	enum step step;
	bool taint;                   /* the current computation read a secret */
	/* inputs */
	const struct env_list *image;
	bool full;                    /* host, cli and overrides (the first pass) */
	const struct override_set *ov;
	/* per runner entry, for the config diagnostics */
	struct reader { const char *name; size_t len; const struct spec_var *by; } *readers;
	size_t nreaders, capreaders;
	size_t nforward;              /* forward references found */
	uint32_t *entry_var[2];       /* the variable of each entry of the
	                                 runner [0] and the backend [1] (NONE
	                                 for another arch) */
	struct strbuf scratch;        /* one template's expansion at a time */
};

/* Forward references reported one by one before a summary. */
#define FORWARD_SHOWN 10

/* ---- the table ----------------------------------------------------------- */

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static uint32_t find(const struct sim *s, const char *name, size_t len)
{
	size_t h;

	if (!s->table)
		return NONE;
	for (h = hash(name, len) & s->mask; s->table[h]; h = (h + 1) & s->mask) {
		const struct evar *e = &s->v[s->table[h] - 1];

		if (e->name_len == len && !memcmp(e->name, name, len))
			return s->table[h] - 1;
	}
	return NONE;
}

static int grow_table(struct sim *s)
{
	size_t cap = s->table ? (s->mask + 1) * 2 : 1024, k, h;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (k = 0; k < s->nv; k++) {
		for (h = hash(s->v[k].name, s->v[k].name_len) & (cap - 1); t[h]; h = (h + 1) & (cap - 1))
			;
		t[h] = (uint32_t)k + 1;
	}
	free(s->table);
	s->table = t;
	s->mask = cap - 1;
	return 0;
}

/* The variable name (borrowed: it must outlive the simulation), added
 * when new. */
static int var_of(struct sim *s, const char *name, size_t len, uint32_t *out)
{
	uint32_t i = find(s, name, len);
	size_t h;
	int err;

	if (i != NONE) {
		*out = i;
		return 0;
	}
	if (s->nv >= UINT32_MAX - 1)
		return -EFBIG;
	if ((s->nv + 1) * 2 > (s->table ? s->mask + 1 : 0) && (err = grow_table(s)) < 0)
		return err;
	if (s->nv == s->capv) {
		size_t cap = s->capv ? s->capv * 2 : 256;
		struct evar *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->capv = cap;
	}
	s->v[s->nv] = (struct evar){ .name = name, .name_len = len, .win = NONE,
				     .head = NONE, .tail = NONE };
	for (h = hash(name, len) & s->mask; s->table[h]; h = (h + 1) & s->mask)
		;
	s->table[h] = (uint32_t)s->nv + 1;
	*out = (uint32_t)s->nv++;
	return 0;
}

static int rec_add(struct sim *s, uint32_t vi, struct rec r, uint32_t *out)
{
	struct evar *e = &s->v[vi];

	if (s->nrecs == s->caprecs) {
		size_t cap = s->caprecs ? s->caprecs * 2 : 512;
		struct rec *p = realloc(s->recs, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->recs = p;
		s->caprecs = cap;
	}
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
static int offer(struct sim *s, uint32_t vi, enum layer layer, const char *val, size_t len,
		 const char *source, const struct spec_var *sv, enum rule rule, bool secret)
{
	struct evar *e = &s->v[vi];
	struct rec r = { .val = val, .len = len, .source = source, .sv = sv,
			 .layer = (unsigned char)layer };
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
	if ((err = rec_add(s, vi, r, &ri)) < 0)
		return err;
	e = &s->v[vi];
	if (sv && !e->have_def && val) {
		e->def = val;
		e->have_def = true;
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
static const struct evar_param *param_of(const struct evar *e, int k)
{
	return e->param && e->param[k].sv ? &e->param[k] : NULL;
}

/* Records that sv, an export: false entry of side k, applies with val;
 * the first such entry also gives the variable its default. */
static int param_set(struct sim *s, struct evar *e, int k, const struct spec_var *sv,
		     const char *val, size_t len)
{
	if (!e->param && !(e->param = arena_alloc(s->arena, 2 * sizeof(*e->param))))
		return -ENOMEM;
	e->param[k] = (struct evar_param){ .sv = sv, .val = val, .len = (uint32_t)len };
	if (!e->have_def) {
		e->def = val;
		e->have_def = true;
	}
	return 0;
}

/* ---- reading the environment --------------------------------------------- */

/* What a template or condition at the current step reads: the
 * environment, and a parameter's default where the file that owns the
 * parameter reads it. */
static int sim_lookup(void *ctx, const char *name, size_t len, const char **val, size_t *vlen)
{
	struct sim *s = ctx;
	uint32_t i = find(s, name, len);
	const struct evar *e;
	int k;

	if (i == NONE)
		return 0;
	e = &s->v[i];
	if (e->set) {
		s->taint |= e->secret;
		*val = e->val;
		*vlen = e->len;
		return 1;
	}
	k = s->step == STEP_RUNNER ? 0 : s->step == STEP_BACKEND ? 1 : -1;
	if (k >= 0 && param_of(e, k)) {
		s->taint |= e->secret;
		*val = e->param[k].val;
		*vlen = e->param[k].len;
		return 1;
	}
	return 0;
}

/* ---- diagnostics ------------------------------------------------------- */

static const struct spec *spec_of(const struct sim *s, bool runner)
{
	return runner ? s->runner : s->backend;
}

static int warn_at(struct sim *s, enum diag_sev sev, const struct spec *sp,
		   const struct spec_var *sv, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int warn_at(struct sim *s, enum diag_sev sev, const struct spec *sp,
		   const struct spec_var *sv, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = diag_vadd(&s->diags, sev, sp ? sp->display : NULL, sv ? sv->line : 0,
			sv ? sv->col : 0, fmt, ap);
	va_end(ap);
	return err;
}

/* Appends a line to v's explain text (arena). */
static int explain_add(struct sim *s, struct evar *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int explain_add(struct sim *s, struct evar *e, const char *fmt, ...)
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
static const char *entry_source(struct sim *s, const struct spec *sp, const struct spec_var *sv)
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
static const char *rec_source(struct sim *s, const struct rec *r)
{
	const struct spec *rn = s->runner;

	if (r->source || !r->sv)
		return r->source;
	return entry_source(s, rn && r->sv >= rn->vars && r->sv < rn->vars + rn->nvars ? rn :
			    s->backend, r->sv);
}

/* ---- evaluating one spec entry ----------------------------------------- */

struct eval {
	const char *val;              /* arena or the spec's own bytes */
	size_t len;
	bool applies, secret, ok;
};

static int count_total(struct sim *s, size_t n)
{
	if (s->total + n <= RESOLVE_MAX_TOTAL) {
		s->total += n;
		return 0;
	}
	if (!s->total_reported) {
		s->total_reported = true;
		return diag_add(&s->diags, DIAG_ERROR, NULL, 0, 0,
				"%s/%s: the values of this directory pass %u MiB in all; the "
				"rest are not computed", s->backend->backend, s->arch,
				RESOLVE_MAX_TOTAL >> 20);
	}
	return 0;
}

/* Whether the when: of sv holds: cond is its source (for the message),
 * ex the tree the spec parsed at load (NULL when it did not parse, an
 * error of the spec already: the entry never applies). */
static int entry_when(struct sim *s, const struct spec *sp, const struct spec_var *sv,
		      const char *cond, const struct expr *ex, bool *ok)
{
	struct expr_env env = { sv->dialect, sim_lookup, s, false, "" };
	bool taint = s->taint;
	int err;

	*ok = true;
	if (!cond)
		return 0;
	if (!ex) {
		*ok = false;
		return 0;
	}
	s->taint = false;
	err = expr_eval(ex, &env, ok);
	if (!err && env.problem[0])
		err = warn_at(s, DIAG_WARNING, sp, sv, "%s: when: %s: %s", sv->name, cond,
			      s->taint ? "a variable it compares holds a value built from a "
			      "secret, which is not an integer" : env.problem);
	s->taint |= taint;
	return err;
}

/* The value of template src for entry sv of sp, into *out (arena). */
static int entry_template(struct sim *s, const struct spec *sp, const struct spec_var *sv,
			  const char *src, struct eval *out)
{
	struct strbuf *sb = &s->scratch;
	struct tmpl_result res = { 0 };
	int err;

	out->ok = true;
	if (!strchr(src, '$')) {
		/* Its own value: point at the specs' bytes (the snapshot holds
		 * the specs) instead of copying them. */
		out->val = src;
		out->len = strlen(src);
		return 0;
	}
	if (s->total_reported) {
		out->ok = false;
		return 0;
	}
	s->taint = false;
	sb_reset(sb);
	if ((err = tmpl_expand(src, sv->dialect, RESOLVE_MAX_VALUE, sim_lookup, s, sb, &res)) < 0)
		goto out;
	out->secret = s->taint;
	if (res.too_long) {
		out->ok = false;
		err = warn_at(s, DIAG_ERROR, sp, sv, "%s expands to more than %u bytes, the limit of "
			      "one environment string (execve fails with E2BIG); not set", sv->name,
			      (unsigned)RESOLVE_MAX_VALUE);
		goto out;
	}
	if (res.problem[0] &&
	    (err = warn_at(s, DIAG_WARNING, sp, sv, "%s: %s", sv->name,
			   out->secret ? "a value built from a secret cannot be used here" :
			   res.problem)) < 0)
		goto out;
	if ((err = count_total(s, sb->len)) < 0)
		goto out;
	err = -ENOMEM;
	if (!(out->val = arena_strndup(s->arena, sb->buf ? sb->buf : "", sb->len)))
		goto out;
	out->len = sb->len;
	err = 0;
out:
	return err;
}

static int entry_detect(struct sim *s, const struct spec_var *sv, struct eval *out)
{
	const struct hostprobe *p = s->w->probe;

	out->ok = p != NULL;
	if (!p)
		return 0;
	out->val = !strcmp(sv->detect, "ib_hca") ? p->ib_hca : p->ip_interface;
	out->len = strlen(out->val);
	return 0;
}

/* Whether sv applies (arch and when:) and, when it does, its value. */
static int entry_eval(struct sim *s, const struct spec *sp, const struct spec_var *sv,
		      struct eval *out)
{
	int err;

	*out = (struct eval){ 0 };
	if (!spec_var_applies_to_arch(sv, s->arch))
		return 0;
	if ((err = entry_when(s, sp, sv, sv->when, sv->when_expr, &out->applies)) < 0 ||
	    !out->applies)
		return err;
	if (sv->detect)
		return entry_detect(s, sv, out);
	if (sv->value)
		return entry_template(s, sp, sv, sv->value, out);
	out->ok = false;              /* a declaration */
	return 0;
}

static enum rule rule_of(const struct spec_var *sv)
{
	if (sv->mode == SPEC_MODE_SET)
		return RULE_ALWAYS;
	return sv->dialect == DIALECT_SHELL ? RULE_UNSET_OR_EMPTY : RULE_UNSET;
}

static enum layer layer_of(const struct spec *sp, const struct spec_var *sv)
{
	if (sv->detected)
		return LAYER_DETECTED;
	return sp->is_runner ? LAYER_RUNNER : LAYER_BACKEND;
}

/* ---- flag lists (SPEC 3.1) --------------------------------------------- */

struct part {
	const char *text;
	size_t len;
	enum layer layer;
};

static bool flag_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
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
		const char *t = parts[p].text, *end = t + parts[p].len;

		while (t < end) {
			const char *q, *eq;
			char *key, *tok;

			while (t < end && flag_space(*t))
				t++;
			if (t == end)
				break;
			for (q = t; q < end && !flag_space(*q); q++)
				;
			eq = memchr(t, '=', (size_t)(q - t));
			if (!(tok = arena_strndup(s->arena, t, (size_t)(q - t))) ||
			    !(key = arena_strndup(s->arena, t, (size_t)((eq ? eq : q) - t))))
				goto out;
			for (k = 0; k < n && strcmp(f[k].key, key); k++)
				;
			if (k < n) {
				if (report && !e->secret &&
				    diag_add(&s->diags, DIAG_INFO, NULL, 0, 0,
					     "%s: %s is given more than once; the last (%s) wins",
					     e->name, key, tok) < 0)
					goto out;
			} else {
				if (n == cap) {
					struct snap_flag *nf = realloc(f, (cap = cap ? 2 * cap : 16) *
								       sizeof(*nf));
					if (!nf)
						goto out;
					f = nf;
				}
				f[n++].key = key;
			}
			f[k].token = tok;
			f[k].layer = parts[p].layer;
			t = q;
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
static int managed_flags(struct sim *s, const struct spec *sp, const struct spec_var *decl,
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
		if ((err = entry_when(s, sp, &as, fl->when, fl->when_expr, &ok)) < 0 || !ok)
			continue;
		one = (struct eval){ 0 };
		if ((err = entry_template(s, sp, &as, fl->text, &one)) < 0 || !one.ok || !one.len)
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

/* Merges a flag list into its variable at the step of its spec. */
static int flags_apply(struct sim *s, uint32_t vi, const struct spec *sp,
		       const struct spec_var *decl, const struct eval *managed)
{
	struct evar *e = &s->v[vi];
	enum layer ml = layer_of(sp, decl);
	struct strbuf val = STRBUF_INIT;
	struct part parts[3];
	uint32_t ai = NONE;
	size_t np = 0, k;
	bool owned = e->config_set, was_set = e->set;
	enum layer base_layer = (enum layer)e->layer;
	int err = 0;

	if (decl->append_from)
		ai = find(s, decl->append_from, strlen(decl->append_from));
	if (ai != NONE)
		s->v[ai].consumed = true;
	e = &s->v[vi];
	if (e->pinned) {
		/* The override is the whole value, verbatim. */
		err = offer(s, vi, ml, managed->val, managed->len, NULL, decl,
			    RULE_ALWAYS, managed->secret);
		goto flags;
	}
	if (owned) {
		parts[np++] = (struct part){ e->val, e->len, LAYER_CONFIG };
		if ((err = explain_add(s, e, "%s comes from the config env: block; managed "
				       "defaults skipped", e->name)) < 0)
			goto out;
		if (managed->len && s->full) {
			const char *at = e->secret ? NULL :
					 strstr(managed->val, "--xla_gpu_autotune_level=");
			const struct config_entry *ce = NULL;

			for (k = 0; s->w->config && k < s->w->config->nenv; k++)
				if (!strcmp(s->w->config->env[k].name, e->name))
					ce = &s->w->config->env[k];
			err = diag_add(&s->diags, DIAG_WARNING, s->w->config->file, ce ? ce->line : 0,
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
			parts[np++] = (struct part){ e->val, e->len, base_layer };
		if (managed->len) {
			parts[np++] = (struct part){ managed->val, managed->len, ml };
			if (e->set && e->len &&
			    (err = explain_add(s, e, "%s appended (managed defaults override "
					       "inherited)", e->name)) < 0)
				goto out;
		}
	}
	if (ai != NONE && s->v[ai].set && s->v[ai].len) {
		struct evar *a = &s->v[ai];

		parts[np++] = (struct part){ a->val, a->len, (enum layer)a->layer };
		if (a->secret || e->secret)
			err = explain_add(s, e, "%s appended (wins): <redacted>", a->name);
		else
			err = explain_add(s, e, "%s appended (wins): %.*s", a->name, (int)a->len,
					  a->val);
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
		err = rec_add(s, vi, (struct rec){ .val = managed->val, .len = managed->len,
			      .source = NULL, .sv = decl,
			      .layer = (unsigned char)ml }, NULL);
		e = &s->v[vi];
		if (!e->have_def && managed->len) {
			e->def = managed->val;
			e->have_def = true;
		}
		goto out;
	}
	if ((err = count_total(s, val.len)) < 0)
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
		if ((err = rec_add(s, vi, r, NULL)) < 0)
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
			parts[0] = (struct part){ e->val, e->len, LAYER_OVERRIDE };
			np = 1;
		}
		err = effective_flags(s, e, parts, np, s->full);
	}
out:
	sb_release(&val);
	return err;
}

/* ---- the steps ----------------------------------------------------------- */

/* Every name a spec entry of this directory declares, with what the
 * specs say of it (secret, note, flag list, parameter). */
static int declare_specs(struct sim *s)
{
	const struct spec *both[2] = { s->runner, s->backend };
	size_t k, j;
	uint32_t vi;
	int err;

	for (j = 0; j < 2; j++) {
		const struct spec *sp = both[j];

		if (sp && !(s->entry_var[sp->is_runner ? 0 : 1] =
			    malloc((sp->nvars ? sp->nvars : 1) * sizeof(uint32_t))))
			return -ENOMEM;
		for (k = 0; sp && k < sp->nvars; k++) {
			const struct spec_var *sv = &sp->vars[k];
			struct evar *e;

			s->entry_var[sp->is_runner ? 0 : 1][k] = NONE;
			if (!spec_var_applies_to_arch(sv, s->arch))
				continue;
			if ((err = var_of(s, sv->name, strlen(sv->name), &vi)) < 0)
				return err;
			s->entry_var[sp->is_runner ? 0 : 1][k] = vi;
			e = &s->v[vi];
			/* The specs' copy of the name outlives the simulation. */
			e->name = sv->name;
			e->secret |= sv->secret;
			if (sv->note && !e->note)
				e->note = sv->note;
			if (sv->kind == SPEC_KIND_FLAGS && (!e->flags_decl || !sp->is_runner)) {
				e->flags_decl = sv;
				e->flags_runner = sp->is_runner;
			}
			if (sv->export && (sv->value || sv->detect || sv->kind == SPEC_KIND_FLAGS))
				e->last_entry[sp->is_runner ? 0 : 1] = (uint32_t)k + 1;
		}
	}
	/* A secret is secret in every directory: a backend without the
	 * runner base (torch_fl) must still not show the base's secrets
	 * world-readable when an input sets them. */
	for (k = 0; !s->runner && s->w->specs->runner && k < s->w->specs->runner->nvars; k++) {
		const struct spec_var *sv = &s->w->specs->runner->vars[k];

		if (!sv->secret)
			continue;
		if ((err = var_of(s, sv->name, strlen(sv->name), &vi)) < 0)
			return err;
		s->v[vi].secret = true;
	}
	return 0;
}

static int apply_list(struct sim *s, const struct env_list *l, enum layer layer, bool host)
{
	size_t k;
	uint32_t vi;
	int err;

	for (k = 0; l && k < l->n; k++) {
		const struct env_pair *p = &l->v[k];

		if (host && !world_host_allowed(s->w, s->backend, p))
			continue;
		if ((err = var_of(s, p->name, strlen(p->name), &vi)) < 0 ||
		    (err = offer(s, vi, layer, p->value, p->value_len, p->source, NULL,
				 RULE_ALWAYS, false)) < 0)
			return err;
	}
	return 0;
}

/* Whether s takes override o: o is of the directory s simulates, and s is
 * the full pass (the only one that takes overrides). */
static bool override_here(const struct sim *s, const struct override *o)
{
	return s->full && !strcmp(o->backend, s->backend->backend) && !strcmp(o->arch, s->arch);
}

static int pin_overrides(struct sim *s)
{
	const struct override_set *ov = s->ov;
	size_t k;
	uint32_t vi;
	int err;

	for (k = 0; ov && k < ov->n; k++) {
		const struct override *o = &ov->v[k];
		struct evar *e;

		if (!override_here(s, o))
			continue;
		if ((err = var_of(s, o->name, strlen(o->name), &vi)) < 0)
			return err;
		e = &s->v[vi];
		e->pinned = true;
		e->set = o->value != NULL;
		e->val = o->value;
		e->len = o->value ? o->value_len : 0;
		e->layer = LAYER_OVERRIDE;
		/* A file made private through the mount (0600) is a secret. */
		e->secret |= o->private;
	}
	return 0;
}

/* The override's own record, last: the top of `layers`. */
static int finish_overrides(struct sim *s)
{
	const struct override_set *ov = s->ov;
	size_t k;
	uint32_t vi;
	int err;

	for (k = 0; ov && k < ov->n; k++) {
		const struct override *o = &ov->v[k];
		struct evar *e;

		if (!override_here(s, o))
			continue;
		if ((vi = find(s, o->name, strlen(o->name))) == NONE)
			continue;
		if ((err = rec_add(s, vi, (struct rec){ .val = o->value, .len = o->value_len,
			      .source = "override", .layer = LAYER_OVERRIDE, .applied = true },
			      NULL)) < 0)
			return err;
		e = &s->v[vi];
		e->win = e->tail;
	}
	return 0;
}

static int note_reader(void *ctx, const char *name, size_t len)
{
	struct sim *s = ctx;
	struct reader *r;

	if (s->nreaders == s->capreaders) {
		size_t cap = s->capreaders ? s->capreaders * 2 : 64;

		if (!(r = realloc(s->readers, cap * sizeof(*r))))
			return -ENOMEM;
		s->readers = r;
		s->capreaders = cap;
	}
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

struct fwd {
	struct sim *s;
	const struct spec *sp;
	size_t at;                    /* the reading entry's index */
	bool whole;                   /* python: every other entry of the file */
};

static bool entry_reads(const struct spec_var *sv, const char *name);

/* One name an entry reads: set by another entry of the same step that the
 * launch applies only later (bash reads top to bottom; env_spec.py builds
 * its list before applying any of it), it reads as unset. */
static int forward_ref(void *ctx, const char *name, size_t len)
{
	struct fwd *f = ctx;
	const struct spec_var *me = &f->sp->vars[f->at], *o;
	uint32_t vi = find(f->s, name, len), last;
	int side = f->sp->is_runner ? 0 : 1;

	if ((strlen(me->name) == len && !memcmp(me->name, name, len)) || vi == NONE)
		return 0;
	last = f->s->v[vi].last_entry[side];
	if (f->s->v[vi].set || param_of(&f->s->v[vi], side) || !last ||
	    (!f->whole && last - 1 <= f->at))
		return 0;
	o = &f->sp->vars[last - 1];
	if (entry_reads(o, me->name))
		return warn_at(f->s, DIAG_ERROR, f->sp, me, "%s: reference cycle with %s (line %u): "
			       "%s reads %.*s before it is set, so it reads it as unset", me->name,
			       o->name, o->line, me->name, (int)len, name);
	if (++f->s->nforward > FORWARD_SHOWN)
		return 0;
	return warn_at(f->s, DIAG_WARNING, f->sp, me, "%s reads %.*s, which %s sets only %s "
		       "(line %u): it reads it as unset", me->name, (int)len, name, f->sp->display,
		       f->whole ? "after building its list" : "later", o->line);
}

struct reads_one {
	const char *name;
	bool hit;
};

static int reads_one(void *ctx, const char *name, size_t len)
{
	struct reads_one *r = ctx;

	r->hit |= strlen(r->name) == len && !memcmp(r->name, name, len);
	return 0;
}

static bool entry_reads(const struct spec_var *sv, const char *name)
{
	struct reads_one r = { name, false };
	size_t k;

	if (sv->value)
		tmpl_names(sv->value, reads_one, &r);
	for (k = 0; k < sv->nflags; k++)
		tmpl_names(sv->flags[k].text, reads_one, &r);
	expr_names(sv->when_expr, reads_one, &r);
	return r.hit;
}

static int check_forward(struct sim *s, const struct spec *sp, size_t k)
{
	struct fwd f = { s, sp, k, !sp->is_runner && sp->vars[k].dialect == DIALECT_PYTHON };
	const struct spec_var *sv = &sp->vars[k];
	size_t j;
	int err = 0;

	if (!s->full)
		return 0;
	if (sv->value)
		err = tmpl_names(sv->value, forward_ref, &f);
	for (j = 0; j < sv->nflags && !err; j++)
		err = tmpl_names(sv->flags[j].text, forward_ref, &f);
	if (!err)
		err = expr_names(sv->when_expr, forward_ref, &f);
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
static int reexport(struct sim *s, const struct env_list *l, enum layer layer)
{
	size_t k;
	uint32_t vi;
	int err;

	for (k = 0; k < l->n; k++) {
		const struct env_pair *p = &l->v[k];
		size_t nl = strlen(p->name), pos = 0;
		bool first = true;

		if (layer == LAYER_HOST && !world_host_allowed(s->w, s->backend, p))
			continue;
		/* The user's --env of the same name comes after: it wins. */
		if (layer == LAYER_HOST && !memchr(p->value, '\n', p->value_len) &&
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
					return diag_add(&s->diags, DIAG_ERROR, NULL, 0, 0,
							"%s: a line of its value holds no '=': "
							"primus-cli exits (Invalid env format) when it "
							"exports --env again after the runner", p->name);
				name_len = (size_t)(eq - line);
				val = eq + 1;
				val_len = end - pos - name_len - 1;
				if (!env_name_valid(name, name_len))
					return diag_add(&s->diags, DIAG_ERROR, NULL, 0, 0,
							"%s: a line of its value names no variable: "
							"primus-cli exits (export: not a valid "
							"identifier) when it exports --env again after "
							"the runner", p->name);
				if (!(name = arena_strndup(s->arena, name, name_len)))
					return -ENOMEM;
			}
			first = false;
			pos = end + 1;
			if ((err = var_of(s, name, name_len, &vi)) < 0)
				return err;
			/* Unchanged since the first export, or held by an override:
			 * nothing to record. */
			if (s->v[vi].pinned ||
			    (s->v[vi].layer == layer && s->v[vi].set && s->v[vi].len == val_len &&
			     !memcmp(s->v[vi].val, val, val_len)))
				continue;
			if ((err = offer(s, vi, layer, val, val_len, p->source, NULL, RULE_ALWAYS,
					 false)) < 0)
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
	uint32_t i = find(s, name, len);

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

	if (r > 0 && s->v[find(s, name, len)].secret) {
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

static int step_runner(struct sim *s)
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
		if (s->full && ((err = note_reads(s, sv)) < 0 || (err = check_forward(s, sp, k)) < 0))
			return err;
		vi = s->entry_var[0][k];
		if (sv->kind == SPEC_KIND_FLAGS) {
			if (s->v[vi].flags_decl != sv)
				continue;   /* the backend's declaration replaces it */
			if ((err = managed_flags(s, sp, sv, &ev)) < 0 ||
			    (err = flags_apply(s, vi, sp, sv, &ev)) < 0)
				return err;
			continue;
		}
		if ((err = entry_eval(s, sp, sv, &ev)) < 0)
			return err;
		if (!ev.applies || !ev.ok)
			continue;
		e = &s->v[vi];
		if (!sv->export) {
			if ((err = param_set(s, e, 0, sv, ev.val, ev.len)) < 0)
				return err;
			continue;
		}
		if ((err = offer(s, vi, layer_of(sp, sv), ev.val, ev.len, NULL,
				 sv, rule_of(sv), ev.secret)) < 0)
			return err;
	}
	if (s->full && (err = runner_rules(s)) < 0)
		return err;
	/* Only a Primus launch (one with the runner) has this launcher. */
	if (!s->full || !s->runner)
		return 0;
	if ((err = reexport(s, &s->w->host, LAYER_HOST)) < 0)
		return err;
	return reexport(s, &s->w->cli, LAYER_CLI);
}

/* What the config's env: block finds already set: the environment. */
static int config_lookup(void *ctx, const char *name, size_t len, const char **val,
			 size_t *vlen)
{
	struct sim *s = ctx;
	uint32_t i = find(s, name, len);

	if (i == NONE || !s->v[i].set)
		return 0;
	s->taint |= s->v[i].secret;
	*val = s->v[i].val;
	*vlen = s->v[i].len;
	return 1;
}

/* A runner entry read name before the config set it (SPEC 9). */
static int config_read_by_runner(struct sim *s, const struct config_entry *ce,
				 const struct evar *e)
{
	struct strbuf who = STRBUF_INIT;
	size_t k, shown = 0, more = 0;
	const struct spec_var *first = NULL;
	int err = 0;

	for (k = 0; k < s->nreaders && !err; k++) {
		const struct reader *r = &s->readers[k];
		size_t j;
		bool dup = false;

		if (r->len != e->name_len || memcmp(r->name, e->name, r->len) || !r->by ||
		    !strcmp(r->by->name, e->name))
			continue;
		for (j = 0; j < k && !dup; j++)
			dup = s->readers[j].by == r->by && s->readers[j].len == r->len &&
			      !memcmp(s->readers[j].name, r->name, r->len);
		if (dup)
			continue;
		if (!first)
			first = r->by;
		if (shown == MSG_NAMES_MAX) {
			more++;
			continue;
		}
		err = sb_addf(&who, "%s%s", shown ? ", " : "", r->by->name);
		shown++;
	}
	if (!err && shown)
		err = diag_add(&s->diags, DIAG_WARNING, s->w->config->file, ce->line, ce->col,
			       "%s is set in the config's env: block, which Primus applies only "
			       "after the runner has run: the runner's %s%s (%s:%u) %s without it; "
			       "set %s with --env or in the image instead", e->name, sb_str(&who),
			       more ? " and more" : "", s->runner->display, first->line,
			       shown + more > 1 ? "are decided" : "is decided", e->name);
	sb_release(&who);
	return err;
}

/* Step 5: os.environ[k] = os.path.expandvars(v), in dict order. */
static int step_config(struct sim *s)
{
	const struct config *cfg = s->w->config;
	struct strbuf sb = STRBUF_INIT;
	struct diag_list scratch = DIAG_LIST_INIT;
	size_t k;
	uint32_t vi;
	int err = 0;

	s->step = STEP_CONFIG;
	for (k = 0; cfg && k < cfg->nenv && !err; k++) {
		const struct config_entry *ce = &cfg->env[k];
		struct evar *e;
		const char *val, *src;
		bool secret;

		if ((err = var_of(s, ce->name, strlen(ce->name), &vi)) < 0)
			break;
		e = &s->v[vi];
		secret = e->secret;
		e->runner_seen = e->val;
		e->runner_seen_len = e->len;
		e->runner_seen_set = e->set;
		sb_reset(&sb);
		s->taint = false;
		if (s->total_reported)
			break;
		err = config_expand(cfg, ce, secret, RESOLVE_MAX_VALUE, config_lookup, s, &sb,
				    s->full ? &s->diags : &scratch);
		if (err == -E2BIG) {
			err = diag_add(&s->diags, DIAG_ERROR, cfg->file, ce->line, ce->col,
				       "%s expands to more than %u bytes, the limit of one environment "
				       "string (execve fails with E2BIG); not applied", ce->name,
				       (unsigned)RESOLVE_MAX_VALUE);
			continue;
		}
		if (err < 0 || (err = count_total(s, sb.len)) < 0)
			break;
		secret |= s->taint;
		err = -ENOMEM;
		if (!(val = arena_strndup(s->arena, sb.buf ? sb.buf : "", sb.len)))
			break;
		{
			struct strbuf p = STRBUF_INIT;

			src = sb_addf(&p, "%s:%u", cfg->file, ce->line) == 0 ?
			      arena_strndup(s->arena, p.buf, p.len) : NULL;
			sb_release(&p);
		}
		if (!src)
			break;
		if ((err = offer(s, vi, LAYER_CONFIG, val, sb.len, src, NULL, RULE_ALWAYS,
				 secret)) < 0)
			break;
		e = &s->v[vi];
		e->config_set = true;
		if (s->full && s->runner &&
		    (!e->runner_seen_set || e->runner_seen_len != sb.len ||
		     memcmp(e->runner_seen, val, sb.len)))
			err = config_read_by_runner(s, ce, e);
	}
	sb_release(&sb);
	diag_list_release(&scratch);
	return err;
}

/* Step 6: env_spec.py builds its list from the environment as it is,
 * then applies it in order; nothing it applies is read by another of its
 * entries. Parameters first: the code reads them while building. */
static int step_backend(struct sim *s)
{
	const struct spec *sp = s->backend;
	struct eval *evs = NULL;
	size_t k, pass;
	uint32_t vi;
	int err = 0;

	s->step = STEP_BACKEND;
	if (!sp->nvars)
		return 0;
	if (!(evs = calloc(sp->nvars, sizeof(*evs))))
		return -ENOMEM;
	for (pass = 0; pass < 2 && !err; pass++) {
		for (k = 0; k < sp->nvars && !err; k++) {
			const struct spec_var *sv = &sp->vars[k];
			struct evar *e;

			if ((sv->export || sv->kind == SPEC_KIND_FLAGS) == !pass)
				continue;
			if ((vi = s->entry_var[1][k]) == NONE)
				continue;
			if (spec_var_applies_to_arch(sv, s->arch) && (err = check_forward(s, sp, k)) < 0)
				break;
			if (sv->kind == SPEC_KIND_FLAGS) {
				if (spec_var_applies_to_arch(sv, s->arch) && s->v[vi].flags_decl == sv)
					err = managed_flags(s, sp, sv, &evs[k]);
				continue;
			}
			if ((err = entry_eval(s, sp, sv, &evs[k])) < 0)
				break;
			e = &s->v[vi];
			if (!sv->export && evs[k].applies && evs[k].ok)
				err = param_set(s, e, 1, sv, evs[k].val, evs[k].len);
		}
	}
	for (k = 0; k < sp->nvars && !err; k++) {
		const struct spec_var *sv = &sp->vars[k];

		if (!sv->export || !evs[k].applies || !evs[k].ok ||
		    (vi = s->entry_var[1][k]) == NONE)
			continue;
		if (sv->kind == SPEC_KIND_FLAGS)
			err = s->v[vi].flags_decl == sv ? flags_apply(s, vi, sp, sv, &evs[k]) : 0;
		else
			err = offer(s, vi, layer_of(sp, sv), evs[k].val, evs[k].len,
				    NULL, sv, rule_of(sv), evs[k].secret);
	}
	free(evs);
	return err;
}

/* A parameter read with os.getenv(NAME, default) takes a set-but-empty
 * value as its value (SPEC 3). */
static int warn_empty_params(struct sim *s)
{
	size_t k;
	int err = 0;

	for (k = 0; k < s->nv && !err; k++) {
		struct evar *e = &s->v[k];
		const struct evar_param *ep = param_of(e, 1) ? param_of(e, 1) : param_of(e, 0);
		const struct spec_var *p = ep ? ep->sv : NULL;
		const struct spec *sp;

		if (!p || !e->set || e->len || p->dialect != DIALECT_PYTHON)
			continue;
		sp = spec_of(s, ep == param_of(e, 0));
		/* A relaxed reader takes an empty value for unset. */
		if (sp->relaxed_values && sp->owned_prefix &&
		    !strncmp(e->name, sp->owned_prefix, strlen(sp->owned_prefix)))
			continue;
		err = warn_at(s, DIAG_WARNING, sp, p,
			      "%s is set but empty: env_spec.py reads it with os.getenv(), which "
			      "gives the empty value, not the default %.*s", e->name,
			      e->secret ? 10 : (int)ep->len, e->secret ? "<redacted>" : ep->val);
	}
	return err;
}

/* A variable whose value equals a secret's is as secret as it: the
 * value shows nowhere (a `mv` of a secret, a copy of a token). */
static void spread_secrets(struct sim *s)
{
	size_t k, j;

	for (k = 0; k < s->nv; k++) {
		struct evar *a = &s->v[k];

		if (!a->secret || !a->set || !a->len)
			continue;
		for (j = 0; j < s->nv; j++) {
			struct evar *b = &s->v[j];

			if (!b->secret && b->set && b->len == a->len && !memcmp(b->val, a->val, a->len))
				b->secret = true;
		}
	}
}

static int simulate(struct sim *s)
{
	int err;

	if ((err = declare_specs(s)) < 0 || (err = pin_overrides(s)) < 0)
		return err;
	s->step = STEP_INPUTS;
	if ((err = apply_list(s, s->image, LAYER_IMAGE, false)) < 0)
		return err;
	if (s->full && ((err = apply_list(s, &s->w->host, LAYER_HOST, true)) < 0 ||
			(err = apply_list(s, &s->w->cli, LAYER_CLI, false)) < 0))
		return err;
	if ((err = step_runner(s)) < 0 || (err = step_config(s)) < 0 ||
	    (err = step_backend(s)) < 0 || (err = finish_overrides(s)) < 0)
		return err;
	if (s->full && (err = warn_empty_params(s)) < 0)
		return err;
	if (s->full && s->nforward > FORWARD_SHOWN &&
	    (err = diag_add(&s->diags, DIAG_WARNING, NULL, 0, 0,
			    "%zu more entries read a name their file sets only later",
			    s->nforward - FORWARD_SHOWN)) < 0)
		return err;
	spread_secrets(s);
	return 0;
}

static void sim_release(struct sim *s)
{
	free(s->entry_var[0]);
	free(s->entry_var[1]);
	sb_release(&s->scratch);
	free(s->v);
	free(s->table);
	free(s->recs);
	free(s->readers);
	diag_list_release(&s->diags);
	arena_free(s->arena);
}

static bool exported(const struct evar *e)
{
	return e->set && !e->consumed;
}

/* ---- the launch fixed point (SPEC 3.0) ----------------------------------- */

/* The exported environment of a pass, as an image (borrowing its bytes). */
static int environ_of(const struct sim *s, struct env_list *out)
{
	size_t k;
	int err;

	for (k = 0; k < s->nv; k++) {
		const struct evar *e = &s->v[k];

		if (exported(e) &&
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
	bool ea = a && exported(a), eb = b && exported(b);

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

	if (a && exported(a))
		err = sb_addf(&msg, "%s: the value shown (layer %s) does not survive the launch: "
			      "fed back as the image (docker run --env-file with these views), ",
			      a->name, layer_name((enum layer)a->layer));
	else
		err = sb_addf(&msg, "%s is not in this run's environment, but a launch fed these "
			      "views gets it: ", a->name);
	if (err < 0)
		goto out;
	if (!b || !exported(b)) {
		err = sb_adds(&msg, "it is gone at launch");
	} else if (w && (w->layer == LAYER_RUNNER || w->layer == LAYER_DETECTED) && w->sv &&
		   !(a && exported(a))) {
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
		file = spec_of(s1, w->layer == LAYER_RUNNER)->display;
		line = w->sv->line;
		err = sb_addf(&msg, "%s:%u sets it", file, line);
	} else {
		err = sb_adds(&msg, "another step of the launch sets it");
	}
	if (!err && !secret && b && exported(b) && w && w->layer != LAYER_RUNNER &&
	    w->layer != LAYER_DETECTED) {
		err = sb_adds(&msg, " (at launch: ");
		if (!err)
			err = text_quote(&msg, b->val, b->len, 200);
		if (!err)
			err = sb_addc(&msg, ')');
	}
	if (!err)
		err = diag_add(&s1->diags, DIAG_WARNING, file, line, 0, "%s", sb_str(&msg));
	/* explain says it under the variable, without the name it is under. */
	if (!err)
		err = explain_add(s1, a, "launch: %s", sb_str(&msg) + a->name_len +
				  (sb_str(&msg)[a->name_len] == ':' ? 2 : 1));
out:
	sb_release(&msg);
	sb_release(&reads);
	return err;
}

static int fixed_point(struct sim *s1)
{
	struct env_list img = { 0 };
	struct sim s2 = { .w = s1->w, .backend = s1->backend, .runner = s1->runner,
			  .arch = s1->arch, .image = &img, .full = false };
	size_t k;
	uint32_t vi;
	int err;

	if (!(s2.arena = arena_new()))
		return -ENOMEM;
	if ((err = environ_of(s1, &img)) < 0 || (err = simulate(&s2)) < 0)
		goto out;
	for (k = 0; k < s1->nv && !err; k++) {
		struct evar *a = &s1->v[k];
		const struct evar *b = (vi = find(&s2, a->name, a->name_len)) == NONE ? NULL :
				       &s2.v[vi];

		if (!survives(a, b))
			err = fixed_point_warning(s1, a, &s2, b);
	}
	for (k = 0; k < s2.nv && !err; k++) {
		const struct evar *b = &s2.v[k];

		if (exported(b) && find(s1, b->name, b->name_len) == NONE) {
			/* Set at launch but unknown to the first pass: cannot be,
			 * every name of the specs is declared in both. */
			err = diag_add(&s1->diags, DIAG_WARNING, NULL, 0, 0,
				       "%s appears at launch though this run does not set it",
				       b->name);
		}
	}
out:
	env_list_release(&img);
	sim_release(&s2);
	return err;
}

/* ---- the snapshot ------------------------------------------------------- */

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
		    e->secret ? sb_adds(sb, "<redacted>") < 0 : sb_add(sb, rc->val, rc->len) < 0)
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
	vi = find(s, "PRIMUS_PATH", 11);
	if (vi == NONE || !s->v[vi].set)
		*out = "PRIMUS_PATH: unknown here. At launch the runner sets it to where Primus is "
		       "checked out and derives DATA_PATH (${PRIMUS_PATH}/data), HF_HOME "
		       "(${DATA_PATH}/huggingface) and PYTHONPATH from it; set PRIMUS_PATH "
		       "(--env PRIMUS_PATH=/path/to/Primus) to see them\n";
	else
		*out = "PRIMUS_PATH: the runner derives DATA_PATH, HF_HOME and PYTHONPATH from it; "
		       "PYTHONPATH also depends on the container's Python and is not shown\n";
	return 0;
}

/* A diagnostic never carries a secret value, whichever path made it. */
static int scrub_diags(struct sim *s, struct diag_list *l)
{
	size_t k, d;

	for (k = 0; k < s->nv; k++) {
		const struct evar *e = &s->v[k];

		/* Shorter values are no telling secret, and too common. */
		if (!e->secret || !e->set || e->len < 4)
			continue;
		for (d = 0; d < l->n; d++) {
			char *m = l->v[d].msg, *at;

			while ((at = memmem(m, strlen(m), e->val, e->len))) {
				struct strbuf sb = STRBUF_INIT;
				int err;

				if ((err = sb_add(&sb, m, (size_t)(at - m))) < 0 ||
				    (err = sb_adds(&sb, "<redacted>")) < 0 ||
				    (err = sb_adds(&sb, at + e->len)) < 0) {
					sb_release(&sb);
					return err;
				}
				free(l->v[d].msg);
				l->v[d].msg = sb_detach(&sb, NULL);
				m = l->v[d].msg;
			}
		}
	}
	return 0;
}

/* The names the specs mark scope: node, in snap (sorted). A mark holds
 * whatever the entry's arch; the runner's holds in a directory without
 * the runner base too (--env NODE_RANK=i reaches every directory). Only
 * what is exported can differ at launch. Marks are few: this walks the
 * specs once rather than searching them per name. */
static void mark_node_scoped(const struct sim *s, struct snapshot *snap)
{
	const struct spec *both[2] = { s->w->specs->runner, s->backend };
	size_t j, k;

	for (j = 0; j < 2; j++)
		for (k = 0; both[j] && k < both[j]->nvars; k++) {
			const struct spec_var *sv = &both[j]->vars[k];
			/* snap is still ours to change: not published yet. */
			struct snap_var *v = (sv->scope & SCOPE_NODE) ?
				(struct snap_var *)snapshot_find(snap, sv->name, strlen(sv->name)) :
				NULL;

			if (v && v->exported)
				v->node = true;
		}
}

static int build_snapshot(struct sim *s, struct snapshot **out)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	struct strbuf sb = STRBUF_INIT;
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
		bool param = !e->set && (param_of(e, 0) || param_of(e, 1));

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
		sv->exported = exported(e);
		sv->secret = e->secret;
		sv->is_flags = e->flags_decl != NULL;
		sv->layer = e->set ? e->layer : LAYER_NONE;
		sv->source = e->set && e->win != NONE ? rec_source(s, &s->recs[e->win]) :
			     e->set ? "override" : NULL;
		if (sv->source && !(sv->source = arena_strdup(snap->arena, sv->source)))
			goto out;
		sv->def = e->have_def ? e->def : NULL;
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
		    (err = explain_add(s, e, "consumed: appended to a flag list, never exported")) < 0)
			goto out;
		if (param) {
			const struct evar_param *ep = param_of(e, 1) ? param_of(e, 1) : param_of(e, 0);

			if ((err = explain_add(s, e, "parameter: not exported; its default is %.*s",
					       e->secret ? 10 : (int)ep->len,
					       e->secret ? "<redacted>" : ep->val)) < 0)
				goto out;
			sv->def = ep->val;
		}
		sv->explain = e->explain;
		if (sv->def && !(sv->def = arena_strdup(snap->arena, sv->def)))
			goto out;
		if (e->set && view_is_name(sv->name)) {
			sv->view_name = true;
			if ((err = diag_add(&snap->diags, DIAG_WARNING, sv->source, 0, 0,
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
	mark_node_scoped(s, snap);
	if ((err = dir_notes(s, &snap->explain)) < 0)
		goto out;
	if ((err = diag_extend(&snap->diags, &s->w->diags)) < 0 ||
	    (err = diag_extend(&snap->diags, &s->diags)) < 0 ||
	    (err = scrub_diags(s, &snap->diags)) < 0)
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

int resolve_dir(const struct world *w, const struct override_set *ov,
		const char *backend, const char *arch, struct snapshot **out)
{
	struct sim s = { .w = w, .arch = arch, .full = true, .ov = ov };
	struct snapshot *snap = NULL;
	int err;

	if (!w->specs || !(s.backend = spec_set_backend(w->specs, backend)))
		return -EINVAL;
	if (!world_has_dir(w, backend, arch))
		return -ENOENT;
	s.runner = s.backend->uses_runner ? w->specs->runner : NULL;
	s.image = &w->image;
	if (!(s.arena = arena_new()))
		return -ENOMEM;
	if ((err = simulate(&s)) < 0 || (err = fixed_point(&s)) < 0 ||
	    (err = build_snapshot(&s, &snap)) < 0)
		goto out;
	if ((err = validate_snapshot(w->specs, s.backend, s.runner, snap)) < 0 ||
	    (err = scrub_diags(&s, &snap->diags)) < 0)
		goto out;
	*out = snap;
	snap = NULL;
out:
	snapshot_unref(snap);
	sim_release(&s);
	return err;
}

int resolve_all(const struct world *w, const struct override_set *ov,
		struct resolution **out)
{
	struct resolution *res;
	size_t k, j, cap = 0;
	int err = -ENOMEM;

	if (!w->specs)
		return -EINVAL;
	if (!(res = calloc(1, sizeof(*res))))
		return -ENOMEM;
	if ((err = diag_extend(&res->diags, &w->diags)) < 0)
		goto out;
	for (k = 0; k < w->specs->nbackends; k++) {
		const struct spec *s = w->specs->backends[k];
		const char **arches = NULL;
		size_t na = 0;

		if ((err = world_arches(w, s, &arches, &na)) < 0)
			goto out;
		for (j = 0; j < na; j++) {
			struct snapshot *snap = NULL;

			if (res->ndirs == cap) {
				struct snapshot **p = realloc(res->dirs,
							      (cap = cap ? cap * 2 : 16) * sizeof(*p));
				if (!p) {
					err = -ENOMEM;
					break;
				}
				res->dirs = p;
			}
			if ((err = resolve_dir(w, ov, s->backend, arches[j], &snap)) < 0)
				break;
			res->dirs[res->ndirs++] = snap;
			/* Directory diagnostics beyond the load-time ones. */
			if ((err = diag_extend_from(&res->diags, &snap->diags, w->diags.n)) < 0)
				break;
		}
		free(arches);
		if (err < 0)
			goto out;
	}
	*out = res;
	return 0;
out:
	resolution_free(res);
	return err;
}

void resolution_free(struct resolution *r)
{
	size_t k;

	if (!r)
		return;
	for (k = 0; k < r->ndirs; k++)
		snapshot_unref(r->dirs[k]);
	free(r->dirs);
	diag_list_release(&r->diags);
	free(r);
}
