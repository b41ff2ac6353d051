/* Reading JSON documents; see json.h. RFC 8259's grammar, nothing more:
 * no comments, no single quotes, no NaN, no trailing commas. */
#include "json.h"

#include <errno.h>
#include <limits.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "text.h"

struct parser {
	const char *p, *end;
	unsigned depth;
};

static int parse_value(struct parser *ps, struct json_value **out);

static void skip_space(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' ||
				   *ps->p == '\t'))
		ps->p++;
}

static bool take(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return false;
	ps->p += n;
	return true;
}

static int hex4(struct parser *ps, unsigned *out)
{
	unsigned v = 0;
	int k;

	if (ps->end - ps->p < 4)
		return -EPROTO;
	for (k = 0; k < 4; k++) {
		int c = (unsigned char)*ps->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -EPROTO;
	}
	*out = v;
	return 0;
}

static int add_utf8(struct strbuf *sb, unsigned cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return sb_add(sb, b, n);
}

/* \uXXXX, a surrogate pair as one code point; ps->p after the 'u'. */
static int unicode_escape(struct parser *ps, struct strbuf *sb)
{
	unsigned cp, lo;
	int err;

	if ((err = hex4(ps, &cp)) < 0)
		return err;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return -EPROTO;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (!take(ps, "\\u") || (err = hex4(ps, &lo)) < 0 || lo < 0xdc00 || lo > 0xdfff)
			return -EPROTO;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return add_utf8(sb, cp);
}

/* A string's bytes, ps->p after its opening quote, into sb. Bytes are
 * taken as they are (not checked as UTF-8); control bytes must be
 * escaped. */
static int parse_chars(struct parser *ps, struct strbuf *sb)
{
	int err = 0;

	while (!err) {
		const char *run = ps->p;

		while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\\' &&
		       (unsigned char)*ps->p >= 0x20)
			ps->p++;
		if ((err = sb_add(sb, run, (size_t)(ps->p - run))) < 0)
			break;
		if (ps->p == ps->end || (unsigned char)*ps->p < 0x20)
			return -EPROTO;
		if (*ps->p++ == '"')
			return 0;
		if (ps->p == ps->end)
			return -EPROTO;
		switch (*ps->p++) {
		case '"': err = sb_addc(sb, '"'); break;
		case '\\': err = sb_addc(sb, '\\'); break;
		case '/': err = sb_addc(sb, '/'); break;
		case 'b': err = sb_addc(sb, '\b'); break;
		case 'f': err = sb_addc(sb, '\f'); break;
		case 'n': err = sb_addc(sb, '\n'); break;
		case 'r': err = sb_addc(sb, '\r'); break;
		case 't': err = sb_addc(sb, '\t'); break;
		case 'u': err = unicode_escape(ps, sb); break;
		default: return -EPROTO;
		}
	}
	return err;
}

static int parse_string(struct parser *ps, char **out, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	ps->p++;
	if ((err = parse_chars(ps, &sb)) < 0 || (err = sb_addc(&sb, '\0')) < 0) {
		sb_release(&sb);
		return err;
	}
	*len = sb.len - 1;
	if (!(*out = sb_detach(&sb, NULL)))
		return -ENOMEM;
	return 0;
}

static size_t digits(struct parser *ps)
{
	const char *start = ps->p;

	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
		ps->p++;
	return (size_t)(ps->p - start);
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?: an INT when it has no
 * fraction or exponent and fits, else a DOUBLE (its value not kept: the
 * documents read here have none). */
static int parse_number(struct parser *ps, struct json_value *v)
{
	const char *start = ps->p;
	bool integral = true;
	long long i;
	size_t n;

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (!(n = digits(ps)) || (n > 1 && ps->p[-(ptrdiff_t)n] == '0'))
		return -EPROTO;
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		integral = false;
		if (!digits(ps))
			return -EPROTO;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		integral = false;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (!digits(ps))
			return -EPROTO;
	}
	if (integral && text_parse_ll(start, (size_t)(ps->p - start), &i)) {
		v->type = JSON_INT;
		v->i = i;
	} else {
		v->type = JSON_DOUBLE;
	}
	return 0;
}

/* [ value, ... ], ps->p on the '['. */
static int parse_array(struct parser *ps, struct json_value *v)
{
	size_t cap = 0;
	int err;

	v->type = JSON_ARRAY;
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return 0;
	}
	for (;;) {
		if ((err = GROW(v->items, cap, v->len, 8)) < 0)
			return err;
		v->items[v->len] = NULL;
		err = parse_value(ps, &v->items[v->len]);
		v->len++;
		if (err < 0)
			return err;
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			return 0;
		}
		return -EPROTO;
	}
}

