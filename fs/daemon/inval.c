/* Diffing two epochs into kernel invalidations; see inval.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "log.h"
#include "inval.h"

static int push(struct inval_list *l, fuse_ino_t ino, fuse_ino_t parent,
		const char *name, size_t name_len)
{
	struct inval_item *it;

	if (GROW(l->v, l->cap, l->n, 16) < 0)
		return -ENOMEM;
	it = &l->v[l->n];
	memset(it, 0, sizeof(*it));
	it->ino = ino;
	it->parent = parent;
	if (name) {
		if (!(it->name = xstrndup(name, name_len)))
			return -ENOMEM;
		it->name_len = name_len;
	}
	l->n++;
	return 0;
}

int inval_add_inode(struct inval_list *l, fuse_ino_t ino)
{
	return push(l, ino, 0, NULL, 0);
}

int inval_add_entry(struct inval_list *l, fuse_ino_t parent, const char *name,
		    size_t name_len)
{
	return push(l, 0, parent, name, name_len);
}

void inval_list_release(struct inval_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* The kernel's node for a child name, or NULL when it cannot cache it. */
static struct node *known_child(struct envfs *fs, const struct node *parent,
				const char *name, size_t len)
{
	struct node *n;

	if (!parent || !tree_known(fs->tree, parent))
		return NULL;
	n = tree_find(fs->tree, parent->ino, name, len);
	return n && tree_known(fs->tree, n) ? n : NULL;
}

/* A name appeared or disappeared in dir: drop the (possibly negative)
 * dentry and the directory's own attributes. */
static int name_changed(struct envfs *fs, struct inval_list *l,
			const struct node *dir, const char *name, size_t len)
{
	int err;

	l->changed = true;
	if (!dir || !tree_known(fs->tree, dir))
		return 0;
	if ((err = inval_add_entry(l, dir->ino, name, len)) < 0)
		return err;
	return inval_add_inode(l, dir->ino);
}

static bool visible(const struct snap_var *v)
{
	return epoch_var_visible(v);
}

static bool same_file(const struct snap_var *a, const struct snap_var *b)
{
	return a->secret == b->secret && a->value_len == b->value_len &&
	       (!a->value_len || !memcmp(a->value, b->value, a->value_len));
}

static int diff_views(struct envfs *fs, const struct node *dir,
		      struct epoch_dir *od, struct epoch_dir *nd,
		      struct inval_list *l)
{
	const struct view_meta *om, *nm;
	int k, err = 0;

	/* By size and checksum: a large view's bytes are not kept, and
	 * rendering one at a time keeps the reload's peak low. */
	for (k = 0; k < VIEW_COUNT; k++) {
		const char *name = view_file_name(k);
		struct node *n = known_child(fs, dir, name, strlen(name));

		if (!n)
			continue;
		if ((err = epoch_view_meta(od, k, &om)) < 0 ||
		    (err = epoch_view_meta(nd, k, &nm)) < 0)
			break;
		/* New bytes are a new inode (tree.h): the kernel looks the
		 * name up again and keeps the old inode's bytes whole. The
		 * same bytes stay with their inodes, now from nd. */
		if (!view_meta_equal(om, nm) ||
		    view_is_secret(od->snap, k) != view_is_secret(nd->snap, k)) {
			if ((err = inval_add_entry(l, dir->ino, name, strlen(name))) < 0)
				break;
		} else {
			tree_vnode_move_view(fs->tree, n, nd->snap, nm);
		}
	}
	return err;
}

/* Both epochs have this directory: compare variable by variable (both
 * lists are sorted by name), then the views. */
static int diff_dir(struct envfs *fs, const struct node *bnode,
		    struct epoch_dir *od, struct epoch_dir *nd,
		    struct inval_list *l)
{
	const struct snapshot *os = od->snap, *ns = nd->snap;
	const struct node *dir = NULL;
	struct blob *odig = NULL, *ndig = NULL;
	size_t i = 0, j = 0;
	int err = 0;

	if (bnode && tree_known(fs->tree, bnode))
		dir = tree_find(fs->tree, bnode->ino, os->arch, strlen(os->arch));
	while (i < os->nvars || j < ns->nvars) {
		const struct snap_var *a = i < os->nvars ? &os->vars[i] : NULL;
		const struct snap_var *b = j < ns->nvars ? &ns->vars[j] : NULL;
		int c;

		if (!a)
			c = 1;
		else if (!b)
			c = -1;
		else
			c = strcmp(a->name, b->name);
		if (c < 0)
			b = NULL, i++;
		else if (c > 0)
			a = NULL, j++;
		else
			i++, j++;
		if (!visible(a) && !visible(b))
			continue;
		if (!visible(a) || !visible(b)) {
			const struct snap_var *v = visible(a) ? a : b;

			if ((err = name_changed(fs, l, dir, v->name, v->name_len)) < 0)
				goto out;
			continue;
		}
		if (!same_file(a, b)) {
			struct node *n = known_child(fs, dir, a->name, a->name_len);

			/* The new value is a new inode (tree.h): the kernel
			 * looks the name up again, and what it holds of the
			 * old inode stays that inode's, whole. */
			l->changed = true;
			if (n && (err = inval_add_entry(l, dir->ino, a->name, a->name_len)) < 0)
				goto out;
		}
	}
	/* The digest covers every exported value; the other views can change
	 * with provenance alone, so they are compared where cached. */
	if ((err = epoch_view(od, VIEW_DIGEST, &odig)) < 0 ||
	    (err = epoch_view(nd, VIEW_DIGEST, &ndig)) < 0)
		goto out;
	if (!blob_equal(odig, ndig))
		l->changed = true;
	err = diff_views(fs, dir, od, nd, l);
out:
	blob_unref(odig);
	blob_unref(ndig);
	return err;
}

