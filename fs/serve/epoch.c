/* Published epochs; see epoch.h. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "epoch.h"

static int epoch_alloc(size_t ndirs, struct epoch **out)
{
	struct epoch *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->dirs = calloc(ndirs ? ndirs : 1, sizeof(*e->dirs));
	if (!e->dirs) {
		free(e);
		return -ENOMEM;
	}
	atomic_init(&e->refs, 1);
	atomic_init(&e->busy, 0);
	clock_gettime(CLOCK_REALTIME, &e->loaded);
	e->changed = e->loaded;
	*out = e;
	return 0;
}

static int dir_sort_cmp(const void *a, const void *b)
{
	const struct snapshot *x = ((const struct epoch_dir *)a)->snap;
	const struct snapshot *y = ((const struct epoch_dir *)b)->snap;
	int c = strcmp(x->backend, y->backend);

	return c ? c : strcmp(x->arch, y->arch);
}

int epoch_from_resolution(const struct resolution *r, struct epoch **out)
{
	struct epoch *e;
	struct blob *b;
	size_t i;
	int err;

	if ((err = epoch_alloc(r->ndirs, &e)) < 0)
		return err;
	for (i = 0; i < r->ndirs; i++) {
		e->dirs[i].snap = snapshot_ref(r->dirs[i]);
		e->ndirs++;
	}
	/* Lookups binary-search (backend, arch) in byte order; the resolver
	 * keeps each spec's own arch order, so sort here. */
	qsort(e->dirs, e->ndirs, sizeof(*e->dirs), dir_sort_cmp);
	/* Digests go into status on every load, so render them now. */
	for (i = 0; i < e->ndirs; i++) {
		if ((err = epoch_view(&e->dirs[i], VIEW_DIGEST, &b)) < 0)
			goto out;
		blob_unref(b);
	}
	*out = e;
	e = NULL;
out:
	epoch_unref(e);
	return err;
}

int epoch_clone_dirs(const struct epoch *src, struct epoch **out)
{
	struct epoch *e;
	size_t i;
	int k, err;

	if ((err = epoch_alloc(src->ndirs, &e)) < 0)
		return err;
	for (i = 0; i < src->ndirs; i++) {
		struct epoch_dir *d = &e->dirs[i];
		const struct epoch_dir *s = &src->dirs[i];

		d->snap = snapshot_ref(s->snap);
		for (k = 0; k < VIEW_COUNT; k++) {
			struct blob *b = atomic_load(&((struct epoch_dir *)s)->views[k]);

			atomic_init(&d->views[k], b ? blob_ref(b) : NULL);
			if (atomic_load(&((struct epoch_dir *)s)->meta_ready[k]) == 2) {
				d->meta[k] = s->meta[k];
				atomic_init(&d->meta_ready[k], 2);
			}
		}
	}
	e->ndirs = src->ndirs;
	e->generation = src->generation;
	e->changed = src->changed;
	if ((err = epoch_copy_hosts(e, src)) < 0) {
		epoch_unref(e);
		return err;
	}
	*out = e;
	return 0;
}

int epoch_with_dir(const struct epoch *src, struct snapshot *snap, struct epoch **out)
{
	struct epoch *e = NULL;
	struct epoch_dir *d;
	struct blob *b;
	int k, err;

	if (!epoch_find_dir(src, snap->backend, snap->arch))
		return -ENOENT;
	if ((err = epoch_clone_dirs(src, &e)) < 0)
		return err;
	e->loaded = src->loaded;
	d = epoch_find_dir(e, snap->backend, snap->arch);
	for (k = 0; k < VIEW_COUNT; k++) {
		blob_unref(atomic_load(&d->views[k]));
		atomic_store(&d->views[k], NULL);
		atomic_store(&d->meta_ready[k], 0);
	}
	snapshot_unref(d->snap);
	d->snap = snapshot_ref(snap);
	/* status lists every digest. */
	if ((err = epoch_view(d, VIEW_DIGEST, &b)) < 0) {
		epoch_unref(e);
		return err;
	}
	blob_unref(b);
	*out = e;
	return 0;
}

struct epoch *epoch_ref(struct epoch *e)
{
	atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
	return e;
}

/* What an epoch_dir holds, released. */
static void dir_release(struct epoch_dir *d)
{
	int k;

	for (k = 0; k < VIEW_COUNT; k++) {
		blob_unref(atomic_load(&d->views[k]));
		blob_unref(d->reading[k]);
	}
	snapshot_unref(d->snap);
}

int epoch_dir_alone(struct snapshot *snap, struct epoch_dir **out)
{
	struct epoch_dir *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->snap = snapshot_ref(snap);
	*out = d;
	return 0;
}

void epoch_dir_free(struct epoch_dir *d)
{
	if (d) {
		dir_release(d);
		free(d);
	}
}

