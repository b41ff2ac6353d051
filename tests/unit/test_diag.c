/* diag: diagnostics keep one line each whatever an input holds. A name or
 * a path read from a spec, a config or a directory listing may carry a
 * newline or a terminal escape; printed raw, it would forge a diagnostic
 * line of its own ("x.yaml:1:1: error: ...") or recolour the terminal. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "diag.h"
#include "strbuf.h"

static void test_diag__control_bytes_in_a_message_are_escaped(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(diag_add(&d, DC_SPEC_SCHEMA, "specs/catalog.docs.yaml", 2, 5,
				  "%s is not in the catalog",
				  "EVIL\x1b[31m\nfake.yaml:1:1: error: forged\t\x7f"), 0);
	assert_string_equal(d.v[0].msg, "EVIL\\x1b[31m\\nfake.yaml:1:1: error: forged\\t\\x7f "
			    "is not in the catalog");
	diag_list_release(&d);
}

static void test_diag__utf8_and_plain_text_stay_as_they_are(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;

	(void)state;
	assert_int_equal(diag_add(&d, DC_RULE_MASTER_PORT_RANGE, "a.yaml", 1, 1,
				  "MASTER_PORT=80 is outside 1024\xe2\x80\x93" "65535 (\"quoted\" \\ kept)"),
			 0);
	assert_string_equal(d.v[0].msg,
			    "MASTER_PORT=80 is outside 1024\xe2\x80\x93" "65535 (\"quoted\" \\ kept)");
	diag_list_release(&d);
}

static void test_diag__a_file_name_with_a_newline_prints_on_one_line(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(diag_add(&d, DC_SPEC_SCHEMA, "specs/x\nfake.yaml:1:1: error: y.yaml", 3, 0,
				  "bad"), 0);
	assert_int_equal(diag_format(&d.v[0], &sb), 0);
	assert_string_equal(sb_str(&sb), "specs/x\\nfake.yaml:1:1: error: y.yaml:3: error: bad [PE004]");
	assert_null(strchr(sb_str(&sb), '\n'));
	/* The stored file is the name as it is: it still finds the file. */
	assert_string_equal(d.v[0].file, "specs/x\nfake.yaml:1:1: error: y.yaml");
	sb_release(&sb);
	diag_list_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diag__control_bytes_in_a_message_are_escaped),
		cmocka_unit_test(test_diag__utf8_and_plain_text_stay_as_they_are),
		cmocka_unit_test(test_diag__a_file_name_with_a_newline_prints_on_one_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
