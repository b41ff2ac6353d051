/* Reading a mount's history back (json.h), for `history` and
 * `diff gen:N`. Strict, as the record's decoder: a document that is not a
 * history of a version this program knows is refused with the reason. */
#include "history_decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"

#define FAIL(...) do { if (msglen) snprintf(msg, msglen, __VA_ARGS__); err = -EPROTO; \
		       goto out; } while (0)

static int take_value(const struct json_value *o, const char *key, struct hist_value *v)
{
	const struct json_value *s, *f;
	int err;

	if (!json_get_ex(o, key, &s) || !json_is(s, JSON_OBJECT) ||
	    !json_get_ex(s, "set", &f) || !json_is(f, JSON_BOOL))
		return -EPROTO;
	v->set = f->b;
	if (!(json_get_ex(s, "value", &f) && !f)) {
		err = json_field_bytes(s, "value", &v->value, &v->len);
		if (err < 0 && err != -ENOENT)
			return err;
	}
	if ((err = json_field_string(s, "layer", &v->layer)) < 0 ||
	    (err = json_field_string(s, "source", &v->source)) < 0)
		return err;
	return 0;
}

static int take_change(const struct json_value *o, struct hist_change *c)
{
	const struct json_value *f;
	size_t len;
	int err;

	if (!json_is(o, JSON_OBJECT))
		return -EPROTO;
	if ((err = json_field_string(o, "backend", &c->backend)) < 0 ||
	    (err = json_field_string(o, "arch", &c->arch)) < 0 ||
	    (err = json_field_bytes(o, "name", &c->name, &len)) < 0)
		return err == -ENOENT ? -EPROTO : err;
	if (!c->backend || !c->arch)
		return -EPROTO;
	if (json_get_ex(o, "secret", &f) && json_is(f, JSON_BOOL))
		c->secret = f->b;
	if ((err = take_value(o, "before", &c->before)) < 0 ||
	    (err = take_value(o, "after", &c->after)) < 0)
		return err;
	return 0;
}

/* "2026-12-01T10:02:11.123Z" */
static int take_time(const struct json_value *o, struct timespec *out)
{
	const struct json_value *f;
	struct tm tm = { 0 };
	const char *s, *end;
	long ms = 0;

	if (!json_get_ex(o, "time", &f) || !json_is(f, JSON_STRING))
		return -EPROTO;
	s = f->s;
	if (!(end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return -EPROTO;
	if (*end == '.' && sscanf(end + 1, "%3ld", &ms) != 1)
		return -EPROTO;
	out->tv_sec = timegm(&tm);
	out->tv_nsec = ms * 1000000;
	return 0;
}

static int take_gen(const struct json_value *o, struct hist_gen *g)
{
	const struct json_value *f, *a;
	int64_t v = 0;
	size_t k, n;
	int err;

	if (!json_is(o, JSON_OBJECT))
		return -EPROTO;
	if ((err = json_field_i64(o, "generation", &v)) < 0 || v < 0)
		return -EPROTO;
	g->generation = (uint64_t)v;
	if ((err = take_time(o, &g->when)) < 0)
		return err;
	if (!json_get_ex(o, "cause", &f) || !json_is(f, JSON_STRING) ||
	    hist_cause_from_name(f->s, &g->cause) < 0)
		return -EPROTO;
	if (json_get_ex(o, "uid", &f) && f) {
		if ((err = json_field_i64(o, "uid", &v)) < 0 || v < 0 || v > UINT32_MAX)
			return -EPROTO;
		g->uid = (uint32_t)v;
		if ((err = json_field_i64(o, "pid", &v)) < 0 || v < 0 || v > INT32_MAX)
			return -EPROTO;
		g->pid = (int32_t)v;
		g->has_writer = true;
	}
	if ((err = json_field_string(o, "node", &g->node)) < 0)
		return err;
	if (!json_get_ex(o, "changes", &a) || !json_is(a, JSON_ARRAY))
		return -EPROTO;
	n = json_length(a);
	if (n && !(g->changes = calloc(n, sizeof(*g->changes))))
		return -ENOMEM;
	g->cap = n;
	for (k = 0; k < n; k++) {
		g->nchanges++;
		if ((err = take_change(json_at(a, k), &g->changes[k])) < 0)
			return err;
	}
	return 0;
}

int history_decode(const char *p, size_t n, struct hist_gen **out, size_t *nout,
		   size_t *keep, char *msg, size_t msglen)
{
	struct json_value *o = NULL;
	const struct json_value *f, *a;
	struct hist_gen *v = NULL;
	int64_t version = 0, k64 = 0;
	size_t k, len = 0, got = 0;
	int err;

	*out = NULL;
	*nout = 0;
	/* Out of memory is said as that (at out), not as a file that is not
	 * JSON: a large valid one takes many times its size to parse. */
	if ((err = json_parse(p, n, &o)) == -ENOMEM)
		goto out;
	if (err < 0)
		FAIL("not a JSON object");
	if (!json_get_ex(o, "format", &f) || !json_is(f, JSON_STRING) ||
	    strcmp(f->s, "primus-envfs-history"))
		FAIL("not a primus-envfs history (no \"format\": \"primus-envfs-history\")");
	if ((err = json_field_i64(o, "version", &version)) < 0 || version < 1)
		FAIL("the history has no valid \"version\"");
	if (version > HISTORY_VERSION)
		FAIL("the history is of version %lld; this program reads up to %d",
		     (long long)version, HISTORY_VERSION);
	if ((err = json_field_i64(o, "keep", &k64)) < 0 || k64 < 0)
		FAIL("the history has no valid \"keep\"");
	*keep = (size_t)k64;
	if (!json_get_ex(o, "generations", &a) || !json_is(a, JSON_ARRAY))
		FAIL("the history has no \"generations\" array");
	len = json_length(a);
	err = -ENOMEM;
	if (!(v = calloc(len ? len : 1, sizeof(*v))))
		goto out;
	for (k = 0; k < len; k++) {
		got++;
		if ((err = take_gen(json_at(a, k), &v[k])) < 0) {
			if (err == -ENOMEM)
				goto out;
			FAIL("generation %zu of the history has the wrong shape", k + 1);
		}
	}
	*out = v;
	*nout = len;
	v = NULL;
	err = 0;
out:
	if (err == -ENOMEM && msglen)
		snprintf(msg, msglen, "out of memory");
	hist_gens_free(v, got);
	json_free(o);
	return err;
}
