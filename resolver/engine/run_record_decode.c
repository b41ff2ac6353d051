/* Reading a run record back (run_record.h, json.h), for `diff`.
 * Strict: a document that is not a record of a version this program
 * knows is refused with the reason, never half read. */
#include "run_record_decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

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
static int value_field(const struct json_value *o, char **out, size_t *len)
{
	const struct json_value *f;
	int err;

	*out = NULL;
	*len = 0;
	if (json_get_ex(o, "value", &f) && !f)
		return 0;
	err = json_field_bytes(o, "value", out, len);
	return err == -ENOENT ? 0 : err;
}

static int take_flags(const struct json_value *o, struct rr_var *v)
{
	const struct json_value *a = array_of(o, "flags");
	size_t k, n;
	int err = 0;

	if (!a)
		return 0;
	v->is_flags = true;
	n = json_length(a);
	if (n && !(v->flags = calloc(n, sizeof(*v->flags))))
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		const struct json_value *f = json_at(a, k);
		struct rr_flag *rf = &v->flags[k];

		if (!json_is(f, JSON_OBJECT))
			return -EPROTO;
		v->nflags++;
		if ((err = json_field_string(f, "flag", &rf->flag)) < 0 ||
		    (err = json_field_bytes(f, "token", &rf->token, &rf->token_len)) < 0 ||
		    (err = json_field_string(f, "layer", &rf->layer)) < 0)
			return err;
		if (!rf->flag)
			return -EPROTO;
	}
	return 0;
}

static int take_var(const struct json_value *o, struct rr_var *v)
{
	int err;

	if (!json_is(o, JSON_OBJECT))
		return -EPROTO;
	if ((err = json_field_bytes(o, "name", &v->name, &v->name_len)) < 0 ||
	    (err = value_field(o, &v->value, &v->value_len)) < 0 ||
	    (err = json_field_bool(o, "set", &v->set)) < 0 ||
	    (err = json_field_bool(o, "exported", &v->exported)) < 0 ||
	    (err = json_field_bool(o, "secret", &v->secret)) < 0 ||
	    (err = json_field_string(o, "layer", &v->layer)) < 0 ||
	    (err = json_field_string(o, "source", &v->source)) < 0)
		return err == -ENOENT ? -EPROTO : err;
	return take_flags(o, v);
}

static int take_diag(const struct json_value *o, struct rr_diag *d)
{
	int64_t line = 0, col = 0;
	int err;

	if (!json_is(o, JSON_OBJECT))
		return -EPROTO;
	if ((err = json_field_string(o, "severity", &d->severity)) < 0 ||
	    (err = json_field_string(o, "code", &d->code)) < 0 ||
	    (err = json_field_string(o, "file", &d->file)) < 0 ||
	    (err = json_field_string(o, "message", &d->message)) < 0 ||
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

int run_record_decode(const char *p, size_t n, struct rr_doc **out, char *msg, size_t msglen)
{
	struct json_value *o = NULL;
	const struct json_value *a, *f;
	struct rr_doc *d = NULL;
	const char *fmt;
	int64_t version = 0;
	size_t k, len;
	int err;

	*out = NULL;
	/* Out of memory is said as that (at out), not as a file that is not
	 * JSON: a large valid one takes many times its size to parse. */
	if ((err = json_parse(p, n, &o)) == -ENOMEM)
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
	err = -ENOMEM;
	if (!(d = calloc(1, sizeof(*d))))
		goto out;
	d->version = (int)version;
	if ((err = json_field_string(o, "backend", &d->backend)) < 0 ||
	    (err = json_field_string(o, "arch", &d->arch)) < 0 ||
	    (err = json_field_string(o, "digest", &d->digest)) < 0)
		goto bad;
	if (json_get_ex(o, "program", &f) &&
	    json_is(f, JSON_OBJECT) &&
	    (err = json_field_string(f, "version", &d->program_version)) < 0)
		goto bad;
	if (json_get_ex(o, "specs", &f) && json_is(f, JSON_OBJECT) &&
	    (err = json_field_string(f, "sha256", &d->specs_sha256)) < 0)
		goto bad;
	if (!d->backend || !d->arch)
		FAIL("the record names no backend and arch");
	if (!(a = array_of(o, "variables")))
		FAIL("the record has no \"variables\" array");
	len = json_length(a);
	err = -ENOMEM;
	if (len && !(d->vars = calloc(len, sizeof(*d->vars))))
		goto out;
	for (k = 0; k < len; k++) {
		d->nvars++;
		if ((err = take_var(json_at(a, k), &d->vars[k])) < 0)
			goto bad;
	}
	if ((a = array_of(o, "diagnostics"))) {
		len = json_length(a);
		err = -ENOMEM;
		if (len && !(d->diags = calloc(len, sizeof(*d->diags))))
			goto out;
		for (k = 0; k < len; k++) {
			d->ndiags++;
			if ((err = take_diag(json_at(a, k), &d->diags[k])) < 0)
				goto bad;
		}
	}
	*out = d;
	d = NULL;
	err = 0;
	goto out;
bad:
	if (err == -ENOMEM)
		goto out;
	FAIL("a field of the record has the wrong shape");
out:
	if (err == -ENOMEM && msglen)
		snprintf(msg, msglen, "out of memory");
	json_free(o);
	rr_doc_free(d);
	return err;
}
