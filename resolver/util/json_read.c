/* Reading JSON documents; see json.h. RFC 8259's grammar, nothing more:
 * no comments, no single quotes, no NaN, no trailing commas.
 *
 * A document's values, keys and strings all live in one arena, freed at
 * once: a 10,000-variable run record is some 400,000 values, and a
 * malloc and a free for each (and for each string) were most of what
 * reading one cost. An array's or object's entries are gathered on the
 * parser's stack while they are parsed and copied to the arena when it
 * closes, at their exact count. */
#include "json.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "arena.h"
#include "grow.h"
#include "text.h"

/* What json_parse hands out: the root, and the arena it lives in. */
struct json_doc {
	struct arena *arena;
	struct json_value root;
};

/* The places whose keys are shared (keep_key). */
#define KEY_DEPTHS 8
#define KEY_PLACES 16
#define KEY_BUDGET 65536

struct key_slot {
	char *s;                      /* in the document's arena; NULL: none yet */
	size_t n;
};

struct parser {
	const char *p, *end;
	unsigned depth;
	struct arena *a;              /* where values go now */
	struct arena *doc;            /* the tree's */
	struct arena *scratch;        /* a streamed item's, cleared after it */
	const struct json_stream *st;
	size_t stream_key;            /* the streamed array being read */
	bool in_item;                 /* a streamed item is being read */
	unsigned skip;                /* >0: checked only, nothing kept */
	struct json_value dummy;      /* what a value checked only is parsed into */
	struct key_slot keys[KEY_DEPTHS][KEY_PLACES];
	size_t key_bytes;             /* the places' copies so far */
	struct strbuf esc;            /* a string with escapes, unescaped */
	struct json_value **items;    /* the entries of the open arrays */
	size_t nitems, items_cap;
	struct json_member *members;  /* the entries of the open objects */
	size_t nmembers, members_cap;
};

static int parse_value(struct parser *ps, struct json_value **out);

/* The helpers of every token, inlined: a call each was a tenth of a parse. */
#define HOT static inline __attribute__((always_inline))

HOT void skip_space(struct parser *ps)
{
	/* The documents this program writes have no space at all. */
	if (ps->p < ps->end && (unsigned char)*ps->p > ' ')
		return;
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' ||
				   *ps->p == '\t'))
		ps->p++;
}

static bool take(struct parser *ps, const char *word, size_t n)
{
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return false;
	ps->p += n;
	return true;
}

static struct json_value *new_value(struct parser *ps, enum json_kind type)
{
	struct json_value *v = ps->skip ? &ps->dummy : arena_alloc_uninit(ps->a, sizeof(*v));

	if (v) {
		memset(v, 0, sizeof(*v));
		v->type = type;
	}
	return v;
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
		if (!take(ps, "\\u", 2) || (err = hex4(ps, &lo)) < 0 || lo < 0xdc00 || lo > 0xdfff)
			return -EPROTO;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return add_utf8(sb, cp);
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* The end of the plain bytes from p: the first '"', '\\' or control byte,
 * or end. Sixteen (SSE2) or eight bytes at a time while none of them is
 * one: the strings are most of a record's bytes. */
HOT const char *plain_run(const char *p, const char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i ctl = _mm_set1_epi8(0x1f);

	while (end - p >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* max(x, 0x1f) == 0x1f: x is a control byte (unsigned) */
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote),
						      _mm_cmpeq_epi8(x, bslash)),
					 _mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl));
		unsigned hit = (unsigned)_mm_movemask_epi8(m);

		if (hit)
			return p + __builtin_ctz(hit);
		p += 16;
	}
#endif
	while (end - p >= 8) {
		uint64_t w, q, b, hit;

		memcpy(&w, p, 8);
		q = w ^ (ONES * '"');
		b = w ^ (ONES * '\\');
		/* Exact for the word as a whole: a byte is flagged only above a
		 * true hit, so a word without one passes. */
		hit = ((q - ONES) & ~q & HIGHS) | ((b - ONES) & ~b & HIGHS) |
		      ((w - ONES * 0x20) & ~w & HIGHS);
		if (hit)
			break;
		p += 8;
	}
	while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
		p++;
	return p;
}

/* The rest of a string whose first escape is at ps->p, into ps->esc after
 * the plain bytes before it (from start). Bytes are taken as they are
 * (not checked as UTF-8); control bytes must be escaped. */
static int parse_escaped(struct parser *ps, const char *start)
{
	struct strbuf *sb = &ps->esc;
	int err;

	sb->len = 0;
	if ((err = sb_add(sb, start, (size_t)(ps->p - start))) < 0)
		return err;
	for (;;) {
		const char *run;

		/* ps->p is on a '\\' */
		if (++ps->p == ps->end)
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
		if (err < 0)
			return err;
		run = ps->p;
		ps->p = plain_run(ps->p, ps->end);
		if ((err = sb_add(sb, run, (size_t)(ps->p - run))) < 0)
			return err;
		if (ps->p == ps->end || *ps->p != '\\')
			break;
	}
	if (ps->p == ps->end || *ps->p != '"')
		return -EPROTO;
	ps->p++;
	return 0;
}

