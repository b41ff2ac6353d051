/* A run record read back (resolver/engine/run_record_decode.c): its fields,
 * what a repeated key means, which fault is told when there are several,
 * and that what the decoder does not keep is still checked as JSON. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "run_record_decode.h"

#define HEAD "{\"format\":\"primus-envfs-record\",\"version\":1,\"backend\":\"b\",\"arch\":\"x\","
#define VAR_A "{\"name\":\"A\",\"value\":\"1\",\"set\":true,\"exported\":true,\"secret\":false," \
	"\"layer\":\"config\",\"source\":\"c.yaml:2\",\"layers\":[\"backend\",\"config\"]," \
	"\"shadowed\":[{\"layer\":\"backend\",\"value\":\"0\"}],\"default\":\"0\"}"

static int decode(const char *text, struct rr_doc **d, char *msg, size_t msglen)
{
	*msg = '\0';
	return run_record_decode(text, strlen(text), d, msg, msglen);
}

/* text is refused with a message that has want in it. */
static void refused(const char *text, const char *want)
{
	struct rr_doc *d = (struct rr_doc *)1;
	char msg[256];

	if (decode(text, &d, msg, sizeof(msg)) != -EPROTO)
		fail_msg("accepted: %s", text);
	assert_null(d);
	if (!strstr(msg, want))
		fail_msg("\"%s\" does not say \"%s\": %s", msg, want, text);
}

static void test_run_record_decode__reads_every_field_it_keeps(void **state)
{
	const char *text = HEAD "\"digest\":\"dd\",\"program\":{\"version\":\"0.1\"},"
		"\"specs\":{\"sha256\":\"ss\"},\"environ\":[{\"name\":\"A\",\"value\":\"1\"}],"
		"\"variables\":[" VAR_A ","
		"{\"name_b64\":\"/wE=\",\"value\":null,\"set\":false,\"exported\":false,"
		"\"secret\":true,\"layer\":null,\"source\":null},"
		"{\"name\":\"XLA_FLAGS\",\"value_b64\":\"LS1hPTE=\",\"set\":true,\"exported\":true,"
		"\"secret\":false,\"layer\":\"config\",\"source\":\"c.yaml:3\",\"flags\":["
		"{\"flag\":\"--a\",\"token\":\"--a=1\",\"layer\":\"config\"}]}],"
		"\"diagnostics\":[{\"severity\":\"warning\",\"code\":\"W1\",\"file\":\"f\","
		"\"line\":3,\"column\":null,\"message\":\"m\",\"silenced\":true}]}";
	struct rr_doc *d;
	char msg[256];

	(void)state;
	assert_int_equal(decode(text, &d, msg, sizeof(msg)), 0);
	assert_int_equal(d->version, 1);
	assert_string_equal(d->backend, "b");
	assert_string_equal(d->arch, "x");
	assert_string_equal(d->digest, "dd");
	assert_string_equal(d->program_version, "0.1");
	assert_string_equal(d->specs_sha256, "ss");
	assert_int_equal(d->nvars, 3);
	assert_string_equal(d->vars[0].name, "A");
	assert_int_equal(d->vars[0].value_len, 1);
	assert_string_equal(d->vars[0].value, "1");
	assert_true(d->vars[0].set && d->vars[0].exported && !d->vars[0].secret);
	assert_string_equal(d->vars[0].layer, "config");
	assert_string_equal(d->vars[0].source, "c.yaml:2");
	assert_false(d->vars[0].is_flags);
	assert_int_equal(d->vars[1].name_len, 2);
	assert_memory_equal(d->vars[1].name, "\xff\x01", 3);
	assert_null(d->vars[1].value);
	assert_true(!d->vars[1].set && d->vars[1].secret);
	assert_null(d->vars[1].layer);
	assert_string_equal(d->vars[2].value, "--a=1");
	assert_true(d->vars[2].is_flags);
	assert_int_equal(d->vars[2].nflags, 1);
	assert_string_equal(d->vars[2].flags[0].flag, "--a");
	assert_string_equal(d->vars[2].flags[0].token, "--a=1");
	assert_int_equal(d->vars[2].flags[0].token_len, 5);
	assert_string_equal(d->vars[2].flags[0].layer, "config");
	assert_int_equal(d->ndiags, 1);
	assert_string_equal(d->diags[0].severity, "warning");
	assert_string_equal(d->diags[0].code, "W1");
	assert_string_equal(d->diags[0].file, "f");
	assert_int_equal(d->diags[0].line, 3);
	assert_int_equal(d->diags[0].column, 0);
	assert_string_equal(d->diags[0].message, "m");
	assert_true(d->diags[0].silenced);
	rr_doc_free(d);
}

