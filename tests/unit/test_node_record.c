/* node_record: what a node publishes for verify (resolver/engine/
 * node_record.c builds it) read back by the decoder verify uses
 * (node_record_decode.c, both over resolver/util/json.h), over the fixtures
 * of tests/fixtures/node/ (see test_node_digest.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "node_digest.h"
#include "node_fixture.h"
#include "node_record.h"
#include "node_record_decode.h"
#include "resolve.h"

static void node_resolve(struct node *n)
{
	node_load(n);
	assert_int_equal(resolve_all(n->w, &n->ov, &n->r), 0);
}

static void build(struct node *n, const char *name, struct node_record_kvs *kvs)
{
	static const uint8_t specs[SHA256_LEN] = { 1, 2, 3 };
	struct node_record_in in = {
		.run_key = "/pe/runs/r1", .node = name, .specs_digest = specs,
		.revision = 42, .when_ms = 1700000000123,
		.dirs = (const struct snapshot *const *)n->r->dirs, .ndirs = n->r->ndirs,
	};
	char msg[256];

	assert_int_equal(node_record_build(&in, kvs, msg, sizeof(msg)), 0);
	assert_int_equal(kvs->n, n->r->ndirs + 1);
}

static const struct node_var *find_var(const struct node_detail *d, const char *name)
{
	size_t k;

	for (k = 0; k < d->nvars; k++)
		if (!strcmp(d->vars[k].name, name))
			return &d->vars[k];
	return NULL;
}

/* The summary last, details first, at the documented keys; decoded, the
 * summary's digests are node_digest()'s and each detail recomputes its
 * own; the node-scoped name is absent, the secret a name only. */
static void test_node_record__round_trip(void **state)
{
	struct node a = { .env = { "NODE_RANK=3", "PLAIN=p\xe2\x82\xac" },
			  .host = { "HF_TOKEN=hf_sekrit_value" } };
	struct node_record_kvs kvs;
	struct node_summary *s = NULL;
	struct node_detail *d = NULL;
	uint8_t want[SHA256_LEN], got[SHA256_LEN];
	const struct node_var *v;
	char msg[256];
	size_t k;

	(void)state;
	node_resolve(&a);
	build(&a, "n3", &kvs);
	assert_string_equal(kvs.v[kvs.n - 1].key, "/pe/runs/r1/nodes/n3");
	assert_string_equal(kvs.v[0].key, "/pe/runs/r1/node-dirs/n3/app/a1");
	for (k = 0; k < kvs.n; k++)
		if (memmem(kvs.v[k].value, kvs.v[k].value_len, "sekrit", 6))
			fail_msg("%s holds the secret's value", kvs.v[k].key);
	assert_int_equal(record_decode_summary(kvs.v[kvs.n - 1].value, kvs.v[kvs.n - 1].value_len,
					       &s, msg, sizeof(msg)), 0);
	assert_string_equal(s->node, "n3");
	assert_int_equal(s->revision, 42);
	assert_int_equal(s->when_ms, 1700000000123);
	assert_true(s->has_specs_digest);
	assert_int_equal(s->specs_digest[2], 3);
	assert_int_equal(s->ndirs, a.r->ndirs);
	for (k = 0; k < s->ndirs; k++) {
		assert_string_equal(s->dirs[k].backend, a.r->dirs[k]->backend);
		assert_string_equal(s->dirs[k].arch, a.r->dirs[k]->arch);
		assert_int_equal(node_digest(a.r->dirs[k], want), 0);
		assert_memory_equal(s->dirs[k].digest, want, SHA256_LEN);
		assert_int_equal(record_decode_detail(kvs.v[k].value, kvs.v[k].value_len, &d,
						      msg, sizeof(msg)), 0);
		node_detail_digest(d, got);
		assert_memory_equal(got, want, SHA256_LEN);
		assert_memory_equal(d->digest, want, SHA256_LEN);
		assert_int_equal(d->nvars, s->dirs[k].nvars);
		assert_null(find_var(d, "NODE_RANK"));
		assert_null(find_var(d, "PARAM"));           /* not exported */
		if (!strcmp(d->backend, "app")) {
			assert_non_null(v = find_var(d, "HF_TOKEN"));
			assert_true(v->secret);
			assert_null(v->value);
			assert_int_equal(s->dirs[k].nsecrets, 1);
			assert_non_null(v = find_var(d, "PLAIN"));
			assert_int_equal(v->value_len, 4);
			assert_memory_equal(v->value, "p\xe2\x82\xac", 4);
		}
		node_detail_free(d);
		d = NULL;
	}
	node_summary_free(s);
	node_record_kvs_free(&kvs);
	node_release(&a);
}

