/* The mount's sync with etcd: start, stop, keys; see syncd.h and
 * docs/SYNC.md.
 *
 * An override's key is PREFIX/runs/RUN/overrides/BACKEND/ARCH/NAME and its
 * value says what the override is: '=' followed by the value's bytes (a
 * set; "=" alone is the empty value), or the single byte '-' (an unset:
 * the rm of a variable a lower layer sets). A deleted key is no override
 * (the rm of an override: the resolved value comes back). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "log.h"
#include "register_backoff.h"
#include "resolve.h"
#include "statefile.h"
#include "syncd_internal.h"
#include "syncd_startread.h"
#include "text.h"
#include "sync_register.h"

/* ---- start ---------------------------------------------------------------- */

/* Monotonic ms, the start-up retries' clock. */
static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	nanosleep(&(struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000L }, NULL);
}

/* Whether a failed start-up call is tried again (after the wait): a busy
 * cluster's failure, within the start's budget. */
static bool start_again(struct start_retry *sr, int err)
{
	unsigned wait;

	if (start_retry_next(sr, err, mono_ms(), &wait) < 0)
		return false;
	sleep_ms(wait);
	return true;
}

static const char *budget_note(const struct start_retry *sr, int err)
{
	return start_retry_busy(err) && sr->failures ?
	       " (etcd stayed busy for the whole start-up budget)" : "";
}

/* The start-up read: every override etcd has for the run, kept for
 * syncd_take_startup (which needs the specs to know the node-scoped
 * names); a busy cluster's failures tried again within the budget. The
 * member's own answer first, taken only when it holds the name's claim
 * (syncd_startread.h), so that it shows every write acknowledged before
 * this mount started. */
static int read_all(struct syncd *sd, struct start_retry *sr)
{
	struct start_read rd;
	int64_t rev = 0;
	unsigned wait;
	int err;

	start_read_init(&rd, sync_register_claim_revision(sd->reg));
	for (;;) {
		err = syncd_read_prefix(sd, sd->cli, true, start_read_serializable(&rd),
					&sd->startup, &rev);
		if ((err = start_read_check(&rd, err, rev, &sr->seed, &wait)) == 0)
			break;
		syncd_items_free(sd->startup);
		sd->startup = NULL;
		if (err > 0) {
			sleep_ms(wait);
			continue;
		}
		if (err != -ENOMEM && start_again(sr, err))
			continue;
		if (err != -ENOMEM)
			log_err("--sync: cannot read %s: %s%s", sd->prefix,
				sd->api->errmsg(sd->cli), budget_note(sr, err));
		return err;
	}
	sd->start_rev = rev;
	sd->applied_rev = sd->seen_rev = rev;
	return 0;
}

/* A node that was in the run before (its fence was there) and comes
 * back with its --state: a shared override --state has and etcd does not
 * was removed (or moved away) from the run while the node was away, and
 * goes. Every write of a node of the run went to etcd first, so nothing
 * of its own is lost; its secrets and node-scoped names stay. Without a
 * fence the node is new to the run, and what --state has stays
 * node-local. Called with sd->lock held (then ov_lock, status's order). */
static int drop_removed(struct syncd *sd, const struct world *w)
{
	struct envfs *fs = sd->fs;
	size_t i, dropped = 0;
	int err = 0;

	pthread_mutex_lock(&fs->ov_lock);
	for (i = fs->ov.n; i-- > 0 && err == 0;) {
		const struct override *o = &fs->ov.v[i];
		const struct syncd_key *k;
		char rel[1024], what[1024];

		if (o->private || o->pending || world_node_scoped(w, o->name))
			continue;
		if ((size_t)snprintf(rel, sizeof(rel), "%s/%s/%s", o->backend, o->arch,
				     o->name) >= sizeof(rel))
			continue;
		if ((k = syncd_key_find(sd, rel)) && k->present)
			continue;
		snprintf(what, sizeof(what), "%s", rel);
		if ((err = override_set_drop(&fs->ov, o->backend, o->arch, o->name)) < 0)
			break;
		dropped++;
		log_notice("--sync: %s: removed from the run while this node was away; "
			   "the override --state kept is dropped", what);
	}
	if (err == 0 && dropped && fs->state_path &&
	    (err = statefile_save(fs->state_path, &fs->ov)) < 0)
		log_err("cannot save the state to %s: %s", fs->state_path, strerror(-err));
	pthread_mutex_unlock(&fs->ov_lock);
	return err == -ENOENT ? 0 : err;
}

