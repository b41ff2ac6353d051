/* The shapes of etcd's v3 JSON gateway: protobuf's JSON mapping, where
 * 64-bit integers are strings, bytes are base64 and fields holding their
 * default (0, false, empty) are left out. */
#include "etcd_internal.h"

#include <errno.h>
#include <limits.h>
#include <nettle/base64.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "text.h"

/* Objects nest 4 deep in etcd's replies; 32 leaves room and bounds the
 * parser's stack on hostile input. */
#define EJ_DEPTH 32

int ej_parse(const char *s, size_t n, struct json_object **out)
{
	struct json_tokener *tok;
	struct json_object *o;
	size_t end;

	*out = NULL;
	if (n > INT_MAX)
		return -EMSGSIZE;
	if (!(tok = json_tokener_new_ex(EJ_DEPTH)))
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, s, (int)n);
	end = json_tokener_get_parse_end(tok);
	if (o && json_tokener_get_error(tok) == json_tokener_success) {
		while (end < n && (s[end] == ' ' || s[end] == '\n' ||
		                   s[end] == '\r' || s[end] == '\t'))
			end++;
	}
	json_tokener_free(tok);
	if (!o || end != n || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EPROTO;
	}
	*out = o;
	return 0;
}

/* Digits only, all of it, no more than 2^64 - 1. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EPROTO;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (*s < '0' || *s > '9' || v > (UINT64_MAX - d) / 10)
			return -EPROTO;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int ej_i64(struct json_object *o, const char *key, int64_t *out)
{
	struct json_object *f;
	long long v;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &f) || !f)
		return 0;
	if (json_object_is_type(f, json_type_int)) {
		*out = json_object_get_int64(f);
		return 0;
	}
	if (!json_object_is_type(f, json_type_string) ||
	    !text_parse_ll(json_object_get_string(f),
	                   (size_t)json_object_get_string_len(f), &v))
		return -EPROTO;
	*out = v;
	return 0;
}

int ej_u64(struct json_object *o, const char *key, uint64_t *out)
{
	struct json_object *f;

	*out = 0;
	if (!json_object_object_get_ex(o, key, &f) || !f)
		return 0;
	if (json_object_is_type(f, json_type_int)) {
		int64_t v = json_object_get_int64(f);

		if (v < 0)
			return -EPROTO;
		*out = (uint64_t)v;
		return 0;
	}
	if (!json_object_is_type(f, json_type_string))
		return -EPROTO;
	return parse_u64(json_object_get_string(f), out);
}

int ej_bool(struct json_object *o, const char *key, bool *out)
{
	struct json_object *f;

	*out = false;
	if (!json_object_object_get_ex(o, key, &f) || !f)
		return 0;
	if (!json_object_is_type(f, json_type_boolean))
		return -EPROTO;
	*out = json_object_get_boolean(f);
	return 0;
}

int ej_string(struct json_object *o, const char *key, char **out)
{
	struct json_object *f;

	*out = NULL;
	if (!json_object_object_get_ex(o, key, &f) || !f)
		return 0;
	if (!json_object_is_type(f, json_type_string))
		return -EPROTO;
	return (*out = strdup(json_object_get_string(f))) ? 0 : -ENOMEM;
}

int ej_bytes(struct json_object *o, const char *key, char **out, size_t *len)
{
	struct json_object *f;
	const char *src = "";
	size_t n = 0;

	*out = NULL;
	*len = 0;
	if (json_object_object_get_ex(o, key, &f) && f) {
		if (!json_object_is_type(f, json_type_string))
			return -EPROTO;
		src = json_object_get_string(f);
		n = (size_t)json_object_get_string_len(f);
	}
	return json_b64_decode(src, n, out, len);
}

int ej_revision(struct json_object *o, int64_t *out)
{
	struct json_object *h;

	*out = 0;
	if (!json_object_object_get_ex(o, "header", &h) || !h)
		return 0;
	if (!json_object_is_type(h, json_type_object))
		return -EPROTO;
	return ej_i64(h, "revision", out);
}

int ej_add_b64(struct json_object *o, const char *key, const void *p, size_t n)
{
	struct json_object *s;
	size_t elen;
	char *buf;

	if (n > (INT_MAX / 4) * 3 - 3)
		return -EMSGSIZE;
	elen = BASE64_ENCODE_RAW_LENGTH(n);
	if (!(buf = malloc(elen + 1)))
		return -ENOMEM;
	base64_encode_raw(buf, n, p);
	s = json_object_new_string_len(buf, (int)elen);
	free(buf);
	if (!s || json_object_object_add(o, key, s) < 0) {
		json_object_put(s);
		return -ENOMEM;
	}
	return 0;
}

int ej_add_i64(struct json_object *o, const char *key, int64_t v)
{
	struct json_object *i = json_object_new_int64(v);

	if (!i || json_object_object_add(o, key, i) < 0) {
		json_object_put(i);
		return -ENOMEM;
	}
	return 0;
}

void ej_prefix_end(const char *prefix, size_t n, char *out, size_t *outlen)
{
	memcpy(out, prefix, n);
	while (n > 0) {
		if ((unsigned char)out[n - 1] < 0xff) {
			out[n - 1]++;
			*outlen = n;
			return;
		}
		n--;
	}
	out[0] = 0;
	*outlen = 1;
}

int ej_dump(struct json_object *o, char **out, size_t *len)
{
	size_t n;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);

	if (!s || !(*out = xstrndup(s, n)))
		return -ENOMEM;
	*len = n;
	return 0;
}
