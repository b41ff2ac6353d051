/* The shipped specs (the specs directory, ENVFS_SPECS): they load without a
 * single diagnostic, name one file per backend after the backend, resolve
 * cleanly in every directory, declare secrets without a value, and mark
 * what differs per node by design (scope: node) so that two nodes of one
 * run have equal node digests. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "node_digest.h"
#include "resolve.h"

static const char *specs_dir(void)
{
	const char *d = getenv("ENVFS_SPECS");

	assert_non_null(d);
	return d;
}

static void print_diags(const struct diag_list *d)
{
	struct strbuf sb = STRBUF_INIT;
	size_t k;

	for (k = 0; k < d->n; k++) {
		sb_reset(&sb);
		diag_format(&d->v[k], &sb);
		fprintf(stderr, "  %s\n", sb_str(&sb));
	}
	sb_release(&sb);
}

static void test_specs_shipped__load_without_a_diagnostic(void **state)
{
	static const char *const backends[] = { "maxdiffusion", "maxtext", "megatron",
						"torch_fl", "torchtitan" };
	struct diag_list d = DIAG_LIST_INIT;
	struct spec_set *set = NULL;
	struct strbuf path = STRBUF_INIT;
	size_t k;

	(void)state;
	assert_int_equal(spec_set_load_dir(specs_dir(), NULL, 0, &set, &d), 0);
	if (d.n)
		print_diags(&d);
	assert_int_equal(d.n, 0);
	assert_non_null(set->runner);
	assert_true(set->runner->is_runner);
	assert_true(set->ncatalog > 0);
	assert_int_equal(set->nbackends, sizeof(backends) / sizeof(backends[0]));
	for (k = 0; k < set->nbackends; k++) {
		assert_string_equal(set->backends[k]->backend, backends[k]);
		/* resolve -b reads <backend>.yaml only: the name must match */
		sb_reset(&path);
		sb_addf(&path, "%s/%s.yaml", specs_dir(), backends[k]);
		assert_int_equal(access(sb_str(&path), R_OK), 0);
	}
	spec_set_free(set);
	sb_release(&path);
	diag_list_release(&d);
}

static void test_specs_shipped__every_directory_resolves_cleanly(void **state)
{
	struct envfs_inputs in = { .specs_dir = specs_dir() };
	struct world *w = NULL;
	struct resolution *r = NULL;
	size_t k, sev[3] = { 0 };

	(void)state;
	assert_int_equal(world_load(&in, &w), 0);
	assert_int_equal(resolve_all(w, NULL, &r), 0);
	/* 4 runner backends x 2 arches, and torch_fl's 9 */
	assert_int_equal(r->ndirs, 17);
	for (k = 0; k < r->ndirs; k++)
		assert_true(r->dirs[k]->nset > 0);
	for (k = 0; k < r->diags.n; k++)
		sev[r->diags.v[k].sev]++;
	if (sev[DIAG_ERROR] || sev[DIAG_WARNING])
		print_diags(&r->diags);
	assert_int_equal(sev[DIAG_ERROR], 0);
	assert_int_equal(sev[DIAG_WARNING], 0);
	resolution_free(r);
	world_free(w);
}

/* A secret shipped with a value would be everyone's secret. */
static void test_specs_shipped__secrets_are_declarations(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct spec_set *set = NULL;
	size_t k, j, nsecret = 0;

	(void)state;
	assert_int_equal(spec_set_load_dir(specs_dir(), NULL, 0, &set, &d), 0);
	for (k = 0; k <= set->nbackends; k++) {
		const struct spec *s = k < set->nbackends ? set->backends[k] : set->runner;

		for (j = 0; j < s->nvars; j++) {
			if (!s->vars[j].secret)
				continue;
			nsecret++;
			if (s->vars[j].value)
				fail_msg("%s: secret %s ships a value", s->file, s->vars[j].name);
		}
	}
	assert_true(nsecret >= 3);
	spec_set_free(set);
	diag_list_release(&d);
}

/* What differs per node by design is marked scope: node, every detected
 * value among it; what is the same on every node of a run (the
 * rendezvous, the sizes) is not, so verify still compares it. */
