/* The FUSE low-level handlers; see ll_ops.h.
 *
 *   $ cat /mnt/primus/env/maxtext/gfx950/NVTE_FUSED_ATTN
 *   1
 *   $ getfattr -n user.primus.layer /mnt/primus/env/maxtext/gfx950/NVTE_FUSED_ATTN
 *
 * Internally everything returns 0 or a negative errno; reply_err() is the
 * one place that turns that into the kernel's positive errno. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "commit.h"
#include "handles.h"
#include "counters.h"
#include "envfs.h"
#include "inherit.h"
#include "inval.h"
#include "reload.h"
#include "layer.h"
#include "ll_ops.h"
#include "statefile.h"
#include "status.h"

static struct envfs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, err < 0 ? -err : err);
}

/* ---- what a node shows ------------------------------------------------- */

struct target {
	struct epoch_dir *dir;           /* ARCH, VAR, VIEW */
	const struct snap_var *var;      /* VAR */
};

static bool var_visible(const struct snap_var *v)
{
	return v && v->set && !v->view_name;
}

/* Finds what n is in e; -ENOENT when the epoch has no such path, -ESTALE
 * when n is NULL (an inode the tree does not know, from tree_get). */
static int resolve_node(const struct epoch *e, const struct node *n, struct target *t)
{
	memset(t, 0, sizeof(*t));
	if (!n)
		return -ESTALE;
	switch (n->kind) {
	case NODE_ROOT:
	case NODE_STATUS:
	case NODE_DIAGNOSTICS:
	case NODE_ENV:
		return 0;
	case NODE_BACKEND:
		return epoch_has_backend(e, n->backend) ? 0 : -ENOENT;
	case NODE_ARCH:
	case NODE_VIEW:
	case NODE_VAR:
		if (!(t->dir = epoch_find_dir(e, n->backend, n->arch)))
			return -ENOENT;
		if (n->kind != NODE_VAR)
			return 0;
		t->var = snapshot_find(t->dir->snap, n->name, n->name_len);
		return var_visible(t->var) ? 0 : -ENOENT;
	}
	return -ENOENT;
}

static bool is_dir(const struct node *n)
{
	return n->kind == NODE_ROOT || n->kind == NODE_ENV ||
	       n->kind == NODE_BACKEND || n->kind == NODE_ARCH;
}

/* What a request that needs a directory answers for node n: -ESTALE for
 * an inode the tree does not know, -ENOTDIR for a file, else 0. */
static int need_dir(const struct node *n)
{
	return !n ? -ESTALE : !is_dir(n) ? -ENOTDIR : 0;
}

/* The status bytes of epoch e with the counters: fresh (a getattr or
 * lookup, whose size the kernel will trust) or the ones last sized, which
 * a read without an open must serve so that size and bytes agree. */
static int status_bytes(struct envfs *fs, struct epoch *e, bool fresh, struct blob **out)
{
	struct blob *b = NULL;
	int err = 0;

	pthread_mutex_lock(&fs->live_lock);
	if (!fresh && fs->status_blob && fs->status_src == e->status) {
		*out = blob_ref(fs->status_blob);
		goto out;
	}
	if ((err = status_live(e, &b)) < 0)
		goto out;
	blob_unref(fs->status_blob);
	blob_unref(fs->status_src);
	fs->status_blob = b;
	fs->status_src = blob_ref(e->status);
	*out = blob_ref(b);
out:
	pthread_mutex_unlock(&fs->live_lock);
	return err;
}

/* status changes with every request counted, so its size is never cached
 * (the kernel then drops its pages whenever the size moved). */
static double attr_timeout_of(const struct envfs *fs, const struct node *n)
{
	return n->kind == NODE_STATUS ? 0 : fs->opts->attr_timeout;
}

static int fill_attr(struct envfs *fs, struct epoch *e, const struct node *n,
		     const struct target *t, struct stat *st)
{
	struct blob *b = NULL;
	int err;

	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_blksize = 4096;
	/* Files under env/ change only when the generation grows. */
	st->st_mtim = st->st_ctim = st->st_atim = e->changed;
	if (is_dir(n)) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	st->st_nlink = 1;
	switch (n->kind) {
	case NODE_STATUS:
		if ((err = status_bytes(fs, e, true, &b)) < 0)
			return err;
		st->st_mode = S_IFREG | 0444;
		st->st_size = b->len;
		st->st_mtim = st->st_ctim = st->st_atim = e->loaded;
		blob_unref(b);
		break;
	case NODE_DIAGNOSTICS:
		st->st_mode = S_IFREG | 0444;
		st->st_size = e->diagnostics->len;
		st->st_mtim = st->st_ctim = st->st_atim = e->loaded;
		break;
	case NODE_VAR:
		st->st_mode = S_IFREG | (t->var->secret ? 0600 : 0644);
		st->st_size = t->var->value_len + 1;
		break;
	case NODE_VIEW: {
		const struct view_meta *m;

		/* The size alone: a large view is not kept rendered. */
		if ((err = epoch_view_meta(t->dir, n->view, &m)) < 0)
			return err;
		st->st_mode = S_IFREG | (view_is_secret(t->dir->snap, n->view) ? 0600 : 0444);
		st->st_size = m->len;
		break;
	}
	default:
		break;
	}
	st->st_blocks = (st->st_size + 511) / 512;
	return 0;
}

/* Which node a child name is, by its parent. Returns 0 and the kind (and
 * view), -ENOENT when the epoch has no such child, -ENOTDIR. */
static int child_kind(const struct epoch *e, const struct node *p, const char *name,
		      enum node_kind *kind, enum view_kind *view)
{
	int k;

	*view = 0;
	switch (p->kind) {
	case NODE_ROOT:
		return -ENOENT;    /* fixed children are found in the tree */
	case NODE_ENV:
		*kind = NODE_BACKEND;
		return epoch_has_backend(e, name) ? 0 : -ENOENT;
	case NODE_BACKEND:
		*kind = NODE_ARCH;
		return epoch_find_dir(e, p->backend, name) ? 0 : -ENOENT;
	case NODE_ARCH:
		for (k = 0; k < VIEW_COUNT; k++) {
			if (!strcmp(name, view_file_name(k))) {
				*kind = NODE_VIEW;
				*view = k;
				return 0;
			}
		}
		*kind = NODE_VAR;
		return 0;          /* existence is checked by resolve_node */
	default:
		return -ENOTDIR;
	}
}

/* ---- init -------------------------------------------------------------- */

