/* expr: parses and evaluates the `when:` conditions of specs.
 *
 *   when: NNODES > 1 && !(DUMP_HLO == "1")
 *
 * The parser recurses once per '(' or '!', and both count against
 * EXPR_MAX_DEPTH, so a hostile spec bounds the C stack and the tree.
 * `&&` and `||` chains are n-ary nodes so a long flat chain never deepens
 * the tree (evaluation and expr_free() recurse over it). */
#include "expr.h"
#include "grow.h"
#include "text.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <regex.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_MAX_DEPTH 64
#define EXPR_MAX_PATTERN 1024

enum expr_kind { EXPR_OR, EXPR_AND, EXPR_NOT, EXPR_CMP, EXPR_VAR, EXPR_STR, EXPR_INT,
	EXPR_INTF /* int(NAME, FALLBACK) */, EXPR_ON /* on(NAME) */ };
enum expr_op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_MATCH };

struct expr {
	enum expr_kind kind;
	enum expr_op op;      /* EXPR_CMP */
	char *text;           /* EXPR_VAR/EXPR_INTF/EXPR_ON name, EXPR_STR/EXPR_INT text */
	size_t len;
	long long fallback;   /* EXPR_INTF */
	struct expr **kids;   /* EXPR_OR/AND: n; EXPR_NOT: 1; EXPR_CMP: 2 */
	size_t nkids, kids_cap;
	regex_t *re;          /* OP_MATCH: the compiled pattern */
};

enum tok {
	T_END, T_NAME, T_STR, T_INT, T_LP, T_RP, T_COMMA, T_AND, T_OR, T_NOT,
	T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_MATCH,
};

struct parser {
	const char *src;
	enum tok tok;         /* the current token ... */
	size_t start, end;    /* ... and its extent in src */
	int depth;
	char *err;
	size_t errlen;
};

static int fail(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err && p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || is_digit(c);
}

/* Advances to the next token. */
static int next(struct parser *p)
{
	const char *s = p->src;
	size_t i = p->end;
	char c;

	while (is_space(s[i]))
		i++;
	p->start = i;
	c = s[i];
	if (c == '\0') {
		p->tok = T_END;
	} else if (c == '(' || c == ')') {
		p->tok = c == '(' ? T_LP : T_RP;
		i++;
	} else if (c == ',') {
		p->tok = T_COMMA;
		i++;
	} else if (c == '&' || c == '|') {
		if (s[i + 1] != c)
			return fail(p, "expected '%c%c' at column %zu", c, c, i + 1);
		p->tok = c == '&' ? T_AND : T_OR;
		i += 2;
	} else if (c == '!' || c == '<' || c == '>' || c == '=') {
		bool eq = s[i + 1] == '=';

		if (c == '=' && s[i + 1] == '~') {
			p->tok = T_MATCH;
			i += 2;
			p->end = i;
			return 0;
		}
		if (c == '=' && !eq)
			return fail(p, "expected '==' or '=~' at column %zu", i + 1);
		if (c == '!')
			p->tok = eq ? T_NE : T_NOT;
		else if (c == '<')
			p->tok = eq ? T_LE : T_LT;
		else if (c == '>')
			p->tok = eq ? T_GE : T_GT;
		else
			p->tok = T_EQ;
		i += eq ? 2 : 1;
	} else if (c == '\'' || c == '"') {
		for (i++; s[i] != c; i++) {
			if (c == '"' && s[i] == '\\' && s[i + 1] != '\0')
				i++;
			else if (s[i] == '\0')
				return fail(p, "unterminated string at column %zu", p->start + 1);
		}
		p->tok = T_STR;
		i++;
	} else if (is_digit(c) || (c == '-' && is_digit(s[i + 1]))) {
		for (i++; is_digit(s[i]); i++)
			;
		/* `1abc` is a typo, not the integer 1 followed by a name. */
		if (is_name_char(s[i]))
			return fail(p, "bad integer at column %zu", p->start + 1);
		p->tok = T_INT;
	} else if (is_name_start(c)) {
		for (i++; is_name_char(s[i]); i++)
			;
		p->tok = T_NAME;
	} else if (c >= 0x20 && c < 0x7f) {
		return fail(p, "unexpected character '%c' at column %zu", c, i + 1);
	} else {
		return fail(p, "unexpected byte 0x%02x at column %zu",
			    (unsigned)(unsigned char)c, i + 1);
	}
	p->end = i;
	return 0;
}