static void test_specs_shipped__per_node_names_are_node_scoped(void **state)
{
	static const char *const node[] = { "NODE_RANK", "RANK", "LOCAL_RANK", "HOSTNAME",
		"SLURM_NODEID", "SLURM_PROCID", "NCCL_IB_HCA", "IP_INTERFACE",
		"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME" };
	static const char *const shared[] = { "MASTER_ADDR", "MASTER_PORT", "NNODES",
		"GPUS_PER_NODE", "HIP_VISIBLE_DEVICES", "JAX_COORDINATOR_IP", "XLA_FLAGS",
		"NCCL_IB_GID_INDEX", "PRIMUS_PATH", "PRIMUS_IMPORT_ROOT" };
	struct envfs_inputs in = { .specs_dir = specs_dir() };
	struct world *w = NULL;
	size_t k, j;

	(void)state;
	assert_int_equal(world_load(&in, &w), 0);
	for (k = 0; k < sizeof(node) / sizeof(node[0]); k++)
		if (!world_node_scoped(w, node[k]))
			fail_msg("%s is not scope: node", node[k]);
	for (k = 0; k < sizeof(shared) / sizeof(shared[0]); k++)
		if (world_node_scoped(w, shared[k]))
			fail_msg("%s is scope: node, but is the same on every node", shared[k]);
	for (k = 0; k <= w->specs->nbackends; k++) {
		const struct spec *s = k < w->specs->nbackends ? w->specs->backends[k] :
				       w->specs->runner;

		for (j = 0; j < s->nvars; j++)
			/* Node detection; where Primus is (detect: primus_*)
			 * belongs to the container, the same on every node. */
			if (s->vars[j].detected &&
			    !world_node_scoped(w, s->vars[j].name))
				fail_msg("%s: detected %s is not scope: node", s->file,
					 s->vars[j].name);
	}
	world_free(w);
}

/* Two nodes of one run: another NODE_RANK, host name and rank from the
 * launcher, another node's network (IP_INTERFACE and the socket
 * interfaces derived from it): equal node digests in all 17 directories,
 * while the environ digest of each differs. */
static void test_specs_shipped__two_nodes_of_a_run_have_equal_node_digests(void **state)
{
	const char *fx = getenv("ENVFS_FIXTURES");
	static const char *const env0[] = { "NODE_RANK=0", "NNODES=2", "HOSTNAME=n0",
					    "LOCAL_RANK=0" };
	static const char *const env1[] = { "NODE_RANK=1", "NNODES=2", "HOSTNAME=n1",
					    "LOCAL_RANK=0" };
	struct strbuf h0 = STRBUF_INIT, h1 = STRBUF_INIT;
	struct envfs_inputs in0 = { .specs_dir = specs_dir(), .env = env0, .nenv = 4 };
	struct envfs_inputs in1 = { .specs_dir = specs_dir(), .env = env1, .nenv = 4 };
	struct world *w0 = NULL, *w1 = NULL;
	struct resolution *r0 = NULL, *r1 = NULL;
	uint8_t d0[SHA256_LEN], d1[SHA256_LEN];
	size_t k;

	(void)state;
	assert_non_null(fx);
	assert_int_equal(sb_addf(&h0, "%s/host/ipregex", fx), 0);
	assert_int_equal(sb_addf(&h1, "%s/host/ipv6only", fx), 0);
	in0.host_root = sb_str(&h0);
	in1.host_root = sb_str(&h1);
	assert_int_equal(world_load(&in0, &w0), 0);
	assert_int_equal(world_load(&in1, &w1), 0);
	assert_int_equal(resolve_all(w0, NULL, &r0), 0);
	assert_int_equal(resolve_all(w1, NULL, &r1), 0);
	assert_int_equal(r0->ndirs, 17);
	assert_int_equal(r1->ndirs, 17);
	for (k = 0; k < r0->ndirs; k++) {
		const struct snap_var *a, *b;

		assert_int_equal(node_digest(r0->dirs[k], d0), 0);
		assert_int_equal(node_digest(r1->dirs[k], d1), 0);
		if (memcmp(d0, d1, SHA256_LEN))
			fail_msg("%s/%s: node digests differ", r0->dirs[k]->backend,
				 r0->dirs[k]->arch);
		a = snapshot_find(r0->dirs[k], "NODE_RANK", 9);
		b = snapshot_find(r1->dirs[k], "NODE_RANK", 9);
		assert_true(a && b && a->exported && b->exported);
		assert_string_not_equal(a->value, b->value);
	}
	/* the probes did differ where the runner detects */
	assert_string_not_equal(snapshot_find(r0->dirs[0], "IP_INTERFACE", 12)->value,
				snapshot_find(r1->dirs[0], "IP_INTERFACE", 12)->value);
	resolution_free(r0);
	resolution_free(r1);
	world_free(w0);
	world_free(w1);
	sb_release(&h0);
	sb_release(&h1);
}