static void test_run_record_decode__a_repeated_key_is_its_last(void **state)
{
	struct rr_doc *d;
	char msg[256];

	(void)state;
	assert_int_equal(decode(HEAD "\"variables\":[" VAR_A "],\"variables\":[]}", &d, msg,
				sizeof(msg)), 0);
	assert_int_equal(d->nvars, 0);
	rr_doc_free(d);
	/* An earlier array of the wrong shape does not count either. */
	assert_int_equal(decode(HEAD "\"variables\":[{\"name\":5}],\"variables\":[" VAR_A "],"
				"\"diagnostics\":[{\"severity\":1}],\"diagnostics\":\"none\"}", &d,
				msg, sizeof(msg)), 0);
	assert_int_equal(d->nvars, 1);
	assert_string_equal(d->vars[0].name, "A");
	assert_int_equal(d->ndiags, 0);
	rr_doc_free(d);
	refused(HEAD "\"variables\":[" VAR_A "],\"variables\":null}", "no \"variables\" array");
	refused(HEAD "\"variables\":[" VAR_A "],\"variables\":[{\"name\":5}]}", "wrong shape");
}

static void test_run_record_decode__the_first_fault_in_order_is_told(void **state)
{
	(void)state;
	/* Not JSON anywhere comes first, then not a record, its version,
	 * its backend, then a variable or a diagnostic of the wrong shape. */
	refused(HEAD "\"variables\":[{\"name\":5}]} x", "not a JSON object");
	refused("{\"variables\":[{\"name\":5}],\"format\":\"other\"}",
		"not a primus-envfs run record");
	refused("{\"variables\":[{\"name\":5}],\"format\":\"primus-envfs-record\",\"version\":99}",
		"version 99");
	refused("{\"variables\":[{\"name\":5}],\"format\":\"primus-envfs-record\",\"version\":1}",
		"names no backend and arch");
	refused(HEAD "\"variables\":[{\"name\":5}]}", "wrong shape");
	refused(HEAD "\"variables\":[{\"value\":\"1\"}]}", "wrong shape");
	refused(HEAD "\"variables\":[" VAR_A ",7]}", "wrong shape");
	refused(HEAD "\"variables\":[],\"diagnostics\":[{\"message\":\"m\"}]}", "wrong shape");
	refused(HEAD "\"diagnostics\":[]}", "no \"variables\" array");
}

static void test_run_record_decode__what_is_not_kept_is_still_checked(void **state)
{
	struct rr_doc *d;
	char msg[256];

	(void)state;
	/* Fields diff does not read may have any shape, as before... */
	assert_int_equal(decode(HEAD "\"environ\":[1,\"x\",{\"y\":[]}],\"variables\":["
				"{\"name\":\"A\",\"layers\":5,\"default\":{\"x\":[]},\"other\":null}]}",
				&d, msg, sizeof(msg)), 0);
	assert_int_equal(d->nvars, 1);
	rr_doc_free(d);
	/* ...but must be JSON. */
	refused(HEAD "\"variables\":[{\"name\":\"A\",\"layers\":[1,]}]}", "not a JSON object");
	refused(HEAD "\"variables\":[{\"name\":\"A\",\"default\":\"\\q\"}]}", "not a JSON object");
	refused(HEAD "\"environ\":[{\"name\":01}],\"variables\":[]}", "not a JSON object");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_record_decode__reads_every_field_it_keeps),
		cmocka_unit_test(test_run_record_decode__a_repeated_key_is_its_last),
		cmocka_unit_test(test_run_record_decode__the_first_fault_in_order_is_told),
		cmocka_unit_test(test_run_record_decode__what_is_not_kept_is_still_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
