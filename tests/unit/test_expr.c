/* Unit tests for resolver/lang/expr.c: the `when:` condition language. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "expr.h"

struct var {
	const char *name;
	const char *val;
	size_t len;
	int ret;   /* what the lookup returns: 1 set, -ELOOP, -EIO … */
};

#define SET(n, v) { n, v, sizeof(v) - 1, 1 }

static const struct var table[] = {
	SET("NNODES", "2"),
	SET("ONE", "1"),
	SET("EIGHT", "8"),
	SET("NEG", "-3"),
	SET("PLUS", "+5"),
	SET("ABC", "abc"),
	SET("EMPTY", ""),
	SET("SPACED", " 8"),
	SET("OCTAL", "010"),
	SET("HEX", "0x10"),
	SET("UNDER", "1_000"),
	SET("HUGE", "99999999999999999999"),
	SET("DUMP_HLO", "1"),
	SET("NAME", "x"),
	SET("NUL", "a\0b"),
	SET("NUL2", "a\0c"),
	SET("MIXED", "tRuE"),
	SET("PADDED_NO", " nO "),
	SET("PADDED_YES", "\tYes "),
	{ "CYC", NULL, 0, -ELOOP },
	{ "BROKEN", NULL, 0, -EIO },
};

struct fake {
	int calls;
	char last[64];
};

static int fake_lookup(void *ctx, const char *name, size_t name_len,
		       const char **val, size_t *val_len)
{
	struct fake *f = ctx;
	size_t i;

	f->calls++;
	snprintf(f->last, sizeof(f->last), "%.*s", (int)name_len, name);
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strlen(table[i].name) != name_len ||
		    memcmp(table[i].name, name, name_len) != 0)
			continue;
		if (table[i].ret == 1) {
			*val = table[i].val;
			*val_len = table[i].len;
		}
		return table[i].ret;
	}
	return 0;
}

/* Evaluates e in the strict reading of the old tests (python: no bash
 * arithmetic), through the fake table. */
static int eval_env(const struct expr *e, struct fake *f, bool *r, bool *cycle)
{
	struct expr_env env = { DIALECT_PYTHON, fake_lookup, f, false, "" };
	int rc = expr_eval(e, &env, r);

	if (cycle)
		*cycle = env.cycle;
	return rc;
}

/* Parses and evaluates src; fails the test on any error. */
static bool check(const char *src)
{
	struct expr *e = NULL;
	struct fake f = { 0 };
	char err[128];
	bool r = false;
	int rc = expr_parse(src, &e, err, sizeof(err));

	if (rc != 0)
		print_error("parse of '%s' failed: %s\n", src, err);
	assert_int_equal(rc, 0);
	assert_int_equal(eval_env(e, &f, &r, NULL), 0);
	expr_free(e);
	return r;
}

/* Parses src expecting a syntax error; returns the message. */
static const char *syntax_error(const char *src)
{
	static char err[128];
	struct expr *e = NULL;

	assert_int_equal(expr_parse(src, &e, err, sizeof(err)), -EINVAL);
	assert_null(e);
	return err;
}

static void test_expr__equality_compares_text(void **state)
{
	(void)state;
	assert_true(check("DUMP_HLO == \"1\""));
	assert_true(check("DUMP_HLO == '1'"));
	assert_true(check("DUMP_HLO == 1"));
	assert_false(check("DUMP_HLO == \"01\""));
	assert_true(check("DUMP_HLO != \"01\""));
	assert_false(check("NAME != 'x'"));
	assert_true(check("NAME == NAME"));
	assert_false(check("PLUS == 5"));
}

static void test_expr__equality_uses_value_lengths_not_nul(void **state)
{
	(void)state;
	assert_false(check("NUL == 'a'"));
	assert_false(check("NUL == NUL2"));
	assert_true(check("NUL != NUL2"));
}

