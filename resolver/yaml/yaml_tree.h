/* yaml_tree: a bounded YAML loader (libyaml events -> node tree with places).
 *
 * Every reader of YAML (specs, config, state) goes through here so the
 * limits are enforced once: file size, nesting depth, aliases, expanded
 * nodes, NUL bytes in scalars. Aliases share the anchored node (the tree is
 * a DAG); an alias to an anchor still open (`&a [*a]`) is an error. */
#ifndef ENVFS_YAML_TREE_H
#define ENVFS_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "diag.h"
#include "sha256.h"
#include "ynode.h"


/* Loads the first document of path. On a YAML or limit error returns
 * -EINVAL and adds an error diagnostic with file:line:col; on an I/O error
 * returns the negative errno and adds a diagnostic. *out is caller-owned,
 * freed with ydoc_free(). */
int ydoc_load_file(const char *path, struct ydoc **out, struct diag_list *diags);
/* The same over a buffer; name is used in diagnostics. */
int ydoc_load_buffer(const char *name, const char *buf, size_t len,
		     struct ydoc **out, struct diag_list *diags);

/* Flags of the *_as loaders. */
enum {
	/* A scalar may hold NUL bytes ("\0" escapes): its len is exact and
	 * str is still NUL-terminated at len, but yscalar_is() and other
	 * strcmp()-based readers see only up to the first NUL. For the
	 * experiment config, whose loader (PyYAML) accepts them. */
	YDOC_NUL_OK = 1,
	/* The larger bounds (YT_MAX_LARGE_*), for the --state file, which
	 * holds whatever the run's nodes wrote. */
	YDOC_LARGE = 2,
	/* Keep the bytes read in ydoc.source. */
	YDOC_KEEP_SOURCE = 4,
};
int ydoc_load_file_as(const char *path, unsigned flags, struct ydoc **out,
		      struct diag_list *diags);
/* The same, and the SHA-256 of the bytes read into *digest (set whenever
 * the file was read, even when it does not parse). */
int ydoc_load_file_digest(const char *path, unsigned flags, struct ydoc **out,
			  struct file_digest *digest, struct diag_list *diags);
int ydoc_load_buffer_as(const char *name, const char *buf, size_t len, unsigned flags,
			struct ydoc **out, struct diag_list *diags);
void ydoc_free(struct ydoc *doc);
/* Hands the scalars' text over to the caller (arena_free()); every str of
 * the tree stays valid after ydoc_free(). Nothing may be loaded into doc
 * afterwards. */
struct arena *ydoc_take_text(struct ydoc *doc);
/* The bytes of path, at most YT_MAX_FILE_SIZE of them (a growing file
 * stays bounded), NUL-terminated: -EFBIG for a larger file, another
 * negative errno when it cannot be read. *buf is caller-owned (free()). */
int yfile_read(const char *path, char **buf, size_t *len);

/* Last value for a scalar key in a mapping, or NULL. Borrowed. */
struct ynode *ymap_get(const struct ynode *map, const char *key);
/* True when n is a scalar equal to s. Inline: schema readers call it for
 * every known key against every key, and the first byte settles most of
 * those misses without a call. A scalar's text is NUL-terminated with no
 * NUL inside, so strcmp is exact. */
static inline bool yscalar_is(const struct ynode *n, const char *s)
{
	return n && n->kind == YN_SCALAR && n->str[0] == s[0] &&
	       strcmp(n->str, s) == 0;
}
const char *ynode_kind_name(enum ynode_kind k);

#endif