static struct expr *node_new(enum expr_kind kind)
{
	struct expr *e = calloc(1, sizeof(*e));

	if (e)
		e->kind = kind;
	return e;
}

void expr_free(struct expr *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->nkids; i++)
		expr_free(e->kids[i]);
	free(e->kids);
	free(e->text);
	if (e->re) {
		regfree(e->re);
		free(e->re);
	}
	free(e);
}

/* Appends kid to e; on failure kid still belongs to the caller. The array
 * doubles, so a long `||` chain stays linear. */
static int node_add(struct expr *e, struct expr *kid)
{
	if (GROW(e->kids, e->kids_cap, e->nkids, 1) < 0)
		return -ENOMEM;
	e->kids[e->nkids++] = kid;
	return 0;
}

static bool is_condition(const struct expr *e)
{
	return e->kind == EXPR_OR || e->kind == EXPR_AND || e->kind == EXPR_NOT ||
	       e->kind == EXPR_CMP;
}

static int parse_or(struct parser *p, struct expr **out);

static int enter(struct parser *p)
{
	if (++p->depth > EXPR_MAX_DEPTH)
		return fail(p, "nesting deeper than %d at column %zu", EXPR_MAX_DEPTH,
			    p->start + 1);
	return 0;
}

/* The token's text, unquoted and unescaped for strings. */
static int leaf(struct parser *p, enum expr_kind kind, struct expr **out)
{
	const char *s = p->src + p->start;
	size_t n = p->end - p->start, i, j = 0;
	struct expr *e = node_new(kind);

	if (!e)
		return -ENOMEM;
	if (kind == EXPR_STR) {
		s++;
		n -= 2;
	}
	if (!(e->text = malloc(n + 1))) {
		free(e);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		/* Single quotes never escape; the lexer guarantees a char follows. */
		if (kind == EXPR_STR && s[-1] == '"' && s[i] == '\\')
			i++;
		e->text[j++] = s[i];
	}
	e->text[j] = '\0';
	e->len = j;
	*out = e;
	return 0;
}

/* FN(NAME...: the cursor is on fn, followed by '('; leaves it past NAME,
 * with *out the leaf of kind for NAME. */
static int call_name(struct parser *p, const char *fn, enum expr_kind kind, struct expr **out)
{
	int err;

	if ((err = next(p)) < 0 || (err = next(p)) < 0)
		return err;
	if (p->tok != T_NAME)
		return fail(p, "%s( needs a variable name at column %zu", fn, p->start + 1);
	if ((err = leaf(p, kind, out)) < 0)
		return err;
	if ((err = next(p)) < 0) {
		expr_free(*out);
		*out = NULL;
	}
	return err;
}

/* int(NAME, FALLBACK): the cursor is on "int", followed by '('. */
static int parse_intf(struct parser *p, struct expr **out)
{
	struct expr *e = NULL;
	long long fb;
	int err;

	if ((err = call_name(p, "int", EXPR_INTF, &e)) < 0)
		return err;
	if (p->tok != T_COMMA) {
		err = fail(p, "int(NAME, FALLBACK) needs ', FALLBACK' at column %zu",
			   p->start + 1);
		goto out;
	}
	if ((err = next(p)) < 0)
		goto out;
	if (p->tok != T_INT ||
	    !text_parse_ll(p->src + p->start, p->end - p->start, &fb)) {
		err = fail(p, "int(NAME, FALLBACK) needs an integer FALLBACK at column %zu",
			   p->start + 1);
		goto out;
	}
	e->fallback = fb;
	if ((err = next(p)) < 0)
		goto out;
	if (p->tok != T_RP) {
		err = fail(p, "expected ')' at column %zu", p->start + 1);
		goto out;
	}
	*out = e;
	return 0;
out:
	expr_free(e);
	return err;
}

/* on(NAME): the cursor is on "on", followed by '('. */
static int parse_on(struct parser *p, struct expr **out)
{
	struct expr *e = NULL;
	int err;

	if ((err = call_name(p, "on", EXPR_ON, &e)) < 0)
		return err;
	if (p->tok != T_RP) {
		expr_free(e);
		return fail(p, "expected ')' at column %zu", p->start + 1);
	}
	*out = e;
	return 0;
}

/* Whether the name token is fn, called: fn followed by '('. */
static bool is_call(const struct parser *p, const char *fn)
{
	size_t n = strlen(fn);

	return p->end - p->start == n && !memcmp(p->src + p->start, fn, n) &&
	       p->src[p->end + strspn(p->src + p->end, " \t")] == '(';
}