/* A string, ps->p on its opening quote, as a view: *len bytes at *out,
 * the document's, or ps->esc's until the next string. */
HOT int scan_string(struct parser *ps, const char **out, size_t *len)
{
	const char *start = ++ps->p;
	int err;

	ps->p = plain_run(ps->p, ps->end);
	if (ps->p < ps->end && *ps->p == '"') {
		*out = start;
		*len = (size_t)(ps->p - start);
		ps->p++;
		return 0;
	}
	if (ps->p == ps->end || *ps->p != '\\')
		return -EPROTO;
	if ((err = parse_escaped(ps, start)) < 0)
		return err;
	*out = ps->esc.buf;
	*len = ps->esc.len;
	return 0;
}

/* A string value: the node and its bytes (NUL-terminated) in one piece. */
static int parse_string(struct parser *ps, struct json_value **out)
{
	struct json_value *v;
	const char *str;
	size_t n;
	int err;

	if ((err = scan_string(ps, &str, &n)) < 0 || ps->skip)
		return err;
	if (n > (size_t)-1 / 2 || !(v = arena_alloc_uninit(ps->a, sizeof(*v) + n + 1)))
		return -ENOMEM;
	memset(v, 0, sizeof(*v));
	v->type = JSON_STRING;
	v->len = n;
	v->s = (char *)(v + 1);
	memcpy(v->s, str, n);
	v->s[n] = '\0';
	*out = v;
	return 0;
}

/* A member's key kept: the objects of an array repeat their keys, so a
 * key is copied once per place (depth and member number) and shared by
 * every object that has it there, until another key takes the place. The
 * copies are the document's, so the objects of a streamed item share them
 * too; past KEY_BUDGET bytes of them (a document of ever new keys) a key
 * is copied where the value goes, as it would be without the sharing. */
static char *keep_key(struct parser *ps, const char *key, size_t n, size_t k)
{
	struct key_slot *c;
	char *p;

	if (ps->depth >= KEY_DEPTHS || k >= KEY_PLACES)
		return arena_strndup(ps->a, key, n);
	c = &ps->keys[ps->depth][k];
	if (c->s && c->n == n && !memcmp(c->s, key, n))
		return c->s;
	if (ps->key_bytes + n > KEY_BUDGET)
		return arena_strndup(ps->a, key, n);
	if ((p = arena_strndup(ps->doc, key, n))) {
		ps->key_bytes += n + 1;
		c->s = p;
		c->n = n;
	}
	return p;
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

/* After an entry: ',' (true, and another entry follows) or close (false,
 * the container ends); anything else is -EPROTO. */
static int next_entry(struct parser *ps, char close)
{
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == ',') {
		ps->p++;
		return 1;
	}
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	return -EPROTO;
}

/* [ value, ... ], ps->p on the '['. */
static int parse_array(struct parser *ps, struct json_value *v)
{
	size_t base = ps->nitems;
	int err;

	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return 0;
	}
	do {
		struct json_value *item;

		/* The stack may move while the item is parsed. */
		if ((err = parse_value(ps, &item)) < 0)
			return err;
		if (ps->skip)
			continue;
		if ((err = GROW(ps->items, ps->items_cap, ps->nitems, 64)) < 0)
			return err;
		ps->items[ps->nitems++] = item;
	} while ((err = next_entry(ps, ']')) > 0);
	if (err < 0 || ps->skip)
		return err;
	v->len = ps->nitems - base;
	if (!(v->items = arena_alloc_uninit(ps->a, v->len * sizeof(*v->items))))
		return -ENOMEM;
	memcpy(v->items, ps->items + base, v->len * sizeof(*v->items));
	ps->nitems = base;
	return 0;
}

/* Which of the stream's keys the n bytes at key are; -1 for none. */
static int streamed_key(const struct parser *ps, const char *key, size_t n)
{
	int k;

	for (k = 0; ps->st && ps->st->keys[k]; k++)
		if (strlen(ps->st->keys[k]) == n && !memcmp(ps->st->keys[k], key, n))
			return k;
	return -1;
}

/* A top-level member's array handed to the stream item by item, ps->p on
 * its '['. Each item is parsed into the scratch arena, which is cleared
 * after the callback; *out is an empty array in the tree. */
static int stream_array(struct parser *ps, size_t key, struct json_value **out)
{
	int err;

	if (!(*out = new_value(ps, JSON_ARRAY)))
		return -ENOMEM;
	if (++ps->depth > JSON_DEPTH)
		return -EPROTO;
	if ((err = ps->st->begin(ps->st->ctx, key)) < 0)
		return err;
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		ps->depth--;
		return 0;
	}
	ps->a = ps->scratch;
	ps->in_item = true;
	ps->stream_key = key;
	do {
		struct json_value *item;

		if ((err = parse_value(ps, &item)) < 0 ||
		    (err = ps->st->item(ps->st->ctx, key, item)) < 0)
			break;
		arena_clear(ps->scratch);
	} while ((err = next_entry(ps, ']')) > 0);
	ps->a = ps->doc;
	ps->in_item = false;
	ps->depth--;
	return err;
}

