/* Writes through the mount (docs/STATE.md): write, flush, create, setattr,
 * unlink, rename, and the shape changes refused; see ll_internal.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>

#include "log.h"
#include "commit.h"
#include "counters.h"
#include "ll_internal.h"
#include "names.h"
#include "procfd.h"
#include "reload.h"
#include "statefile.h"

/* Every change is the mount owner's (or root's); with
 * allow_other the kernel has checked the modes already. */
int ll_may_change(struct envfs *fs, fuse_req_t req)
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

/* Whether name in dir's <backend>/<arch> may be changed through the
 * mount: every node of a --sync run takes the same names (names.h), so
 * a change a name outside them would make is refused before anything is
 * committed, not acknowledged and then ignored by the other nodes. A
 * config may still name a variable otherwise: it is shown, read-only. */
static int changeable(const struct node *dir, const char *name)
{
	return names_override_ok(dir->backend, dir->arch, name) ? 0 : -EINVAL;
}

/* A write open of a variable's inode: the buffer starts as the file
 * ("value\n"), empty with O_TRUNC (which alone is a change to commit) or
 * when the file was just created. */
int ll_open_for_write(struct envfs *fs, fuse_req_t req, struct epoch *e,
		      fuse_ino_t ino, int flags, bool created, struct open_file **out)
{
	struct node *n = tree_get(fs->tree, ino);
	struct open_file *of = NULL;
	int err;

	if ((err = ll_may_change(fs, req)) < 0)
		return err;
	if (!n)
		return -ESTALE;
	if (n->kind != NODE_VAR)
		return ll_is_dir(n) ? -EISDIR : -EACCES;
	if ((err = changeable(n, n->name)) < 0)
		return err;
	tree_mark_changed(fs->tree, n);
	if ((err = ll_open_file_make(fs, e, ino, &of)) < 0)
		return err;
	err = -ENOMEM;
	if (!(of->w = calloc(1, sizeof(*of->w))))
		goto out;
	pthread_mutex_init(&of->w->lock, NULL);
	of->w->append = flags & O_APPEND;
	of->accmode = flags & O_ACCMODE;
	if (flags & O_TRUNC)
		of->w->dirty = !created;
	else if (!created && (err = sb_add(&of->w->buf, of->blob->data, of->blob->len)) < 0)
		goto out;
	/* --sync: the create is this node's until the close, which shares
	 * the file's first value, empty when nothing was written (touch). */
	if (created && fs->sync) {
		of->w->created = of->w->dirty = true;
		of->w->excl = flags & O_EXCL;
	}
	*out = of;
	of = NULL;
	err = 0;
out:
	ll_open_file_free(of);
	return err;
}

/* Registers a write open about to be handed to the kernel. */
void ll_wopen_add(struct envfs *fs, fuse_req_t req, struct open_file *of)
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

void ll_wopen_del(struct envfs *fs, struct open_file *of)
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

/* The attributes of a file as its write open sees it: its own size.
 * False (st untouched) when of is not a write open. */