/* Order of directories in an epoch: backend, then arch. */
static int dir_order(const struct epoch_dir *a, const struct epoch_dir *b)
{
	int c = strcmp(a->snap->backend, b->snap->backend);

	return c ? c : strcmp(a->snap->arch, b->snap->arch);
}

/* The host entries of both epochs (env/BACKEND/host): a changed target is a
 * changed symlink, an entry that came or went a changed name. */
static int diff_hosts(struct envfs *fs, struct epoch *old, struct epoch *new,
		      struct node *env, struct inval_list *l)
{
	size_t i;
	int err = 0;

	for (i = 0; i < new->nhosts && err == 0; i++) {
		const char *b = new->hosts[i].backend, *na = new->hosts[i].arch, *why;
		const char *oa = epoch_host(old, b, &why);
		struct node *bnode, *h;

		if (!oa == !na && (!na || !strcmp(oa, na)))
			continue;
		l->changed = true;
		bnode = env && tree_known(fs->tree, env) ?
			tree_find(fs->tree, INO_ENV, b, strlen(b)) : NULL;
		if (!oa || !na) {
			err = name_changed(fs, l, bnode, "host", 4);
			continue;
		}
		if ((h = known_child(fs, bnode, "host", 4)) &&
		    (err = inval_add_entry(l, bnode->ino, "host", 4)) == 0)
			err = inval_add_inode(l, h->ino);
	}
	return err;
}

int inval_diff(struct envfs *fs, struct epoch *old, struct epoch *new,
	       struct inval_list *out)
{
	/* Without fs, only whether anything changed (no tree, no views). */
	struct node *env = fs ? tree_get(fs->tree, INO_ENV) : NULL;
	size_t i = 0, j = 0;
	int err = 0;

	while (i < old->ndirs || j < new->ndirs) {
		struct epoch_dir *a = i < old->ndirs ? &old->dirs[i] : NULL;
		struct epoch_dir *b = j < new->ndirs ? &new->dirs[j] : NULL;
		struct epoch_dir *d;
		const char *backend;
		struct node *bnode;
		int c = !a ? 1 : !b ? -1 : dir_order(a, b);

		if (c == 0 && a->snap == b->snap) {
			/* Shared by an override commit: nothing changed. */
			i++, j++;
			continue;
		}
		if (c == 0) {
			bnode = env && tree_known(fs->tree, env) ?
				tree_find(fs->tree, INO_ENV, a->snap->backend,
					  strlen(a->snap->backend)) : NULL;
			if ((err = diff_dir(fs, bnode, a, b, out)) < 0)
				return err;
			i++, j++;
			continue;
		}
		/* A directory only one side has: its arch name, and maybe its
		 * backend, appeared or disappeared. */
		d = c < 0 ? a : b;
		c < 0 ? i++ : j++;
		backend = d->snap->backend;
		if (epoch_has_backend(old, backend) != epoch_has_backend(new, backend) &&
		    (err = name_changed(fs, out, env, backend, strlen(backend))) < 0)
			return err;
		bnode = fs ? tree_find(fs->tree, INO_ENV, backend, strlen(backend)) : NULL;
		if ((err = name_changed(fs, out, bnode, d->snap->arch,
					strlen(d->snap->arch))) < 0)
			return err;
	}
	return diff_hosts(fs, old, new, env, out);
}

int inval_send(struct fuse_session *se, const struct inval_list *l)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < l->n; i++) {
		const struct inval_item *it = &l->v[i];
		int r;

		if (it->parent)
			r = fuse_lowlevel_notify_inval_entry(se, it->parent, it->name,
							     it->name_len);
		else
			r = fuse_lowlevel_notify_inval_inode(se, it->ino, 0, 0);
		if (r == 0 || r == -ENOENT || r == -EBADF || r == -ENODEV)
			continue;
		log_warn("cache invalidation of inode %lu: %s",
			(unsigned long)(it->parent ? it->parent : it->ino), strerror(-r));
		bad++;
	}
	return bad;
}
