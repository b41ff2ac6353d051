/* The inode table; see tree.h. A vector by inode number plus a hash
 * index (hindex.h) of its nodes' numbers by (parent, name), both under
 * one mutex: lookups are short and the table is small next to the
 * snapshots it names. Nodes and names come from one
 * arena (nodes are never freed before the tree), which saves a malloc
 * header and the rounding of every node. Vnodes are malloc'ed and freed
 * when the kernel forgets them; their numbers go to a free list, so the
 * vector stays as long as the most inodes ever held at once. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "grow.h"
#include "hindex.h"
#include "tree.h"

/* What an inode number is: a node, or a vnode, or nothing (free). */
struct slot {
	struct node *node;
	struct vnode *vn;
};

struct tree {
	pthread_mutex_t lock;
	struct slot *by_ino;     /* index = ino; slot 0 unused */
	size_t nino, cap_ino;
	fuse_ino_t *free_ino;    /* numbers of freed vnodes, to reuse */
	uint32_t *free_gen;      /* ... and how often each was used */
	size_t nfree, cap_free;
	struct hindex names;     /* inode numbers of the nodes found by
	                            (parent, name) */
	struct arena *arena;     /* every node and name, also those a
	                            tree_rename replaced */
};

/* A node and its name from the arena; NULL on out of memory. */
static struct node *node_alloc(struct tree *t, const char *name, size_t len)
{
	struct node *n;
	char *p;

	if (len > UINT32_MAX || !(n = arena_alloc(t->arena, sizeof(*n))) ||
	    !(p = arena_alloc_text(t->arena, len + 1)))
		return NULL;
	memcpy(p, name, len);
	n->name = p;
	n->name_len = (uint32_t)len;
	return n;
}

static uint64_t hash_key(fuse_ino_t parent, const char *name, size_t len)
{
	uint64_t p = (uint64_t)parent;

	return hindex_hash(name, len, hindex_hash(&p, sizeof(p), HINDEX_SEED));
}

static struct node *find_locked(struct tree *t, fuse_ino_t parent,
				const char *name, size_t len)
{
	struct hindex_probe p;
	size_t i;

	for (i = hindex_first(&t->names, hash_key(parent, name, len), &p); i != HINDEX_NONE;
	     i = hindex_next(&t->names, &p)) {
		struct node *n = t->by_ino[i].node;

		if (n->parent == parent && n->name_len == len && !memcmp(n->name, name, len))
			return n;
	}
	return NULL;
}

/* Makes n found by its (parent, name). */
static int hash_locked(struct tree *t, struct node *n)
{
	return hindex_insert(&t->names, hash_key(n->parent, n->name, n->name_len), n->ino);
}

/* Makes room for one more number at the end of by_ino. */
static int grow_ino_locked(struct tree *t)
{
	return GROW(t->by_ino, t->cap_ino, t->nino, 64);
}

/* Adds a node under t->lock; the inode number is the next one. */
static int add_locked(struct tree *t, const struct node *parent, const char *name,
		      size_t len, enum node_kind kind, enum view_kind view,
		      struct node **out)
{
	struct node *n;
	int err;

	if ((err = grow_ino_locked(t)) < 0)
		return err;
	if (!(n = node_alloc(t, name, len)))
		return -ENOMEM;
	n->ino = t->nino;
	n->parent = parent ? parent->ino : 0;
	n->kind = kind;
	n->view = view;
	if (kind == NODE_BACKEND)
		n->backend = n->name;
	else if (kind == NODE_ARCH) {
		n->backend = parent->backend;
		n->arch = n->name;
	} else if (parent) {
		n->backend = parent->backend;
		n->arch = parent->arch;
	}
	if ((err = hash_locked(t, n)) < 0)
		return err;
	t->by_ino[t->nino++] = (struct slot){ n, NULL };
	*out = n;
	return 0;
}

