/* template: expands the value templates of specs.
 *
 *   HIP_VISIBLE_DEVICES: "$(indices GPUS_PER_NODE)"    ->  0,1,2,3,4,5,6,7
 *   NCCL_SOCKET_IFNAME: "${IFACE:-eth0}"               ->  eth0
 *   JAX_COORDINATOR_IP: "${MASTER_ADDR-localhost}"     ->  os.getenv's rule
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
#include <stdint.h>
#include <string.h>

#define TMPL_MAX_DEPTH 64

struct tx {
	const char *src;          /* the whole template, for columns */
	enum dialect dialect;
	size_t limit;             /* out->len may not pass this */
	envfs_lookup_fn fn;
	void *ctx;
	struct strbuf *out;
	struct tmpl_result *res;
};

/* -E2BIG ends the expansion once it has grown past the limit; tmpl_expand
 * turns it into res->too_long. */
static int emit(struct tx *t, const char *s, size_t n)
{
	if (n > t->limit - t->out->len) {
		t->res->too_long = true;
		return -E2BIG;
	}
	return sb_add(t->out, s, n);
}

static int emitc(struct tx *t, char c)
{
	return emit(t, &c, 1);
}

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
	size_t reflen, blen, n, vl, skip;
	bool colon;
	int r;

	if (end == len) {
		problem(t, "unterminated \"${\" at column %zu", column(t, ref));
		*i = len;
		return emit(t, ref, (size_t)(s + len - ref));
	}
	reflen = end + 1 - *i;
	blen = reflen - 3;
	*i = end + 1;
	n = name_len(body, blen);
	colon = n + 2 <= blen && !memcmp(body + n, ":-", 2);
	skip = colon ? 2 : 1;
	if (n == 0 || (n < blen && !colon && body[n] != '-')) {
		problem(t, "\"%.*s\" at column %zu is not ${NAME}, ${NAME:-default} or "
			"${NAME-default}", reflen > 40 ? 40 : (int)reflen, ref, column(t, ref));
		return emit(t, ref, reflen);
	}
	r = lookup(t, body, n, &v, &vl);
	if (r == -ELOOP)
		return emit(t, ref, reflen);
	if (r < 0)
		return r;
	/* ${NAME:-d}: set and non-empty; ${NAME-d}: set. */
	if (n == blen || (colon ? vl > 0 : r > 0))
		return emit(t, v, vl);
	if (depth >= TMPL_MAX_DEPTH) {
		problem(t, "defaults nest deeper than %d at column %zu", TMPL_MAX_DEPTH,
			column(t, ref));
		return emit(t, ref, reflen);
	}
	return expand(t, body + n + skip, blen - n - skip, depth + 1);
}

/* `$(…)` starting at s[*i]; advances *i past it. */
static int expand_func(struct tx *t, const char *s, size_t len, size_t *i)
{
	const char *ref = s + *i, *p, *fname, *arg, *v;
	size_t end = find_close(s, len, *i + 2, '(', ')');
	size_t reflen, blen, fn_len, arg_len, vl;
	long long count, k;
	char why[96], num[24];
	int shown, r, err;

	if (end == len) {
		problem(t, "unterminated \"$(\" at column %zu", column(t, ref));
		*i = len;
		return emit(t, ref, (size_t)(s + len - ref));
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
		return emit(t, ref, reflen);
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
		return emit(t, ref, reflen);
	}

	r = lookup(t, arg, arg_len, &v, &vl);
	if (r == -ELOOP)
		return emit(t, ref, reflen);
	if (r < 0)
		return r;
	if (r == 0 && t->dialect == DIALECT_SHELL) {
		problem(t, "%.*s: %.*s is not set (bash: unbound variable, under set -u)",
			shown, ref, (int)arg_len, arg);
		return 0;
	}
	if ((r = dialect_int(t->dialect, v, vl, t->fn, t->ctx, &count, why, sizeof(why))) < 0)
		return r;
	if (r == 0) {
		problem(t, "%.*s: %.*s is %s", shown, ref, (int)arg_len, arg, why);
		return 0;
	}
	/* seq 0 -1 prints nothing: no device is visible. */
	if (count < 1) {
		problem(t, "%.*s: %.*s is %lld: no index at all", shown, ref, (int)arg_len, arg,
			count);
		return 0;
	}
	for (k = 0; k < count; k++) {
		int n = snprintf(num, sizeof(num), k ? ",%lld" : "%lld", k);

		if ((err = emit(t, num, (size_t)n)) < 0)
			return err;
	}
	return 0;
}

