/* Directories: opendir, readdir(plus), releasedir; see ll_internal.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "counters.h"
#include "ll_internal.h"

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
	bool link;               /* a backend's host entry */
};

/* The file type a listing shows for d. */
static mode_t dent_type(const struct dent *d)
{
	return d->dir ? S_IFDIR : d->link ? S_IFLNK : S_IFREG;
}

static enum dent_kind dent_node(struct envfs *fs, struct node *p, const char *name,
				enum node_kind kind, enum view_kind view,
				struct dent *d, int *err)
{
	if ((*err = tree_intern(fs->tree, p, name, strlen(name), kind, view, &d->node)) < 0)
		return DENT_END;
	d->name = d->node->name;
	d->ino = d->node->ino;
	d->dir = ll_is_dir(d->node);
	d->link = d->node->kind == NODE_HOST;
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
		{ "history", INO_HISTORY },
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
	case NODE_BACKEND: {
		const char *why;

		/* The arches, then the host entry when there is one. */
		if (j > e->ndirs)
			return DENT_END;
		if (j == e->ndirs)
			return epoch_host(e, p->backend, &why) ?
			       dent_node(fs, p, "host", NODE_HOST, 0, d, err) : DENT_END;
		if (strcmp(e->dirs[j].snap->backend, p->backend))
			return DENT_HOLE;
		return dent_node(fs, p, e->dirs[j].snap->arch, NODE_ARCH, 0, d, err);
	}
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
		       struct fuse_entry_param *ep, struct target *t)
{
	memset(ep, 0, sizeof(*ep));
	memset(t, 0, sizeof(*t));
	ep->attr.st_ino = d->ino;
	ep->attr.st_mode = dent_type(d);
	if (!d->node || d->node->kind == NODE_VIEW ||
	    ll_resolve_node(fs, cur, d->node, t) < 0 ||
	    ll_fill_attr(fs, cur, d->node, t, &ep->attr) < 0) {
		ll_target_release(fs, t);
		ep->attr.st_ino = d->ino;
		ep->attr.st_mode = dent_type(d);
		return;
	}
	ll_target_entry(t, ep);
	ep->attr_timeout = ll_attr_timeout(fs, d->node);
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
	fuse_ino_t *counted = NULL;    /* readdirplus: lookups to undo */
	size_t ncounted = 0, pos = 0, i, need;
	char *buf = NULL;
	struct target t = { 0 };
	struct dent d;
	enum dent_kind k;
	int err;

	if ((err = ll_need_dir(p)) < 0)
		goto out;
	if (off < 0 || (err = ll_resolve_node(fs, e, p, &t)) < 0) {
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
			struct target et;

			dent_param(fs, cur, &d, &ep, &et);
			need = fuse_add_direntry_plus(req, buf + pos, size - pos, d.name,
						      &ep, (off_t)(i + 1));
			/* Each entry with attributes is a lookup to the
			 * kernel: count it before the kernel can forget it. */
			if (need <= size - pos && ep.ino) {
				ll_target_count(fs, d.node, &et);
				counted[ncounted++] = ep.ino;
			}
			ll_target_release(fs, &et);
			if (need > size - pos)
				break;
		} else {
			struct stat st = { .st_ino = d.ino, .st_mode = dent_type(&d) };

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
			tree_forget(fs->tree, counted[i], 1);
	goto leave;
out:
	for (i = 0; i < ncounted; i++)
		tree_forget(fs->tree, counted[i], 1);
	reply_err(req, err);
leave:
	ll_target_release(fs, &t);
	free(counted);
	free(buf);
	epoch_leave(cur);
}

void envfs_ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct envfs *fs = fs_of(req);
	struct epoch *e = epoch_enter(&fs->state);
	struct node *n = tree_get(fs->tree, ino);
	struct dir_handle *dh;
	struct target t = { 0 };
	int err;

	counters_inc(OP_OPENDIR);
	if (fs->zero_opendir) {
		err = -ENOSYS;     /* see envfs_ll_init */
		goto out;
	}
	if ((err = ll_need_dir(n)) < 0 || (err = ll_resolve_node(fs, e, n, &t)) < 0)
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
	ll_target_release(fs, &t);
	epoch_leave(e);
}

void envfs_ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			     struct fuse_file_info *fi)
{
	counters_inc(OP_READDIR);
	do_readdir(req, ino, size, off, fi, false);
}

void envfs_ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
				 struct fuse_file_info *fi)
{
	counters_inc(OP_READDIRPLUS);
	do_readdir(req, ino, size, off, fi, true);
}

void envfs_ll_releasedir(fuse_req_t req, fuse_ino_t ino,
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