/* A node that stopped applying the run's changes says why in its
 * summary, and the reader gets the words back; one that applies has no
 * "behind" at all. */
static void test_node_record__behind_round_trips_and_is_absent_otherwise(void **state)
{
	struct node a = { .env = { "NODE_RANK=3" } };
	struct node_record_in in = { .run_key = "/pe/runs/r1", .node = "n3", .revision = 7 };
	const char *why = "cannot apply app/a1/X: Is a directory";
	struct node_record_kvs kvs = { 0 };
	struct node_summary *s = NULL;
	char msg[256];

	(void)state;
	node_resolve(&a);
	in.dirs = (const struct snapshot *const *)a.r->dirs;
	in.ndirs = a.r->ndirs;
	assert_int_equal(node_record_build(&in, &kvs, msg, sizeof(msg)), 0);
	assert_null(memmem(kvs.v[kvs.n - 1].value, kvs.v[kvs.n - 1].value_len, "behind", 6));
	assert_int_equal(record_decode_summary(kvs.v[kvs.n - 1].value, kvs.v[kvs.n - 1].value_len,
					       &s, msg, sizeof(msg)), 0);
	assert_null(s->behind);
	node_summary_free(s);
	node_record_kvs_free(&kvs);
	in.behind = why;
	assert_int_equal(node_record_build(&in, &kvs, msg, sizeof(msg)), 0);
	assert_int_equal(record_decode_summary(kvs.v[kvs.n - 1].value, kvs.v[kvs.n - 1].value_len,
					       &s, msg, sizeof(msg)), 0);
	assert_non_null(s->behind);
	assert_string_equal(s->behind, why);
	node_summary_free(s);
	node_record_kvs_free(&kvs);
	node_release(&a);
}

/* A value that is not UTF-8 goes base64 and comes back byte for byte. */
static void test_node_record__bytes_that_are_not_utf8_round_trip(void **state)
{
	struct node a = { .env = { "PLAIN=\xff\x01\"\\x" } };
	struct node_record_kvs kvs;
	struct node_detail *d = NULL;
	const struct node_var *v;
	char msg[256];

	(void)state;
	node_resolve(&a);
	build(&a, "n0", &kvs);
	assert_non_null(memmem(kvs.v[0].value, kvs.v[0].value_len, "\"value_b64\":\"", 13));
	assert_int_equal(record_decode_detail(kvs.v[0].value, kvs.v[0].value_len, &d, msg,
					      sizeof(msg)), 0);
	assert_non_null(v = find_var(d, "PLAIN"));
	assert_int_equal(v->value_len, 5);
	assert_memory_equal(v->value, "\xff\x01\"\\x", 5);
	node_detail_free(d);
	node_record_kvs_free(&kvs);
	node_release(&a);
}