static int parse_primary(struct parser *p, struct expr **out)
{
	struct expr *e = NULL;
	int err;

	switch (p->tok) {
	case T_NAME:
		if (is_call(p, "int")) {
			err = parse_intf(p, &e);
			break;
		}
		if (is_call(p, "on")) {
			err = parse_on(p, &e);
			break;
		}
		err = leaf(p, EXPR_VAR, &e);
		break;
	case T_STR:
		err = leaf(p, EXPR_STR, &e);
		break;
	case T_INT:
		err = leaf(p, EXPR_INT, &e);
		break;
	case T_LP:
		if ((err = enter(p)) < 0 || (err = next(p)) < 0 ||
		    (err = parse_or(p, &e)) < 0)
			goto out;
		if (p->tok != T_RP) {
			err = fail(p, "expected ')' at column %zu", p->start + 1);
			goto out;
		}
		p->depth--;
		break;
	default:
		return fail(p, "expected an operand at column %zu", p->start + 1);
	}
	if (err < 0)
		goto out;
	err = next(p);
out:
	if (err < 0) {
		expr_free(e);
		return err;
	}
	*out = e;
	return 0;
}

/* Groups a pattern may nest (bounded_pattern keeps a flag per level). */
#define EXPR_MAX_GROUPS 32
/* The largest count a {m,n} may give: glibc copies the piece that many
 * times. */
#define EXPR_MAX_REPEAT 255

/* Skips the bracket expression opening at s[i] ('['): returns the index
 * of its closing ']', or n when there is none (regcomp says so). */
static size_t bracket_end(const char *s, size_t n, size_t i)
{
	size_t j = i + 1;

	if (j < n && s[j] == '^')
		j++;
	if (j < n && s[j] == ']')
		j++;
	while (j < n && s[j] != ']') {
		/* [:class:], [=equiv=], [.coll.] may hold a ']'. */
		if (s[j] == '[' && j + 1 < n && (s[j + 1] == ':' || s[j + 1] == '=' ||
						 s[j + 1] == '.')) {
			char t = s[j + 1];
			size_t k = j + 2;

			while (k + 1 < n && !(s[k] == t && s[k + 1] == ']'))
				k++;
			j = k + 1 < n ? k + 2 : n;
			continue;
		}
		j++;
	}
	return j;
}

/* Refuses a pattern whose compile could explode in time and memory.
 * glibc's regcomp copies a repeated piece once per repetition, so a
 * repetition of a repetition, stacked (a++) or of a group that holds one
 * ((a+)*, (a{1,100}){1,100}), multiplies the copies, each level doubling
 * at least (a fuzzer's '(a*)*\\+++...' took seconds and gigabytes). A
 * spec's pattern gets one level, and counts up to 255. */
static int bounded_pattern(struct parser *p, const char *s, size_t n, size_t col)
{
	enum { NOTHING, PIECE, HOLDER, REPEATED } prev = NOTHING;
	bool holds[EXPR_MAX_GROUPS];
	size_t depth = 0, i;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\') {
			i++;
			prev = PIECE;
		} else if (c == '[') {
			i = bracket_end(s, n, i);
			prev = PIECE;
		} else if (c == '(') {
			if (depth == EXPR_MAX_GROUPS)
				return fail(p, "groups nested deeper than %d in a pattern at column %zu",
					    EXPR_MAX_GROUPS, col);
			holds[depth++] = false;
			prev = NOTHING;
		} else if (c == ')') {
			prev = depth && holds[--depth] ? HOLDER : PIECE;
		} else if (c == '|') {
			prev = NOTHING;
		} else if (c == '*' || c == '+' || c == '?' || c == '{') {
			/* glibc's ERE reads every '{' outside a bracket as an
			 * interval ({N}, {N,}, {N,M}, {,M}, {,}); one it cannot
			 * read is regcomp's error, after this. */
			if (c == '{') {
				unsigned long m;
				char *end;

				for (i++; i < n && s[i] != '}'; i = (size_t)(end - s)) {
					m = strtoul(s + i, &end, 10);
					if (end == s + i)
						end++;          /* the ',' */
					else if (m > EXPR_MAX_REPEAT)
						return fail(p, "a repetition count over %d in a pattern at "
							    "column %zu", EXPR_MAX_REPEAT, col);
				}
			}
			if (prev == REPEATED || prev == HOLDER)
				return fail(p, "a repetition of a repetition in a pattern at column %zu "
					    "(one level only)", col);
			for (size_t k = 0; k < depth; k++)
				holds[k] = true;
			prev = REPEATED;
		} else {
			prev = PIECE;
		}
	}
	return 0;
}

