/* Rule checks over one resolved directory (the schema's rules are in
 * specs/README.md: types and validation, owned prefixes, pins, rules):
 *
 *  - typed validation of every set value (bool with torch_fl's spellings,
 *    int with bounds, enum, comma list), with the variable's effective
 *    meaning added to its explain lines;
 *  - owned prefixes: a name in a spec's owned_prefix that is neither
 *    declared, nor in a dynamic family, nor retired, with a did-you-mean;
 *  - retired names: silent, explained;
 *  - per-arch pins: a set value contradicting a forced one is an error;
 *  - the specs' cross-variable `rules:`.
 *
 * Runs on a snapshot under construction (not yet published), so it may
 * replace the explain strings of s->vars, and it gives a variable without
 * a spec note the catalog's description (it walks the catalog anyway);
 * everything it allocates for the snapshot comes from s->arena.
 * Diagnostics are added to s->diags. */
#include "validate_ctx.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rule.h"
#include "text.h"

/* ---- small text helpers ------------------------------------------------ */

/* torch_fl's boolean spellings: 1 on, 0 off, -1 not a boolean. */
static int bool_parse(const char *v, size_t n)
{
	static const char *const on[] = { "1", "true", "on", "yes" };
	static const char *const off[] = { "0", "false", "off", "no" };
	size_t k;

	for (k = 0; k < 4; k++) {
		if (strlen(on[k]) == n && !strncasecmp(v, on[k], n))
			return 1;
		if (strlen(off[k]) == n && !strncasecmp(v, off[k], n))
			return 0;
	}
	return -1;
}

/* A whole decimal integer with optional sign: 0, -EINVAL when the text is
 * not one, -ERANGE when it does not fit a long long. */
static int int_parse(const char *v, size_t n, long long *out)
{
	unsigned long long acc = 0, lim = (unsigned long long)LLONG_MAX;
	bool neg = false;
	size_t i = 0;

	if (i < n && (v[i] == '+' || v[i] == '-'))
		neg = v[i++] == '-';
	if (i == n)
		return -EINVAL;
	if (neg)
		lim++;
	for (; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
		if (acc > (lim - (unsigned long long)(v[i] - '0')) / 10)
			return -ERANGE;
		acc = acc * 10 + (unsigned long long)(v[i] - '0');
	}
	if (neg)
		*out = acc == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)acc;
	else
		*out = (long long)acc;
	return 0;
}

static bool in_values_as(const struct vtype_def *t, const char *v, size_t n, bool fold)
{
	size_t k;

	for (k = 0; k < t->nvalues; k++)
		if (strlen(t->values[k]) == n &&
		    (fold ? !strncasecmp(t->values[k], v, n) : !memcmp(t->values[k], v, n)))
			return true;
	return false;
}

static bool in_values(const struct vtype_def *t, const char *v, size_t n)
{
	return in_values_as(t, v, n, false);
}

/* Appends the value as it may appear in a one-line message: redacted when
 * secret, control bytes escaped, very long values cut. */
static int add_shown(struct strbuf *sb, const struct snap_var *v)
{
	enum { SHOWN_MAX = 120 };
	size_t i, n;
	int err = 0;

	if (v->secret)
		return sb_adds(sb, "<redacted>");
	n = v->value_len < SHOWN_MAX ? v->value_len : SHOWN_MAX;
	for (i = 0; i < n && !err; i++) {
		unsigned char c = (unsigned char)v->value[i];

		err = c < 0x20 || c == 0x7f ? sb_addf(sb, "\\x%02x", c) : sb_addc(sb, (char)c);
	}
	if (!err && n < v->value_len)
		err = sb_adds(sb, "...");
	return err;
}

/* "NAME=value" with the value shown as add_shown() does. */
static int add_assign(struct strbuf *sb, const struct snap_var *v)
{
	int err = sb_add(sb, v->name, v->name_len);

	if (!err)
		err = sb_addc(sb, '=');
	return err ? err : add_shown(sb, v);
}

