/* dialect: Python's int() and bash's arithmetic, for the integers specs
 * read out of variables; see dialect.h.
 *
 *   $ GPUS_PER_NODE=010 bash -c 'echo $((GPUS_PER_NODE - 1))'    -> 7
 *   $ python3 -c 'print(int(" 010 ") - 1)'                       -> 9 */
#include "dialect.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* bash stops at 1024 nested variable expansions; a spec has no business
 * near that, and each level costs a C stack frame here. */
#define ARITH_MAX_DEPTH 32

const char *dialect_name(enum dialect d)
{
	return d == DIALECT_PYTHON ? "python" : "shell";
}

static void set_why(char *why, size_t whylen, const char *msg)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", msg);
}

/* ---- Python's int(str) ------------------------------------------------ */

/* str.strip()'s ASCII whitespace: isspace() plus the four separators. */
static bool py_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

static int py_int(const char *s, size_t len, long long *out, char *why, size_t whylen)
{
	size_t i = 0, end = len, digits = 0;
	unsigned long long v = 0;
	bool neg = false, under = false;

	while (i < end && py_space((unsigned char)s[i]))
		i++;
	while (end > i && py_space((unsigned char)s[end - 1]))
		end--;
	if (i < end && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	for (; i < end; i++) {
		if (s[i] == '_' && digits && !under) {
			under = true;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			break;
		under = false;
		digits++;
		if (v > (ULLONG_MAX - 9) / 10) {
			set_why(why, whylen, "an integer out of range");
			return 0;
		}
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (!digits || under || i != end) {
		set_why(why, whylen, "not an integer to Python's int()");
		return 0;
	}
	if (v > (unsigned long long)LLONG_MAX + neg) {
		set_why(why, whylen, "an integer out of range");
		return 0;
	}
	*out = neg ? (long long)(0 - v) : (long long)v;
	return 1;
}

/* ---- bash arithmetic ------------------------------------------------- */

struct arith {
	const char *s;
	size_t len, i;
	envfs_lookup_fn fn;
	void *ctx;
	int depth;
	int err;                  /* a negative errno from fn */
	bool failed;
	char *why;
	size_t whylen;
};

static int a_fail(struct arith *a, const char *msg)
{
	if (!a->failed)
		set_why(a->why, a->whylen, msg);
	a->failed = true;
	return 0;
}

static void a_blanks(struct arith *a)
{
	while (a->i < a->len && (a->s[a->i] == ' ' || a->s[a->i] == '\t' ||
				 a->s[a->i] == '\n'))
		a->i++;
}

static bool a_peek(struct arith *a, const char *op)
{
	size_t n = strlen(op);

	a_blanks(a);
	return a->i + n <= a->len && !memcmp(a->s + a->i, op, n);
}

static bool a_take(struct arith *a, const char *op)
{
	if (!a_peek(a, op))
		return false;
	a->i += strlen(op);
	return true;
}

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_';
}

static int digit_value(char c, int base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base <= 36) {
		if (c >= 'a' && c <= 'z')
			return c - 'a' + 10;
		if (c >= 'A' && c <= 'Z')
			return c - 'A' + 10;
	} else {
		if (c >= 'a' && c <= 'z')
			return c - 'a' + 10;
		if (c >= 'A' && c <= 'Z')
			return c - 'A' + 36;
		if (c == '@')
			return 62;
		if (c == '_')
			return 63;
	}
	return 99;
}

/* A number token as bash lexes it: a run of alphanumerics, '#' and '@'. */
static uint64_t a_number(struct arith *a)
{
	size_t start = a->i, k;
	const char *t;
	uint64_t v = 0;
	int base = 10;

	while (a->i < a->len && (is_alnum(a->s[a->i]) || a->s[a->i] == '#' || a->s[a->i] == '@'))
		a->i++;
	t = a->s + start;
	k = 0;
	if (a->i - start > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
		base = 16;
		k = 2;
	} else if (a->i - start > 1 && t[0] == '0') {
		base = 8;
		k = 1;
	} else {
		const char *hash = memchr(t, '#', a->i - start);

		if (hash) {
			int b = 0;

			for (; t + k < hash; k++) {
				if (t[k] < '0' || t[k] > '9')
					return a_fail(a, "an invalid arithmetic base");
				b = b * 10 + (t[k] - '0');
				if (b > 64)
					return a_fail(a, "an invalid arithmetic base");
			}
			if (b < 2)
				return a_fail(a, "an invalid arithmetic base");
			base = b;
			k++;
		}
	}
	if (start + k == a->i && base != 8)
		return a_fail(a, "an invalid number");
	for (; start + k < a->i; k++) {
		int d = digit_value(t[k], base);

		if (d >= base)
			return a_fail(a, "a value too great for its base (bash refuses it)");
		v = v * (uint64_t)base + (uint64_t)d;
	}
	return v;
}

static uint64_t a_expr(struct arith *a, bool eval);

/* A name's value, itself read as an expression (bash does so). */
static uint64_t a_name(struct arith *a, bool eval)
{
	size_t start = a->i;
	const char *v = NULL;
	size_t vl = 0;
	struct arith sub;
	uint64_t r;
	int got;

	while (a->i < a->len && is_alnum(a->s[a->i]))
		a->i++;
	if (!eval)
		return 0;
	if (!a->fn || (got = a->fn(a->ctx, a->s + start, a->i - start, &v, &vl)) == 0 ||
	    got == -ELOOP)
		return a_fail(a, "read as the name of a variable that is not set (bash: unbound variable, "
			      "under set -u)");
	if (got < 0) {
		a->err = got;
		a->failed = true;
		return 0;
	}
	if (a->depth >= ARITH_MAX_DEPTH)
		return a_fail(a, "variables that name variables nest too deep");
	sub = (struct arith){ v ? v : "", vl, 0, a->fn, a->ctx, a->depth + 1, 0, false,
			      a->why, a->whylen };
	a_blanks(&sub);
	if (sub.i == sub.len)
		return 0;   /* set but empty: 0 */
	r = a_expr(&sub, true);
	a_blanks(&sub);
	if (!sub.failed && sub.i != sub.len)
		a_fail(&sub, "not an arithmetic expression (bash: syntax error)");
	if (sub.failed) {
		a->failed = true;
		a->err = sub.err;
	}
	return r;
}

static uint64_t a_unary(struct arith *a, bool eval)
{
	uint64_t v;

	if (a->failed)
		return 0;
	if (a->depth >= ARITH_MAX_DEPTH)
		return a_fail(a, "an expression nested too deep");
	a_blanks(a);
	if (a->i >= a->len)
		return a_fail(a, "an incomplete expression (bash: operand expected)");
	if (a_take(a, "!"))
		return !a_unary(a, eval);
	if (a_take(a, "~"))
		return ~a_unary(a, eval);
	if (a->s[a->i] == '-' && !a_peek(a, "--")) {
		a->i++;
		return 0 - a_unary(a, eval);
	}
	if (a->s[a->i] == '+' && !a_peek(a, "++")) {
		a->i++;
		return a_unary(a, eval);
	}
	if (a_take(a, "(")) {
		a->depth++;
		v = a_expr(a, eval);
		a->depth--;
		if (!a_take(a, ")"))
			return a_fail(a, "a missing ')'");
		return v;
	}
	if (a->s[a->i] >= '0' && a->s[a->i] <= '9')
		return a_number(a);
	if (is_alnum(a->s[a->i]))
		return a_name(a, eval);
	return a_fail(a, "not an arithmetic expression (bash: syntax error)");
}

/* Binary operators by bash's precedence, lowest level first. */
static const char *const levels[][4] = {
	{ "||" }, { "&&" }, { "|" }, { "^" }, { "&" }, { "==", "!=" },
	{ "<=", ">=", "<", ">" }, { "<<", ">>" }, { "+", "-" }, { "*", "/", "%" },
};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* The operator of level at the cursor, or NULL; "|" is not "||", "&" not
 * "&&", "<" not "<<" or "<=". */
static const char *a_op(struct arith *a, size_t level)
{
	size_t k;

	for (k = 0; k < 4 && levels[level][k]; k++) {
		const char *op = levels[level][k];
		size_t n = strlen(op);

		if (!a_peek(a, op))
			continue;
		if (n == 1 && a->i + 1 < a->len) {
			char next = a->s[a->i + 1];

			if ((op[0] == '|' && next == '|') || (op[0] == '&' && next == '&') ||
			    (op[0] == '<' && (next == '<' || next == '=')) ||
			    (op[0] == '>' && (next == '>' || next == '=')) ||
			    (op[0] == '*' && next == '*') || next == '=')
				continue;
		}
		return op;
	}
	return NULL;
}

static uint64_t a_level(struct arith *a, size_t level, bool eval)
{
	uint64_t l, r;
	const char *op;

	if (level == NLEVELS)
		return a_unary(a, eval);
	l = a_level(a, level + 1, eval);
	while (!a->failed && (op = a_op(a, level))) {
		bool sc = (!strcmp(op, "&&") && !l) || (!strcmp(op, "||") && l);

		a->i += strlen(op);
		r = a_level(a, level + 1, eval && !sc);
		if (a->failed || !eval)
			continue;
		if (!strcmp(op, "||"))
			l = l || r;
		else if (!strcmp(op, "&&"))
			l = l && r;
		else if (!strcmp(op, "|"))
			l |= r;
		else if (!strcmp(op, "^"))
			l ^= r;
		else if (!strcmp(op, "&"))
			l &= r;
		else if (!strcmp(op, "=="))
			l = l == r;
		else if (!strcmp(op, "!="))
			l = l != r;
		else if (!strcmp(op, "<="))
			l = (int64_t)l <= (int64_t)r;
		else if (!strcmp(op, ">="))
			l = (int64_t)l >= (int64_t)r;
		else if (!strcmp(op, "<"))
			l = (int64_t)l < (int64_t)r;
		else if (!strcmp(op, ">"))
			l = (int64_t)l > (int64_t)r;
		else if (!strcmp(op, "<<"))
			l <<= r & 63;
		else if (!strcmp(op, ">>"))
			l = (uint64_t)((int64_t)l >> (r & 63));
		else if (!strcmp(op, "+"))
			l += r;
		else if (!strcmp(op, "-"))
			l -= r;
		else if (!strcmp(op, "*"))
			l *= r;
		else if (!r)
			return a_fail(a, "a division by zero");
		else if ((int64_t)l == INT64_MIN && (int64_t)r == -1)
			l = !strcmp(op, "/") ? l : 0;
		else if (!strcmp(op, "/"))
			l = (uint64_t)((int64_t)l / (int64_t)r);
		else
			l = (uint64_t)((int64_t)l % (int64_t)r);
	}
	return l;
}

static uint64_t a_expr(struct arith *a, bool eval)
{
	return a_level(a, 0, eval);
}

static int bash_int(const char *s, size_t len, envfs_lookup_fn fn, void *ctx, long long *out,
		    char *why, size_t whylen)
{
	struct arith a = { s, len, 0, fn, ctx, 0, 0, false, why, whylen };
	uint64_t v;

	a_blanks(&a);
	if (a.i == a.len) {
		/* $((X - 1)) with X set but empty: X is 0 to bash. */
		*out = 0;
		return 1;
	}
	v = a_expr(&a, true);
	a_blanks(&a);
	if (!a.failed && a.i != a.len)
		a_fail(&a, "not an arithmetic expression (bash: syntax error)");
	if (a.err)
		return a.err;
	if (a.failed)
		return 0;
	*out = (long long)v;
	return 1;
}

int dialect_int(enum dialect d, const char *s, size_t len, envfs_lookup_fn fn, void *ctx,
		long long *out, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	if (d == DIALECT_PYTHON)
		return py_int(s, len, out, why, whylen);
	return bash_int(s, len, fn, ctx, out, why, whylen);
}