static void envfs_ll_init(void *userdata, struct fuse_conn_info *conn)
{
	struct envfs *fs = userdata;

	/* -o ro: nothing is ever written, so no open needs state or a close
	 * notification. Answering OPEN and OPENDIR with ENOSYS makes the
	 * kernel stop sending them (and RELEASE), keep pages and cache
	 * listings, so a warm `cat` is served without a single request.
	 * Older kernels would take ENOSYS as a failed open. FLUSH likewise:
	 * envfs_ll_flush answers ENOSYS on -o ro, once, or every close
	 * would cost a round trip again (tests/mount/requests.sh checks). */
	fs->zero_open = fs->opts->ro && (conn->capable & FUSE_CAP_NO_OPEN_SUPPORT);
	fs->zero_opendir = fs->opts->ro && (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
	/* Names and attributes in one reply per page of a listing: a cold
	 * `ls -l` of 2,000 variables costs a few dozen requests instead of a
	 * LOOKUP per name. Always, not only for the first chunk (AUTO). */
	if (conn->capable & FUSE_CAP_READDIRPLUS) {
		conn->want |= FUSE_CAP_READDIRPLUS;
		conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	}
	/* The kernel would drop a file's pages whenever a fresh stat shows a
	 * new mtime, and every file's mtime moves with the generation, so
	 * one changed variable would flush them all. The reload thread says
	 * precisely what changed instead (inval.c); -o noinval then really
	 * leaves the kernel with nothing to notice changes by. */
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	/* With atomic O_TRUNC the kernel empties its copy of a file the
	 * moment a writer opens it, and a racing reader reads nothing; SPEC
	 * 7 wants the old value until close. Without it the kernel asks with
	 * a SETATTR, which setattr applies to the writer's buffer alone. */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
}

/* ---- lookup, forget, getattr ------------------------------------------- */

struct open_file;
static bool open_file_stale(struct epoch *e, const struct open_file *of);
static bool fill_attr_write(struct envfs *fs, const struct node *n,
			    struct open_file *of, struct stat *st);
static int fill_attr_open(struct envfs *fs, const struct node *n,
			  const struct open_file *of, struct stat *st);

static void envfs_ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct fuse_entry_param ep;
	struct node *p, *n = NULL;
	struct target t;
	enum node_kind kind;
	enum view_kind view;
	size_t len = strlen(name);
	int err;

	counters_inc_ino(OP_LOOKUP, parent == INO_ROOT && !strcmp(name, "status") ?
			 INO_STATUS : parent);
	memset(&ep, 0, sizeof(ep));
	p = tree_get(fs->tree, parent);
	if ((err = need_dir(p)) < 0)
		goto out;
	if (p->kind == NODE_ROOT) {
		n = tree_find(fs->tree, parent, name, len);
		err = n ? 0 : -ENOENT;
	} else if ((err = child_kind(e, p, name, &kind, &view)) == 0) {
		/* A variable is looked up in the snapshot before it is named
		 * in the tree, so probes for absent names cost no memory. */
		if (kind == NODE_VAR) {
			struct epoch_dir *d = epoch_find_dir(e, p->backend, p->arch);

			if (!d || !var_visible(snapshot_find(d->snap, name, len)))
				err = -ENOENT;
		}
		if (err == 0)
			err = tree_intern(fs->tree, p, name, len, kind, view, &n);
	}
	if (err == 0 && (err = resolve_node(e, n, &t)) == 0)
		err = fill_attr(fs, e, n, &t, &ep.attr);
	if (err == -ENOENT) {
		/* A negative entry, cached like a positive one; a reload that
		 * adds the name invalidates it. */
		ep.ino = 0;
		ep.entry_timeout = fs->opts->entry_timeout;
		fuse_reply_entry(req, &ep);
		goto leave;
	}
	if (err < 0)
		goto out;
	ep.ino = n->ino;
	ep.attr_timeout = attr_timeout_of(fs, n);
	ep.entry_timeout = fs->opts->entry_timeout;
	/* Count the reference before the kernel can forget it. */
	tree_lookup_add(fs->tree, n, 1);
	if (fuse_reply_entry(req, &ep) != 0)
		tree_forget(fs->tree, n->ino, 1);
	goto leave;
out:
	reply_err(req, err);
leave:
	epoch_leave(e);
}

static void envfs_ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	counters_inc(OP_FORGET);
	tree_forget(fs_of(req)->tree, ino, nlookup);
	fuse_reply_none(req);
}

static void envfs_ll_forget_multi(fuse_req_t req, size_t count,
				  struct fuse_forget_data *forgets)
{
	struct envfs *fs = fs_of(req);
	size_t i;

	counters_inc(OP_FORGET);
	for (i = 0; i < count; i++)
		tree_forget(fs->tree, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void envfs_ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct target t;
	struct stat st;
	int err;

	counters_inc_ino(OP_GETATTR, ino);
	if (!n) {
		err = -ESTALE;
		goto out;
	}
	if (fi && fi->fh && !is_dir(n) &&
	    fill_attr_write(fs, n, (struct open_file *)(uintptr_t)fi->fh, &st)) {
		/* A write open sees its own size (SPEC 7: as a regular
		 * file within one open). */
		fuse_reply_attr(req, &st, 0);
		goto leave;
	}
	if (fi && fi->fh && !is_dir(n) &&
	    open_file_stale(e, (struct open_file *)(uintptr_t)fi->fh)) {
		/* fstat, or the kernel checking the size before a read, on a
		 * file opened before a reload changed it: answer with the
		 * open's own size so the reader gets its old bytes whole, and
		 * cache nothing, so the next plain stat asks again. */
		const struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;

		if ((err = fill_attr_open(fs, n, of, &st)) < 0)
			goto out;
		fuse_reply_attr(req, &st, 0);
		goto leave;
	}
	if ((err = resolve_node(e, n, &t)) < 0 ||
	    (err = fill_attr(fs, e, n, &t, &st)) < 0)
		goto out;
	fuse_reply_attr(req, &st, attr_timeout_of(fs, n));
	goto leave;
out:
	reply_err(req, err);
leave:
	epoch_leave(e);
}

/* ---- directories ------------------------------------------------------- */

/* A listing is computed entry by entry from an epoch: index 0 is ".", 1
 * "..", then the children in a fixed order. Some indexes are holes (a
 * variable that is not visible, a backend already listed), so offsets are
 * stable within an epoch without building the list. An open directory
 * (writable mounts) holds the epoch of its opendir, so one `ls` sees one
 * epoch; with -o ro there is no opendir and each chunk reads the current
 * epoch, the kernel caching the whole listing (cache_readdir) until a
 * reload that adds or removes a name drops it (inval.c). */
enum dent_kind { DENT_END, DENT_HOLE, DENT_ENTRY };

/* An open directory (fi->fh): the epoch its listing comes from. */
struct dir_handle {
	struct handle h;                 /* in fs->handles while open */
	struct epoch *epoch;             /* one reference */
};

static void dir_handle_release(struct handle *h)
{
	struct dir_handle *dh = (struct dir_handle *)h;

	epoch_unref(dh->epoch);
	free(dh);
}

struct dent {
	const char *name;
	struct node *node;       /* NULL for "." and ".." */
	fuse_ino_t ino;
	bool dir;
};

static enum dent_kind dent_node(struct envfs *fs, struct node *p, const char *name,
				enum node_kind kind, enum view_kind view,
				struct dent *d, int *err)
{
	if ((*err = tree_intern(fs->tree, p, name, strlen(name), kind, view, &d->node)) < 0)
		return DENT_END;
	d->name = d->node->name;
	d->ino = d->node->ino;
	d->dir = is_dir(d->node);
	return DENT_ENTRY;
}

/* Entry i of directory p (whose target in e is t). *err is set on
 * failure (with DENT_END). */
static enum dent_kind dir_entry(struct envfs *fs, const struct epoch *e, struct node *p,
				const struct target *t, size_t i, struct dent *d, int *err)
{
	static const struct {
		const char *name;
		fuse_ino_t ino;
	} root_children[] = {
		{ "status", INO_STATUS }, { "diagnostics", INO_DIAGNOSTICS }, { "env", INO_ENV },
	};
	size_t j;

	*err = 0;
	memset(d, 0, sizeof(*d));
	if (i < 2) {
		d->name = i ? ".." : ".";
		d->ino = i && p->parent ? p->parent : p->ino;
		d->dir = true;
		return DENT_ENTRY;
	}
	j = i - 2;
	switch (p->kind) {
	case NODE_ROOT:
		if (j >= sizeof(root_children) / sizeof(root_children[0]))
			return DENT_END;
		d->node = tree_get(fs->tree, root_children[j].ino);
		d->name = root_children[j].name;
		d->ino = root_children[j].ino;
		d->dir = root_children[j].ino == INO_ENV;
		return DENT_ENTRY;
	case NODE_ENV:
		if (j >= e->ndirs)
			return DENT_END;
		if (j && !strcmp(e->dirs[j].snap->backend, e->dirs[j - 1].snap->backend))
			return DENT_HOLE;
		return dent_node(fs, p, e->dirs[j].snap->backend, NODE_BACKEND, 0, d, err);
	case NODE_BACKEND:
		if (j >= e->ndirs)
			return DENT_END;
		if (strcmp(e->dirs[j].snap->backend, p->backend))
			return DENT_HOLE;
		return dent_node(fs, p, e->dirs[j].snap->arch, NODE_ARCH, 0, d, err);
	case NODE_ARCH: {
		const struct snapshot *s = t->dir->snap;

		if (j < s->nvars)
			return var_visible(&s->vars[j]) ?
			       dent_node(fs, p, s->vars[j].name, NODE_VAR, 0, d, err) :
			       DENT_HOLE;
		j -= s->nvars;
		if (j >= VIEW_COUNT)
			return DENT_END;
		return dent_node(fs, p, view_file_name(j), NODE_VIEW, j, d, err);
	}
	default:
		*err = -ENOTDIR;
		return DENT_END;
	}
}

/* Fills the entry param of a readdirplus entry from the current epoch:
 * names may come from an older one (the opendir's), but what the kernel
 * caches for the inode must be current, since the reload that changed it
 * has sent its invalidations already. No attributes (ino 0) for "." and
 * "..", for a name the current epoch no longer has, nor for the views:
 * their size means rendering them (megabytes for 10,000 variables, explain
 * above all), which a plain `ls` should not cost; a stat of one looks it
 * up. The kernel treats such an entry like a plain readdir one. */
static void dent_param(struct envfs *fs, struct epoch *cur, const struct dent *d,
		       struct fuse_entry_param *ep)
{
	struct target t;

