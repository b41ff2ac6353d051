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

/* Cut after max bytes with "...", escaped as text_escape does, and
 * nothing added when the text fits. */
static void test_text__escape_max_cuts_and_escapes(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(text_escape_max(&sb, "A\nB\x1b[2J", 8, 4), 0);
	assert_string_equal(sb_str(&sb), "A\\nB\\x1b...");
	sb_reset(&sb);
	assert_int_equal(text_escape_max(&sb, "A\nB", 3, 3), 0);
	assert_string_equal(sb_str(&sb), "A\\nB");
	sb_release(&sb);
}

/* A swap of neighbours is one edit; a bounded distance stops past its
 * bound; half the mask bits two names do not share never exceeds their
 * distance. */
static void test_text__edit_distance_swaps_bounds_and_masks(void **state)
{
	static const char *const pairs[][2] = {
		{ "NCCL_SOCKET_IFNAM", "NCCL_SOCKET_IFNAME" },
		{ "NCLL_IB_HCA", "NCCL_IB_HCA" },
		{ "HSA_ENABLE_SMDA", "HSA_ENABLE_SDMA" },
		{ "MY_APP_SETTING", "NCCL_IB_GID_INDEX" },
		{ "", "ABC" },
	};
	size_t k;

	(void)state;
	assert_int_equal(text_edit_distance("DISAPTCH", 8, "DISPATCH", 8), 1);
	assert_int_equal(text_edit_distance("NCCL_IB_TC", 10, "NCCL_IB_SL", 10), 2);
	assert_int_equal(text_edit_distance_max("MY_APP_SETTING", 14, "NCCL_IB_GID_INDEX", 17, 2),
			 3);
	assert_int_equal(text_edit_distance_max("NCLL_IB_HCA", 11, "NCCL_IB_HCA", 11, 1), 1);
	for (k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		const char *a = pairs[k][0], *b = pairs[k][1];
		size_t d = text_edit_distance(a, strlen(a), b, strlen(b));
		uint64_t x = text_char_mask(a, strlen(a)) ^ text_char_mask(b, strlen(b));

		assert_true(((size_t)__builtin_popcountll(x) + 1) / 2 <= d);
		assert_int_equal(text_edit_distance_max(a, strlen(a), b, strlen(b), d), d);
	}
}

/* ASCII is skipped a byte at a time and everything else decoded: a bad
 * sequence after ASCII, at the end or cut short is still refused. */
static void test_text__utf8_valid_across_ascii_and_sequences(void **state)
{
	(void)state;
	assert_true(utf8_valid("", 0));
	assert_true(utf8_valid("plain ascii", 11));
	assert_true(utf8_valid("a\xc3\xa9" "b", 4));
	assert_true(utf8_valid("\xe2\x82\xac", 3));
	assert_true(utf8_valid("x\0y", 3));
	assert_false(utf8_valid("ab\x80", 3));
	assert_false(utf8_valid("ab\xc3", 3));
	assert_false(utf8_valid("a\xc0\xaf" "b", 4));       /* overlong */
	assert_false(utf8_valid("a\xed\xa0\x80", 4));   /* surrogate */
	assert_false(utf8_valid("abc\xff", 4));
}

/* The first byte's shortcut finds the same names. */
static void test_text__in_list_is_whole_names(void **state)
{
	char *const v[] = { "NCCL_DEBUG", "N", "", "MASTER_ADDR" };

	(void)state;
	assert_true(text_in_list(v, 4, "NCCL_DEBUG"));
	assert_true(text_in_list(v, 4, "N"));
	assert_true(text_in_list(v, 4, ""));
	assert_true(text_in_list(v, 4, "MASTER_ADDR"));
	assert_false(text_in_list(v, 4, "NCCL"));
	assert_false(text_in_list(v, 4, "NCCL_DEBUG_X"));
	assert_false(text_in_list(v, 4, "M"));
	assert_false(text_in_list(v, 0, "N"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text__utf8_valid_across_ascii_and_sequences),
		cmocka_unit_test(test_text__in_list_is_whole_names),
		cmocka_unit_test(test_text__quote_escapes_ascii_controls_and_quotes),
		cmocka_unit_test(test_text__escape_max_cuts_and_escapes),
		cmocka_unit_test(test_text__quote_shows_invisible_characters),
		cmocka_unit_test(test_text__quote_escapes_bytes_of_no_valid_sequence),
		cmocka_unit_test(test_text__quote_shortens_past_max),
		cmocka_unit_test(test_text__escape_keeps_quotes_and_shows_controls),
		cmocka_unit_test(test_text__edit_distance_swaps_bounds_and_masks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