/* A value over NODE_RECORD_VALUE_MAX is its hash and length only. */
static void test_node_record__a_long_value_is_its_hash_only(void **state)
{
	char *big = malloc(NODE_RECORD_VALUE_MAX + 8), *env;
	struct node a = { 0 };
	struct node_record_kvs kvs;
	struct node_detail *d = NULL;
	const struct node_var *v;
	uint8_t h[SHA256_LEN];
	char msg[256];

	(void)state;
	assert_non_null(big);
	memset(big, 'x', NODE_RECORD_VALUE_MAX + 1);
	big[NODE_RECORD_VALUE_MAX + 1] = '\0';
	assert_non_null(env = malloc(NODE_RECORD_VALUE_MAX + 16));
	sprintf(env, "PLAIN=%s", big);
	a.env[0] = env;
	node_resolve(&a);
	build(&a, "n0", &kvs);
	assert_int_equal(record_decode_detail(kvs.v[0].value, kvs.v[0].value_len, &d, msg,
					      sizeof(msg)), 0);
	assert_non_null(v = find_var(d, "PLAIN"));
	assert_null(v->value);
	assert_int_equal(v->value_len, NODE_RECORD_VALUE_MAX + 1);
	sha256(big, NODE_RECORD_VALUE_MAX + 1, h);
	assert_memory_equal(v->hash, h, SHA256_LEN);
	node_detail_free(d);
	node_record_kvs_free(&kvs);
	node_release(&a);
	free(env);
	free(big);
}

/* A directory whose values would make a detail over NODE_RECORD_KV_MAX
 * is published with hashes and lengths only, and its digest is the same. */
static void test_node_record__a_detail_too_big_drops_its_values(void **state)
{
	enum { NBIG = 300, LEN = 4000 };
	struct node a = { 0 };
	struct node_record_kvs kvs;
	struct node_detail *d = NULL;
	uint8_t want[SHA256_LEN], got[SHA256_LEN];
	char *val = malloc(LEN), name[32], msg[256];
	size_t k, nbig = 0;

	(void)state;
	assert_non_null(val);
	memset(val, 'v', LEN);
	for (k = 0; k < NBIG; k++) {
		snprintf(name, sizeof(name), "BIG_%03zu", k);
		assert_int_equal(override_set_put(&a.ov, "app", "a1", name, val, LEN), 0);
	}
	node_resolve(&a);
	build(&a, "n0", &kvs);
	assert_string_equal(kvs.v[0].key, "/pe/runs/r1/node-dirs/n0/app/a1");
	assert_true(kvs.v[0].value_len <= NODE_RECORD_KV_MAX);
	assert_null(memmem(kvs.v[0].value, kvs.v[0].value_len, "\"value\":", 8));
	assert_int_equal(record_decode_detail(kvs.v[0].value, kvs.v[0].value_len, &d, msg,
					      sizeof(msg)), 0);
	for (k = 0; k < d->nvars; k++)
		if (!strncmp(d->vars[k].name, "BIG_", 4)) {
			nbig++;
			assert_null(d->vars[k].value);
			assert_int_equal(d->vars[k].value_len, LEN);
		}
	assert_int_equal(nbig, NBIG);
	assert_int_equal(node_digest(a.r->dirs[0], want), 0);
	node_detail_digest(d, got);
	assert_memory_equal(got, want, SHA256_LEN);
	/* the other directory keeps its values */
	assert_non_null(memmem(kvs.v[1].value, kvs.v[1].value_len, "\"value\":", 8));
	node_detail_free(d);
	node_record_kvs_free(&kvs);
	node_release(&a);
	free(val);
}

static void test_node_record__bad_names_and_run_keys_are_refused(void **state)
{
	static const char *const bad[] = { "", ".", "..", "a/b", "a b", "n\xc3\xa9", "x\n" };
	struct node_record_in in = { .run_key = "/pe/runs/r1" };
	struct node_record_kvs kvs;
	char msg[256], longname[NODE_NAME_MAX + 2];
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		in.node = bad[k];
		assert_int_equal(node_record_build(&in, &kvs, msg, sizeof(msg)), -EINVAL);
		assert_non_null(strstr(msg, "node name"));
		assert_null(strchr(msg, '\n'));
		node_record_kvs_free(&kvs);
	}
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(node_name_check(longname, msg, sizeof(msg)), -EINVAL);
	longname[NODE_NAME_MAX] = '\0';
	assert_int_equal(node_name_check(longname, msg, sizeof(msg)), 0);
	assert_int_equal(node_name_check("gpu-node.017_x", msg, sizeof(msg)), 0);
	in.node = "n0";
	in.run_key = "/pe/runs/r1/";
	assert_int_equal(node_record_build(&in, &kvs, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "run key"));
	node_record_kvs_free(&kvs);
}

