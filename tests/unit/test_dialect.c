/* dialect: the integers Python's int() and bash's arithmetic read out of a
 * variable's text, each checked against what python3 and bash print. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dialect.h"

/* x=5, EMPTY is set but empty, REF names x, LOOPY names itself. */
static int lookup(void *ctx, const char *name, size_t len, const char **val, size_t *vlen)
{
	static const char *const vars[][2] = {
		{ "x", "5" }, { "EMPTY", "" }, { "REF", "x" }, { "LOOPY", "LOOPY+1" },
	};
	size_t k;

	(void)ctx;
	for (k = 0; k < sizeof(vars) / sizeof(vars[0]); k++)
		if (strlen(vars[k][0]) == len && !memcmp(vars[k][0], name, len)) {
			*val = vars[k][1];
			*vlen = strlen(vars[k][1]);
			return 1;
		}
	return 0;
}

static void reads(enum dialect d, const char *text, long long want)
{
	char why[128] = "";
	long long got = 0;
	int r = dialect_int(d, text, strlen(text), lookup, NULL, &got, why, sizeof(why));

	if (r != 1 || got != want) {
		fprintf(stderr, "%s [%s]: want %lld, got r=%d %lld (%s)\n", dialect_name(d), text,
			want, r, got, why);
		fail();
	}
}

static void refuses(enum dialect d, const char *text, const char *why_part)
{
	char why[128] = "";
	long long got = 0;
	int r = dialect_int(d, text, strlen(text), lookup, NULL, &got, why, sizeof(why));

	if (r != 0 || !strstr(why, why_part)) {
		fprintf(stderr, "%s [%s]: want a refusal with \"%s\", got r=%d %lld (%s)\n",
			dialect_name(d), text, why_part, r, got, why);
		fail();
	}
}

/* python3 -c 'print(int("…"))' */
static void test_dialect__python_int_of_ascii_text(void **state)
{
	(void)state;
	reads(DIALECT_PYTHON, "8", 8);
	reads(DIALECT_PYTHON, " 2 ", 2);
	reads(DIALECT_PYTHON, "010", 10);
	reads(DIALECT_PYTHON, "1_000", 1000);
	reads(DIALECT_PYTHON, "+3", 3);
	reads(DIALECT_PYTHON, "-0", 0);
	reads(DIALECT_PYTHON, "\t7\n", 7);
	refuses(DIALECT_PYTHON, "0x10", "not an integer to Python's int()");
	refuses(DIALECT_PYTHON, "_1", "not an integer");
	refuses(DIALECT_PYTHON, "1__0", "not an integer");
	refuses(DIALECT_PYTHON, "1_", "not an integer");
	refuses(DIALECT_PYTHON, "", "not an integer");
	refuses(DIALECT_PYTHON, "   ", "not an integer");
	refuses(DIALECT_PYTHON, "1.0", "not an integer");
	refuses(DIALECT_PYTHON, "x", "not an integer");
}

/* Python reads decimal digits of every script and strips Unicode
 * whitespace; its ints have no bound (saturated here). */
static void test_dialect__python_int_of_unicode_and_big_text(void **state)
{
	(void)state;
	reads(DIALECT_PYTHON, "\u0663", 3);          /* ARABIC-INDIC DIGIT THREE */
	reads(DIALECT_PYTHON, "\uff12", 2);          /* FULLWIDTH DIGIT TWO */
	reads(DIALECT_PYTHON, "\u0661\u0662", 12);
	reads(DIALECT_PYTHON, "\u00a02", 2);         /* NO-BREAK SPACE */
	reads(DIALECT_PYTHON, "2\u3000", 2);         /* IDEOGRAPHIC SPACE */
	reads(DIALECT_PYTHON, "99999999999999999999", INT64_MAX);
	reads(DIALECT_PYTHON, "-99999999999999999999", INT64_MIN);
	refuses(DIALECT_PYTHON, "\u00b2", "not an integer");   /* SUPERSCRIPT TWO: No */
	refuses(DIALECT_PYTHON, "\xff", "not an integer");      /* no UTF-8 at all */
}