static void test_expr__integer_operators(void **state)
{
	(void)state;
	assert_true(check("NNODES > 1"));
	assert_false(check("NNODES > 2"));
	assert_true(check("NNODES >= 2"));
	assert_false(check("NNODES >= 3"));
	assert_true(check("NNODES < 3"));
	assert_false(check("NNODES < 2"));
	assert_true(check("NNODES <= 2"));
	assert_false(check("NNODES <= 1"));
	assert_true(check("NEG < -2"));
	assert_true(check("-4 < NEG"));
	assert_true(check("PLUS == '+5' && PLUS > 4"));
	assert_true(check("EIGHT > NNODES"));
	assert_true(check("'010' == 10 || '010' > 9"));
}

static void test_expr__integer_compare_is_false_for_non_integers(void **state)
{
	(void)state;
	assert_false(check("ABC > 1"));
	assert_false(check("ABC <= 1"));
	assert_false(check("1 < ABC"));
	assert_false(check("EMPTY < 1"));
	assert_false(check("UNSET >= 0"));
	assert_false(check("SPACED == 8"));
	assert_false(check("' 8' < 9"));
	assert_false(check("'8 ' < 9"));
	assert_false(check("'-' < 9"));
	assert_true(check("HUGE > 1"));    /* Python ints have no bound */
	assert_false(check("NUL > 0"));
}

/* Python's int() strips blanks and takes underscores between digits and
 * leading zeros; bash's arithmetic reads 010 as octal and names as
 * variables, and an unset name is fatal under set -u. */
static bool check_in(enum dialect d, const char *src, char *problem, size_t plen)
{
	struct expr_env env = { d, fake_lookup, NULL, false, "" };
	struct fake f = { 0 };
	struct expr *e = NULL;
	char err[128];
	bool r = false;

	env.ctx = &f;
	assert_int_equal(expr_parse(src, &e, err, sizeof(err)), 0);
	assert_int_equal(expr_eval(e, &env, &r), 0);
	expr_free(e);
	if (problem)
		snprintf(problem, plen, "%s", env.problem);
	return r;
}

static void test_expr__integers_are_read_as_the_dialect_reads_them(void **state)
{
	char p[160];

	(void)state;
	assert_true(check_in(DIALECT_PYTHON, "SPACED > 1", p, sizeof(p)));
	assert_string_equal(p, "");
	assert_true(check_in(DIALECT_PYTHON, "OCTAL == '010' && OCTAL > 9", p, sizeof(p)));
	assert_true(check_in(DIALECT_PYTHON, "UNDER > 999", p, sizeof(p)));
	assert_true(check_in(DIALECT_SHELL, "OCTAL < 9 && OCTAL > 7", p, sizeof(p)));
	assert_true(check_in(DIALECT_SHELL, "HEX == '0x10' && HEX > 15", p, sizeof(p)));
	assert_true(check_in(DIALECT_SHELL, "SPACED > 7", p, sizeof(p)));
	assert_false(check_in(DIALECT_SHELL, "UNDER > 1", p, sizeof(p)));
	assert_string_equal(p, "UNDER is a value too great for its base (bash refuses it); "
			    "the comparison is false");
	assert_false(check_in(DIALECT_PYTHON, "HEX > 1", p, sizeof(p)));
	assert_string_equal(p, "HEX is not an integer to Python's int(); the comparison is false");
	assert_false(check_in(DIALECT_SHELL, "ABC > 1", p, sizeof(p)));
	assert_string_equal(p, "ABC is read as the name of a variable that is not set (bash: "
			    "unbound variable, under set -u); the comparison is false");
}

static void test_expr__int_with_fallback_is_the_try_except_of_env_spec(void **state)
{
	char p[160];

	(void)state;
	assert_false(check_in(DIALECT_PYTHON, "int(ABC, 1) > 1", p, sizeof(p)));
	assert_string_equal(p, "ABC is not an integer to Python's int(); the fallback 1 applies");
	assert_true(check_in(DIALECT_PYTHON, "int(ABC, 1) >= 1", p, sizeof(p)));
	assert_true(check_in(DIALECT_PYTHON, "int(UNSET, 2) == 2 || int(UNSET, 2) > 1", p,
			     sizeof(p)));
	assert_string_equal(p, "");
	assert_true(check_in(DIALECT_PYTHON, "int(EIGHT, 1) > 1", p, sizeof(p)));
	assert_string_equal(syntax_error("int(EIGHT) > 1"),
			    "int(NAME, FALLBACK) needs ', FALLBACK' at column 10");
	assert_string_equal(syntax_error("int(EIGHT, X) > 1"),
			    "int(NAME, FALLBACK) needs an integer FALLBACK at column 12");
}

