/* syncd_commit: a local change into etcd before --state; see syncd.h.
 * Each commit compares and moves the node's fence (syncd_fence.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history_note.h"
#include "log.h"
#include "reload.h"
#include "resolve.h"
#include "snapshot.h"
#include "sync_register.h"
#include "syncd_internal.h"

/* Marks backend/arch/name as kept on the node, for status: a secret, or
 * a node-scoped name. */
static int note_local(struct syncd *sd, const char *backend, const char *arch,
		      const char *name, bool secret)
{
	const char *rel;
	char *key = syncd_key_of(sd, backend, arch, name, &rel);
	struct syncd_key *k;
	int err = -ENOMEM;

	if (!key)
		return err;
	pthread_mutex_lock(&sd->lock);
	if (!(k = syncd_key_find(sd, rel)) && (err = syncd_key_note(sd, rel, 0, false)) == 0)
		k = syncd_key_find(sd, rel);
	if (k) {
		if (secret)
			k->secret = true;
		else
			k->node_local = true;
		err = 0;
	}
	pthread_mutex_unlock(&sd->lock);
	free(key);
	return err;
}

static unsigned elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

bool syncd_may_retry(struct syncd *sd, unsigned attempt, const struct timespec *t0)
{
	/* Each try re-reads, applies and resolves again (more than the
	 * bare txn of before): the whole bound, so that racing writers on
	 * a slow node still get through. */
	if (attempt < 20 && elapsed_ms(t0) <= sd->so->timeout_ms)
		return true;
	syncd_set_error(sd, "commit", "the keys kept changing under concurrent writes");
	return false;
}

/* A commit's token, and who made it: the fence key is in the commit's
 * revision, so another node reads there what its history says of it
 * (syncd_watch.c). */
static void commit_token(struct syncd *sd, const struct hist_writer *who, const char *cause,
			 char *out, size_t n)
{
	size_t len;

	syncd_make_token(sd, 'c', out, n);
	len = strlen(out);
	if (who && !who->no_ids)
		snprintf(out + len, n - len, " %s %u %d", cause, who->uid, who->pid);
	else
		snprintf(out + len, n - len, " %s - -", cause);
}

static void name_lost(struct syncd *sd)
{
	char msg[400];

	snprintf(msg, sizeof(msg), "this mount does not hold its node name %s now (its lease "
		 "ran out while it was stopped or cut off from etcd, and another mount may "
		 "hold it): the write is applied nowhere", sd->so->node);
	syncd_set_error_unheld(sd, "commit", msg, sync_register_hold(sd->reg));
}

/* The txn of token got no answer (err): 1 when it applied after all (at
 * *rev), -EIO when it is applied nowhere, -ETIMEDOUT when its outcome is
 * unknown (status names it). uncertain: it may have been sent. */
static int lost(struct syncd *sd, const char *backend, const char *arch,
		const char *const *names, size_t n, const char *token, bool uncertain,
		int64_t *rev)
{
	bool shutting = atomic_load(&sd->shutting);
	char msg[700];
	int r;

	snprintf(msg, sizeof(msg), "%s", sd->api->errmsg(sd->cli));
	if (!uncertain) {
		syncd_set_error(sd, "commit", msg);
		return -EIO;
	}
	/* The member the commit tried first held it up: the move starts at
	 * the next one, not there again (a stopped leader takes a whole
	 * attempt's time to say nothing). */
	sd->api->follow(shutting ? sd->scli : sd->fcli, sd->cli);
	if ((r = syncd_fence_move(sd, shutting ? sd->scli : sd->fcli, token, rev)) == 1)
		return 1;
	if (r == 0) {
		/* Cut to leave room for the words that matter. */
		msg[400] = '\0';
		strncat(msg, "; the write is applied nowhere (the fence moved)",
			sizeof(msg) - strlen(msg) - 1);
		syncd_set_error(sd, "commit", msg);
		return -EIO;
	}
	msg[400] = '\0';
	strncat(msg, r == -ESTALE ? "; outcome unknown: the write may still be applied, and this "
		"mount does not hold its node name now (status: sync_write_unknown)" :
		"; outcome unknown: the write may still be applied (status: sync_write_unknown)",
		sizeof(msg) - strlen(msg) - 1);
	syncd_set_error(sd, "commit", msg);
	if (syncd_unknown_note(sd, backend, arch, names, n, token) < 0 || shutting)
		syncd_unknown_release(sd);
	/* Not EIO: a caller must be able to tell "may still land" from
	 * "applied nowhere" by the errno alone (status may have learned the
	 * outcome by the time it looks). */
	return -ETIMEDOUT;
}

/* Where etcd holds the n keys now (a compare failed on them), for
 * syncd_catch_up: it->rev is the key's mod_revision, or for a key
 * etcd does not have, the revision of the read. */