	memset(ep, 0, sizeof(*ep));
	ep->attr.st_ino = d->ino;
	ep->attr.st_mode = d->dir ? S_IFDIR : S_IFREG;
	if (!d->node || d->node->kind == NODE_VIEW || resolve_node(cur, d->node, &t) < 0 ||
	    fill_attr(fs, cur, d->node, &t, &ep->attr) < 0) {
		ep->attr.st_ino = d->ino;
		ep->attr.st_mode = d->dir ? S_IFDIR : S_IFREG;
		return;
	}
	ep->ino = d->node->ino;
	ep->attr_timeout = attr_timeout_of(fs, d->node);
	ep->entry_timeout = fs->opts->entry_timeout;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct envfs *fs = fs_of(req);
	struct epoch *cur = epoch_enter(&fs->state);
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;
	struct epoch *e = dh ? dh->epoch : cur;
	struct node *p = tree_get(fs->tree, ino);
	struct node **counted = NULL;  /* readdirplus: lookups to undo */
	size_t ncounted = 0, pos = 0, i, need;
	char *buf = NULL;
	struct target t;
	struct dent d;
	enum dent_kind k;
	int err;

	if ((err = need_dir(p)) < 0)
		goto out;
	if (off < 0 || (err = resolve_node(e, p, &t)) < 0) {
		err = off < 0 ? -EINVAL : err;
		goto out;
	}
	/* Every readdirplus entry takes at least 64 bytes of the buffer. */
	if (!(buf = malloc(size ? size : 1)) ||
	    (plus && !(counted = calloc(size / 64 + 1, sizeof(*counted))))) {
		err = -ENOMEM;
		goto out;
	}
	for (i = (size_t)off; (k = dir_entry(fs, e, p, &t, i, &d, &err)) != DENT_END; i++) {
		if (k == DENT_HOLE)
			continue;
		if (plus) {
			struct fuse_entry_param ep;

			dent_param(fs, cur, &d, &ep);
			need = fuse_add_direntry_plus(req, buf + pos, size - pos, d.name,
						      &ep, (off_t)(i + 1));
			if (need > size - pos)
				break;
			/* Each entry with attributes is a lookup to the
			 * kernel: count it before the kernel can forget it. */
			if (ep.ino) {
				tree_lookup_add(fs->tree, d.node, 1);
				counted[ncounted++] = d.node;
			}
		} else {
			struct stat st = { .st_ino = d.ino,
					   .st_mode = d.dir ? S_IFDIR : S_IFREG };

			need = fuse_add_direntry(req, buf + pos, size - pos, d.name, &st,
						 (off_t)(i + 1));
			if (need > size - pos)
				break;
		}
		pos += need;
	}
	if (err < 0)
		goto out;
	if (fuse_reply_buf(req, buf, pos) != 0)
		for (i = 0; i < ncounted; i++)
			tree_forget(fs->tree, counted[i]->ino, 1);
	goto leave;
out:
	for (i = 0; i < ncounted; i++)
		tree_forget(fs->tree, counted[i]->ino, 1);
	reply_err(req, err);
leave:
	free(counted);
	free(buf);
	epoch_leave(cur);
}

static void envfs_ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct dir_handle *dh;
	struct target t;
	int err;

	counters_inc(OP_OPENDIR);
	if (fs->zero_opendir) {
		err = -ENOSYS;     /* see envfs_ll_init */
		goto out;
	}
	if ((err = need_dir(n)) < 0 || (err = resolve_node(e, n, &t)) < 0)
		goto out;
	/* The listing is this epoch's; the kernel may keep what it cached of
	 * it across opens, since a reload that changes it invalidates the
	 * directory (and its mtime moves with the generation). */
	if (!(dh = calloc(1, sizeof(*dh)))) {
		err = -ENOMEM;
		goto out;
	}
	dh->epoch = epoch_ref(e);
	/* Registered before the reply: RELEASEDIR may come at once. */
	handles_add(&fs->handles, &dh->h, dir_handle_release);
	fi->fh = (uintptr_t)dh;
	fi->keep_cache = 1;
	fi->cache_readdir = 1;
	if (fuse_reply_open(req, fi) != 0) {
		handles_del(&fs->handles, &dh->h);
		dir_handle_release(&dh->h);
	}
	goto leave;
out:
	reply_err(req, err);
leave:
	epoch_leave(e);
}

static void envfs_ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			     struct fuse_file_info *fi)
{
	counters_inc(OP_READDIR);
	do_readdir(req, ino, size, off, fi, false);
}

static void envfs_ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
				 struct fuse_file_info *fi)
{
	counters_inc(OP_READDIRPLUS);
	do_readdir(req, ino, size, off, fi, true);
}

static void envfs_ll_releasedir(fuse_req_t req, fuse_ino_t ino,
				struct fuse_file_info *fi)
{
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;