static void test_expr__bare_operand_is_true_when_non_empty(void **state)
{
	(void)state;
	assert_true(check("NAME"));
	assert_false(check("EMPTY"));
	assert_false(check("UNSET"));
	assert_true(check("'0'"));
	assert_true(check("0"));
	assert_false(check("''"));
}

static void test_expr__unset_names_read_as_empty(void **state)
{
	(void)state;
	assert_true(check("UNSET == ''"));
	assert_true(check("UNSET == EMPTY"));
	assert_false(check("UNSET != \"\""));
}

static void test_expr__logic_operators(void **state)
{
	(void)state;
	assert_true(check("ONE && NAME"));
	assert_false(check("ONE && EMPTY"));
	assert_true(check("EMPTY || ONE"));
	assert_false(check("EMPTY || UNSET"));
	assert_true(check("!EMPTY"));
	assert_false(check("!ONE"));
	assert_true(check("!!ONE"));
	assert_true(check("ONE && NAME && DUMP_HLO && NNODES"));
	assert_false(check("ONE && NAME && EMPTY && NNODES"));
}

static void test_expr__and_binds_tighter_than_or(void **state)
{
	(void)state;
	/* Left-to-right without precedence would make these false. */
	assert_true(check("ONE || ONE && EMPTY"));
	assert_true(check("EMPTY && ONE || ONE"));
	assert_false(check("(ONE || ONE) && EMPTY"));
}

static void test_expr__not_binds_looser_than_comparison(void **state)
{
	(void)state;
	/* !(NAME == 'y'), not (!NAME) == 'y' */
	assert_true(check("!NAME == 'y'"));
	assert_false(check("!NAME == 'x'"));
	/* And tighter than && / ||. */
	assert_false(check("!ONE && ONE"));
	assert_true(check("!EMPTY || EMPTY"));
}

static void test_expr__parentheses_group(void **state)
{
	(void)state;
	assert_false(check("DUMP_HLO == \"1\" && !(NAME != 'x' || NNODES <= 3)"));
	assert_true(check("DUMP_HLO == \"1\" && !(NAME != 'x' || NNODES <= 1)"));
	assert_true(check("((((ONE))))"));
	assert_true(check("(NNODES) > 1"));
}

static void test_expr__whitespace_between_tokens_is_ignored(void **state)
{
	(void)state;
	assert_true(check("NNODES>1&&!EMPTY"));
	assert_true(check("  \t( NNODES  >=\n2 )  &&  ! EMPTY  "));
	assert_true(check("NAME=='x'"));
}

static void test_expr__quotes_and_escapes(void **state)
{
	(void)state;
	assert_true(check("\"a\\\"b\" == 'a\"b'"));     /* "a\"b" */
	assert_true(check("\"a\\\\\" == 'a\\'"));        /* "a\\" == 'a\' */
	assert_true(check("\"\\x\" == 'x'"));            /* \ escapes any char */
	assert_true(check("'a\\b' == \"a\\\\b\""));      /* no escapes in '…' */
	assert_true(check("\"a b && c\" == 'a b && c'"));
	assert_true(check("'(' != ')'"));
}

static void test_expr__or_short_circuits(void **state)
{
	struct expr *e = NULL;
	struct fake f = { 0 };
	char err[128];
	bool r = false;

	(void)state;
	assert_int_equal(expr_parse("ONE || BROKEN", &e, err, sizeof(err)), 0);
	assert_int_equal(eval_env(e, &f, &r, NULL), 0);
	assert_true(r);
	assert_int_equal(f.calls, 1);
	expr_free(e);
}

