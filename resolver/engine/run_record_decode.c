/* Reading a run record back (run_record.h, json.h), for `diff`.
 * Strict: a document that is not a record of a version this program
 * knows is refused with the reason, never half read. */
#include "run_record_decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "grow.h"
#include "json.h"
#include "strbuf.h"
#include "text.h"

#define FAIL(...) do { if (msglen) snprintf(msg, msglen, __VA_ARGS__); err = -EPROTO; \
		       goto out; } while (0)

static const struct json_value *array_of(const struct json_value *o, const char *key)
{
	const struct json_value *f;

	if (!json_get_ex(o, key, &f) || !json_is(f, JSON_ARRAY))
		return NULL;
	return f;
}

/* "value"/"value_b64" or null: NULL when null or absent. */
static int value_field(struct arena *a, const struct json_value *o, char **out, size_t *len)
{
	const struct json_value *f;
	int err;

	*out = NULL;
	*len = 0;
	if (json_get_ex(o, "value", &f) && !f)
		return 0;
	err = json_field_bytes_in(o, "value", a, out, len);
	return err == -ENOENT ? 0 : err;
}

static int take_flags(struct arena *ar, const struct json_value *o, struct rr_var *v)
{
	const struct json_value *a = array_of(o, "flags");
	size_t k, n;
	int err = 0;

	if (!a)
		return 0;
	v->is_flags = true;
	n = json_length(a);
	if (n && !(v->flags = arena_alloc(ar, n * sizeof(*v->flags))))
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		const struct json_value *f = json_at(a, k);
		struct rr_flag *rf = &v->flags[k];

		if (!json_is(f, JSON_OBJECT))
			return -EPROTO;
		v->nflags++;
		if ((err = json_field_string_in(f, "flag", ar, &rf->flag)) < 0 ||
		    (err = json_field_bytes_in(f, "token", ar, &rf->token, &rf->token_len)) < 0 ||
		    (err = json_field_string_in(f, "layer", ar, &rf->layer)) < 0)
			return err;
		if (!rf->flag)
			return -EPROTO;
	}
	return 0;
}

static int take_var(struct arena *a, const struct json_value *o, struct rr_var *v)
{
	int err;

	if (!json_is(o, JSON_OBJECT))
		return -EPROTO;
	if ((err = json_field_bytes_in(o, "name", a, &v->name, &v->name_len)) < 0 ||
	    (err = value_field(a, o, &v->value, &v->value_len)) < 0 ||
	    (err = json_field_bool(o, "set", &v->set)) < 0 ||
	    (err = json_field_bool(o, "exported", &v->exported)) < 0 ||
	    (err = json_field_bool(o, "secret", &v->secret)) < 0 ||
	    (err = json_field_string_in(o, "layer", a, &v->layer)) < 0 ||
	    (err = json_field_string_in(o, "source", a, &v->source)) < 0)
		return err == -ENOENT ? -EPROTO : err;
	return take_flags(a, o, v);
}

static int take_diag(struct arena *a, const struct json_value *o, struct rr_diag *d)
{
	int64_t line = 0, col = 0;
	int err;

	if (!json_is(o, JSON_OBJECT))
		return -EPROTO;
	if ((err = json_field_string_in(o, "severity", a, &d->severity)) < 0 ||
	    (err = json_field_string_in(o, "code", a, &d->code)) < 0 ||
	    (err = json_field_string_in(o, "file", a, &d->file)) < 0 ||
	    (err = json_field_string_in(o, "message", a, &d->message)) < 0 ||
	    /* null (no place) reads as 0, as it was written from */
	    (err = json_field_i64(o, "line", &line)) < 0 ||
	    (err = json_field_i64(o, "column", &col)) < 0)
		return err;
	if ((err = json_field_bool(o, "silenced", &d->silenced)) < 0)
		return err;
	if (!d->severity || !d->message || line < 0 || col < 0 || line > UINT32_MAX ||
	    col > UINT32_MAX)
		return -EPROTO;
	d->line = (unsigned)line;
	d->column = (unsigned)col;
	return 0;
}

