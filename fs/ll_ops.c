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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "envfs.h"
#include "inval.h"
#include "reload.h"
#include "layer.h"
#include "ll_ops.h"

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

/* Finds what n is in e; -ENOENT when the epoch has no such path. */
static int resolve_node(const struct epoch *e, const struct node *n, struct target *t)
{
	memset(t, 0, sizeof(*t));
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
	case NODE_DIAGNOSTICS:
		st->st_mode = S_IFREG | 0444;
		st->st_size = n->kind == NODE_STATUS ? e->status->len : e->diagnostics->len;
		st->st_mtim = st->st_ctim = st->st_atim = e->loaded;
		break;
	case NODE_VAR:
		st->st_mode = S_IFREG | (t->var->secret ? 0600 : 0644);
		st->st_size = t->var->value_len + 1;
		break;
	case NODE_VIEW:
		if ((err = epoch_view(t->dir, n->view, &b)) < 0)
			return err;
		st->st_mode = S_IFREG | (view_is_secret(t->dir->snap, n->view) ? 0600 : 0444);
		st->st_size = b->len;
		blob_unref(b);
		break;
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
	(void)userdata;
	/* The kernel would drop a file's pages whenever a fresh stat shows a
	 * new mtime, and every file's mtime moves with the generation, so
	 * one changed variable would flush them all. The reload thread says
	 * precisely what changed instead (inval.c); -o noinval then really
	 * leaves the kernel with nothing to notice changes by. */
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
}

/* ---- lookup, forget, getattr ------------------------------------------- */

struct open_file;
static bool open_file_stale(struct epoch *e, const struct open_file *of);
static int fill_attr_open(struct envfs *fs, const struct node *n,
			  const struct open_file *of, struct stat *st);

static void envfs_ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = state_enter(&fs->state);
	struct fuse_entry_param ep;
	struct node *p, *n = NULL;
	struct target t;
	enum node_kind kind;
	enum view_kind view;
	size_t len = strlen(name);
	int err;

	memset(&ep, 0, sizeof(ep));
	if (!(p = tree_get(fs->tree, parent))) {
		err = -ESTALE;
		goto out;
	}
	if (!is_dir(p)) {
		err = -ENOTDIR;
		goto out;
	}
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
	ep.attr_timeout = fs->opts->attr_timeout;
	ep.entry_timeout = fs->opts->entry_timeout;
	/* Count the reference before the kernel can forget it. */
	tree_lookup_add(fs->tree, n, 1);
	if (fuse_reply_entry(req, &ep) != 0)
		tree_forget(fs->tree, n->ino, 1);
	goto leave;
out:
	reply_err(req, err);
leave:
	state_leave(e);
}

static void envfs_ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	tree_forget(fs_of(req)->tree, ino, nlookup);
	fuse_reply_none(req);
}

static void envfs_ll_forget_multi(fuse_req_t req, size_t count,
				  struct fuse_forget_data *forgets)
{
	struct envfs *fs = fs_of(req);
	size_t i;

