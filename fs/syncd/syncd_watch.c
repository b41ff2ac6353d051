/* The watch thread (etcd's changes into a queue) and the applier (the
 * queue into the mount, as commits); see syncd.h. */
#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit.h"
#include "history_note.h"
#include "inval.h"
#include "register_backoff.h"
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

static struct syncd_item *marker(enum syncd_item_kind kind, int64_t rev)
{
	struct syncd_item *it = calloc(1, sizeof(*it));

	if (it) {
		it->kind = kind;
		it->rev = rev;
	}
	return it;
}

/* A failure the watch gets over by itself: etcd out of reach or busy. */
static bool transient(int err)
{
	return err == -ETIMEDOUT || err == -ECONNREFUSED || err == -EHOSTUNREACH ||
	       err == -EAGAIN || err == -ECONNRESET || err == -EINTR;
}

/* The node record says whether the node applies (the watch thread holds
 * no lock here). */
static void republish(struct syncd *sd)
{
	pthread_mutex_lock(&sd->fs->publish_lock);
	syncd_published(sd);
	pthread_mutex_unlock(&sd->fs->publish_lock);
}

/* The watch's callback: hands the events on and never blocks (but for
 * the moment the node record changes its word on whether it applies).
 * The events of one revision (one txn) are queued at once, so the
 * applier takes them together and publishes them as one generation. */
static int on_events(void *arg, int64_t revision, const struct etcd_event *ev, size_t n)
{
	struct syncd *sd = arg;
	struct syncd_item *head = NULL, **tail = &head, *p;
	int64_t done = revision;
	size_t i;

	/* Without events: the watch was created (revision: the store's
	 * then, whose changes may still be on their way) or etcd says all
	 * was sent up to revision; either way, what is known delivered ends
	 * before the watch's next revision. */
	if (!n && sd->wend && sd->wend->next_revision - 1 < done)
		done = sd->wend->next_revision - 1;
	pthread_mutex_lock(&sd->lock);
	sd->connected = true;
	if (revision > sd->seen_rev)
		sd->seen_rev = revision;
	pthread_mutex_unlock(&sd->lock);
	if (syncd_set_stalled(sd, false, NULL, NULL))
		republish(sd);
	for (i = 0; i < n; i++) {
		int err = syncd_item_of(sd, ev[i].key, ev[i].value, ev[i].value_len,
					ev[i].type == ETCD_EV_DELETE, ev[i].mod_revision, &p);

		if (err < 0) {
			syncd_set_error(sd, "watch", err == -EINVAL ? "ignored a key that is not "
					"an override (docs/SYNC.md)" : strerror(-err));
			continue;
		}
		*tail = p;
		tail = &p->next;
	}
	if (done > 0 && (p = marker(IT_PROGRESS, done))) {
		*tail = p;
		tail = &p->next;
	}
	pthread_mutex_lock(&sd->lock);
	while ((p = head)) {
		head = p->next;
		queue_item(sd, p);
	}
	pthread_mutex_unlock(&sd->lock);
	return 0;
}

/* After the watch lost its place (a compaction, a batch it cannot
 * read): every key again; the applier drops the overrides whose keys are
 * gone. *rev: where to watch from next. */