static void test_expr__and_short_circuits(void **state)
{
	struct expr *e = NULL;
	struct fake f = { 0 };
	char err[128];
	bool r = true;

	(void)state;
	assert_int_equal(expr_parse("EMPTY && (BROKEN || CYC)", &e, err, sizeof(err)), 0);
	assert_int_equal(eval_env(e, &f, &r, NULL), 0);
	assert_false(r);
	assert_int_equal(f.calls, 1);
	expr_free(e);
}

static void test_expr__lookup_error_propagates(void **state)
{
	struct expr *e = NULL;
	struct fake f = { 0 };
	char err[128];
	bool r = false;

	(void)state;
	assert_int_equal(expr_parse("EMPTY || BROKEN == 1", &e, err, sizeof(err)), 0);
	assert_int_equal(eval_env(e, &f, &r, NULL), -EIO);
	assert_string_equal(f.last, "BROKEN");
	expr_free(e);
}

static void test_expr__cycle_reads_as_unset_and_is_reported(void **state)
{
	struct expr *e = NULL;
	struct fake f = { 0 };
	char err[128];
	bool r = false, cycle = false;

	(void)state;
	assert_int_equal(expr_parse("CYC == ''", &e, err, sizeof(err)), 0);
	assert_int_equal(eval_env(e, &f, &r, &cycle), 0);
	assert_true(r);
	assert_true(cycle);
	/* A NULL cycle pointer is allowed. */
	r = false;
	assert_int_equal(eval_env(e, &f, &r, NULL), 0);
	assert_true(r);
	expr_free(e);

	/* No cycle seen: the flag is false. */
	cycle = true;
	assert_int_equal(expr_parse("ONE", &e, err, sizeof(err)), 0);
	assert_int_equal(eval_env(e, &f, &r, &cycle), 0);
	assert_false(cycle);
	expr_free(e);
}

/* bash's [[ VALUE =~ ERE ]], as runner/lib/validation.sh uses it: POSIX
 * extended regular expressions, unanchored unless the pattern says so. */
static void test_expr__match_is_a_posix_extended_regex(void **state)
{
	(void)state;
	assert_true(check("NNODES =~ '^[0-9]+$'"));
	assert_false(check("PLUS =~ '^[0-9]+$'"));
	assert_false(check("SPACED =~ '^[0-9]+$'"));
	assert_false(check("EMPTY =~ '^[0-9]+$'"));
	assert_false(check("UNSET_NAME =~ '^[0-9]+$'"));
	assert_true(check("UNSET_NAME =~ '^$'"));
	/* Unanchored: a match anywhere counts. */
	assert_true(check("ABC =~ 'b'"));
	assert_true(check("HEX =~ \"x[0-9a-f]{2}$\""));
	assert_true(check("!(PLUS =~ '^[0-9]+$') && ONE == 1"));
	/* A value with a NUL byte is matched only up to it, as bash sees a C
	 * string; env values never hold one. */
	assert_true(check("NUL =~ '^a$'"));
}

static void test_expr__match_needs_a_valid_literal_pattern(void **state)
{
	const char *m;

	(void)state;
	assert_string_equal(syntax_error("A =~ B"),
			    "=~ needs a quoted pattern at column 6");
	assert_string_equal(syntax_error("A =~ 1"),
			    "=~ needs a quoted pattern at column 6");
	/* regerror()'s words follow: glibc's, not ours to pin. */
	m = syntax_error("A =~ '[0-9'");
	assert_memory_equal(m, "bad regular expression at column 6: ", 36);
	assert_true(strlen(m) > 36);
	assert_string_equal(syntax_error("A =~ '(a*)\\1'"),
			    "back-references are not allowed in a pattern at column 6");
	assert_true(check("ABC =~ '\\\\1|abc'"));
	assert_string_equal(syntax_error("A =~ 'x' =~ 'y'"),
			    "comparisons do not chain at column 10");
}

/* glibc's regcomp copies a repeated piece once per repetition, so stacked
 * or nested repetitions compile in exponential time and memory (a fuzzer
 * found '(a*)*\\++++...d' taking seconds): a spec gets one level. */
