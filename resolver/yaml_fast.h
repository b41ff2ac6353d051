/* yaml_fast: a parser for the strict YAML subset the shipped specs, the
 * experiment configs and the state file use, straight from the buffer into
 * the builder. Private to the YAML loaders and their tests.
 *
 * The contract that makes it safe: on 0 the tree is exactly the one the
 * libyaml path builds from the same bytes (kinds, bytes, styles, places),
 * and any limit error it leaves deferred in the builder is the one libyaml
 * would report; on anything it does not handle with certainty it returns
 * YFAST_UNSUPPORTED, and the caller throws the partial tree away and runs
 * libyaml from scratch. It never reports a syntax error itself. */
#ifndef ENVFS_YAML_FAST_H
#define ENVFS_YAML_FAST_H

#include <stddef.h>

#include "yaml_build.h"
#include "yaml_tree.h"

/* Positive, so it cannot be mistaken for a negative errno. */
#define YFAST_UNSUPPORTED 1

/* Returns 0, a negative errno, or YFAST_UNSUPPORTED. b is in deferred
 * mode (yb_init(..., true)). */
int yfast_parse(struct ybuilder *b, const char *buf, size_t len);

enum ydoc_mode {
	YDOC_AUTO,        /* the fast path, libyaml when it gives up */
	YDOC_LIBYAML,     /* libyaml only */
	YDOC_FAST,        /* the fast path only: YFAST_UNSUPPORTED, no doc */
};

/* ydoc_load_buffer with the parser chosen (tests compare the paths). */
int ydoc_load_buffer_mode(const char *name, const char *buf, size_t len,
			  enum ydoc_mode mode, struct ydoc **out,
			  struct diag_list *diags);

#endif
