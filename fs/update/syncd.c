/* The mount's sync with etcd: start, stop, keys; see syncd.h and
 * docs/SYNC.md.
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

#include "statefile.h"
#include "syncd_internal.h"
#include "text.h"
#include "sync_register.h"

void syncd_set_error(struct syncd *sd, const char *what, const char *msg)
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

void syncd_note_endpoint(struct syncd *sd, struct etcd_client *c)
{
	char *to = c == sd->cli ? sd->commit_endpoint : sd->endpoint;

	pthread_mutex_lock(&sd->lock);
	snprintf(to, sizeof(sd->endpoint), "%s", sd->api->endpoint(c));
	pthread_mutex_unlock(&sd->lock);
}

struct syncd_key *syncd_key_find(struct syncd *sd, const char *rel)
{
	size_t i;

	for (i = 0; i < sd->nkeys; i++)
		if (!strcmp(sd->keys[i].key, rel))
			return &sd->keys[i];
	return NULL;
}

/* Records rel at rev (lock held). */
int syncd_key_note(struct syncd *sd, const char *rel, int64_t rev, bool present)
{
	struct syncd_key *k = syncd_key_find(sd, rel);

	if (!k) {
		if (sd->nkeys == sd->capkeys) {
			size_t cap = sd->capkeys ? 2 * sd->capkeys : 16;
			struct syncd_key *v = realloc(sd->keys, cap * sizeof(*v));

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

/* The key of backend/arch/name (caller-owned), its relative part at
 * *rel. */
char *syncd_key_of(struct syncd *sd, const char *backend, const char *arch,
		   const char *name, const char **rel)
{
	char *k;

	if (asprintf(&k, "%s%s/%s/%s", sd->prefix, backend, arch, name) < 0)
		return NULL;
	*rel = k + sd->prefix_len;
	return k;
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

		if (!syncd_key_split(rel, buf, sizeof(buf), &b, &a, &n) ||
		    syncd_value_decode(kv->value, kv->value_len, &value, &len) < 0) {
			struct strbuf q = STRBUF_INIT;

			/* Quoted and escaped: a key is any bytes, and one
			 * holding a newline or a terminal escape must not
			 * forge log lines. */
			if (text_quote(&q, kv->key, kv->key_len, 300) == 0)
				fprintf(stderr, "primus-envfs: --sync: ignoring %s: not an override "
					"(docs/SYNC.md)\n", sb_str(&q));
			sb_release(&q);
			continue;
		}
		o = override_set_find(&fs->ov, b, a, n);
		/* A secret of this node stays its own. */
		if (o && o->private)
			continue;
		if ((err = override_set_put(&fs->ov, b, a, n, value, len)) == 0)
			err = syncd_key_note(sd, rel, kv->mod_revision, true);
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
	if ((err = sync_load(&sd->api, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "primus-envfs: --sync: %s\n", msg);
		err = err == -EINVAL ? -EIO : err;
		goto out;
	}
	/* -EINVAL from open alone: the options are wrong (a usage error). */
	if ((err = sd->api->open(&sd->cli, so, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "primus-envfs: --sync: %s\n", msg);
		goto out;
	}
	if ((err = sd->api->connect(sd->cli, &st)) < 0) {
		fprintf(stderr, "primus-envfs: --sync %s: %s\n", so->endpoints,
			sd->api->errmsg(sd->cli));
		err = err == -EINVAL ? -EIO : err;
		goto out;
	}
	sd->member = st.member_id;
	syncd_note_endpoint(sd, sd->cli);
	/* The watch starts where the first call went. */
	memcpy(sd->endpoint, sd->commit_endpoint, sizeof(sd->endpoint));
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

int syncd_start(struct syncd *sd)
{
	int err;

	syncd_published(sd);
	/* sync-verify: the registration's thread. */
	if ((err = sync_register_start(sd->reg)) < 0)
		return err;
	if ((err = -pthread_create(&sd->applier, NULL, syncd_apply_main, sd)) < 0)
		goto fail;
	if ((err = -pthread_create(&sd->watcher, NULL, syncd_watch_main, sd)) < 0) {
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
	struct syncd_item *it;
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

