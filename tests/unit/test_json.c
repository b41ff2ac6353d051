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

/* What a stream saw: each array's opening, each item's "n" (-1: not an
 * object; 0: none), and the members each item object kept. */
struct seen {
	char log[512];
	size_t len;
};

static void seen_add(struct seen *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	w->len += (size_t)vsnprintf(w->log + w->len, sizeof(w->log) - w->len, fmt, ap);
	va_end(ap);
}

static int seen_begin(void *ctx, size_t key)
{
	seen_add(ctx, "[%zu ", key);
	return 0;
}

static int seen_item(void *ctx, size_t key, const struct json_value *v)
{
	int64_t n = -1;
	size_t k;

	if (json_is(v, JSON_OBJECT) && json_field_i64(v, "n", &n) < 0)
		n = -2;
	seen_add(ctx, "%zu:%lld(", key, (long long)n);
	for (k = 0; json_is(v, JSON_OBJECT) && k < v->len; k++)
		seen_add(ctx, "%s%s", k ? "," : "", v->members[k].key);
	seen_add(ctx, ") ");
	return 0;
}

/* Keeps "n" and "s" of an item. */
static bool seen_keep(void *ctx, size_t key, const char *m, size_t n)
{
	(void)ctx;
	(void)key;
	return (n == 1 && (*m == 'n' || *m == 's'));
}

static int stream(const char *text, struct seen *w, struct json_value **out)
{
	static const char *const keys[] = { "v", "w", NULL };
	struct json_stream st = { keys, seen_begin, seen_item, seen_keep, w };

	memset(w, 0, sizeof(*w));
	return json_parse_stream(text, strlen(text), &st, out);
}

static void test_json__a_stream_hands_over_the_items_of_its_arrays(void **state)
{
	const struct json_value *f;
	struct json_value *o;
	struct seen w;

	(void)state;
	assert_int_equal(stream("{\"a\": 1, \"v\": [{\"n\": 1, \"x\": [1, {}], \"s\": \"\\u00e9\"}, "
				"null, 7, {\"x\": 2}], \"w\": [], \"z\": [{\"n\": 3}],"
				" \"v\": [{\"s\": \"t\", \"n\": 2}]}", &w, &o), 0);
	/* Only the kept members, in order; a repeated key begins again. */
	assert_string_equal(w.log, "[0 0:1(n,s) 0:-1() 0:-1() 0:0() [1 [0 0:2(s,n) ");
	/* The tree holds an empty array in a streamed one's place, and the
	 * rest as json_parse gives it. */
	assert_true(json_get_ex(o, "v", &f));
	assert_true(json_is(f, JSON_ARRAY));
	assert_int_equal(json_length(f), 0);
	assert_true(json_get_ex(o, "z", &f));
	assert_int_equal(json_length(f), 1);
	json_free(o);
	/* Not an array: kept in the tree, not streamed. */
	assert_int_equal(stream("{\"v\": {\"n\": 1}}", &w, &o), 0);
	assert_string_equal(w.log, "");
	assert_true(json_get_ex(o, "v", &f));
	assert_true(json_is(f, JSON_OBJECT));
	json_free(o);
	/* Nested deeper than the top level: not streamed either. */
	assert_int_equal(stream("{\"a\": {\"v\": [1]}}", &w, &o), 0);
	assert_string_equal(w.log, "");
	json_free(o);
}

static void stream_refused(const char *text)
{
	struct json_value *o = (struct json_value *)1;
	struct seen w;

	if (stream(text, &w, &o) != -EPROTO)
		fail_msg("accepted: %s", text);
	assert_null(o);
}

static void test_json__what_a_stream_drops_is_checked_as_strictly(void **state)
{
	(void)state;
	/* A member the stream does not keep is still RFC 8259. */
	stream_refused("{\"v\": [{\"x\": [1, 2,]}]}");
	stream_refused("{\"v\": [{\"x\": {\"a\": 01}}]}");
	stream_refused("{\"v\": [{\"x\": \"\\x41\"}]}");
	stream_refused("{\"v\": [{\"x\": \"tab\there\"}]}");
	stream_refused("{\"v\": [{\"x\": \"\\ud800\"}]}");
	stream_refused("{\"v\": [{\"x\": nul}]}");
	stream_refused("{\"v\": [{\"x\": [1}]}");
	stream_refused("{\"v\": [{\"x\": 1,}]}");
	/* And so are the items and the rest of the document. */
	stream_refused("{\"v\": [1, 2,]}");
	stream_refused("{\"v\": [{\"n\": 1}], \"a\": +1}");
	stream_refused("{\"v\": [{\"n\": 1}]");
	stream_refused("{\"v\": [{\"n\": 1}]} x");
}

static int fail_item(void *ctx, size_t key, const struct json_value *v)
{
	(void)ctx;
	(void)key;
	(void)v;
	return -ENOMEM;
}

static void test_json__a_stream_callback_ends_the_parse(void **state)
{
	static const char *const keys[] = { "v", NULL };
	struct seen w = { "", 0 };
	struct json_stream st = { keys, seen_begin, fail_item, NULL, &w };
	struct json_value *o = (struct json_value *)1;
	const char *text = "{\"v\": [1]}";

	(void)state;
	assert_int_equal(json_parse_stream(text, strlen(text), &st, &o), -ENOMEM);
	assert_null(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json__a_field_written_reads_back_byte_for_byte),
		cmocka_unit_test(test_json__values_and_fields),
		cmocka_unit_test(test_json__what_is_not_one_strict_object_is_refused),
		cmocka_unit_test(test_json__a_stream_hands_over_the_items_of_its_arrays),
		cmocka_unit_test(test_json__what_a_stream_drops_is_checked_as_strictly),
		cmocka_unit_test(test_json__a_stream_callback_ends_the_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