/* The right side of =~: a quoted literal, compiled now so that a bad
 * pattern is the spec's syntax error, not a condition that is silently
 * false. bash's [[ =~ ]] uses regcomp(REG_EXTENDED) too. */
static int compile_pattern(struct parser *p, struct expr *rhs, size_t col)
{
	char why[96];
	int rc;

	if (rhs->kind != EXPR_STR)
		return fail(p, "=~ needs a quoted pattern at column %zu", col);
	/* glibc matches a back-reference by backtracking, which a long value
	 * can make exponential: a spec gets no such pattern. */
	for (size_t i = 0; i + 1 < rhs->len; i++) {
		if (rhs->text[i] != '\\')
			continue;
		if (rhs->text[i + 1] >= '1' && rhs->text[i + 1] <= '9')
			return fail(p, "back-references are not allowed in a pattern at column %zu",
				    col);
		i++;
	}
	if (rhs->len > EXPR_MAX_PATTERN)
		return fail(p, "a pattern longer than %d bytes at column %zu", EXPR_MAX_PATTERN,
			    col);
	if ((rc = bounded_pattern(p, rhs->text, rhs->len, col)) < 0)
		return rc;
	if (!(rhs->re = malloc(sizeof(*rhs->re))))
		return -ENOMEM;
	if ((rc = regcomp(rhs->re, rhs->text, REG_EXTENDED | REG_NOSUB)) != 0) {
		/* Out of memory in regcomp is the pattern's size as often
		 * as the machine's: said as such, never an empty message. */
		if (rc == REG_ESPACE) {
			free(rhs->re);
			rhs->re = NULL;
			return fail(p, "a pattern too large to compile at column %zu", col);
		}
		regerror(rc, rhs->re, why, sizeof(why));
		free(rhs->re);
		rhs->re = NULL;
		return fail(p, "bad regular expression at column %zu: %s", col,
			    why[0] ? why : "regcomp refused it");
	}
	return 0;
}

static int parse_cmp(struct parser *p, struct expr **out)
{
	struct expr *lhs = NULL, *rhs = NULL, *e = NULL;
	enum expr_op op;
	size_t col;
	int err;

	if ((err = parse_primary(p, &lhs)) < 0)
		goto out;
	switch (p->tok) {
	case T_EQ: op = OP_EQ; break;
	case T_NE: op = OP_NE; break;
	case T_LT: op = OP_LT; break;
	case T_LE: op = OP_LE; break;
	case T_GT: op = OP_GT; break;
	case T_GE: op = OP_GE; break;
	case T_MATCH: op = OP_MATCH; break;
	default:
		*out = lhs;
		return 0;
	}
	/* A parenthesised condition has no text to compare; say so rather
	 * than invent one. */
	if (is_condition(lhs)) {
		err = fail(p, "cannot compare a condition at column %zu", p->start + 1);
		goto out;
	}
	if ((err = next(p)) < 0)
		goto out;
	col = p->start + 1;
	if ((err = parse_primary(p, &rhs)) < 0)
		goto out;
	if (is_condition(rhs)) {
		err = fail(p, "cannot compare a condition at column %zu", col);
		goto out;
	}
	if (op == OP_MATCH && (err = compile_pattern(p, rhs, col)) < 0)
		goto out;
	if (p->tok >= T_EQ) {
		err = fail(p, "comparisons do not chain at column %zu", p->start + 1);
		goto out;
	}
	if (!(e = node_new(EXPR_CMP)) || !(e->kids = calloc(2, sizeof(*e->kids)))) {
		err = -ENOMEM;
		goto out;
	}
	e->op = op;
	e->kids[0] = lhs;
	e->kids[1] = rhs;
	e->nkids = e->kids_cap = 2;
	*out = e;
	return 0;
out:
	expr_free(e);
	expr_free(lhs);
	expr_free(rhs);
	return err;
}

static int parse_not(struct parser *p, struct expr **out)
{
	struct expr *kid = NULL, *e = NULL;
	int err;

	if (p->tok != T_NOT)
		return parse_cmp(p, out);
	if ((err = enter(p)) < 0 || (err = next(p)) < 0 ||
	    (err = parse_not(p, &kid)) < 0)
		goto out;
	p->depth--;
	if (!(e = node_new(EXPR_NOT)) || (err = node_add(e, kid)) < 0) {
		err = -ENOMEM;
		goto out;
	}
	*out = e;
	return 0;
out:
	expr_free(e);
	expr_free(kid);
	return err;
}