	(void)ino;
	counters_inc(OP_RELEASEDIR);
	if (dh) {
		handles_del(&fs_of(req)->handles, &dh->h);
		dir_handle_release(&dh->h);
	}
	reply_err(req, 0);
}

/* ---- files ------------------------------------------------------------- */

/* The bytes one open sees, and the snapshot they came from (issue 5's
 * commit-at-close writes against it). */
struct open_file {
	struct handle h;                 /* in fs->handles while open; first */
	struct blob *blob;               /* one reference */
	struct view_meta meta;           /* views: what blob holds, for
	                                    comparing with later epochs */
	struct snapshot *snap;           /* one reference, or NULL */
	const struct node *node;         /* borrowed: nodes live forever */
	struct timespec mtime;           /* of the epoch it was opened in */
	struct wbuf *w;                  /* write opens only; owned */
	pid_t pid;                       /* write opens: who opened */
	struct open_file *wnext, *wprev; /* in fs->wopens while open */
};

bool envfs_fh_may_block(uint64_t fh)
{
	/* The kernel sends RELEASE only once every request on the handle
	 * has its reply, so a handle named by a request being read is
	 * alive. Its write buffer's lock is held across a commit. */
	return ((const struct open_file *)(uintptr_t)fh)->w != NULL;
}

/* What a write open has made of the file so far, committed as the
 * variable's override at close (SPEC 7). Readers keep the old value
 * until then; the writer reads its own bytes. */
struct wbuf {
	pthread_mutex_t lock;            /* requests on one fd may overlap */
	struct strbuf buf;
	bool dirty;                      /* something to commit */
	bool written;                    /* by write or ftruncate, not O_TRUNC
	                                    alone: see wbuf_commit */
	bool append;                     /* O_APPEND: every write at the end */
	int failed;                      /* a refused write: commit nothing */
};

/* True when a reload changed the bytes of the open's file since it was
 * opened. The kernel's page cache is per inode, not per open, so such an
 * open must not leave its old bytes there for later opens to find. */
static bool open_file_stale(struct epoch *e, const struct open_file *of)
{
	const struct view_meta *cur;
	struct target t;

	if (!of->snap)
		return false;            /* status, diagnostics: direct_io */
	if (resolve_node(e, of->node, &t) < 0)
		return true;             /* the file is gone */
	if (t.dir->snap == of->snap)
		return false;
	if (of->node->kind == NODE_VAR)
		return t.var->value_len + 1 != of->blob->len ||
		       memcmp(t.var->value, of->blob->data, t.var->value_len);
	if (epoch_view_meta(t.dir, of->node->view, &cur) < 0)
		return true;
	return !view_meta_equal(cur, &of->meta);
}

/* The attributes of the file as this open sees it. */
static int fill_attr_open(struct envfs *fs, const struct node *n,
			  const struct open_file *of, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_blksize = 4096;
	st->st_nlink = 1;
	st->st_mtim = st->st_ctim = st->st_atim = of->mtime;
	if (n->kind == NODE_VAR) {
		const struct snap_var *v = snapshot_find(of->snap, n->name, n->name_len);

		st->st_mode = S_IFREG | (v && v->secret ? 0600 : 0644);
	} else {
		st->st_mode = S_IFREG | (view_is_secret(of->snap, n->view) ? 0600 : 0444);
	}
	st->st_size = of->blob->len;
	st->st_blocks = (st->st_size + 511) / 512;
	return 0;
}

static void open_file_free(struct open_file *of)
{
	if (of) {
		blob_unref(of->blob);
		snapshot_unref(of->snap);
		if (of->w) {
			sb_release(&of->w->buf);
			pthread_mutex_destroy(&of->w->lock);
			free(of->w);
		}
		free(of);
	}
}

/* What is left of an open when the daemon exits before its RELEASE:
 * its pending writes were never flushed (close() did not return), so
 * they are dropped, as a crash would. */
static void open_file_release(struct handle *h)
{
	open_file_free((struct open_file *)h);
}

static int open_file_make(struct epoch *e, const struct node *n, struct open_file **out)
{
	struct open_file *of = calloc(1, sizeof(*of));
	struct target t;
	int err;

	if (!of)
		return -ENOMEM;
	if ((err = resolve_node(e, n, &t)) < 0)
		goto out;
	switch (n->kind) {
	case NODE_STATUS:
		/* Live counters, fresh at every open (direct_io). */
		if ((err = status_live(e, &of->blob)) < 0)
			goto out;
		break;
	case NODE_DIAGNOSTICS:
		of->blob = blob_ref(e->diagnostics);
		break;
	case NODE_VAR:
		/* The file holds the value and one newline. */
		if ((err = blob_new(t.var->value, t.var->value_len + 1, &of->blob)) < 0)
			goto out;
		of->blob->data[t.var->value_len] = '\n';
		of->snap = snapshot_ref(t.dir->snap);
		break;
	case NODE_VIEW: {
		const struct view_meta *m;

		/* A large view is rendered for this open alone: the open
		 * keeps the content it had when opened (SPEC 6.4). */
		if ((err = epoch_view(t.dir, n->view, &of->blob)) < 0 ||
		    (err = epoch_view_meta(t.dir, n->view, &m)) < 0)
			goto out;
		of->meta = *m;
		of->snap = snapshot_ref(t.dir->snap);
		break;
	}
	default:
		err = -EISDIR;
		goto out;
	}
	of->node = n;
	of->mtime = e->changed;
	*out = of;
	of = NULL;
out:
	open_file_free(of);
	return err;
}

/* Every change is the mount owner's (or root's), SPEC 7; with
 * allow_other the kernel has checked the modes already. */
static int may_change(struct envfs *fs, fuse_req_t req)
{
	uid_t uid = fuse_req_ctx(req)->uid;

	if (fs->opts->ro)
		return -EROFS;
	return uid == fs->uid || uid == 0 ? 0 : -EACCES;
}

/* Marks the variable parent/name (if the tree has named it) as changed
 * through the mount, before the change is committed: see envfs_ll_open. */
static void mark_changed(struct envfs *fs, fuse_ino_t parent, const char *name)
{
	struct node *n = tree_find(fs->tree, parent, name, strlen(name));

	if (n)
		tree_mark_changed(fs->tree, n);
}

/* Names in a <backend>/<arch> directory that are never variables. */
static bool reserved_name(const char *name)
{
	int k;

	/* Only the views: status and diagnostics live at the root, so an
	 * arch directory may hold variables of those names. */
	for (k = 0; k < VIEW_COUNT; k++)
		if (!strcmp(name, view_file_name(k)))
			return true;
	return false;
}

/* A write open of variable n: the buffer starts as the file ("value\n"),
 * empty with O_TRUNC (which alone is a change to commit) or when the
 * file was just created. */
static int open_for_write(struct envfs *fs, fuse_req_t req, struct epoch *e,
			  const struct node *n, int flags, bool created,
			  struct open_file **out)
{
	struct open_file *of = NULL;
	int err;

