/* env_diff: comparing two run records; see env_diff.h. */
#include "env_diff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "text.h"

/* Values are shown whole up to this many bytes: a diff is read by people. */
#define SHOW_MAX 4096

enum change { SAME, ADDED, REMOVED, CHANGED, UNKNOWN };

static const char *const change_names[] = {
	[SAME] = "same", [ADDED] = "added", [REMOVED] = "removed",
	[CHANGED] = "changed", [UNKNOWN] = "unknown",
};

struct cmp_state {
	enum env_diff_format fmt;
	bool all;
	struct strbuf *out;
	size_t nvars, ndiags;     /* what differs */
	bool first;               /* JSON: no ',' before the next item */
};

static int var_ptr_cmp(const void *x, const void *y)
{
	return rr_var_name_cmp(*(const struct rr_var *const *)x, *(const struct rr_var *const *)y);
}

/* The variables of d that are set, sorted by name. *out is caller-owned. */
static int set_vars(const struct rr_doc *d, const struct rr_var ***out, size_t *n)
{
	bool sorted = true;
	size_t k;

	*n = 0;
	if (!(*out = malloc((d->nvars ? d->nvars : 1) * sizeof(**out))))
		return -ENOMEM;

	for (k = 0; k < d->nvars; k++) {
		if (!d->vars[k].set)
			continue;
		(*out)[*n] = &d->vars[k];
		sorted = sorted && (!*n || var_ptr_cmp(&(*out)[*n - 1], &(*out)[*n]) <= 0);
		++*n;
	}
	/* A record is written sorted: sorting it again was a tenth of a
	 * diff of two. */
	if (!sorted)
		qsort(*out, *n, sizeof(**out), var_ptr_cmp);
	return 0;
}

static bool same_bytes(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && (!an || !memcmp(a, b, an));
}

static enum change compare_vars(const struct rr_var *a, const struct rr_var *b)
{
	if (!a)
		return ADDED;
	if (!b)
		return REMOVED;
	if (a->secret || b->secret) {
		if (!a->value || !b->value)
			return UNKNOWN;
	}
	/* A value a node published by its hash alone. */
	if ((!a->value || !b->value) && a->has_hash && b->has_hash)
		return memcmp(a->hash, b->hash, sizeof(a->hash)) || a->exported != b->exported
		       ? CHANGED : SAME;
	if (!same_bytes(a->value ? a->value : "", a->value_len, b->value ? b->value : "",
			b->value_len) || a->exported != b->exported)
		return CHANGED;
	return SAME;
}

static const struct rr_flag *find_flag(const struct rr_var *v, const char *flag)
{
	size_t k;

	for (k = 0; v && k < v->nflags; k++)
		if (!strcmp(v->flags[k].flag, flag))
			return &v->flags[k];
	return NULL;
}

/* ---- text ---------------------------------------------------------------- */

static int text_side(struct strbuf *out, const char *tag, const struct rr_var *v)
{
	int err;

	if ((err = sb_adds(out, "  ")) < 0 || (err = sb_adds(out, tag)) < 0 ||
	    (err = sb_adds(out, ": ")) < 0)
		return err;
	/* A flag list is shown flag by flag below: its whole text is noise. */
	if (!v->is_flags && !v->value && v->has_hash)
		err = sb_addf(out, "(%zu bytes, not published)", v->value_len);
	else if (!v->is_flags)
		err = text_quote(out, v->value ? v->value : "", v->value_len, SHOW_MAX);
	if (err < 0)
		return err;
	if ((!v->is_flags && (err = sb_adds(out, "  ")) < 0) ||
	    (err = text_escape(out, v->layer ? v->layer : "-",
			       strlen(v->layer ? v->layer : "-"))) < 0 ||
	    (err = sb_adds(out, "  ")) < 0 ||
	    (err = text_escape(out, v->source ? v->source : "-",
			       strlen(v->source ? v->source : "-"))) < 0)
		return err;
	if (!v->exported && (err = sb_adds(out, "  (not exported)")) < 0)
		return err;
	return sb_addc(out, '\n');
}

