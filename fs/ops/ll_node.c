/* What a node of the tree shows in an epoch; see ll_internal.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>

#include "ll_internal.h"
#include "status.h"

void ll_target_release(struct envfs *fs, struct target *t)
{
	tree_vnode_put(fs->tree, t->vn);
	blob_unref(t->bytes);
	memset(t, 0, sizeof(*t));
}

int ll_reply_attr(fuse_req_t req, struct envfs *fs, struct epoch *e, fuse_ino_t ino)
{
	struct target t = { 0 };
	struct stat st;
	struct node *n;
	int err;

	if ((err = ll_resolve_ino(fs, e, ino, &n, &t)) == 0 &&
	    (err = ll_fill_attr(fs, e, n, &t, &st)) == 0)
		fuse_reply_attr(req, &st, ll_attr_timeout(fs, n));
	ll_target_release(fs, &t);
	return err;
}

void ll_target_count(struct envfs *fs, struct node *n, const struct target *t)
{
	if (t->vn)
		tree_vnode_lookup_add(fs->tree, t->vn, 1);
	else
		tree_lookup_add(fs->tree, n, 1);
}

void ll_target_entry(const struct target *t, struct fuse_entry_param *ep)
{
	ep->ino = t->ino;
	/* A vnode's number is reused once the kernel forgot it. */
	ep->generation = t->vn ? t->vn->generation : 0;
}

/* The epoch's visible variable of n's name, or NULL. */
static const struct snap_var *epoch_var(const struct epoch *e, const struct node *n,
					struct epoch_dir **dir)
{
	const struct snap_var *v;

	if (!(*dir = epoch_find_dir(e, n->backend, n->arch)))
		return NULL;
	v = snapshot_find((*dir)->snap, n->name, n->name_len);
	return var_visible(v) ? v : NULL;
}

int ll_resolve_ino(struct envfs *fs, const struct epoch *e, fuse_ino_t ino,
		   struct node **np, struct target *t)
{
	struct node *n = tree_get(fs->tree, ino);

	memset(t, 0, sizeof(*t));
	*np = n;
	if (!n)
		return -ESTALE;
	if (n->kind != NODE_VAR && n->kind != NODE_VIEW)
		return ll_resolve_node(fs, e, n, t);
	/* A variable's or view's name node has no inode of its own. */
	if (!(t->vn = tree_vnode_get(fs->tree, ino)))
		return -ESTALE;
	t->ino = ino;
	if (n->kind == NODE_VIEW) {
		t->secret = t->vn->secret;
		t->dir = tree_vnode_view_dir(fs->tree, t->vn,
					     epoch_find_dir(e, n->backend, n->arch));
		return t->dir ? 0 : -ENOMEM;
	}
	t->bytes = tree_vnode_bytes(fs->tree, t->vn, &t->secret);
	/* Provenance only while the name is the inode's and holds its value. */
	if ((t->var = epoch_var(e, n, &t->dir)) &&
	    (t->var->value_len + 1 != t->bytes->len ||
	     memcmp(t->var->value, t->bytes->data, t->var->value_len) ||
	     !tree_named(fs->tree, n->ino)))
		t->var = NULL;
	return 0;
}

int ll_resolve_node(struct envfs *fs, const struct epoch *e, const struct node *n,
		    struct target *t)
{
	int err;

	memset(t, 0, sizeof(*t));
	if (!n)
		return -ESTALE;
	t->ino = n->ino;
	switch (n->kind) {
	case NODE_ROOT:
	case NODE_STATUS:
	case NODE_DIAGNOSTICS:
	case NODE_ENV:
	case NODE_HISTORY:
		return 0;
	case NODE_BACKEND:
		return epoch_has_backend(e, n->backend) ? 0 : -ENOENT;
	case NODE_ARCH:
		return (t->dir = epoch_find_dir(e, n->backend, n->arch)) ? 0 : -ENOENT;
	case NODE_HOST: {
		const char *why;

		return (t->link = epoch_host(e, n->backend, &why)) ? 0 : -ENOENT;
	}
	case NODE_VIEW: {
		const struct view_meta *m;

		if (!(t->dir = epoch_find_dir(e, n->backend, n->arch)))
			return -ENOENT;
		t->secret = view_is_secret(t->dir->snap, n->view);
		if ((err = epoch_view_meta(t->dir, n->view, &m)) < 0 ||
		    (err = tree_vnode_bind_view(fs->tree, n, t->dir->snap, m, t->secret,
						&t->vn)) < 0)
			return err;
		t->ino = t->vn->ino;
		return 0;
	}
	case NODE_VAR:
		if (!(t->var = epoch_var(e, n, &t->dir)))
			return -ENOENT;
		if ((err = tree_vnode_bind(fs->tree, n, t->var->value, t->var->value_len,
					   t->var->secret, &t->vn)) < 0)
			return err;
		t->ino = t->vn->ino;
		t->bytes = tree_vnode_bytes(fs->tree, t->vn, &t->secret);
		return 0;
	}
	return -ENOENT;
}