	if ((err = may_change(fs, req)) < 0)
		return err;
	if (n->kind != NODE_VAR)
		return is_dir(n) ? -EISDIR : -EACCES;
	tree_mark_changed(fs->tree, n);
	if ((err = open_file_make(e, n, &of)) < 0)
		return err;
	err = -ENOMEM;
	if (!(of->w = calloc(1, sizeof(*of->w))))
		goto out;
	pthread_mutex_init(&of->w->lock, NULL);
	of->w->append = flags & O_APPEND;
	if (flags & O_TRUNC)
		of->w->dirty = !created;
	else if (!created && (err = sb_add(&of->w->buf, of->blob->data, of->blob->len)) < 0)
		goto out;
	*out = of;
	of = NULL;
	err = 0;
out:
	open_file_free(of);
	return err;
}

/* Registers a write open about to be handed to the kernel. */
static void wopen_add(struct envfs *fs, fuse_req_t req, struct open_file *of)
{
	of->pid = fuse_req_ctx(req)->pid;
	pthread_mutex_lock(&fs->wopen_lock);
	of->wprev = NULL;
	of->wnext = fs->wopens;
	if (fs->wopens)
		fs->wopens->wprev = of;
	fs->wopens = of;
	pthread_mutex_unlock(&fs->wopen_lock);
}

static void wopen_del(struct envfs *fs, struct open_file *of)
{
	pthread_mutex_lock(&fs->wopen_lock);
	if (of->wprev)
		of->wprev->wnext = of->wnext;
	else if (fs->wopens == of)
		fs->wopens = of->wnext;
	if (of->wnext)
		of->wnext->wprev = of->wprev;
	of->wnext = of->wprev = NULL;
	pthread_mutex_unlock(&fs->wopen_lock);
}

static void envfs_ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct open_file *of = NULL;
	int err;

	counters_inc_ino(OP_OPEN, ino);
	if (fs->zero_open) {
		err = -ENOSYS;     /* see envfs_ll_init */
		goto out;
	}
	if (!n) {
		err = -ESTALE;
		goto out;
	}
	/* A write open buffers and commits at close (SPEC 7). */
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		err = open_for_write(fs, req, e, n, fi->flags, false, &of);
	else
		err = open_file_make(e, n, &of);
	if (err < 0)
		goto out;
	fi->fh = (uintptr_t)of;
	/* Closing what was only read changes nothing: spare close() the
	 * FLUSH round trip. (RELEASE still follows every OPEN; the kernel
	 * sends it in the background.) */
	if (!of->w)
		fi->noflush = 1;
	/* Registered before the reply: RELEASE may come at once. */
	handles_add(&fs->handles, &of->h, open_file_release);
	if (of->w) {
		/* Pending bytes are this open's own and must never reach the
		 * inode's page cache, where other readers would find them. */
		fi->direct_io = 1;
		wopen_add(fs, req, of);
	} else if (n->kind == NODE_VAR && !tree_changed(fs->tree, n)) {
		/* Pages stay valid across opens: a reload that changes the
		 * file invalidates them explicitly (inval.c). A value is
		 * almost always one page, fetched whole from one open. */
		fi->keep_cache = 1;
	} else {
		/* The page cache is per inode, not per open: an fd opened
		 * before a reload would read the new version's pages that a
		 * later open cached. Views are many pages and read in pieces
		 * (docker, source), so they are served from the open's own
		 * buffer, whole; status and diagnostics likewise, with no
		 * size clamp from cached attributes. Likewise a variable
		 * once written through the mount (tree_mark_changed): its
		 * writes come at any time, and the inode's cached size and
		 * pages would mix two values for a reader, the size of one
		 * with the bytes of the other (tests/mount/stress.sh). */
		fi->direct_io = 1;
	}
	if (fuse_reply_open(req, fi) != 0) {
		if (of->w)
			wopen_del(fs, of);
		handles_del(&fs->handles, &of->h);
		open_file_free(of);
	}
	goto leave;
out:
	reply_err(req, err);
leave:
	epoch_leave(e);
}

/* Replies with bytes [off, off + size) of data[0..len). */
static void reply_slice(fuse_req_t req, const char *data, size_t len, size_t size,
			off_t off)
{
	if ((size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, data + off,
			       size < len - (size_t)off ? size : len - (size_t)off);
}

/* A read with no open behind it (fh 0: -o ro answers OPEN with ENOSYS).
 * The bytes come from the current epoch, shared, so no read copies
 * anything: a variable is its value and a "\n", a view the epoch's
 * rendered blob (a view too large to keep is rendered once per
 * read-through, epoch_view_read). The price of keeping no per-open state:
 * a reader in the middle of a file when a reload lands may get the new
 * version's bytes after the old one's (docs/PERFORMANCE.md). */
static void read_current(fuse_req_t req, struct envfs *fs, fuse_ino_t ino,
			 size_t size, off_t off)
{
	struct epoch *e = epoch_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct inval_list l = INVAL_LIST_INIT;
	struct blob *b = NULL;
	struct target t;
	int err;

	if (off < 0) {
		err = -EINVAL;
		goto out;
	}
	if ((err = resolve_node(e, n, &t)) < 0)
		goto out;
	switch (n->kind) {
	case NODE_VAR: {
		size_t vlen = t.var->value_len, len = vlen + 1, end;
		struct iovec iov[2];
		int cnt = 0;

		if ((size_t)off >= len) {
			fuse_reply_buf(req, NULL, 0);
			goto leave;
		}
		end = size < len - (size_t)off ? (size_t)off + size : len;
		if ((size_t)off < vlen)
			iov[cnt++] = (struct iovec){ (char *)t.var->value + off,
						     (end < vlen ? end : vlen) - (size_t)off };
		if (end > vlen)
			iov[cnt++] = (struct iovec){ "\n", 1 };
		fuse_reply_iov(req, iov, cnt);
		goto leave;
	}
	case NODE_VIEW:
		err = epoch_view_read(t.dir, n->view, &b);
		break;
	case NODE_STATUS:
		err = status_bytes(fs, e, false, &b);
		break;
	case NODE_DIAGNOSTICS:
		b = blob_ref(e->diagnostics);
		break;
	default:
		err = -EISDIR;
		break;
	}
	if (err < 0)
		goto out;
	reply_slice(req, b->data, b->len, size, off);
	if (n->kind == NODE_VIEW)
		epoch_view_read_end(t.dir, n->view, b, (size_t)off + size);
	/* Those status bytes are now in the page cache, which no open will
	 * drop: have the reload thread drop them, so the next reader sees
	 * the counters move. */
	if (n->kind == NODE_STATUS && fs->reloader && inval_add_inode(&l, ino) == 0)
		reloader_queue(fs->reloader, &l);
	goto leave;
out:
	reply_err(req, err);
leave:
	inval_list_release(&l);
	blob_unref(b);
	epoch_leave(e);
}

static void envfs_ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			  struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	struct inval_list l = INVAL_LIST_INIT;
	struct epoch *e;
	struct blob *b;
	size_t len;
	bool stale;

	counters_inc_ino(OP_READ, ino);
	if (!of) {
		read_current(req, fs, ino, size, off);
		return;
	}
	if (of->w) {
		if (off < 0) {
			reply_err(req, -EINVAL);
			return;
		}
		pthread_mutex_lock(&of->w->lock);
		reply_slice(req, of->w->buf.buf, of->w->buf.len, size, off);
		pthread_mutex_unlock(&of->w->lock);
		return;
	}
	len = of->blob->len;
	if (off < 0) {
		reply_err(req, -EINVAL);
		return;
	}
	e = epoch_enter(&fs->state);
	stale = open_file_stale(e, of);
	/* The kernel may finish this request, and send RELEASE for the
	 * open, before fuse_reply_buf() returns: hold the bytes ourselves,
	 * and touch of no more. */
	b = blob_ref(of->blob);
	reply_slice(req, b->data, len, size, off);
	blob_unref(b);
	epoch_leave(e);
	/* Those old bytes are now in the inode's page cache, where a later
	 * open would find them: have the reload thread drop them again (a
	 * handler must not notify itself). */
	if (stale && !fs->opts->noinval && fs->reloader &&
	    inval_add_inode(&l, ino) == 0)
		reloader_queue(fs->reloader, &l);
	inval_list_release(&l);
}

