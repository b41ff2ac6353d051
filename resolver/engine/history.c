/* history: the last generations of a mount; see history.h. */
#include "grow.h"
#include "history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "layer.h"
#include "text.h"

static const char *const cause_names[HIST_CAUSE_COUNT] = {
	[HIST_START] = "start", [HIST_WRITE] = "write", [HIST_RM] = "rm",
	[HIST_MV] = "mv", [HIST_RELOAD] = "reload", [HIST_SYNC] = "sync",
};

const char *hist_cause_name(enum hist_cause c)
{
	return (unsigned)c < HIST_CAUSE_COUNT ? cause_names[c] : NULL;
}

int hist_cause_from_name(const char *name, enum hist_cause *out)
{
	int k;

	for (k = 0; k < HIST_CAUSE_COUNT; k++)
		if (!strcmp(name, cause_names[k])) {
			*out = (enum hist_cause)k;
			return 0;
		}
	return -EINVAL;
}

int history_init(struct history *h, size_t keep)
{
	memset(h, 0, sizeof(*h));
	if (!keep || keep > HISTORY_MAX_KEEP)
		return -EINVAL;
	if (!(h->ring = calloc(keep, sizeof(*h->ring))))
		return -ENOMEM;
	h->cap = keep;
	return 0;
}

static void value_release(struct hist_value *v)
{
	free(v->value);
	free(v->layer);
	free(v->source);
}

void hist_gen_release(struct hist_gen *g)
{
	size_t k;

	for (k = 0; k < g->nchanges; k++) {
		struct hist_change *c = &g->changes[k];

		free(c->backend);
		free(c->arch);
		free(c->name);
		value_release(&c->before);
		value_release(&c->after);
	}
	free(g->changes);
	free(g->node);
	memset(g, 0, sizeof(*g));
}

void hist_gens_free(struct hist_gen *v, size_t n)
{
	size_t k;

	for (k = 0; v && k < n; k++)
		hist_gen_release(&v[k]);
	free(v);
}