/* { "key": value, ... }, ps->p on the '{'. */
static int parse_object(struct parser *ps, struct json_value *v)
{
	size_t cap = 0;
	int err;

	v->type = JSON_OBJECT;
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return 0;
	}
	for (;;) {
		struct json_member *m;

		if (ps->p == ps->end || *ps->p != '"')
			return -EPROTO;
		if ((err = GROW(v->members, cap, v->len, 8)) < 0)
			return err;
		m = &v->members[v->len];
		memset(m, 0, sizeof(*m));
		if ((err = parse_string(ps, &m->key, &m->key_len)) < 0)
			return err;
		v->len++;
		skip_space(ps);
		if (ps->p == ps->end || *ps->p++ != ':')
			return -EPROTO;
		if ((err = parse_value(ps, &m->val)) < 0)
			return err;
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			skip_space(ps);
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			return 0;
		}
		return -EPROTO;
	}
}

/* One value after optional space; null is *out NULL. */
static int parse_value(struct parser *ps, struct json_value **out)
{
	struct json_value *v;
	int err;

	*out = NULL;
	skip_space(ps);
	if (ps->p == ps->end)
		return -EPROTO;
	if (take(ps, "null"))
		return 0;
	if (!(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	*out = v;
	switch (*ps->p) {
	case '{':
	case '[':
		if (++ps->depth > JSON_DEPTH)
			return -EPROTO;
		err = *ps->p == '{' ? parse_object(ps, v) : parse_array(ps, v);
		ps->depth--;
		return err;
	case '"':
		v->type = JSON_STRING;
		return parse_string(ps, &v->s, &v->len);
	case 't':
	case 'f':
		v->type = JSON_BOOL;
		v->b = *ps->p == 't';
		return take(ps, v->b ? "true" : "false") ? 0 : -EPROTO;
	default:
		return parse_number(ps, v);
	}
}

int json_parse(const char *p, size_t n, struct json_value **out)
{
	struct parser ps = { p, p + n, 0 };
	struct json_value *v = NULL;
	int err;

	*out = NULL;
	if (n > INT_MAX)
		return -EMSGSIZE;
	skip_space(&ps);
	if (ps.p == ps.end || *ps.p != '{')
		return -EPROTO;
	if ((err = parse_value(&ps, &v)) == 0) {
		skip_space(&ps);
		if (ps.p != ps.end)
			err = -EPROTO;
	}
	if (err < 0) {
		json_free(v);
		return err;
	}
	*out = v;
	return 0;
}

void json_free(struct json_value *v)
{
	size_t k;

	if (!v)
		return;
	if (v->type == JSON_ARRAY)
		for (k = 0; k < v->len; k++)
			json_free(v->items[k]);
	if (v->type == JSON_OBJECT) {
		for (k = 0; k < v->len; k++) {
			free(v->members[k].key);
			json_free(v->members[k].val);
		}
	}
	free(v->items);
	free(v->members);
	free(v->s);
	free(v);
}

bool json_is(const struct json_value *v, enum json_kind type)
{
	return (v ? v->type : JSON_NULL) == type;
}

bool json_get_ex(const struct json_value *o, const char *key, const struct json_value **out)
{
	size_t k, n = strlen(key);

	*out = NULL;
	if (!json_is(o, JSON_OBJECT))
		return false;
	/* The last of a repeated key, as a JSON object is a map. */
	for (k = o->len; k-- > 0;) {
		if (o->members[k].key_len == n && !memcmp(o->members[k].key, key, n)) {
			*out = o->members[k].val;
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

int json_field_string(const struct json_value *o, const char *key, char **out)
{
	const struct json_value *f;

	*out = NULL;
	if (!json_get_ex(o, key, &f) || !f)
		return 0;
	if (f->type != JSON_STRING)
		return -EPROTO;
	return (*out = strdup(f->s)) ? 0 : -ENOMEM;
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

int json_field_bytes(const struct json_value *o, const char *key, char **out, size_t *len)
{
	const struct json_value *f;
	char b64[64];
	int err;

	*out = NULL;
	*len = 0;
	if (json_get_ex(o, key, &f)) {
		if (!json_is(f, JSON_STRING) || memchr(f->s, '\0', f->len))
			return -EPROTO;
		if (!(*out = malloc(f->len + 1)))
			return -ENOMEM;
		memcpy(*out, f->s, f->len + 1);
		*len = f->len;
		return 0;
	}
	snprintf(b64, sizeof(b64), "%s_b64", key);
	if (!json_get_ex(o, b64, &f))
		return -ENOENT;
	if ((err = field_b64(o, b64, out, len)) < 0)
		return err;
	if (memchr(*out, '\0', *len)) {
		free(*out);
		*out = NULL;
		*len = 0;
		return -EPROTO;
	}
	return 0;
}
