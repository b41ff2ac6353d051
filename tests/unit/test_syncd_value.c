/* The override encoding in etcd (fs/syncd/syncd_value.c, docs/SYNC.md):
 * keys BACKEND/ARCH/NAME and values '=' + bytes | '-'. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "statefile.h"
#include "syncd_value.h"

static void key_split_ok(void **state)
{
	char buf[64], *b, *a, *n;

	(void)state;
	assert_true(syncd_key_split("maxtext/gfx950/XLA_FLAGS", buf, sizeof(buf), &b, &a, &n));
	assert_string_equal(b, "maxtext");
	assert_string_equal(a, "gfx950");
	assert_string_equal(n, "XLA_FLAGS");
	assert_true(syncd_key_split("torch_fl/mi300x.v2-a/_x1", buf, sizeof(buf), &b, &a, &n));
	assert_string_equal(a, "mi300x.v2-a");
	assert_string_equal(n, "_x1");
	/* AMD target IDs, as an arch directory (the mount lets them be
	 * written in, so every node must take them). */
	assert_true(syncd_key_split("maxtext/gfx942:sramecc+:xnack-/A", buf, sizeof(buf), &b, &a, &n));
	assert_string_equal(a, "gfx942:sramecc+:xnack-");
}

static void key_split_refused(void **state)
{
	static const char *const bad[] = {
		"", "maxtext", "maxtext/gfx950", "maxtext/gfx950/", "/gfx950/X", "maxtext//X",
		"maxtext/gfx950/X/Y", "maxtext/gfx950/1X", "maxtext/gfx950/X-Y", "maxtext/gfx950/X.Y",
		"max text/gfx950/X", "maxtext/gfx950/X\n", "maxtext/gfx\xc3\xa9/X",
		/* What the state file refuses as a directory name: a node that
		 * took them could not start again on its own --state. */
		"../gfx950/X", "./gfx950/X", "maxtext/../X", "maxtext/./X", "../../X",
		/* What the mount refuses to write: the same set. */
		"maxtext/host/X", "maxtext/-x/X", "maxtext/gfx$(x)/X", "ma:xtext/gfx950/X",
	};
	char buf[64], *b = NULL, *a = NULL, *n = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(syncd_key_split(bad[i], buf, sizeof(buf), &b, &a, &n));
	/* Longer than the buffer: refused, not cut. */
	assert_false(syncd_key_split("maxtext/gfx950/ABCDEFGHIJ", buf, 20, &b, &a, &n));
}

static void value_roundtrip(void **state)
{
	static const char bytes[] = "a\tb \xff\n\"q\" $x";
	const char *v;
	char *enc;
	size_t len, vlen;

	(void)state;
	assert_int_equal(syncd_value_encode(bytes, sizeof(bytes) - 1, &enc, &len), 0);
	assert_int_equal(len, sizeof(bytes));
	assert_int_equal(enc[0], '=');
	assert_memory_equal(enc + 1, bytes, sizeof(bytes) - 1);
	assert_int_equal(syncd_value_decode(enc, len, &v, &vlen), 0);
	assert_int_equal(vlen, sizeof(bytes) - 1);
	assert_memory_equal(v, bytes, vlen);
	free(enc);
	/* The empty value is "=", the unset "-": distinct. */
	assert_int_equal(syncd_value_encode("", 0, &enc, &len), 0);
	assert_int_equal(len, 1);
	assert_memory_equal(enc, "=", 1);
	assert_int_equal(syncd_value_decode(enc, len, &v, &vlen), 0);
	assert_non_null(v);
	assert_int_equal(vlen, 0);
	free(enc);
	assert_int_equal(syncd_value_encode(NULL, 0, &enc, &len), 0);
	assert_int_equal(len, 1);
	assert_memory_equal(enc, "-", 1);
	assert_int_equal(syncd_value_decode(enc, len, &v, &vlen), 0);
	assert_null(v);
	free(enc);
	/* "=-" is the value "-", not an unset. */
	assert_int_equal(syncd_value_decode("=-", 2, &v, &vlen), 0);
	assert_int_equal(vlen, 1);
	assert_memory_equal(v, "-", 1);
}

static void value_refused(void **state)
{
	const char *v;
	size_t vlen;
	char *big;

	(void)state;
	assert_int_equal(syncd_value_decode("", 0, &v, &vlen), -EPROTO);
	assert_int_equal(syncd_value_decode("5", 1, &v, &vlen), -EPROTO);
	assert_int_equal(syncd_value_decode("--", 2, &v, &vlen), -EPROTO);
	assert_int_equal(syncd_value_decode("=a\0b", 4, &v, &vlen), -EPROTO);
	/* The largest value a state file takes, and one byte more. */
	big = malloc(STATEFILE_VALUE_MAX + 2);
	assert_non_null(big);
	big[0] = '=';
	memset(big + 1, 'x', STATEFILE_VALUE_MAX + 1);
	assert_int_equal(syncd_value_decode(big, STATEFILE_VALUE_MAX + 1, &v, &vlen), 0);
	assert_int_equal(vlen, STATEFILE_VALUE_MAX);
	assert_int_equal(syncd_value_decode(big, STATEFILE_VALUE_MAX + 2, &v, &vlen), -EPROTO);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_split_ok),
		cmocka_unit_test(key_split_refused),
		cmocka_unit_test(value_roundtrip),
		cmocka_unit_test(value_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
