/* open, read and release of files; see ll_internal.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>

#include "log.h"
#include "counters.h"
#include "ll_internal.h"
#include "reload.h"

void envfs_ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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
	/* A write open buffers and commits at close. */
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		err = ll_open_for_write(fs, req, e, ino, fi->flags, false, &of);
	else
		err = ll_open_file_make(fs, e, ino, &of);
	if (err < 0)
		goto out;
	fi->fh = (uintptr_t)of;
	/* Closing what was only read changes nothing: spare close() the
	 * FLUSH round trip. (RELEASE still follows every OPEN; the kernel
	 * sends it in the background.) */
	if (!of->w)
		fi->noflush = 1;
	/* Registered before the reply: RELEASE may come at once. */
	handles_add(&fs->handles, &of->h, ll_open_file_release);
	if (of->w) {
		/* Pending bytes are this open's own and must never reach the
		 * inode's page cache, where other readers would find them. */
		fi->direct_io = 1;
		ll_wopen_add(fs, req, of);
	} else if (n->kind == NODE_VAR && !tree_changed(fs->tree, n) && !of->secret) {
		/* Pages stay valid across opens: the inode's bytes never
		 * change (a reload gives a new value a new inode, tree.h). A
		 * value is almost always one page, fetched whole from one
		 * open. */
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
		 * with the bytes of the other (tests/mount/stress.sh). And a
		 * secret, whose stat size is 0: the kernel would clamp a
		 * cached read to it. */
		fi->direct_io = 1;
	}
	if (fuse_reply_open(req, fi) != 0) {
		if (of->w)
			ll_wopen_del(fs, of);
		handles_del(&fs->handles, &of->h);
		ll_open_file_free(of);
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
 * The bytes are shared, so no read copies anything: a variable's are its
 * inode's (which never change: a reader keeps the value it started on),
 * a view's the current epoch's rendered blob (a view too large to keep is
 * rendered once per read-through, epoch_view_read). The price of keeping
 * no per-open state: a reader in the middle of a view when a reload
 * lands may get the new version's bytes after the old one's
 * (docs/PERFORMANCE.md). */
static void read_current(fuse_req_t req, struct envfs *fs, fuse_ino_t ino,
			 size_t size, off_t off)
{
	struct epoch *e = epoch_enter(&fs->state);
	struct inval_list l = INVAL_LIST_INIT;
	struct blob *b = NULL;
	struct target t = { 0 };
	struct node *n;
	int err;

	if (off < 0) {
		err = -EINVAL;
		goto out;
	}
	if ((err = ll_resolve_ino(fs, e, ino, &n, &t)) < 0)
		goto out;
	switch (n->kind) {
	case NODE_VAR:
		b = blob_ref(t.bytes);
		break;
	case NODE_VIEW:
		err = epoch_view_read(t.dir, n->view, &b);
		break;
	case NODE_STATUS:
		err = ll_status_bytes(fs, e, false, &b);
		break;
	case NODE_DIAGNOSTICS:
		b = blob_ref(e->diagnostics);
		break;
	case NODE_HISTORY:
		err = history_blob(fs, &b);
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
	ll_target_release(fs, &t);
	epoch_leave(e);
}

void envfs_ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
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
	stale = ll_open_file_stale(fs, e, of);
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

void envfs_ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;

	counters_inc_ino(OP_RELEASE, ino);
	/* FLUSH has committed what was written, truncations included; what
	 * can be left is a truncation whose FLUSH came while /proc still
	 * showed its closer holding a descriptor of the open, one the closer
	 * then handed over (a descriptor passed to another process). No
	 * caller is left to tell of a failure, so the daemon's log is. */
	if (of)
		handles_del(&fs_of(req)->handles, &of->h);
	if (of && of->w) {
		const struct hist_writer who = ll_writer(req);
		int err;

		ll_wopen_del(fs_of(req), of);
		/* EINVAL and EFBIG were the writer's answer at write(). */
		err = ll_wbuf_commit(fs_of(req), &who, of, true, 0);
		if (err < 0 && err != -EINVAL && err != -EFBIG)
			log_err("a truncation committed at close failed: %s",
				strerror(-err));
	}
	ll_open_file_free(of);
	reply_err(req, 0);
}