static int read_fresh(struct syncd *sd, char *const *keys, size_t n)
{
	struct syncd_item *head = NULL, **tail = &head;
	size_t i;
	int err = 0;

	for (i = 0; i < n && err == 0; i++) {
		struct etcd_range r = { 0 };
		struct syncd_item *it;
		const char *value = NULL;
		size_t len = 0;

		if ((err = sd->api->get(sd->cli, keys[i], &r)) < 0)
			goto next;
		/* A value that is not an override: nothing to recompute from;
		 * the watch says so. */
		if (r.n && syncd_value_decode(r.kvs[0].value, r.kvs[0].value_len, &value, &len) < 0)
			goto next;
		if (!(it = calloc(1, sizeof(*it))) ||
		    !(it->key = strdup(keys[i] + sd->prefix_len)) ||
		    (value && !(it->value = xstrndup(value, len)))) {
			syncd_items_free(it);
			err = -ENOMEM;
			goto next;
		}
		it->kind = IT_CHANGE;
		it->len = len;
		it->drop = !r.n;
		it->rev = r.n ? r.kvs[0].mod_revision : r.revision;
		*tail = it;
		tail = &it->next;
next:
		sd->api->range_free(&r);
	}
	syncd_items_free(sd->fresh);
	sd->fresh = head;
	return err;
}

/* Whether the node has each item's key where etcd had it (sd->lock
 * held): at its mod_revision or later, or, for a key etcd did not have,
 * gone (or put again later). */
static bool caught_up(struct syncd *sd, const struct syncd_item *it)
{
	for (; it; it = it->next) {
		struct syncd_key *k = syncd_key_find(sd, it->key);

		if (it->drop ? k && k->present && k->rev < it->rev : !k || k->rev < it->rev)
			return false;
	}
	return true;
}

int syncd_catch_up(struct syncd *sd, const struct timespec *t0)
{
	struct syncd_item *it = sd->fresh;
	unsigned spent = elapsed_ms(t0);
	struct timespec until;
	bool done;

	sd->fresh = NULL;
	if (!it)
		return 0;
	until = reload_deadline_in(spent < sd->so->timeout_ms ? (int)(sd->so->timeout_ms - spent) : 0);
	pthread_mutex_unlock(&sd->fs->publish_lock);
	pthread_mutex_lock(&sd->lock);
	while (!(done = caught_up(sd, it)) && !sd->stop && !atomic_load(&sd->shutting) &&
	       pthread_cond_timedwait(&sd->cond, &sd->lock, &until) != ETIMEDOUT)
		;
	if (!done)
		done = caught_up(sd, it);
	pthread_mutex_unlock(&sd->lock);
	pthread_mutex_lock(&sd->fs->publish_lock);
	if (!done) {
		char msg[1300];

		snprintf(msg, sizeof(msg), "another node changed %s (revision %lld), and this "
			 "node's watch has not delivered that change within --sync-timeout (its "
			 "member lags behind or is cut off): the write is applied nowhere",
			 it->key, (long long)it->rev);
		syncd_set_error(sd, "commit", msg);
	}
	syncd_items_free(it);
	return done ? 0 : -EIO;
}

/* Keeps rel (the key of a private override a commit removes) for
 * syncd_readopt; publish_lock held. */
