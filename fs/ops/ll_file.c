/* The bytes one open sees (struct open_file); see ll_internal.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ll_internal.h"
#include "status.h"

bool envfs_fh_may_block(uint64_t fh)
{
	/* The kernel sends RELEASE only once every request on the handle
	 * has its reply, so a handle named by a request being read is
	 * alive. Its write buffer's lock is held across a commit. */
	return ((const struct open_file *)(uintptr_t)fh)->w != NULL;
}

/* True when the bytes of the open's file changed since it was opened: a
 * variable's inode written through (its bytes are rebound). A reload
 * gives a changed variable or view a new inode instead, so an open of an
 * inode keeps agreeing with it. The kernel's page cache is per inode,
 * not per open, so a stale open must not leave its old bytes there for
 * later opens to find. */
bool ll_open_file_stale(struct envfs *fs, struct epoch *e, const struct open_file *of)
{
	const struct view_meta *cur;
	struct epoch_dir *d;
	struct blob *b;
	bool stale;

	(void)fs;
	if (of->vn && of->node->kind == NODE_VAR) {
		b = tree_vnode_bytes(of->tree, of->vn, NULL);
		stale = b != of->blob;
		blob_unref(b);
		return stale;
	}
	if (of->vn)
		return false;            /* a view's inode is one rendering */
	if (!of->snap)
		return false;            /* status, diagnostics: direct_io */
	if (!(d = epoch_find_dir(e, of->node->backend, of->node->arch)))
		return true;             /* the file is gone */
	if (d->snap == of->snap)
		return false;
	if (epoch_view_meta(d, of->node->view, &cur) < 0)
		return true;
	return !view_meta_equal(cur, &of->meta);
}

/* The attributes of the file as this open sees it. */
int ll_fill_attr_open(struct envfs *fs, const struct node *n,
			  const struct open_file *of, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = of->ino;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_blksize = 4096;
	st->st_nlink = 1;
	st->st_mtim = st->st_ctim = st->st_atim = of->mtime;
	if (n->kind == NODE_VAR)
		st->st_mode = S_IFREG | (of->secret ? 0600 : 0644);
	else
		st->st_mode = S_IFREG | (view_is_secret(of->snap, n->view) ? 0600 : 0444);
	st->st_size = n->kind == NODE_VAR && of->secret ? 0 : of->blob->len;
	st->st_blocks = (st->st_size + 511) / 512;
	return 0;
}

void ll_open_file_free(struct open_file *of)
{
	if (of) {
		blob_unref(of->blob);
		snapshot_unref(of->snap);
		tree_vnode_put(of->tree, of->vn);
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
void ll_open_file_release(struct handle *h)
{
	ll_open_file_free((struct open_file *)h);
}

int ll_open_file_make(struct envfs *fs, struct epoch *e, fuse_ino_t ino,
		      struct open_file **out)
{
	struct open_file *of = calloc(1, sizeof(*of));
	struct target t = { 0 };
	struct node *n;
	int err;

	if (!of)
		return -ENOMEM;
	of->tree = fs->tree;
	if ((err = ll_resolve_ino(fs, e, ino, &n, &t)) < 0)
		goto out;
	switch (n->kind) {
	case NODE_STATUS:
		/* Live counters, fresh at every open (direct_io). */
		if ((err = status_live(fs, e, &of->blob)) < 0)
			goto out;
		break;
	case NODE_DIAGNOSTICS:
		of->blob = blob_ref(e->diagnostics);
		break;
	case NODE_HISTORY:
		/* Rendered at every open, read from that rendering (direct_io). */
		if ((err = history_blob(fs, &of->blob)) < 0)
			goto out;
		break;
	case NODE_VAR:
		/* The inode's bytes, shared: they never change in place. */
		of->blob = t.bytes;
		t.bytes = NULL;
		of->vn = t.vn;
		t.vn = NULL;
		of->secret = t.secret;
		break;
	case NODE_VIEW: {
		const struct view_meta *m;

		/* A large view is rendered for this open alone: the open
		 * keeps the content it had when opened, whatever a reload does meanwhile. */
		if ((err = epoch_view(t.dir, n->view, &of->blob)) < 0 ||
		    (err = epoch_view_meta(t.dir, n->view, &m)) < 0)
			goto out;
		of->meta = *m;
		of->snap = snapshot_ref(t.dir->snap);
		of->vn = t.vn;
		t.vn = NULL;
		break;
	}
	default:
		err = -EISDIR;
		goto out;
	}
	of->ino = t.ino;
	of->node = n;
	of->mtime = e->changed;
	*out = of;
	of = NULL;
out:
	ll_target_release(fs, &t);
	ll_open_file_free(of);
	return err;
}
