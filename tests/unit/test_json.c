/* The JSON module (resolver/util/json.h): what json_add_field writes,
 * json_field_bytes reads back byte for byte; the reader takes RFC 8259
 * documents and refuses everything else. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "json.h"

static int parse(const char *text, struct json_value **out)
{
	return json_parse(text, strlen(text), out);
}

static void refused(const char *text)
{
	struct json_value *o = (struct json_value *)1;

	if (json_parse(text, strlen(text), &o) != -EPROTO)
		fail_msg("accepted: %s", text);
	assert_null(o);
}

static void test_json__a_field_written_reads_back_byte_for_byte(void **state)
{
	static const char *const values[] = {
		"plain", "", "quote \" backslash \\ slash /", "tab\tnewline\nreturn\r\b\f\x01\x1f",
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "not UTF-8: \xff\xfe\x80", "\xc3",
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
		struct strbuf sb = STRBUF_INIT;
		struct json_value *o;
		char *got;
		size_t len;

		assert_int_equal(sb_addc(&sb, '{'), 0);
		assert_int_equal(json_add_field(&sb, true, "v", values[k], strlen(values[k])), 0);
		assert_int_equal(sb_addc(&sb, '}'), 0);
		assert_int_equal(json_parse(sb.buf, sb.len, &o), 0);
		assert_int_equal(json_field_bytes(o, "v", &got, &len), 0);
		assert_int_equal(len, strlen(values[k]));
		assert_memory_equal(got, values[k], len);
		assert_int_equal(got[len], '\0');
		free(got);
		assert_int_equal(json_field_bytes(o, "w", &got, &len), -ENOENT);
		assert_null(got);
		json_free(o);
		sb_release(&sb);
	}
}

static void test_json__values_and_fields(void **state)
{
	struct json_value *o;
	const struct json_value *f;
	int64_t i;
	bool b;
	char *s;

	(void)state;
	assert_int_equal(parse(" {\"n\": -12, \"big\": 9223372036854775808, \"d\": 1.5e3,"
			       " \"s\": \"12\", \"t\": true, \"z\": null, \"a\": [1, null, {}],"
			       " \"k\": \"first\", \"k\": \"last\", \"u\": \"\\u00e9\\ud83d\\ude00\\u0000x\"}\n",
			       &o), 0);
	assert_int_equal(json_field_i64(o, "n", &i), 0);
	assert_int_equal(i, -12);
	/* Past int64, or not an integer: not an integer field. */
	assert_int_equal(json_field_i64(o, "big", &i), -EPROTO);
	assert_int_equal(json_field_i64(o, "d", &i), -EPROTO);
	/* Protobuf's JSON mapping: a 64-bit number as a string of digits. */
	assert_int_equal(json_field_i64(o, "s", &i), 0);
	assert_int_equal(i, 12);
	assert_int_equal(json_field_bool(o, "t", &b), 0);
	assert_true(b);
	assert_int_equal(json_field_bool(o, "n", &b), -EPROTO);
	/* Absent and null are both the zero value. */
	assert_int_equal(json_field_i64(o, "z", &i), 0);
	assert_int_equal(i, 0);
	assert_int_equal(json_field_string(o, "none", &s), 0);
	assert_null(s);
	assert_true(json_get_ex(o, "z", &f));
	assert_null(f);
	assert_true(json_is(f, JSON_NULL));
	assert_false(json_get_ex(o, "none", &f));
	/* A repeated key: the last one. */
	assert_int_equal(json_field_string(o, "k", &s), 0);
	assert_string_equal(s, "last");
	free(s);
	assert_true(json_get_ex(o, "a", &f));
	assert_int_equal(json_length(f), 3);
	assert_int_equal(json_at(f, 0)->i, 1);
	assert_null(json_at(f, 1));
	assert_true(json_is(json_at(f, 2), JSON_OBJECT));
	assert_null(json_at(f, 3));
	/* Escapes, a surrogate pair and a NUL, which json_field_bytes refuses. */
	assert_true(json_get_ex(o, "u", &f));
	assert_int_equal(f->len, 8);
	assert_memory_equal(f->s, "\xc3\xa9\xf0\x9f\x98\x80\0x", 8);
	assert_int_equal(json_field_bytes(o, "u", &s, &(size_t){ 0 }), -EPROTO);
	json_free(o);
}

/* An object holding arrays, levels deep in all. */
static size_t nested(char *buf, int levels)
{
	size_t n = 0;
	int k;

	n += (size_t)sprintf(buf, "{\"a\":");
	for (k = 1; k < levels; k++)
		buf[n++] = '[';
	for (k = 1; k < levels; k++)
		buf[n++] = ']';
	buf[n++] = '}';
	return n;
}

static void test_json__what_is_not_one_strict_object_is_refused(void **state)
{
	char text[2 * JSON_DEPTH + 16];
	struct json_value *o;
	size_t n;

	(void)state;
	refused("");
	refused("[]");
	refused("\"x\"");
	refused("{} {}");
	refused("{\"a\": 1,}");
	refused("{\"a\": [1, 2,]}");
	refused("{'a': 1}");
	refused("{\"a\": 01}");
	refused("{\"a\": +1}");
	refused("{\"a\": .5}");
	refused("{\"a\": 1.}");
	refused("{\"a\": NaN}");
	refused("{\"a\": tru}");
	refused("{\"a\": nul}");
	refused("{\"a\": \"\\x41\"}");
	refused("{\"a\": \"\\ud800\"}");
	refused("{\"a\": \"\\udc00\"}");
	refused("{\"a\": \"tab\there\"}");
	refused("{\"a\": 1 /* comment */}");
	refused("{\"a\" 1}");
	refused("{\"a\": \"open}");
	refused("{\"a\": [1, 2}");
	/* JSON_DEPTH levels are read, one more is refused. */
	n = nested(text, JSON_DEPTH);
	assert_int_equal(json_parse(text, n, &o), 0);
	json_free(o);
	n = nested(text, JSON_DEPTH + 1);
	assert_int_equal(json_parse(text, n, &o), -EPROTO);
	assert_null(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json__a_field_written_reads_back_byte_for_byte),
		cmocka_unit_test(test_json__values_and_fields),
		cmocka_unit_test(test_json__what_is_not_one_strict_object_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
