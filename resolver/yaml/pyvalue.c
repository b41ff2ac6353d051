/* pyvalue: PyYAML's SafeConstructor over our node tree, printed the way
 * Python's str() and repr() print what it builds; see pyvalue.h.
 *
 *   $ python3 -c 'import yaml; print(str(yaml.safe_load("v: [010, on]")["v"]))'
 *   [8, True]
 */
#include "pyvalue.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "text.h"
#include "unicode.h"
#include "yaml11.h"

enum ptag {
	P_STR, P_INT, P_FLOAT, P_BOOL, P_NULL, P_TIMESTAMP, P_BINARY, P_MERGE, P_VALUE,
	P_SEQ, P_MAP, P_SET, P_OMAP, P_PAIRS, P_UNKNOWN,
};

static void fail(struct pyv_error *e, const struct ynode *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct pyv_error *e, const struct ynode *at, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	e->at = at;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

bool pyv_implicit(const struct ynode *n)
{
	return n->kind == YN_SCALAR &&
	       ((!n->tag && n->style == YS_PLAIN) || (n->tag && !strcmp(n->tag, "!")));
}

static enum ptag of_y11(enum y11_type t)
{
	switch (t) {
	case Y11_BOOL: return P_BOOL;
	case Y11_INT: return P_INT;
	case Y11_FLOAT: return P_FLOAT;
	case Y11_NULL: return P_NULL;
	case Y11_TIMESTAMP: return P_TIMESTAMP;
	case Y11_MERGE: return P_MERGE;
	case Y11_VALUE: return P_VALUE;
	case Y11_STR: break;
	}
	return P_STR;
}

/* The tag the constructor dispatches on. */
static enum ptag tag_of(const struct ynode *n)
{
	static const struct { const char *name; enum ptag tag; } tags[] = {
		{ "!!str", P_STR }, { "!!int", P_INT }, { "!!float", P_FLOAT },
		{ "!!bool", P_BOOL }, { "!!null", P_NULL }, { "!!timestamp", P_TIMESTAMP },
		{ "!!binary", P_BINARY }, { "!!merge", P_MERGE }, { "!!value", P_VALUE },
		{ "!!seq", P_SEQ }, { "!!map", P_MAP }, { "!!set", P_SET },
		{ "!!omap", P_OMAP }, { "!!pairs", P_PAIRS },
	};
	size_t k;

	if (!n->tag || !strcmp(n->tag, "!")) {
		if (n->kind == YN_SEQ)
			return P_SEQ;
		if (n->kind == YN_MAP)
			return P_MAP;
		return pyv_implicit(n) ? of_y11(y11_resolve(n->str, n->len)) : P_STR;
	}
	for (k = 0; k < sizeof(tags) / sizeof(tags[0]); k++)
		if (!strcmp(n->tag, tags[k].name))
			return tags[k].tag;
	return P_UNKNOWN;
}

static bool base64_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : 63;
}

/* binascii.a2b_base64, as base64.decodebytes calls it: bytes outside the
 * alphabet are skipped, a quantum left incomplete without '=' is an error. */
static int b64_decode(const char *s, size_t n, struct strbuf *out)
{
	unsigned acc = 0;
	size_t k, bits = 0, quantum = 0;
	bool pad = false;
	int err;

	for (k = 0; k < n; k++) {
		unsigned char c = (unsigned char)s[k];

		if (c == '=') {
			if (quantum >= 2)
				pad = true;
			if (pad)
				break;
			continue;
		}
		if (!base64_char(c))
			continue;
		acc = (acc << 6) | (unsigned)b64_value(c);
		bits += 6;
		quantum = (quantum + 1) % 4;
		if (bits >= 8) {
			bits -= 8;
			if ((err = sb_addc(out, (char)((acc >> bits) & 0xff))) < 0)
				return err;
		}
	}
	return quantum && !pad ? -EINVAL : 0;
}

/* ---- checking ---------------------------------------------------------- */

static bool bool_word(const char *s, size_t n)
{
	static const char *const words[] = { "yes", "no", "true", "false", "on", "off", NULL };
	size_t k, i;

	for (k = 0; words[k]; k++) {
		if (strlen(words[k]) != n)
			continue;
		for (i = 0; i < n && (s[i] | 0x20) == words[k][i]; i++)
			;
		if (i == n)
			return true;
	}
	return false;
}