/* Who reads a variable whose type comes from ti, for messages. */
static const char *reader(const struct tinfo *ti)
{
	if (ti->spec && ti->spec->backend)
		return ti->spec->backend;
	return NULL;
}

/* ---- diagnostics ------------------------------------------------------- */

/* A value outside its type has the code of the severity the spec gives it. */
static enum diag_code type_code(const struct vtype_def *t)
{
	return t->invalid == DIAG_ERROR ? DC_TYPE_ERROR :
	       t->invalid == DIAG_INFO ? DC_TYPE_INFO : DC_TYPE_WARNING;
}

/* ---- types ------------------------------------------------------------- */

/* The entry of sp giving a name a type, among its n entries at first in
 * sp->by_name: one that applies to arch first (a name may have per-arch
 * entries), else any, since a declaration for another arch still says
 * what the name means. */
static const struct spec_var *spec_typed(const struct spec *sp, size_t first, size_t n,
					 const char *arch)
{
	const struct spec_var *any = NULL;
	size_t k;

	for (k = 0; k < n; k++) {
		const struct spec_var *v = &sp->vars[sp->by_name[first + k]];

		if (v->type.type == VT_NONE)
			continue;
		if (spec_var_applies_to_arch(v, arch))
			return v;
		if (!any)
			any = v;
	}
	return any;
}

/* The entries of name, searched for (a name out of order: pins). */
static void entries_find(const struct vctx *c, const char *name, struct entries *e)
{
	e->bn = c->backend ? spec_entries(c->backend, name, &e->bfirst) : 0;
	e->rn = c->runner ? spec_entries(c->runner, name, &e->rfirst) : 0;
	e->ce = c->set ? spec_set_catalog(c->set, name) : NULL;
}

/* The entries of sp named name at or after *pos, which moves up to
 * them: names asked in ascending order cost one walk over by_name. */
static size_t spec_walk(const struct spec *sp, size_t *pos, const char *name, size_t *first)
{
	size_t end;
	int cmp = 1;

	while (*pos < sp->nvars && (cmp = strcmp(sp->vars[sp->by_name[*pos]].name, name)) < 0)
		(*pos)++;
	*first = *pos;
	if (*pos == sp->nvars || cmp)
		return 0;
	for (end = *pos + 1; end < sp->nvars && !strcmp(sp->vars[sp->by_name[end]].name, name);
	     end++)
		;
	return end - *pos;
}

/* The catalog entry of name, for names asked in ascending byte order:
 * *pos keeps the place, so the catalog is walked once instead of searched
 * per name. NULL when absent or set is NULL. */
static const struct catalog_entry *catalog_walk(const struct spec_set *set, size_t *pos,
						const char *name)
{
	int cmp = 1;

	if (!set)
		return NULL;
	while (*pos < set->ncatalog && (cmp = strcmp(set->catalog[*pos].name, name)) < 0)
		(*pos)++;
	return *pos < set->ncatalog && !cmp ? &set->catalog[*pos] : NULL;
}

/* The entries of s->vars[i], the walks' next name. */
static void entries_next(struct vctx *c, size_t i, struct entries *e)
{
	const char *name = c->s->vars[i].name;

	e->bn = c->backend ? spec_walk(c->backend, &c->bpos, name, &e->bfirst) : 0;
	e->rn = c->runner ? spec_walk(c->runner, &c->rpos, name, &e->rfirst) : 0;
	e->ce = catalog_walk(c->set, &c->cpos, name);
}

/* Backend spec, then runner, then catalog. False when nothing types the
 * name of e. */
static bool find_type(const struct vctx *c, const struct entries *e, struct tinfo *ti)
{
	const struct spec_var *sv;

	memset(ti, 0, sizeof(*ti));
	if ((sv = e->bn ? spec_typed(c->backend, e->bfirst, e->bn, c->s->arch) : NULL)) {
		ti->spec = c->backend;
	} else if ((sv = e->rn ? spec_typed(c->runner, e->rfirst, e->rn, c->s->arch) : NULL)) {
		ti->spec = c->runner;
	} else {
		if (!(ti->ce = e->ce) || ti->ce->type.type == VT_NONE)
			return false;
		ti->t = &ti->ce->type;
		return true;
	}
	ti->sv = sv;
	ti->t = &sv->type;
	return true;
}