static int resync(struct syncd *sd, int64_t *rev)
{
	struct syncd_item *items = NULL, *start = NULL, *end = NULL, *it;
	int64_t r = 0;
	int err;

	if ((err = syncd_read_prefix(sd, sd->wcli, false, false, &items, &r)) < 0)
		return err;
	if (!(start = marker(IT_RESYNC_START, r)) || !(end = marker(IT_RESYNC_END, r))) {
		free(start);
		syncd_items_free(items);
		return -ENOMEM;
	}
	/* One queueing: the applier never sees a part of the read. */
	pthread_mutex_lock(&sd->lock);
	queue_item(sd, start);
	while ((it = items)) {
		items = it->next;
		queue_item(sd, it);
	}
	queue_item(sd, end);
	if (r > sd->seen_rev)
		sd->seen_rev = r;
	sd->nresyncs++;
	pthread_mutex_unlock(&sd->lock);
	*rev = r + 1;
	return 0;
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
 * failure where it ended, re-read when it lost its place. */
void *syncd_watch_main(void *arg)
{
	struct syncd *sd = arg;
	int64_t rev = sd->start_rev + 1;
	unsigned failures = 0, seed = register_seed();

	while (!stopping(sd)) {
		struct etcd_watch_end end = { 0, 0 };
		struct etcd_status st;
		char why[600];
		int err;

		if (sd->api->status(sd->wcli, &st) == 0) {
			pthread_mutex_lock(&sd->lock);
			sd->member = st.member_id;
			if (st.revision > sd->seen_rev)
				sd->seen_rev = st.revision;
			pthread_mutex_unlock(&sd->lock);
		}
		syncd_note_endpoint(sd, sd->wcli);
		sd->wend = &end;
		err = sd->api->watch(sd->wcli, sd->prefix, rev, on_events, sd, &end);
		sd->wend = NULL;
		if (stopping(sd))
			break;
		if (end.next_revision > rev)
			rev = end.next_revision;
		pthread_mutex_lock(&sd->lock);
		if (sd->connected)
			failures = 0;
		sd->connected = false;
		pthread_mutex_unlock(&sd->lock);
		snprintf(why, sizeof(why), "%s", sd->api->errmsg(sd->wcli));
		/* The history from rev on is gone, or holds an event too large
		 * to read: the node takes the prefix as it is now instead. */
		if (err == -ESTALE || err == -EMSGSIZE) {
			syncd_set_error(sd, "watch", err == -ESTALE ?
				"the history was compacted: read everything again" :
				"a change too large to read: read everything again");
			if ((err = resync(sd, &rev)) == 0)
				continue;
			snprintf(why, sizeof(why), "%s", sd->api->errmsg(sd->wcli));
		}
		syncd_set_error(sd, "watch", why);
		if (!transient(err)) {
			char msg[700];

			snprintf(msg, sizeof(msg), "the watch cannot go on from revision %lld: %s",
				 (long long)rev, why);
			if (syncd_set_stalled(sd, false, NULL, msg))
				republish(sd);
		}
		/* The registration's back-off: the watches of a job's nodes
		 * that one overloaded cluster ended must not come back in
		 * step. */
		if (pause_ms(sd, register_backoff_ms(++failures, &seed)))
			break;
	}
	return NULL;
}

/* ---- the applier ---------------------------------------------------------- */

/* Whether it changes the node (publish_lock held): not its own echo,
 * not older than what it has, not a private override's key, not a
 * node-scoped name's, not what the node already has. Its directory and
 * name are split into buf. */
static bool wanted(struct syncd *sd, const struct syncd_item *it, char *buf, size_t size,
		   char **b, char **a, char **n)
{
	struct envfs *fs = sd->fs;
	const struct override *o;
	struct syncd_key *k;
	bool skip, same;

	pthread_mutex_lock(&sd->lock);
	k = syncd_key_find(sd, it->key);
	skip = k && it->rev <= k->rev;
	if (k && skip)
		k->seen = sd->resync_gen;
	pthread_mutex_unlock(&sd->lock);
	if (skip || !syncd_key_split(it->key, buf, size, b, a, n))
		return false;
	/* Each node's own, whatever etcd holds of it (publish_lock keeps
	 * fs->world). */
	if (syncd_ignore_node_key(sd, fs->world, it->key, *n))
		return false;
	pthread_mutex_lock(&fs->ov_lock);
	o = override_set_find(&fs->ov, *b, *a, *n);
	skip = o && o->private;
	same = it->drop ? !o
			: o && !o->value == !it->value && o->value_len == it->len &&
			  (!o->value || !memcmp(o->value, it->value, it->len));
	pthread_mutex_unlock(&fs->ov_lock);
	return !skip && !same;
}

/* Notes the revisions of the n items at v (those applied: applied). */
static void note_items(struct syncd *sd, struct syncd_item **v, size_t n, bool applied)
{
	size_t i;

	pthread_mutex_lock(&sd->lock);
	for (i = 0; i < n; i++) {
		struct syncd_key *k;

		if (syncd_key_note(sd, v[i]->key, v[i]->rev, !v[i]->drop) < 0)
			snprintf(sd->last_error, sizeof(sd->last_error), "apply: %s", strerror(ENOMEM));
		/* The run's value now: no longer kept on the node. */
		else if (applied && (k = syncd_key_find(sd, v[i]->key)))
			k->secret = false;
	}
	if (applied && n) {
		sd->nremote_applied += n;
		clock_gettime(CLOCK_REALTIME, &sd->last_applied);
	}
	/* A commit that lost its compare waits for these (syncd_catch_up). */
	if (n)
		pthread_cond_broadcast(&sd->cond);
	pthread_mutex_unlock(&sd->lock);
}

/* The changes of one directory, one commit (publish_lock held). */
static void apply_dir(struct syncd *sd, const struct hist_writer *who, const char *b,
		      const char *a, struct syncd_item **v, struct remote_change *rc, size_t n,
		      struct inval_list *l)
{
	bool unstall = false;
	size_t i;
	int err;

	if (n && (err = commit_remote(sd->fs, who, b, a, rc, n, l)) < 0) {
		char msg[1100];

		snprintf(msg, sizeof(msg), "cannot apply %s%s: %s", v[0]->key,
			 n > 1 ? " and the changes of its revision" : "", strerror(-err));
		syncd_set_error(sd, "apply", msg);
		if (syncd_set_stalled(sd, true, v[0]->key, msg))
			syncd_published(sd);
		return;
	}
	/* A change that stopped the applier went through after all. */
	pthread_mutex_lock(&sd->lock);
	for (i = 0; i < n && sd->stalled_key && !unstall; i++)
		unstall = !strcmp(sd->stalled_key, v[i]->key);
	pthread_mutex_unlock(&sd->lock);
	if (unstall && syncd_set_stalled(sd, true, NULL, NULL))
		syncd_published(sd);
	note_items(sd, v, n, true);
}

void syncd_apply_items(struct syncd *sd, struct syncd_item *items,
		       const struct hist_writer *who, struct inval_list *l)
{
	struct syncd_item *it, **v = NULL, **skipped = NULL;
	struct remote_change *rc = NULL;
	char (*bufs)[1024] = NULL, *b, *a, *n;
	size_t count = 0, nv = 0, ns = 0, i, j;

	for (it = items; it; it = it->next)
		count++;
	if (!count)
		return;
	if (!(v = calloc(count, sizeof(*v))) || !(skipped = calloc(count, sizeof(*skipped))) ||
	    !(rc = calloc(count, sizeof(*rc))) || !(bufs = calloc(count, sizeof(*bufs)))) {
		syncd_set_error(sd, "apply", strerror(ENOMEM));
		goto out;
	}
	for (it = items; it; it = it->next) {
		if (!wanted(sd, it, bufs[nv], sizeof(bufs[nv]), &b, &a, &n)) {
			skipped[ns++] = it;
			continue;
		}
		rc[nv] = (struct remote_change){ .backend = b, .arch = a, .name = n,
						 .value = it->value, .len = it->len,
						 .drop = it->drop };
		v[nv++] = it;
	}
	note_items(sd, skipped, ns, false);
	/* One commit per directory: a txn of this program never spans two
	 * (mv across directories is EXDEV), one made by hand may. */
	for (i = 0; i < nv;) {
		for (j = i + 1; j < nv && !strcmp(rc[j].backend, rc[i].backend) &&
				!strcmp(rc[j].arch, rc[i].arch); j++)
			;
		apply_dir(sd, who, rc[i].backend, rc[i].arch, v + i, rc + i, j - i, l);
		i = j;
	}
out:
	free(v);
	free(skipped);
	free(rc);
	free(bufs);
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
		syncd_apply_items(sd, &it, NULL, l);
		free(key);
	}
}

