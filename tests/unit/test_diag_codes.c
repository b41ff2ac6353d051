/* diag_codes: one table of stable codes. Each code has one meaning, no
 * two codes share a meaning, every code is documented in the man page
 * with its severity and meaning, and a diagnostic takes its severity and
 * its printed code from the table. */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diag.h"
#include "diag_codes.h"
#include "strbuf.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_diag_codes__codes_and_meanings_are_unique_and_well_formed(void **state)
{
	size_t i, j;

	(void)state;
	assert_true(DIAG_NCODES > 0);
	for (i = 0; i < DIAG_NCODES; i++) {
		const struct diag_code_info *a = diag_code_info((enum diag_code)i);

		assert_non_null(a);
		assert_int_equal(strlen(a->code), 5);
		assert_memory_equal(a->code, "PE", 2);
		assert_true(isdigit((unsigned char)a->code[2]) && isdigit((unsigned char)a->code[3]) &&
			    isdigit((unsigned char)a->code[4]));
		assert_true(a->sev >= DIAG_INFO && a->sev <= DIAG_ERROR);
		assert_true(strlen(a->meaning) > 0);
		for (j = 0; j < i; j++) {
			const struct diag_code_info *b = diag_code_info((enum diag_code)j);

			if (!strcmp(a->code, b->code) || !strcmp(a->meaning, b->meaning))
				fail_msg("%s and %s share a code or a meaning", a->code, b->code);
		}
	}
	assert_null(diag_code_info(DIAG_NCODES));
}

/* The man page holds, for each code, ".B PEnnn" and on the next line
 * "severity: meaning", exactly as the table says. */
static void test_diag_codes__every_code_is_documented_in_the_man_page(void **state)
{
	const char *root = getenv("ENVFS_SOURCE_ROOT");
	char path[4096], *man;
	size_t i;

	(void)state;
	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/docs/primus-envfs.1", root);
	man = slurp(path);
	for (i = 0; i < DIAG_NCODES; i++) {
		const struct diag_code_info *c = diag_code_info((enum diag_code)i);
		char want[512];

		snprintf(want, sizeof(want), "\n.B %s\n%s: %s\n", c->code,
			 diag_sev_name((enum diag_sev)c->sev), c->meaning);
		if (!strstr(man, want))
			fail_msg("docs/primus-envfs.1 does not document %s as:%s", c->code, want);
	}
	free(man);
}

/* The other way: the man page lists no code the table does not have (a
 * code removed or renumbered must leave the list too). */
static void test_diag_codes__the_man_page_lists_no_other_code(void **state)
{
	const char *root = getenv("ENVFS_SOURCE_ROOT");
	char path[4096], *man, *p;
	size_t listed = 0;
	enum diag_code c;

	(void)state;
	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/docs/primus-envfs.1", root);
	man = slurp(path);
	for (p = man; (p = strstr(p, "\n.B PE")); p += 7) {
		const char *code = p + 4;
		size_t n = strcspn(code, "\n");

		if (diag_code_parse(code, n, &c) < 0 || n != 5)
			fail_msg("docs/primus-envfs.1 lists %.*s, which is no diagnostic code", (int)n,
				 code);
		listed++;
	}
	assert_int_equal(listed, DIAG_NCODES);
	free(man);
}

static void test_diag_codes__a_code_is_parsed_from_its_text_in_any_case(void **state)
{
	enum diag_code c;

	(void)state;
	assert_int_equal(diag_code_parse("PE104", 5, &c), 0);
	assert_int_equal(c, DC_CONFIG_VALUE_TYPED);
	assert_int_equal(diag_code_parse("pe002", 5, &c), 0);
	assert_int_equal(c, DC_YAML_SYNTAX);
	assert_int_equal(diag_code_parse("PE1040", 5, &c), 0);  /* n bounds the text */
	assert_int_equal(diag_code_parse("PE999", 5, &c), -EINVAL);
	assert_int_equal(diag_code_parse("PE10", 4, &c), -EINVAL);
	assert_int_equal(diag_code_parse("XX104", 5, &c), -EINVAL);
	assert_int_equal(diag_code_parse("", 0, &c), -EINVAL);
}