bool ll_entry_current(struct envfs *fs, fuse_ino_t parent, const char *name)
{
	struct node *n = tree_find(fs->tree, parent, name, strlen(name));
	const struct snap_var *v;
	struct epoch_dir *dir;
	struct epoch *e;
	bool same;

	if (!n || n->kind != NODE_VAR)
		return false;
	e = epoch_enter(&fs->state);
	same = (v = epoch_var(e, n, &dir)) &&
	       tree_vnode_sole(fs->tree, n, v->value, v->value_len, v->secret);
	epoch_leave(e);
	return same;
}

bool ll_is_dir(const struct node *n)
{
	return n->kind == NODE_ROOT || n->kind == NODE_ENV ||
	       n->kind == NODE_BACKEND || n->kind == NODE_ARCH;
}

/* What a request that needs a directory answers for node n: -ESTALE for
 * an inode the tree does not know, -ENOTDIR for a file, else 0. */
int ll_need_dir(const struct node *n)
{
	return !n ? -ESTALE : !ll_is_dir(n) ? -ENOTDIR : 0;
}

/* The status bytes of epoch e with the counters: fresh (a getattr or
 * lookup, whose size the kernel will trust) or the ones last sized, which
 * a read without an open must serve so that size and bytes agree. */
int ll_status_bytes(struct envfs *fs, struct epoch *e, bool fresh, struct blob **out)
{
	struct blob *b = NULL;
	int err = 0;

	pthread_mutex_lock(&fs->live_lock);
	if (!fresh && fs->status_blob && fs->status_src == e->status) {
		*out = blob_ref(fs->status_blob);
		goto out;
	}
	if ((err = status_live(fs, e, &b)) < 0)
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
double ll_attr_timeout(const struct envfs *fs, const struct node *n)
{
	return n->kind == NODE_STATUS || n->kind == NODE_HISTORY ? 0 : fs->opts->attr_timeout;
}

int ll_fill_attr(struct envfs *fs, struct epoch *e, const struct node *n,
		     const struct target *t, struct stat *st)
{
	struct blob *b = NULL;
	int err;

	memset(st, 0, sizeof(*st));
	st->st_ino = t->ino;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_blksize = 4096;
	/* Files under env/ change only when the generation grows. */
	st->st_mtim = st->st_ctim = st->st_atim = e->changed;
	if (ll_is_dir(n)) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	st->st_nlink = 1;
	switch (n->kind) {
	case NODE_STATUS:
		if ((err = ll_status_bytes(fs, e, true, &b)) < 0)
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
	case NODE_HISTORY:
		if ((err = history_blob(fs, &b)) < 0)
			return err;
		st->st_mode = S_IFREG | 0444;
		st->st_size = b->len;
		blob_unref(b);
		break;
	case NODE_HOST:
		st->st_mode = S_IFLNK | 0777;
		st->st_size = strlen(t->link);
		break;
	case NODE_VAR:
		st->st_mode = S_IFREG | (t->secret ? 0600 : 0644);
		/* stat needs no read permission: a secret's length is kept
		 * (its reads are direct I/O, not clamped to the size). */
		st->st_size = t->secret ? 0 : t->bytes->len;
		break;
	case NODE_VIEW:
		/* The size alone: a large view is not kept rendered. */
		st->st_mode = S_IFREG | (t->secret ? 0600 : 0444);
		st->st_size = t->vn->view->meta.len;
		break;
	default:
		break;
	}
	st->st_blocks = (st->st_size + 511) / 512;
	return 0;
}