static bool valid_default(const struct vtype_def *t, const char *d)
{
	long long x;
	size_t n = strlen(d);

	switch (t->type) {
	case VT_BOOL:
		return bool_parse(d, n) >= 0;
	case VT_INT:
		return !int_parse(d, n, &x) && (!t->has_min || x >= t->min) &&
		       (!t->has_max || x <= t->max);
	case VT_ENUM:
		return in_values(t, d, n);
	default:
		return n > 0;
	}
}

/* The default that applies when the value is ignored: the spec default
 * the run's value shadowed, else the typing entry's value, else the
 * catalog's documented default; only when it is a valid value of the type
 * (the catalog also documents defaults such as "per-model"). NULL when
 * unknown. A value that itself comes from a spec is the default, so it
 * has none to fall back on. */
static const char *default_of(const struct snap_var *v, const struct tinfo *ti)
{
	const char *d = NULL;

	if (v->layer == LAYER_BACKEND || v->layer == LAYER_RUNNER)
		return NULL;
	if (v->def)
		d = v->def;
	else if (ti->sv && ti->sv->value && !ti->sv->when)
		d = ti->sv->value;
	else if (ti->ce && ti->ce->def)
		d = ti->ce->def;
	if (!d || !*d || !valid_default(ti->t, d))
		return NULL;
	return d;
}

/* Appends "; <reader> warns once and the default (on) applies" or the
 * like. A type with invalid: error means the reader refuses the value, so
 * nothing "applies" then. */
static int add_fallback(struct strbuf *sb, const struct snap_var *v, const struct tinfo *ti,
			bool warns_once)
{
	const char *d = default_of(v, ti);
	const char *who = reader(ti);
	int err;

	if (ti->t->invalid == DIAG_ERROR)
		return 0;
	err = sb_adds(sb, "; ");
	if (!err && warns_once && who)
		err = sb_addf(sb, "%s warns once and ", who);
	if (err)
		return err;
	if (!d)
		return sb_adds(sb, "the default applies");
	if (v->secret)
		return sb_adds(sb, "the default (<redacted>) applies");
	if (ti->t->type == VT_BOOL)
		return sb_addf(sb, "the default (%s) applies",
			       bool_parse(d, strlen(d)) ? "on" : "off");
	return sb_addf(sb, "the default (%s) applies", d);
}

static int check_bool(struct vctx *c, size_t idx, const struct snap_var *v,
		       const struct tinfo *ti, struct strbuf *m)
{
	int b = bool_parse(v->value, v->value_len);
	int err;

	if (b >= 0) {
		if (v->secret)
			return 0;
		if ((err = add_assign(m, v)) || (err = sb_adds(m, b ? " means on" : " means off")))
			return err;
		return explain_add(c, idx, sb_str(m));
	}
	if ((err = add_assign(m, v)) ||
	    (err = sb_adds(m, " is not a boolean (1 true on yes / 0 false off no, any case)")) ||
	    (err = add_fallback(m, v, ti, true)))
		return err;
	return validate_report(c, idx, type_code(ti->t), m);
}