/* One level of an n-ary `&&` or `||` chain. */
static int parse_chain(struct parser *p, enum tok op, enum expr_kind kind,
		       int (*sub)(struct parser *, struct expr **), struct expr **out)
{
	struct expr *kid = NULL, *e = NULL;
	int err;

	if ((err = sub(p, &kid)) < 0)
		goto out;
	if (p->tok != op) {
		*out = kid;
		return 0;
	}
	if (!(e = node_new(kind))) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		if ((err = node_add(e, kid)) < 0)
			goto out;
		kid = NULL;
		if (p->tok != op)
			break;
		if ((err = next(p)) < 0 || (err = sub(p, &kid)) < 0)
			goto out;
	}
	*out = e;
	return 0;
out:
	expr_free(e);
	expr_free(kid);
	return err;
}

static int parse_and(struct parser *p, struct expr **out)
{
	return parse_chain(p, T_AND, EXPR_AND, parse_not, out);
}

static int parse_or(struct parser *p, struct expr **out)
{
	return parse_chain(p, T_OR, EXPR_OR, parse_and, out);
}

int expr_parse(const char *src, struct expr **out, char *err, size_t errlen)
{
	struct parser p = { .src = src, .err = err, .errlen = errlen };
	struct expr *e = NULL;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!src || !out)
		return -EINVAL;
	if ((rc = next(&p)) < 0 || (rc = parse_or(&p, &e)) < 0)
		goto out;
	if (p.tok != T_END) {
		int n = (int)(p.end - p.start);

		rc = fail(&p, "unexpected '%.*s' at column %zu", n > 20 ? 20 : n,
			  src + p.start, p.start + 1);
		goto out;
	}
	*out = e;
	e = NULL;
out:
	/* Every refusal says why, out of memory included. */
	if (rc < 0 && err && errlen && !err[0])
		snprintf(err, errlen, "%s", strerror(-rc));
	expr_free(e);
	return rc;
}

/* The text of an operand: a variable's value ("" when unset; *set tells),
 * or the literal's text. */
static int operand(struct expr_env *ev, const struct expr *e, const char **s, size_t *len,
		   bool *set)
{
	const char *v = NULL;
	size_t vl = 0;
	int r;

	*s = "";
	*len = 0;
	*set = true;
	if (e->kind != EXPR_VAR && e->kind != EXPR_INTF && e->kind != EXPR_ON) {
		*s = e->text;
		*len = e->len;
		return 0;
	}
	*set = false;
	if (!ev->fn)
		return 0;
	r = ev->fn(ev->ctx, e->text, e->len, &v, &vl);
	if (r == -ELOOP) {
		ev->cycle = true;
		return 0;
	}
	if (r < 0)
		return r;
	if (r > 0 && v) {
		*s = v;
		*len = vl;
		*set = true;
	}
	return 0;
}