/* Malformed records are refused with the field at fault, never a crash. */
static void test_node_record__malformed_records_are_refused(void **state)
{
	static const char *const sums[] = {
		"", "[]", "{\"format\":2,\"node\":\"n\"}", "{\"format\":1}",
		"{\"format\":1,\"node\":\"n\",\"version\":\"v\",\"dirs\":{}}",
		"{\"format\":1,\"node\":\"n\",\"version\":\"v\",\"dirs\":[{\"backend\":\"b\"}]}",
		"{\"format\":1,\"node\":\"n\",\"version\":\"v\",\"specs_digest\":\"zz\",\"dirs\":[]}",
		"{\"format\":1,\"node\":\"n\",\"version\":\"v\",\"dirs\":[{\"backend\":\"b\","
		"\"arch\":\"a\",\"digest\":\"" "0000000000000000000000000000000000000000000000000000000000000000"
		"\",\"vars\":-1,\"secrets\":0}]}",
	};
	static const char *const dets[] = {
		"{\"format\":1,\"node\":\"n\",\"backend\":\"b\",\"arch\":\"a\",\"digest\":\""
		"0000000000000000000000000000000000000000000000000000000000000000\","
		"\"vars\":[{\"name\":\"B\",\"secret\":true},{\"name\":\"A\",\"secret\":true}]}",
		"{\"format\":1,\"node\":\"n\",\"backend\":\"b\",\"arch\":\"a\",\"digest\":\""
		"0000000000000000000000000000000000000000000000000000000000000000\","
		"\"vars\":[{\"name\":\"A\",\"hash\":\""
		"0000000000000000000000000000000000000000000000000000000000000000\","
		"\"len\":1,\"value\":\"x\"}]}",
		"{\"format\":1,\"node\":\"n\",\"backend\":\"b\",\"arch\":\"a\",\"digest\":\""
		"0000000000000000000000000000000000000000000000000000000000000000\","
		"\"vars\":[{\"name_b64\":\"QQBC\",\"secret\":true}]}",
	};
	struct node_summary *s = (void *)1;
	struct node_detail *d = (void *)1;
	char msg[256];
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(sums) / sizeof(sums[0]); k++) {
		msg[0] = '\0';
		assert_int_equal(record_decode_summary(sums[k], strlen(sums[k]), &s, msg,
						       sizeof(msg)), -EPROTO);
		assert_null(s);
		assert_true(msg[0]);
	}
	for (k = 0; k < sizeof(dets) / sizeof(dets[0]); k++) {
		msg[0] = '\0';
		assert_int_equal(record_decode_detail(dets[k], strlen(dets[k]), &d, msg,
						      sizeof(msg)), -EPROTO);
		assert_null(d);
		assert_true(msg[0]);
	}
}

/* Each directory carries its error diagnostics (not its warnings), as
 * diag_format writes them, the first NODE_RECORD_ERRORS_MAX listed and all
 * counted; the summary says why the latest load failed. */