/* resolve -b BACKEND reads one backend's file: the same spec as when
 * every file is read. */
static void test_specs_shipped__one_backend_load_is_the_full_load(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct spec_set *all = NULL, *one = NULL;
	const struct spec *a, *o;
	size_t k;

	(void)state;
	assert_int_equal(spec_set_load_dir(specs_dir(), NULL, 0, &all, &d), 0);
	assert_int_equal(spec_set_load_dir(specs_dir(), "maxtext", 0, &one, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(one->nbackends, 1);
	a = spec_set_backend(all, "maxtext");
	o = spec_set_backend(one, "maxtext");
	assert_non_null(a);
	assert_non_null(o);
	assert_int_equal(a->nvars, o->nvars);
	for (k = 0; k < a->nvars; k++) {
		assert_string_equal(a->vars[k].name, o->vars[k].name);
		assert_int_equal(a->vars[k].line, o->vars[k].line);
	}
	assert_int_equal(all->ncatalog, one->ncatalog);
	spec_set_free(all);
	spec_set_free(one);
	diag_list_release(&d);
}

/* The catalog's documentation is a file of its own, catalog.docs.yaml,
 * which documents every entry: a load that leaves it out (resolve of a view
 * that shows no note) loses the notes and nothing else. */
static void test_specs_shipped__catalog_docs_are_their_own_file(void **state)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct spec_set *all = NULL, *bare = NULL;
	const struct catalog_entry *port;
	size_t k;

	(void)state;
	assert_int_equal(spec_set_load_dir(specs_dir(), NULL, 0, &all, &d), 0);
	assert_int_equal(spec_set_load_dir(specs_dir(), "maxtext", SPEC_LOAD_NO_DOCS, &bare, &d), 0);
	assert_int_equal(d.n, 0);
	assert_non_null(all->docs_text);
	assert_null(bare->docs_text);
	assert_int_equal(all->ncatalog, bare->ncatalog);
	for (k = 0; k < all->ncatalog; k++) {
		const struct catalog_entry *a = &all->catalog[k], *b = &bare->catalog[k];

		assert_string_equal(a->name, b->name);
		assert_true(a->docs_line > 0);
		assert_non_null(a->description);
		assert_null(b->description);
		assert_null(b->where_set);
		assert_null(b->where_used);
		assert_int_equal(a->type.type, b->type.type);
		assert_int_equal(a->type.has_min, b->type.has_min);
		assert_int_equal(a->type.min, b->type.min);
		assert_int_equal(a->type.has_max, b->type.has_max);
		assert_int_equal(a->type.max, b->type.max);
		assert_int_equal(a->type.nvalues, b->type.nvalues);
		assert_int_equal(a->type.invalid, b->type.invalid);
		if (a->def)
			assert_string_equal(a->def, b->def);
		else
			assert_null(b->def);
	}
	port = spec_set_catalog(all, "MASTER_PORT");
	assert_non_null(port);
	assert_string_equal(port->description,
			    "TCP port for the store backing torch.distributed. Default 1234 for "
			    "direct runs; 29500 in some Python defaults.");
	assert_string_equal(port->where_set, "Config / CLI / user");
	spec_set_free(all);
	spec_set_free(bare);
	diag_list_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_specs_shipped__load_without_a_diagnostic),
		cmocka_unit_test(test_specs_shipped__every_directory_resolves_cleanly),
		cmocka_unit_test(test_specs_shipped__secrets_are_declarations),
		cmocka_unit_test(test_specs_shipped__per_node_names_are_node_scoped),
		cmocka_unit_test(test_specs_shipped__two_nodes_of_a_run_have_equal_node_digests),
		cmocka_unit_test(test_specs_shipped__one_backend_load_is_the_full_load),
		cmocka_unit_test(test_specs_shipped__catalog_docs_are_their_own_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