static int text_flag(struct strbuf *out, const struct rr_flag *f)
{
	int err;

	if ((err = text_quote(out, f->token, f->token_len, SHOW_MAX)) < 0)
		return err;
	/* A record's or node's layer, printed escaped as all it says. */
	if ((err = sb_addc(out, ' ')) < 0)
		return err;
	return text_escape(out, f->layer ? f->layer : "-", strlen(f->layer ? f->layer : "-"));
}

/* Flag by flag: first the flags of a in a's order, then b's new ones. */
static int text_flags(struct strbuf *out, const struct rr_var *a, const struct rr_var *b)
{
	size_t k;
	int err;

	for (k = 0; a && k < a->nflags; k++) {
		const struct rr_flag *fa = &a->flags[k], *fb = find_flag(b, fa->flag);

		if (fb && same_bytes(fa->token, fa->token_len, fb->token, fb->token_len))
			continue;
		if ((err = sb_adds(out, fb ? "  changed " : "  removed ")) < 0 ||
		    (err = text_escape(out, fa->flag, strlen(fa->flag))) < 0 ||
		    (err = sb_adds(out, ": ")) < 0 || (err = text_flag(out, fa)) < 0)
			return err;
		if (fb && ((err = sb_adds(out, " -> ")) < 0 || (err = text_flag(out, fb)) < 0))
			return err;
		if ((err = sb_addc(out, '\n')) < 0)
			return err;
	}
	for (k = 0; b && k < b->nflags; k++) {
		const struct rr_flag *fb = &b->flags[k];

		if (find_flag(a, fb->flag))
			continue;
		if ((err = sb_adds(out, "  added ")) < 0 ||
		    (err = text_escape(out, fb->flag, strlen(fb->flag))) < 0 ||
		    (err = sb_adds(out, ": ")) < 0 || (err = text_flag(out, fb)) < 0 ||
		    (err = sb_addc(out, '\n')) < 0)
			return err;
	}
	return 0;
}

static int text_var(struct cmp_state *st, const struct rr_var *a, const struct rr_var *b,
		    enum change c)
{
	const struct rr_var *v = a ? a : b;
	struct strbuf *out = st->out;
	int err;

	if ((err = sb_adds(out, change_names[c])) < 0 || (err = sb_addc(out, ' ')) < 0 ||
	    (err = text_escape(out, v->name, v->name_len)) < 0)
		return err;
	/* Either side's word that the name is a secret holds. */
	if ((a && a->secret) || (b && b->secret)) {
		static const char *const say[] = {
			[SAME] = "secret, the same", [ADDED] = "secret, only in b",
			[REMOVED] = "secret, only in a", [CHANGED] = "secret, differs",
			[UNKNOWN] = "secret, cannot be compared: a record holds no secret's value",
		};

		return sb_addf(out, ": %s\n", say[c]);
	}
	if ((err = sb_addc(out, '\n')) < 0 || (a && (err = text_side(out, "a", a)) < 0) ||
	    (b && (err = text_side(out, "b", b)) < 0))
		return err;
	if (c == CHANGED && (a->is_flags || b->is_flags))
		return text_flags(out, a, b);
	return 0;
}

/* ---- JSON ---------------------------------------------------------------- */

static int json_str(struct strbuf *out, const char *s)
{
	return s ? json_add_string(out, s, strlen(s)) : sb_adds(out, "null");
}

/* secret: either side holds the name secret, so neither value is shown
 * (a record that says otherwise may be hand-made, or of other specs). */
static int json_side(struct strbuf *out, const struct rr_var *v, bool secret)
{
	int err;

	if (!v)
		return sb_adds(out, "null");
	if ((err = sb_addc(out, '{')) < 0)
		return err;
	if (v->value && !secret)
		err = json_add_field(out, true, "value", v->value, v->value_len);
	else
		err = sb_adds(out, "\"value\":null");
	if (err < 0 || (err = sb_adds(out, ",\"layer\":")) < 0 ||
	    (err = json_str(out, v->layer)) < 0 || (err = sb_adds(out, ",\"source\":")) < 0 ||
	    (err = json_str(out, v->source)) < 0 ||
	    (err = sb_adds(out, v->exported ? ",\"exported\":true}" : ",\"exported\":false}")) < 0)
		return err;
	return 0;
}

