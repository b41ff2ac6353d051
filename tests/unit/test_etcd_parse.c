/* The pure parts of the etcd client (fs/sync): endpoint lists, the v3
 * gateway's JSON shapes (64-bit numbers as strings, omitted defaults,
 * base64), prefix ranges and what each etcd error means. The client
 * against a live etcd is tested by tests/sync/. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "etcd_internal.h"

static int parse(const char *list, bool tls, struct etcd_ep *ep, size_t *n,
                 struct strbuf *msg)
{
	sb_reset(msg);
	return ep_parse(list, tls, ep, ETCD_MAX_ENDPOINTS, n, msg);
}

static void test_endpoints(void **state)
{
	struct etcd_ep ep[ETCD_MAX_ENDPOINTS];
	struct strbuf msg = STRBUF_INIT;
	size_t n;

	(void)state;
	assert_int_equal(parse("etcd://h1:2379,10.0.0.2:2380", false, ep, &n, &msg), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ep[0].url, "http://h1:2379");
	assert_string_equal(ep[0].name, "h1:2379");
	assert_string_equal(ep[1].url, "http://10.0.0.2:2380");
	ep_free_all(ep, n);

	/* A CA makes https the default; an explicit scheme wins. */
	assert_int_equal(parse("h1:1, http://h2:2 ,https://[::1]:3", true, ep, &n, &msg), 0);
	assert_int_equal(n, 3);
	assert_string_equal(ep[0].url, "https://h1:1");
	assert_string_equal(ep[1].url, "http://h2:2");
	assert_string_equal(ep[1].name, "h2:2");
	assert_string_equal(ep[2].url, "https://[::1]:3");
	assert_string_equal(ep[2].name, "[::1]:3");
	ep_free_all(ep, n);

	static const char *const bad[] = {
		"", "etcd://", "h1", "h1:", ":2379", "h1:0", "h1:65536", "h1:23x",
		"h1:2379,", "h1:2379,,h2:1", "ftp://h1:1", "h1:1/path", "[::1:1",
		"h 1:2379", "etcd://etcd://h:1",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(parse(bad[i], false, ep, &n, &msg), -EINVAL);
		assert_true(msg.len > 0);
	}
	assert_non_null(strstr(sb_str(&msg), "etcd://etcd://h:1"));

	struct strbuf many = STRBUF_INIT;
	for (int i = 0; i <= ETCD_MAX_ENDPOINTS; i++)
		sb_addf(&many, "%sh%d:1", i ? "," : "", i);
	assert_int_equal(parse(sb_str(&many), false, ep, &n, &msg), -EINVAL);
	assert_non_null(strstr(sb_str(&msg), "more than 16"));
	sb_release(&many);
	sb_release(&msg);
}

