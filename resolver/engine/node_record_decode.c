/* Decoding node records (json.h); see node_record_decode.h. */
#include "node_record_decode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define FAIL(...) do { if (msglen) snprintf(msg, msglen, __VA_ARGS__); err = -EPROTO; \
		       goto out; } while (0)

static int get_hex(const struct json_value *o, const char *key, uint8_t out[SHA256_LEN])
{
	const struct json_value *f;
	const char *s;
	size_t k;

	if (!json_get_ex(o, key, &f))
		return -ENOENT;
	if (!json_is(f, JSON_STRING) || f->len != 2 * SHA256_LEN)
		return -EPROTO;
	s = f->s;
	for (k = 0; k < 2 * SHA256_LEN; k++) {
		int c = s[k], v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (v < 0)
			return -EPROTO;
		if (k % 2)
			out[k / 2] |= (uint8_t)v;
		else
			out[k / 2] = (uint8_t)(v << 4);
	}
	return 0;
}

static int get_u32(const struct json_value *o, const char *key, uint32_t *out)
{
	int64_t v;
	int err = json_field_i64(o, key, &v);

	if (err < 0)
		return err;
	if (v < 0 || v > UINT32_MAX)
		return -EPROTO;
	*out = (uint32_t)v;
	return 0;
}

/* An optional field of bytes: absent leaves *out NULL. */
static int get_opt_bytes(const struct json_value *o, const char *key, char **out)
{
	size_t len;
	int err = json_field_bytes(o, key, out, &len);

	return err == -ENOENT ? 0 : err;
}

/* A directory's "errors" (a list of strings, at most
 * NODE_RECORD_ERRORS_MAX) and "nerrors" (at least as many), both optional
 * together. */
static int get_errors(const struct json_value *d, struct node_dir_sum *ds)
{
	const struct json_value *a, *e;
	size_t k, n;

	if (!json_get_ex(d, "errors", &a))
		return json_get_ex(d, "nerrors", &e) ? -EPROTO : 0;
	if (!json_is(a, JSON_ARRAY) ||
	    (n = json_length(a)) > NODE_RECORD_ERRORS_MAX ||
	    get_u32(d, "nerrors", &ds->nerrors) < 0 || ds->nerrors < n)
		return -EPROTO;
	if (!(ds->errors = calloc(n ? n : 1, sizeof(*ds->errors))))
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		e = json_at(a, k);
		if (!json_is(e, JSON_STRING) || memchr(e->s, '\0', e->len))
			return -EPROTO;
		if (!(ds->errors[k] = strdup(e->s)))
			return -ENOMEM;
		ds->nlisted++;
	}
	return 0;
}

static int parse_head(const char *p, size_t n, struct json_value **o, unsigned *format,
		      char **node, char *msg, size_t msglen)
{
	size_t len;
	int64_t f;
	int err;

	if ((err = json_parse(p, n, o)) < 0) {
		if (msglen)
			snprintf(msg, msglen, err == -ENOMEM ? "out of memory" : "not a JSON object");
		return err == -ENOMEM ? err : -EPROTO;
	}
	if (json_field_i64(*o, "format", &f) < 0 || f != NODE_RECORD_FORMAT) {
		if (msglen)
			snprintf(msg, msglen, "format is not %d", NODE_RECORD_FORMAT);
		return -EPROTO;
	}
	*format = (unsigned)f;
	if ((err = json_field_bytes(*o, "node", node, &len)) < 0) {
		if (msglen)
			snprintf(msg, msglen, "no node name");
		return err == -ENOMEM ? err : -EPROTO;
	}
	return 0;
}

static int dir_cmp(const void *a, const void *b)
{
	const struct node_dir_sum *x = a, *y = b;
	int c = strcmp(x->backend, y->backend);

	return c ? c : strcmp(x->arch, y->arch);
}