static int json_flag_side(struct strbuf *out, const struct rr_flag *f)
{
	int err;

	if (!f)
		return sb_adds(out, "null");
	if ((err = sb_addc(out, '{')) < 0 ||
	    (err = json_add_field(out, true, "token", f->token, f->token_len)) < 0 ||
	    (err = sb_adds(out, ",\"layer\":")) < 0 || (err = json_str(out, f->layer)) < 0)
		return err;
	return sb_addc(out, '}');
}

static int json_flag(struct strbuf *out, bool *first, const char *flag, enum change c,
		     const struct rr_flag *fa, const struct rr_flag *fb)
{
	int err;

	if ((!*first && (err = sb_addc(out, ',')) < 0) || (err = sb_adds(out, "{\"flag\":")) < 0 ||
	    (err = json_str(out, flag)) < 0 ||
	    (err = sb_addf(out, ",\"change\":\"%s\",\"a\":", change_names[c])) < 0 ||
	    (err = json_flag_side(out, fa)) < 0 || (err = sb_adds(out, ",\"b\":")) < 0 ||
	    (err = json_flag_side(out, fb)) < 0)
		return err;
	*first = false;
	return sb_addc(out, '}');
}

static int json_flags(struct strbuf *out, const struct rr_var *a, const struct rr_var *b)
{
	bool first = true;
	size_t k;
	int err;

	if ((err = sb_adds(out, ",\"flags\":[")) < 0)
		return err;
	for (k = 0; a && k < a->nflags; k++) {
		const struct rr_flag *fa = &a->flags[k], *fb = find_flag(b, fa->flag);

		if (fb && same_bytes(fa->token, fa->token_len, fb->token, fb->token_len))
			continue;
		if ((err = json_flag(out, &first, fa->flag, fb ? CHANGED : REMOVED, fa, fb)) < 0)
			return err;
	}
	for (k = 0; b && k < b->nflags; k++)
		if (!find_flag(a, b->flags[k].flag) &&
		    (err = json_flag(out, &first, b->flags[k].flag, ADDED, NULL, &b->flags[k])) < 0)
			return err;
	return sb_addc(out, ']');
}

static int json_var(struct cmp_state *st, const struct rr_var *a, const struct rr_var *b,
		    enum change c)
{
	const struct rr_var *v = a ? a : b;
	struct strbuf *out = st->out;
	bool secret = (a && a->secret) || (b && b->secret);
	int err;

	if ((!st->first && (err = sb_addc(out, ',')) < 0) || (err = sb_addc(out, '{')) < 0 ||
	    (err = json_add_field(out, true, "name", v->name, v->name_len)) < 0 ||
	    (err = sb_adds(out, ",\"change\":\"")) < 0 || (err = sb_adds(out, change_names[c])) < 0 ||
	    (err = sb_adds(out, secret ? "\",\"secret\":true,\"a\":"
			   : "\",\"secret\":false,\"a\":")) < 0 ||
	    (err = json_side(out, a, secret)) < 0 || (err = sb_adds(out, ",\"b\":")) < 0 ||
	    (err = json_side(out, b, secret)) < 0)
		return err;
	if (c == CHANGED && (a->is_flags || b->is_flags) && !secret &&
	    (err = json_flags(out, a, b)) < 0)
		return err;
	st->first = false;
	return sb_addc(out, '}');
}

/* ---- the walk ------------------------------------------------------------ */

static int one_var(struct cmp_state *st, const struct rr_var *a, const struct rr_var *b)
{
	enum change c = compare_vars(a, b);

	if (c != SAME && c != UNKNOWN)
		st->nvars++;
	if (c == SAME && !st->all)
		return 0;
	return st->fmt == ENV_DIFF_JSON ? json_var(st, a, b, c) : text_var(st, a, b, c);
}