/* The large arrays, read item by item as they are parsed (json.h's
 * stream): "environ" is the variables' values again, checked as JSON and
 * not kept. */
static const char *const streamed[] = { "variables", "diagnostics", "environ", NULL };
enum { S_VARIABLES, S_DIAGNOSTICS, S_ENVIRON };

/* Whether a member of a variable is one take_var reads: the rest
 * ("layers", "shadowed", "default") is checked as JSON and not kept. */
static bool var_field(const char *m, size_t n)
{
#define IS(s) (n == sizeof(s) - 1 && !memcmp(m, s, n))
	switch (n ? m[0] : 0) {
	case 'n': return IS("name") || IS("name_b64");
	case 'v': return IS("value") || IS("value_b64");
	case 's': return IS("set") || IS("secret") || IS("source");
	case 'e': return IS("exported");
	case 'l': return IS("layer");
	case 'f': return IS("flags");
	default: return false;
	}
#undef IS
}

struct decoding {
	struct rr_doc *d;
	size_t vars_cap, diags_cap;
	/* The first item of the wrong shape, told after the document's other
	 * faults as the tree's decoder told it. */
	bool vars_bad, diags_bad;
};

static int stream_begin(void *ctx, size_t key)
{
	struct decoding *c = ctx;

	/* A repeated key: its last array is the one read. What an earlier
	 * one held is freed with the document. */
	if (key == S_VARIABLES) {
		rr_doc_drop_vars(c->d);
		c->vars_bad = false;
	} else if (key == S_DIAGNOSTICS) {
		rr_doc_drop_diags(c->d);
		c->diags_bad = false;
	}
	return 0;
}

static int stream_item(void *ctx, size_t key, const struct json_value *v)
{
	struct decoding *c = ctx;
	struct rr_doc *d = c->d;
	int err = 0;

	if (key == S_VARIABLES && !c->vars_bad) {
		if ((err = GROW(d->vars, c->vars_cap, d->nvars, 64)) < 0)
			return err;
		memset(&d->vars[d->nvars], 0, sizeof(*d->vars));
		err = take_var(d->arena, v, &d->vars[d->nvars++]);
		c->vars_bad = err < 0;
	} else if (key == S_DIAGNOSTICS && !c->diags_bad) {
		if ((err = GROW(d->diags, c->diags_cap, d->ndiags, 8)) < 0)
			return err;
		memset(&d->diags[d->ndiags], 0, sizeof(*d->diags));
		err = take_diag(d->arena, v, &d->diags[d->ndiags++]);
		c->diags_bad = err < 0;
	}
	return err == -ENOMEM ? err : 0;
}

static bool stream_keep(void *ctx, size_t key, const char *member, size_t len)
{
	(void)ctx;
	return key == S_DIAGNOSTICS || (key == S_VARIABLES && var_field(member, len));
}

static int var_ptr_cmp(const void *a, const void *b)
{
	return rr_var_name_cmp(*(const struct rr_var *const *)a, *(const struct rr_var *const *)b);
}

/* The first name d's variables hold more than once, or NULL: which of two
 * entries is the record's value is not for a reader to guess. A record
 * is written sorted, so the usual check is one pass; a hand-made one in
 * another order is sorted aside. *err is -ENOMEM when that failed. */
static const struct rr_var *repeated(const struct rr_doc *d, int *err)
{
	const struct rr_var **v, *r = NULL;
	size_t k;

	*err = 0;
	for (k = 1; k < d->nvars && rr_var_name_cmp(&d->vars[k - 1], &d->vars[k]) < 0; k++)
		;
	if (d->nvars < 2 || k == d->nvars)
		return NULL;
	if (!(v = malloc(d->nvars * sizeof(*v)))) {
		*err = -ENOMEM;
		return NULL;
	}
	for (k = 0; k < d->nvars; k++)
		v[k] = &d->vars[k];
	qsort(v, d->nvars, sizeof(*v), var_ptr_cmp);
	for (k = 1; k < d->nvars && !r; k++)
		if (!rr_var_name_cmp(v[k - 1], v[k]))
			r = v[k];
	free(v);
	return r;
}