/* A scalar of tag t constructs (y11 does the constructors' own checks). */
static int check_scalar(const struct ynode *n, enum ptag t, struct pyv_error *e)
{
	struct strbuf sb = STRBUF_INIT;
	int err = 0;

	switch (t) {
	case P_STR:
	case P_NULL:
		break;
	case P_BOOL:
		if (!bool_word(n->str, n->len))
			err = -EINVAL;
		break;
	case P_INT:
		err = y11_str(n->str, n->len, Y11_INT, &sb);
		break;
	case P_FLOAT:
		err = y11_str(n->str, n->len, Y11_FLOAT, &sb);
		break;
	case P_TIMESTAMP:
		err = y11_str(n->str, n->len, Y11_TIMESTAMP, &sb);
		break;
	case P_BINARY:
		err = b64_decode(n->str, n->len, &sb);
		break;
	case P_MERGE:
	case P_VALUE:
		fail(e, n, "PyYAML has no constructor for a bare %s",
		     t == P_MERGE ? "'<<'" : "'='");
		sb_release(&sb);
		return -EINVAL;
	case P_UNKNOWN:
		fail(e, n, "PyYAML's safe_load has no constructor for the tag %s", n->tag);
		sb_release(&sb);
		return -EINVAL;
	default:
		fail(e, n, "the tag %s needs a %s, not a scalar", n->tag,
		     t == P_MAP || t == P_SET ? "mapping" : "sequence");
		sb_release(&sb);
		return -EINVAL;
	}
	sb_release(&sb);
	if (err == -EINVAL)
		fail(e, n, "PyYAML cannot construct this %s",
		     n->tag && strcmp(n->tag, "!") ? n->tag :
		     y11_type_name(y11_resolve(n->str, n->len)));
	return err;
}

static int check_node(const struct ynode *n, unsigned depth, struct pyv_error *e);

static int check_map(const struct ynode *n, unsigned depth, struct pyv_error *e)
{
	size_t k, j;
	int err;

	for (k = 0; k < n->npairs; k++) {
		const struct ynode *key = n->pairs[k].key, *val = n->pairs[k].val;
		enum ptag kt = tag_of(key);

		if (kt == P_MERGE) {
			if (val->kind == YN_MAP) {
				if ((err = check_node(val, depth + 1, e)) < 0)
					return err;
				continue;
			}
			if (val->kind != YN_SEQ) {
				fail(e, val, "a merge (<<) needs a mapping or a list of mappings");
				return -EINVAL;
			}
			for (j = 0; j < val->nitems; j++) {
				if (val->items[j]->kind != YN_MAP) {
					fail(e, val->items[j],
					     "a merge (<<) list may hold only mappings");
					return -EINVAL;
				}
				if ((err = check_node(val->items[j], depth + 1, e)) < 0)
					return err;
			}
			continue;
		}
		if (key->kind != YN_SCALAR || kt == P_SEQ || kt == P_MAP || kt == P_SET ||
		    kt == P_OMAP || kt == P_PAIRS) {
			fail(e, key, "a mapping key is a %s, which Python cannot hash",
			     key->kind == YN_SCALAR ? "collection" : ynode_kind_name(key->kind));
			return -EINVAL;
		}
		/* flatten_mapping turns an '=' key into the string "=". */
		if (kt != P_VALUE && (err = check_node(key, depth + 1, e)) < 0)
			return err;
		if ((err = check_node(val, depth + 1, e)) < 0)
			return err;
	}
	return 0;
}

static int check_node(const struct ynode *n, unsigned depth, struct pyv_error *e)
{
	enum ptag t = tag_of(n);
	size_t k;
	int err;

	if (depth > YT_MAX_DEPTH * 2) {
		fail(e, n, "nesting too deep");
		return -EINVAL;
	}
	if (n->kind == YN_SCALAR)
		return check_scalar(n, t, e);
	if (n->kind == YN_SEQ) {
		if (t == P_OMAP || t == P_PAIRS) {
			for (k = 0; k < n->nitems; k++) {
				const struct ynode *it = n->items[k];

				if (it->kind != YN_MAP || it->npairs != 1) {
					fail(e, it, "each item of %s must be a mapping of one pair",
					     n->tag);
					return -EINVAL;
				}
				if ((err = check_node(it->pairs[0].key, depth + 1, e)) < 0 ||
				    (err = check_node(it->pairs[0].val, depth + 1, e)) < 0)
					return err;
			}
			return 0;
		}
		if (t != P_SEQ) {
			fail(e, n, t == P_UNKNOWN ? "PyYAML's safe_load has no constructor for the "
			     "tag %s" : "the tag %s does not take a sequence", n->tag);
			return -EINVAL;
		}
		for (k = 0; k < n->nitems; k++)
			if ((err = check_node(n->items[k], depth + 1, e)) < 0)
				return err;
		return 0;
	}
	if (t != P_MAP && t != P_SET) {
		fail(e, n, t == P_UNKNOWN ? "PyYAML's safe_load has no constructor for the tag %s" :
		     "the tag %s does not take a mapping", n->tag);
		return -EINVAL;
	}
	return check_map(n, depth, e);
}