static int walk_vars(struct cmp_state *st, const struct rr_doc *da, const struct rr_doc *db)
{
	const struct rr_var **a = NULL, **b = NULL;
	size_t na, nb, i = 0, j = 0;
	int err;

	if ((err = set_vars(da, &a, &na)) < 0 || (err = set_vars(db, &b, &nb)) < 0)
		goto out;
	while (!err && (i < na || j < nb)) {
		int c = i == na ? 1 : j == nb ? -1 : rr_var_name_cmp(a[i], b[j]);

		if (c < 0)
			err = one_var(st, a[i++], NULL);
		else if (c > 0)
			err = one_var(st, NULL, b[j++]);
		else
			err = one_var(st, a[i++], b[j++]);
	}
out:
	free(a);
	free(b);
	return err;
}

/* Diagnostics are matched by severity, code and message: the place
 * differs whenever the two sides were loaded from files of other names. */
static bool same_diag(const struct rr_diag *x, const struct rr_diag *y)
{
	return !strcmp(x->severity, y->severity) && !strcmp(x->message, y->message) &&
	       !strcmp(x->code ? x->code : "", y->code ? y->code : "");
}

static bool diag_in(const struct rr_diag *d, const struct rr_doc *doc)
{
	size_t k;

	for (k = 0; k < doc->ndiags; k++)
		if (same_diag(d, &doc->diags[k]))
			return true;
	return false;
}

static int text_diag(struct strbuf *out, const struct rr_diag *d)
{
	int err;

	if ((err = sb_adds(out, "  ")) < 0)
		return err;
	/* file:line:col: as every diagnostic is printed, unknown parts left out */
	if (d->file && ((err = text_escape(out, d->file, strlen(d->file))) < 0 ||
			(d->line && (err = sb_addf(out, ":%u", d->line)) < 0) ||
			(d->line && d->column && (err = sb_addf(out, ":%u", d->column)) < 0) ||
			(err = sb_adds(out, ": ")) < 0))
		return err;
	if ((err = text_escape(out, d->severity, strlen(d->severity))) < 0)
		return err;
	if (d->code && ((err = sb_addc(out, ' ')) < 0 ||
			(err = text_escape(out, d->code, strlen(d->code))) < 0))
		return err;
	if ((err = sb_adds(out, ": ")) < 0 ||
	    (err = text_escape(out, d->message, strlen(d->message))) < 0)
		return err;
	return sb_addc(out, '\n');
}

static int json_diag(struct strbuf *out, const struct rr_diag *d)
{
	int err;

	if ((err = sb_adds(out, "{\"severity\":")) < 0 || (err = json_str(out, d->severity)) < 0 ||
	    (err = sb_adds(out, ",\"code\":")) < 0 || (err = json_str(out, d->code)) < 0 ||
	    (err = sb_adds(out, ",\"file\":")) < 0 || (err = json_str(out, d->file)) < 0 ||
	    (err = d->line ? sb_addf(out, ",\"line\":%u", d->line) : sb_adds(out, ",\"line\":null")) < 0 ||
	    (err = d->column ? sb_addf(out, ",\"column\":%u", d->column)
			     : sb_adds(out, ",\"column\":null")) < 0 ||
	    (err = sb_adds(out, ",\"message\":")) < 0 ||
	    (err = json_str(out, d->message)) < 0)
		return err;
	return sb_addc(out, '}');
}

/* The diagnostics of one not in other. */
static int only_in(struct cmp_state *st, const struct rr_doc *one, const struct rr_doc *other,
		   const char *tag)
{
	bool first = true;
	size_t k;
	int err = 0;

	for (k = 0; k < one->ndiags && !err; k++) {
		const struct rr_diag *d = &one->diags[k];

		/* Silenced: what the user said not to be told about. */
		if (d->silenced || diag_in(d, other))
			continue;
		st->ndiags++;
		if (st->fmt == ENV_DIFF_JSON) {
			if ((!first && (err = sb_addc(st->out, ',')) < 0) ||
			    (err = json_diag(st->out, d)) < 0)
				return err;
		} else if ((first && (err = sb_addf(st->out, "diagnostics only in %s:\n", tag)) < 0) ||
			   (err = text_diag(st->out, d)) < 0) {
			return err;
		}
		first = false;
	}
	return err;
}

