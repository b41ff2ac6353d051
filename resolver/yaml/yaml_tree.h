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

#define YT_MAX_FILE_SIZE (1u << 20)   /* 1 MiB */
#define YT_MAX_DEPTH 128
#define YT_MAX_ALIASES 4096
#define YT_MAX_NODES 200000           /* expanded: aliases count their subtree */
/* YDOC_LARGE's bounds: a document a program writes (the --state file),
 * not one a person does. */
#define YT_MAX_LARGE_FILE_SIZE (64u << 20)   /* 64 MiB */
#define YT_MAX_LARGE_NODES (64u * YT_MAX_NODES)

enum ynode_kind { YN_SCALAR, YN_SEQ, YN_MAP };

enum yscalar_style {
	YS_PLAIN,         /* unquoted: subject to YAML 1.1 typing */
	YS_SINGLE,
	YS_DOUBLE,
	YS_LITERAL,       /* | */
	YS_FOLDED,        /* > */
};

struct ynode;

struct ypair {
	struct ynode *key;
	struct ynode *val;
};

struct ynode {
	enum ynode_kind kind;
	enum yscalar_style style; /* YN_SCALAR only */
	unsigned line, col;       /* 1-based place of the node's start */
	char *tag;                /* explicit tag ("!!str"), or NULL */
	/* One member per kind, so read only the one kind says: a node is 40
	 * bytes instead of 80, and a 10,000-variable spec is ~70,000 nodes,
	 * all alive at a mount's peak memory (docs/PERFORMANCE.md). */
	union {
		struct {          /* YN_SCALAR: len bytes, NUL-terminated, none inside */
			char *str;
			size_t len;
		};
		struct {          /* YN_SEQ */
			struct ynode **items;
			size_t nitems;
		};
		struct {          /* YN_MAP: pairs in document order, repeated keys kept */
			struct ypair *pairs;
			size_t npairs;
		};
	};
};

struct arena;

struct ydoc {
	char *file;               /* name used in diagnostics */
	struct ynode *root;       /* NULL for an empty document */
	bool more_documents;      /* a second document follows the first */
	/* Owns every node, tag and array of the tree, so a document costs a
	 * few allocations and is freed at once. */
	struct arena *arena;
	/* Owns the scalars' text, apart from the nodes, so a reader that keeps
	 * only strings can take it over (ydoc_take_text) instead of copying
	 * each one, and free the nodes. */
	struct arena *text;
	/* With YDOC_KEEP_SOURCE: the bytes the document was read from (in
	 * the arena), for what the tree does not hold, such as comments. */
	const char *source;
	size_t source_len;
};

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
