/* One node of a run for the node tests; see node_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "node_fixture.h"

char *node_fixture(const char *rel)
{
	const char *dir = getenv("ENVFS_FIXTURES");
	struct strbuf sb = STRBUF_INIT;

	assert_non_null(dir);
	assert_int_equal(sb_addf(&sb, "%s/node/%s", dir, rel), 0);
	return sb_detach(&sb, NULL);
}

void node_load(struct node *n)
{
	struct envfs_inputs in = { 0 };
	const char *inh[1];

	in.specs_dir = n->paths[0] = node_fixture("specs");
	if (n->inherit) {
		inh[0] = n->paths[1] = node_fixture(n->inherit);
		in.inherit = inh;
		in.ninherit = 1;
	}
	in.env = n->env;
	while (in.nenv < NODE_MAXN && n->env[in.nenv])
		in.nenv++;
	in.host_env = n->host;
	assert_int_equal(world_load(&in, &n->w), 0);
}

void node_release(struct node *n)
{
	snapshot_unref(n->s);
	resolution_free(n->r);
	world_free(n->w);
	override_set_release(&n->ov);
	free(n->paths[0]);
	free(n->paths[1]);
	memset(n, 0, sizeof(*n));
}
