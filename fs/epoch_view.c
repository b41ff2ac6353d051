/* Rendering an epoch's views, keeping only the small ones; see state.h
 * (VIEW_KEEP_MAX). */
#include <sched.h>
#include <string.h>

#include "state.h"

/* Guards every epoch_dir's reading slots. Only large views read on -o ro
 * take it, once per chunk: one lock is simpler than lock-free hand-over
 * and costs nothing next to a render. */
static pthread_mutex_t reading_lock = PTHREAD_MUTEX_INITIALIZER;

/* Publishes the meta of b's bytes once; later callers find it set. */
static void set_meta(struct epoch_dir *d, enum view_kind kind, const struct blob *b)
{
	int expected = 0;

	if (!atomic_compare_exchange_strong(&d->meta_ready[kind], &expected, 1))
		return;
	d->meta[kind].len = b->len;
	sha256(b->data, b->len, d->meta[kind].sum);
	atomic_store(&d->meta_ready[kind], 2);
}

const struct view_meta *epoch_view_meta_known(struct epoch_dir *d, enum view_kind kind)
{
	return atomic_load(&d->meta_ready[kind]) == 2 ? &d->meta[kind] : NULL;
}

bool view_meta_equal(const struct view_meta *a, const struct view_meta *b)
{
	return a->len == b->len && !memcmp(a->sum, b->sum, sizeof(a->sum));
}

/* A fresh render of the view into a new blob (caller's reference). */
static int render(struct epoch_dir *d, enum view_kind kind, struct blob **out)
{
	struct strbuf sb = STRBUF_INIT;
	int err;

	if ((err = view_render(d->snap, kind, &sb)) == 0)
		err = blob_from_sb(&sb, out);
	sb_release(&sb);
	return err;
}

int epoch_view(struct epoch_dir *d, enum view_kind kind, struct blob **out)
{
	struct blob *b = atomic_load(&d->views[kind]), *expected = NULL;
	int err;

	if (b) {
		*out = blob_ref(b);
		return 0;
	}
	if ((err = render(d, kind, &b)) < 0)
		return err;
	set_meta(d, kind, b);
	/* Two threads may render a small view at once; the first to publish
	 * wins and the other's copy (the same bytes) is dropped. */
	if (b->len <= VIEW_KEEP_MAX &&
	    !atomic_compare_exchange_strong(&d->views[kind], &expected, blob_ref(b))) {
		blob_unref(b);
		blob_unref(b);
		b = blob_ref(expected);
	}
	*out = b;
	return 0;
}

int epoch_view_meta(struct epoch_dir *d, enum view_kind kind, const struct view_meta **out)
{
	struct blob *b = NULL;
	int err;

	if ((*out = epoch_view_meta_known(d, kind)))
		return 0;
	if ((err = epoch_view(d, kind, &b)) < 0)
		return err;
	/* A kept view can come without its meta: epoch_clone_dirs copies a
	 * view whose meta another thread was still computing. Whoever finds
	 * the meta unclaimed computes it, so the wait below is only ever for
	 * a thread that is checksumming bytes it already holds. */
	set_meta(d, kind, b);
	blob_unref(b);
	while (!(*out = epoch_view_meta_known(d, kind)))
		sched_yield();
	return 0;
}

int epoch_view_read(struct epoch_dir *d, enum view_kind kind, struct blob **out)
{
	struct blob *b = atomic_load(&d->views[kind]);
	int err = 0;

	if (b) {
		*out = blob_ref(b);
		return 0;
	}
	pthread_mutex_lock(&reading_lock);
	if (!d->reading[kind])
		err = epoch_view(d, kind, &d->reading[kind]);
	if (err == 0)
		*out = blob_ref(d->reading[kind]);
	pthread_mutex_unlock(&reading_lock);
	return err;
}

void epoch_view_read_end(struct epoch_dir *d, enum view_kind kind,
			 const struct blob *b, size_t end)
{
	if (end < b->len)
		return;
	pthread_mutex_lock(&reading_lock);
	if (d->reading[kind] == b) {
		blob_unref(d->reading[kind]);
		d->reading[kind] = NULL;
	}
	pthread_mutex_unlock(&reading_lock);
}
