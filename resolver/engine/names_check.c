/* Names nothing reads, and XLA flags XLA does not define.
 *
 * A misspelled name is the commonest mistake in a config and the run
 * silently gets the default, so every name a layer sets (config env:,
 * --env, --env-file, an override; an image's as information only) is
 * looked up in what is known to read it: the catalog, the specs (their
 * entries and passthrough names) and the readers' name lists
 * (specs/names/). Unknown, it is a warning when it lies within a small
 * edit distance of a known name, a warning when only a reader that this
 * backend never runs reads it, and an info line when it only carries a
 * reader's prefix. Every token of XLA_FLAGS and XLA_FLAGS_APPEND is
 * checked against XLA's flag list. A value given with --env that the
 * config env: block replaces is a warning: the user asked for it on the
 * command line and the run does not get it.
 *
 * Diagnostics go to s->diags; nothing else of the snapshot changes. */
#include "resolve_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flag_token.h"
#include "name_lists.h"
#include "text.h"

struct nctx {
	const struct spec_set *set;
	const struct names *nm;
	const struct spec *backend, *runner;
	struct snapshot *s;
	struct strbuf checked;         /* XLA flag tokens already checked, '\n'-ended */
};

/* ---- places ------------------------------------------------------------- */

int diag_at_var_source(struct diag_list *l, enum diag_code code, const char *source,
		       const char *msg)
{
	const char *colon = source ? strrchr(source, ':') : NULL;
	unsigned long line = 0;
	const char *p;
	char *file;
	int err;

	if (!source)
		return diag_add(l, code, NULL, 0, 0, "%s", msg);
	for (p = colon ? colon + 1 : ""; *p >= '0' && *p <= '9' && line < 100000000; p++)
		line = line * 10 + (unsigned long)(*p - '0');
	if (!colon || colon == source || p == colon + 1 || *p)
		return diag_add(l, code, source, 0, 0, "%s", msg);
	if (!(file = xstrndup(source, (size_t)(colon - source))))
		return -ENOMEM;
	err = diag_add(l, code, file, (unsigned)line, 0, "%s", msg);
	free(file);
	return err;
}

/* ---- what is known -------------------------------------------------------- */

/* Declared or passed through by a spec of the set: any backend's
 * declaration says what the name means, as the catalog's does. */
static bool spec_known(const struct spec_set *set, const char *name)
{
	size_t k, first;

	if (set->runner && (spec_entries(set->runner, name, &first) ||
			    text_in_list(set->runner->passthrough, set->runner->npassthrough, name)))
		return true;
	for (k = 0; k < set->nbackends; k++) {
		const struct spec *sp = set->backends[k];

		if (spec_entries(sp, name, &first) ||
		    text_in_list(sp->passthrough, sp->npassthrough, name))
			return true;
	}
	return false;
}

static bool owned(const struct spec *sp, const char *name)
{
	return sp && sp->owned_prefix &&
	       !strncmp(name, sp->owned_prefix, strlen(sp->owned_prefix));
}

/* A misspelling is one edit in a short name and two in a long one: the
 * names of one reader differ by two edits or more from each other often
 * enough (NCCL_IB_TC, NCCL_IB_SL) that a bound of two on short names
 * would suggest a real name for another real name. */
static size_t bound(size_t len)
{
	return len < 12 ? 1 : 2;
}

struct best {
	const char *name;
	size_t d;
	uint64_t mask;             /* text_char_mask() of what is looked up */
};

/* Takes cand when it is closer than the best so far. The masks rule most
 * candidates out before any distance is computed: an image or a config
 * may set thousands of names. */
static void consider_diff(struct best *b, const char *name, size_t n, const char *cand,
			  size_t m, size_t diff)
{
	size_t d, lim = bound(n);

	if ((diff + 1) / 2 > lim || !strcmp(name, cand))
		return;
	d = text_edit_distance_max(name, n, cand, m, lim);
	if (d <= lim && d < b->d) {
		b->d = d;
		b->name = cand;
	}
}

static void consider(struct best *b, const char *name, size_t n, const char *cand, size_t m,
		     uint64_t cmask)
{
	consider_diff(b, name, n, cand, m, (size_t)__builtin_popcountll(b->mask ^ cmask));
}

/* The known name closest to name within the bound, or NULL: only those
 * whose length is within the bound can be. */
static const char *suggest_name(const struct nctx *c, const char *name)
{
	size_t n = strlen(name), lim = bound(n), first, cnt, k;
	struct best b = { NULL, (size_t)-1, text_char_mask(name, n) };
	uint32_t folded = names_fold_mask(b.mask);

	cnt = names_known_by_length(c->nm, n > lim ? n - lim : 0, n + lim, &first);
	for (k = first; k < first + cnt; k++)
		consider_diff(&b, name, n, c->nm->known[k].name, c->nm->known[k].len,
			      (size_t)__builtin_popcount(folded ^ c->nm->known[k].mask));
	return b.name;
}