int tree_new(struct tree **out)
{
	static const struct {
		const char *name;
		enum node_kind kind;
	} fixed[] = {
		{ "status", NODE_STATUS },
		{ "diagnostics", NODE_DIAGNOSTICS },
		{ "env", NODE_ENV },
		{ "history", NODE_HISTORY },
	};
	struct tree *t = calloc(1, sizeof(*t));
	struct node *root, *n;
	size_t i;
	int err = -ENOMEM;

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	if (!(t->arena = arena_new()))
		goto out;
	/* Slot 0 is no inode; the root is FUSE_ROOT_ID (1). */
	t->nino = FUSE_ROOT_ID;
	t->cap_ino = 64;
	t->by_ino = calloc(t->cap_ino, sizeof(*t->by_ino));
	if (!t->by_ino)
		goto out;
	if ((err = add_locked(t, NULL, "", 0, NODE_ROOT, 0, &root)) < 0)
		goto out;
	root->nlookup = 1;  /* the kernel always holds the root */
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if ((err = add_locked(t, root, fixed[i].name, strlen(fixed[i].name),
				      fixed[i].kind, 0, &n)) < 0)
			goto out;
	*out = t;
	t = NULL;
	err = 0;
out:
	tree_free(t);
	return err;
}

/* What v holds, released: its bytes, or its view's rendering. */
static void vnode_content_free(struct tree *t, struct vnode *v)
{
	if (t->by_ino[v->name].node->kind != NODE_VIEW) {
		blob_unref(v->bytes);
	} else if (v->view) {
		snapshot_unref(v->view->snap);
		epoch_dir_free(v->view->own);
		free(v->view);
	}
}

