/* text: the byte-string helpers every message and view goes through.
 * text_quote puts a name on one line of `check` output, so nothing in it may
 * be invisible: two names that differ by a BOM or a zero-width space must
 * print differently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "strbuf.h"
#include "text.h"

static void expect_quote(const char *in, size_t n, size_t max, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(text_quote(&sb, in, n, max), 0);
	assert_string_equal(sb_str(&sb), want);
	sb_release(&sb);
}

#define Q(lit, max, want) expect_quote(lit, sizeof(lit) - 1, max, want)

static void test_text__quote_escapes_ascii_controls_and_quotes(void **state)
{
	(void)state;
	Q("plain", 64, "\"plain\"");
	Q("a\"b\\c", 64, "\"a\\\"b\\\\c\"");
	Q("l1\nl2\tx\x01\x7f", 64, "\"l1\\nl2\\tx\\x01\\x7f\"");
	Q("\0z", 64, "\"\\x00z\"");
}

static void test_text__quote_shows_invisible_characters(void **state)
{
	(void)state;
	/* Printable non-ASCII text is kept as it is. */
	Q("caf\xc3\xa9", 64, "\"caf\xc3\xa9\"");
	/* U+FEFF (a BOM), U+200B (zero-width space), U+00A0 (no-break space):
	 * repr() escapes them, and so do we. */
	Q("\xef\xbb\xbf" "B", 64, "\"\\ufeffB\"");
	Q("A\xe2\x80\x8b", 64, "\"A\\u200b\"");
	Q("\xc2\xa0", 64, "\"\\u00a0\"");
	/* A private-use character past the BMP. */
	Q("\xf3\xb0\x80\x80", 64, "\"\\U000f0000\"");
}

static void test_text__quote_escapes_bytes_of_no_valid_sequence(void **state)
{
	(void)state;
	Q("\xff" "a", 64, "\"\\xffa\"");
	/* A truncated sequence and an overlong encoding of '/'. */
	Q("a\xe2\x80", 64, "\"a\\xe2\\x80\"");
	Q("\xc0\xaf", 64, "\"\\xc0\\xaf\"");
}

static void test_text__quote_shortens_past_max(void **state)
{
	(void)state;
	Q("abcdef", 3, "\"abc...\"");
	Q("abc", 3, "\"abc\"");
}

static void test_text__escape_keeps_quotes_and_shows_controls(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	const char *in = "got '\t3\n4' \"x\" \\ \xef\xbb\xbf";

	(void)state;
	assert_int_equal(text_escape(&sb, in, strlen(in)), 0);
	assert_string_equal(sb_str(&sb), "got '\\t3\\n4' \"x\" \\ \\ufeff");
	sb_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text__quote_escapes_ascii_controls_and_quotes),
		cmocka_unit_test(test_text__quote_shows_invisible_characters),
		cmocka_unit_test(test_text__quote_escapes_bytes_of_no_valid_sequence),
		cmocka_unit_test(test_text__quote_shortens_past_max),
		cmocka_unit_test(test_text__escape_keeps_quotes_and_shows_controls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