/* The first reader of e that does not run here and whose prefix the name
 * carries: a name only another framework reads (XLA_ in a Megatron run). */
static const struct names_reader *foreign_reader(const struct nctx *c,
						 const struct names_entry *e)
{
	const struct names_reader *other = NULL;
	size_t k, j;

	for (k = 0; k < c->nm->nreaders; k++) {
		if (!(e->readers & ((uint32_t)1 << k)))
			continue;
		if (names_reader_runs(c->nm, k, c->s->backend))
			return NULL;
		for (j = 0; !other && j < c->nm->readers[k].nprefixes; j++)
			if (!strncmp(e->name, c->nm->readers[k].prefixes[j],
				     strlen(c->nm->readers[k].prefixes[j])))
				other = &c->nm->readers[k];
	}
	return other;
}

/* Whether a flag list of sp appends name's value (XLA_FLAGS_APPEND). */
static bool flags_append_from(const struct spec *sp, const char *name)
{
	size_t k;

	for (k = 0; sp && k < sp->nvars; k++)
		if (sp->vars[k].append_from && !strcmp(sp->vars[k].append_from, name))
			return true;
	return false;
}

/* The reader whose prefix name carries (the longest), when no reader
 * whose prefix it carries runs in this backend; else NULL. */
static const struct names_reader *foreign_prefix(const struct nctx *c, const char *name,
						 const char **prefix)
{
	const struct names_reader *best = NULL;
	size_t k, j, bestlen = 0;

	for (k = 0; k < c->nm->nreaders; k++)
		for (j = 0; j < c->nm->readers[k].nprefixes; j++) {
			const char *p = c->nm->readers[k].prefixes[j];
			size_t l = strlen(p);

			if (strncmp(name, p, l))
				continue;
			if (names_reader_runs(c->nm, k, c->s->backend))
				return NULL;
			if (l > bestlen) {
				best = &c->nm->readers[k];
				bestlen = l;
				*prefix = p;
			}
		}
	return best;
}

/* ---- which layers set a name ------------------------------------------------ */

static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	const char *p = list;

	while (p && (p = strstr(p, w))) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

/* DIAG_WARNING when the user sets v (config, --env, --env-file, an
 * override), DIAG_INFO when only the image does, -1 otherwise (the specs
 * or the host passthrough, which forwards by prefix). */
static int user_severity(const struct snap_var *v)
{
	if (!v->set || !v->layers)
		return -1;
	if (has_word(v->layers, "config") || has_word(v->layers, "cli") ||
	    has_word(v->layers, "override"))
		return DIAG_WARNING;
	return has_word(v->layers, "image") ? DIAG_INFO : -1;
}

/* ---- names ------------------------------------------------------------------ */

static bool declared_by(const struct spec *sp, const char *name)
{
	size_t first;

	return sp && (spec_entries(sp, name, &first) ||
		      text_in_list(sp->passthrough, sp->npassthrough, name) ||
		      flags_append_from(sp, name));
}

/* What is wrong with v's name, if anything. A name in a reader's list is
 * read, unless only readers this backend never runs read it (the global
 * catalog documents XLA_ names too, so it does not excuse one in a
 * Megatron run; this directory's own specs do). A name in no list is
 * read when the catalog or a spec knows it. Only a name the user sets
 * is compared with every known name: an image may bring thousands, each
 * of them an information line at most. */
