/* ll_internal: what the FUSE handler files of fs/ops/ share (private to
 * them; the rest of the daemon sees ll_ops.h).
 *
 *   ll_node.c   what a node shows in an epoch: target, attributes
 *   ll_entry.c  lookup, forget, getattr, readlink
 *   ll_dir.c    opendir, readdir(plus), releasedir
 *   ll_file.c   the bytes one open sees (struct open_file)
 *   ll_read.c   open, read, release
 *   ll_write.c  write, flush, create, setattr, unlink, rename
 *   ll_xattr.c  extended attributes (provenance)
 *   ll_ops.c    init and the table of handlers
 *
 * Internally everything returns 0 or a negative errno; reply_err() is the
 * one place that turns that into the kernel's positive errno. */
#ifndef ENVFS_LL_INTERNAL_H
#define ENVFS_LL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "envfs.h"
#include "handles.h"
#include "history_note.h"
#include "inval.h"
#include "ll_ops.h"
#include "strbuf.h"

static inline struct envfs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static inline void reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, err < 0 ? -err : err);
}

/* ---- what a node shows (ll_node.c) ------------------------------------- */

/* What a file or directory is, for one request; release with
 * ll_target_release(). */
struct target {
	fuse_ino_t ino;                  /* the kernel's number for it */
	struct epoch_dir *dir;           /* ARCH, VIEW; VAR: NULL once the
	                                    directory is gone */
	const struct snap_var *var;      /* VAR: the epoch's variable of the
	                                    name when visible, else NULL
	                                    (provenance, xattrs) */
	struct vnode *vn;                /* VAR: its inode; a handler ref */
	struct blob *bytes;              /* VAR: what the inode holds; a ref */
	bool secret;                     /* VAR: the inode's secrecy */
	const char *link;                /* HOST: the arch it points to
	                                    (borrowed from the epoch) */
};

static inline bool var_visible(const struct snap_var *v)
{
	return epoch_var_visible(v);
}

/* Finds what the path of n is in e (a lookup, a listing, a create): a
 * variable gets the inode holding its value in e (tree_vnode_bind).
 * -ENOENT when the epoch has no such path, -ESTALE when n is NULL. */
int ll_resolve_node(struct envfs *fs, const struct epoch *e, const struct node *n,
		    struct target *t);
/* Finds what inode ino is (a request on an inode the kernel holds):
 * *np its node. A variable's inode holds its bytes whatever e says of
 * the name; other nodes are looked up in e as by ll_resolve_node. */
int ll_resolve_ino(struct envfs *fs, const struct epoch *e, fuse_ino_t ino,
		   struct node **np, struct target *t);
void ll_target_release(struct envfs *fs, struct target *t);
/* True when the kernel's entry of variable name in parent, as a rename
 * left it (the source's inode under the new name), is what a lookup in
 * the published epoch gives: its only inode holds the name's value. */
bool ll_entry_current(struct envfs *fs, fuse_ino_t parent, const char *name);
/* Replies to req with the attributes of inode ino in e, cached for the
 * timeout its kind gets. Returns 0, or the negative errno to reply. */
int ll_reply_attr(fuse_req_t req, struct envfs *fs, struct epoch *e, fuse_ino_t ino);
/* Counts one kernel reference to what t is (n's node, or its vnode),
 * before a reply naming t->ino. */
void ll_target_count(struct envfs *fs, struct node *n, const struct target *t);
/* The entry param's number and generation for t. */
void ll_target_entry(const struct target *t, struct fuse_entry_param *ep);
bool ll_is_dir(const struct node *n);
/* -ESTALE for an unknown inode, -ENOTDIR for a file, else 0. */
int ll_need_dir(const struct node *n);
/* The status bytes of e with the counters; *out is the caller's
 * reference. fresh: for a getattr or lookup (see ll_node.c). */
int ll_status_bytes(struct envfs *fs, struct epoch *e, bool fresh, struct blob **out);
double ll_attr_timeout(const struct envfs *fs, const struct node *n);
/* n's attributes in e, t from ll_resolve_node. */
int ll_fill_attr(struct envfs *fs, struct epoch *e, const struct node *n,
		 const struct target *t, struct stat *st);

/* ---- open files (ll_file.c) -------------------------------------------- */

/* The bytes one open sees, and the snapshot they came from (a write
 * open commits at close against it). */