bool ll_fill_attr_write(struct envfs *fs, const struct node *n,
			    struct open_file *of, struct stat *st)
{
	if (!of->w)
		return false;
	ll_fill_attr_open(fs, n, of, st);
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

/* True when closer still holds another descriptor of of's open, so this
 * FLUSH is not the close that ends the writer's work (procfd.h). When
 * /proc cannot tell, false: the truncation is committed now. */
static bool closer_keeps_open(struct envfs *fs, const struct open_file *of, pid_t closer)
{
	return fs->dev && procfd_holds(closer, fs->dev, of->ino, of->accmode) == 1;
}

/* After a change written through vn's inode to variable n, the inode
 * holds the value (len bytes; NULL: the one the new epoch gives n) with
 * the secrecy the new epoch gives it (tree.h: writes change the inode,
 * reloads give new ones). Should that fail for memory, the inode keeps
 * its old bytes and the name gets a new inode at its next lookup: never
 * a torn read. */
static void rebind(struct envfs *fs, struct vnode *vn, const struct node *n,
		   const char *value, size_t len, bool secret)
{
	struct epoch *e = epoch_current(&fs->state);
	struct epoch_dir *d = epoch_find_dir(e, n->backend, n->arch);
	const struct snap_var *v = d ? snapshot_find(d->snap, n->name, n->name_len) : NULL;

	if (!value && v && v->set) {
		value = v->value;
		len = v->value_len;
	}
	if (vn && value)
		tree_vnode_rebind(fs->tree, vn, value, len, v ? v->secret : secret);
	epoch_unref(e);
}

/* True when this FLUSH comes from another process than the opener (a
 * child that inherited the descriptor: `{ cmd; echo more; } > FILE`)
 * while the opener still holds a descriptor of the open: the child's exit
 * is no end of the opener's work, whose own close commits it whole. When
 * /proc cannot tell, false: committed now, as before. */
static bool opener_still_writes(struct envfs *fs, const struct open_file *of, pid_t closer)
{
	return fs->dev && of->pid > 0 && closer > 0 && closer != of->pid &&
	       procfd_holds(of->pid, fs->dev, of->ino, of->accmode) == 1;
}

/* Commits what the open wrote, if anything changed: the bytes minus one
 * trailing newline become the override before close() returns, so a
 * write is durable once close() returns. FLUSH comes with every close()
 * of any descriptor of the open, and a shell's `> FILE` closes one right
 * after opening (dup2 onto stdout): an O_TRUNC with nothing written yet
 * is committed at the close of the closer's last descriptor of the open,
 * never as an empty value in passing; and a child's close while the
 * opener still holds the open commits nothing (opener_still_writes). */
int ll_wbuf_commit(struct envfs *fs, const struct hist_writer *who, struct open_file *of,
		   bool last, pid_t closer)
{
	struct inval_list l = INVAL_LIST_INIT;
	const struct node *n;
	struct wbuf *w = of->w;
	bool created, bare;
	size_t len;
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (w->failed) {
		err = w->failed;
		/* Nothing of this open is committed: nor is its creation. */
		if (w->created && (n = tree_named(fs->tree, of->node->ino)))
			commit_uncreate(fs, who, n->backend, n->arch, n->name, &l);
		w->created = false;
		goto out;
	}
	if (!w->dirty ||
	    (!last && ((!w->written && closer_keeps_open(fs, of, closer)) ||
		       opener_still_writes(fs, of, closer))))
		goto out;
	/* One attempt: a failure is reported to this close(), not retried. */
	bare = w->created && !w->written && !w->excl;
	w->dirty = w->written = false;
	created = w->created;
	w->created = false;
	/* The data follows the inode: to its name after a rename, nowhere
	 * once it was unlinked. */
	if (!(n = tree_named(fs->tree, of->node->ino)))
		goto out;
	len = w->buf.len;
	if (len && w->buf.buf[len - 1] == '\n')
		len--;
	if (len > STATEFILE_VALUE_MAX) {
		err = -EFBIG;
		goto out;
	}
	/* A bare create (touch, `: > NEW`) is compared as an O_EXCL one: a
	 * name another node wrote meanwhile keeps that value, since in
	 * etcd's order the create came first (an empty value committed over
	 * it would be a state no serial order gives). */
	err = commit_set(fs, who, n->backend, n->arch, n->name, w->buf.buf ? w->buf.buf : "",
			 len, created && (w->excl || bare), &l);
	if (err == -EEXIST && bare && fs->sync) {
		err = 0;
		goto out;
	}
	if (err < 0) {
		/* Applied nowhere: neither is the creation. One that may
		 * still land (ETIMEDOUT) is rolled back too, as any change of
		 * unknown outcome is: if it lands, it comes back through the
		 * watch like another node's change, so no node is left with
		 * a file etcd never got. */
		if (created)
			commit_uncreate(fs, who, n->backend, n->arch, n->name, &l);
		goto out;
	}
	rebind(fs, of->vn, n, w->buf.buf ? w->buf.buf : "", len, of->secret);
	/* Whatever the diff says (the same value written again), the kernel
	 * saw this open's writes change the file's size. */
	inval_add_inode(&l, of->ino);
out:
	pthread_mutex_unlock(&w->lock);
	queue_inval(fs, &l, !last);
	return err;
}

void envfs_ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
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
void envfs_ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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
	if (of && of->w) {
		const struct hist_writer who = ll_writer(req);

		err = ll_wbuf_commit(fs, &who, of, false, fuse_req_ctx(req)->pid);
	}
	reply_err(req, err);
}

