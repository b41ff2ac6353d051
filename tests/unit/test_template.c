/* Unit tests for resolver/lang/template.c: value templates. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strbuf.h"
#include "template.h"

#define CONFIG_MAX_VALUE_T 131072

struct var {
	const char *name;
	const char *val;
	size_t len;
	int ret;   /* what the lookup returns: 1 set, -ELOOP, -EIO … */
};

#define SET(n, v) { n, v, sizeof(v) - 1, 1 }

static const struct var table[] = {
	SET("GPUS_PER_NODE", "8"),
	SET("ONE", "1"),
	SET("ZERO", "0"),
	SET("NEG", "-1"),
	SET("ABC", "abc"),
	SET("MAX", "1024"),
	SET("BIG", "1025"),
	SET("SPACED", " 8"),
	SET("OCTAL", "010"),
	SET("BADOCT", "08"),
	SET("SUM", "2+2"),
	SET("EMPTY", ""),
	SET("IFACE", "ib0"),
	SET("HOST", "node1"),
	SET("NUL", "a\0b"),
	SET("NONPRINT", "\x01\x02x"),
	{ "CYC", NULL, 0, -ELOOP },
	{ "BROKEN", NULL, 0, -EIO },
};

struct fake {
	int calls;
};

static int fake_lookup(void *ctx, const char *name, size_t name_len,
		       const char **val, size_t *val_len)
{
	struct fake *f = ctx;
	size_t i;

	f->calls++;
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

/* Expands src into a fresh buffer; the result is caller-owned (free()). */
static char *expand_in(const char *src, enum dialect d, struct tmpl_result *res, size_t *len,
			int *calls)
{
	struct strbuf sb = STRBUF_INIT;
	struct fake f = { 0 };
	char *s;

	assert_int_equal(tmpl_expand(src, d, CONFIG_MAX_VALUE_T, fake_lookup, &f, &sb, res), 0);
	s = sb_detach(&sb, len);
	assert_non_null(s);
	if (calls)
		*calls = f.calls;
	return s;
}

static char *expand_full(const char *src, struct tmpl_result *res, size_t *len, int *calls)
{
	return expand_in(src, DIALECT_PYTHON, res, len, calls);
}

/* Expands src in dialect d and checks the text and the problem ("" for
 * none). */
static void expect_in(enum dialect d, const char *src, const char *want,
		      const char *want_problem)
{
	struct tmpl_result res;
	char *got;

	memset(&res, 0x55, sizeof(res));   /* tmpl_expand must reset it */
	got = expand_in(src, d, &res, NULL, NULL);
	assert_string_equal(got, want);
	assert_string_equal(res.problem, want_problem);
	assert_false(res.cycle);
	free(got);
}

static void expect(const char *src, const char *want, const char *want_problem)
{
	expect_in(DIALECT_PYTHON, src, want, want_problem);
}

static void expect_shell(const char *src, const char *want, const char *want_problem)
{
	expect_in(DIALECT_SHELL, src, want, want_problem);
}

static void test_template__plain_text_is_copied(void **state)
{
	(void)state;
	expect("", "", "");
	expect("hello world", "hello world", "");
	expect("{}()}{", "{}()}{", "");
}

static void test_template__reference_expands_to_value(void **state)
{
	(void)state;
	expect("${IFACE}", "ib0", "");
	expect("if=${IFACE},host=${HOST}.", "if=ib0,host=node1.", "");
	expect("${IFACE}${HOST}", "ib0node1", "");
	expect("${UNSET}", "", "");
	expect("a${UNSET}b", "ab", "");
	expect("a${EMPTY}b", "ab", "");
}

static void test_template__value_bytes_are_copied_by_length(void **state)
{
	size_t len = 0;
	char *got;

	(void)state;
	got = expand_full("<${NUL}>", NULL, &len, NULL);
	assert_int_equal(len, 5);
	assert_memory_equal(got, "<a\0b>", 5);
	free(got);
}

static void test_template__default_used_when_unset_or_empty(void **state)
{
	(void)state;
	expect("${UNSET:-eth0}", "eth0", "");
	expect("${EMPTY:-eth0}", "eth0", "");
	expect("${IFACE:-eth0}", "ib0", "");
	expect("${UNSET:-}", "", "");
	expect("${UNSET:-a b:-c}", "a b:-c", "");
	expect("${UNSET:-{x}}", "{x}", "");
}

static void test_template__default_is_a_template(void **state)
{
	(void)state;
	expect("${UNSET:-${IFACE}}", "ib0", "");
	expect("${UNSET:-${EMPTY:-${HOST}-x}}", "node1-x", "");
	expect("${UNSET:-$(indices ONE)}", "0", "");
	expect("${UNSET:-$$}", "$", "");
}

static void test_template__default_is_not_expanded_when_unused(void **state)
{
	struct tmpl_result res;
	int calls = 0;
	char *got;

	(void)state;
	got = expand_full("${IFACE:-${BROKEN}${CYC}${bad name}}", &res, NULL, &calls);
	assert_string_equal(got, "ib0");
	assert_int_equal(calls, 1);
	assert_false(res.cycle);
	assert_string_equal(res.problem, "");
	free(got);
}

static void test_template__indices_counts_from_zero(void **state)
{
	(void)state;
	expect("$(indices GPUS_PER_NODE)", "0,1,2,3,4,5,6,7", "");
	expect("HIP=$(indices GPUS_PER_NODE);", "HIP=0,1,2,3,4,5,6,7;", "");
	expect("$(indices ONE)", "0", "");
	expect("$(  indices\tONE  )", "0", "");
}

static void test_template__indices_accepts_1024(void **state)
{
	size_t len = 0;
	char *got;

	(void)state;
	got = expand_full("$(indices MAX)", NULL, &len, NULL);
	assert_true(strncmp(got, "0,1,2,", 6) == 0);
	assert_non_null(strstr(got, ",1022,1023"));
	assert_int_equal(strlen(got) - strlen(",1022,1023"),
			 (size_t)(strstr(got, ",1022,1023") - got));
	free(got);
}

/* Problems name the variable, never its value: the value may be built
 * from a secret. */
static void test_template__indices_of_a_non_count_is_empty_with_a_problem(void **state)
{
	(void)state;
	expect("[$(indices ZERO)]", "[]", "$(indices ZERO): ZERO is 0: no index at all");
	expect("[$(indices NEG)]", "[]", "$(indices NEG): NEG is -1: no index at all");
	expect("[$(indices ABC)]", "[]",
	       "$(indices ABC): ABC is not an integer to Python's int()");
	expect("[$(indices UNSET)]", "[]",
	       "$(indices UNSET): UNSET is not an integer to Python's int()");
	expect("$(indices NONPRINT)", "",
	       "$(indices NONPRINT): NONPRINT is not an integer to Python's int()");
}

/* range(int(" 8")): Python strips the blanks. No upper bound but the
 * size of one environment string. */
static void test_template__indices_reads_the_count_as_the_dialect_does(void **state)
{
	(void)state;
	expect("$(indices SPACED)", "0,1,2,3,4,5,6,7", "");
	expect("$(indices OCTAL)", "0,1,2,3,4,5,6,7,8,9", "");
	expect_shell("$(indices OCTAL)", "0,1,2,3,4,5,6,7", "");
	expect_shell("$(indices SPACED)", "0,1,2,3,4,5,6,7", "");
	expect_shell("$(indices SUM)", "0,1,2,3", "");
	expect_shell("[$(indices UNSET)]", "[]",
		     "$(indices UNSET): UNSET is not set (bash: unbound variable, under set -u)");
	expect_shell("[$(indices BADOCT)]", "[]",
		     "$(indices BADOCT): BADOCT is a value too great for its base (bash refuses it)");
}

static void test_template__dash_default_applies_only_when_unset(void **state)
{
	(void)state;
	expect("${UNSET-x}", "x", "");
	expect("${EMPTY-x}", "", "");
	expect("${EMPTY:-x}", "x", "");
	expect("${IFACE-x}", "ib0", "");
	expect("${UNSET-${IFACE}}", "ib0", "");
}

static void test_template__expansion_stops_at_the_limit(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct tmpl_result res;
	struct fake f = { 0 };

	(void)state;
	assert_int_equal(tmpl_expand("${HOST}${HOST}${HOST}", DIALECT_PYTHON, 12, fake_lookup, &f,
				     &sb, &res), 0);
	assert_true(res.too_long);
	assert_true(sb.len <= 12);
	sb_reset(&sb);
	assert_int_equal(tmpl_expand("${HOST}${HOST}", DIALECT_PYTHON, 10, fake_lookup, &f,
				     &sb, &res), 0);
	assert_false(res.too_long);
	assert_string_equal(sb_str(&sb), "node1node1");
	sb_release(&sb);
}

static void test_template__dollar_dollar_is_one_dollar(void **state)
{
	(void)state;
	expect("$$", "$", "");
	expect("$${IFACE}", "${IFACE}", "");
	expect("$$$${IFACE}", "$${IFACE}", "");
	expect("$$$(indices ONE)", "$0", "");
	expect("cost: 5$$", "cost: 5$", "");
}

static void test_template__other_dollars_are_literal(void **state)
{
	(void)state;
	expect("$", "$", "");
	expect("a$", "a$", "");
	expect("$IFACE", "$IFACE", "");
	expect("$ {IFACE}", "$ {IFACE}", "");
	expect("5$ and $3", "5$ and $3", "");
	expect("$$$", "$$", "");
}

static void test_template__malformed_reference_is_literal_with_a_problem(void **state)
{
	(void)state;
	expect("a${bad name}b", "a${bad name}b",
	       "\"${bad name}\" at column 2 is not ${NAME}, ${NAME:-default} or ${NAME-default}");
	expect("${}", "${}", "\"${}\" at column 1 is not ${NAME}, ${NAME:-default} or ${NAME-default}");
	expect("${1X}", "${1X}", "\"${1X}\" at column 1 is not ${NAME}, ${NAME:-default} or ${NAME-default}");
	expect("${A:}", "${A:}", "\"${A:}\" at column 1 is not ${NAME}, ${NAME:-default} or ${NAME-default}");
	expect("x ${IFACE", "x ${IFACE", "unterminated \"${\" at column 3");
	expect("${UNSET:-${IFACE}", "${UNSET:-${IFACE}", "unterminated \"${\" at column 1");
	expect("$(indices GPUS_PER_NODE", "$(indices GPUS_PER_NODE",
	       "unterminated \"$(\" at column 1");
	expect("$(indices)", "$(indices)",
	       "$(indices) at column 1: expected $(indices NAME)");
	expect("$(indices A B)", "$(indices A B)",
	       "$(indices A B) at column 1: expected $(indices NAME)");
}

static void test_template__malformed_reference_does_not_stop_expansion(void **state)
{
	(void)state;
	/* Only the first problem is kept. */
	expect("${a b} ${IFACE} ${c d}", "${a b} ib0 ${c d}",
	       "\"${a b}\" at column 1 is not ${NAME}, ${NAME:-default} or ${NAME-default}");
}

static void test_template__unknown_function_is_literal_with_a_problem(void **state)
{
	(void)state;
	expect("$(hostname)", "$(hostname)",
	       "$(hostname) at column 1: unknown function \"hostname\"");
	expect("x$(seq 0 7)", "x$(seq 0 7)",
	       "$(seq 0 7) at column 2: unknown function \"seq\"");
	expect("$()", "$()", "$() at column 1: unknown function \"\"");
}

static void test_template__cycle_leaves_reference_literal(void **state)
{
	struct tmpl_result res;
	char *got;

	(void)state;
	got = expand_full("a${CYC}b${IFACE}", &res, NULL, NULL);
	assert_string_equal(got, "a${CYC}bib0");
	assert_true(res.cycle);
	assert_string_equal(res.problem, "");
	free(got);

	got = expand_full("${CYC:-${IFACE}}", &res, NULL, NULL);
	assert_string_equal(got, "${CYC:-${IFACE}}");
	assert_true(res.cycle);
	free(got);

	got = expand_full("${UNSET:-<${CYC}>}", &res, NULL, NULL);
	assert_string_equal(got, "<${CYC}>");
	assert_true(res.cycle);
	free(got);

	got = expand_full("$(indices CYC)", &res, NULL, NULL);
	assert_string_equal(got, "$(indices CYC)");
	assert_true(res.cycle);
	assert_string_equal(res.problem, "");
	free(got);
}

static void test_template__lookup_error_propagates_and_leaves_out_unchanged(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct tmpl_result res;
	struct fake f = { 0 };

	(void)state;
	assert_int_equal(sb_adds(&sb, "keep"), 0);
	assert_int_equal(tmpl_expand("x${IFACE}${BROKEN}", DIALECT_PYTHON, CONFIG_MAX_VALUE_T, fake_lookup, &f, &sb, &res), -EIO);
	assert_string_equal(sb_str(&sb), "keep");
	assert_int_equal(sb.len, 4);
	assert_int_equal(tmpl_expand("$(indices BROKEN)", DIALECT_PYTHON, CONFIG_MAX_VALUE_T, fake_lookup, &f, &sb, &res), -EIO);
	assert_int_equal(tmpl_expand("${UNSET:-${BROKEN}}", DIALECT_PYTHON, CONFIG_MAX_VALUE_T, fake_lookup, &f, &sb, &res), -EIO);
	assert_string_equal(sb_str(&sb), "keep");
	sb_release(&sb);
}

static void test_template__appends_to_out(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct fake f = { 0 };

	(void)state;
	assert_int_equal(sb_adds(&sb, "a="), 0);
	assert_int_equal(tmpl_expand("${IFACE}", DIALECT_PYTHON, CONFIG_MAX_VALUE_T, fake_lookup, &f, &sb, NULL), 0);
	assert_string_equal(sb_str(&sb), "a=ib0");
	sb_release(&sb);
}

static void test_template__result_may_be_null(void **state)
{
	char *got;

	(void)state;
	got = expand_full("${bad name}${CYC}", NULL, NULL, NULL);
	assert_string_equal(got, "${bad name}${CYC}");
	free(got);
}

/* depth references, each the default of the one before, around "x". */
static void build_nested(char *buf, int depth)
{
	size_t n = 0;
	int i;

	for (i = 0; i < depth; i++)
		n += (size_t)sprintf(buf + n, "${UNSET:-");
	buf[n++] = 'x';
	for (i = 0; i < depth; i++)
		buf[n++] = '}';
	buf[n] = '\0';
}

static void test_template__default_nesting_is_limited_to_64(void **state)
{
	static char buf[4096];
	struct tmpl_result res;
	char *got;

	(void)state;
	/* 64 references nested in each other's defaults expand ... */
	build_nested(buf, 64);
	got = expand_full(buf, &res, NULL, NULL);
	assert_string_equal(got, "x");
	assert_string_equal(res.problem, "");
	free(got);

	/* ... one more is left as written, with a problem. */
	build_nested(buf, 65);
	got = expand_full(buf, &res, NULL, NULL);
	assert_string_equal(res.problem, "defaults nest deeper than 64 at column 577");
	assert_string_equal(got, "${UNSET:-x}");
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_template__plain_text_is_copied),
		cmocka_unit_test(test_template__reference_expands_to_value),
		cmocka_unit_test(test_template__value_bytes_are_copied_by_length),
		cmocka_unit_test(test_template__default_used_when_unset_or_empty),
		cmocka_unit_test(test_template__default_is_a_template),
		cmocka_unit_test(test_template__default_is_not_expanded_when_unused),
		cmocka_unit_test(test_template__indices_counts_from_zero),
		cmocka_unit_test(test_template__indices_accepts_1024),
		cmocka_unit_test(test_template__indices_of_a_non_count_is_empty_with_a_problem),
		cmocka_unit_test(test_template__indices_reads_the_count_as_the_dialect_does),
		cmocka_unit_test(test_template__dash_default_applies_only_when_unset),
		cmocka_unit_test(test_template__expansion_stops_at_the_limit),
		cmocka_unit_test(test_template__dollar_dollar_is_one_dollar),
		cmocka_unit_test(test_template__other_dollars_are_literal),
		cmocka_unit_test(test_template__malformed_reference_is_literal_with_a_problem),
		cmocka_unit_test(test_template__malformed_reference_does_not_stop_expansion),
		cmocka_unit_test(test_template__unknown_function_is_literal_with_a_problem),
		cmocka_unit_test(test_template__cycle_leaves_reference_literal),
		cmocka_unit_test(test_template__lookup_error_propagates_and_leaves_out_unchanged),
		cmocka_unit_test(test_template__appends_to_out),
		cmocka_unit_test(test_template__result_may_be_null),
		cmocka_unit_test(test_template__default_nesting_is_limited_to_64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