int pyv_check(const struct ynode *root, struct pyv_error *e)
{
	return root ? check_node(root, 0, e) : 0;
}

/* ---- flattening -------------------------------------------------------- */

struct pairs {
	const struct ypair **v;
	bool *merged;
	size_t n, cap;
};

static int pairs_push(struct pairs *p, const struct ypair *pair, bool merged)
{
	size_t vcap = p->cap, mcap = p->cap;

	/* One capacity for both: it grows once both have room. */
	if (GROW(p->v, vcap, p->n, 16) < 0 || GROW(p->merged, mcap, p->n, 16) < 0)
		return -ENOMEM;
	p->cap = vcap;
	p->v[p->n] = pair;
	p->merged[p->n++] = merged;
	return 0;
}

static int flatten_into(const struct ynode *n, struct pairs *out, bool merged, unsigned depth)
{
	size_t k, j;
	int err;

	if (depth > YT_MAX_DEPTH * 2)
		return -EINVAL;
	/* Merged pairs first (later sources first, so earlier ones win in
	 * the dict), then the mapping's own. */
	for (k = 0; k < n->npairs; k++) {
		const struct ypair *p = &n->pairs[k];
		const struct ynode *v = p->val;

		if (tag_of(p->key) != P_MERGE)
			continue;
		if (v->kind == YN_MAP) {
			if ((err = flatten_into(v, out, true, depth + 1)) < 0)
				return err;
		} else if (v->kind == YN_SEQ) {
			for (j = v->nitems; j-- > 0;)
				if (v->items[j]->kind == YN_MAP &&
				    (err = flatten_into(v->items[j], out, true, depth + 1)) < 0)
					return err;
		}
	}
	for (k = 0; k < n->npairs; k++)
		if (tag_of(n->pairs[k].key) != P_MERGE &&
		    (err = pairs_push(out, &n->pairs[k], merged)) < 0)
			return err;
	return 0;
}

int pyv_flatten(const struct ynode *n, const struct ypair ***out, bool **merged, size_t *nout)
{
	struct pairs p = { 0 };
	int err;

	*out = NULL;
	*nout = 0;
	if (merged)
		*merged = NULL;
	if ((err = flatten_into(n, &p, false, 0)) < 0) {
		free(p.v);
		free(p.merged);
		return err;
	}
	*out = p.v;
	*nout = p.n;
	if (merged)
		*merged = p.merged;
	else
		free(p.merged);
	return 0;
}

/* ---- printing ---------------------------------------------------------- */

static int repr_quoted(const char *s, size_t len, bool bytes, struct strbuf *out)
{
	bool sq = memchr(s, '\'', len) != NULL, dq = memchr(s, '"', len) != NULL;
	char q = sq && !dq ? '"' : '\'';
	size_t i = 0;
	int err = 0;

	if (bytes && (err = sb_addc(out, 'b')) < 0)
		return err;
	if ((err = sb_addc(out, q)) < 0)
		return err;
	while (i < len && !err) {
		unsigned char c = (unsigned char)s[i];
		unsigned cp = c;
		size_t n = 1;

		if (c == q || c == '\\')
			err = sb_addf(out, "\\%c", c);
		else if (c == '\n')
			err = sb_adds(out, "\\n");
		else if (c == '\r')
			err = sb_adds(out, "\\r");
		else if (c == '\t')
			err = sb_adds(out, "\\t");
		else if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80))
			err = sb_addf(out, "\\x%02x", c);
		else if (c < 0x80)
			err = sb_addc(out, (char)c);
		else if (!(n = utf8_seq((const unsigned char *)s + i, len - i, &cp)))
			n = 1, err = sb_addf(out, "\\x%02x", c);
		else if (uc_printable(cp))
			err = sb_add(out, s + i, n);
		else if (cp <= 0xff)
			err = sb_addf(out, "\\x%02x", cp);
		else if (cp <= 0xffff)
			err = sb_addf(out, "\\u%04x", cp);
		else
			err = sb_addf(out, "\\U%08x", cp);
		i += n;
	}
	return err ? err : sb_addc(out, q);
}

