/* The watch thread (etcd's changes into a queue) and the applier (the
 * queue into the mount, as commits); see syncd.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit.h"
#include "inval.h"
#include "reload.h"
#include "syncd_internal.h"

/* ---- the watch ------------------------------------------------------------ */

static void queue_item(struct syncd *sd, struct syncd_item *it)
{
	it->next = NULL;
	*sd->tail = it;
	sd->tail = &it->next;
	pthread_cond_broadcast(&sd->cond);
}

/* An event or a kv as an item (NULL: out of memory, or not one of ours,
 * which is noted). Lock not held. */
static struct syncd_item *item_of(struct syncd *sd, const char *key, const char *v,
			    size_t vlen, bool drop, int64_t rev)
{
	struct syncd_item *it;
	const char *value = NULL;
	size_t len = 0;
	char buf[1024], *b, *a, *n;

	if (strncmp(key, sd->prefix, sd->prefix_len) ||
	    !syncd_key_split(key + sd->prefix_len, buf, sizeof(buf), &b, &a, &n) ||
	    (!drop && syncd_value_decode(v, vlen, &value, &len) < 0)) {
		syncd_set_error(sd, "watch", "ignored a key that is not an override (docs/SYNC.md)");
		return NULL;
	}
	if (!(it = calloc(1, sizeof(*it))) || !(it->key = strdup(key + sd->prefix_len)) ||
	    (value && !(it->value = xstrndup(value, len)))) {
		if (it)
			free(it->key);
		free(it);
		syncd_set_error(sd, "watch", strerror(ENOMEM));
		return NULL;
	}
	it->kind = IT_CHANGE;
	it->len = len;
	it->drop = drop;
	it->rev = rev;
	return it;
}

static struct syncd_item *marker(enum syncd_item_kind kind, int64_t rev)
{
	struct syncd_item *it = calloc(1, sizeof(*it));

	if (it) {
		it->kind = kind;
		it->rev = rev;
	}
	return it;
}

/* The watch's callback: hands the events on and never blocks. */
static int on_events(void *arg, int64_t revision, const struct etcd_event *ev, size_t n)
{
	struct syncd *sd = arg;
	struct syncd_item *p;
	size_t i;

	pthread_mutex_lock(&sd->lock);
	sd->connected = true;
	if (revision > sd->seen_rev)
		sd->seen_rev = revision;
	pthread_mutex_unlock(&sd->lock);
	for (i = 0; i < n; i++) {
		if (!(p = item_of(sd, ev[i].key, ev[i].value, ev[i].value_len,
				  ev[i].type == ETCD_EV_DELETE, ev[i].mod_revision)))
			continue;
		pthread_mutex_lock(&sd->lock);
		queue_item(sd, p);
		pthread_mutex_unlock(&sd->lock);
	}
	if ((p = marker(IT_PROGRESS, revision))) {
		pthread_mutex_lock(&sd->lock);
		queue_item(sd, p);
		pthread_mutex_unlock(&sd->lock);
	}
	return 0;
}

/* After a compaction: every key again; the applier drops the overrides
 * whose keys are gone. *rev: where to watch from next. */
static int resync(struct syncd *sd, int64_t *rev)
{
	struct etcd_range r = { 0 };
	struct syncd_item *p;
	size_t i;
	int err;

	if ((err = sd->api->get_prefix(sd->wcli, sd->prefix, 0, &r)) < 0)
		goto out;
	pthread_mutex_lock(&sd->lock);
	if ((p = marker(IT_RESYNC_START, r.revision)))
		queue_item(sd, p);
	pthread_mutex_unlock(&sd->lock);
	for (i = 0; i < r.n; i++) {
		if (!(p = item_of(sd, r.kvs[i].key, r.kvs[i].value, r.kvs[i].value_len, false,
				  r.kvs[i].mod_revision)))
			continue;
		pthread_mutex_lock(&sd->lock);
		queue_item(sd, p);
		pthread_mutex_unlock(&sd->lock);
	}
	err = -ENOMEM;
	pthread_mutex_lock(&sd->lock);
	if ((p = marker(IT_RESYNC_END, r.revision))) {
		queue_item(sd, p);
		err = 0;
	}
	if (r.revision > sd->seen_rev)
		sd->seen_rev = r.revision;
	sd->nresyncs++;
	pthread_mutex_unlock(&sd->lock);
	*rev = r.revision + 1;
out:
	sd->api->range_free(&r);
	return err;
}

/* Waits ms or until stopped; true when stopped. */
static bool pause_ms(struct syncd *sd, unsigned ms)
{
	struct timespec ts = reload_deadline_in((int)ms);
	bool stop;

	pthread_mutex_lock(&sd->lock);
	while (!sd->stop && pthread_cond_timedwait(&sd->cond, &sd->lock, &ts) == 0)
		;
	stop = sd->stop;
	pthread_mutex_unlock(&sd->lock);
	return stop;
}

static bool stopping(struct syncd *sd)
{
	bool stop;

	pthread_mutex_lock(&sd->lock);
	stop = sd->stop;
	pthread_mutex_unlock(&sd->lock);
	return stop;
}

/* The watch thread: from the start-up read on, resumed after every
 * failure where it ended, re-read after a compaction. */
