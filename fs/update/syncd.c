/* The mount's sync with etcd; see syncd.h and docs/SYNC.md.
 *
 * An override's key is PREFIX/runs/RUN/overrides/BACKEND/ARCH/NAME and its
 * value says what the override is: '=' followed by the value's bytes (a
 * set; "=" alone is the empty value), or the single byte '-' (an unset:
 * the rm of a variable a lower layer sets). A deleted key is no override
 * (the rm of an override: the resolved value comes back). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commit.h"
#include "inval.h"
#include "reload.h"
#include "snapshot.h"
#include "statefile.h"
#include "syncd.h"
#include "sync_register.h"

/* The highest revision this node has of one key (relative to the
 * overrides' prefix), and whether the key exists there. */
struct keyrev {
	char *key;
	int64_t rev;
	bool present;
	bool secret;             /* a commit kept it node-local */
	unsigned seen;           /* resync generation that saw it */
};

/* One change read from etcd, for the applier; or a marker. */
enum item_kind { IT_CHANGE, IT_PROGRESS, IT_RESYNC_START, IT_RESYNC_END };

struct item {
	struct item *next;
	enum item_kind kind;
	char *key;               /* relative; owned */
	char *value;             /* owned; NULL: an unset */
	size_t len;
	bool drop;               /* the key was deleted */
	int64_t rev;
};

struct syncd {
	struct envfs *fs;
	const struct sync_opts *so;          /* borrowed from the mount's options */
	const struct envfs_sync_api *api;
	struct etcd_client *cli;             /* commits (under publish_lock) */
	struct etcd_client *wcli;            /* the watch thread's */
	char *prefix;                        /* PREFIX/runs/RUN/overrides/ */
	size_t prefix_len;
	int64_t start_rev;                   /* the start-up read's revision */
	pthread_t watcher, applier;
	bool started;

	/* Everything below: under lock. keys also only changes under
	 * publish_lock, so a commit and the applier see one order. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	struct item *head, **tail;
	struct keyrev *keys;
	size_t nkeys, capkeys;
	unsigned resync_gen;
	bool connected;
	int64_t seen_rev;                    /* the latest revision etcd told */
	int64_t applied_rev;                 /* the latest the applier finished */
	uint64_t member;
	char endpoint[128];
	char last_error[512];
	struct timespec last_applied;
	uint64_t nremote_applied, nresyncs;

	struct sync_register *reg;           /* sync-verify: the node's registry
	                                        entry (sync_register.h) */
};

static void set_error(struct syncd *sd, const char *what, const char *msg)
{
	size_t n = strlen(what);

	pthread_mutex_lock(&sd->lock);
	/* Cut to fit: the start of a message says the most. */
	snprintf(sd->last_error, sizeof(sd->last_error), "%s: ", what);
	if (n + 2 < sizeof(sd->last_error))
		snprintf(sd->last_error + n + 2, sizeof(sd->last_error) - n - 2, "%s", msg);
	/* One line in status. */
	sd->last_error[strcspn(sd->last_error, "\n")] = '\0';
	pthread_mutex_unlock(&sd->lock);
}

static void note_endpoint(struct syncd *sd, struct etcd_client *c)
{
	pthread_mutex_lock(&sd->lock);
	snprintf(sd->endpoint, sizeof(sd->endpoint), "%s", sd->api->endpoint(c));
	pthread_mutex_unlock(&sd->lock);
}

/* ---- keys and values ------------------------------------------------------ */

static bool name_char(char c, bool dir)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || (dir && (c == '-' || c == '.'));
}

/* Splits rel "BACKEND/ARCH/NAME" into parts (in buf, size bytes); false
 * when it is not one of ours (a key written by hand). */