int pyv_repr_str(const char *s, size_t len, struct strbuf *out)
{
	return repr_quoted(s, len, false, out);
}

static int print_node(const struct ynode *n, bool repr, struct strbuf *out, enum pyv_kind *kind,
		      struct pyv_error *e, unsigned depth);

static int scalar_text(const struct ynode *n, enum ptag t, bool repr, struct strbuf *out,
		       struct pyv_error *e)
{
	struct strbuf tmp = STRBUF_INIT;
	int err = 0;

	switch (t) {
	case P_STR:
	case P_VALUE:   /* only as a key: "=" */
		return repr ? pyv_repr_str(n->str, n->len, out) : sb_add(out, n->str, n->len);
	case P_NULL:
		return sb_adds(out, "None");
	case P_BOOL:
		return sb_adds(out, (n->str[0] | 0x20) == 'y' || (n->str[0] | 0x20) == 't' ||
				    ((n->str[0] | 0x20) == 'o' && n->len == 2) ? "True" : "False");
	case P_INT:
		err = y11_str(n->str, n->len, Y11_INT, out);
		break;
	case P_FLOAT:
		err = y11_str(n->str, n->len, Y11_FLOAT, out);
		break;
	case P_TIMESTAMP:
		err = repr ? y11_ts_repr(n->str, n->len, out) :
			     y11_str(n->str, n->len, Y11_TIMESTAMP, out);
		break;
	case P_BINARY:
		if (!(err = b64_decode(n->str, n->len, &tmp)))
			err = repr_quoted(tmp.buf ? tmp.buf : "", tmp.len, true, out);
		sb_release(&tmp);
		break;
	default:
		err = -EINVAL;
	}
	if (err == -EINVAL)
		fail(e, n, "PyYAML cannot construct this value");
	return err;
}

struct kv {
	const struct ynode *key, *val;
};

/* The pairs of a mapping as Python's dict holds them: distinct keys in
 * the order of their first appearance (the dict keeps the first key
 * object), each with its last value. *out is caller-owned (free()). */
static int dict_pairs(const struct ynode *n, struct kv **out, size_t *nout)
{
	const struct ypair **p = NULL;
	struct strbuf *ids = NULL;
	struct kv *v = NULL;
	size_t np = 0, k, j, m = 0;
	int err;

	if ((err = pyv_flatten(n, &p, NULL, &np)) < 0)
		return err;
	err = -ENOMEM;
	if (!(v = calloc(np ? np : 1, sizeof(*v))) || !(ids = calloc(np ? np : 1, sizeof(*ids))))
		goto out;
	err = 0;
	/* Quadratic, but only over the collections inside one value. */
	for (k = 0; k < np && !err; k++) {
		if ((err = pyv_key_ident(p[k]->key, &ids[m])) < 0)
			break;
		for (j = 0; j < m; j++)
			if (ids[j].len == ids[m].len && !memcmp(ids[j].buf, ids[m].buf, ids[m].len))
				break;
		if (j < m) {
			v[j].val = p[k]->val;
			sb_reset(&ids[m]);
			continue;
		}
		v[m].key = p[k]->key;
		v[m].val = p[k]->val;
		m++;
	}
out:
	for (k = 0; ids && k < np; k++)
		sb_release(&ids[k]);
	free(ids);
	free(p);
	if (err < 0) {
		free(v);
		return err;
	}
	*out = v;
	*nout = m;
	return 0;
}

static int print_map(const struct ynode *n, bool set, struct strbuf *out, struct pyv_error *e,
		     unsigned depth)
{
	struct kv *p = NULL;
	enum pyv_kind kind;
	size_t np = 0, k;
	int err;

	if ((err = dict_pairs(n, &p, &np)) < 0)
		return err;
	if (set && !np) {
		free(p);
		return sb_adds(out, "set()");
	}
	err = sb_addc(out, '{');
	for (k = 0; k < np && !err; k++) {
		if (k && (err = sb_adds(out, ", ")) < 0)
			break;
		if ((err = print_node(p[k].key, true, out, &kind, e, depth + 1)) < 0)
			break;
		if (!set && !(err = sb_adds(out, ": ")))
			err = print_node(p[k].val, true, out, &kind, e, depth + 1);
	}
	free(p);
	return err ? err : sb_addc(out, '}');
}

