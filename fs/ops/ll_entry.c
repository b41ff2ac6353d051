/* lookup, forget, getattr and readlink; see ll_internal.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "counters.h"
#include "ll_internal.h"

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
		/* An arch directory named host would win (epoch_set_hosts). */
		*kind = NODE_ARCH;
		if (epoch_find_dir(e, p->backend, name))
			return 0;
		if (!strcmp(name, "host")) {
			const char *why;

			*kind = NODE_HOST;
			return epoch_host(e, p->backend, &why) ? 0 : -ENOENT;
		}
		return -ENOENT;
	case NODE_ARCH:
		for (k = 0; k < VIEW_COUNT; k++) {
			if (!strcmp(name, view_file_name(k))) {
				*kind = NODE_VIEW;
				*view = k;
				return 0;
			}
		}
		*kind = NODE_VAR;
		return 0;          /* existence is checked by ll_resolve_node */
	default:
		return -ENOTDIR;
	}
}

void envfs_ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct fuse_entry_param ep;
	struct node *p, *n = NULL;
	struct target t = { 0 };
	enum node_kind kind;
	enum view_kind view;
	size_t len = strlen(name);
	int err;

	counters_inc_ino(OP_LOOKUP, parent == INO_ROOT && !strcmp(name, "status") ?
			 INO_STATUS : parent);
	memset(&ep, 0, sizeof(ep));
	p = tree_get(fs->tree, parent);
	if ((err = ll_need_dir(p)) < 0)
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
	if (err == 0 && (err = ll_resolve_node(fs, e, n, &t)) == 0)
		err = ll_fill_attr(fs, e, n, &t, &ep.attr);
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
	ll_target_entry(&t, &ep);
	ep.attr_timeout = ll_attr_timeout(fs, n);
	ep.entry_timeout = fs->opts->entry_timeout;
	/* Count the reference before the kernel can forget it. */
	ll_target_count(fs, n, &t);
	if (fuse_reply_entry(req, &ep) != 0)
		tree_forget(fs->tree, t.ino, 1);
	goto leave;
out:
	reply_err(req, err);
leave:
	ll_target_release(fs, &t);
	epoch_leave(e);
}

void envfs_ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	counters_inc(OP_FORGET);
	tree_forget(fs_of(req)->tree, ino, nlookup);
	fuse_reply_none(req);
}

void envfs_ll_forget_multi(fuse_req_t req, size_t count,
				  struct fuse_forget_data *forgets)
{
	struct envfs *fs = fs_of(req);
	size_t i;

	counters_inc(OP_FORGET);
	for (i = 0; i < count; i++)
		tree_forget(fs->tree, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

void envfs_ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct stat st;
	int err;

	counters_inc_ino(OP_GETATTR, ino);
	if (!n) {
		err = -ESTALE;
		goto out;
	}
	if (fi && fi->fh && !ll_is_dir(n) &&
	    ll_fill_attr_write(fs, n, (struct open_file *)(uintptr_t)fi->fh, &st)) {
		/* A write open sees its own size (as a regular file
		 * does within one open). */
		fuse_reply_attr(req, &st, 0);
		goto leave;
	}
	if (fi && fi->fh && !ll_is_dir(n) &&
	    ll_open_file_stale(fs, e, (struct open_file *)(uintptr_t)fi->fh)) {
		/* fstat, or the kernel checking the size before a read, on a
		 * file opened before a reload changed it: answer with the
		 * open's own size so the reader gets its old bytes whole, and
		 * cache nothing, so the next plain stat asks again. */
		const struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;

		if ((err = ll_fill_attr_open(fs, n, of, &st)) < 0)
			goto out;
		fuse_reply_attr(req, &st, 0);
		goto leave;
	}
	if ((err = ll_reply_attr(req, fs, e, ino)) < 0)
		goto out;
	goto leave;
out:
	reply_err(req, err);
leave:
	epoch_leave(e);
}

/* The host entry of a backend (env/BACKEND/host): its target is the arch's name,
 * relative, so the kernel resolves it in the backend directory. */
void envfs_ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct target t = { 0 };
	struct node *n;
	int err;

	counters_inc(OP_READLINK);
	if ((err = ll_resolve_ino(fs, e, ino, &n, &t)) == 0 && n->kind != NODE_HOST)
		err = -EINVAL;
	if (err < 0)
		reply_err(req, err);
	else
		fuse_reply_readlink(req, t.link);
	ll_target_release(fs, &t);
	epoch_leave(e);
}