static int check_int(struct vctx *c, size_t idx, const struct snap_var *v,
		     const struct tinfo *ti, struct strbuf *m)
{
	const struct vtype_def *t = ti->t;
	long long x = 0;
	int perr = int_parse(v->value, v->value_len, &x), err;
	bool low, high;

	if ((err = add_assign(m, v)))
		return err;
	if (perr == -EINVAL) {
		err = sb_adds(m, " is not a whole decimal integer");
		if (!err && t->has_min && t->has_max)
			err = sb_addf(m, " (expected %lld-%lld)", t->min, t->max);
		else if (!err && t->has_min)
			err = sb_addf(m, " (expected at least %lld)", t->min);
		else if (!err && t->has_max)
			err = sb_addf(m, " (expected at most %lld)", t->max);
		return err ? err : validate_report(c, idx, type_code(t), m);
	}
	/* An integer too large for long long is past any bound in its sign's
	 * direction. */
	low = t->has_min && (perr ? v->value[0] == '-' : x < t->min);
	high = t->has_max && (perr ? v->value[0] != '-' : x > t->max);
	if (!low && !high) {
		if (!perr)
			return 0;
		err = sb_adds(m, " is too large to be an integer");
	} else if (t->has_min && t->has_max) {
		err = sb_addf(m, " is outside %lld-%lld", t->min, t->max);
	} else if (low) {
		err = sb_addf(m, " is below the minimum %lld", t->min);
	} else {
		err = sb_addf(m, " is above the maximum %lld", t->max);
	}
	/* A spec note on a bounded parameter says what the bound prevents
	 * (XLA_GPU_AUTOTUNE_LEVEL: NaN loss), which is the point of the
	 * message; the catalog's description would only restate the name. */
	if (!err && ti->sv && ti->sv->note)
		err = sb_addf(m, " (%s)", ti->sv->note);
	return err ? err : validate_report(c, idx, type_code(t), m);
}

static int add_values(struct strbuf *sb, const struct vtype_def *t)
{
	size_t k;
	int err = 0;

	for (k = 0; k < t->nvalues && !err; k++)
		err = sb_addf(sb, "%s%s", k ? " " : "", t->values[k]);
	return err;
}

static int check_enum(struct vctx *c, size_t idx, const struct snap_var *v,
		       const struct tinfo *ti, struct strbuf *m)
{
	int err;

	if (in_values_as(ti->t, v->value, v->value_len, c->fold))
		return 0;
	if ((err = add_assign(m, v)) || (err = sb_adds(m, " is not one of: ")) ||
	    (err = add_values(m, ti->t)) || (err = add_fallback(m, v, ti, false)))
		return err;
	return validate_report(c, idx, type_code(ti->t), m);
}

/* Each non-empty, trimmed entry of a comma list must be a known one; one
 * diagnostic per unknown entry, as torch_fl reports each once. */
static int check_list(struct vctx *c, size_t idx, const struct snap_var *v,
		       const struct tinfo *ti, struct strbuf *m)
{
	size_t pos = 0, n = v->value_len;
	bool done = false;
	int err = 0;

	if (!ti->t->nvalues)
		return 0;
	while (!done && !err) {
		const char *q = memchr(v->value + pos, ',', n - pos);
		const char *a = v->value + pos, *b = q ? q : v->value + n;
		const char *best = NULL;
		size_t bestd = (size_t)-1, k;

		done = !q;
		pos = (size_t)(b - v->value) + 1;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (a == b || in_values_as(ti->t, a, (size_t)(b - a), c->fold))
			continue;
		for (k = 0; k < ti->t->nvalues; k++) {
			const char *cand = ti->t->values[k];
			size_t d = text_edit_distance(a, (size_t)(b - a), cand, strlen(cand));

			if (d < bestd) {
				bestd = d;
				best = cand;
			}
		}
		sb_reset(m);
		err = sb_add(m, v->name, v->name_len);
		if (!err && v->secret)
			err = sb_adds(m, ": unknown entry <redacted> (known: ");
		else if (!err)
			err = sb_addf(m, ": unknown entry '%.*s' (known: ", (int)(b - a), a);
		if (!err && !(err = add_values(m, ti->t)))
			err = sb_addc(m, ')');
		if (!err && !v->secret && best && validate_close_enough(bestd, (size_t)(b - a)))
			err = sb_addf(m, "; did you mean '%s'?", best);
		if (!err)
			err = validate_report(c, idx, type_code(ti->t), m);
	}
	return err;
}

/* A spec with value_reading: relaxed (torch_fl's _env.py) reads its owned
 * names stripped of surrounding blanks, empty then meaning unset, and
 * matches enum values and list entries in any case. */