static int wbuf_commit(struct envfs *fs, struct open_file *of, bool last);

static void envfs_ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;

	counters_inc_ino(OP_RELEASE, ino);
	/* FLUSH has committed what was written; what is left is an O_TRUNC
	 * with nothing written (see wbuf_commit). No caller is left to tell
	 * of a failure, so the daemon's stderr is. */
	if (of)
		handles_del(&fs_of(req)->handles, &of->h);
	if (of && of->w) {
		int err;

		wopen_del(fs_of(req), of);
		/* EINVAL and EFBIG were the writer's answer at write(). */
		err = wbuf_commit(fs_of(req), of, true);
		if (err < 0 && err != -EINVAL && err != -EFBIG)
			fprintf(stderr, "primus-envfs: a truncation committed at close failed: %s\n",
				strerror(-err));
	}
	open_file_free(of);
	reply_err(req, 0);
}

/* ---- writes (SPEC 7) --------------------------------------------------- */

/* The attributes of a file as its write open sees it: its own size.
 * False (st untouched) when of is not a write open. */
static bool fill_attr_write(struct envfs *fs, const struct node *n,
			    struct open_file *of, struct stat *st)
{
	if (!of->w)
		return false;
	fill_attr_open(fs, n, of, st);
	pthread_mutex_lock(&of->w->lock);
	st->st_size = of->w->buf.len;
	pthread_mutex_unlock(&of->w->lock);
	st->st_blocks = (st->st_size + 511) / 512;
	return true;
}

/* Hands a commit's invalidations to the reload thread. wait: only from
 * FLUSH, where the kernel holds nothing an invalidation needs; close()
 * then returns once a reader can no longer get a stale cached value.
 * Other handlers run while the kernel holds the directory or inode. */
static void queue_inval(struct envfs *fs, struct inval_list *l, bool wait)
{
	if (l->n && fs->reloader) {
		if (wait)
			reloader_queue_wait(fs->reloader, l, 1000);
		else
			reloader_queue(fs->reloader, l);
	}
	inval_list_release(l);
}

/* Puts size bytes at off (at the end with O_APPEND). What could never be
 * committed is refused for good, so close() commits nothing half-done:
 * NUL bytes (a hole makes them too), and more than the largest value and
 * its newline. w->lock held. */
static int wbuf_write(struct wbuf *w, const char *data, size_t size, off_t off)
{
	size_t pos, end, len;
	char last;
	int err;

	if (w->failed)
		return w->failed;
	if (off < 0)
		return -EINVAL;
	pos = w->append ? w->buf.len : (size_t)off;
	err = -EINVAL;
	if (pos > w->buf.len || memchr(data, '\0', size))
		goto fail;
	end = pos + size;
	len = end > w->buf.len ? end : w->buf.len;
	last = end == len && size ? data[size - 1] : len ? w->buf.buf[len - 1] : 0;
	err = -EFBIG;
	if (len > STATEFILE_VALUE_MAX + 1 ||
	    (len == STATEFILE_VALUE_MAX + 1 && last != '\n'))
		goto fail;
	if (end > w->buf.len && (err = sb_grow(&w->buf, end - w->buf.len)) < 0)
		return err;
	memcpy(w->buf.buf + pos, data, size);
	if (end > w->buf.len) {
		w->buf.len = end;
		w->buf.buf[end] = '\0';
	}
	w->dirty = w->written = true;
	return 0;
fail:
	w->failed = err;
	return err;
}

/* ftruncate on a write open; w->lock held. */
static int wbuf_truncate(struct wbuf *w, off_t size)
{
	if (w->failed)
		return w->failed;
	if (size < 0 || (size_t)size > w->buf.len)
		return size < 0 || (size_t)size <= STATEFILE_VALUE_MAX + 1 ? -EINVAL : -EFBIG;
	w->buf.len = (size_t)size;
	if (w->buf.buf)
		w->buf.buf[size] = '\0';
	w->dirty = w->written = true;
	return 0;
}

/* Commits what the open wrote, if anything changed: the bytes minus one
 * trailing newline become the override. FLUSH comes with every close()
 * of any descriptor of the open, and a shell's `> FILE` closes one right
 * after opening (dup2 onto stdout): an O_TRUNC with nothing written yet
 * is therefore committed only at the last close (release), never as an
 * empty value in passing. */
static int wbuf_commit(struct envfs *fs, struct open_file *of, bool last)
{
	struct inval_list l = INVAL_LIST_INIT;
	const struct node *n = of->node;
	struct wbuf *w = of->w;
	size_t len;
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (w->failed) {
		err = w->failed;
		goto out;
	}
	if (!w->dirty || (!last && !w->written))
		goto out;
	/* One attempt: a failure is reported to this close(), not retried. */
	w->dirty = w->written = false;
	len = w->buf.len;
	if (len && w->buf.buf[len - 1] == '\n')
		len--;
	if (len > STATEFILE_VALUE_MAX) {
		err = -EFBIG;
		goto out;
	}
	if ((err = commit_set(fs, n->backend, n->arch, n->name,
			      w->buf.buf ? w->buf.buf : "", len, &l)) < 0)
		goto out;
	/* Whatever the diff says (the same value written again), the kernel
	 * saw this open's writes change the file's size. */
	inval_add_inode(&l, n->ino);
out:
	pthread_mutex_unlock(&w->lock);
	queue_inval(fs, &l, !last);
	return err;
}

static void envfs_ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	int err = -EBADF;

	counters_inc_ino(OP_WRITE, ino);
	if (of && of->w) {
		pthread_mutex_lock(&of->w->lock);
		err = wbuf_write(of->w, buf, size, off);
		pthread_mutex_unlock(&of->w->lock);
	}
	if (err < 0)
		reply_err(req, err);
	else
		fuse_reply_write(req, size);
}

/* close() waits for FLUSH, not for RELEASE (sent in the background), so
 * the commit, --state included, happens here: the value is in place and
 * durable, and stale caches dropped, when close() returns. */
static void envfs_ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	int err = 0;

	counters_inc_ino(OP_FLUSH, ino);
	/* -o ro never writes: ENOSYS makes the kernel stop sending FLUSH,
	 * as it did before there was a handler. */
	if (fs->opts->ro) {
		reply_err(req, -ENOSYS);
		return;
	}
	if (of && of->w)
		err = wbuf_commit(fs, of, false);
	reply_err(req, err);
}