static int keep_readopt(struct syncd *sd, const char *rel)
{
	char **v = realloc(sd->readopt, (sd->nreadopt + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	sd->readopt = v;
	if (!(v[sd->nreadopt] = strdup(rel)))
		return -ENOMEM;
	sd->nreadopt++;
	return 0;
}

void syncd_readopt(struct syncd *sd, struct inval_list *inval)
{
	size_t i;

	for (i = 0; i < sd->nreadopt; i++) {
		struct etcd_range r = { 0 };
		struct syncd_item it = { .kind = IT_CHANGE };
		struct syncd_key *k;
		const char *value = NULL;
		char *key = NULL;
		size_t len = 0;
		bool take = false;

		if (asprintf(&key, "%s%s", sd->prefix, sd->readopt[i]) < 0) {
			key = NULL;
			goto next;
		}
		/* The key as the watch passed it (the node has seen its
		 * revision): taken now, in order. Newer than that: the watch
		 * brings it, the override no longer in its way. */
		if (sd->api->get(sd->cli, key, &r) < 0 || !r.n ||
		    syncd_value_decode(r.kvs[0].value, r.kvs[0].value_len, &value, &len) < 0)
			goto next;
		pthread_mutex_lock(&sd->lock);
		k = syncd_key_find(sd, sd->readopt[i]);
		if (k && k->present && r.kvs[0].mod_revision <= k->rev) {
			take = true;
			/* wanted() passes over what the node has seen. */
			k->rev = r.kvs[0].mod_revision - 1;
		}
		pthread_mutex_unlock(&sd->lock);
		if (!take)
			goto next;
		it.key = sd->readopt[i];
		it.value = (char *)value;
		it.len = len;
		it.rev = r.kvs[0].mod_revision;
		syncd_apply_items(sd, &it, NULL, inval);
		/* Not applied (the apply failed and said so): the node has
		 * still seen that revision, or its next compare of the key
		 * would wait for a watch event that has passed. */
		pthread_mutex_lock(&sd->lock);
		if ((k = syncd_key_find(sd, sd->readopt[i])) && k->rev < it.rev)
			k->rev = it.rev;
		pthread_mutex_unlock(&sd->lock);
next:
		sd->api->range_free(&r);
		free(key);
		free(sd->readopt[i]);
	}
	free(sd->readopt);
	sd->readopt = NULL;
	sd->nreadopt = 0;
}

int syncd_commit(struct syncd *sd, const struct hist_writer *who, const char *backend,
		 const char *arch, const char *const *names, size_t n, unsigned mine, bool excl,
		 const char *cause, const struct snapshot *snap)
{
	struct envfs *fs = sd->fs;
	struct etcd_op ops[3];
	struct etcd_cmp cmp[4];
	struct etcd_txn_result res = { 0 };
	char *keys[2] = { NULL, NULL }, *vals[2] = { NULL, NULL }, token[SYNCD_TOKEN_MAX];
	const char *rel[2];
	int64_t rev = 0;
	size_t i, nops = 0;
	int err = 0, r;

	for (i = 0; i < n && i < 2; i++) {
		const struct snap_var *v = snapshot_find(snap, names[i], strlen(names[i]));
		const struct override *o;
		struct etcd_op *op = &ops[nops];
		bool secret;

		pthread_mutex_lock(&fs->ov_lock);
		o = override_set_find(&fs->ov, backend, arch, names[i]);
		/* Secrets stay on the node: no value, no key, no hash. A
		 * name that is secret by its name (a spec, a pattern, --secret) counts whatever the new
		 * snapshot says of it: after an rm it holds no value there,
		 * and the unset it leaves must not take other nodes' own.
		 * So does a node-scoped name (NODE_RANK): shared, it would
		 * give every node the writer's value. */
		secret = (v && v->secret) || (o && o->private) || (mine & (1u << i)) ||
			 world_name_secret(fs->world, names[i]);

		if (secret || world_node_scoped(fs->world, names[i])) {
			pthread_mutex_unlock(&fs->ov_lock);
			if ((err = note_local(sd, backend, arch, names[i], secret)) < 0)
				goto out;
			if ((mine & (1u << i)) && !o && !world_node_scoped(fs->world, names[i]) &&
			    !world_name_secret(fs->world, names[i])) {
				const char *rel0;
				char *k0 = syncd_key_of(sd, backend, arch, names[i], &rel0);

				err = k0 ? keep_readopt(sd, rel0) : -ENOMEM;
				free(k0);
				if (err < 0)
					goto out;
			}
			/* excl is about names[0], which is not in etcd. */
			if (i == 0)
				excl = false;
			continue;
		}
		memset(op, 0, sizeof(*op));
		op->type = o ? ETCD_OP_PUT : ETCD_OP_DELETE;
		err = o ? syncd_value_encode(o->value, o->value_len, &vals[nops],
					     &op->value_len) : 0;
		op->value = vals[nops];
		pthread_mutex_unlock(&fs->ov_lock);
		if (err < 0 ||
		    !(keys[nops] = syncd_key_of(sd, backend, arch, names[i], &rel[nops]))) {
			err = -ENOMEM;
			goto out;
		}
		op->key = keys[nops];
		nops++;
	}
	if (!nops)
		goto out;
	/* Shutting down: nothing is sent any more, so nothing can apply. */
	if (atomic_load(&sd->shutting)) {
		syncd_set_error(sd, "commit", "the mount is shutting down");
		err = -EIO;
		goto out;
	}
	/* A write of unknown outcome first: the fence must say where it is
	 * before another commit compares it. */
	if (sd->unknown && syncd_fence_resolve(sd, false) < 0) {
		char msg[600];

		snprintf(msg, sizeof(msg), "the outcome of an earlier write is still unknown: %s",
			 sd->api->errmsg(sd->fcli));
		syncd_set_error(sd, "commit", msg);
		err = -EIO;
		goto out;
	}
	/* Each key compared with the mod_revision this node has of it (0:
	 * absent): a failed compare means another node changed it, and the
	 * change is recomputed from what etcd has (-EAGAIN). */
	pthread_mutex_lock(&sd->lock);
	for (i = 0; i < nops; i++) {
		struct syncd_key *k = syncd_key_find(sd, rel[i]);

		cmp[i] = (struct etcd_cmp){ .key = keys[i], .target = ETCD_MOD, .op = ETCD_EQ,
					    .value = excl && i == 0 ? 0 :
						     k && k->present ? k->rev : 0 };
	}
	pthread_mutex_unlock(&sd->lock);
	commit_token(sd, who, cause, token, sizeof(token));
	cmp[nops] = (struct etcd_cmp){ .key = sd->fence_key, .target = ETCD_MOD, .op = ETCD_EQ,
				       .value = sd->fence_rev };
	ops[nops] = (struct etcd_op){ .type = ETCD_OP_PUT, .key = sd->fence_key, .value = token,
				      .value_len = strlen(token) };
	if (syncd_hold_cmp(sd, &cmp[nops + 1]) < 0) {
		name_lost(sd);
		err = -EIO;
		goto out;
	}
	err = sd->api->txn(sd->cli, cmp, nops + 2, ops, nops + 1, NULL, 0, &res);
	syncd_note_endpoint(sd, sd->cli);
	if (err < 0) {
		if ((r = lost(sd, backend, arch, names, n, token,
			      res.uncertain || err == -EINTR, &rev)) < 0) {
			err = r;
			goto out;
		}
		err = 0;
		res.revision = rev;
	} else if (res.succeeded) {
		sd->fence_rev = res.revision;
	} else {
		/* The fence moved: by an earlier attempt of this very txn
		 * (its token: applied), or not by this node's commits (a
		 * lost fence move or put applying late): the keys are then
		 * compared again on what etcd has. Or the name is not this
		 * mount's any more: then no attempt of the txn can pass its
		 * compare, ever (a name taken again has a new hold), so
		 * unless the fence holds its token, it is applied nowhere. */
		r = syncd_fence_read(sd, sd->cli, token, &rev, false);
		if (r == 0) {
			int held = syncd_hold_check(sd, sd->cli);

			if (held == 0) {
				name_lost(sd);
				err = -EIO;
				goto out;
			}
			if (held < 0)
				r = held;
		}
		if (r < 0) {
			if (res.uncertain && (r = lost(sd, backend, arch, names, n, token, true,
						       &rev)) < 0) {
				err = r;
				goto out;
			}
			if (r < 0) {
				syncd_set_error(sd, "commit", sd->api->errmsg(sd->cli));
				err = -EIO;
				goto out;
			}
		}
		if (r == 1) {
			res.revision = rev;
		} else {
			/* Another node wrote first: what is there now? */
			if ((err = read_fresh(sd, keys, nops)) < 0) {
				syncd_set_error(sd, "commit", sd->api->errmsg(sd->cli));
				err = -EIO;
				goto out;
			}
			err = excl && sd->fresh && !sd->fresh->drop &&
			      !strcmp(sd->fresh->key, rel[0]) ? -EEXIST : -EAGAIN;
			goto out;
		}
	}
	pthread_mutex_lock(&sd->lock);
	for (i = 0; i < nops && err == 0; i++)
		err = syncd_key_note(sd, rel[i], res.revision, ops[i].type == ETCD_OP_PUT);
	pthread_mutex_unlock(&sd->lock);
out:
	for (i = 0; i < 2; i++) {
		free(keys[i]);
		free(vals[i]);
	}
	return err;
}

bool syncd_key_present(struct syncd *sd, const char *backend, const char *arch,
		       const char *name)
{
	const char *rel;
	char *key = syncd_key_of(sd, backend, arch, name, &rel);
	struct syncd_key *k;
	bool present;

	/* Out of memory: say present, so that nothing is dropped. */
	if (!key)
		return true;
	pthread_mutex_lock(&sd->lock);
	present = (k = syncd_key_find(sd, rel)) && k->present;
	pthread_mutex_unlock(&sd->lock);
	free(key);
	return present;
}

void syncd_unshare(struct syncd *sd, const char *backend, const char *arch,
		   const char *name)
{
	const char *rel;
	char *key = syncd_key_of(sd, backend, arch, name, &rel);
	struct syncd_key *k;

	if (!key)
		return;
	pthread_mutex_lock(&sd->lock);
	if ((k = syncd_key_find(sd, rel)) && k->rev > 0)
		k->rev--;
	pthread_mutex_unlock(&sd->lock);
	free(key);
}

void syncd_interrupt(struct syncd *sd)
{
	if (!sd)
		return;
	atomic_store(&sd->shutting, true);
	sd->api->interrupt(sd->cli);
	sd->api->interrupt(sd->fcli);
	/* A commit waiting for the watch (syncd_catch_up) stops too. */
	pthread_mutex_lock(&sd->lock);
	pthread_cond_broadcast(&sd->cond);
	pthread_mutex_unlock(&sd->lock);
}
