/* libFuzzer harness: the bounded YAML loader (yaml_tree.c over libyaml).
 * Whatever the bytes, the load ends with a tree inside the limits of
 * yaml_tree.h or with an error diagnostic that has a place, and walking
 * the tree (aliases included) stays inside YT_MAX_DEPTH.
 *
 *   FUZZ_ONLY=yaml tests/fuzz/run.sh 60 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "yaml_tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Counts the nodes below n, aliases expanded; aborts past the limits the
 * loader promises, which is a finding. */
static size_t walk(const struct ynode *n, unsigned depth)
{
	size_t count = 1, i;

	if (depth > YT_MAX_DEPTH + 1)
		abort();
	if (n->kind == YN_SCALAR) {
		if (strlen(n->str) != n->len)
			abort();
		return 1;
	}
	if (n->kind == YN_SEQ)
		for (i = 0; i < n->nitems; i++)
			count += walk(n->items[i], depth + 1);
	else
		for (i = 0; i < n->npairs; i++)
			count += walk(n->pairs[i].key, depth + 1) +
				 walk(n->pairs[i].val, depth + 1);
	if (count > YT_MAX_NODES)
		abort();
	return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct ydoc *doc = NULL;
	size_t i;
	int err;

	err = ydoc_load_buffer("fuzz.yaml", (const char *)data, size, &doc, &dl);
	if (err == 0 && doc->root)
		walk(doc->root, 0);
	if (err == -EINVAL) {
		/* A refused input always says where. */
		if (!dl.n)
			abort();
		for (i = 0; i < dl.n; i++)
			if (dl.v[i].sev == DIAG_ERROR && (!dl.v[i].file || !dl.v[i].line))
				abort();
	}
	fuzz_format_diags(&dl);
	ydoc_free(doc);
	diag_list_release(&dl);
	return 0;
}