static void envfs_ll_create(fuse_req_t req, fuse_ino_t parent, const char *name,
			    mode_t mode, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct inval_list l = INVAL_LIST_INIT;
	struct node *p = tree_get(fs->tree, parent), *n = NULL;
	struct open_file *of = NULL;
	struct fuse_entry_param ep;
	struct epoch *e = NULL;
	bool created = false;
	struct target t;
	int err;

	(void)mode;                /* SPEC 7: modes are the mount's */
	counters_inc(OP_CREATE);
	memset(&ep, 0, sizeof(ep));
	if (!p) {
		err = -ESTALE;
		goto out;
	}
	if ((err = may_change(fs, req)) < 0)
		goto out;
	if (p->kind != NODE_ARCH || reserved_name(name)) {
		err = -EACCES;
		goto out;
	}
	if (!env_name_valid(name, strlen(name))) {
		err = -EINVAL;
		goto out;
	}
	/* The variable exists (empty) from here on, as a created file does;
	 * the writes land at close. */
	if ((err = commit_create(fs, p->backend, p->arch, name, fi->flags & O_EXCL,
				 &created, &l)) < 0 ||
	    (err = tree_intern(fs->tree, p, name, strlen(name), NODE_VAR, 0, &n)) < 0)
		goto out;
	e = epoch_enter(&fs->state);
	if ((err = open_for_write(fs, req, e, n, fi->flags, created, &of)) < 0 ||
	    (err = resolve_node(e, n, &t)) < 0 ||
	    (err = fill_attr(fs, e, n, &t, &ep.attr)) < 0)
		goto out;
	if (created)
		ep.attr.st_size = ep.attr.st_blocks = 0;
	ep.ino = n->ino;
	ep.attr_timeout = 0;       /* the size changes at close */
	ep.entry_timeout = fs->opts->entry_timeout;
	fi->fh = (uintptr_t)of;
	fi->direct_io = 1;
	tree_lookup_add(fs->tree, n, 1);
	handles_add(&fs->handles, &of->h, open_file_release);
	wopen_add(fs, req, of);
	if (fuse_reply_create(req, &ep, fi) != 0) {
		tree_forget(fs->tree, n->ino, 1);
		wopen_del(fs, of);
		handles_del(&fs->handles, &of->h);
		open_file_free(of);
	}
	goto leave;
out:
	open_file_free(of);
	reply_err(req, err);
leave:
	if (e)
		epoch_leave(e);
	queue_inval(fs, &l, false);
}

/* A truncate without a file handle from a process that has n open for
 * writing: what the kernel sends for open(O_TRUNC) (atomic O_TRUNC is off,
 * see init). It empties that open's buffer, like O_TRUNC alone, and
 * readers keep the old value until the close. -ENOENT when there is no
 * such open. */
static int truncate_own_open(struct envfs *fs, fuse_req_t req, const struct node *n,
			     off_t size)
{
	pid_t pid = fuse_req_ctx(req)->pid;
	struct open_file *of;
	int err = -ENOENT;

	pthread_mutex_lock(&fs->wopen_lock);
	for (of = fs->wopens; of; of = of->wnext) {
		if (of->node->ino != n->ino || of->pid != pid)
			continue;
		pthread_mutex_lock(&of->w->lock);
		if (!(err = of->w->failed) && size >= 0 && (size_t)size <= of->w->buf.len) {
			of->w->buf.len = (size_t)size;
			of->w->dirty = true;
		} else if (!err) {
			err = -EINVAL;
		}
		pthread_mutex_unlock(&of->w->lock);
		break;
	}
	pthread_mutex_unlock(&fs->wopen_lock);
	return err;
}

static void envfs_ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			     int to_set, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct open_file *of = fi ? (struct open_file *)(uintptr_t)fi->fh : NULL;
	struct inval_list l = INVAL_LIST_INIT;
	struct node *n = tree_get(fs->tree, ino);
	struct epoch *e = NULL;
	struct target t;
	struct stat st;
	int err;

	counters_inc_ino(OP_SETATTR, ino);
	if (!n) {
		err = -ESTALE;
		goto out;
	}
	if ((err = may_change(fs, req)) < 0)
		goto out;
	/* What the file is now, to tell a change from a no-op. */
	e = epoch_enter(&fs->state);
	if ((err = resolve_node(e, n, &t)) == 0)
		err = fill_attr(fs, e, n, &t, &st);
	epoch_leave(e);
	e = NULL;
	if (err < 0)
		goto out;
	/* Modes and owners are the mount's; one that changes nothing is
	 * fine (sed -i copies them onto its temporary file). */
	err = -EPERM;
	if (((to_set & FUSE_SET_ATTR_MODE) && (attr->st_mode & 07777) != (st.st_mode & 07777)) ||
	    ((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != st.st_uid) ||
	    ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != st.st_gid))
		goto out;
	err = 0;
	if ((to_set & FUSE_SET_ATTR_SIZE) && n->kind != NODE_VAR) {
		err = is_dir(n) ? -EISDIR : -EACCES;
	} else if ((to_set & FUSE_SET_ATTR_SIZE) && of && of->w) {
		pthread_mutex_lock(&of->w->lock);
		err = wbuf_truncate(of->w, attr->st_size);
		pthread_mutex_unlock(&of->w->lock);
	} else if ((to_set & FUSE_SET_ATTR_SIZE) &&
		   (err = truncate_own_open(fs, req, n, attr->st_size)) != -ENOENT) {
		/* The O_TRUNC of an open (or a truncate by its opener):
		 * the open's change, committed at its close. */
	} else if (to_set & FUSE_SET_ATTR_SIZE) {
		/* truncate(2) by path: a change of its own. The kernel holds
		 * the inode, so the invalidations are not waited for; it
		 * sets the size from this reply itself. */
		tree_mark_changed(fs->tree, n);
		err = commit_truncate(fs, n->backend, n->arch, n->name, attr->st_size, &l);
		if (err == 0)
			err = inval_add_inode(&l, n->ino);
	}
	if (err < 0)
		goto out;
	/* Times are accepted and not kept: they follow the generation. */
	e = epoch_enter(&fs->state);
	if (of && of->w && !is_dir(n)) {
		fill_attr_write(fs, n, of, &st);
		fuse_reply_attr(req, &st, 0);
		goto leave;
	}
	if ((err = resolve_node(e, n, &t)) < 0 || (err = fill_attr(fs, e, n, &t, &st)) < 0)
		goto out;
	fuse_reply_attr(req, &st, attr_timeout_of(fs, n));
	goto leave;
out:
	reply_err(req, err);
leave:
	if (e)
		epoch_leave(e);
	queue_inval(fs, &l, false);
}

static void envfs_ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct envfs *fs = fs_of(req);
	struct inval_list l = INVAL_LIST_INIT;
	struct node *p = tree_get(fs->tree, parent);
	int err;

	counters_inc(OP_UNLINK);
	if (!p)
		err = -ESTALE;
	else if ((err = may_change(fs, req)) < 0)
		;
	else if (p->kind != NODE_ARCH || reserved_name(name))
		err = -EACCES;
	else {
		mark_changed(fs, parent, name);
		err = commit_remove(fs, p->backend, p->arch, name, &l);
	}
	/* The kernel drops the name itself; the rest (views, derived
	 * values) is sent once it lets go of the directory. */
	queue_inval(fs, &l, false);
	reply_err(req, err);
}

