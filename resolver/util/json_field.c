/* Reading the fields of a parsed JSON document; see json.h. */
#include "json.h"

#include <errno.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "text.h"

bool json_is(const struct json_value *v, enum json_kind type)
{
	return (v ? v->type : JSON_NULL) == type;
}

bool json_get_ex(const struct json_value *o, const char *key, const struct json_value **out)
{
	size_t k, n;

	*out = NULL;
	if (!o || o->type != JSON_OBJECT)
		return false;
	n = strlen(key);
	/* The last of a repeated key, as a JSON object is a map. The first
	 * byte is compared before memcmp is called (every key is
	 * NUL-terminated, so key[0] of "" is its NUL). */
	for (k = o->len; k-- > 0;) {
		const struct json_member *m = &o->members[k];

		if (m->key_len == n && m->key[0] == key[0] && !memcmp(m->key, key, n)) {
			*out = m->val;
			return true;
		}
	}
	return false;
}

size_t json_length(const struct json_value *a)
{
	return json_is(a, JSON_ARRAY) ? a->len : 0;
}

const struct json_value *json_at(const struct json_value *a, size_t k)
{
	return k < json_length(a) ? a->items[k] : NULL;
}

int json_field_i64(const struct json_value *o, const char *key, int64_t *out)
{
	const struct json_value *f;
	long long v;

	*out = 0;
	if (!json_get_ex(o, key, &f) || !f)
		return 0;
	if (f->type == JSON_INT) {
		*out = f->i;
		return 0;
	}
	if (f->type != JSON_STRING || !text_parse_ll(f->s, f->len, &v))
		return -EPROTO;
	*out = v;
	return 0;
}

int json_field_bool(const struct json_value *o, const char *key, bool *out)
{
	const struct json_value *f;

	*out = false;
	if (!json_get_ex(o, key, &f) || !f)
		return 0;
	if (f->type != JSON_BOOL)
		return -EPROTO;
	*out = f->b;
	return 0;
}

int json_field_string_in(const struct json_value *o, const char *key, struct arena *a,
			 char **out)
{
	const struct json_value *f;

	*out = NULL;
	if (!json_get_ex(o, key, &f) || !f)
		return 0;
	if (f->type != JSON_STRING)
		return -EPROTO;
	*out = a ? arena_strdup(a, f->s) : strdup(f->s);
	return *out ? 0 : -ENOMEM;
}

int json_field_string(const struct json_value *o, const char *key, char **out)
{
	return json_field_string_in(o, key, NULL, out);
}

int json_b64_decode(const char *src, size_t n, char **out, size_t *len)
{
	struct base64_decode_ctx ctx;
	size_t dlen = BASE64_DECODE_LENGTH(n);
	char *dst;

	*out = NULL;
	*len = 0;
	if (!(dst = malloc(dlen + 1)))
		return -ENOMEM;
	base64_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &dlen, (uint8_t *)dst, n, src) ||
	    !base64_decode_final(&ctx)) {
		free(dst);
		return -EPROTO;
	}
	dst[dlen] = 0;
	*out = dst;
	*len = dlen;
	return 0;
}

/* The base64 string at key (absent: no bytes) decoded. */
static int field_b64(const struct json_value *o, const char *key, char **out, size_t *len)
{
	const struct json_value *f;

	*out = NULL;
	*len = 0;
	if (json_get_ex(o, key, &f) && f) {
		if (f->type != JSON_STRING)
			return -EPROTO;
		return json_b64_decode(f->s, f->len, out, len);
	}
	return json_b64_decode("", 0, out, len);
}

int json_field_bytes_in(const struct json_value *o, const char *key, struct arena *a,
			char **out, size_t *len)
{
	const struct json_value *f;
	char b64[64], *dec;
	int err;

	*out = NULL;
	*len = 0;
	if (json_get_ex(o, key, &f)) {
		if (!json_is(f, JSON_STRING) || memchr(f->s, '\0', f->len))
			return -EPROTO;
		if (!(*out = a ? arena_alloc_text(a, f->len + 1) : malloc(f->len + 1)))
			return -ENOMEM;
		memcpy(*out, f->s, f->len + 1);
		*len = f->len;
		return 0;
	}
	snprintf(b64, sizeof(b64), "%s_b64", key);
	if (!json_get_ex(o, b64, &f))
		return -ENOENT;
	if ((err = field_b64(o, b64, &dec, len)) < 0)
		return err;
	if (memchr(dec, '\0', *len)) {
		free(dec);
		*len = 0;
		return -EPROTO;
	}
	if (!a) {
		*out = dec;
		return 0;
	}
	*out = arena_strndup(a, dec, *len);
	free(dec);
	if (!*out) {
		*len = 0;
		return -ENOMEM;
	}
	return 0;
}

int json_field_bytes(const struct json_value *o, const char *key, char **out, size_t *len)
{
	return json_field_bytes_in(o, key, NULL, out, len);
}
