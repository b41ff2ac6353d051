/* dialect: Python's int() and bash's arithmetic, for the integers specs
 * read out of variables; see dialect.h.
 *
 *   $ GPUS_PER_NODE=010 bash -c 'echo $((GPUS_PER_NODE - 1))'    -> 7
 *   $ python3 -c 'print(int(" 010 ") - 1)'                       -> 9 */
#include "dialect.h"
#include "text.h"
#include "unicode.h"

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

/* The code point at s[*i] (advancing *i), or -1 for a byte that starts no
 * valid UTF-8 sequence (Python's str has no such thing: not a digit). */
static long next_cp(const char *s, size_t len, size_t *i)
{
	unsigned cp;
	size_t n = utf8_seq((const unsigned char *)s + *i, len - *i, &cp);

	if (!n) {
		(*i)++;
		return -1;
	}
	*i += n;
	return (long)cp;
}

/* int(str): Unicode whitespace around it, an optional sign, decimal
 * digits of any script with single underscores between them. Past the
 * range of long long the value saturates: Python's ints have no bound, and
 * the small numbers specs compare with still compare right. */
static int py_int(const char *s, size_t len, long long *out, char *why, size_t whylen)
{
	size_t i = 0, end, mark, digits = 0;
	unsigned long long v = 0;
	bool neg = false, under = false, big = false;
	long cp;

	while (i < len) {
		mark = i;
		if ((cp = next_cp(s, len, &mark)) < 0 || !uc_space((unsigned)cp))
			break;
		i = mark;
	}
	/* end: just past the last code point that is not whitespace. */
	for (end = mark = i; mark < len;)
		if ((cp = next_cp(s, len, &mark)) < 0 || !uc_space((unsigned)cp))
			end = mark;
	if (i < end && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	while (i < end) {
		int d;

		mark = i;
		cp = next_cp(s, end, &mark);
		if (cp == '_' && digits && !under) {
			under = true;
			i = mark;
			continue;
		}
		if (cp < 0 || (d = uc_decimal((unsigned)cp)) < 0)
			break;
		i = mark;
		under = false;
		digits++;
		if (v > (ULLONG_MAX - 9) / 10)
			big = true;
		else
			v = v * 10 + (unsigned)d;
	}
	if (!digits || under || i != end) {
		set_why(why, whylen, "not an integer to Python's int()");
		return 0;
	}
	if (big || v > (unsigned long long)LLONG_MAX + neg)
		*out = neg ? LLONG_MIN : LLONG_MAX;
	else
		*out = neg ? (long long)(0 - v) : (long long)v;
	return 1;
}

/* ---- bash arithmetic ------------------------------------------------- */

/* A variable assigned inside the expression being evaluated: bash keeps
 * it for the rest of that evaluation ($((x=2, x*3)) is 6). */
struct arith_var {
	char name[64];
	int64_t value;
};

#define ARITH_MAX_VARS 16

/* One evaluation: the lookup, the assignments made so far and the first
 * failure, shared by the nested evaluations of variables' values. */
struct arith_ctx {
	envfs_lookup_fn fn;
	void *ctx;
	struct arith_var vars[ARITH_MAX_VARS];
	size_t nvars;
	int err;                  /* a negative errno from fn */
	bool failed;
	char *why;
	size_t whylen;
};

/* One text being parsed: the value of a variable, or the top one. */
struct arith {
	struct arith_ctx *c;
	const char *s;
	size_t len, i;
	int depth;
};

static uint64_t a_fail(struct arith *a, const char *msg)
{
	if (!a->c->failed)
		set_why(a->c->why, a->c->whylen, msg);
	a->c->failed = true;
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

static bool is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
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

static uint64_t a_comma(struct arith *a, bool eval);

static struct arith_var *a_var(struct arith_ctx *c, const char *name, size_t len)
{
	size_t k;

	for (k = 0; k < c->nvars; k++)
		if (strlen(c->vars[k].name) == len && !memcmp(c->vars[k].name, name, len))
			return &c->vars[k];
	return NULL;
}

/* The value of a name: assigned earlier in this evaluation, else the
 * variable's text read as an expression itself (bash does so). */
static uint64_t a_read(struct arith *a, const char *name, size_t len)
{
	struct arith_var *v = a_var(a->c, name, len);
	const char *val = NULL;
	size_t vl = 0;
	struct arith sub;
	uint64_t r;
	int got;

	if (v)
		return (uint64_t)v->value;
	if (!a->c->fn || (got = a->c->fn(a->c->ctx, name, len, &val, &vl)) == 0 || got == -ELOOP)
		return a_fail(a, "read as the name of a variable that is not set (bash: unbound "
			      "variable, under set -u)");
	if (got < 0) {
		a->c->err = got;
		a->c->failed = true;
		return 0;
	}
	if (a->depth >= ARITH_MAX_DEPTH)
		return a_fail(a, "variables that name variables nest too deep");
	sub = (struct arith){ a->c, val ? val : "", vl, 0, a->depth + 1 };
	a_blanks(&sub);
	if (sub.i == sub.len)
		return 0;   /* set but empty: 0 */
	r = a_comma(&sub, true);
	a_blanks(&sub);
	if (!a->c->failed && sub.i != sub.len)
		a_fail(&sub, "not an arithmetic expression (bash: syntax error)");
	return r;
}

static void a_write(struct arith *a, const char *name, size_t len, uint64_t value)
{
	struct arith_var *v = a_var(a->c, name, len);

	if (!v && a->c->nvars < ARITH_MAX_VARS && len < sizeof(v->name)) {
		v = &a->c->vars[a->c->nvars++];
		memcpy(v->name, name, len);
		v->name[len] = '\0';
	}
	if (v)
		v->value = (int64_t)value;
	else
		a_fail(a, "assigns more variables than primus-envfs follows");
}

/* A name at the cursor, with what follows it: ++ or -- after it, or
 * nothing. */
static uint64_t a_name(struct arith *a, bool eval)
{
	size_t start = a->i, len;
	uint64_t v;

	while (a->i < a->len && is_alnum(a->s[a->i]))
		a->i++;
	len = a->i - start;
	if (a_take(a, "++") || a_take(a, "--")) {
		bool inc = a->s[a->i - 1] == '+';

		if (!eval)
			return 0;
		v = a_read(a, a->s + start, len);
		if (!a->c->failed)
			a_write(a, a->s + start, len, inc ? v + 1 : v - 1);
		return v;
	}
	return eval ? a_read(a, a->s + start, len) : 0;
}

static uint64_t a_unary(struct arith *a, bool eval);

static uint64_t a_power(struct arith *a, bool eval)
{
	uint64_t base = a_unary(a, eval), r = 1;
	int64_t exp;

	if (a->c->failed || !a_take(a, "**"))
		return base;
	/* Right-associative: 2**3**2 is 2**9. */
	exp = (int64_t)a_power(a, eval);
	if (a->c->failed || !eval)
		return 0;
	if (exp < 0)
		return a_fail(a, "a negative exponent (bash refuses it)");
	while (exp-- > 0)
		r *= base;
	return r;
}

static uint64_t a_unary(struct arith *a, bool eval)
{
	uint64_t v;

	if (a->c->failed)
		return 0;
	if (a->depth >= ARITH_MAX_DEPTH)
		return a_fail(a, "an expression nested too deep");
	a_blanks(a);
	if (a->i >= a->len)
		return a_fail(a, "an incomplete expression (bash: operand expected)");
	if (a_peek(a, "++") || a_peek(a, "--")) {
		bool inc = a->s[a->i] == '+';
		size_t start;

		a->i += 2;
		a_blanks(a);
		start = a->i;
		if (a->i >= a->len || !is_name_start(a->s[a->i]))
			return a_fail(a, "not an arithmetic expression (bash: syntax error)");
		while (a->i < a->len && is_alnum(a->s[a->i]))
			a->i++;
		if (!eval)
			return 0;
		v = a_read(a, a->s + start, a->i - start) + (inc ? 1 : (uint64_t)-1);
		if (!a->c->failed)
			a_write(a, a->s + start, a->i - start, v);
		return v;
	}
	if (a_take(a, "!"))
		return !a_unary(a, eval);
	if (a_take(a, "~"))
		return ~a_unary(a, eval);
	if (a_take(a, "-"))
		return 0 - a_unary(a, eval);
	if (a_take(a, "+"))
		return a_unary(a, eval);
	if (a_take(a, "(")) {
		a->depth++;
		v = a_comma(a, eval);
		a->depth--;
		if (!a_take(a, ")"))
			return a_fail(a, "a missing ')'");
		return v;
	}
	if (a->s[a->i] >= '0' && a->s[a->i] <= '9')
		return a_number(a);
	if (is_name_start(a->s[a->i]))
		return a_name(a, eval);
	return a_fail(a, "not an arithmetic expression (bash: syntax error)");
}

/* Binary operators by bash's precedence, lowest level first; the top of
 * the table sits under ?: and assignment. */
static const char *const levels[][4] = {
	{ "||" }, { "&&" }, { "|" }, { "^" }, { "&" }, { "==", "!=" },
	{ "<=", ">=", "<", ">" }, { "<<", ">>" }, { "+", "-" }, { "*", "/", "%" },
};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* The operator of level at the cursor, or NULL: "|" is not "||" or "|=",
 * "<" is not "<<" or "<=", "*" is not "**" or "*=", "+" is not "++". */
static const char *a_op(struct arith *a, size_t level)
{
	size_t k;

	for (k = 0; k < 4 && levels[level][k]; k++) {
		const char *op = levels[level][k];
		size_t n = strlen(op);
		char next;

		if (!a_peek(a, op))
			continue;
		next = a->i + n < a->len ? a->s[a->i + n] : '\0';
		if (next == '=' && strcmp(op, "<") && strcmp(op, ">") && strcmp(op, "=") &&
		    strcmp(op, "!"))
			continue;   /* an assignment operator: x+=1, x<<=1 */
		if (n == 1 && (next == op[0] || (op[0] == '<' && next == '=') ||
			       (op[0] == '>' && next == '=')))
			continue;
		if (n == 2 && (!strcmp(op, "<<") || !strcmp(op, ">>")) && next == '=')
			continue;
		return op;
	}
	return NULL;
}

static uint64_t a_binary(const char *op, uint64_t l, uint64_t r, struct arith *a)
{
	if (!strcmp(op, "||"))
		return l || r;
	if (!strcmp(op, "&&"))
		return l && r;
	if (!strcmp(op, "|"))
		return l | r;
	if (!strcmp(op, "^"))
		return l ^ r;
	if (!strcmp(op, "&"))
		return l & r;
	if (!strcmp(op, "=="))
		return l == r;
	if (!strcmp(op, "!="))
		return l != r;
	if (!strcmp(op, "<="))
		return (int64_t)l <= (int64_t)r;
	if (!strcmp(op, ">="))
		return (int64_t)l >= (int64_t)r;
	if (!strcmp(op, "<"))
		return (int64_t)l < (int64_t)r;
	if (!strcmp(op, ">"))
		return (int64_t)l > (int64_t)r;
	if (!strcmp(op, "<<"))
		return l << (r & 63);
	if (!strcmp(op, ">>"))
		return (uint64_t)((int64_t)l >> (r & 63));
	if (!strcmp(op, "+"))
		return l + r;
	if (!strcmp(op, "-"))
		return l - r;
	if (!strcmp(op, "*"))
		return l * r;
	if (!r)
		return a_fail(a, "a division by zero");
	if ((int64_t)l == INT64_MIN && (int64_t)r == -1)
		return !strcmp(op, "/") ? l : 0;
	if (!strcmp(op, "/"))
		return (uint64_t)((int64_t)l / (int64_t)r);
	return (uint64_t)((int64_t)l % (int64_t)r);
}

static uint64_t a_level(struct arith *a, size_t level, bool eval)
{
	uint64_t l, r;
	const char *op;

	if (level == NLEVELS)
		return a_power(a, eval);
	l = a_level(a, level + 1, eval);
	while (!a->c->failed && (op = a_op(a, level))) {
		bool sc = (!strcmp(op, "&&") && !l) || (!strcmp(op, "||") && l);

		a->i += strlen(op);
		r = a_level(a, level + 1, eval && !sc);
		if (!a->c->failed && eval)
			l = sc ? !!l : a_binary(op, l, r, a);
	}
	return l;
}

static uint64_t a_assign(struct arith *a, bool eval);

/* cond ? a : b, evaluating only the branch taken. */
static uint64_t a_ternary(struct arith *a, bool eval)
{
	uint64_t c = a_level(a, 0, eval), x, y;

	if (a->c->failed || !a_take(a, "?"))
		return c;
	x = a_comma(a, eval && c);
	if (!a_take(a, ":"))
		return a_fail(a, "a '?' without its ':'");
	y = a_assign(a, eval && !c);
	return c ? x : y;
}

/* NAME = expr and NAME op= expr, right-associative. */
static uint64_t a_assign(struct arith *a, bool eval)
{
	static const char *const ops[] = { "=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=",
					   "&=", "^=", "|=" };
	size_t save, start, len, k;
	uint64_t r, old;

	a_blanks(a);
	save = a->i;
	if (a->i < a->len && is_name_start(a->s[a->i])) {
		start = a->i;
		while (a->i < a->len && is_alnum(a->s[a->i]))
			a->i++;
		len = a->i - start;
		a_blanks(a);
		for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
			size_t n = strlen(ops[k]);

			if (a->i + n > a->len || memcmp(a->s + a->i, ops[k], n) ||
			    (n == 1 && a->i + 1 < a->len && a->s[a->i + 1] == '='))
				continue;
			a->i += n;
			r = a_assign(a, eval);
			if (a->c->failed || !eval)
				return 0;
			if (n > 1) {
				char op[4] = { 0 };

				memcpy(op, ops[k], n - 1);
				old = a_read(a, a->s + start, len);
				if (a->c->failed)
					return 0;
				r = a_binary(op, old, r, a);
			}
			if (!a->c->failed)
				a_write(a, a->s + start, len, r);
			return r;
		}
	}
	a->i = save;
	return a_ternary(a, eval);
}

static uint64_t a_comma(struct arith *a, bool eval)
{
	uint64_t v = a_assign(a, eval);

	while (!a->c->failed && a_take(a, ","))
		v = a_assign(a, eval);
	return v;
}

static int bash_int(const char *s, size_t len, envfs_lookup_fn fn, void *ctx, long long *out,
		    char *why, size_t whylen)
{
	struct arith_ctx c = { .fn = fn, .ctx = ctx, .why = why, .whylen = whylen };
	struct arith a = { &c, s, len, 0, 0 };
	uint64_t v;

	a_blanks(&a);
	if (a.i == a.len) {
		/* $((X - 1)) with X set but empty: X is 0 to bash. */
		*out = 0;
		return 1;
	}
	v = a_comma(&a, true);
	a_blanks(&a);
	if (!c.failed && a.i != a.len)
		a_fail(&a, "not an arithmetic expression (bash: syntax error)");
	if (c.err)
		return c.err;
	if (c.failed)
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