static bool relaxed(const struct tinfo *ti, const struct snap_var *v)
{
	const struct spec *sp = ti->spec;

	return sp && sp->relaxed_values && sp->owned_prefix &&
	       !strncmp(v->name, sp->owned_prefix, strlen(sp->owned_prefix));
}

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* v as its reader reads it: stripped of surrounding blanks when relaxed
 * (the value stays borrowed from v). */
static struct snap_var read_as(const struct snap_var *v, bool relaxed)
{
	struct snap_var tv = *v;

	while (relaxed && tv.value_len && blank(tv.value[0])) {
		tv.value++;
		tv.value_len--;
	}
	while (relaxed && tv.value_len && blank(tv.value[tv.value_len - 1]))
		tv.value_len--;
	return tv;
}

static int check_type(struct vctx *c, size_t idx, const struct entries *e)
{
	struct snap_var tv = c->s->vars[idx];
	const struct snap_var *v = &tv;
	struct strbuf m = STRBUF_INIT;
	struct tinfo ti;
	int err = 0;

	if (!v->set || !v->value || !find_type(c, e, &ti))
		return 0;
	if (ti.t->type == VT_NONE || ti.t->type == VT_STRING || ti.t->type == VT_PATH)
		return 0;
	c->fold = relaxed(&ti, v);
	tv = read_as(v, c->fold);
	if (!v->value_len) {
		/* torch_fl's rule, applied to every type: an empty value is
		 * unset (so `X=${UNSET}` does not override a default). */
		const char *d = default_of(v, &ti);

		if ((err = sb_add(&m, v->name, v->name_len)) ||
		    (err = sb_adds(&m, " is empty: treated as unset")))
			goto out;
		if (d && v->secret)
			err = sb_adds(&m, ", so the default applies");
		else if (d && ti.t->type == VT_BOOL)
			err = sb_addf(&m, ", so the default %s applies",
				      bool_parse(d, strlen(d)) ? "on" : "off");
		else if (d)
			err = sb_addf(&m, ", so the default %s applies", d);
		if (!err)
			err = explain_add(c, idx, sb_str(&m));
		goto out;
	}
	switch (ti.t->type) {
	case VT_BOOL: err = check_bool(c, idx, v, &ti, &m); break;
	case VT_INT:  err = check_int(c, idx, v, &ti, &m); break;
	case VT_ENUM: err = check_enum(c, idx, v, &ti, &m); break;
	case VT_LIST: err = check_list(c, idx, v, &ti, &m); break;
	default: break;
	}
out:
	sb_release(&m);
	return err;
}

/* ---- pins ----------------------------------------------------------------- */

/* True when an earlier entry of sp already pinned name on arch, so two
 * entries of one name report once. */
static bool pinned_before(const struct spec *sp, size_t upto, const char *name,
			  const char *arch)
{
	size_t k, j;

	for (k = 0; k < upto; k++) {
		const struct spec_var *v = &sp->vars[k];

		if (strcmp(v->name, name))
			continue;
		for (j = 0; j < v->npins; j++)
			if (!strcmp(v->pins[j].arch, arch))
				return true;
	}
	return false;
}

static ptrdiff_t var_index(const struct snapshot *s, const char *name)
{
	const struct snap_var *v = snapshot_find(s, name, strlen(name));

	return v ? v - s->vars : -1;
}

/* Whether the run's value is the pinned one, as its reader reads it: a
 * relaxed reader strips it and takes any case. */
static bool pin_agrees(const struct snap_var *var, const struct tinfo *ti, bool typed,
		       const char *pin)
{
	bool fold = typed && relaxed(ti, var);
	struct snap_var tv = read_as(var, fold);
	const struct snap_var *v = &tv;

	if (typed && ti->t->type == VT_BOOL) {
		int a = bool_parse(v->value, v->value_len), b = bool_parse(pin, strlen(pin));

		/* A non-boolean is not the forced value either: the build
		 * script refuses it. */
		return a >= 0 && a == b;
	}
	return strlen(pin) == v->value_len &&
	       !(fold ? strncasecmp(pin, v->value, v->value_len) : memcmp(pin, v->value, v->value_len));
}