/* Who wrote revision rev, for the history: the fence key the writer's
 * commit put in that same revision, read as etcd held it then. Its
 * token: "c NONCE SEQ CAUSE UID PID". Not known (node "" and HIST_SYNC)
 * when etcd no longer keeps that revision, does not answer, or the
 * revision was written by hand or by a version that names no writer. */
struct run_writer {
	char node[256];
	enum hist_cause cause;
	bool known;
	uint32_t uid;
	int32_t pid;
};

static void writer_of(struct syncd *sd, int64_t rev, struct run_writer *w)
{
	const char *slash = strrchr(sd->fence_key, '/');
	struct etcd_range r = { 0 };
	/* Only the key that revision changed: a run of 1,024 nodes has
	 * 1,024 fences, and every node asks this for every change. */
	struct etcd_range_req rq = { .revision = rev, .min_mod_revision = rev,
				     .max_mod_revision = rev };
	char prefix[1024], cause[16], uid[16], pid[16], c;
	unsigned long long nonce, seq;
	size_t i;

	memset(w, 0, sizeof(*w));
	w->cause = HIST_SYNC;
	if ((size_t)(slash - sd->fence_key) + 2 > sizeof(prefix))
		return;
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(slash - sd->fence_key + 1), sd->fence_key);
	rq.prefix = prefix;
	if (sd->api->range_read(sd->hcli, &rq, &r) < 0)
		goto out;
	for (i = 0; i < r.n && r.kvs[i].mod_revision != rev; i++)
		;
	if (i == r.n || r.kvs[i].key_len - strlen(prefix) >= sizeof(w->node))
		goto out;
	snprintf(w->node, sizeof(w->node), "%s", r.kvs[i].key + strlen(prefix));
	if (sscanf(r.kvs[i].value, "%c %llx %llu %15s %15s %15s", &c, &nonce, &seq, cause, uid,
		   pid) != 6 || c != 'c' || hist_cause_from_name(cause, &w->cause) < 0 ||
	    w->cause == HIST_START || w->cause == HIST_RELOAD) {
		w->cause = HIST_SYNC;
		goto out;
	}
	if (strcmp(uid, "-") && strcmp(pid, "-")) {
		w->known = true;
		w->uid = (uint32_t)strtoul(uid, NULL, 10);
		w->pid = (int32_t)strtol(pid, NULL, 10);
	}
