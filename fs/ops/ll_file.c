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

/* True when a reload changed the bytes of the open's file since it was
 * opened. The kernel's page cache is per inode, not per open, so such an
 * open must not leave its old bytes there for later opens to find. */
bool ll_open_file_stale(struct epoch *e, const struct open_file *of)
{
	const struct view_meta *cur;
	struct target t;

	if (!of->snap)
		return false;            /* status, diagnostics: direct_io */
	if (ll_resolve_node(e, of->node, &t) < 0)
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
int ll_fill_attr_open(struct envfs *fs, const struct node *n,
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

void ll_open_file_free(struct open_file *of)
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
void ll_open_file_release(struct handle *h)
{
	ll_open_file_free((struct open_file *)h);
}

int ll_open_file_make(struct epoch *e, const struct node *n, struct open_file **out)
{
	struct open_file *of = calloc(1, sizeof(*of));
	struct target t;
	int err;

	if (!of)
		return -ENOMEM;
	if ((err = ll_resolve_node(e, n, &t)) < 0)
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
	ll_open_file_free(of);
	return err;
}