void history_release(struct history *h)
{
	size_t k;

	for (k = 0; k < h->n; k++)
		hist_gen_release(&h->ring[(h->start + k) % h->cap]);
	free(h->ring);
	memset(h, 0, sizeof(*h));
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int copy_value(struct hist_value *dst, const struct hist_value *src, bool secret)
{
	memset(dst, 0, sizeof(*dst));
	dst->set = src->set;
	if (src->value && !secret) {
		if (!(dst->value = malloc(src->len + 1)))
			return -ENOMEM;
		memcpy(dst->value, src->value, src->len);
		dst->value[src->len] = '\0';
		dst->len = src->len;
	}
	if ((src->layer && !(dst->layer = strdup(src->layer))) ||
	    (src->source && !(dst->source = strdup(src->source))))
		return -ENOMEM;
	return 0;
}

int hist_gen_add(struct hist_gen *g, const char *backend, const char *arch,
		 const char *name, bool secret, const struct hist_value *before,
		 const struct hist_value *after)
{
	struct hist_change *c;
	int err;

	if (GROW(g->changes, g->cap, g->nchanges, 4) < 0)
		return -ENOMEM;
	c = &g->changes[g->nchanges];
	memset(c, 0, sizeof(*c));
	/* Counted first, so a half-built change is released with the rest. */
	g->nchanges++;
	c->secret = secret;
	if (!(c->backend = dup_or_null(backend)) || !(c->arch = dup_or_null(arch)) ||
	    !(c->name = dup_or_null(name)))
		return -ENOMEM;
	if ((err = copy_value(&c->before, before, secret)) < 0 ||
	    (err = copy_value(&c->after, after, secret)) < 0)
		return err;
	return 0;
}

/* What the run holds: a create not shared yet (pending) is not the
 * run's, and was not set before it was made (a create makes only a name
 * that is not there); its first close is its change. */
static bool run_has(const struct snap_var *v)
{
	return v && v->set && !v->pending;
}

static void side_of(const struct snap_var *v, struct hist_value *out)
{
	memset(out, 0, sizeof(*out));
	if (!run_has(v))
		return;
	out->set = true;
	out->value = (char *)v->value;
	out->len = v->value_len;
	out->layer = (char *)layer_name((enum layer)v->layer);
	out->source = (char *)v->source;
}

static int var_cmp(const struct snap_var *a, const struct snap_var *b)
{
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(a->name, b->name, n);

	return c ? c : (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

static bool same(const struct snap_var *a, const struct snap_var *b)
{
	bool as = run_has(a), bs = run_has(b);

	if (as != bs)
		return false;
	if (!as)
		return true;
	/* The same value from another layer is a change: an override that
	 * writes the value the run had pins it (a later config no longer
	 * reaches it), and a config that takes over a default owns it. */
	return a->value_len == b->value_len && a->layer == b->layer &&
	       (!a->value_len || !memcmp(a->value, b->value, a->value_len));
}

static int note(struct hist_gen *g, const struct snapshot *dir, const struct snap_var *a,
		const struct snap_var *b)
{
	struct hist_value before, after;
	const struct snap_var *v = a ? a : b;

	if (same(a, b))
		return 0;
	side_of(a, &before);
	side_of(b, &after);
	return hist_gen_add(g, dir->backend, dir->arch, v->name, (a && a->secret) || (b && b->secret),
			    &before, &after);
}

int hist_gen_compare(struct hist_gen *g, const struct snapshot *old, const struct snapshot *new)
{
	const struct snapshot *dir = old ? old : new;
	size_t i = 0, j = 0, na = old ? old->nvars : 0, nb = new ? new->nvars : 0;
	int err = 0;

	if (old == new)
		return 0;
	while (!err && (i < na || j < nb)) {
		int c = i == na ? 1 : j == nb ? -1 : var_cmp(&old->vars[i], &new->vars[j]);

		if (c < 0)
			err = note(g, dir, &old->vars[i++], NULL);
		else if (c > 0)
			err = note(g, dir, NULL, &new->vars[j++]);
		else
			err = note(g, dir, &old->vars[i++], &new->vars[j++]);
	}
	return err;
}

void history_push(struct history *h, struct hist_gen *g)
{
	struct hist_gen *slot;

	if (!g->nchanges && g->cause != HIST_START) {
		hist_gen_release(g);
		return;
	}
	if (h->n == h->cap) {
		hist_gen_release(&h->ring[h->start]);
		h->start = (h->start + 1) % h->cap;
		h->n--;
	}
	slot = &h->ring[(h->start + h->n) % h->cap];
	*slot = *g;
	memset(g, 0, sizeof(*g));
	h->n++;
}

static bool drop_value(struct hist_value *v)
{
	bool had = v->value != NULL;

	free(v->value);
	v->value = NULL;
	v->len = 0;
	return had;
}

size_t history_redact(struct history *h,
		      bool (*is_secret)(void *ctx, const char *backend, const char *arch,
					const char *name),
		      void *ctx)
{
	size_t k, j, n = 0;

	for (k = 0; k < h->n; k++) {
		struct hist_gen *g = &h->ring[(h->start + k) % h->cap];

		for (j = 0; j < g->nchanges; j++) {
			struct hist_change *c = &g->changes[j];
			bool a, b;

			if (c->secret || !is_secret(ctx, c->backend, c->arch, c->name))
				continue;
			c->secret = true;
			a = drop_value(&c->before);
			b = drop_value(&c->after);
			n += a || b;
		}
	}
	return n;
}

const struct hist_gen *history_at(const struct history *h, size_t i)
{
	return i < h->n ? &h->ring[(h->start + i) % h->cap] : NULL;
}

static int json_str(struct strbuf *out, const char *s)
{
	return s ? json_add_string(out, s, strlen(s)) : sb_adds(out, "null");
}

static int json_value(struct strbuf *out, const char *key, const struct hist_value *v)
{
	int err;

	if ((err = sb_addf(out, ",\"%s\":{\"set\":%s", key, v->set ? "true" : "false")) < 0)
		return err;
	if (v->value)
		err = json_add_field(out, false, "value", v->value, v->len);
	else
		err = sb_adds(out, ",\"value\":null");
	if (err < 0 || (err = sb_adds(out, ",\"layer\":")) < 0 ||
	    (err = json_str(out, v->layer)) < 0 || (err = sb_adds(out, ",\"source\":")) < 0 ||
	    (err = json_str(out, v->source)) < 0)
		return err;
	return sb_addc(out, '}');
}

static bool passes(const struct hist_filter *f, const struct hist_change *c)
{
	return !f || ((!f->backend || !strcmp(f->backend, c->backend)) &&
		      (!f->arch || !strcmp(f->arch, c->arch)) &&
		      (!f->name || !strcmp(f->name, c->name)));
}

static bool any_passes(const struct hist_filter *f, const struct hist_gen *g)
{
	size_t k;

	for (k = 0; k < g->nchanges; k++)
		if (passes(f, &g->changes[k]))
			return true;
	/* A start says when the values before the next change came to be. */
	return g->cause == HIST_START;
}

static void format_time(const struct timespec *t, char out[64])
{
	struct tm tm;

	gmtime_r(&t->tv_sec, &tm);
	snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 t->tv_nsec / 1000000);
}

static int json_gen(struct strbuf *out, const struct hist_gen *g, const struct hist_filter *f)
{
	char when[64];
	bool first = true;
	size_t k;
	int err;

	format_time(&g->when, when);
	if ((err = sb_addf(out, "{\"generation\":%llu,\"time\":\"%s\",\"cause\":\"%s\"",
			   (unsigned long long)g->generation, when, hist_cause_name(g->cause))) < 0)
		return err;
	err = g->has_writer ? sb_addf(out, ",\"uid\":%u,\"pid\":%d", g->uid, g->pid)
			    : sb_adds(out, ",\"uid\":null,\"pid\":null");
	if (err < 0 || (err = sb_adds(out, ",\"node\":")) < 0 || (err = json_str(out, g->node)) < 0 ||
	    (err = sb_adds(out, ",\"changes\":[")) < 0)
		return err;
	for (k = 0; k < g->nchanges; k++) {
		const struct hist_change *c = &g->changes[k];

		if (!passes(f, c))
			continue;
		if ((!first && (err = sb_addc(out, ',')) < 0) ||
		    (err = sb_adds(out, "{\"backend\":")) < 0 ||
		    (err = json_str(out, c->backend)) < 0 || (err = sb_adds(out, ",\"arch\":")) < 0 ||
		    (err = json_str(out, c->arch)) < 0 ||
		    (err = json_add_field(out, false, "name", c->name, strlen(c->name))) < 0 ||
		    (err = sb_addf(out, ",\"secret\":%s", c->secret ? "true" : "false")) < 0 ||
		    (err = json_value(out, "before", &c->before)) < 0 ||
		    (err = json_value(out, "after", &c->after)) < 0 || (err = sb_addc(out, '}')) < 0)
			return err;
		first = false;
	}
	return sb_adds(out, "]}");
}

int history_json(const struct hist_gen *const *gens, size_t n, size_t keep,
		 const struct hist_filter *f, struct strbuf *out)
{
	bool first = true;
	size_t k;
	int err;

	if ((err = sb_addf(out, "{\"format\":\"primus-envfs-history\",\"version\":%d,"
			   "\"keep\":%zu,\"generations\":[", HISTORY_VERSION, keep)) < 0)
		return err;
	for (k = 0; k < n; k++) {
		if (!any_passes(f, gens[k]))
			continue;
		if ((!first && (err = sb_addc(out, ',')) < 0) || (err = json_gen(out, gens[k], f)) < 0)
			return err;
		first = false;
	}
	return sb_adds(out, "]}\n");
}

static int text_value(struct strbuf *out, const struct hist_value *v, bool secret)
{
	int err;

	if (!v->set)
		return sb_adds(out, "(unset)");
	if (secret)
		err = sb_adds(out, "(secret)");
	else
		err = text_quote(out, v->value ? v->value : "", v->len, 512);
	if (err < 0)
		return err;
	if (!v->layer)
		return 0;
	/* The layer comes from the history file, or etcd: escaped, as the
	 * rest of the line is. */
	if ((err = sb_addc(out, ' ')) < 0)
		return err;
	return text_escape(out, v->layer, strlen(v->layer));
}

int history_text(const struct hist_gen *const *gens, size_t n, const struct hist_filter *f,
		 struct strbuf *out)
{
	size_t k, j;
	int err;

	for (k = 0; k < n; k++) {
		const struct hist_gen *g = gens[k];
		char when[64];

		if (!any_passes(f, g))
			continue;
		format_time(&g->when, when);
		if ((err = sb_addf(out, "gen %llu  %s  %s", (unsigned long long)g->generation, when,
				   hist_cause_name(g->cause))) < 0 ||
		    (g->has_writer && (err = sb_addf(out, "  uid %u pid %d", g->uid, g->pid)) < 0) ||
		    (g->node && ((err = sb_adds(out, "  node ")) < 0 ||
				 (err = text_escape(out, g->node, strlen(g->node))) < 0)) ||
		    (err = sb_addc(out, '\n')) < 0)
			return err;
		for (j = 0; j < g->nchanges; j++) {
			const struct hist_change *c = &g->changes[j];

			if (!passes(f, c))
				continue;
			if ((err = sb_adds(out, "  ")) < 0 ||
			    (err = text_escape(out, c->backend, strlen(c->backend))) < 0 ||
			    (err = sb_addc(out, '/')) < 0 ||
			    (err = text_escape(out, c->arch, strlen(c->arch))) < 0 ||
			    (err = sb_addc(out, ' ')) < 0 ||
			    (err = text_escape(out, c->name, strlen(c->name))) < 0 ||
			    (err = sb_adds(out, ": ")) < 0 ||
			    (err = text_value(out, &c->before, c->secret)) < 0 ||
			    (err = sb_adds(out, " -> ")) < 0 ||
			    (err = text_value(out, &c->after, c->secret)) < 0 ||
			    (err = sb_addc(out, '\n')) < 0)
				return err;
		}
	}
	return 0;
}

int history_render_json(const struct history *h, struct strbuf *out)
{
	const struct hist_gen **v = malloc((h->n ? h->n : 1) * sizeof(*v));
	size_t k;
	int err;

	if (!v)
		return -ENOMEM;
	for (k = 0; k < h->n; k++)
		v[k] = history_at(h, k);
	err = history_json(v, h->n, h->cap, NULL, out);
	free(v);
	return err;
}
