/* template: expands the value templates of specs.
 *
 *   HIP_VISIBLE_DEVICES: "$(indices GPUS_PER_NODE)"    ->  0,1,2,3,4,5,6,7
 *   NCCL_SOCKET_IFNAME: "${IFACE:-eth0}"               ->  eth0
 *
 * Expansion never fails on bad text: anything malformed is copied as
 * written and noted in res->problem, so a typo in a spec shows up in the
 * value and in diagnostics instead of hiding the variable. Defaults are
 * expanded only when used, so they cost no lookups (and cause no cycles)
 * otherwise; each nested default recurses once, bounded by TMPL_MAX_DEPTH. */
#include "template.h"
#include "text.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TMPL_MAX_DEPTH 64
#define TMPL_MAX_INDICES 1024

struct tx {
	const char *src;          /* the whole template, for columns */
	envfs_lookup_fn fn;
	void *ctx;
	struct strbuf *out;
	struct tmpl_result *res;
};

static void problem(struct tx *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct tx *t, const char *fmt, ...)
{
	va_list ap;

	if (t->res->problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(t->res->problem, sizeof(t->res->problem), fmt, ap);
	va_end(ap);
}

static bool is_name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static size_t name_len(const char *s, size_t len)
{
	size_t n = 0;

	if (len == 0 || !is_name_start(s[0]))
		return 0;
	while (n < len && is_name_char(s[n]))
		n++;
	return n;
}

/* A value fit for a one-line message: short, printable. */
static void quote_value(char *dst, size_t dstlen, const char *v, size_t len)
{
	size_t i, j = 0, max = 24;

	for (i = 0; i < len && i < max && j + 2 < dstlen; i++) {
		unsigned char c = (unsigned char)v[i];

		dst[j++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (i < len && j + 4 < dstlen) {
		memcpy(dst + j, "...", 3);
		j += 3;
	}
	dst[j] = '\0';
}

/* Index of the bracket closing the one opened just before s[from], or len. */
static size_t find_close(const char *s, size_t len, size_t from, char open, char close)
{
	size_t i, level = 1;

	for (i = from; i < len; i++) {
		if (s[i] == open)
			level++;
		else if (s[i] == close && --level == 0)
			return i;
	}
	return len;
}

static int expand(struct tx *t, const char *s, size_t len, int depth);

static size_t column(const struct tx *t, const char *p)
{
	return (size_t)(p - t->src) + 1;
}

/* Looks NAME up; -ELOOP comes back as is for the caller to keep the
 * reference literal. The value is "" when unset. Returns 1 when set. */
static int lookup(struct tx *t, const char *name, size_t n, const char **v, size_t *vl)
{
	int r = 0;

	*v = "";
	*vl = 0;
	if (t->fn)
		r = t->fn(t->ctx, name, n, v, vl);
	if (r <= 0 || !*v) {
		*v = "";
		*vl = 0;
	}
	if (r == -ELOOP)
		t->res->cycle = true;
	return r;
}

/* `${…}` starting at s[*i]; advances *i past it. */
static int expand_ref(struct tx *t, const char *s, size_t len, size_t *i, int depth)
{
	const char *ref = s + *i, *body = ref + 2, *v;
	size_t end = find_close(s, len, *i + 2, '{', '}');
	size_t reflen, blen, n, vl;
	int r;

	if (end == len) {
		problem(t, "unterminated \"${\" at column %zu", column(t, ref));
		*i = len;
		return sb_add(t->out, ref, (size_t)(s + len - ref));
	}
	reflen = end + 1 - *i;
	blen = reflen - 3;
	*i = end + 1;
	n = name_len(body, blen);
	if (n == 0 || (n < blen && (blen - n < 2 || memcmp(body + n, ":-", 2) != 0))) {
		problem(t, "\"%.*s\" at column %zu is not ${NAME} or ${NAME:-default}",
			reflen > 40 ? 40 : (int)reflen, ref, column(t, ref));
		return sb_add(t->out, ref, reflen);
	}
	r = lookup(t, body, n, &v, &vl);
	if (r == -ELOOP)
		return sb_add(t->out, ref, reflen);
	if (r < 0)
		return r;
	if (n == blen || vl > 0)
		return sb_add(t->out, v, vl);
	if (depth >= TMPL_MAX_DEPTH) {
		problem(t, "defaults nest deeper than %d at column %zu", TMPL_MAX_DEPTH,
			column(t, ref));
		return sb_add(t->out, ref, reflen);
	}
	return expand(t, body + n + 2, blen - n - 2, depth + 1);
}

/* `$(…)` starting at s[*i]; advances *i past it. */
static int expand_func(struct tx *t, const char *s, size_t len, size_t *i)
{
	const char *ref = s + *i, *p, *fname, *arg, *v;
	size_t end = find_close(s, len, *i + 2, '(', ')');
	size_t reflen, blen, fn_len, arg_len, k, vl;
	int shown, r, err;
	long long count;
	char q[32];

	if (end == len) {
		problem(t, "unterminated \"$(\" at column %zu", column(t, ref));
		*i = len;
		return sb_add(t->out, ref, (size_t)(s + len - ref));
	}
	reflen = end + 1 - *i;
	shown = reflen > 48 ? 48 : (int)reflen;
	blen = reflen - 3;
	*i = end + 1;

	p = ref + 2;
	while (p < ref + 2 + blen && is_blank(*p))
		p++;
	fname = p;
	while (p < ref + 2 + blen && (is_name_char(*p) || *p == '-'))
		p++;
	fn_len = (size_t)(p - fname);
	if (fn_len != 7 || memcmp(fname, "indices", 7) != 0) {
		problem(t, "%.*s at column %zu: unknown function \"%.*s\"", shown, ref,
			column(t, ref), fn_len > 24 ? 24 : (int)fn_len, fname);
		return sb_add(t->out, ref, reflen);
	}
	while (p < ref + 2 + blen && is_blank(*p))
		p++;
	arg = p;
	arg_len = name_len(arg, (size_t)(ref + 2 + blen - arg));
	p += arg_len;
	while (p < ref + 2 + blen && is_blank(*p))
		p++;
	if (arg_len == 0 || p != ref + 2 + blen) {
		problem(t, "%.*s at column %zu: expected $(indices NAME)", shown, ref,
			column(t, ref));
		return sb_add(t->out, ref, reflen);
	}

	r = lookup(t, arg, arg_len, &v, &vl);
	if (r == -ELOOP)
		return sb_add(t->out, ref, reflen);
	if (r < 0)
		return r;
	if (!text_parse_ll(v, vl, &count) || count < 1 || count > TMPL_MAX_INDICES) {
		quote_value(q, sizeof(q), v, vl);
		problem(t, "%.*s: \"%s\" is not a count from 1 to %d", shown, ref, q,
			TMPL_MAX_INDICES);
		return 0;
	}
	for (k = 0; k < (size_t)count; k++)
		if ((err = sb_addf(t->out, k ? ",%zu" : "%zu", k)) < 0)
			return err;
	return 0;
}

static int expand(struct tx *t, const char *s, size_t len, int depth)
{
	size_t i = 0;
	const char *d;
	int err = 0;

	while (i < len) {
		if (!(d = memchr(s + i, '$', len - i)))
			return sb_add(t->out, s + i, len - i);
		if ((err = sb_add(t->out, s + i, (size_t)(d - (s + i)))) < 0)
			return err;
		i = (size_t)(d - s);
		if (i + 1 < len && s[i + 1] == '{') {
			err = expand_ref(t, s, len, &i, depth);
		} else if (i + 1 < len && s[i + 1] == '(') {
			err = expand_func(t, s, len, &i);
		} else {
			/* `$$` is one `$`; any other `$` stands for itself. */
			err = sb_addc(t->out, '$');
			i += i + 1 < len && s[i + 1] == '$' ? 2 : 1;
		}
		if (err < 0)
			return err;
	}
	return 0;
}

int tmpl_expand(const char *src, envfs_lookup_fn fn, void *ctx,
		struct strbuf *out, struct tmpl_result *res)
{
	struct tmpl_result scratch;
	struct tx t = { src, fn, ctx, out, res ? res : &scratch };
	size_t mark;
	int err;

	if (!src || !out)
		return -EINVAL;
	mark = out->len;
	t.res->cycle = false;
	t.res->problem[0] = '\0';
	err = expand(&t, src, strlen(src), 0);
	if (err < 0 && out->buf) {
		/* Leave out as it was, not with half an expansion. */
		out->len = mark;
		out->buf[mark] = '\0';
	}
	return err;
}
