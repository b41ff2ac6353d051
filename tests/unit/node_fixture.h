/* node_fixture: one node of a run for the tests of the node digest and
 * the node record (test_node_digest.c, test_node_record.c), over the
 * fixtures of tests/fixtures/node/ (specs/, image-a.env, image-b.env):
 *
 *   struct node a = { .env = { "NODE_RANK=3" }, .host = { "HF_TOKEN=x" } };
 *   node_load(&a);                 a.w: the world of those inputs
 *   ... resolve_dir(a.w, &a.ov, ...) into a.s, or resolve_all into a.r
 *   node_release(&a);
 *
 * Failures are cmocka assertions. */
#ifndef ENVFS_TEST_NODE_FIXTURE_H
#define ENVFS_TEST_NODE_FIXTURE_H

#include "resolve.h"

#define NODE_MAXN 8

struct node {
	const char *inherit;            /* relative to fixtures/node, or NULL */
	const char *env[NODE_MAXN];     /* --env NAME=VALUE, NULL-ended */
	char *host[NODE_MAXN];          /* the daemon's environment */
	struct override_set ov;
	char *paths[2];
	struct world *w;
	struct snapshot *s;             /* freed by node_release, if set */
	struct resolution *r;           /* idem */
};

/* The path of rel under fixtures/node (caller-owned, free()). */
char *node_fixture(const char *rel);
/* Loads n's inputs into n->w. */
void node_load(struct node *n);
/* Frees what n holds and zeroes it. */
void node_release(struct node *n);

#endif
