/* node_digest: the digest a node publishes for `verify` leaves out what
 * differs per node by design (scope: node) and never depends on a
 * secret's value, over the fixtures of tests/fixtures/node/:
 *
 *   specs/base.yaml  runner: NODE_RANK and NIC scope node, HF_TOKEN secret,
 *                    PARAM a parameter (export: false)
 *   specs/app.yaml   backend app (XLA_FLAGS a flag list), arches a1 a2
 *   specs/solo.yaml  backend solo, without the runner base
 *   image-a.env image-b.env   --inherit files differing in XLA_FLAGS */
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
#include "resolve.h"
#include "view.h"

static const struct snapshot *node_resolve(struct node *n, const char *backend,
					   const char *arch)
{
	node_load(n);
	assert_int_equal(resolve_dir(n->w, &n->ov, backend, arch, &n->s), 0);
	return n->s;
}

static void digest_of(struct node *n, const char *backend, const char *arch,
		      uint8_t out[SHA256_LEN])
{
	assert_int_equal(node_digest(node_resolve(n, backend, arch), out), 0);
}

/* The digest view of a snapshot (whole environ), to show that it differs
 * where the node digest does not. */
static char *environ_digest(const struct snapshot *s)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(view_render(s, VIEW_DIGEST, &sb), 0);
	return sb_detach(&sb, NULL);
}

static const struct snap_var *var(const struct snapshot *s, const char *name)
{
	const struct snap_var *v = snapshot_find(s, name, strlen(name));

	assert_non_null(v);
	return v;
}

/* ---- tests ----------------------------------------------------------- */

static void test_node_digest__nodes_differing_only_in_node_rank_are_equal(void **state)
{
	struct node a = { .env = { "NODE_RANK=0" } }, b = { .env = { "NODE_RANK=7" } };
	uint8_t da[SHA256_LEN], db[SHA256_LEN];
	char *va, *vb;

	(void)state;
	digest_of(&a, "app", "a1", da);
	digest_of(&b, "app", "a1", db);
	assert_memory_equal(da, db, SHA256_LEN);
	/* NODE_RANK is exported, node-scoped, and the environ digest sees it. */
	assert_true(var(b.s, "NODE_RANK")->exported);
	assert_true(var(b.s, "NODE_RANK")->node);
	assert_false(node_digest_counts(var(b.s, "NODE_RANK")));
	va = environ_digest(a.s);
	vb = environ_digest(b.s);
	assert_string_not_equal(va, vb);
	free(va);
	free(vb);
	node_release(&a);
	node_release(&b);
}

static void test_node_digest__a_node_scoped_list_entry_is_left_out(void **state)
{
	struct node a = { .env = { "NIC=eth0" } }, b = { .env = { "NIC=ens1f0" } };
	uint8_t da[SHA256_LEN], db[SHA256_LEN];

	(void)state;
	digest_of(&a, "app", "a2", da);
	digest_of(&b, "app", "a2", db);
	assert_memory_equal(da, db, SHA256_LEN);
	node_release(&a);
	node_release(&b);
}

static void test_node_digest__differing_image_xla_flags_differ(void **state)
{
	struct node a = { .inherit = "image-a.env", .env = { "NODE_RANK=0" } };
	struct node b = { .inherit = "image-b.env", .env = { "NODE_RANK=1" } };
	uint8_t da[SHA256_LEN], db[SHA256_LEN];

	(void)state;
	digest_of(&a, "app", "a1", da);
	digest_of(&b, "app", "a1", db);
	assert_memory_not_equal(da, db, SHA256_LEN);
	assert_string_equal(var(a.s, "XLA_FLAGS")->value, "--xla_image=1 --xla_managed=1");
	assert_true(node_digest_counts(var(a.s, "XLA_FLAGS")));
	node_release(&a);
	node_release(&b);
}

/* Any exported value counts: an override, a value of another layer. */
static void test_node_digest__an_override_changes_the_digest(void **state)
{
	struct node a = { 0 }, b = { 0 };
	uint8_t da[SHA256_LEN], db[SHA256_LEN];

	(void)state;
	assert_int_equal(override_set_put(&b.ov, "app", "a1", "PLAIN", "other", 5), 0);
	digest_of(&a, "app", "a1", da);
	digest_of(&b, "app", "a1", db);
	assert_memory_not_equal(da, db, SHA256_LEN);
	node_release(&a);
	node_release(&b);
}