static int json_head(struct strbuf *out, const char *key, const struct env_diff_side *s)
{
	int err;

	if ((err = sb_addf(out, "\"%s\":{\"label\":", key)) < 0 ||
	    (err = json_str(out, s->label)) < 0 || (err = sb_adds(out, ",\"backend\":")) < 0 ||
	    (err = json_str(out, s->doc->backend)) < 0 || (err = sb_adds(out, ",\"arch\":")) < 0 ||
	    (err = json_str(out, s->doc->arch)) < 0 || (err = sb_adds(out, ",\"digest\":")) < 0 ||
	    (err = json_str(out, s->doc->digest)) < 0)
		return err;
	return sb_addc(out, '}');
}

static int text_head(struct strbuf *out, const char *mark, const char *tag,
		     const struct env_diff_side *s)
{
	int err;

	if ((err = sb_addf(out, "%s %s: ", mark, tag)) < 0 ||
	    (err = text_escape(out, s->label, strlen(s->label))) < 0 ||
	    (err = sb_adds(out, " (")) < 0 ||
	    (err = text_escape(out, s->doc->backend, strlen(s->doc->backend))) < 0 ||
	    (err = sb_addc(out, '/')) < 0 ||
	    (err = text_escape(out, s->doc->arch, strlen(s->doc->arch))) < 0)
		return err;
	return sb_adds(out, ")\n");
}

int env_diff(const struct env_diff_side *a, const struct env_diff_side *b,
	     enum env_diff_format fmt, bool all, struct strbuf *out, bool *differ)
{
	struct cmp_state st = { .fmt = fmt, .all = all, .out = out, .first = true };
	struct strbuf body = STRBUF_INIT;
	int err;

	*differ = false;
	st.out = &body;
	if ((err = walk_vars(&st, a->doc, b->doc)) < 0)
		goto out;
	if (fmt == ENV_DIFF_JSON) {
		if ((err = sb_addf(out, "{\"format\":\"primus-envfs-diff\",\"version\":%d,",
				   ENV_DIFF_VERSION)) < 0 ||
		    (err = json_head(out, "a", a)) < 0 || (err = sb_addc(out, ',')) < 0 ||
		    (err = json_head(out, "b", b)) < 0 || (err = sb_adds(out, ",\"variables\":[")) < 0 ||
		    (err = sb_add(out, sb_str(&body), body.len)) < 0 ||
		    (err = sb_adds(out, "],\"diagnostics\":{\"only_a\":[")) < 0)
			goto out;
		st.out = out;
		if ((err = only_in(&st, a->doc, b->doc, "a")) < 0 ||
		    (err = sb_adds(out, "],\"only_b\":[")) < 0 ||
		    (err = only_in(&st, b->doc, a->doc, "b")) < 0 ||
		    (err = sb_addf(out, "]},\"equal\":%s}\n",
				   st.nvars || st.ndiags ? "false" : "true")) < 0)
			goto out;
	} else {
		if ((err = text_head(out, "---", "a", a)) < 0 ||
		    (err = text_head(out, "+++", "b", b)) < 0 ||
		    (err = sb_add(out, sb_str(&body), body.len)) < 0)
			goto out;
		st.out = out;
		if ((err = only_in(&st, a->doc, b->doc, "a")) < 0 ||
		    (err = only_in(&st, b->doc, a->doc, "b")) < 0)
			goto out;
		if (!st.nvars && !st.ndiags)
			err = sb_adds(out, "no differences\n");
		else
			err = sb_addf(out, "%zu variable(s) differ, %zu diagnostic(s) on one side only\n",
				      st.nvars, st.ndiags);
		if (err < 0)
			goto out;
	}
	*differ = st.nvars || st.ndiags;
out:
	sb_release(&body);
	return err;
}
