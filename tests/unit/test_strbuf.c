/* strbuf: the growable buffer every renderer writes into. Bytes by length
 * (NULs included), always NUL-terminated after len, and -ENOMEM, never an
 * overflow, for sizes that cannot be. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strbuf.h"

static void test_strbuf__empty_buffer_reads_as_empty_string(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_null(sb.buf);
	assert_string_equal(sb_str(&sb), "");
	sb_reset(&sb);
	assert_int_equal(sb.len, 0);
	sb_release(&sb);
	sb_release(&sb);
}

static void test_strbuf__adds_keep_bytes_and_a_terminating_nul(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(sb_adds(&sb, "ab"), 0);
	assert_int_equal(sb_addc(&sb, '\0'), 0);
	assert_int_equal(sb_add(&sb, "c\0d", 3), 0);
	assert_int_equal(sb_add(&sb, NULL, 0), 0);
	assert_int_equal(sb.len, 6);
	assert_memory_equal(sb.buf, "ab\0c\0d", 6);
	assert_int_equal(sb.buf[6], '\0');
	assert_true(sb.cap > sb.len);
	sb_release(&sb);
}

static void test_strbuf__addf_formats_long_and_short_text(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char big[5000];
	size_t i;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(sb_addf(&sb, "%s=%d", "n", 42), 0);
	/* longer than the spare room: formatted again after growing */
	assert_int_equal(sb_addf(&sb, "[%s]", big), 0);
	assert_int_equal(sb.len, 4 + 2 + sizeof(big) - 1);
	assert_memory_equal(sb.buf, "n=42[", 5);
	for (i = 5; i < sb.len - 1; i++)
		assert_int_equal(sb.buf[i], 'x');
	assert_int_equal(sb.buf[sb.len - 1], ']');
	assert_int_equal(sb.buf[sb.len], '\0');
	sb_release(&sb);
}

static void test_strbuf__grow_refuses_sizes_that_overflow(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(sb_adds(&sb, "keep"), 0);
	assert_int_equal(sb_grow(&sb, SIZE_MAX), -ENOMEM);
	assert_int_equal(sb_grow(&sb, SIZE_MAX / 2), -ENOMEM);
	/* a refused grow leaves the contents as they were */
	assert_int_equal(sb.len, 4);
	assert_string_equal(sb_str(&sb), "keep");
	sb_release(&sb);
}

static void test_strbuf__reset_keeps_memory_release_frees_it(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t cap;

	(void)state;
	assert_int_equal(sb_adds(&sb, "hello"), 0);
	cap = sb.cap;
	sb_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.cap, cap);
	assert_string_equal(sb_str(&sb), "");
	sb_release(&sb);
	assert_null(sb.buf);
	assert_int_equal(sb.cap, 0);
}

static void test_strbuf__detach_hands_over_the_bytes(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = 99;
	char *p;

	(void)state;
	/* empty: an allocated "" */
	p = sb_detach(&sb, &len);
	assert_non_null(p);
	assert_string_equal(p, "");
	assert_int_equal(len, 0);
	free(p);
	assert_int_equal(sb_add(&sb, "a\0b", 3), 0);
	p = sb_detach(&sb, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(p, "a\0b", 4);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	free(p);
}

static void test_strbuf__xstrdup_copies_and_passes_null(void **state)
{
	char *p;

	(void)state;
	assert_null(xstrdup(NULL));
	p = xstrndup("abcdef", 3);
	assert_string_equal(p, "abc");
	free(p);
	p = xstrdup("");
	assert_string_equal(p, "");
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strbuf__empty_buffer_reads_as_empty_string),
		cmocka_unit_test(test_strbuf__adds_keep_bytes_and_a_terminating_nul),
		cmocka_unit_test(test_strbuf__addf_formats_long_and_short_text),
		cmocka_unit_test(test_strbuf__grow_refuses_sizes_that_overflow),
		cmocka_unit_test(test_strbuf__reset_keeps_memory_release_frees_it),
		cmocka_unit_test(test_strbuf__detach_hands_over_the_bytes),
		cmocka_unit_test(test_strbuf__xstrdup_copies_and_passes_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