static int expand(struct tx *t, const char *s, size_t len, int depth)
{
	size_t i = 0;
	const char *d;
	int err = 0;

	while (i < len) {
		if (!(d = memchr(s + i, '$', len - i)))
			return emit(t, s + i, len - i);
		if ((err = emit(t, s + i, (size_t)(d - (s + i)))) < 0)
			return err;
		i = (size_t)(d - s);
		if (i + 1 < len && s[i + 1] == '{') {
			err = expand_ref(t, s, len, &i, depth);
		} else if (i + 1 < len && s[i + 1] == '(') {
			err = expand_func(t, s, len, &i);
		} else {
			/* `$$` is one `$`; any other `$` stands for itself. */
			err = emitc(t, '$');
			i += i + 1 < len && s[i + 1] == '$' ? 2 : 1;
		}
		if (err < 0)
			return err;
	}
	return 0;
}

int tmpl_expand(const char *src, enum dialect d, size_t max_len, envfs_lookup_fn fn,
		void *ctx, struct strbuf *out, struct tmpl_result *res)
{
	struct tmpl_result scratch;
	struct tx t = { src, d, 0, fn, ctx, out, res ? res : &scratch };
	size_t mark;
	int err;

	if (!src || !out)
		return -EINVAL;
	mark = out->len;
	t.limit = max_len > SIZE_MAX - mark ? SIZE_MAX : mark + max_len;
	t.res->cycle = false;
	t.res->too_long = false;
	t.res->problem[0] = '\0';
	err = expand(&t, src, strlen(src), 0);
	if (err == -E2BIG)
		return 0;
	if (err < 0 && out->buf) {
		/* Leave out as it was, not with half an expansion. */
		out->len = mark;
		out->buf[mark] = '\0';
	}
	return err;
}

/* Names inside the body of ${…} or $(indices …) at s[i]; returns the end. */
static int names_in(const char *s, size_t len, int depth,
		    int (*fn)(void *ctx, const char *name, size_t len), void *ctx)
{
	size_t i = 0, end, n;
	int err;

	if (depth > TMPL_MAX_DEPTH)
		return 0;
	while (i + 1 < len) {
		if (s[i] != '$') {
			i++;
			continue;
		}
		if (s[i + 1] == '$') {
			i += 2;
		} else if (s[i + 1] == '{') {
			end = find_close(s, len, i + 2, '{', '}');
			n = name_len(s + i + 2, end - i - 2);
			if (n && (err = fn(ctx, s + i + 2, n)) < 0)
				return err;
			/* the default, after ":-" or "-" */
			if (n && end < len) {
				size_t d = i + 2 + n + (s[i + 2 + n] == ':' ? 2 : 1);

				if (d < end && (err = names_in(s + d, end - d, depth + 1, fn, ctx)) < 0)
					return err;
			}
			i = end < len ? end + 1 : len;
		} else if (s[i + 1] == '(') {
			const char *p;

			end = find_close(s, len, i + 2, '(', ')');
			p = memmem(s + i + 2, end - i - 2, "indices", 7);
			if (p) {
				p += 7;
				while (p < s + end && is_blank(*p))
					p++;
				if ((n = name_len(p, (size_t)(s + end - p))) &&
				    (err = fn(ctx, p, n)) < 0)
					return err;
			}
			i = end < len ? end + 1 : len;
		} else {
			i++;
		}
	}
	return 0;
}

int tmpl_names(const char *src, int (*fn)(void *ctx, const char *name, size_t len), void *ctx)
{
	return src ? names_in(src, strlen(src), 0, fn, ctx) : 0;
}