static void test_expr__patterns_that_explode_at_compile_are_refused(void **state)
{
	(void)state;
	assert_string_equal(syntax_error("A =~ '(a*)*\\++++++++++++++++++++++d++++++'"),
			    "a repetition of a repetition in a pattern at column 6 (one level only)");
	assert_string_equal(syntax_error("A =~ 'a++'"),
			    "a repetition of a repetition in a pattern at column 6 (one level only)");
	assert_string_equal(syntax_error("A =~ '(a{1,100}){1,100}'"),
			    "a repetition of a repetition in a pattern at column 6 (one level only)");
	assert_string_equal(syntax_error("A =~ '((a+)x)*'"),
			    "a repetition of a repetition in a pattern at column 6 (one level only)");
	assert_string_equal(syntax_error("A =~ 'a{1,256}'"),
			    "a repetition count over 255 in a pattern at column 6");
	/* Every brace form is a repetition: glibc's ERE reads any '{'
	 * outside a bracket as one ('(a{,255}){,255}' took 536 MB). */
	assert_string_equal(syntax_error("A =~ '(a{,255}){,255}'"),
			    "a repetition of a repetition in a pattern at column 6 (one level only)");
	assert_string_equal(syntax_error("A =~ '(a{,2}){2}'"),
			    "a repetition of a repetition in a pattern at column 6 (one level only)");
	assert_string_equal(syntax_error("A =~ '(a{2,}){,}'"),
			    "a repetition of a repetition in a pattern at column 6 (one level only)");
	assert_string_equal(syntax_error("A =~ 'a{2}{3}'"),
			    "a repetition of a repetition in a pattern at column 6 (one level only)");
	assert_string_equal(syntax_error("A =~ '(a+){,3}'"),
			    "a repetition of a repetition in a pattern at column 6 (one level only)");
	assert_string_equal(syntax_error("A =~ 'a{,256}'"),
			    "a repetition count over 255 in a pattern at column 6");
	assert_string_equal(syntax_error("A =~ 'a{0000000000000000000000300}'"),
			    "a repetition count over 255 in a pattern at column 6");
	assert_string_equal(syntax_error("A =~ 'a{256,}'"),
			    "a repetition count over 255 in a pattern at column 6");
	/* A brace regcomp does not take is its error, with its words. */
	assert_memory_equal(syntax_error("A =~ 'a{ 1}'"), "bad regular expression at column 6: ",
			    36);
	assert_memory_equal(syntax_error("A =~ 'a{x}'"), "bad regular expression at column 6: ",
			    36);
	assert_true(check("A =~ '^a{,3}b{2}c{1,}d{0,255}$' || 1"));
	assert_true(check("A =~ 'a\\{,3}{2}' || 1"));
	assert_true(check("A =~ '[{]{2}' || 1"));
	/* One level, classes and escapes stay allowed. */
	assert_true(check("A =~ '^[1-9][0-9]*$' || 1"));
	assert_true(check("A =~ '^[a-zA-Z0-9._-]+$' || 1"));
	assert_true(check("A =~ '^(ab|c)+[*+]\\+x{2,255}$' || 1"));
	assert_true(check("A =~ '[]+*]+' || 1"));
	assert_true(check("A =~ '[[:digit:]]+(x)' || 1"));
}