	for (i = 0; i < count; i++)
		tree_forget(fs->tree, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void envfs_ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = state_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct target t;
	struct stat st;
	int err;

	(void)fi;
	if (!n) {
		err = -ESTALE;
		goto out;
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
	fuse_reply_attr(req, &st, fs->opts->attr_timeout);
	goto leave;
out:
	reply_err(req, err);
leave:
	state_leave(e);
}

/* ---- directories ------------------------------------------------------- */

struct dirent_ent {
	const char *name;                /* borrowed from the tree or static */
	fuse_ino_t ino;
	mode_t type;
};

/* A directory listing fixed at opendir, so one `ls` sees one epoch. */
struct dirlist {
	struct dirent_ent *v;
	size_t n, cap;
};

static int dl_push(struct dirlist *dl, const char *name, fuse_ino_t ino, mode_t type)
{
	if (dl->n == dl->cap) {
		size_t cap = dl->cap ? dl->cap * 2 : 32;
		struct dirent_ent *v = realloc(dl->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		dl->v = v;
		dl->cap = cap;
	}
	dl->v[dl->n++] = (struct dirent_ent){ name, ino, type };
	return 0;
}

static void dl_free(struct dirlist *dl)
{
	if (dl) {
		free(dl->v);
		free(dl);
	}
}

static int dl_push_child(struct envfs *fs, struct dirlist *dl, struct node *p,
			 const char *name, enum node_kind kind, enum view_kind view)
{
	struct node *n;
	int err;

	if ((err = tree_intern(fs->tree, p, name, strlen(name), kind, view, &n)) < 0)
		return err;
	return dl_push(dl, n->name, n->ino, is_dir(n) ? S_IFDIR : S_IFREG);
}

static int list_dir(struct envfs *fs, struct epoch *e, struct node *p,
		    struct dirlist **out)
{
	struct dirlist *dl = calloc(1, sizeof(*dl));
	struct target t;
	size_t i;
	int k, err;

	if (!dl)
		return -ENOMEM;
	if ((err = resolve_node(e, p, &t)) < 0)
		goto out;
	if ((err = dl_push(dl, ".", p->ino, S_IFDIR)) < 0 ||
	    (err = dl_push(dl, "..", p->parent ? p->parent : p->ino, S_IFDIR)) < 0)
		goto out;
	switch (p->kind) {
	case NODE_ROOT:
		if ((err = dl_push(dl, "status", INO_STATUS, S_IFREG)) < 0 ||
		    (err = dl_push(dl, "diagnostics", INO_DIAGNOSTICS, S_IFREG)) < 0 ||
		    (err = dl_push(dl, "env", INO_ENV, S_IFDIR)) < 0)
			goto out;
		break;
	case NODE_ENV:
		for (i = 0; i < e->ndirs; i++) {
			const char *b = e->dirs[i].snap->backend;

			if (i && !strcmp(b, e->dirs[i - 1].snap->backend))
				continue;
			if ((err = dl_push_child(fs, dl, p, b, NODE_BACKEND, 0)) < 0)
				goto out;
		}
		break;
	case NODE_BACKEND:
		for (i = 0; i < e->ndirs; i++) {
			const struct snapshot *s = e->dirs[i].snap;

			if (strcmp(s->backend, p->backend))
				continue;
			if ((err = dl_push_child(fs, dl, p, s->arch, NODE_ARCH, 0)) < 0)
				goto out;
		}
		break;
	case NODE_ARCH:
		for (i = 0; i < t.dir->snap->nvars; i++) {
			const struct snap_var *v = &t.dir->snap->vars[i];

			if (var_visible(v) &&
			    (err = dl_push_child(fs, dl, p, v->name, NODE_VAR, 0)) < 0)
				goto out;
		}
		for (k = 0; k < VIEW_COUNT; k++)
			if ((err = dl_push_child(fs, dl, p, view_file_name(k),
						 NODE_VIEW, k)) < 0)
				goto out;
		break;
	default:
		err = -ENOTDIR;
		goto out;
	}
	*out = dl;
	dl = NULL;
out:
	dl_free(dl);
	return err;
}

static void envfs_ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = state_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct dirlist *dl = NULL;
	int err;

	if (!n) {
		err = -ESTALE;
		goto out;
	}
	if ((err = list_dir(fs, e, n, &dl)) < 0)
		goto out;
	fi->fh = (uintptr_t)dl;
	if (fuse_reply_open(req, fi) != 0)
		dl_free(dl);
	goto leave;
out:
	reply_err(req, err);
leave:
	state_leave(e);
}

static void envfs_ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			     struct fuse_file_info *fi)
{
	struct dirlist *dl = (struct dirlist *)(uintptr_t)fi->fh;
	char *buf;
	size_t pos = 0, i;

	(void)ino;
	if (!(buf = malloc(size ? size : 1))) {
		reply_err(req, -ENOMEM);
		return;
	}
	for (i = off > 0 ? (size_t)off : 0; i < dl->n; i++) {
		struct stat st = { .st_ino = dl->v[i].ino, .st_mode = dl->v[i].type };
		size_t need = fuse_add_direntry(req, buf + pos, size - pos, dl->v[i].name,
						&st, (off_t)(i + 1));

		if (need > size - pos)
			break;
		pos += need;
	}
	fuse_reply_buf(req, buf, pos);
	free(buf);
}

static void envfs_ll_releasedir(fuse_req_t req, fuse_ino_t ino,
				struct fuse_file_info *fi)
{
	(void)ino;
	dl_free((struct dirlist *)(uintptr_t)fi->fh);
	reply_err(req, 0);
}

/* ---- files ------------------------------------------------------------- */

/* The bytes one open sees, and the snapshot they came from (issue 5's
 * commit-at-close writes against it). */
struct open_file {
	struct blob *blob;               /* one reference */
	struct snapshot *snap;           /* one reference, or NULL */
	const struct node *node;         /* borrowed: nodes live forever */
	struct timespec mtime;           /* of the epoch it was opened in */
};

/* True when a reload changed the bytes of the open's file since it was
 * opened. The kernel's page cache is per inode, not per open, so such an
 * open must not leave its old bytes there for later opens to find. */
static bool open_file_stale(struct epoch *e, const struct open_file *of)
{
	struct target t;
	struct blob *cur = NULL;
	bool stale;

	if (!of->snap)
		return false;            /* status, diagnostics: direct_io */
	if (resolve_node(e, of->node, &t) < 0)
		return true;             /* the file is gone */
	if (t.dir->snap == of->snap)
		return false;
	if (of->node->kind == NODE_VAR)
		return t.var->value_len + 1 != of->blob->len ||
		       memcmp(t.var->value, of->blob->data, t.var->value_len);
	if (epoch_view(t.dir, of->node->view, &cur) < 0)
		return true;
	stale = !blob_equal(cur, of->blob);
	blob_unref(cur);
	return stale;
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
		free(of);
	}
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
		of->blob = blob_ref(e->status);
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
	case NODE_VIEW:
		if ((err = epoch_view(t.dir, n->view, &of->blob)) < 0)
			goto out;
		of->snap = snapshot_ref(t.dir->snap);
		break;
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

static void envfs_ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = state_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct open_file *of = NULL;
	int err;