void envfs_ll_create(fuse_req_t req, fuse_ino_t parent, const char *name,
			    mode_t mode, struct fuse_file_info *fi)
{
	const struct hist_writer who = ll_writer(req);
	struct envfs *fs = fs_of(req);
	struct inval_list l = INVAL_LIST_INIT;
	struct node *p = tree_get(fs->tree, parent), *n = NULL;
	struct open_file *of = NULL;
	struct fuse_entry_param ep;
	struct epoch *e = NULL;
	bool created = false;
	struct target t = { 0 };
	int err;

	counters_inc(OP_CREATE);
	memset(&ep, 0, sizeof(ep));
	if (!p) {
		err = -ESTALE;
		goto out;
	}
	if ((err = ll_may_change(fs, req)) < 0)
		goto out;
	if (p->kind != NODE_ARCH || reserved_name(name)) {
		err = -EACCES;
		goto out;
	}
	if ((err = changeable(p, name)) < 0)
		goto out;
	/* The variable exists (empty) from here on, as a created file does;
	 * the writes land at close. Modes are the mount's, but one
	 * that grants nothing to others asks for a private file: sed -i's
	 * temporary of a secret, an O_CREAT with 0600. */
	if ((err = commit_create(fs, &who, p->backend, p->arch, name, fi->flags & O_EXCL,
				 (mode & 077) == 0, &created, &l)) < 0)
		goto out;
	if ((err = tree_intern(fs->tree, p, name, strlen(name), NODE_VAR, 0, &n)) < 0)
		goto undo;
	e = epoch_enter(&fs->state);
	if ((err = ll_resolve_node(fs, e, n, &t)) < 0 ||
	    (err = ll_open_for_write(fs, req, e, t.ino, fi->flags, created, &of)) < 0 ||
	    (err = ll_fill_attr(fs, e, n, &t, &ep.attr)) < 0)
		goto undo;
	if (created)
		ep.attr.st_size = ep.attr.st_blocks = 0;
	ll_target_entry(&t, &ep);
	ep.attr_timeout = 0;       /* the size changes at close */
	ep.entry_timeout = fs->opts->entry_timeout;
	fi->fh = (uintptr_t)of;
	fi->direct_io = 1;
	ll_target_count(fs, n, &t);
	handles_add(&fs->handles, &of->h, ll_open_file_release);
	ll_wopen_add(fs, req, of);
	if (fuse_reply_create(req, &ep, fi) != 0) {
		tree_forget(fs->tree, t.ino, 1);
		ll_wopen_del(fs, of);
		handles_del(&fs->handles, &of->h);
		ll_open_file_free(of);
		/* No open will ever commit it: with --sync the create would
		 * stay this node's alone. */
		if (created)
			commit_uncreate(fs, &who, p->backend, p->arch, name, &l);
	}
	goto leave;
undo:
	if (created)
		commit_uncreate(fs, &who, p->backend, p->arch, name, &l);
out:
	ll_open_file_free(of);
	reply_err(req, err);
leave:
	ll_target_release(fs, &t);
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

void envfs_ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			     int to_set, struct fuse_file_info *fi)
{
	const struct hist_writer who = ll_writer(req);
	struct envfs *fs = fs_of(req);
	struct open_file *of = fi ? (struct open_file *)(uintptr_t)fi->fh : NULL;
	struct inval_list l = INVAL_LIST_INIT;
	struct node *n = tree_get(fs->tree, ino);
	struct epoch *e = NULL;
	struct target t = { 0 };
	struct stat st;
	int err;

	counters_inc_ino(OP_SETATTR, ino);
	if (!n) {
		err = -ESTALE;
		goto out;
	}
	if ((err = ll_may_change(fs, req)) < 0)
		goto out;
	/* What the file is now, to tell a change from a no-op. */
	e = epoch_enter(&fs->state);
	if ((err = ll_resolve_ino(fs, e, ino, &n, &t)) == 0)
		err = ll_fill_attr(fs, e, n, &t, &st);
	epoch_leave(e);
	e = NULL;
	if (err < 0)
		goto out;
	/* Modes and owners are the mount's; one that changes nothing is
	 * fine (sed -i copies them onto its temporary file). A variable's
	 * override may go between 0600 (private) and 0644. */
	err = -EPERM;
	if (((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != st.st_uid) ||
	    ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != st.st_gid))
		goto out;
	if ((to_set & FUSE_SET_ATTR_MODE) && (attr->st_mode & 07777) != (st.st_mode & 07777)) {
		mode_t want = attr->st_mode & 07777;

		if (n->kind != NODE_VAR || (want != 0600 && want != 0644) || !tree_named(fs->tree, n->ino))
			goto out;
		if ((err = changeable(n, n->name)) < 0)
			goto out;
		if ((err = commit_privacy(fs, &who, n->backend, n->arch, n->name, want == 0600,
					  &l)) < 0)
			goto out;
		tree_mark_changed(fs->tree, n);
		rebind(fs, t.vn, n, NULL, 0, want == 0600);
		err = inval_add_inode(&l, ino);
		if (err < 0)
			goto out;
	}
	err = 0;
	if ((to_set & FUSE_SET_ATTR_SIZE) && n->kind != NODE_VAR) {
		err = ll_is_dir(n) ? -EISDIR : -EACCES;
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
		if ((err = changeable(n, n->name)) < 0)
			goto out;
		tree_mark_changed(fs->tree, n);
		err = commit_truncate(fs, &who, n->backend, n->arch, n->name, attr->st_size, &l);
		if (err == 0) {
			rebind(fs, t.vn, n, NULL, 0, t.secret);
			err = inval_add_inode(&l, ino);
		}
	}
	if (err < 0)
		goto out;
	/* Times are accepted and not kept: they follow the generation. */
	ll_target_release(fs, &t);
	e = epoch_enter(&fs->state);
	if (of && of->w && !ll_is_dir(n)) {
		ll_fill_attr_write(fs, n, of, &st);
		fuse_reply_attr(req, &st, 0);
		goto leave;
	}
	if ((err = ll_reply_attr(req, fs, e, ino)) < 0)
		goto out;
	goto leave;
out:
	reply_err(req, err);
leave:
	ll_target_release(fs, &t);
	if (e)
		epoch_leave(e);
	queue_inval(fs, &l, false);
}