static int check_name(struct nctx *c, const struct snap_var *v, int sev)
{
	const struct names_entry *e = names_find(c->nm, v->name, v->name_len);
	const struct names_reader *r = NULL;
	const struct names_reader *fr;
	struct strbuf m = STRBUF_INIT;
	const char *prefix = NULL;
	const char *sug = NULL;
	int err = 0;

	if (e && (!(r = foreign_reader(c, e)) || declared_by(c->backend, v->name) ||
		  declared_by(c->runner, v->name)))
		return 0;
	if (!e && (declared_by(c->backend, v->name) || declared_by(c->runner, v->name) ||
		   owned(c->backend, v->name) || owned(c->runner, v->name)))
		return 0;
	/* In no reader's list and not this backend's (its spec, the
	 * runner's), of a prefix only readers this backend never runs read:
	 * XLA_GPU_AUTOTUNE_LEVEL (MaxText's launch reads it) or FLAGOS_LOG
	 * in a Megatron run, passed on unread. Asked of the prefix, not of
	 * which other spec declares it: a resolve of one backend reads no
	 * other spec, and must say what the mount says. A prefix a reader
	 * here reads (NVTE_ in a Megatron run) may be read, lists or not. */
	if (!e && (fr = foreign_prefix(c, v->name, &prefix))) {
		err = sb_addf(&m, "%s: %s names are for %s, which a %s run does not "
			      "use", v->name, prefix, fr->title, c->s->backend);
		if (!err)
			err = diag_at_var_source(&c->s->diags, sev == DIAG_WARNING ?
						 DC_NAME_OTHER_FRAMEWORK : DC_NAME_OTHER_IMAGE,
						 v->source, sb_str(&m));
		sb_release(&m);
		return err;
	}
	if (!e && (spec_set_catalog(c->set, v->name) || spec_known(c->set, v->name)))
		return 0;
	if (r)
		err = sb_addf(&m, "%s: only %s reads this name, and a %s run does not "
			      "use it", v->name, r->title, c->s->backend);
	else if (sev == DIAG_WARNING && (sug = suggest_name(c, v->name)))
		err = sb_addf(&m, "%s: nothing reads this name; did you mean %s?", v->name, sug);
	else if (names_prefix_reader(c->nm, v->name))
		err = sb_addf(&m, "nothing is known to read %s", v->name);
	else
		return 0;
	if (!err)
		err = diag_at_var_source(&c->s->diags,
					 r ? (sev == DIAG_WARNING ? DC_NAME_OTHER_FRAMEWORK
								  : DC_NAME_OTHER_IMAGE) :
					 sug ? DC_NAME_MISSPELLED : DC_NAME_PREFIX_ONLY,
					 v->source, sb_str(&m));
	sb_release(&m);
	return err;
}

/* ---- XLA flags -------------------------------------------------------------- */

static bool xla_bool(const char *v, size_t n)
{
	return (n == 1 && (*v == '0' || *v == '1')) || (n == 4 && !strncasecmp(v, "true", 4)) ||
	       (n == 5 && !strncasecmp(v, "false", 5));
}

/* The flag closest to name within the bound, or NULL. */
static const char *suggest_flag(const struct names *nm, const char *name, size_t n)
{
	struct best b = { NULL, (size_t)-1, text_char_mask(name, n) };
	char *copy = xstrndup(name, n);
	size_t k;

	/* No memory for the copy: no suggestion, the warning still stands. */
	for (k = 0; copy && k < nm->nflags; k++) {
		size_t m = strlen(nm->flags[k].name);

		if ((m > n ? m - n : n - m) <= bound(n))
			consider(&b, copy, n, nm->flags[k].name, m, nm->flags[k].mask);
	}
	free(copy);
	return b.name;
}

/* True the first time tok is seen in this directory: XLA_FLAGS carries
 * XLA_FLAGS_APPEND's tokens again, and one mistake is reported once.
 * c->checked holds "\ntok\n" for every token seen. */
static int first_time(struct nctx *c, const char *tok, size_t n, bool *first)
{
	struct strbuf key = STRBUF_INIT;
	int err;

	if ((err = sb_addc(&key, '\n')) < 0 || (err = sb_add(&key, tok, n)) < 0 ||
	    (err = sb_addc(&key, '\n')) < 0)
		goto out;
	*first = !c->checked.len || !memmem(c->checked.buf, c->checked.len, key.buf, key.len);
	if (*first)
		err = sb_add(&c->checked, key.buf + (c->checked.len ? 1 : 0),
			     key.len - (c->checked.len ? 1 : 0));
out:
	sb_release(&key);
	return err < 0 ? err : 0;
}

/* Where tok was written: the source of the part of v's flag list that
 * gave it (an --env-file's line, the config's, the spec's managed list),
 * else v's own. */
static const char *token_source(const struct snap_var *v, const char *tok, size_t n)
{
	uint32_t k;

	for (k = 0; v->flags && k < v->nflags; k++)
		if (v->flags[k].source && strlen(v->flags[k].token) == n &&
		    !memcmp(v->flags[k].token, tok, n))
			return v->flags[k].source;
	return v->source;
}