static void test_node_record__a_directory_carries_its_error_diagnostics(void **state)
{
	static const uint8_t specs[SHA256_LEN] = { 1 };
	struct node a = { .env = { "NODE_RANK=3" } };
	struct node_record_kvs kvs;
	struct node_summary *s = NULL;
	struct diag_list *dl;
	char msg[256];
	size_t k;

	(void)state;
	node_resolve(&a);
	dl = &a.r->dirs[0]->diags;
	assert_int_equal(diag_add(dl, DC_RULE_WARNING, "w.yaml", 1, 1, "only a warning"), 0);
	for (k = 0; k < NODE_RECORD_ERRORS_MAX + 2; k++)
		assert_int_equal(diag_add(dl, DC_RULE_ERROR, "e.yaml", (unsigned)k + 1, 2,
					  "error number %zu", k), 0);
	{
		struct node_record_in in = {
			.run_key = "/pe/runs/r1", .node = "n3", .specs_digest = specs,
			.revision = 1, .when_ms = 2, .load_error = "exp.yaml:3:1: error: bad",
			.dirs = (const struct snapshot *const *)a.r->dirs, .ndirs = a.r->ndirs,
		};
		assert_int_equal(node_record_build(&in, &kvs, msg, sizeof(msg)), 0);
	}
	assert_int_equal(record_decode_summary(kvs.v[kvs.n - 1].value, kvs.v[kvs.n - 1].value_len,
					       &s, msg, sizeof(msg)), 0);
	assert_string_equal(s->load_error, "exp.yaml:3:1: error: bad");
	assert_null(s->unpublishable);
	for (k = 0; k < s->ndirs; k++) {
		const struct node_dir_sum *d = &s->dirs[k];

		if (strcmp(d->backend, a.r->dirs[0]->backend) || strcmp(d->arch, a.r->dirs[0]->arch)) {
			assert_int_equal(d->nerrors, 0);
			assert_int_equal(d->nlisted, 0);
			continue;
		}
		assert_int_equal(d->nerrors, NODE_RECORD_ERRORS_MAX + 2);
		assert_int_equal(d->nlisted, NODE_RECORD_ERRORS_MAX);
		assert_string_equal(d->errors[0], "e.yaml:1:2: error: error number 0 [PE592]");
		assert_string_equal(d->errors[NODE_RECORD_ERRORS_MAX - 1],
				    "e.yaml:16:2: error: error number 15 [PE592]");
	}
	node_summary_free(s);
	node_record_kvs_free(&kvs);
	node_release(&a);
}

/* A record that cannot be built is replaced by a summary saying why,
 * with no directory: a reader can tell it from a current one. */
static void test_node_record__an_unpublishable_record_says_why(void **state)
{
	struct node_record_in in = { .run_key = "/pe/runs/r1", .node = "n3", .revision = 7 };
	struct node_record_kvs kvs;
	struct node_summary *s = NULL;
	char msg[256];

	(void)state;
	assert_int_equal(node_record_unpublishable(&in, "app: too many variables", &kvs), 0);
	assert_int_equal(kvs.n, 1);
	assert_string_equal(kvs.v[0].key, "/pe/runs/r1/nodes/n3");
	assert_int_equal(record_decode_summary(kvs.v[0].value, kvs.v[0].value_len, &s, msg,
					       sizeof(msg)), 0);
	assert_string_equal(s->unpublishable, "app: too many variables");
	assert_int_equal(s->ndirs, 0);
	assert_int_equal(s->revision, 7);
	node_summary_free(s);
	node_record_kvs_free(&kvs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_record__round_trip),
		cmocka_unit_test(test_node_record__behind_round_trips_and_is_absent_otherwise),
		cmocka_unit_test(test_node_record__bytes_that_are_not_utf8_round_trip),
		cmocka_unit_test(test_node_record__a_long_value_is_its_hash_only),
		cmocka_unit_test(test_node_record__a_detail_too_big_drops_its_values),
		cmocka_unit_test(test_node_record__bad_names_and_run_keys_are_refused),
		cmocka_unit_test(test_node_record__malformed_records_are_refused),
		cmocka_unit_test(test_node_record__a_directory_carries_its_error_diagnostics),
		cmocka_unit_test(test_node_record__an_unpublishable_record_says_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