static int check_pins(struct vctx *c, const struct spec *sp)
{
	struct strbuf m = STRBUF_INIT;
	size_t k, j;
	int err = 0;

	if (!sp)
		return 0;
	for (k = 0; k < sp->nvars && !err; k++) {
		const struct spec_var *sv = &sp->vars[k];
		const struct snap_var *v;
		struct entries e;
		struct tinfo ti;
		ptrdiff_t idx;
		bool typed;

		for (j = 0; j < sv->npins && strcmp(sv->pins[j].arch, c->s->arch); j++)
			;
		if (j == sv->npins || pinned_before(sp, k, sv->name, c->s->arch) ||
		    (idx = var_index(c->s, sv->name)) < 0)
			continue;
		v = &c->s->vars[idx];
		sb_reset(&m);
		if ((err = sb_addf(&m, "pinned to %s on %s", sv->pins[j].value, c->s->arch)) ||
		    (err = explain_add(c, (size_t)idx, sb_str(&m))))
			break;
		/* Empty is unset, and unset never contradicts. */
		if (!v->set || !v->value || !v->value_len)
			continue;
		entries_find(c, sv->name, &e);
		typed = find_type(c, &e, &ti);
		if (pin_agrees(v, &ti, typed, sv->pins[j].value))
			continue;
		sb_reset(&m);
		if (!(err = add_assign(&m, v)))
			err = sb_addf(&m, " contradicts the value %s that %s forces on %s",
				      sv->pins[j].value, sp->backend ? sp->backend : "the runner",
				      c->s->arch);
		if (!err)
			err = validate_report(c, (size_t)idx, DC_PIN_CONTRADICTED, &m);
	}
	sb_release(&m);
	return err;
}

/* ---- driver --------------------------------------------------------------- */

/* Appends the collected lines to each variable's explain text. */
static int finish_explain(struct vctx *c)
{
	size_t i;

	for (i = 0; i < c->s->nvars; i++) {
		struct snap_var *v = &c->s->vars[i];
		size_t old = v->explain ? strlen(v->explain) : 0;
		char *p;

		if (!c->ex[i].len)
			continue;
		if (!(p = arena_alloc_text(c->s->arena, old + c->ex[i].len + 1)))
			return -ENOMEM;
		if (old)
			memcpy(p, v->explain, old);
		memcpy(p + old, c->ex[i].buf, c->ex[i].len);
		p[old + c->ex[i].len] = '\0';
		v->explain = p;
	}
	return 0;
}

int validate_snapshot(const struct spec_set *set, const struct spec *backend,
		      const struct spec *runner, struct snapshot *s)
{
	struct vctx c = { set, backend, runner, s, NULL, 0, 0, 0, false };
	size_t i;
	int err = 0;

	if (!s->nvars && !(backend && backend->nrules) && !(runner && runner->nrules))
		return 0;
	if (!(c.ex = calloc(s->nvars ? s->nvars : 1, sizeof(*c.ex))))
		return -ENOMEM;
	for (i = 0; i < s->nvars && !err; i++) {
		struct entries e;

		entries_next(&c, i, &e);
		if (!s->vars[i].note && e.ce)
			s->vars[i].note = e.ce->description;
		if (!(err = validate_explain_retired(&c, i)) &&
		    !(err = validate_check_owned(&c, i, backend)) &&
		    !(err = validate_check_owned(&c, i, runner)))
			err = check_type(&c, i, &e);
	}
	if (!err && !(err = check_pins(&c, backend)) && !(err = check_pins(&c, runner)) &&
	    !(err = validate_check_rules(&c, runner)) && !(err = validate_check_rules(&c, backend)))
		err = finish_explain(&c);
	for (i = 0; i < s->nvars; i++)
		sb_release(&c.ex[i]);
	free(c.ex);
	return err;
}