static int check_token(struct nctx *c, const struct snap_var *v, const char *tok, size_t n)
{
	const char *eq = memchr(tok, '=', n), *name = tok + 2, *sug;
	size_t nlen = (size_t)((eq ? eq : tok + n) - name);
	const struct xla_flag *f;
	struct strbuf m = STRBUF_INIT;
	enum diag_code code = DC_XLA_TOKEN_SHAPE;
	bool first;
	int err;

	if ((err = first_time(c, tok, n, &first)) < 0 || !first)
		return err;
	if (n < 7 || strncmp(tok, "--xla_", 6)) {
		const char *bare = tok;
		size_t bn;

		while (bare < tok + n && *bare == '-')
			bare++;
		bn = (size_t)((eq ? eq : tok + n) - bare);
		/* A secret list's token may be a piece of its value: not shown. */
		err = v->secret ? sb_addf(&m, "%s: a token (not shown: the list is secret) is not "
					  "of the form --xla_NAME[=VALUE]", v->name)
				: sb_addf(&m, "%s: '%.*s' is not of the form --xla_NAME[=VALUE]",
					  v->name, (int)n, tok);
		if (!err && !v->secret && bn && names_xla_flag(c->nm, bare, bn))
			err = sb_addf(&m, "; did you mean --%.*s?", (int)(tok + n - bare), bare);
	} else if (!(f = names_xla_flag(c->nm, name, nlen))) {
		code = DC_XLA_FLAG_UNKNOWN;
		err = sb_addf(&m, "%s: XLA defines no flag --%.*s", v->name, (int)nlen, name);
		if (!err && (sug = suggest_flag(c->nm, name, nlen)))
			err = sb_addf(&m, "; did you mean --%s?", sug);
	} else if (f->boolean && eq && !xla_bool(eq + 1, (size_t)(tok + n - eq - 1))) {
		code = DC_XLA_FLAG_NOT_BOOL;
		err = v->secret ? sb_addf(&m, "%s: --%s is a boolean flag and its value (not shown: "
					  "the list is secret) is not true, false, 1 or 0; XLA "
					  "refuses it", v->name, f->name)
				: sb_addf(&m, "%s: --%s is a boolean flag and '%.*s' is not true, "
					  "false, 1 or 0; XLA refuses it", v->name, f->name,
					  (int)(tok + n - eq - 1), eq + 1);
	} else {
		return 0;
	}
	if (!err)
		err = diag_at_var_source(&c->s->diags, code, token_source(v, tok, n), sb_str(&m));
	sb_release(&m);
	return err;
}

static int check_flags(struct nctx *c, const char *name)
{
	const struct snap_var *v = snapshot_find(c->s, name, strlen(name));
	const char *p, *end, *tok;
	size_t len, key_len;
	int err = 0;

	/* A secret list is checked too, by its flags' names alone (a flag's
	 * name is XLA's, its value may be the secret). */
	if (!v || !v->set || !v->value || !c->nm->nflags)
		return 0;
	for (p = v->value, end = v->value + v->value_len;
	     !err && flag_token_next(&p, end, &tok, &len, &key_len);)
		err = check_token(c, v, tok, len);
	return err;
}

/* ---- a --env value the config replaces -------------------------------------- */

/* The "cli=value" line of v->shadowed: the --env value that lost. */
static const char *cli_shadowed(const struct snap_var *v, size_t *len)
{
	const char *p = v->shadowed;

	for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (!strncmp(p, "cli=", 4)) {
			*len = strcspn(p + 4, "\n");
			return p + 4;
		}
	return NULL;
}

static int check_cli_replaced(struct nctx *c, const struct snap_var *v)
{
	struct strbuf m = STRBUF_INIT;
	const char *old;
	size_t n = 0;
	int err;

	if (!v->set || v->layer != LAYER_CONFIG || v->is_flags || !(old = cli_shadowed(v, &n)))
		return 0;
	if (!v->secret && n == v->value_len && !memcmp(old, v->value, n))
		return 0;
	if (v->secret)
		err = sb_addf(&m, "%s: the --env value is replaced by the config env: block "
			      "(step 5); the run gets the config's", v->name);
	else
		err = sb_addf(&m, "%s: the --env value '%.*s' is replaced by the config env: "
			      "block (step 5); the run gets '%.*s'", v->name, (int)n, old,
			      (int)v->value_len, v->value);
	if (!err)
		err = diag_at_var_source(&c->s->diags, DC_CLI_REPLACED_BY_CONFIG, v->source,
					 sb_str(&m));
	sb_release(&m);
	return err;
}

int names_check_snapshot(const struct spec_set *set, const struct spec *backend,
			 const struct spec *runner, struct snapshot *s)
{
	struct nctx c = { set, set ? set->names : NULL, backend, runner, s, STRBUF_INIT };
	size_t i;
	int err = 0;

	if (!set)
		return 0;
	for (i = 0; i < s->nvars && !err; i++) {
		const struct snap_var *v = &s->vars[i];
		int sev = user_severity(v);

		if ((err = check_cli_replaced(&c, v)) < 0)
			break;
		if (sev >= 0 && c.nm)
			err = check_name(&c, v, sev);
	}
	if (!err && c.nm && !(err = check_flags(&c, "XLA_FLAGS_APPEND")))
		err = check_flags(&c, "XLA_FLAGS");
	sb_release(&c.checked);
	return err;
}