static void test_expr__syntax_errors_name_the_column(void **state)
{
	(void)state;
	assert_string_equal(syntax_error("(NNODES > 1"), "expected ')' at column 12");
	assert_string_equal(syntax_error("(A || (B && C)"), "expected ')' at column 15");
	assert_string_equal(syntax_error(""), "expected an operand at column 1");
	assert_string_equal(syntax_error("   "), "expected an operand at column 4");
	assert_string_equal(syntax_error("A =="), "expected an operand at column 5");
	assert_string_equal(syntax_error("A && || B"), "expected an operand at column 6");
	assert_string_equal(syntax_error("A = 1"), "expected '==' or '=~' at column 3");
	assert_string_equal(syntax_error("A & B"), "expected '&&' at column 3");
	assert_string_equal(syntax_error("A | B"), "expected '||' at column 3");
	assert_string_equal(syntax_error("A B"), "unexpected 'B' at column 3");
	assert_string_equal(syntax_error("(A))"), "unexpected ')' at column 4");
	assert_string_equal(syntax_error("A == 'x"), "unterminated string at column 6");
	assert_string_equal(syntax_error("A == \"x\\\""), "unterminated string at column 6");
	assert_string_equal(syntax_error("A == 1 == 1"), "comparisons do not chain at column 8");
	assert_string_equal(syntax_error("A < 1 > 0"), "comparisons do not chain at column 7");
	assert_string_equal(syntax_error("(A == 1) == B"), "cannot compare a condition at column 10");
	assert_string_equal(syntax_error("B == (A || C)"), "cannot compare a condition at column 6");
	assert_string_equal(syntax_error("A == !B"), "expected an operand at column 6");
	assert_string_equal(syntax_error("A > 1x"), "bad integer at column 5");
	assert_string_equal(syntax_error("A > - 1"), "unexpected character '-' at column 5");
	assert_string_equal(syntax_error("A.B"), "unexpected character '.' at column 2");
	assert_string_equal(syntax_error("$A"), "unexpected character '$' at column 1");
	assert_string_equal(syntax_error("A == \x01"), "unexpected byte 0x01 at column 6");
}

static void test_expr__syntax_error_tolerates_small_or_no_buffer(void **state)
{
	struct expr *e = NULL;
	char small[8];

	(void)state;
	assert_int_equal(expr_parse("(A", &e, NULL, 0), -EINVAL);
	assert_int_equal(expr_parse("(A", &e, small, sizeof(small)), -EINVAL);
	assert_string_equal(small, "expecte");
	assert_null(e);
}

static void build_nested(char *buf, int depth, char open, const char *mid, char close)
{
	int i, n = 0;

	for (i = 0; i < depth; i++)
		buf[n++] = open;
	n += sprintf(buf + n, "%s", mid);
	for (i = 0; close && i < depth; i++)
		buf[n++] = close;
	buf[n] = '\0';
}

static void test_expr__nesting_is_limited_to_64(void **state)
{
	char buf[512];

	(void)state;
	build_nested(buf, 64, '(', "ONE", ')');
	assert_true(check(buf));
	build_nested(buf, 65, '(', "ONE", ')');
	assert_string_equal(syntax_error(buf), "nesting deeper than 64 at column 65");

	build_nested(buf, 64, '!', "ONE", 0);
	assert_true(check(buf));
	build_nested(buf, 65, '!', "ONE", 0);
	assert_string_equal(syntax_error(buf), "nesting deeper than 64 at column 65");

	/* A deep paren run far past the limit must fail, not blow the stack. */
	{
		static char deep[200001];

		memset(deep, '(', sizeof(deep) - 1);
		deep[sizeof(deep) - 1] = '\0';
		assert_string_equal(syntax_error(deep), "nesting deeper than 64 at column 65");
	}
}

static void test_expr__long_flat_chains_do_not_nest(void **state)
{
	static char buf[sizeof(" || EMPTY") * 20000 + 16];
	size_t n = 0;
	int i;

	(void)state;
	for (i = 0; i < 20000; i++)
		n += (size_t)sprintf(buf + n, "%sEMPTY", i ? " || " : "");
	n += (size_t)sprintf(buf + n, " || ONE");
	assert_true(check(buf));
}

/* A parsed tree keeps no state of an evaluation: a spec parses its
 * conditions once and evaluates the same const tree in every directory
 * and from several threads, so each evaluation sees only its own env. */