static int print_node(const struct ynode *n, bool repr, struct strbuf *out, enum pyv_kind *kind,
		      struct pyv_error *e, unsigned depth)
{
	enum ptag t = tag_of(n);
	enum pyv_kind sub;
	size_t k;
	int err = 0;

	if (depth > YT_MAX_DEPTH * 2) {
		fail(e, n, "nesting too deep");
		return -EINVAL;
	}
	if (n->kind == YN_SCALAR) {
		/* flatten_mapping makes an '=' key a str; as a value it fails. */
		*kind = t == P_STR || t == P_VALUE ? PYV_STR : PYV_SCALAR;
		return scalar_text(n, t, repr, out, e);
	}
	*kind = PYV_COLLECTION;
	if (n->kind == YN_MAP) {
		if (t == P_SET)
			*kind = PYV_SET;
		return print_map(n, t == P_SET, out, e, depth);
	}
	if ((err = sb_addc(out, '[')) < 0)
		return err;
	for (k = 0; k < n->nitems && !err; k++) {
		const struct ynode *it = n->items[k];

		if (k && (err = sb_adds(out, ", ")) < 0)
			break;
		if (t == P_OMAP || t == P_PAIRS) {
			err = sb_addc(out, '(');
			if (!err)
				err = print_node(it->pairs[0].key, true, out, &sub, e, depth + 1);
			if (!err)
				err = sb_adds(out, ", ");
			if (!err)
				err = print_node(it->pairs[0].val, true, out, &sub, e, depth + 1);
			if (!err)
				err = sb_addc(out, ')');
		} else {
			err = print_node(it, true, out, &sub, e, depth + 1);
			if (sub == PYV_SET)
				*kind = PYV_SET;
		}
	}
	return err ? err : sb_addc(out, ']');
}

int pyv_str(const struct ynode *n, struct strbuf *out, enum pyv_kind *kind,
	    struct pyv_error *e)
{
	size_t mark = out->len;
	int err = print_node(n, false, out, kind, e, 0);

	if (err < 0 && out->buf) {
		out->len = mark;
		out->buf[mark] = '\0';
	}
	return err;
}

int pyv_key_ident(const struct ynode *n, struct strbuf *out)
{
	struct strbuf v = STRBUF_INIT;
	enum ptag t = tag_of(n);
	double d;
	char *end;
	int err;

	switch (t) {
	case P_STR:
	case P_VALUE:
		if ((err = sb_adds(out, "s:")) < 0)
			return err;
		return sb_add(out, n->str, n->len);
	case P_NULL:
		return sb_adds(out, "z");
	case P_BOOL:
		/* True == 1 and False == 0 as dict keys. */
		return sb_adds(out, (n->str[0] | 0x20) == 'y' || (n->str[0] | 0x20) == 't' ||
				    ((n->str[0] | 0x20) == 'o' && n->len == 2) ? "n:1" : "n:0");
	case P_INT:
		if ((err = y11_str(n->str, n->len, Y11_INT, &v)) < 0)
			goto out;
		if (!(err = sb_adds(out, "n:")))
			err = sb_add(out, v.buf, v.len);
		goto out;
	case P_FLOAT:
		if ((err = y11_str(n->str, n->len, Y11_FLOAT, &v)) < 0)
			goto out;
		d = strtod(sb_str(&v), &end);
		if (isnan(d)) {
			/* nan != nan: every one is a key of its own. */
			err = sb_addf(out, "nan:%p", (const void *)n);
		} else if (d == floor(d) && fabs(d) < 9.2e18) {
			err = sb_addf(out, "n:%lld", (long long)d);
		} else {
			if (!(err = sb_adds(out, "f:")))
				err = sb_add(out, v.buf, v.len);
		}
		goto out;
	default:
		if ((err = sb_addf(out, "%d:", (int)t)) < 0)
			return err;
		return print_node(n, true, out, &(enum pyv_kind){ PYV_SCALAR }, NULL, 0);
	}
out:
	sb_release(&v);
	return err;
}