void epoch_unref(struct epoch *e)
{
	size_t i;

	if (!e || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (i = 0; i < e->ndirs; i++)
		dir_release(&e->dirs[i]);
	free(e->dirs);
	for (i = 0; i < e->nhosts; i++) {
		free(e->hosts[i].backend);
		free(e->hosts[i].arch);
		free(e->hosts[i].why);
	}
	free(e->hosts);
	blob_unref(e->status);
	blob_unref(e->diagnostics);
	free(e->last_error);
	free(e);
}

bool epoch_var_visible(const struct snap_var *v)
{
	int k;

	if (!v || !v->set || v->view_name || !v->name_len || v->name_len > NAME_MAX ||
	    memchr(v->name, '/', v->name_len) || memchr(v->name, '\0', v->name_len) ||
	    !strcmp(v->name, ".") || !strcmp(v->name, ".."))
		return false;
	for (k = 0; k < VIEW_COUNT; k++)
		if (!strcmp(v->name, view_file_name(k)))
			return false;
	return true;
}

/* Appends a host entry (strings copied; arch and why may be NULL). */
static int add_host(struct epoch *e, const char *backend, const char *arch, const char *why)
{
	struct epoch_host *h;

	if (!(h = realloc(e->hosts, (e->nhosts + 1) * sizeof(*h))))
		return -ENOMEM;
	e->hosts = h;
	h = &e->hosts[e->nhosts];
	h->backend = strdup(backend);
	h->arch = arch ? strdup(arch) : NULL;
	h->why = why ? strdup(why) : NULL;
	if (!h->backend || (arch && !h->arch) || (why && !h->why)) {
		free(h->backend);
		free(h->arch);
		free(h->why);
		return -ENOMEM;
	}
	e->nhosts++;
	return 0;
}

int epoch_set_hosts(struct epoch *e, const struct world *w)
{
	size_t i;
	int err = 0;

	/* Directories are sorted by backend: one entry per run of them. */
	for (i = 0; i < e->ndirs && err == 0; i++) {
		const char *b = e->dirs[i].snap->backend, *why = NULL, *arch;

		if (i && !strcmp(b, e->dirs[i - 1].snap->backend))
			continue;
		if (epoch_find_dir(e, b, "host"))
			err = add_host(e, b, NULL, "an arch directory is named host");
		else if ((arch = world_host_arch(w, b, &why)) && !epoch_find_dir(e, b, arch))
			err = add_host(e, b, NULL, "the detected arch has no directory here");
		else
			err = add_host(e, b, arch, arch ? NULL : why);
	}
	return err;
}

int epoch_copy_hosts(struct epoch *e, const struct epoch *src)
{
	size_t i;
	int err = 0;

	for (i = 0; i < src->nhosts && err == 0; i++)
		err = add_host(e, src->hosts[i].backend, src->hosts[i].arch, src->hosts[i].why);
	return err;
}

const char *epoch_host(const struct epoch *e, const char *backend, const char **why)
{
	size_t i;

	*why = "no such backend";
	for (i = 0; i < e->nhosts; i++) {
		if (strcmp(e->hosts[i].backend, backend))
			continue;
		*why = e->hosts[i].why;
		return e->hosts[i].arch;
	}
	return NULL;
}

static int dir_cmp(const struct snapshot *s, const char *backend, const char *arch)
{
	int c = strcmp(s->backend, backend);

	return c ? c : strcmp(s->arch, arch);
}

struct epoch_dir *epoch_find_dir(const struct epoch *e, const char *backend,
				 const char *arch)
{
	size_t lo = 0, hi = e->ndirs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = dir_cmp(e->dirs[mid].snap, backend, arch);

		if (c == 0)
			return &e->dirs[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool epoch_has_backend(const struct epoch *e, const char *backend)
{
	size_t lo = 0, hi = e->ndirs;

	/* First directory whose backend is >= backend. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(e->dirs[mid].snap->backend, backend) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->ndirs && !strcmp(e->dirs[lo].snap->backend, backend);
}

void epoch_wait_idle(struct epoch *e, int max_ms)
{
	int waited_us = 0;

	while (atomic_load(&e->busy) > 0 && waited_us < max_ms * 1000) {
		usleep(200);
		waited_us += 200;
	}
}

void epoch_slot_init(struct epoch_slot *s, struct epoch *first)
{
	pthread_mutex_init(&s->lock, NULL);
	s->cur = first;
}

void epoch_slot_release(struct epoch_slot *s)
{
	epoch_unref(s->cur);
	s->cur = NULL;
	pthread_mutex_destroy(&s->lock);
}

struct epoch *epoch_current(struct epoch_slot *s)
{
	struct epoch *e;

	pthread_mutex_lock(&s->lock);
	e = epoch_ref(s->cur);
	pthread_mutex_unlock(&s->lock);
	return e;
}

struct epoch *epoch_enter(struct epoch_slot *s)
{
	struct epoch *e;

	/* busy is raised under the lock, so a reload that swapped the pointer
	 * and then waits for busy == 0 cannot miss this handler. */
	pthread_mutex_lock(&s->lock);
	e = epoch_ref(s->cur);
	atomic_fetch_add(&e->busy, 1);
	pthread_mutex_unlock(&s->lock);
	return e;
}

void epoch_leave(struct epoch *e)
{
	atomic_fetch_sub(&e->busy, 1);
	epoch_unref(e);
}

struct epoch *epoch_publish(struct epoch_slot *s, struct epoch *e)
{
	struct epoch *old;

	pthread_mutex_lock(&s->lock);
	old = s->cur;
	s->cur = e;
	pthread_mutex_unlock(&s->lock);
	return old;
}