int record_decode_summary(const char *p, size_t n, struct node_summary **out,
			  char *msg, size_t msglen)
{
	struct json_value *o = NULL;
	const struct json_value *dirs, *d;
	struct node_summary *s = calloc(1, sizeof(*s));
	size_t len, k, nd;
	int err = -ENOMEM;

	*out = NULL;
	if (!s)
		goto out;
	if ((err = parse_head(p, n, &o, &s->format, &s->node, msg, msglen)) < 0)
		goto out;
	if ((err = json_field_bytes(o, "version", &s->version, &len)) == -ENOMEM)
		goto out;
	if (err < 0)
		FAIL("no version");
	if ((err = get_hex(o, "specs_digest", s->specs_digest)) == -EPROTO)
		FAIL("specs_digest is not 64 hex digits");
	s->has_specs_digest = err == 0;
	if ((err = json_field_bytes(o, "behind", &s->behind, &len)) == -ENOMEM)
		goto out;
	if (err == -EPROTO)
		FAIL("behind is not a string");
	if (json_field_i64(o, "revision", &s->revision) < 0 ||
	    json_field_i64(o, "when_ms", &s->when_ms) < 0)
		FAIL("revision or when_ms is not a number");
	if ((err = get_opt_bytes(o, "load_error", &s->load_error)) == -ENOMEM ||
	    (err == 0 && (err = get_opt_bytes(o, "unpublishable", &s->unpublishable)) == -ENOMEM))
		goto out;
	if (err < 0)
		FAIL("load_error or unpublishable is not a string");
	if (!json_get_ex(o, "dirs", &dirs) || !json_is(dirs, JSON_ARRAY))
		FAIL("dirs is not a list");
	nd = json_length(dirs);
	err = -ENOMEM;
	if (!(s->dirs = calloc(nd ? nd : 1, sizeof(*s->dirs))))
		goto out;
	for (k = 0; k < nd; k++) {
		struct node_dir_sum *ds = &s->dirs[k];

		d = json_at(dirs, k);
		if (!json_is(d, JSON_OBJECT))
			FAIL("dirs[%zu] is not an object", k);
		s->ndirs++;
		if ((err = json_field_bytes(d, "backend", &ds->backend, &len)) == -ENOMEM ||
		    (err == 0 &&
		     (err = json_field_bytes(d, "arch", &ds->arch, &len)) == -ENOMEM))
			goto out;
		if (err < 0)
			FAIL("dirs[%zu] has no backend or arch", k);
		if (get_hex(d, "digest", ds->digest) < 0 || get_u32(d, "vars", &ds->nvars) < 0 ||
		    get_u32(d, "secrets", &ds->nsecrets) < 0)
			FAIL("dirs[%zu] (%s/%s): digest, vars or secrets is malformed", k,
			     ds->backend, ds->arch);
		if ((err = get_errors(d, ds)) == -ENOMEM)
			goto out;
		if (err < 0)
			FAIL("dirs[%zu] (%s/%s): errors or nerrors is malformed", k, ds->backend,
			     ds->arch);
	}
	qsort(s->dirs, s->ndirs, sizeof(*s->dirs), dir_cmp);
	for (k = 1; k < s->ndirs; k++)
		if (!dir_cmp(&s->dirs[k - 1], &s->dirs[k]))
			FAIL("%s/%s is listed twice", s->dirs[k].backend, s->dirs[k].arch);
	*out = s;
	s = NULL;
	err = 0;
out:
	json_free(o);
	node_summary_free(s);
	return err;
}

int record_decode_detail(const char *p, size_t n, struct node_detail **out,
			 char *msg, size_t msglen)
{
	struct json_value *o = NULL;
	const struct json_value *vars, *v;
	struct node_detail *d = calloc(1, sizeof(*d));
	size_t len, k, nv;
	int err = -ENOMEM;

	*out = NULL;
	if (!d)
		goto out;
	if ((err = parse_head(p, n, &o, &d->format, &d->node, msg, msglen)) < 0)
		goto out;
	if ((err = json_field_bytes(o, "backend", &d->backend, &len)) == -ENOMEM ||
	    (err == 0 && (err = json_field_bytes(o, "arch", &d->arch, &len)) == -ENOMEM))
		goto out;
	if (err < 0)
		FAIL("no backend or arch");
	if (get_hex(o, "digest", d->digest) < 0)
		FAIL("digest is not 64 hex digits");
	if (!json_get_ex(o, "vars", &vars) ||
	    !json_is(vars, JSON_ARRAY))
		FAIL("vars is not a list");
	nv = json_length(vars);
	err = -ENOMEM;
	if (!(d->vars = calloc(nv ? nv : 1, sizeof(*d->vars))))
		goto out;
	for (k = 0; k < nv; k++) {
		struct node_var *nvr = &d->vars[k];
		uint32_t vlen;

		v = json_at(vars, k);
		if (!json_is(v, JSON_OBJECT))
			FAIL("vars[%zu] is not an object", k);
		d->nvars++;
		if ((err = json_field_bytes(v, "name", &nvr->name, &nvr->name_len)) == -ENOMEM)
			goto out;
		if (err < 0 || !nvr->name_len)
			FAIL("vars[%zu] has no name", k);
		if (k && strcmp(d->vars[k - 1].name, nvr->name) >= 0)
			FAIL("vars[%zu] (%s) is out of order or repeated", k, nvr->name);
		if (json_field_bool(v, "secret", &nvr->secret) < 0)
			FAIL("vars[%zu] (%s): secret is not a boolean", k, nvr->name);
		if (nvr->secret)
			continue;
		if (get_hex(v, "hash", nvr->hash) < 0 || get_u32(v, "len", &vlen) < 0)
			FAIL("vars[%zu] (%s): hash or len is malformed", k, nvr->name);
		nvr->value_len = vlen;
		/* Optional (for diff): where the value came from. */
		if (((err = json_field_bytes(v, "layer", &nvr->layer, &len)) < 0 &&
		     err != -ENOENT) ||
		    ((err = json_field_bytes(v, "source", &nvr->source, &len)) < 0 &&
		     err != -ENOENT)) {
			if (err == -ENOMEM)
				goto out;
			FAIL("vars[%zu] (%s): layer or source is malformed", k, nvr->name);
		}
		if ((err = json_field_bytes(v, "value", &nvr->value, &len)) == -ENOMEM)
			goto out;
		if (err == -EPROTO || (err == 0 && len != vlen))
			FAIL("vars[%zu] (%s): the value is malformed", k, nvr->name);
		if (err == 0) {
			uint8_t h[SHA256_LEN];

			sha256(nvr->value, nvr->value_len, h);
			if (memcmp(h, nvr->hash, SHA256_LEN))
				FAIL("vars[%zu] (%s): the value does not match its hash", k,
				     nvr->name);
		}
	}
	*out = d;
	d = NULL;
	err = 0;
out:
	json_free(o);
	node_detail_free(d);
	return err;
}