void *syncd_watch_main(void *arg)
{
	struct syncd *sd = arg;
	int64_t rev = sd->start_rev + 1;
	unsigned failures = 0;

	while (!stopping(sd)) {
		struct etcd_watch_end end = { 0, 0 };
		struct etcd_status st;
		int err;

		if (sd->api->status(sd->wcli, &st) == 0) {
			pthread_mutex_lock(&sd->lock);
			sd->member = st.member_id;
			pthread_mutex_unlock(&sd->lock);
		}
		syncd_note_endpoint(sd, sd->wcli);
		err = sd->api->watch(sd->wcli, sd->prefix, rev, on_events, sd, &end);
		if (stopping(sd))
			break;
		if (end.next_revision > rev)
			rev = end.next_revision;
		pthread_mutex_lock(&sd->lock);
		if (sd->connected)
			failures = 0;
		sd->connected = false;
		pthread_mutex_unlock(&sd->lock);
		if (err == -ESTALE) {
			syncd_set_error(sd, "watch", "the history was compacted: read everything again");
			if ((err = resync(sd, &rev)) == 0)
				continue;
		}
		syncd_set_error(sd, "watch", sd->api->errmsg(sd->wcli));
		if (pause_ms(sd, sd->api->backoff_ms(++failures)))
			break;
	}
	return NULL;
}

/* ---- the applier ---------------------------------------------------------- */

/* Applies one change (publish_lock held); the invalidations into l. */
static void apply_change(struct syncd *sd, struct syncd_item *it, struct inval_list *l)
{
	struct envfs *fs = sd->fs;
	char buf[1024], *b, *a, *n;
	const struct override *o;
	struct syncd_key *k;
	bool same, skip;
	int err;

	pthread_mutex_lock(&sd->lock);
	k = syncd_key_find(sd, it->key);
	/* The node's own echo, or older than what it has. */
	skip = k && it->rev <= k->rev;
	if (k && skip)
		k->seen = sd->resync_gen;
	pthread_mutex_unlock(&sd->lock);
	if (skip || !syncd_key_split(it->key, buf, sizeof(buf), &b, &a, &n))
		return;
	pthread_mutex_lock(&fs->ov_lock);
	o = override_set_find(&fs->ov, b, a, n);
	skip = o && o->private;
	same = it->drop ? !o
			: o && !o->value == !it->value && o->value_len == it->len &&
			  (!o->value || !memcmp(o->value, it->value, it->len));
	pthread_mutex_unlock(&fs->ov_lock);
	if (!skip && !same &&
	    (err = commit_remote(fs, b, a, n, it->value, it->len, it->drop, l)) < 0) {
		char msg[1100];

		snprintf(msg, sizeof(msg), "cannot apply %s: %s", it->key, strerror(-err));
		syncd_set_error(sd, "apply", msg);
		return;
	}
	pthread_mutex_lock(&sd->lock);
	if (syncd_key_note(sd, it->key, it->rev, !it->drop) < 0)
		snprintf(sd->last_error, sizeof(sd->last_error), "apply: %s", strerror(ENOMEM));
	if (!skip && !same) {
		sd->nremote_applied++;
		clock_gettime(CLOCK_REALTIME, &sd->last_applied);
	}
	pthread_mutex_unlock(&sd->lock);
}

/* The end of a re-read: keys this node has that etcd no longer does were
 * deleted in the compacted history. */
static void apply_resync_end(struct syncd *sd, int64_t rev, struct inval_list *l)
{
	size_t i;

	for (i = 0;; i++) {
		struct syncd_item it = { .kind = IT_CHANGE, .drop = true, .rev = rev };
		char *key;

		pthread_mutex_lock(&sd->lock);
		for (; i < sd->nkeys; i++)
			if (sd->keys[i].present && sd->keys[i].seen != sd->resync_gen &&
			    sd->keys[i].rev < rev)
				break;
		key = i < sd->nkeys ? strdup(sd->keys[i].key) : NULL;
		pthread_mutex_unlock(&sd->lock);
		if (!key)
			return;
		it.key = key;
		apply_change(sd, &it, l);
		free(key);
	}
}

void *syncd_apply_main(void *arg)
{
	struct syncd *sd = arg;
	struct envfs *fs = sd->fs;

	pthread_mutex_lock(&sd->lock);
	for (;;) {
		struct inval_list l = INVAL_LIST_INIT;
		struct syncd_item *it;

		while (!sd->stop && !sd->head)
			pthread_cond_wait(&sd->cond, &sd->lock);
		if (sd->stop)
			break;
		it = sd->head;
		if (!(sd->head = it->next))
			sd->tail = &sd->head;
		pthread_mutex_unlock(&sd->lock);
		pthread_mutex_lock(&fs->publish_lock);
		switch (it->kind) {
		case IT_CHANGE:
			apply_change(sd, it, &l);
			break;
		case IT_RESYNC_START:
			pthread_mutex_lock(&sd->lock);
			sd->resync_gen++;
			pthread_mutex_unlock(&sd->lock);
			break;
		case IT_RESYNC_END:
			apply_resync_end(sd, it->rev, &l);
			break;
		case IT_PROGRESS:
			break;
		}
		pthread_mutex_unlock(&fs->publish_lock);
		if (l.n)
			reloader_queue(fs->reloader, &l);
		inval_list_release(&l);
		pthread_mutex_lock(&sd->lock);
		if (it->rev > sd->applied_rev)
			sd->applied_rev = it->rev;
		free(it->key);
		free(it->value);
		free(it);
	}
	pthread_mutex_unlock(&sd->lock);
	return NULL;
}