void envfs_ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	const struct hist_writer who = ll_writer(req);
	struct envfs *fs = fs_of(req);
	struct inval_list l = INVAL_LIST_INIT;
	struct node *p = tree_get(fs->tree, parent);
	int err;

	counters_inc(OP_UNLINK);
	if (!p)
		err = -ESTALE;
	else if ((err = ll_may_change(fs, req)) < 0)
		;
	else if (p->kind == NODE_BACKEND)
		err = -EPERM;       /* an arch, or the host entry: the specs' */
	else if (p->kind != NODE_ARCH || reserved_name(name))
		err = -EACCES;
	else if ((err = changeable(p, name)) < 0)
		;
	else {
		mark_changed(fs, parent, name);
		/* An open of the old inode must not bring the name back. */
		if ((err = commit_remove(fs, &who, p->backend, p->arch, name, &l)) == 0)
			tree_unlink(fs->tree, parent, name);
	}
	/* The kernel drops the name itself; the rest (views, derived
	 * values) is sent once it lets go of the directory. */
	queue_inval(fs, &l, false);
	reply_err(req, err);
}

/* Takes the entries of name in parent out of l. */
static void inval_drop_entry(struct inval_list *l, fuse_ino_t parent, const char *name)
{
	size_t i, kept = 0, len = strlen(name);

	for (i = 0; i < l->n; i++) {
		struct inval_item *it = &l->v[i];

		if (it->parent == parent && it->name_len == len && !memcmp(it->name, name, len))
			free(it->name);
		else
			l->v[kept++] = *it;
	}
	l->n = kept;
}

