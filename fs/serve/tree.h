/* tree: the inode table of the mount. Every path the kernel has seen gets
 * one node for the daemon's life, and every directory and view one inode
 * number, so a reload keeps `ls -i` and the kernel's caches keyed the
 * same. What a path holds is decided per request from the published
 * state (epoch.h); the tree only names things.
 *
 * A variable file is different: its inode is one value (struct vnode).
 * The kernel keeps a file's size and pages by inode, not by open, so an
 * inode whose bytes changed under it would give a reader the size of one
 * value and the bytes of the next. A variable's name node is
 * never handed to the kernel; a lookup gets the vnode holding the value
 * the epoch gives, an existing one when its bytes are the same, else a
 * new one, and a value changed by a reload gets a new inode number, as a
 * ConfigMap's ..data swap gives new files: an old inode keeps the bytes
 * it had (an open file keeps reading what it opened), the kernel is told
 * to look the name up again, and the vnode is freed (its number reused)
 * once the kernel forgets it. Changes written through an inode (a write,
 * a truncate) change that inode's bytes, as on a regular file. A view
 * file's inode is likewise one rendering: it keeps the snapshot its
 * bytes come from (no copy of them), and a reload that renders the same
 * bytes moves it to the new snapshot (tree_vnode_move_view).
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

#include "blob.h"
#include "envfs_fuse.h"
#include "epoch.h"
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
	NODE_HOST,           /* env/<backend>/host: a symlink to an arch */
	NODE_HISTORY,        /* history: the last generations, JSON */
};

enum {
	INO_ROOT = FUSE_ROOT_ID,
	INO_STATUS,
	INO_DIAGNOSTICS,
	INO_ENV,
	INO_HISTORY,
};

struct vnode;

/* One per name the kernel has seen (10,000 and more): packed, and
 * allocated with its name from the tree's arena. */
struct node {
	fuse_ino_t ino;
	fuse_ino_t parent;
	const char *backend;     /* BACKEND and below; borrowed from the tree */
	const char *arch;        /* ARCH and below; borrowed from the tree */
	const char *name;        /* NUL-terminated; owned by the tree */
	uint64_t nlookup;        /* kernel references; under the tree's lock */
	uint32_t name_len;
	unsigned char kind;      /* enum node_kind */
	unsigned char view;      /* enum view_kind; NODE_VIEW only */
	bool changed;            /* content changed through the mount (see
	                            tree_mark_changed); under the tree's lock */
	struct vnode *vnodes;    /* NODE_VAR: its inodes; under the lock */
};

/* What a view file's inode holds: a rendering, not its bytes. */
struct vnode_view {
	struct snapshot *snap;   /* what it renders; one reference */
	struct epoch_dir *own;   /* renders of snap made for it, once no
	                            published epoch has snap; or NULL */
	struct view_meta meta;   /* size and checksum */
};

/* The inode of a variable or view file holding one value (see above).
 * ino, name and generation are immutable; the rest is the tree's, under
 * its lock. One per file the kernel holds (10,000 and more): packed. */
struct vnode {
	fuse_ino_t ino;          /* what the kernel knows */
	fuse_ino_t name;         /* its name node (tree_get: the current one,
	                            after renames) */
	union {
		struct blob *bytes;      /* variable: "value\n"; one reference */
		struct vnode_view *view; /* view: owned */
	};
	uint64_t nlookup;        /* kernel references */
	struct vnode *next;      /* the name node's list */
	uint32_t generation;     /* how often the number was used before */
	uint32_t refs : 31;      /* request handlers using it */
	bool secret : 1;
};

struct tree;

/* Returns a tree holding root, status, diagnostics and env, or -ENOMEM.
 * *out is caller-owned, freed with tree_free(). */
int tree_new(struct tree **out);
void tree_free(struct tree *t);

/* Borrowed node of ino, or NULL when the number is not in use. For a
 * vnode's number, its variable's name node. */
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
 * the inode commits. Borrowed. */
struct node *tree_named(struct tree *t, fuse_ino_t ino);
/* Counts n kernel references to node (a successful lookup reply); not
 * for a variable's name node, whose inodes are vnodes. */
void tree_lookup_add(struct tree *t, struct node *node, uint64_t n);
/* The kernel dropped n references to ino (FORGET), a node or a vnode. */
void tree_forget(struct tree *t, fuse_ino_t ino, uint64_t n);

/* The inode of variable name (a NODE_VAR node) holding value (len bytes,
 * and the newline the file adds) with that secrecy: one it has whose
 * bytes are these, else a new one. *out holds a handler reference:
 * tree_vnode_put(). Returns 0 or -ENOMEM. */
int tree_vnode_bind(struct tree *t, const struct node *name, const char *value,
		    size_t len, bool secret, struct vnode **out);
/* The same for a view file (a NODE_VIEW node): the inode of the
 * rendering with this meta and secrecy, from snap (which a new vnode
 * references). */
int tree_vnode_bind_view(struct tree *t, const struct node *name, struct snapshot *snap,
			 const struct view_meta *meta, bool secret, struct vnode **out);
/* Where view vnode v renders its bytes now: cur's directory when it has
 * v's snapshot, else a directory of v's own (made once). Borrowed, for
 * as long as cur and the handler's reference to v. NULL for -ENOMEM. */
struct epoch_dir *tree_vnode_view_dir(struct tree *t, struct vnode *v,
				      struct epoch_dir *cur);
/* A reload rendered view name's bytes again from snap, the same bytes
 * as meta: every vnode of name holding them now renders from snap, so
 * old snapshots are not kept alive by views that did not change. */
void tree_vnode_move_view(struct tree *t, const struct node *name, struct snapshot *snap,
			  const struct view_meta *meta);
/* The vnode numbered ino with a handler reference, or NULL. */
struct vnode *tree_vnode_get(struct tree *t, fuse_ino_t ino);
void tree_vnode_put(struct tree *t, struct vnode *v);
/* Counts n kernel references to v (a lookup reply naming it). */
void tree_vnode_lookup_add(struct tree *t, struct vnode *v, uint64_t n);
/* What v holds now: a reference to its bytes, and its secrecy. */
struct blob *tree_vnode_bytes(struct tree *t, struct vnode *v, bool *secret);
/* A change written through v's inode (a write open's commit, a
 * truncate): v holds value from now on. Returns 0 or -ENOMEM. */
int tree_vnode_rebind(struct tree *t, struct vnode *v, const char *value, size_t len,
		      bool secret);
/* True when name's inodes are one, holding value with that secrecy:
 * after a rename, the inode the kernel moved onto the name (a dentry's
 * inode is always one of its name's) is then the one a lookup gives. */
bool tree_vnode_sole(struct tree *t, const struct node *name, const char *value,
		     size_t len, bool secret);
/* True when the kernel holds a reference, so it may cache the node. */
bool tree_known(struct tree *t, const struct node *node);
/* Marks node's file as changed through the mount (a write open, a
 * truncate, rm, mv): it stays marked, by number, across renames. */
void tree_mark_changed(struct tree *t, const struct node *node);
bool tree_changed(struct tree *t, const struct node *node);

#endif