static void test_expr__a_const_tree_evaluates_the_same_every_time(void **state)
{
	struct expr *parsed = NULL;
	const struct expr *e;
	char err[128], first[160];
	int k;

	(void)state;
	assert_int_equal(expr_parse("(ABC =~ '^a(b|x)c$' && ABC < 1) || "
				    "(CYC == '' && NAME =~ 'x')", &parsed, err, sizeof(err)), 0);
	e = parsed;
	for (k = 0; k < 3; k++) {
		struct expr_env env = { DIALECT_PYTHON, fake_lookup, NULL, false, "" };
		struct expr_env none = { DIALECT_PYTHON, NULL, NULL, false, "" };
		struct fake f = { 0 };
		bool r = false;

		env.ctx = &f;
		assert_int_equal(expr_eval(e, &env, &r), 0);
		assert_true(r);
		assert_true(env.cycle);
		assert_int_equal(f.calls, 4);
		if (k == 0)
			snprintf(first, sizeof(first), "%s", env.problem);
		assert_string_equal(env.problem, first);
		/* the same tree with nothing set, between two evaluations */
		r = true;
		assert_int_equal(expr_eval(e, &none, &r), 0);
		assert_false(r);
		assert_false(none.cycle);
	}
	assert_string_equal(first, "ABC is not an integer to Python's int(); the comparison is false");
	expr_free(parsed);
}

/* on(NAME) reads a switch as torch_fl's flag() does: stripped, any case,
 * true for 1 true on yes; anything else (unset, empty, off, 2) is false. */
static void test_expr__on_reads_a_switch_the_relaxed_way(void **state)
{
	(void)state;
	assert_true(check("on(MIXED)"));
	assert_true(check("on(PADDED_YES)"));
	assert_true(check("on(ONE)"));
	assert_true(check("on( ONE )"));
	assert_false(check("on(PADDED_NO)"));
	assert_false(check("on(EIGHT)"));
	assert_false(check("on(EMPTY)"));
	assert_false(check("on(UNSET_NAME)"));
	assert_true(check("!on(ABC) && on(DUMP_HLO)"));
	/* on is still a name where no '(' follows */
	assert_false(check("on == 'x'"));
	assert_non_null(strstr(syntax_error("on('x')"), "on( needs a variable name"));
	assert_non_null(strstr(syntax_error("on(ONE, 2)"), "expected ')'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expr__on_reads_a_switch_the_relaxed_way),
		cmocka_unit_test(test_expr__equality_compares_text),
		cmocka_unit_test(test_expr__equality_uses_value_lengths_not_nul),
		cmocka_unit_test(test_expr__integer_operators),
		cmocka_unit_test(test_expr__integer_compare_is_false_for_non_integers),
		cmocka_unit_test(test_expr__integers_are_read_as_the_dialect_reads_them),
		cmocka_unit_test(test_expr__int_with_fallback_is_the_try_except_of_env_spec),
		cmocka_unit_test(test_expr__bare_operand_is_true_when_non_empty),
		cmocka_unit_test(test_expr__unset_names_read_as_empty),
		cmocka_unit_test(test_expr__logic_operators),
		cmocka_unit_test(test_expr__and_binds_tighter_than_or),
		cmocka_unit_test(test_expr__not_binds_looser_than_comparison),
		cmocka_unit_test(test_expr__parentheses_group),
		cmocka_unit_test(test_expr__whitespace_between_tokens_is_ignored),
		cmocka_unit_test(test_expr__quotes_and_escapes),
		cmocka_unit_test(test_expr__or_short_circuits),
		cmocka_unit_test(test_expr__and_short_circuits),
		cmocka_unit_test(test_expr__lookup_error_propagates),
		cmocka_unit_test(test_expr__cycle_reads_as_unset_and_is_reported),
		cmocka_unit_test(test_expr__match_is_a_posix_extended_regex),
		cmocka_unit_test(test_expr__match_needs_a_valid_literal_pattern),
		cmocka_unit_test(test_expr__patterns_that_explode_at_compile_are_refused),
		cmocka_unit_test(test_expr__syntax_errors_name_the_column),
		cmocka_unit_test(test_expr__syntax_error_tolerates_small_or_no_buffer),
		cmocka_unit_test(test_expr__nesting_is_limited_to_64),
		cmocka_unit_test(test_expr__long_flat_chains_do_not_nest),
		cmocka_unit_test(test_expr__a_const_tree_evaluates_the_same_every_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