	if (!n) {
		err = -ESTALE;
		goto out;
	}
	/* Writes (overrides) come with SPEC 7; until then nothing is
	 * writable. A -o ro mount never gets here: the kernel says EROFS. */
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
		err = is_dir(n) ? -EISDIR : -EACCES;
		goto out;
	}
	if ((err = open_file_make(e, n, &of)) < 0)
		goto out;
	fi->fh = (uintptr_t)of;
	if (n->kind == NODE_VAR) {
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
		 * size clamp from cached attributes. */
		fi->direct_io = 1;
	}
	if (fuse_reply_open(req, fi) != 0)
		open_file_free(of);
	goto leave;
out:
	reply_err(req, err);
leave:
	state_leave(e);
}

static void envfs_ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			  struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	struct inval_list l = INVAL_LIST_INIT;
	struct epoch *e;
	struct blob *b;
	size_t len = of->blob->len;
	bool stale;

	if (off < 0) {
		reply_err(req, -EINVAL);
		return;
	}
	e = state_enter(&fs->state);
	stale = open_file_stale(e, of);
	/* The kernel may finish this request, and send RELEASE for the
	 * open, before fuse_reply_buf() returns: hold the bytes ourselves,
	 * and touch of no more. */
	b = blob_ref(of->blob);
	if ((size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, b->data + off,
			       size < len - (size_t)off ? size : len - (size_t)off);
	blob_unref(b);
	state_leave(e);
	/* Those old bytes are now in the inode's page cache, where a later
	 * open would find them: have the reload thread drop them again (a
	 * handler must not notify itself). */
	if (stale && !fs->opts->noinval && fs->reloader &&
	    inval_add_inode(&l, ino) == 0)
		reloader_queue(fs->reloader, &l);
	inval_list_release(&l);
}

static void envfs_ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	open_file_free((struct open_file *)(uintptr_t)fi->fh);
	reply_err(req, 0);
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
	struct epoch *e = state_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	const char *val = NULL;
	struct target t;
	int which, err;

	if (!n) {
		err = -ESTALE;
		goto out;
	}
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
	state_leave(e);
}

static void envfs_ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = state_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct strbuf sb = STRBUF_INIT;
	struct target t;
	int which, err;

	if (!n) {
		err = -ESTALE;
		goto out;
	}
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
	state_leave(e);
}

/* Provenance is computed, never stored: SPEC 7 says EPERM. */
static void envfs_ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			      const char *value, size_t size, int flags)
{
	(void)ino, (void)name, (void)value, (void)size, (void)flags;
	reply_err(req, -EPERM);
}

static void envfs_ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino, (void)name;
	reply_err(req, -EPERM);
}

const struct fuse_lowlevel_ops envfs_ll_ops = {
	.init = envfs_ll_init,
	.lookup = envfs_ll_lookup,
	.forget = envfs_ll_forget,
	.forget_multi = envfs_ll_forget_multi,
	.getattr = envfs_ll_getattr,
	.opendir = envfs_ll_opendir,
	.readdir = envfs_ll_readdir,
	.releasedir = envfs_ll_releasedir,
	.open = envfs_ll_open,
	.read = envfs_ll_read,
	.release = envfs_ll_release,
	.getxattr = envfs_ll_getxattr,
	.listxattr = envfs_ll_listxattr,
	.setxattr = envfs_ll_setxattr,
	.removexattr = envfs_ll_removexattr,
};