int syncd_take_startup(struct syncd *sd, const struct world *w)
{
	struct envfs *fs = sd->fs;
	struct syncd_item *it, **pp;
	char buf[1024], *b, *a, *n;
	bool changed = false;
	int err = 0;

	/* The node-scoped names' keys out first: sd->lock is never taken
	 * under ov_lock (status takes them the other way round). */
	for (pp = &sd->startup; (it = *pp);) {
		if (syncd_key_split(it->key, buf, sizeof(buf), &b, &a, &n) &&
		    syncd_ignore_node_key(sd, w, it->key, n)) {
			*pp = it->next;
			it->next = NULL;
			syncd_items_free(it);
			continue;
		}
		pp = &it->next;
	}
	pthread_mutex_lock(&fs->ov_lock);
	/* The state says whose it is in the run, so that set --state
	 * refuses a change this node's next start would replace. */
	if (!fs->ov.sync_run || strcmp(fs->ov.sync_run, sd->so->run) ||
	    !fs->ov.sync_node || strcmp(fs->ov.sync_node, sd->so->node)) {
		char *run = strdup(sd->so->run), *node = strdup(sd->so->node);

		if (!run || !node) {
			free(run);
			free(node);
			err = -ENOMEM;
		} else {
			free(fs->ov.sync_run);
			free(fs->ov.sync_node);
			fs->ov.sync_run = run;
			fs->ov.sync_node = node;
			changed = true;
		}
	}
	for (it = sd->startup; it && err == 0; it = it->next) {
		const struct override *o;

		/* drop: not taken (startup items are never deletions). */
		it->drop = true;
		if (!syncd_key_split(it->key, buf, sizeof(buf), &b, &a, &n))
			continue;
		o = override_set_find(&fs->ov, b, a, n);
		/* A secret of this node stays its own. */
		if (o && o->private)
			continue;
		if ((err = override_set_put(&fs->ov, b, a, n, it->value, it->len)) == 0)
			it->drop = false;
		changed = true;
	}
	if (err == 0 && changed && fs->state_path &&
	    (err = statefile_save(fs->state_path, &fs->ov)) < 0)
		log_err("cannot save the state to %s: %s",
			fs->state_path, strerror(-err));
	pthread_mutex_unlock(&fs->ov_lock);
	pthread_mutex_lock(&sd->lock);
	for (it = sd->startup; it && err == 0; it = it->next)
		if (!it->drop)
			err = syncd_key_note(sd, it->key, it->rev, true);
	if (err == 0 && sd->fence_existed)
		err = drop_removed(sd, w);
	pthread_mutex_unlock(&sd->lock);
	syncd_items_free(sd->startup);
	sd->startup = NULL;
	if (err == -ENOMEM)
		log_err("--sync: %s", strerror(ENOMEM));
	return err;
}

/* The bound of the history's read of a revision's writer (writer_of). */
#define WRITER_READ_MS 300

