/* tree: the inode table of the mount. Every path the kernel has seen gets
 * one inode number for the daemon's life, so a reload (or, later, an
 * override that removes and re-adds a name) keeps `ls -i` and the kernel's
 * caches keyed the same. What a path holds is decided per request from the
 * published state (epoch.h); the tree only names things.
 *
 * Nodes are never freed before tree_free(): pointers returned here stay
 * valid, and all fields but the lookup count are immutable (a rename
 * replaces a node, tree_rename()). forget only
 * lowers the count, which tells the reload thread whether the kernel may
 * cache the node (worth an invalidation). Thread-safe. */
#ifndef ENVFS_TREE_H
#define ENVFS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envfs_fuse.h"
#include "view.h"

enum node_kind {
	NODE_ROOT,
	NODE_STATUS,
	NODE_DIAGNOSTICS,
	NODE_ENV,            /* env/ */
	NODE_BACKEND,        /* env/<backend>/ */
	NODE_ARCH,           /* env/<backend>/<arch>/ */
	NODE_VAR,            /* env/<backend>/<arch>/<NAME> */
	NODE_VIEW,           /* env/<backend>/<arch>/{env_file,...} */
};

enum {
	INO_ROOT = FUSE_ROOT_ID,
	INO_STATUS,
	INO_DIAGNOSTICS,
	INO_ENV,
};

/* One per name the kernel has seen (10,000 and more): packed, and
 * allocated with its name from the tree's arena. */
struct node {
	fuse_ino_t ino;
	fuse_ino_t parent;
	const char *backend;     /* BACKEND and below; borrowed from the tree */
	const char *arch;        /* ARCH and below; borrowed from the tree */
	const char *name;        /* NUL-terminated; owned by the tree */
	struct node *hnext;      /* hash chain by (parent, name) */
	uint64_t nlookup;        /* kernel references; under the tree's lock */
	uint32_t name_len;
	unsigned char kind;      /* enum node_kind */
	unsigned char view;      /* enum view_kind; NODE_VIEW only */
	bool changed;            /* content changed through the mount (see
	                            tree_mark_changed); under the tree's lock */
};

struct tree;

/* Returns a tree holding root, status, diagnostics and env, or -ENOMEM.
 * *out is caller-owned, freed with tree_free(). */
int tree_new(struct tree **out);
void tree_free(struct tree *t);

/* Borrowed node of ino, or NULL when the number was never handed out. */
struct node *tree_get(struct tree *t, fuse_ino_t ino);
/* Borrowed child of parent named name, or NULL; never creates. */
struct node *tree_find(struct tree *t, fuse_ino_t parent, const char *name,
		       size_t name_len);
/* The child of parent named name, created with kind (and view for
 * NODE_VIEW) when new. The kind of a name is a function of its parent and
 * name, so an existing node keeps its kind. Returns 0 or -ENOMEM. */
int tree_intern(struct tree *t, struct node *parent, const char *name,
		size_t name_len, enum node_kind kind, enum view_kind view,
		struct node **out);
/* A rename the kernel has been told succeeded: it now holds from's inode
 * under the name to (VFS d_move), so the path parent/to is rebound to
 * that inode number, and from loses its number (a later lookup gets a new
 * one). to's old node, if any, keeps its number but no name. Node structs
 * are replaced, never changed or freed, so pointers handed out earlier
 * stay valid and keep describing the path they were found by. Returns 0
 * (also when from was never named) or -ENOMEM. */
int tree_rename(struct tree *t, fuse_ino_t parent, const char *from, const char *to);
/* An unlink the kernel has been told succeeded: parent/name no longer
 * names its inode (a later lookup or create of the name gets a new
 * number), while the kernel may keep the inode itself, unlinked, for the
 * descriptors still open on it. No-op when the name was never named. */
void tree_unlink(struct tree *t, fuse_ino_t parent, const char *name);
/* The node ino is now (after renames), or NULL when it has no name any
 * more (unlinked, or another file was moved over it): where an open of
 * the inode commits (issue 14.5). Borrowed. */
struct node *tree_named(struct tree *t, fuse_ino_t ino);
/* Counts n kernel references to node (a successful lookup reply). */
void tree_lookup_add(struct tree *t, struct node *node, uint64_t n);
/* The kernel dropped n references to ino (FORGET). */
void tree_forget(struct tree *t, fuse_ino_t ino, uint64_t n);
/* True when the kernel holds a reference, so it may cache the node. */
bool tree_known(struct tree *t, const struct node *node);
/* Marks node's file as changed through the mount (a write open, a
 * truncate, rm, mv): it stays marked, by number, across renames. */
void tree_mark_changed(struct tree *t, const struct node *node);
bool tree_changed(struct tree *t, const struct node *node);

#endif