/* bash -c 'set -u; x=5; echo $((…))' */
static void test_dialect__bash_reads_constants_and_names(void **state)
{
	(void)state;
	reads(DIALECT_SHELL, "8", 8);
	reads(DIALECT_SHELL, " 4 ", 4);
	reads(DIALECT_SHELL, "010", 8);
	reads(DIALECT_SHELL, "0x10", 16);
	reads(DIALECT_SHELL, "2#101", 5);
	reads(DIALECT_SHELL, "64#_", 63);
	reads(DIALECT_SHELL, "x", 5);
	reads(DIALECT_SHELL, "REF", 5);
	reads(DIALECT_SHELL, "EMPTY", 0);
	reads(DIALECT_SHELL, "", 0);
	refuses(DIALECT_SHELL, "08", "too great for its base");
	refuses(DIALECT_SHELL, "4abc", "too great for its base");
	refuses(DIALECT_SHELL, "1e3", "too great for its base");
	refuses(DIALECT_SHELL, "abc", "unbound variable");
	refuses(DIALECT_SHELL, "LOOPY", "too deep");
	refuses(DIALECT_SHELL, "1_0", "too great for its base");
}

static void test_dialect__bash_operators(void **state)
{
	(void)state;
	reads(DIALECT_SHELL, "2+2", 4);
	reads(DIALECT_SHELL, "x * 2 - 1", 9);
	reads(DIALECT_SHELL, "-2**2", 4);
	reads(DIALECT_SHELL, "2**3**2", 512);
	reads(DIALECT_SHELL, "7 / 2 + 7 % 2", 4);
	reads(DIALECT_SHELL, "1 << 4 | 1", 17);
	reads(DIALECT_SHELL, "!x + ~0", -1);
	reads(DIALECT_SHELL, "3 > 2 && 2 >= 2 && 1 != 2", 1);
	reads(DIALECT_SHELL, "(1,2)+3", 5);
	refuses(DIALECT_SHELL, "5/0", "division by zero");
	refuses(DIALECT_SHELL, "2**-1", "negative exponent");
	refuses(DIALECT_SHELL, "(1", "missing ')'");
	refuses(DIALECT_SHELL, "1 +", "operand expected");
	refuses(DIALECT_SHELL, "1 2", "syntax error");
}

/* Assignments hold for the rest of one evaluation; ?: and && || only
 * evaluate what they use (so an unset name there is no error). */
static void test_dialect__bash_assignment_comma_and_conditional(void **state)
{
	(void)state;
	reads(DIALECT_SHELL, "x=3", 3);
	reads(DIALECT_SHELL, "1,3", 3);
	reads(DIALECT_SHELL, "x=2,x*3", 6);
	reads(DIALECT_SHELL, "a=b=4", 4);
	reads(DIALECT_SHELL, "x+=2", 7);
	reads(DIALECT_SHELL, "x<<=1", 10);
	reads(DIALECT_SHELL, "x++", 5);
	reads(DIALECT_SHELL, "++x", 6);
	reads(DIALECT_SHELL, "x--", 5);
	reads(DIALECT_SHELL, "2*x++", 10);
	reads(DIALECT_SHELL, "1?2:3", 2);
	reads(DIALECT_SHELL, "0?2:3", 3);
	reads(DIALECT_SHELL, "1 ? 2 : 3 ? 4 : 5", 2);
	reads(DIALECT_SHELL, "1 ? 2 : unset_name", 2);
	reads(DIALECT_SHELL, "0 && unset_name", 0);
	reads(DIALECT_SHELL, "x=1?7:8", 7);
	refuses(DIALECT_SHELL, "y+=1", "unbound variable");
	refuses(DIALECT_SHELL, "1?2", "without its ':'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dialect__python_int_of_ascii_text),
		cmocka_unit_test(test_dialect__python_int_of_unicode_and_big_text),
		cmocka_unit_test(test_dialect__bash_reads_constants_and_names),
		cmocka_unit_test(test_dialect__bash_operators),
		cmocka_unit_test(test_dialect__bash_assignment_comma_and_conditional),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