static void envfs_ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			    fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct envfs *fs = fs_of(req);
	struct inval_list l = INVAL_LIST_INIT;
	struct node *p = tree_get(fs->tree, parent), *np = tree_get(fs->tree, newparent);
	int err;

	counters_inc(OP_RENAME);
	if (!p || !np) {
		err = -ESTALE;
		goto out;
	}
	if ((err = may_change(fs, req)) < 0)
		goto out;
	if (flags & ~RENAME_NOREPLACE) {
		err = -EINVAL;        /* RENAME_EXCHANGE, RENAME_WHITEOUT */
		goto out;
	}
	if (p->kind != NODE_ARCH || np->kind != NODE_ARCH ||
	    reserved_name(name) || reserved_name(newname)) {
		err = -EACCES;
		goto out;
	}
	if (p != np) {
		err = -EXDEV;         /* overrides belong to one directory */
		goto out;
	}
	if (!env_name_valid(newname, strlen(newname))) {
		err = -EINVAL;
		goto out;
	}
	mark_changed(fs, parent, name);
	mark_changed(fs, parent, newname);
	if ((err = commit_move(fs, p->backend, p->arch, name, newname,
			       flags & RENAME_NOREPLACE, &l)) < 0)
		goto out;
	/* The kernel now holds name's inode under newname; make the tree
	 * agree. Should that fail, dropping both names (once the kernel
	 * lets go of the directory) makes it look them up again. */
	if (tree_rename(fs->tree, parent, name, newname) < 0)
		fprintf(stderr, "primus-envfs: rename %s -> %s: %s\n", name, newname,
			strerror(ENOMEM));
	inval_add_entry(&l, parent, name, strlen(name));
	inval_add_entry(&l, parent, newname, strlen(newname));
out:
	queue_inval(fs, &l, false);
	reply_err(req, err);
}

/* The tree's shape is the specs': only variables come and go. */
static void refuse_shape_change(fuse_req_t req)
{
	int err = may_change(fs_of(req), req);

	reply_err(req, err < 0 ? err : -EPERM);
}

static void envfs_ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			   mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	counters_inc(OP_MKNOD);
	refuse_shape_change(req);
}

static void envfs_ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	refuse_shape_change(req);
}

static void envfs_ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent, (void)name;
	refuse_shape_change(req);
}

static void envfs_ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			     const char *name)
{
	(void)link, (void)parent, (void)name;
	refuse_shape_change(req);
}

static void envfs_ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
			  const char *newname)
{
	(void)ino, (void)newparent, (void)newname;
	refuse_shape_change(req);
}

/* ---- extended attributes (SPEC 6.2) ------------------------------------ */

enum {
	XA_LAYER, XA_SOURCE, XA_LAYERS, XA_SHADOWED, XA_DEFAULT, XA_NOTE,
	XA_EXPORTED, XA_EFFECTIVE, XA_COUNT
};

static const char *const xattr_names[XA_COUNT] = {
	"user.primus.layer", "user.primus.source", "user.primus.layers",
	"user.primus.shadowed", "user.primus.default", "user.primus.note",
	"user.primus.exported", "user.primus.effective",
};

/* The attribute's value (borrowed from the snapshot or static), or NULL
 * when it does not apply: absent, not empty. */
static const char *xattr_value(const struct snap_var *v, int which)
{
	switch (which) {
	case XA_LAYER:
		return v->layer != LAYER_NONE ? layer_name(v->layer) : NULL;
	case XA_SOURCE:
		return v->source;
	case XA_LAYERS:
		return v->layers;
	case XA_SHADOWED:
		return v->shadowed;
	case XA_DEFAULT:
		return v->def;
	case XA_NOTE:
		return v->note;
	case XA_EXPORTED:
		return v->exported ? "1" : "0";
	case XA_EFFECTIVE:
		return v->is_flags ? v->effective : NULL;
	}
	return NULL;
}

/* Replies with a value or a list under the getxattr/listxattr size rules. */
static void reply_xattr_bytes(fuse_req_t req, const char *data, size_t len, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		reply_err(req, -ERANGE);
	else
		fuse_reply_buf(req, data, len);
}

static void envfs_ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			      size_t size)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	const char *val = NULL;
	struct target t;
	int which, err;

	counters_inc(OP_GETXATTR);
	if ((err = resolve_node(e, n, &t)) < 0)
		goto out;
	err = -ENODATA;
	if (n->kind != NODE_VAR)
		goto out;
	for (which = 0; which < XA_COUNT; which++)
		if (!strcmp(name, xattr_names[which]))
			val = xattr_value(t.var, which);
	if (!val)
		goto out;
	reply_xattr_bytes(req, val, strlen(val), size);
	goto leave;
out:
	reply_err(req, err);
leave:
	epoch_leave(e);
}

static void envfs_ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct strbuf sb = STRBUF_INIT;
	struct target t;
	int which, err;

	counters_inc(OP_LISTXATTR);
	if ((err = resolve_node(e, n, &t)) < 0)
		goto out;
	for (which = 0; n->kind == NODE_VAR && which < XA_COUNT; which++) {
		if (!xattr_value(t.var, which))
			continue;
		/* Names are NUL-separated, the last one NUL-terminated too. */
		if ((err = sb_add(&sb, xattr_names[which],
				  strlen(xattr_names[which]) + 1)) < 0)
			goto out;
	}
	reply_xattr_bytes(req, sb.buf, sb.len, size);
	goto leave;
out:
	reply_err(req, err);
leave:
	sb_release(&sb);
	epoch_leave(e);
}

/* Provenance is computed, never stored: SPEC 7 says EPERM (or ENOTSUP).
 * Attributes we do not have at all (ACLs above all) are ENOTSUP, which
 * copying tools (sed -i, cp -a) take quietly as "no ACLs here" and fall
 * back to chmod; EPERM would make them complain. */
static int xattr_change_err(const char *name)
{
	return strncmp(name, "user.primus.", 12) ? -ENOTSUP : -EPERM;
}

static void envfs_ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			      const char *value, size_t size, int flags)
{
	(void)ino, (void)value, (void)size, (void)flags;
	counters_inc(OP_SETXATTR);
	reply_err(req, xattr_change_err(name));
}

static void envfs_ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino;
	counters_inc(OP_REMOVEXATTR);
	reply_err(req, xattr_change_err(name));
}

const struct fuse_lowlevel_ops envfs_ll_ops = {
	.init = envfs_ll_init,
	.lookup = envfs_ll_lookup,
	.forget = envfs_ll_forget,
	.forget_multi = envfs_ll_forget_multi,
	.getattr = envfs_ll_getattr,
	.opendir = envfs_ll_opendir,
	.readdir = envfs_ll_readdir,
	.readdirplus = envfs_ll_readdirplus,
	.releasedir = envfs_ll_releasedir,
	.open = envfs_ll_open,
	.read = envfs_ll_read,
	.write = envfs_ll_write,
	.flush = envfs_ll_flush,
	.release = envfs_ll_release,
	.create = envfs_ll_create,
	.setattr = envfs_ll_setattr,
	.unlink = envfs_ll_unlink,
	.rename = envfs_ll_rename,
	.mknod = envfs_ll_mknod,
	.mkdir = envfs_ll_mkdir,
	.rmdir = envfs_ll_rmdir,
	.symlink = envfs_ll_symlink,
	.link = envfs_ll_link,
	.getxattr = envfs_ll_getxattr,
	.listxattr = envfs_ll_listxattr,
	.setxattr = envfs_ll_setxattr,
	.removexattr = envfs_ll_removexattr,
};