/* A secret counts by name and by being set, never by its value: verify
 * cannot see two nodes whose tokens differ (docs/SYNC.md says so). */
static void test_node_digest__a_secret_counts_by_name_never_by_value(void **state)
{
	struct node a = { .host = { "HF_TOKEN=hf_aaaaaaaa" } };
	struct node b = { .host = { "HF_TOKEN=hf_bbbbbbbb" } };
	struct node none = { 0 };
	uint8_t da[SHA256_LEN], db[SHA256_LEN], dn[SHA256_LEN];

	(void)state;
	digest_of(&a, "app", "a1", da);
	digest_of(&b, "app", "a1", db);
	digest_of(&none, "app", "a1", dn);
	assert_true(var(a.s, "HF_TOKEN")->secret);
	assert_true(node_digest_counts(var(a.s, "HF_TOKEN")));
	assert_memory_equal(da, db, SHA256_LEN);
	/* set on one node and not on the other: that is seen */
	assert_memory_not_equal(da, dn, SHA256_LEN);
	node_release(&a);
	node_release(&b);
	node_release(&none);
}

/* The runner's scope node holds in a backend without the runner base,
 * as its secrets do: --env NODE_RANK=i reaches every directory. */
static void test_node_digest__runner_scope_holds_without_the_runner(void **state)
{
	struct node a = { .env = { "NODE_RANK=0" } }, b = { .env = { "NODE_RANK=5" } };
	uint8_t da[SHA256_LEN], db[SHA256_LEN];

	(void)state;
	digest_of(&a, "solo", "s1", da);
	digest_of(&b, "solo", "s1", db);
	assert_true(var(b.s, "NODE_RANK")->node);
	assert_memory_equal(da, db, SHA256_LEN);
	node_release(&a);
	node_release(&b);
}

/* The format of node_digest.h, computed here by hand from the values:
 * a reader (verify) recomputes it from a record in the same way. */
static void test_node_digest__is_the_documented_format(void **state)
{
	struct node a = { .env = { "NODE_RANK=2" }, .host = { "HF_TOKEN=x" } };
	struct sha256_stream h, mine;
	uint8_t d[SHA256_LEN], want[SHA256_LEN], vh[SHA256_LEN];
	const struct snapshot *s;
	static const char *const counted[] = { "APP_ONLY", "HF_TOKEN", "MASTER_ADDR",
					       "PLAIN", "XLA_FLAGS" };
	size_t k, nc = 0;

	(void)state;
	s = node_resolve(&a, "app", "a1");
	assert_int_equal(node_digest(s, d), 0);
	sha256_stream_init(&mine);
	sha256_stream_add(&mine, "primus-envfs node-digest 1\n", 27);
	node_digest_init(&h);
	for (k = 0; k < s->nvars; k++) {
		const struct snap_var *v = &s->vars[k];

		if (!node_digest_counts(v))
			continue;
		assert_true(nc < 5);
		assert_string_equal(v->name, counted[nc++]);
		sha256_stream_add(&mine, v->name, v->name_len + 1);
		if (v->secret) {
			sha256_stream_add(&mine, "s", 1);
			node_digest_add(&h, v->name, v->name_len, NULL);
		} else {
			sha256(v->value, v->value_len, vh);
			sha256_stream_add(&mine, "v", 1);
			sha256_stream_add(&mine, vh, SHA256_LEN);
			node_digest_add(&h, v->name, v->name_len, vh);
		}
	}
	assert_int_equal(nc, 5);
	sha256_stream_end(&mine, want);
	assert_memory_equal(d, want, SHA256_LEN);
	node_digest_end(&h, want);
	assert_memory_equal(d, want, SHA256_LEN);
	assert_int_equal(node_digest(NULL, d), -EINVAL);
	node_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_digest__nodes_differing_only_in_node_rank_are_equal),
		cmocka_unit_test(test_node_digest__a_node_scoped_list_entry_is_left_out),
		cmocka_unit_test(test_node_digest__differing_image_xla_flags_differ),
		cmocka_unit_test(test_node_digest__an_override_changes_the_digest),
		cmocka_unit_test(test_node_digest__a_secret_counts_by_name_never_by_value),
		cmocka_unit_test(test_node_digest__runner_scope_holds_without_the_runner),
		cmocka_unit_test(test_node_digest__is_the_documented_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