static bool key_split(const char *rel, char *buf, size_t size, char **b, char **a, char **n)
{
	char *part[3], *p;
	size_t i = 0;

	if (strlen(rel) >= size)
		return false;
	strcpy(buf, rel);
	for (p = buf, part[0] = buf; *p; p++) {
		if (*p != '/')
			continue;
		if (++i == 3)
			return false;
		*p = '\0';
		part[i] = p + 1;
	}
	if (i != 2)
		return false;
	for (i = 0; i < 3; i++) {
		if (!*part[i])
			return false;
		for (p = part[i]; *p; p++)
			if (!name_char(*p, i < 2))
				return false;
	}
	*b = part[0];
	*a = part[1];
	*n = part[2];
	return true;
}

/* An etcd value as an override: *value NULL for an unset. -EPROTO when
 * it is not one (written by hand, or by another version). */
static int value_decode(const char *v, size_t len, const char **value, size_t *vlen)
{
	if (len == 1 && v[0] == '-') {
		*value = NULL;
		*vlen = 0;
		return 0;
	}
	if (len < 1 || v[0] != '=' || len - 1 > STATEFILE_VALUE_MAX || memchr(v, '\0', len))
		return -EPROTO;
	*value = v + 1;
	*vlen = len - 1;
	return 0;
}

static struct keyrev *key_find(struct syncd *sd, const char *rel)
{
	size_t i;

	for (i = 0; i < sd->nkeys; i++)
		if (!strcmp(sd->keys[i].key, rel))
			return &sd->keys[i];
	return NULL;
}