int run_record_decode(const char *p, size_t n, struct rr_doc **out, char *msg, size_t msglen)
{
	const struct rr_var *dup;
	struct strbuf shown = STRBUF_INIT;
	struct json_value *o = NULL;
	const struct json_value *f;
	struct decoding c = { 0 };
	struct json_stream st = { streamed, stream_begin, stream_item, stream_keep, &c };
	const char *fmt;
	int64_t version = 0;
	int err;

	*out = NULL;
	if (!(c.d = rr_doc_new())) {
		err = -ENOMEM;
		goto out;
	}
	/* Out of memory is said as that (at out), not as a file that is not
	 * JSON: a large valid one takes many times its size to parse. */
	if ((err = json_parse_stream(p, n, &st, &o)) == -ENOMEM)
		goto out;
	if (err < 0)
		FAIL("not a JSON object");
	if (!json_get_ex(o, "format", &f) ||
	    !json_is(f, JSON_STRING) ||
	    strcmp((fmt = f->s), "primus-envfs-record"))
		FAIL("not a primus-envfs run record (no \"format\": \"primus-envfs-record\")");
	if ((err = json_field_i64(o, "version", &version)) < 0 || version < 1)
		FAIL("the record has no valid \"version\"");
	if (version > RUN_RECORD_VERSION)
		FAIL("the record is of version %lld; this program reads up to %d",
		     (long long)version, RUN_RECORD_VERSION);
	c.d->version = (int)version;
	if ((err = json_field_string_in(o, "backend", c.d->arena, &c.d->backend)) < 0 ||
	    (err = json_field_string_in(o, "arch", c.d->arena, &c.d->arch)) < 0 ||
	    (err = json_field_string_in(o, "digest", c.d->arena, &c.d->digest)) < 0)
		goto bad;
	if (json_get_ex(o, "program", &f) &&
	    json_is(f, JSON_OBJECT) &&
	    (err = json_field_string_in(f, "version", c.d->arena, &c.d->program_version)) < 0)
		goto bad;
	if (json_get_ex(o, "specs", &f) && json_is(f, JSON_OBJECT) &&
	    (err = json_field_string_in(f, "sha256", c.d->arena, &c.d->specs_sha256)) < 0)
		goto bad;
	if (!c.d->backend || !c.d->arch)
		FAIL("the record names no backend and arch");
	if (!(f = array_of(o, "variables")))
		FAIL("the record has no \"variables\" array");
	err = -EPROTO;
	if (c.vars_bad)
		goto bad;
	if ((dup = repeated(c.d, &err)) || err == -ENOMEM) {
		if (err == -ENOMEM)
			goto out;
		if (text_escape_max(&shown, dup->name, dup->name_len, 128) < 0) {
			err = -ENOMEM;
			goto out;
		}
		FAIL("the record names the variable %s more than once", sb_str(&shown));
	}
	err = -EPROTO;
	/* Diagnostics of another shape than an array were never read. */
	if (array_of(o, "diagnostics") && c.diags_bad)
		goto bad;
	if (!array_of(o, "diagnostics"))
		rr_doc_drop_diags(c.d);
	*out = c.d;
	c.d = NULL;
	err = 0;
	goto out;
bad:
	if (err == -ENOMEM)
		goto out;
	FAIL("a field of the record has the wrong shape");
out:
	if (err == -ENOMEM && msglen)
		snprintf(msg, msglen, "out of memory");
	sb_release(&shown);
	json_free(o);
	rr_doc_free(c.d);
	return err;
}
