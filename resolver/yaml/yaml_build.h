/* yaml_build: turns libyaml's parse events into a ydoc's arena tree,
 * enforcing the limits of yaml_tree.h on the event that crosses each one.
 * Private to yaml_tree.c.
 *
 * Places are 1-based. Every call returns 0 or a negative errno; -EINVAL
 * means a limit error was added to diags. */
#ifndef ENVFS_YAML_BUILD_H
#define ENVFS_YAML_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "ynode.h"

struct diag_list;

struct yb_frame {
	struct ynode *node;
	char *anchor;             /* registered only when the node ends */
	size_t first;             /* its children start here in kids */
	size_t count_start;       /* expanded count when the node opened */
	size_t height;            /* containers below, aliases expanded */
};

struct yb_anchor {
	char *name;
	struct ynode *node;
	size_t weight;            /* expanded nodes of the subtree */
	size_t height;            /* containers on its longest path */
};

struct ybuilder {
	struct ydoc *doc;
	struct diag_list *diags;
	struct yb_frame *stack;
	size_t depth, capstack;
	/* Children of the open containers, innermost last; a mapping's are
	 * key, value, key, value. Copied into the arena when it ends. */
	struct ynode **kids;
	size_t nkids, capkids;
	struct yb_anchor *anchors;
	size_t nanchors, capanchors;
	size_t naliases;
	size_t count;             /* expanded nodes so far */
	size_t max_nodes;         /* YT_MAX_NODES, or YDOC_LARGE's */
	bool doc_done;            /* the first document has ended */
	bool nul_ok;              /* YDOC_NUL_OK */
};

void yb_init(struct ybuilder *b, struct ydoc *doc, struct diag_list *diags);
/* Frees the builder's scratch state (not the doc). */
void yb_release(struct ybuilder *b);

/* tag is libyaml's full form or NULL; anchor may be NULL. */
int yb_scalar(struct ybuilder *b, unsigned line, unsigned col,
	      const char *tag, const char *anchor, const char *s, size_t len,
	      enum yscalar_style style);
int yb_start(struct ybuilder *b, enum ynode_kind kind, unsigned line,
	     unsigned col, const char *tag, const char *anchor);
int yb_end(struct ybuilder *b);
int yb_alias(struct ybuilder *b, unsigned line, unsigned col,
	     const char *name);

#endif