out:
	sd->api->range_free(&r);
}

/* Whether the changes from it on (of one revision) may change the node:
 * its own commits' echoes do not, and ask nothing of etcd. A guess
 * without publish_lock; wanted() decides. */
static bool maybe_remote(struct syncd *sd, const struct syncd_item *it)
{
	bool any = false;

	pthread_mutex_lock(&sd->lock);
	for (; it && !any; it = it->next) {
		struct syncd_key *k = syncd_key_find(sd, it->key);

		any = !k || it->rev > k->rev;
	}
	pthread_mutex_unlock(&sd->lock);
	return any;
}

/* How often the applier tries again to learn a write's outcome while
 * etcd answers (each try bounded by --sync-timeout). */
#define LEARN_RETRY_S 1

void *syncd_apply_main(void *arg)
{
	struct syncd *sd = arg;
	struct envfs *fs = sd->fs;
	struct run_writer w;

	pthread_mutex_lock(&sd->lock);
	for (;;) {
		struct inval_list l = INVAL_LIST_INIT;
		struct syncd_item *it, *last;
		struct hist_writer who, *whop = NULL;
		bool learn = false;

		while (!sd->stop && !sd->head && !learn) {
			if (sd->unknown && sd->connected) {
				struct timespec t;

				clock_gettime(CLOCK_REALTIME, &t);
				t.tv_sec += LEARN_RETRY_S;
				learn = pthread_cond_timedwait(&sd->cond, &sd->lock, &t) == ETIMEDOUT;
			} else {
				pthread_cond_wait(&sd->cond, &sd->lock);
			}
		}
		if (sd->stop)
			break;
		if (!sd->head) {
			/* A write's outcome is still unknown while etcd answers
			 * the watch: a try every LEARN_RETRY_S, until one gets
			 * through (a commit also tries). With the whole bound: a
			 * loaded cluster may answer the watch yet take longer
			 * than the quick try's 500 ms for every write, and a
			 * local write would wait as long for its own try. */
			pthread_mutex_unlock(&sd->lock);
			pthread_mutex_lock(&fs->publish_lock);
			if (sd->unknown)
				syncd_fence_resolve(sd, false);
			pthread_mutex_unlock(&fs->publish_lock);
			pthread_mutex_lock(&sd->lock);
			continue;
		}
		/* The changes of one revision, together. */
		it = last = sd->head;
		if (it->kind == IT_CHANGE)
			while (last->next && last->next->kind == IT_CHANGE &&
			       last->next->rev == it->rev)
				last = last->next;
		if (!(sd->head = last->next))
			sd->tail = &sd->head;
		last->next = NULL;
		pthread_mutex_unlock(&sd->lock);
		/* Asked before publish_lock: local commits do not wait on it. */
		if (it->kind == IT_CHANGE && maybe_remote(sd, it)) {
			writer_of(sd, it->rev, &w);
			who = (struct hist_writer){ .uid = w.uid, .pid = w.pid, .no_ids = !w.known,
						    .node = w.node[0] ? w.node : NULL,
						    .has_cause = w.cause != HIST_SYNC,
						    .cause = w.cause };
			whop = &who;
		}
		pthread_mutex_lock(&fs->publish_lock);
		switch (it->kind) {
		case IT_CHANGE:
			syncd_apply_items(sd, it, whop, &l);
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
			/* etcd answers again: learn a write's outcome. */
			if (sd->unknown)
				syncd_fence_resolve(sd, true);
			break;
		}
		pthread_mutex_unlock(&fs->publish_lock);
		if (l.n)
			reloader_queue(fs->reloader, &l);
		inval_list_release(&l);
		pthread_mutex_lock(&sd->lock);
		if (last->rev > sd->applied_rev)
			sd->applied_rev = last->rev;
		syncd_items_free(it);
	}
	pthread_mutex_unlock(&sd->lock);
	return NULL;
}

