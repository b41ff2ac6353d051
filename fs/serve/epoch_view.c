/* Rendering an epoch's views, keeping only the small ones; see epoch.h
 * (VIEW_KEEP_MAX). */
#include <sched.h>
#include <string.h>

#include "epoch.h"

/* Guards every epoch_dir's reading slots. Only large views read on -o ro
 * take it, once per chunk: one lock is simpler than lock-free hand-over
 * and costs nothing next to a render. */
static pthread_mutex_t reading_lock = PTHREAD_MUTEX_INITIALIZER;

/* Publishes a view's meta once (sum NULL: hash b's bytes); later callers
 * find it set. */
static void set_meta(struct epoch_dir *d, enum view_kind kind, const struct blob *b,
		     size_t len, const uint8_t *sum)
{
	int expected = 0;

	if (!atomic_compare_exchange_strong(&d->meta_ready[kind], &expected, 1))
		return;
	d->meta[kind].len = b ? b->len : len;
	if (sum)
		memcpy(d->meta[kind].sum, sum, SHA256_LEN);
	else
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
		err = blob_take_sb(&sb, out);
	sb_release(&sb);
	return err;
}

/* Keeps small view b as d's render (takes b's reference); returns the
 * kept one with a reference for the caller. Two threads may render a
 * small view at once: the first to publish wins and the other's copy (the
 * same bytes) is dropped. */
static struct blob *keep_view(struct epoch_dir *d, enum view_kind kind, struct blob *b)
{
	struct blob *expected = NULL;

	if (atomic_compare_exchange_strong(&d->views[kind], &expected, b))
		return blob_ref(b);
	blob_unref(b);
	return blob_ref(expected);
}

int epoch_view(struct epoch_dir *d, enum view_kind kind, struct blob **out)
{
	struct blob *b = atomic_load(&d->views[kind]);
	int err;

	if (b) {
		*out = blob_ref(b);
		return 0;
	}
	if ((err = render(d, kind, &b)) < 0)
		return err;
	set_meta(d, kind, b, 0, NULL);
	*out = b->len <= VIEW_KEEP_MAX ? keep_view(d, kind, b) : b;
	return 0;
}

int epoch_view_meta(struct epoch_dir *d, enum view_kind kind, const struct view_meta **out)
{
	struct strbuf sb = STRBUF_INIT;
	uint8_t sum[SHA256_LEN];
	struct blob *b = NULL;
	size_t len;
	int err;

	if ((*out = epoch_view_meta_known(d, kind)))
		return 0;
	/* Measured, not rendered whole: a large view's bytes would only be
	 * dropped again (and a reload measures old and new). */
	if ((err = view_measure(d->snap, kind, VIEW_KEEP_MAX, &sb, &len, sum)) < 0)
		goto out;
	if (len <= VIEW_KEEP_MAX) {
		if ((err = blob_take_sb(&sb, &b)) < 0)
			goto out;
		blob_unref(keep_view(d, kind, b));
	}
	/* Whoever finds the meta unclaimed publishes it, even for a view a
	 * clone (epoch_clone_dirs) copied while another thread was still
	 * checksumming it; so the wait below is only ever for a thread that
	 * is checksumming bytes it already holds. */
	set_meta(d, kind, NULL, len, sum);
	while (!(*out = epoch_view_meta_known(d, kind)))
		sched_yield();
out:
	sb_release(&sb);
	return err;
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
