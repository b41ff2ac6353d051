/* ynode: the tree yaml_tree loads (its nodes, its document) and the
 * loader's limits, apart from the loader itself, so that the event
 * builder (yaml_build) the loader calls sees the types without seeing
 * the loader. */
#ifndef ENVFS_YNODE_H
#define ENVFS_YNODE_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