/* Whether the member key (n bytes) of the object being read is only
 * checked: in a streamed item, one the stream does not keep. */
static bool dropped(const struct parser *ps, const char *key, size_t n)
{
	return ps->depth == 3 && ps->in_item && !ps->skip && ps->st->keep &&
	       !ps->st->keep(ps->st->ctx, ps->stream_key, key, n);
}

/* { "key": value, ... }, ps->p on the '{'. */
static int parse_object(struct parser *ps, struct json_value *v)
{
	size_t base = ps->nmembers;
	int err;

	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return 0;
	}
	do {
		struct json_member m = { NULL, 0, NULL };
		const char *key;
		bool drop;
		int sk;

		skip_space(ps);
		if (ps->p == ps->end || *ps->p != '"')
			return -EPROTO;
		if ((err = scan_string(ps, &key, &m.key_len)) < 0)
			return err;
		drop = dropped(ps, key, m.key_len);
		if (!ps->skip && !drop &&
		    !(m.key = keep_key(ps, key, m.key_len, ps->nmembers - base)))
			return -ENOMEM;
		skip_space(ps);
		if (ps->p == ps->end || *ps->p++ != ':')
			return -EPROTO;
		/* parse_value skips the space before the value; a streamed
		 * array must be seen first. */
		sk = -1;
		if (ps->depth == 1 && (sk = streamed_key(ps, m.key, m.key_len)) >= 0)
			skip_space(ps);
		ps->skip += drop;
		if (sk >= 0 && ps->p < ps->end && *ps->p == '[')
			err = stream_array(ps, (size_t)sk, &m.val);
		else
			err = parse_value(ps, &m.val);
		ps->skip -= drop;
		if (err < 0)
			return err;
		if (ps->skip || drop)
			continue;
		if ((err = GROW(ps->members, ps->members_cap, ps->nmembers, 64)) < 0)
			return err;
		ps->members[ps->nmembers++] = m;
	} while ((err = next_entry(ps, '}')) > 0);
	if (err < 0 || ps->skip)
		return err;
	/* Every member dropped (a streamed item's) leaves an empty object. */
	if (!(v->len = ps->nmembers - base))
		return 0;
	if (!(v->members = arena_alloc_uninit(ps->a, v->len * sizeof(*v->members))))
		return -ENOMEM;
	memcpy(v->members, ps->members + base, v->len * sizeof(*v->members));
	ps->nmembers = base;
	return 0;
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
	switch (*ps->p) {
	case 'n':
		return take(ps, "null", 4) ? 0 : -EPROTO;
	case 't':
	case 'f':
		if (!(v = *out = new_value(ps, JSON_BOOL)))
			return -ENOMEM;
		v->b = *ps->p == 't';
		return take(ps, v->b ? "true" : "false", v->b ? 4 : 5) ? 0 : -EPROTO;
	case '"':
		return parse_string(ps, out);
	case '{':
	case '[':
		if (!(v = *out = new_value(ps, *ps->p == '{' ? JSON_OBJECT : JSON_ARRAY)))
			return -ENOMEM;
		if (++ps->depth > JSON_DEPTH)
			return -EPROTO;
		err = v->type == JSON_OBJECT ? parse_object(ps, v) : parse_array(ps, v);
		ps->depth--;
		return err;
	default:
		if (!(v = *out = new_value(ps, JSON_DOUBLE)))
			return -ENOMEM;
		return parse_number(ps, v);
	}
}

int json_parse_stream(const char *p, size_t n, const struct json_stream *st,
		      struct json_value **out)
{
	struct parser ps = { .p = p, .end = p + n, .st = st, .esc = STRBUF_INIT };
	struct json_doc *d = NULL;
	struct json_value *v = NULL;
	int err = -ENOMEM;

	*out = NULL;
	if (n > INT_MAX)
		return -EMSGSIZE;
	if (!(ps.doc = ps.a = arena_new()) || (st && !(ps.scratch = arena_new())) ||
	    !(d = arena_alloc(ps.doc, sizeof(*d))))
		goto out;
	d->arena = ps.doc;
	err = -EPROTO;
	skip_space(&ps);
	if (ps.p == ps.end || *ps.p != '{')
		goto out;
	if ((err = parse_value(&ps, &v)) < 0)
		goto out;
	skip_space(&ps);
	if (ps.p != ps.end) {
		err = -EPROTO;
		goto out;
	}
	d->root = *v;
	*out = &d->root;
	ps.doc = NULL;
	err = 0;
out:
	arena_free(ps.doc);
	arena_free(ps.scratch);
	sb_release(&ps.esc);
	free(ps.items);
	free(ps.members);
	return err;
}

int json_parse(const char *p, size_t n, struct json_value **out)
{
	return json_parse_stream(p, n, NULL, out);
}

void json_free(struct json_value *v)
{
	if (v)
		arena_free(((struct json_doc *)((char *)v - offsetof(struct json_doc, root)))->arena);
}