struct open_file {
	struct handle h;                 /* in fs->handles while open; first */
	fuse_ino_t ino;                  /* the kernel's number of the file */
	struct tree *tree;               /* borrowed: outlives every open */
	struct vnode *vn;                /* variables: the inode; a handler
	                                    reference */
	bool secret;                     /* variables: as opened */
	struct blob *blob;               /* one reference */
	struct view_meta meta;           /* views: what blob holds, for
	                                    comparing with later epochs */
	struct snapshot *snap;           /* one reference, or NULL */
	const struct node *node;         /* borrowed: nodes live forever */
	struct timespec mtime;           /* of the epoch it was opened in */
	struct wbuf *w;                  /* write opens only; owned */
	pid_t pid;                       /* write opens: who opened */
	int accmode;                     /* write opens: O_WRONLY or O_RDWR */
	struct open_file *wnext, *wprev; /* in fs->wopens while open */
};

/* What a write open has made of the file so far, committed as the
 * variable's override at close. Readers keep the old value
 * until then; the writer reads its own bytes. */
struct wbuf {
	pthread_mutex_t lock;            /* requests on one fd may overlap */
	struct strbuf buf;
	bool dirty;                      /* something to commit */
	bool written;                    /* by write or ftruncate, not O_TRUNC
	                                    alone: see ll_wbuf_commit */
	bool append;                     /* O_APPEND: every write at the end */
	bool created;                    /* --sync: this open created the file,
	                                    which no other node has yet: its
	                                    first commit shares it */
	bool excl;                       /* with created: O_EXCL, so that commit
	                                    wants no other node to have it */
	int failed;                      /* a refused write: commit nothing */
};

/* A new open of inode ino in e; *out is caller-owned, freed with
 * ll_open_file_free() (or through its handle). */
int ll_open_file_make(struct envfs *fs, struct epoch *e, fuse_ino_t ino,
		      struct open_file **out);
void ll_open_file_free(struct open_file *of);
/* The handle destructor of an open_file (handles.h). */
void ll_open_file_release(struct handle *h);
/* True when the bytes of the open's file changed since it was opened. */
bool ll_open_file_stale(struct envfs *fs, struct epoch *e, const struct open_file *of);
/* The attributes of the file as this open sees it. */
int ll_fill_attr_open(struct envfs *fs, const struct node *n,
		      const struct open_file *of, struct stat *st);

/* ---- writes (ll_write.c) ----------------------------------------------- */

/* 0 when the requester may change the mount, else -EROFS or -EACCES. */
int ll_may_change(struct envfs *fs, fuse_req_t req);
/* A write open of inode ino; *out is caller-owned (ll_open_file_free). */
int ll_open_for_write(struct envfs *fs, fuse_req_t req, struct epoch *e,
		      fuse_ino_t ino, int flags, bool created, struct open_file **out);
/* Registers a write open about to be handed to the kernel, and back. */
void ll_wopen_add(struct envfs *fs, fuse_req_t req, struct open_file *of);
void ll_wopen_del(struct envfs *fs, struct open_file *of);
/* A write open's own attributes; false (st untouched) for a read open. */
bool ll_fill_attr_write(struct envfs *fs, const struct node *n,
			struct open_file *of, struct stat *st);
/* Commits what the open wrote: from FLUSH, closer is the process whose
 * close() it is; from RELEASE (the last close), last is true. */
int ll_wbuf_commit(struct envfs *fs, const struct hist_writer *who, struct open_file *of,
		   bool last, pid_t closer);

/* ---- the handlers (envfs_ll_ops in ll_ops.c) --------------------------- */

void envfs_ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void envfs_ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void envfs_ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void envfs_ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void envfs_ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void envfs_ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi);
void envfs_ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			  struct fuse_file_info *fi);
void envfs_ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void envfs_ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void envfs_ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi);
void envfs_ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void envfs_ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
		    off_t off, struct fuse_file_info *fi);
void envfs_ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void envfs_ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     struct fuse_file_info *fi);
void envfs_ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		      struct fuse_file_info *fi);
void envfs_ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void envfs_ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		     fuse_ino_t newparent, const char *newname, unsigned int flags);
void envfs_ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		    dev_t rdev);
void envfs_ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void envfs_ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void envfs_ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void envfs_ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void envfs_ll_readlink(fuse_req_t req, fuse_ino_t ino);
void envfs_ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void envfs_ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void envfs_ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		       size_t size, int flags);
void envfs_ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* The request's writer (uid, pid), for the commits its handler makes. */
static inline struct hist_writer ll_writer(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);

	return (struct hist_writer){ .uid = (uint32_t)c->uid, .pid = (int32_t)c->pid };
}

#endif