int syncd_new(struct envfs *fs, const struct sync_opts *so, struct syncd **out)
{
	struct syncd *sd = calloc(1, sizeof(*sd));
	struct start_retry sr;
	struct etcd_status st;
	char msg[1024];
	int err;

	*out = NULL;
	if (!sd) {
		log_err("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	pthread_mutex_init(&sd->lock, NULL);
	pthread_cond_init(&sd->cond, NULL);
	sd->tail = &sd->head;
	sd->fs = fs;
	sd->so = so;
	snprintf(sd->last_error, sizeof(sd->last_error), "none");
	if ((err = sync_load(&sd->api, msg, sizeof(msg))) < 0) {
		log_err("--sync: %s", msg);
		err = err == -EINVAL ? -EIO : err;
		goto out;
	}
	/* -EINVAL from open alone: the options are wrong (a usage error). */
	if ((err = sd->api->open(&sd->cli, so, msg, sizeof(msg))) < 0) {
		log_err("--sync: %s", msg);
		goto out;
	}
	/* The mounts of a job start together: their first calls spread over
	 * a second, and a busy cluster's failures of the start-up's calls
	 * tried again (register_backoff.h), so that 1,024 of them neither
	 * fall on etcd in step nor fail against a healthy cluster they
	 * overload for a moment. */
	start_retry_init(&sr, so->timeout_ms, 0, register_seed());
	sleep_ms(register_start_delay_ms(&sr.seed));
	sr.start_ms = mono_ms();
	while ((err = sd->api->connect(sd->cli, &st)) < 0 && start_again(&sr, err))
		;
	if (err < 0) {
		log_err("--sync %s: %s%s", so->endpoints, sd->api->errmsg(sd->cli),
			budget_note(&sr, err));
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
	/* sync-verify: the registration, with a client of its own. The
	 * name first: a mount refused it must leave the holder's --state
	 * and fence alone (a fence moved under the holder fails its next
	 * commit's compare), and one that waits for a dead holder moves
	 * the fence only once that holder's lease ended. */
	{
		struct etcd_client *rc;

		if ((err = sd->api->dup(&rc, sd->cli)) < 0 ||
		    (err = sync_register_new(sd->api, rc, so, &sd->reg)) < 0 ||
		    (err = sync_register_claim(sd->reg, fs->opts->mountpoint, &sr)) < 0)
			goto out;
	}
	if ((err = read_all(sd, &sr)) < 0)
		goto out;
	/* The fence (syncd_fence.c): clients of its own, so that a
	 * shutdown's interrupt of the commits' client leaves one to move
	 * it with. */
	err = -ENOMEM;
	if (asprintf(&sd->fence_key, "%s/runs/%s/fence/%s", so->prefix, so->run, so->node) < 0) {
		sd->fence_key = NULL;
		goto out;
	}
	if (getrandom(&sd->fence_nonce, sizeof(sd->fence_nonce), 0) != sizeof(sd->fence_nonce))
		sd->fence_nonce = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	if ((err = sd->api->dup(&sd->fcli, sd->cli)) < 0 ||
	    (err = sd->api->dup(&sd->scli, sd->cli)) < 0 ||
	    (err = sd->api->dup(&sd->hcli, sd->cli)) < 0)
		goto out;
	sd->api->set_bound(sd->scli, SHUTDOWN_FENCE_MS);
	/* Who wrote a revision is for the history only: the applier asks it
	 * before each remote change, and a slow member must not hold every
	 * change back for a whole --sync-timeout (the writer is then shown
	 * as not known). */
	sd->api->set_bound(sd->hcli, so->timeout_ms < WRITER_READ_MS ? so->timeout_ms :
				     WRITER_READ_MS);
	if ((err = syncd_fence_init(sd)) < 0)
		goto out;
	*out = sd;
	sd = NULL;
out:
	syncd_free(sd);
	return err;
}


int syncd_start(struct syncd *sd)
{
	sigset_t all, old;
	int err;

	/* Under publish_lock as every publish: the reload thread may run. */
	pthread_mutex_lock(&sd->fs->publish_lock);
	syncd_published(sd);
	pthread_mutex_unlock(&sd->fs->publish_lock);
	/* Termination signals belong to the FUSE loop's thread, which ends
	 * the session on them: the threads started here (they inherit the
	 * mask) must never take one, or an idle mount would not wake. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* The registration's thread. */
	if ((err = sync_register_start(sd->reg)) < 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return err;
	}
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
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	sd->started = true;
	return 0;
fail:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	log_err("--sync: cannot start its threads: %s", strerror(-err));
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
	sd->api->interrupt(sd->hcli);
	/* The applier may be learning a write's outcome. */
	syncd_interrupt(sd);
	pthread_join(sd->watcher, NULL);
	pthread_join(sd->applier, NULL);
	sd->started = false;
}

void syncd_free(struct syncd *sd)
{
	size_t i;

	if (!sd)
		return;
	syncd_stop(sd);
	/* sync-verify: leaves the registry (revokes the lease). */
	sync_register_free(sd->reg);
	syncd_items_free(sd->head);
	syncd_items_free(sd->startup);
	for (i = 0; i < sd->nkeys; i++)
		free(sd->keys[i].key);
	free(sd->keys);
	hindex_release(&sd->keys_index);
	free(sd->stalled_key);
	syncd_unknown_release(sd);
	syncd_items_free(sd->fresh);
	for (i = 0; i < sd->nreadopt; i++)
		free(sd->readopt[i]);
	free(sd->readopt);
	if (sd->wcli)
		sd->api->close(sd->wcli);
	if (sd->fcli)
		sd->api->close(sd->fcli);
	if (sd->scli)
		sd->api->close(sd->scli);
	if (sd->hcli)
		sd->api->close(sd->hcli);
	free(sd->fence_key);
	if (sd->cli)
		sd->api->close(sd->cli);
	free(sd->prefix);
	pthread_cond_destroy(&sd->cond);
	pthread_mutex_destroy(&sd->lock);
	free(sd);
}


const struct envfs_sync_hooks syncd_hooks = {
	.make = syncd_new,
	.start = syncd_start,
	.stop = syncd_stop,
	.free = syncd_free,
	.status = syncd_status,
	.take_startup = syncd_take_startup,
	.published = syncd_published,
	.commit = syncd_commit,
	.readopt = syncd_readopt,
	.key_present = syncd_key_present,
	.catch_up = syncd_catch_up,
	.may_retry = syncd_may_retry,
	.unshare = syncd_unshare,
};