void tree_free(struct tree *t)
{
	size_t i;

	if (!t)
		return;
	/* At exit the kernel has let go of everything it held. */
	for (i = 0; i < t->nino; i++) {
		if (t->by_ino[i].vn) {
			vnode_content_free(t, t->by_ino[i].vn);
			free(t->by_ino[i].vn);
		}
	}
	arena_free(t->arena);
	free(t->by_ino);
	free(t->free_ino);
	free(t->free_gen);
	hindex_release(&t->names);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* The node of ino, for a vnode its name's; t->lock held. */
static struct node *get_locked(struct tree *t, fuse_ino_t ino)
{
	struct slot *s;

	if (ino >= t->nino)
		return NULL;
	s = &t->by_ino[ino];
	return s->vn ? t->by_ino[s->vn->name].node : s->node;
}

struct node *tree_get(struct tree *t, fuse_ino_t ino)
{
	struct node *n;

	pthread_mutex_lock(&t->lock);
	n = get_locked(t, ino);
	pthread_mutex_unlock(&t->lock);
	return n;
}

struct node *tree_find(struct tree *t, fuse_ino_t parent, const char *name,
		       size_t name_len)
{
	struct node *n;

	pthread_mutex_lock(&t->lock);
	n = find_locked(t, parent, name, name_len);
	pthread_mutex_unlock(&t->lock);
	return n;
}

int tree_intern(struct tree *t, struct node *parent, const char *name,
		size_t name_len, enum node_kind kind, enum view_kind view,
		struct node **out)
{
	int err = 0;

	pthread_mutex_lock(&t->lock);
	*out = find_locked(t, parent->ino, name, name_len);
	if (!*out)
		err = add_locked(t, parent, name, name_len, kind, view, out);
	pthread_mutex_unlock(&t->lock);
	return err;
}

static void unhash_locked(struct tree *t, struct node *n)
{
	hindex_remove(&t->names, hash_key(n->parent, n->name, n->name_len), n->ino);
}

int tree_rename(struct tree *t, fuse_ino_t parent, const char *from, const char *to)
{
	size_t len = strlen(to);
	struct node *a, *b, *n;
	int err = 0;

	if (!strcmp(from, to))
		return 0;
	pthread_mutex_lock(&t->lock);
	if (!(a = find_locked(t, parent, from, strlen(from))))
		goto out;
	err = -ENOMEM;
	if (!(n = node_alloc(t, to, len)))
		goto out;
	n->ino = a->ino;
	n->parent = a->parent;
	n->backend = a->backend;
	n->arch = a->arch;
	n->nlookup = a->nlookup;
	n->kind = a->kind;
	n->view = a->view;
	n->changed = a->changed;
	/* The inodes go with the name: the kernel holds them under the new
	 * one now. */
	n->vnodes = a->vnodes;
	a->vnodes = NULL;
	/* b keeps its number (the kernel may still hold it, unlinked) but is
	 * found by name no more. */
	b = find_locked(t, parent, to, len);
	/* The index holds numbers, and a and n share one: a leaves before n
	 * comes in. When n cannot (the index could not grow), a goes back
	 * into the slot it left, which takes no growth and cannot fail, and
	 * nothing has changed. */
	unhash_locked(t, a);
	if (hash_locked(t, n) < 0) {
		a->vnodes = n->vnodes;
		(void)hash_locked(t, a);
		goto out;
	}
	if (b)
		unhash_locked(t, b);
	t->by_ino[n->ino].node = n;
	err = 0;
out:
	pthread_mutex_unlock(&t->lock);
	return err;
}

void tree_unlink(struct tree *t, fuse_ino_t parent, const char *name)
{
	struct node *n;

	pthread_mutex_lock(&t->lock);
	if ((n = find_locked(t, parent, name, strlen(name))))
		unhash_locked(t, n);
	pthread_mutex_unlock(&t->lock);
}

struct node *tree_named(struct tree *t, fuse_ino_t ino)
{
	struct node *n;

	pthread_mutex_lock(&t->lock);
	if ((n = get_locked(t, ino)) && find_locked(t, n->parent, n->name, n->name_len) != n)
		n = NULL;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void tree_lookup_add(struct tree *t, struct node *node, uint64_t n)
{
	/* By number: a node replaced by a rename counts on its successor. */
	pthread_mutex_lock(&t->lock);
	t->by_ino[node->ino].node->nlookup += n;
	pthread_mutex_unlock(&t->lock);
}

/* Frees v when neither the kernel nor a handler holds it; t->lock held. */
static void vnode_maybe_free_locked(struct tree *t, struct vnode *v)
{
	struct node *name;
	struct vnode **pp;

	if (v->nlookup || v->refs)
		return;
	name = t->by_ino[v->name].node;
	for (pp = &name->vnodes; *pp; pp = &(*pp)->next) {
		if (*pp == v) {
			*pp = v->next;
			break;
		}
	}
	/* The number is reused; without room to remember it, it is not. */
	t->by_ino[v->ino].vn = NULL;
	if (t->nfree < t->cap_free) {
		t->free_ino[t->nfree] = v->ino;
		t->free_gen[t->nfree++] = v->generation + 1;
	}
	vnode_content_free(t, v);
	free(v);
}

void tree_forget(struct tree *t, fuse_ino_t ino, uint64_t n)
{
	struct slot *s;
	struct node *node;

	pthread_mutex_lock(&t->lock);
	s = ino < t->nino ? &t->by_ino[ino] : NULL;
	if (s && s->vn) {
		struct vnode *v = s->vn;

		node = t->by_ino[v->name].node;
		node->nlookup = node->nlookup > n ? node->nlookup - n : 0;
		v->nlookup = v->nlookup > n ? v->nlookup - n : 0;
		vnode_maybe_free_locked(t, v);
	} else if (s && s->node && ino != FUSE_ROOT_ID) {
		node = s->node;
		node->nlookup = node->nlookup > n ? node->nlookup - n : 0;
	}
	pthread_mutex_unlock(&t->lock);
}

bool tree_known(struct tree *t, const struct node *node)
{
	bool known;

	pthread_mutex_lock(&t->lock);
	known = t->by_ino[node->ino].node->nlookup > 0;
	pthread_mutex_unlock(&t->lock);
	return known;
}

void tree_mark_changed(struct tree *t, const struct node *node)
{
	/* By number, like the lookup count: a rename's successor inherits. */
	pthread_mutex_lock(&t->lock);
	t->by_ino[node->ino].node->changed = true;
	pthread_mutex_unlock(&t->lock);
}

bool tree_changed(struct tree *t, const struct node *node)
{
	bool changed;

	pthread_mutex_lock(&t->lock);
	changed = t->by_ino[node->ino].node->changed;
	pthread_mutex_unlock(&t->lock);
	return changed;
}

/* ---- vnodes ------------------------------------------------------------ */

static bool holds(const struct vnode *v, const char *value, size_t len, bool secret)
{
	return v->secret == secret && v->bytes->len == len + 1 &&
	       (!len || !memcmp(v->bytes->data, value, len));
}

/* The vnode of name node cur holding these bytes, or NULL; t->lock held. */
static struct vnode *holding_locked(const struct node *cur, const char *value, size_t len,
				    bool secret)
{
	struct vnode *v;

	for (v = cur->vnodes; v && !holds(v, value, len, secret); v = v->next)
		;
	return v;
}

/* A blob of value and its newline. */
static int file_bytes(const char *value, size_t len, struct blob **out)
{
	int err;

	if ((err = blob_new(value, len + 1, out)) < 0)
		return err;
	(*out)->data[len] = '\n';
	return 0;
}

/* A new vnode of name with a number (v->name and the list are set);
 * t->lock held. NULL for -ENOMEM. */
static struct vnode *vnode_new_locked(struct tree *t, struct node *cur)
{
	struct vnode *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	if (t->nfree) {
		t->nfree--;
		v->ino = t->free_ino[t->nfree];
		v->generation = t->free_gen[t->nfree];
	} else if (grow_ino_locked(t) < 0) {
		free(v);
		return NULL;
	} else {
		v->ino = t->nino++;
	}
	/* Room to remember the number when it is freed, taken now so that
	 * freeing never allocates. */
	if (t->cap_free < t->nino) {
		size_t cap = t->nino * 2;
		fuse_ino_t *fi = realloc(t->free_ino, cap * sizeof(*fi));
		uint32_t *fg = fi ? realloc(t->free_gen, cap * sizeof(*fg)) : NULL;

		if (fi)
			t->free_ino = fi;
		if (fg) {
			t->free_gen = fg;
			t->cap_free = cap;
		}
	}
	v->name = cur->ino;
	v->next = cur->vnodes;
	cur->vnodes = v;
	t->by_ino[v->ino] = (struct slot){ NULL, v };
	return v;
}

int tree_vnode_bind(struct tree *t, const struct node *name, const char *value,
		    size_t len, bool secret, struct vnode **out)
{
	struct blob *bytes = NULL;
	struct vnode *v;
	struct node *cur;
	int err = 0;

	pthread_mutex_lock(&t->lock);
	cur = t->by_ino[name->ino].node;
	if ((v = holding_locked(cur, value, len, secret)))
		goto found;
	pthread_mutex_unlock(&t->lock);
	/* Copied outside the lock: a value is up to 128 KiB. */
	if ((err = file_bytes(value, len, &bytes)) < 0)
		return err;
	pthread_mutex_lock(&t->lock);
	cur = t->by_ino[name->ino].node;
	/* Another handler may have made it meanwhile. */
	if ((v = holding_locked(cur, value, len, secret)))
		goto found;
	err = -ENOMEM;
	if (!(v = vnode_new_locked(t, cur)))
		goto out;
	v->secret = secret;
	v->bytes = bytes;
	bytes = NULL;
found:
	v->refs++;
	*out = v;
	err = 0;
out:
	pthread_mutex_unlock(&t->lock);
	blob_unref(bytes);
	return err;
}

int tree_vnode_bind_view(struct tree *t, const struct node *name, struct snapshot *snap,
			 const struct view_meta *meta, bool secret, struct vnode **out)
{
	struct vnode_view *view = NULL;
	struct vnode *v;
	struct node *cur;
	int err = 0;

	pthread_mutex_lock(&t->lock);
	cur = t->by_ino[name->ino].node;
	for (v = cur->vnodes; v; v = v->next)
		if (v->secret == secret && view_meta_equal(&v->view->meta, meta))
			goto found;
	err = -ENOMEM;
	if (!(view = calloc(1, sizeof(*view))) || !(v = vnode_new_locked(t, cur))) {
		free(view);
		goto out;
	}
	v->secret = secret;
	v->view = view;
	view->meta = *meta;
	view->snap = snapshot_ref(snap);
found:
	v->refs++;
	*out = v;
	err = 0;
out:
	pthread_mutex_unlock(&t->lock);
	return err;
}

struct epoch_dir *tree_vnode_view_dir(struct tree *t, struct vnode *v,
				      struct epoch_dir *cur)
{
	struct epoch_dir *own = NULL, *d;

	pthread_mutex_lock(&t->lock);
	d = cur && cur->snap == v->view->snap ? cur : v->view->own;
	pthread_mutex_unlock(&t->lock);
	if (d)
		return d;
	/* Made outside the lock, kept by the first to come back. A handler
	 * reference keeps v and its own directory alive. */
	if (epoch_dir_alone(v->view->snap, &own) < 0)
		return NULL;
	pthread_mutex_lock(&t->lock);
	if (!v->view->own) {
		v->view->own = own;
		own = NULL;
	}
	d = v->view->own;
	pthread_mutex_unlock(&t->lock);
	epoch_dir_free(own);
	return d;
}

void tree_vnode_move_view(struct tree *t, const struct node *name, struct snapshot *snap,
			  const struct view_meta *meta)
{
	struct snapshot *drop[8];
	struct epoch_dir *own[8];
	struct vnode *v;
	size_t n = 0, i;

	pthread_mutex_lock(&t->lock);
	for (v = t->by_ino[name->ino].node->vnodes; v; v = v->next) {
		/* A vnode in use may be reading its renders; the next reload
		 * moves it. */
		if (v->view->snap == snap || v->refs || !view_meta_equal(&v->view->meta, meta) ||
		    n == sizeof(drop) / sizeof(drop[0]))
			continue;
		drop[n] = v->view->snap;
		own[n++] = v->view->own;
		v->view->snap = snapshot_ref(snap);
		v->view->own = NULL;
	}
	pthread_mutex_unlock(&t->lock);
	for (i = 0; i < n; i++) {
		epoch_dir_free(own[i]);
		snapshot_unref(drop[i]);
	}
}

struct vnode *tree_vnode_get(struct tree *t, fuse_ino_t ino)
{
	struct vnode *v = NULL;

	pthread_mutex_lock(&t->lock);
	if (ino < t->nino && (v = t->by_ino[ino].vn))
		v->refs++;
	pthread_mutex_unlock(&t->lock);
	return v;
}

void tree_vnode_put(struct tree *t, struct vnode *v)
{
	if (!v)
		return;
	pthread_mutex_lock(&t->lock);
	v->refs--;
	vnode_maybe_free_locked(t, v);
	pthread_mutex_unlock(&t->lock);
}

void tree_vnode_lookup_add(struct tree *t, struct vnode *v, uint64_t n)
{
	pthread_mutex_lock(&t->lock);
	v->nlookup += n;
	t->by_ino[v->name].node->nlookup += n;
	pthread_mutex_unlock(&t->lock);
}

struct blob *tree_vnode_bytes(struct tree *t, struct vnode *v, bool *secret)
{
	struct blob *b;

	pthread_mutex_lock(&t->lock);
	b = blob_ref(v->bytes);
	if (secret)
		*secret = v->secret;
	pthread_mutex_unlock(&t->lock);
	return b;
}

bool tree_vnode_sole(struct tree *t, const struct node *name, const char *value,
		     size_t len, bool secret)
{
	struct vnode *v;
	bool sole;

	pthread_mutex_lock(&t->lock);
	v = t->by_ino[name->ino].node->vnodes;
	sole = v && !v->next && holds(v, value, len, secret);
	pthread_mutex_unlock(&t->lock);
	return sole;
}

int tree_vnode_rebind(struct tree *t, struct vnode *v, const char *value, size_t len,
		      bool secret)
{
	struct blob *b, *old;
	int err;

	if ((err = file_bytes(value, len, &b)) < 0)
		return err;
	pthread_mutex_lock(&t->lock);
	old = v->bytes;
	v->bytes = b;
	v->secret = secret;
	pthread_mutex_unlock(&t->lock);
	blob_unref(old);
	return 0;
}