static void test_fields(void **state)
{
	struct json_object *o;
	int64_t v;
	uint64_t u;
	bool b;
	char *s;
	size_t len;
	const char *j = "{\"header\":{\"revision\":\"42\",\"member_id\":\"18446744073709551615\"},"
		"\"n\":7,\"neg\":\"-3\",\"bad\":\"12x\",\"obj\":{},\"succeeded\":true,"
		"\"key\":\"YS9iL2M=\",\"bin\":\"AApiwwDA/w==\",\"nob64\":\"***\"}";

	(void)state;
	assert_int_equal(ej_parse(j, strlen(j), &o), 0);
	assert_int_equal(ej_revision(o, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(ej_i64(o, "n", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(ej_i64(o, "neg", &v), 0);
	assert_int_equal(v, -3);
	assert_int_equal(ej_i64(o, "missing", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(ej_i64(o, "bad", &v), -EPROTO);
	assert_int_equal(ej_i64(o, "obj", &v), -EPROTO);
	assert_int_equal(ej_u64(json_object_object_get(o, "header"), "member_id", &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(ej_bool(o, "succeeded", &b), 0);
	assert_true(b);
	assert_int_equal(ej_bool(o, "missing", &b), 0);
	assert_false(b);
	assert_int_equal(ej_bool(o, "n", &b), -EPROTO);

	assert_int_equal(ej_bytes(o, "key", &s, &len), 0);
	assert_int_equal(len, 5);
	assert_string_equal(s, "a/b/c");
	free(s);
	assert_int_equal(ej_bytes(o, "bin", &s, &len), 0);
	assert_int_equal(len, 7);
	assert_memory_equal(s, "\0\nb\xc3\0\xc0\xff", 7);
	assert_int_equal(s[7], 0);
	free(s);
	assert_int_equal(ej_bytes(o, "missing", &s, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(s, "");
	free(s);
	assert_int_equal(ej_bytes(o, "nob64", &s, &len), -EPROTO);
	assert_int_equal(ej_bytes(o, "n", &s, &len), -EPROTO);
	json_object_put(o);

	/* Not one object: -EPROTO. */
	static const char *const bad[] = { "", "[1]", "{\"a\":", "{} {}", "\"x\"", "<html>" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(ej_parse(bad[i], strlen(bad[i]), &o), -EPROTO);
}

/* A string field of a decoded document: absent and null are both "not
 * there", anything but a string is refused. */
static void test_optional_string(void **state)
{
	struct json_object *o;
	char *s = (char *)"unset";
	const char *j = "{\"s\":\"a b\",\"e\":\"\",\"z\":null,\"n\":1,\"t\":true}";

	(void)state;
	assert_int_equal(ej_parse(j, strlen(j), &o), 0);
	assert_int_equal(ej_string(o, "s", &s), 0);
	assert_string_equal(s, "a b");
	free(s);
	assert_int_equal(ej_string(o, "e", &s), 0);
	assert_string_equal(s, "");
	free(s);
	assert_int_equal(ej_string(o, "z", &s), 0);
	assert_null(s);
	s = (char *)"unset";
	assert_int_equal(ej_string(o, "missing", &s), 0);
	assert_null(s);
	s = (char *)"unset";
	assert_int_equal(ej_string(o, "n", &s), -EPROTO);
	assert_null(s);
	assert_int_equal(ej_string(o, "t", &s), -EPROTO);
	json_object_put(o);
}

static void test_b64_roundtrip(void **state)
{
	unsigned char all[256];
	struct json_object *o = json_object_new_object();
	char *s;
	size_t len;

	(void)state;
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)(255 - i);
	for (size_t n = 0; n <= 256; n += 1 + n / 3) {
		assert_int_equal(ej_add_b64(o, "v", all, n), 0);
		assert_int_equal(ej_bytes(o, "v", &s, &len), 0);
		assert_int_equal(len, n);
		assert_memory_equal(s, all, n);
		free(s);
	}
	assert_int_equal(ej_add_i64(o, "r", INT64_MAX), 0);
	int64_t v;
	assert_int_equal(ej_i64(o, "r", &v), 0);
	assert_true(v == INT64_MAX);
	json_object_put(o);
}

static void test_prefix_end(void **state)
{
	char out[8];
	size_t n;

	(void)state;
	ej_prefix_end("/a/", 3, out, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(out, "/a0", 3);
	ej_prefix_end("a\xff\xff", 3, out, &n);
	assert_int_equal(n, 1);
	assert_memory_equal(out, "b", 1);
	ej_prefix_end("\xff", 1, out, &n);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 0);
	ej_prefix_end("", 0, out, &n);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 0);
}

static void test_errors(void **state)
{
	int action;
	bool amb;
	struct json_object *o;
	int code;
	const char *m;

	(void)state;
	assert_int_equal(err_from_grpc(14, "etcdserver: no leader", &action, &amb), -EAGAIN);
	assert_int_equal(action, ERR_RETRY);
	assert_false(amb);
	assert_int_equal(err_from_grpc(14, "etcdserver: request timed out", &action, &amb), -EAGAIN);
	assert_int_equal(action, ERR_RETRY);
	assert_true(amb);
	assert_int_equal(err_from_grpc(14, "etcdserver: leader changed", &action, &amb), -EAGAIN);
	assert_true(amb);
	assert_int_equal(err_from_grpc(16, "etcdserver: invalid auth token", &action, &amb), -EACCES);
	assert_int_equal(action, ERR_BAD_TOKEN);
	assert_int_equal(err_from_grpc(3, "etcdserver: revision of auth store is old", &action, &amb), -EACCES);
	assert_int_equal(action, ERR_BAD_TOKEN);
	assert_int_equal(err_from_grpc(3, "etcdserver: authentication failed, invalid user ID or password",
		&action, &amb), -EACCES);
	assert_int_equal(action, ERR_FINAL);
	assert_int_equal(err_from_grpc(3, "etcdserver: user name is empty", &action, &amb), -EACCES);
	assert_int_equal(action, ERR_NEED_AUTH);
	assert_int_equal(err_from_grpc(9, "etcdserver: authentication is not enabled", &action, &amb), -EPERM);
	assert_int_equal(action, ERR_AUTH_OFF);
	assert_int_equal(err_from_grpc(7, "etcdserver: permission denied", &action, &amb), -EACCES);
	assert_int_equal(action, ERR_FINAL);
	assert_int_equal(err_from_grpc(5, "etcdserver: requested lease not found", &action, &amb), -ENOENT);
	assert_int_equal(err_from_grpc(3, "etcdserver: request is too large", &action, &amb), -EMSGSIZE);
	assert_int_equal(err_from_grpc(8, "etcdserver: mvcc: database space exceeded", &action, &amb), -ENOSPC);
	assert_int_equal(err_from_grpc(8, "etcdserver: too many requests", &action, &amb), -EAGAIN);
	assert_int_equal(action, ERR_RETRY);
	assert_int_equal(err_from_grpc(11, "etcdserver: mvcc: required revision has been compacted",
		&action, &amb), -ESTALE);
	assert_int_equal(err_from_grpc(3, "etcdserver: key is not provided", &action, &amb), -EINVAL);
	assert_int_equal(err_from_grpc(4, "context deadline exceeded", &action, &amb), -ETIMEDOUT);
	assert_int_equal(action, ERR_RETRY);
	assert_int_equal(err_from_grpc(13, "boom", &action, &amb), -EIO);

	/* Every shape of error reply: 3.4 unary, 3.5+ unary, 3.4 and 3.5+
	 * stream. */
	static const char *const shapes[] = {
		"{\"error\":\"etcdserver: no leader\",\"message\":\"etcdserver: no leader\",\"code\":14}",
		"{\"code\":14,\"message\":\"etcdserver: no leader\",\"details\":[]}",
		"{\"error\":{\"grpc_code\":14,\"http_code\":503,\"message\":\"etcdserver: no leader\"}}",
		"{\"error\":{\"code\":14,\"message\":\"etcdserver: no leader\"}}",
	};
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
		assert_int_equal(ej_parse(shapes[i], strlen(shapes[i]), &o), 0);
		assert_int_equal(err_parse_reply(o, &code, &m), 0);
		assert_int_equal(code, 14);
		assert_string_equal(m, "etcdserver: no leader");
		json_object_put(o);
	}
	const char *r = "{\"header\":{}}";
	assert_int_equal(ej_parse(r, strlen(r), &o), 0);
	assert_int_equal(err_parse_reply(o, &code, &m), -EPROTO);
	json_object_put(o);

	/* A watch's cancel reason. */
	assert_int_equal(err_parse_cancel("rpc error: code = Unauthenticated desc = etcdserver: invalid auth token",
		&code, &m), 0);
	assert_int_equal(code, 16);
	assert_string_equal(m, "etcdserver: invalid auth token");
	assert_int_equal(err_parse_cancel("rpc error: code = PermissionDenied desc = etcdserver: permission denied",
		&code, &m), 0);
	assert_int_equal(code, 7);
	assert_int_equal(err_parse_cancel("mvcc: required revision has been compacted", &code, &m), -EPROTO);
	assert_int_equal(code, 2);
	assert_string_equal(m, "mvcc: required revision has been compacted");

	/* A refusal outranks silence, silence a refused connection. */
	assert_true(err_rank(-EACCES) > err_rank(-EAGAIN));
	assert_true(err_rank(-EAGAIN) > err_rank(-ETIMEDOUT));
	assert_true(err_rank(-ETIMEDOUT) > err_rank(-ECONNREFUSED));
}

static void test_messages(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	err_add_printable(&sb, "a/\nb\xff\xc3\xa9", 7, 100);
	assert_string_equal(sb_str(&sb), "a/\\x0ab\\xff\xc3\xa9");
	sb_reset(&sb);
	err_add_printable(&sb, "abcdefgh", 8, 4);
	assert_string_equal(sb_str(&sb), "abcd...");
	sb_reset(&sb);

	sb_adds(&sb, "pw=hunter2 and hunter2hunter2.");
	err_scrub(&sb, "hunter2");
	assert_string_equal(sb_str(&sb), "pw=*** and ******.");
	err_scrub(&sb, "");
	err_scrub(&sb, NULL);
	assert_string_equal(sb_str(&sb), "pw=*** and ******.");
	sb_release(&sb);

	/* Reconnect delays: 100 ms doubling to 3.2 s, half to all of it. */
	for (unsigned f = 1; f <= 8; f++) {
		unsigned d = etcd_backoff_ms(f), cap = f >= 6 ? 3200 : 100u << (f - 1);
		assert_true(d >= cap / 2 && d <= cap);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_optional_string),
		cmocka_unit_test(test_b64_roundtrip),
		cmocka_unit_test(test_prefix_end),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