static void note(struct expr_env *ev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct expr_env *ev, const char *fmt, ...)
{
	va_list ap;

	if (ev->problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(ev->problem, sizeof(ev->problem), fmt, ap);
	va_end(ap);
}

/* The integer of an operand, read in the dialect; 1, 0 when there is none
 * (noted), or a negative errno. */
static int int_operand(struct expr_env *ev, const struct expr *e, long long *out)
{
	const char *s;
	size_t len;
	bool set;
	char why[96];
	int r;

	if ((r = operand(ev, e, &s, &len, &set)) < 0)
		return r;
	if (e->kind == EXPR_INT)
		return text_parse_ll(s, len, out) ? 1 : 0;
	if (e->kind == EXPR_STR) {
		note(ev, "'%.*s' is compared as an integer", len > 24 ? 24 : (int)len, s);
		return text_parse_ll(s, len, out) ? 1 : 0;
	}
	if (!set) {
		if (e->kind == EXPR_INTF) {
			*out = e->fallback;
			return 1;
		}
		/* Unset reads as "" (the runner's ${X:-} and os.getenv's None
		 * both give no number). */
		note(ev, "%s is not set, so it is not an integer; the comparison is false",
		     e->text);
		return 0;
	}
	if ((r = dialect_int(ev->dialect, s, len, ev->fn, ev->ctx, out, why, sizeof(why))) != 0)
		return r;
	if (e->kind == EXPR_INTF) {
		/* try: int(os.getenv(NAME)) except ValueError: FALLBACK */
		*out = e->fallback;
		note(ev, "%s is %s; the fallback %lld applies", e->text, why, e->fallback);
		return 1;
	}
	note(ev, "%s is %s; the comparison is false", e->text, why);
	return 0;
}

/* VALUE =~ PATTERN. regexec reads a C string, as bash hands it one. */
static int match(struct expr_env *ev, const struct expr *e, bool *res)
{
	const char *a;
	size_t al;
	bool set;
	char *copy;
	int err, rc;

	if ((err = operand(ev, e->kids[0], &a, &al, &set)) < 0)
		return err;
	if (!(copy = strndup(a, al)))
		return -ENOMEM;
	rc = regexec(e->kids[1]->re, copy, 0, NULL, 0);
	free(copy);
	if (rc == REG_ESPACE)
		return -ENOMEM;
	*res = rc == 0;
	return 0;
}

/* A switch as torch_fl's flag() reads it: stripped of blanks, any case. */
static bool switch_on(const char *s, size_t len)
{
	static const char *const on[] = { "1", "true", "on", "yes" };
	size_t k;

	while (len && strchr(" \t\n\r\v\f", *s) && *s) {
		s++;
		len--;
	}
	while (len && s[len - 1] && strchr(" \t\n\r\v\f", s[len - 1]))
		len--;
	for (k = 0; k < sizeof(on) / sizeof(on[0]); k++)
		if (strlen(on[k]) == len && !strncasecmp(s, on[k], len))
			return true;
	return false;
}

static int eval(struct expr_env *ev, const struct expr *e, bool *res)
{
	const char *a, *b;
	size_t al, bl, i;
	long long x, y;
	bool set;
	int err;

	switch (e->kind) {
	case EXPR_OR:
	case EXPR_AND:
		/* Short-circuit: a later operand may name a variable that only
		 * exists, or only resolves without a cycle, when it matters. */
		for (i = 0; i < e->nkids; i++) {
			if ((err = eval(ev, e->kids[i], res)) < 0)
				return err;
			if (*res == (e->kind == EXPR_OR))
				return 0;
		}
		return 0;
	case EXPR_NOT:
		if ((err = eval(ev, e->kids[0], res)) < 0)
			return err;
		*res = !*res;
		return 0;
	case EXPR_CMP:
		if (e->op == OP_MATCH)
			return match(ev, e, res);
		if (e->op == OP_EQ || e->op == OP_NE) {
			if ((err = operand(ev, e->kids[0], &a, &al, &set)) < 0 ||
			    (err = operand(ev, e->kids[1], &b, &bl, &set)) < 0)
				return err;
			*res = (al == bl && memcmp(a, b, al) == 0) == (e->op == OP_EQ);
			return 0;
		}
		if ((err = int_operand(ev, e->kids[0], &x)) < 0)
			return err;
		if (err == 0) {
			*res = false;
			return 0;
		}
		if ((err = int_operand(ev, e->kids[1], &y)) < 0)
			return err;
		if (err == 0) {
			*res = false;
			return 0;
		}
		*res = e->op == OP_LT ? x < y : e->op == OP_LE ? x <= y :
		       e->op == OP_GT ? x > y : x >= y;
		return 0;
	case EXPR_ON:
		if ((err = operand(ev, e, &a, &al, &set)) < 0)
			return err;
		*res = switch_on(a, al);
		return 0;
	default:
		if ((err = operand(ev, e, &a, &al, &set)) < 0)
			return err;
		*res = al > 0;
		return 0;
	}
}

int expr_eval(const struct expr *e, struct expr_env *env, bool *result)
{
	bool r = false;
	int err;

	if (!e || !result || !env)
		return -EINVAL;
	env->cycle = false;
	env->problem[0] = '\0';
	if ((err = eval(env, e, &r)) < 0)
		return err;
	*result = r;
	return 0;
}

/* Calls fn with every variable name e reads. */
int expr_names(const struct expr *e, int (*fn)(void *ctx, const char *name, size_t len),
	       void *ctx)
{
	size_t i;
	int err;

	if (!e)
		return 0;
	if (e->kind == EXPR_VAR || e->kind == EXPR_INTF || e->kind == EXPR_ON)
		return fn(ctx, e->text, e->len);
	for (i = 0; i < e->nkids; i++)
		if ((err = expr_names(e->kids[i], fn, ctx)) < 0)
			return err;
	return 0;
}