void envfs_ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			    fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	const struct hist_writer who = ll_writer(req);
	struct envfs *fs = fs_of(req);
	struct inval_list l = INVAL_LIST_INIT;
	struct node *p = tree_get(fs->tree, parent), *np = tree_get(fs->tree, newparent);
	int err;

	counters_inc(OP_RENAME);
	if (!p || !np) {
		err = -ESTALE;
		goto out;
	}
	if ((err = ll_may_change(fs, req)) < 0)
		goto out;
	if (flags & ~RENAME_NOREPLACE) {
		err = -EINVAL;        /* RENAME_EXCHANGE, RENAME_WHITEOUT */
		goto out;
	}
	if (p->kind == NODE_BACKEND || np->kind == NODE_BACKEND) {
		err = -EPERM;       /* arches and the host entry are the specs' */
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
	if ((err = changeable(p, name)) < 0 || (err = changeable(p, newname)) < 0)
		goto out;
	mark_changed(fs, parent, name);
	mark_changed(fs, parent, newname);
	if ((err = commit_move(fs, &who, p->backend, p->arch, name, newname,
			       flags & RENAME_NOREPLACE, &l)) < 0)
		goto out;
	/* The kernel now holds name's inode under newname; make the tree
	 * agree. Should that fail, dropping both names (once the kernel
	 * lets go of the directory) makes it look them up again. */
	if (tree_rename(fs->tree, parent, name, newname) < 0) {
		log_err("rename %s -> %s: %s", name, newname,
			strerror(ENOMEM));
		inval_add_entry(&l, parent, newname, strlen(newname));
	} else if (ll_entry_current(fs, parent, newname)) {
		/* The kernel moved the inode onto newname itself, and it
		 * holds newname's value: dropping that entry would evict the
		 * inode (FUSE keeps none without a dentry), and the next
		 * lookup would give a new number, so that for a moment
		 * stat and ls -i disagree. */
		inval_drop_entry(&l, parent, newname);
	} else {
		inval_add_entry(&l, parent, newname, strlen(newname));
	}
	inval_add_entry(&l, parent, name, strlen(name));
out:
	queue_inval(fs, &l, false);
	reply_err(req, err);
}

/* The tree's shape is the specs': only variables come and go. */
static void refuse_shape_change(fuse_req_t req)
{
	int err = ll_may_change(fs_of(req), req);

	reply_err(req, err < 0 ? err : -EPERM);
}

void envfs_ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			   mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	counters_inc(OP_MKNOD);
	refuse_shape_change(req);
}

void envfs_ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	refuse_shape_change(req);
}

void envfs_ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent, (void)name;
	refuse_shape_change(req);
}

void envfs_ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			     const char *name)
{
	(void)link, (void)parent, (void)name;
	refuse_shape_change(req);
}

void envfs_ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
			  const char *newname)
{
	(void)ino, (void)newparent, (void)newname;
	refuse_shape_change(req);
}