static void test_diag_codes__a_diagnostic_takes_severity_and_code_from_the_table(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(diag_add(&d, DC_CONFIG_VALUE_TYPED, "exp.yaml", 6, 3, "quote it"), 0);
	assert_int_equal(diag_add(&d, DC_YAML_SYNTAX, NULL, 0, 0, "bad"), 0);
	assert_int_equal(d.v[0].sev, DIAG_WARNING);
	assert_int_equal(d.v[0].code, DC_CONFIG_VALUE_TYPED);
	assert_int_equal(d.v[1].sev, DIAG_ERROR);
	assert_int_equal(diag_format(&d.v[0], &sb), 0);
	assert_string_equal(sb_str(&sb), "exp.yaml:6:3: warning: quote it [PE104]");
	sb_reset(&sb);
	assert_int_equal(diag_format(&d.v[1], &sb), 0);
	assert_string_equal(sb_str(&sb), "error: bad [PE002]");
	sb_release(&sb);
	diag_list_release(&d);
}

/* A silenced diagnostic stays in the list (explain shows it) but counts
 * for nothing: not in diag_count, not in diag_max_sev. */
static void test_diag_codes__silenced_diagnostics_are_kept_but_not_counted(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct diag_silence si = DIAG_SILENCE_INIT;

	(void)state;
	assert_int_equal(diag_add(&d, DC_CONFIG_VALUE_TYPED, "exp.yaml", 6, 3, "quote it"), 0);
	assert_int_equal(diag_add(&d, DC_CONFIG_VALUE_TYPED, "exp.yaml", 7, 3, "quote it"), 0);
	assert_int_equal(diag_add(&d, DC_FLAG_REPEATED, NULL, 0, 0, "twice"), 0);
	assert_int_equal(diag_silence_add_code(&si, DC_CONFIG_VALUE_TYPED), 0);
	diag_silence_apply(&si, &d, 0);
	assert_true(d.v[0].silenced && d.v[1].silenced && !d.v[2].silenced);
	assert_int_equal(diag_count(&d, DIAG_WARNING), 0);
	assert_int_equal(diag_max_sev(&d), DIAG_INFO);
	assert_int_equal(diag_format(&d.v[0], &sb), 0);
	assert_string_equal(sb_str(&sb), "exp.yaml:6:3: warning: quote it [PE104, silenced]");
	diag_silence_release(&si);
	sb_release(&sb);
	diag_list_release(&d);
}

/* A line's own silencing (a config comment) applies to that file and
 * line only. */
static void test_diag_codes__a_line_silences_only_its_own_file_and_line(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct diag_silence si = DIAG_SILENCE_INIT;

	(void)state;
	assert_int_equal(diag_add(&d, DC_CONFIG_VALUE_TYPED, "exp.yaml", 6, 3, "a"), 0);
	assert_int_equal(diag_add(&d, DC_CONFIG_VALUE_TYPED, "exp.yaml", 7, 3, "b"), 0);
	assert_int_equal(diag_add(&d, DC_CONFIG_VALUE_TYPED, "other.yaml", 6, 3, "c"), 0);
	assert_int_equal(diag_add(&d, DC_CONFIG_KEY_REPEATED, "exp.yaml", 6, 3, "d"), 0);
	assert_int_equal(diag_silence_add_line(&si, "exp.yaml", 6, DC_CONFIG_VALUE_TYPED), 0);
	diag_silence_apply(&si, &d, 0);
	assert_true(d.v[0].silenced);
	assert_false(d.v[1].silenced || d.v[2].silenced || d.v[3].silenced);
	assert_int_equal(diag_count(&d, DIAG_WARNING), 3);
	diag_silence_release(&si);
	diag_list_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diag_codes__codes_and_meanings_are_unique_and_well_formed),
		cmocka_unit_test(test_diag_codes__every_code_is_documented_in_the_man_page),
		cmocka_unit_test(test_diag_codes__the_man_page_lists_no_other_code),
		cmocka_unit_test(test_diag_codes__a_code_is_parsed_from_its_text_in_any_case),
		cmocka_unit_test(test_diag_codes__a_diagnostic_takes_severity_and_code_from_the_table),
		cmocka_unit_test(test_diag_codes__silenced_diagnostics_are_kept_but_not_counted),
		cmocka_unit_test(test_diag_codes__a_line_silences_only_its_own_file_and_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