/* Records rel at rev (lock held). */
static int key_note(struct syncd *sd, const char *rel, int64_t rev, bool present)
{
	struct keyrev *k = key_find(sd, rel);

	if (!k) {
		if (sd->nkeys == sd->capkeys) {
			size_t cap = sd->capkeys ? 2 * sd->capkeys : 16;
			struct keyrev *v = realloc(sd->keys, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			sd->keys = v;
			sd->capkeys = cap;
		}
		k = &sd->keys[sd->nkeys];
		if (!(k->key = strdup(rel)))
			return -ENOMEM;
		k->seen = 0;
		k->rev = 0;
		k->present = k->secret = false;
		sd->nkeys++;
	}
	if (rev >= k->rev) {
		k->rev = rev;
		k->present = present;
	}
	k->seen = sd->resync_gen;
	return 0;
}

/* ---- start ---------------------------------------------------------------- */

/* The start-up read: every override etcd has for the run, into fs->ov. */
static int read_all(struct syncd *sd)
{
	struct envfs *fs = sd->fs;
	struct etcd_range r = { 0 };
	char buf[1024], *b, *a, *n;
	bool changed = false;
	size_t i;
	int err;

	if ((err = sd->api->get_prefix(sd->cli, sd->prefix, 0, &r)) < 0) {
		fprintf(stderr, "primus-envfs: --sync: cannot read %s: %s\n", sd->prefix,
			sd->api->errmsg(sd->cli));
		goto out;
	}
	if (r.more) {
		fprintf(stderr, "primus-envfs: --sync: more than %d overrides under %s\n",
			ETCD_RANGE_MAX, sd->prefix);
		err = -EMSGSIZE;
		goto out;
	}
	pthread_mutex_lock(&fs->ov_lock);
	for (i = 0; i < r.n && err == 0; i++) {
		const struct etcd_kv *kv = &r.kvs[i];
		const char *rel = kv->key + sd->prefix_len, *value;
		const struct override *o;
		size_t len;

		if (!key_split(rel, buf, sizeof(buf), &b, &a, &n) ||
		    value_decode(kv->value, kv->value_len, &value, &len) < 0) {
			fprintf(stderr, "primus-envfs: --sync: ignoring %s: not an override "
				"(docs/SYNC.md)\n", kv->key);
			continue;
		}
		o = override_set_find(&fs->ov, b, a, n);
		/* A secret of this node stays its own. */
		if (o && o->private)
			continue;
		if ((err = override_set_put(&fs->ov, b, a, n, value, len)) == 0)
			err = key_note(sd, rel, kv->mod_revision, true);
		changed = true;
	}
	if (err == 0 && changed && fs->state_path &&
	    (err = statefile_save(fs->state_path, &fs->ov)) < 0)
		fprintf(stderr, "primus-envfs: cannot save the state to %s: %s\n",
			fs->state_path, strerror(-err));
	pthread_mutex_unlock(&fs->ov_lock);
	sd->start_rev = r.revision;
	sd->applied_rev = sd->seen_rev = r.revision;
out:
	sd->api->range_free(&r);
	return err;
}

int syncd_new(struct envfs *fs, const struct sync_opts *so, struct syncd **out)
{
	struct syncd *sd = calloc(1, sizeof(*sd));
	struct etcd_status st;
	char msg[1024];
	int err;

	*out = NULL;
	if (!sd) {
		fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	pthread_mutex_init(&sd->lock, NULL);
	pthread_cond_init(&sd->cond, NULL);
	sd->tail = &sd->head;
	sd->fs = fs;
	sd->so = so;
	snprintf(sd->last_error, sizeof(sd->last_error), "none");
	if ((err = sync_load(&sd->api, msg, sizeof(msg))) < 0 ||
	    (err = sd->api->open(&sd->cli, so, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "primus-envfs: --sync: %s\n", msg);
		goto out;
	}
	if ((err = sd->api->connect(sd->cli, &st)) < 0) {
		fprintf(stderr, "primus-envfs: --sync %s: %s\n", so->endpoints,
			sd->api->errmsg(sd->cli));
		goto out;
	}
	sd->member = st.member_id;
	note_endpoint(sd, sd->cli);
	err = -ENOMEM;
	if (asprintf(&sd->prefix, "%s/runs/%s/overrides/", so->prefix, so->run) < 0) {
		sd->prefix = NULL;
		goto out;
	}
	sd->prefix_len = strlen(sd->prefix);
	if ((err = sd->api->dup(&sd->wcli, sd->cli)) < 0)
		goto out;
	if ((err = read_all(sd)) < 0)
		goto out;
	/* sync-verify: the registration, with a client of its own. */
	{
		struct etcd_client *rc;

		if ((err = sd->api->dup(&rc, sd->cli)) < 0 ||
		    (err = sync_register_new(sd->api, rc, so, &sd->reg)) < 0)
			goto out;
	}
	*out = sd;
	sd = NULL;
out:
	syncd_free(sd);
	return err;
}

/* ---- commits ---------------------------------------------------------- */

/* The key of backend/arch/name (caller-owned), its relative part at
 * *rel. */
static char *key_of(struct syncd *sd, const char *backend, const char *arch,
		    const char *name, const char **rel)
{
	char *k;

	if (asprintf(&k, "%s%s/%s/%s", sd->prefix, backend, arch, name) < 0)
		return NULL;
	*rel = k + sd->prefix_len;
	return k;
}

/* Marks backend/arch/name as kept on the node, for status. */
static int note_secret(struct syncd *sd, const char *backend, const char *arch,
		       const char *name)
{
	const char *rel;
	char *key = key_of(sd, backend, arch, name, &rel);
	struct keyrev *k;
	int err = -ENOMEM;

	if (!key)
		return err;
	pthread_mutex_lock(&sd->lock);
	if (!(k = key_find(sd, rel)) && (err = key_note(sd, rel, 0, false)) == 0)
		k = key_find(sd, rel);
	if (k) {
		k->secret = true;
		err = 0;
	}
	pthread_mutex_unlock(&sd->lock);
	free(key);
	return err;
}

int syncd_commit(struct syncd *sd, const char *backend, const char *arch,
		 const char *const *names, size_t n, bool excl,
		 const struct snapshot *snap)
{
	struct envfs *fs = sd->fs;
	struct etcd_op ops[2];
	struct etcd_cmp cmp = { 0 };
	struct etcd_txn_result res = { 0 };
	char *keys[2] = { NULL, NULL }, *vals[2] = { NULL, NULL };
	const char *rel[2];
	size_t i, nops = 0;
	int err = 0;

	for (i = 0; i < n && i < 2; i++) {
		const struct snap_var *v = snapshot_find(snap, names[i], strlen(names[i]));
		const struct override *o;
		struct etcd_op *op = &ops[nops];

		pthread_mutex_lock(&fs->ov_lock);
		o = override_set_find(&fs->ov, backend, arch, names[i]);
		/* Secrets stay on the node: no value, no key, no hash. */
		if ((v && v->secret) || (o && o->private)) {
			pthread_mutex_unlock(&fs->ov_lock);
			if ((err = note_secret(sd, backend, arch, names[i])) < 0)
				goto out;
			continue;
		}
		memset(op, 0, sizeof(*op));
		if (!o) {
			op->type = ETCD_OP_DELETE;
		} else if (!o->value) {
			op->type = ETCD_OP_PUT;
			op->value = "-";
			op->value_len = 1;
		} else if ((vals[nops] = malloc(o->value_len + 1))) {
			vals[nops][0] = '=';
			memcpy(vals[nops] + 1, o->value, o->value_len);
			op->type = ETCD_OP_PUT;
			op->value = vals[nops];
			op->value_len = o->value_len + 1;
		}
		pthread_mutex_unlock(&fs->ov_lock);
		if ((o && o->value && !vals[nops]) ||
		    !(keys[nops] = key_of(sd, backend, arch, names[i], &rel[nops]))) {
			err = -ENOMEM;
			goto out;
		}
		op->key = keys[nops];
		if (excl && i == 0) {
			cmp.key = keys[nops];
			cmp.target = ETCD_CREATE;
			cmp.op = ETCD_EQ;
			cmp.value = 0;
		}
		nops++;
	}
	if (!nops)
		goto out;
	err = sd->api->txn(sd->cli, &cmp, cmp.key ? 1 : 0, ops, nops, NULL, 0, &res);
	note_endpoint(sd, sd->cli);
	if (err < 0) {
		set_error(sd, "commit", sd->api->errmsg(sd->cli));
		err = -EIO;
		goto out;
	}
	if (!res.succeeded) {
		/* A timed-out attempt may have been the one that applied: the
		 * watch will bring its value; this call says it failed. */
		if (res.uncertain) {
			set_error(sd, "commit", "an attempt timed out and the retry found the key "
				  "taken: the first may have applied");
			err = -EIO;
		} else {
			err = -EEXIST;
		}
		goto out;
	}
	pthread_mutex_lock(&sd->lock);
	for (i = 0; i < nops && err == 0; i++)
		err = key_note(sd, rel[i], res.revision, ops[i].type == ETCD_OP_PUT);
	pthread_mutex_unlock(&sd->lock);
out:
	for (i = 0; i < 2; i++) {
		free(keys[i]);
		free(vals[i]);
	}
	return err;
}

/* ==== NODE REGISTRATION (sync-verify, fs/update/sync_register.c) ==========
 * Called after every publish of new snapshots: at start, after a reload
 * and after every commit, local or from etcd, with publish_lock held but
 * at start. The registration puts the node record (node_record_build)
 * under its lease; it must not wait on etcd here (hand the work to its
 * own thread). sync-verify's calls go in lines of their own below. */
void syncd_published(struct syncd *sd)
{
	struct epoch *e;
	int64_t rev;

	if (!sd || !sd->reg)
		return;
	pthread_mutex_lock(&sd->lock);
	rev = sd->applied_rev;
	pthread_mutex_unlock(&sd->lock);
	e = epoch_current(&sd->fs->state);
	sync_register_publish(sd->reg, e, rev);
	epoch_unref(e);
}
/* ==== end of NODE REGISTRATION ========================================== */

/* ---- the watch ------------------------------------------------------------ */

static void queue_item(struct syncd *sd, struct item *it)
{
	it->next = NULL;
	*sd->tail = it;
	sd->tail = &it->next;
	pthread_cond_broadcast(&sd->cond);
}

/* An event or a kv as an item (NULL: out of memory, or not one of ours,
 * which is noted). Lock not held. */
static struct item *item_of(struct syncd *sd, const char *key, const char *v,
			    size_t vlen, bool drop, int64_t rev)
{
	struct item *it;
	const char *value = NULL;
	size_t len = 0;
	char buf[1024], *b, *a, *n;

	if (strncmp(key, sd->prefix, sd->prefix_len) ||
	    !key_split(key + sd->prefix_len, buf, sizeof(buf), &b, &a, &n) ||
	    (!drop && value_decode(v, vlen, &value, &len) < 0)) {
		set_error(sd, "watch", "ignored a key that is not an override (docs/SYNC.md)");
		return NULL;
	}
	if (!(it = calloc(1, sizeof(*it))) || !(it->key = strdup(key + sd->prefix_len)) ||
	    (value && !(it->value = xstrndup(value, len)))) {
		if (it)
			free(it->key);
		free(it);
		set_error(sd, "watch", strerror(ENOMEM));
		return NULL;
	}
	it->kind = IT_CHANGE;
	it->len = len;
	it->drop = drop;
	it->rev = rev;
	return it;
}

static struct item *marker(enum item_kind kind, int64_t rev)
{
	struct item *it = calloc(1, sizeof(*it));

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
	struct item *p;
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
	struct item *p;
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
	struct timespec ts;
	bool stop;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
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
static void *watch_main(void *arg)
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
		note_endpoint(sd, sd->wcli);
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
			set_error(sd, "watch", "the history was compacted: read everything again");
			if ((err = resync(sd, &rev)) == 0)
				continue;
		}
		set_error(sd, "watch", sd->api->errmsg(sd->wcli));
		if (pause_ms(sd, sd->api->backoff_ms(++failures)))
			break;
	}
	return NULL;
}

/* ---- the applier ---------------------------------------------------------- */

/* Applies one change (publish_lock held); the invalidations into l. */
static void apply_change(struct syncd *sd, struct item *it, struct inval_list *l)
{
	struct envfs *fs = sd->fs;
	char buf[1024], *b, *a, *n;
	const struct override *o;
	struct keyrev *k;
	bool same, skip;
	int err;

	pthread_mutex_lock(&sd->lock);
	k = key_find(sd, it->key);
	/* The node's own echo, or older than what it has. */
	skip = k && it->rev <= k->rev;
	if (k && skip)
		k->seen = sd->resync_gen;
	pthread_mutex_unlock(&sd->lock);
	if (skip || !key_split(it->key, buf, sizeof(buf), &b, &a, &n))
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
		set_error(sd, "apply", msg);
		return;
	}
	pthread_mutex_lock(&sd->lock);
	if (key_note(sd, it->key, it->rev, !it->drop) < 0)
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
		struct item it = { .kind = IT_CHANGE, .drop = true, .rev = rev };
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

static void *apply_main(void *arg)
{
	struct syncd *sd = arg;
	struct envfs *fs = sd->fs;

	pthread_mutex_lock(&sd->lock);
	for (;;) {
		struct inval_list l = INVAL_LIST_INIT;
		struct item *it;

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

int syncd_start(struct syncd *sd)
{
	int err;

	syncd_published(sd);
	/* sync-verify: the registration's thread. */
	if ((err = sync_register_start(sd->reg)) < 0)
		return err;
	if ((err = -pthread_create(&sd->applier, NULL, apply_main, sd)) < 0)
		goto fail;
	if ((err = -pthread_create(&sd->watcher, NULL, watch_main, sd)) < 0) {
		pthread_mutex_lock(&sd->lock);
		sd->stop = true;
		pthread_cond_broadcast(&sd->cond);
		pthread_mutex_unlock(&sd->lock);
		pthread_join(sd->applier, NULL);
		goto fail;
	}
	sd->started = true;
	return 0;
fail:
	fprintf(stderr, "primus-envfs: --sync: cannot start its threads: %s\n", strerror(-err));
	return err;
}

void syncd_stop(struct syncd *sd)
{
	if (!sd || !sd->started)
		return;
	pthread_mutex_lock(&sd->lock);
	sd->stop = true;
	pthread_cond_broadcast(&sd->cond);
	pthread_mutex_unlock(&sd->lock);
	sd->api->interrupt(sd->wcli);
	pthread_join(sd->watcher, NULL);
	pthread_join(sd->applier, NULL);
	sd->started = false;
}

void syncd_free(struct syncd *sd)
{
	struct item *it;
	size_t i;

	if (!sd)
		return;
	syncd_stop(sd);
	/* sync-verify: leaves the registry (revokes the lease). */
	sync_register_free(sd->reg);
	while ((it = sd->head)) {
		sd->head = it->next;
		free(it->key);
		free(it->value);
		free(it);
	}
	for (i = 0; i < sd->nkeys; i++)
		free(sd->keys[i].key);
	free(sd->keys);
	if (sd->wcli)
		sd->api->close(sd->wcli);
	if (sd->cli)
		sd->api->close(sd->cli);
	free(sd->prefix);
	pthread_cond_destroy(&sd->cond);
	pthread_mutex_destroy(&sd->lock);
	free(sd);
}

/* ---- status --------------------------------------------------------------- */

static int add_time(struct strbuf *out, const char *key, const struct timespec *ts)
{
	struct tm tm;
	char buf[32];

	if (!ts->tv_sec)
		return sb_addf(out, "%s: never\n", key);
	gmtime_r(&ts->tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	return sb_addf(out, "%s: %s.%03ldZ\n", key, buf, ts->tv_nsec / 1000000);
}

int syncd_status(struct syncd *sd, struct strbuf *out)
{
	struct envfs *fs = sd->fs;
	size_t i, nremote = 0, nlocal = 0;
	int err;

	pthread_mutex_lock(&sd->lock);
	if ((err = sb_addf(out, "sync: %s\n", sd->so->endpoints)) < 0 ||
	    (err = sb_addf(out, "sync_run: %s\n", sd->so->run)) < 0 ||
	    (err = sb_addf(out, "sync_node: %s\n", sd->so->node)) < 0 ||
	    (err = sb_addf(out, "sync_endpoint: %s\n", sd->endpoint)) < 0 ||
	    (err = sb_addf(out, "sync_member: %016llx\n", (unsigned long long)sd->member)) < 0 ||
	    (err = sb_addf(out, "sync_connected: %s\n", sd->connected ? "yes" : "no")) < 0 ||
	    (err = sb_addf(out, "sync_revision: %lld\n", (long long)sd->applied_rev)) < 0 ||
	    (err = sb_addf(out, "sync_lag: %lld\n",
			   (long long)(sd->seen_rev > sd->applied_rev ?
				       sd->seen_rev - sd->applied_rev : 0))) < 0 ||
	    (err = add_time(out, "sync_last_applied", &sd->last_applied)) < 0 ||
	    (err = sb_addf(out, "sync_resyncs: %llu\n", (unsigned long long)sd->nresyncs)) < 0 ||
	    (err = sb_addf(out, "sync_last_error: %s\n", sd->last_error)) < 0)
		goto out;
	/* Local: what etcd does not have from this node (secrets above all),
	 * by name only. */
	pthread_mutex_lock(&fs->ov_lock);
	for (i = 0; i < fs->ov.n && err == 0; i++) {
		const struct override *o = &fs->ov.v[i];
		char rel[1024];
		struct keyrev *k;

		snprintf(rel, sizeof(rel), "%s/%s/%s", o->backend, o->arch, o->name);
		k = key_find(sd, rel);
		if (!o->private && k && k->present && !k->secret) {
			nremote++;
			continue;
		}
		nlocal++;
		err = sb_addf(out, "sync_local %s: %s\n", rel,
			      o->private || (k && k->secret) ? "secret, node-local" :
							      "not in etcd");
	}
	pthread_mutex_unlock(&fs->ov_lock);
	if (err == 0)
		err = sb_addf(out, "sync_overrides: local %zu remote %zu\n", nlocal, nremote);
out:
	pthread_mutex_unlock(&sd->lock);
	/* sync-verify: the lease and the record. */
	if (err == 0 && sd->reg)
		err = sync_register_status(sd->reg, out);
	return err;
}
