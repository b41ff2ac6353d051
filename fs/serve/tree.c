/* The inode table; see tree.h. A vector by inode number plus a hash of
 * (parent, name), both under one mutex: lookups are short and the table
 * is small next to the snapshots it names. Nodes and names come from one
 * arena (nodes are never freed before the tree), which saves a malloc
 * header and the rounding of every node. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "tree.h"

struct tree {
	pthread_mutex_t lock;
	struct node **by_ino;    /* index = ino; slot 0 unused */
	size_t nino, cap_ino;
	struct node **buckets;   /* power of two */
	size_t nbuckets, nnodes;
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

static size_t hash_key(fuse_ino_t parent, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)parent;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 1099511628211ull;
	}
	return (size_t)(h ^ (h >> 29));
}

static struct node *find_locked(struct tree *t, fuse_ino_t parent,
				const char *name, size_t len)
{
	struct node *n = t->buckets[hash_key(parent, name, len) & (t->nbuckets - 1)];

	for (; n; n = n->hnext)
		if (n->parent == parent && n->name_len == len &&
		    !memcmp(n->name, name, len))
			return n;
	return NULL;
}

static int grow_buckets(struct tree *t)
{
	size_t nb = t->nbuckets * 2, i;
	struct node **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < t->nbuckets; i++) {
		struct node *n = t->buckets[i], *next;

		for (; n; n = next) {
			size_t h = hash_key(n->parent, n->name, n->name_len) & (nb - 1);

			next = n->hnext;
			n->hnext = b[h];
			b[h] = n;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = nb;
	return 0;
}

/* Adds a node under t->lock; the inode number is the next free one. */
static int add_locked(struct tree *t, const struct node *parent, const char *name,
		      size_t len, enum node_kind kind, enum view_kind view,
		      struct node **out)
{
	struct node *n;
	size_t h;
	int err;

	if (t->nnodes + 1 > t->nbuckets && (err = grow_buckets(t)) < 0)
		return err;
	if (t->nino == t->cap_ino) {
		size_t cap = t->cap_ino ? t->cap_ino * 2 : 64;
		struct node **v = realloc(t->by_ino, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->by_ino = v;
		t->cap_ino = cap;
	}
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
	t->by_ino[t->nino++] = n;
	h = hash_key(n->parent, name, len) & (t->nbuckets - 1);
	n->hnext = t->buckets[h];
	t->buckets[h] = n;
	t->nnodes++;
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
	t->nbuckets = 64;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->buckets)
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

void tree_free(struct tree *t)
{
	if (!t)
		return;
	arena_free(t->arena);
	free(t->by_ino);
	free(t->buckets);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

struct node *tree_get(struct tree *t, fuse_ino_t ino)
{
	struct node *n = NULL;

	pthread_mutex_lock(&t->lock);
	if (ino < t->nino)
		n = t->by_ino[ino];
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
	struct node **pp = &t->buckets[hash_key(n->parent, n->name, n->name_len) &
				       (t->nbuckets - 1)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == n) {
			*pp = n->hnext;
			n->hnext = NULL;
			t->nnodes--;
			return;
		}
	}
}

int tree_rename(struct tree *t, fuse_ino_t parent, const char *from, const char *to)
{
	size_t len = strlen(to), h;
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
	/* b keeps its number (the kernel may still hold it, unlinked) but is
	 * found by name no more. */
	if ((b = find_locked(t, parent, to, len)))
		unhash_locked(t, b);
	unhash_locked(t, a);
	t->by_ino[n->ino] = n;
	h = hash_key(parent, to, len) & (t->nbuckets - 1);
	n->hnext = t->buckets[h];
	t->buckets[h] = n;
	t->nnodes++;
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
	struct node *n = NULL;

	pthread_mutex_lock(&t->lock);
	if (ino < t->nino && (n = t->by_ino[ino]) &&
	    find_locked(t, n->parent, n->name, n->name_len) != n)
		n = NULL;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void tree_lookup_add(struct tree *t, struct node *node, uint64_t n)
{
	/* By number: a node replaced by a rename counts on its successor. */
	pthread_mutex_lock(&t->lock);
	t->by_ino[node->ino]->nlookup += n;
	pthread_mutex_unlock(&t->lock);
}

void tree_forget(struct tree *t, fuse_ino_t ino, uint64_t n)
{
	struct node *node;

	pthread_mutex_lock(&t->lock);
	node = ino < t->nino ? t->by_ino[ino] : NULL;
	if (node && ino != FUSE_ROOT_ID)
		node->nlookup = node->nlookup > n ? node->nlookup - n : 0;
	pthread_mutex_unlock(&t->lock);
}

bool tree_known(struct tree *t, const struct node *node)
{
	bool known;

	pthread_mutex_lock(&t->lock);
	known = t->by_ino[node->ino]->nlookup > 0;
	pthread_mutex_unlock(&t->lock);
	return known;
}

void tree_mark_changed(struct tree *t, const struct node *node)
{
	/* By number, like the lookup count: a rename's successor inherits. */
	pthread_mutex_lock(&t->lock);
	t->by_ino[node->ino]->changed = true;
	pthread_mutex_unlock(&t->lock);
}

bool tree_changed(struct tree *t, const struct node *node)
{
	bool changed;

	pthread_mutex_lock(&t->lock);
	changed = t->by_ino[node->ino]->changed;
	pthread_mutex_unlock(&t->lock);
	return changed;
}
