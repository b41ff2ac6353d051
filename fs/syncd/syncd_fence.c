/* syncd_fence: the node's fence and the outcome of a write whose answer
 * was lost; see syncd_internal.h.
 *
 * The fence. A txn whose answer is lost (a timeout, a member stopped
 * with the request in its socket, a leader change) may still be applied
 * by etcd later, when nobody waits for it. So every commit's txn also
 * compares this node's fence key (PREFIX/runs/RUN/fence/NODE) with the
 * mod_revision the node left it at, and puts a token of its own there.
 * A writer that lost its answer moves the fence (a txn on the same
 * compare) before it answers: if the move succeeds, the lost txn can
 * never pass its compare, and EIO means applied nowhere; if the move's
 * compare fails, the fence holds the commit's token, and the commit did
 * apply (close() returns 0). Only when no member takes the move within
 * the bound is the outcome unknown (ETIMEDOUT): status names the write,
 * and the next commit or the watch's return learns it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sync_register.h"
#include "syncd_internal.h"

/* A fence value no other write has: kind 'c' (a commit) or 'f' (a
 * move), the mount's nonce and a count. */
void syncd_make_token(struct syncd *sd, char kind, char *out, size_t n)
{
	snprintf(out, n, "%c %016llx %llu", kind, (unsigned long long)sd->fence_nonce,
		 (unsigned long long)++sd->fence_seq);
}

static bool holds(const struct etcd_kv *kv, const char *token)
{
	return token && kv->value_len == strlen(token) && !memcmp(kv->value, token, kv->value_len);
}

/* Whether kv holds a token of this mount's (its nonce), of any kind. */
static bool ours(struct syncd *sd, const struct etcd_kv *kv)
{
	char nonce[24];
	int n = snprintf(nonce, sizeof(nonce), " %016llx ", (unsigned long long)sd->fence_nonce);

	return kv->value_len > (size_t)n && !memcmp(kv->value + 1, nonce, (size_t)n);
}

/* The compare that makes a txn apply only while this mount holds its
 * node name: a mount whose lease ran out (stopped, cut off) and whose
 * name another mount took must neither share a write nor move the fence
 * the new holder's commits compare. 0, or -ESTALE when the mount knows
 * it does not hold the name now. */
int syncd_hold_cmp(struct syncd *sd, struct etcd_cmp *cmp)
{
	int64_t hold = sync_register_hold(sd->reg);

	if (!hold)
		return -ESTALE;
	*cmp = (struct etcd_cmp){ .key = sync_register_hold_key(sd->reg), .target = ETCD_CREATE,
				  .op = ETCD_EQ, .value = hold };
	return 0;
}

/* After a failed compare: 1 when the name is still this mount's, 0 when
 * not, or the client's error. */
int syncd_hold_check(struct syncd *sd, struct etcd_client *c)
{
	int64_t hold = sync_register_hold(sd->reg);
	struct etcd_range r = { 0 };
	int err;

	if (!hold)
		return 0;
	if ((err = sd->api->get(c, sync_register_hold_key(sd->reg), &r)) == 0)
		err = r.n && r.kvs[0].create_revision == hold;
	sd->api->range_free(&r);
	return err;
}

/* Reads the fence: sd->fence_rev follows it. 1 when it holds token (the
 * commit of that token applied, at *rev), 0 when not, or a negative
 * errno; with foreign set, -ESTALE when it holds another mount's token
 * (one that held this node name meanwhile wrote it: whether token's
 * commit applied before that cannot be told from here). */
int syncd_fence_read(struct syncd *sd, struct etcd_client *c, const char *token, int64_t *rev,
		      bool foreign)
{
	struct etcd_range r = { 0 };
	int err;

	if ((err = sd->api->get(c, sd->fence_key, &r)) == 0) {
		if (r.n && holds(&r.kvs[0], token)) {
			*rev = r.kvs[0].mod_revision;
			err = 1;
		} else if (foreign && r.n && !ours(sd, &r.kvs[0])) {
			err = -ESTALE;
			goto out;
		}
		/* Deleted by hand: compares then see 0, as for any key gone. */
		sd->fence_rev = r.n ? r.kvs[0].mod_revision : 0;
	}
out:
	sd->api->range_free(&r);
	return err;
}

/* Moves the fence past a commit of token whose answer was lost: 0 when
 * that commit can no longer apply (it did not), 1 when it had applied
 * (at *rev), a negative errno when etcd did not take the move. */
int syncd_fence_move(struct syncd *sd, struct etcd_client *c, const char *token, int64_t *rev)
{
	struct etcd_cmp cmp[2] = { { .key = sd->fence_key, .target = ETCD_MOD, .op = ETCD_EQ,
				     .value = sd->fence_rev } };
	struct etcd_op op = { .type = ETCD_OP_PUT, .key = sd->fence_key };
	struct etcd_txn_result res = { 0 };
	char move[SYNCD_TOKEN_MAX];
	int err;

	/* Not holding the name, the move is not this mount's to make; the
	 * fence may still tell that the commit applied. */
	if (syncd_hold_cmp(sd, &cmp[1]) < 0)
		return syncd_fence_read(sd, c, token, rev, true) == 1 ? 1 : -ESTALE;
	syncd_make_token(sd, 'f', move, sizeof(move));
	op.value = move;
	op.value_len = strlen(move);
	if ((err = sd->api->txn(c, cmp, 2, &op, 1, NULL, 0, &res)) < 0)
		return err;
	if (res.succeeded) {
		sd->fence_rev = res.revision;
		return 0;
	}
	/* The fence moved since the commit was sent: the commit itself did
	 * (its token), or an earlier attempt of this move, which the commit
	 * cannot pass either; or the name is another mount's now, whose
	 * token the fence may hold (-ESTALE: unknown). */
	return syncd_fence_read(sd, c, token, rev, true);
}

int syncd_fence_init(struct syncd *sd)
{
	struct etcd_range r = { 0 };
	char token[SYNCD_TOKEN_MAX];
	int64_t rev;

	/* Whether this node name was in the run before (syncd_take_startup
	 * drops what the run removed meanwhile). */
	if (sd->api->get(sd->cli, sd->fence_key, &r) < 0) {
		log_err("--sync: cannot read the node's fence %s: %s",
			sd->fence_key, sd->api->errmsg(sd->cli));
		sd->api->range_free(&r);
		return -EIO;
	}
	sd->fence_existed = r.n > 0;
	sd->api->range_free(&r);
	syncd_make_token(sd, 'f', token, sizeof(token));
	if (sd->api->put(sd->cli, sd->fence_key, token, strlen(token), 0, &rev) < 0) {
		log_err("--sync: cannot move the node's fence %s: %s",
			sd->fence_key, sd->api->errmsg(sd->cli));
		return -EIO;
	}
	sd->fence_rev = rev;
	return 0;
}

static void unknown_free(struct syncd_unknown *u)
{
	if (!u)
		return;
	free(u->backend);
	free(u->arch);
	free(u->names[0]);
	free(u->names[1]);
	free(u);
}

/* "B/A/N1 and B/A/N2" for the messages of u. */
static void unknown_what(const struct syncd_unknown *u, char *out, size_t n)
{
	if (u->n > 1)
		snprintf(out, n, "%s/%s/%s and %s/%s/%s", u->backend, u->arch, u->names[0],
			 u->backend, u->arch, u->names[1]);
	else
		snprintf(out, n, "%s/%s/%s", u->backend, u->arch, u->names[0]);
}

int syncd_fence_resolve(struct syncd *sd, bool quick)
{
	struct syncd_unknown *u = sd->unknown;
	struct etcd_client *c;
	char what[700];
	int64_t rev = 0;
	int r;

	if (!u)
		return 0;
	/* quick: the applier's try, on the shutdown's client and its short
	 * bound, since it holds publish_lock and every local write waits
	 * behind it (the next commit tries with the whole bound). */
	c = quick || atomic_load(&sd->shutting) ? sd->scli : sd->fcli;
	if ((r = syncd_fence_move(sd, c, u->token, &rev)) < 0) {
		/* status says why the outcome is still unknown (sync_last_error). */
		syncd_set_error(sd, "learning a write's outcome", r == -ESTALE ?
				"this mount does not hold its node name now, and the fence "
				"holds another mount's token" : sd->api->errmsg(c));
		return r;
	}
	unknown_what(u, what, sizeof(what));
	/* Applied: its event comes through the watch, like another node's
	 * (the node rolled the change back when it answered EIO). */
	if (r == 1)
		log_notice("--sync: the outcome of %s is known now: the write "
			"that got ETIMEDOUT was applied, at revision %lld", what, (long long)rev);
	else
		log_notice("--sync: the outcome of %s is known now: not "
			"applied, anywhere", what);
	pthread_mutex_lock(&sd->lock);
	sd->unknown = NULL;
	pthread_mutex_unlock(&sd->lock);
	unknown_free(u);
	return 0;
}

void syncd_unknown_release(struct syncd *sd)
{
	struct syncd_unknown *u;
	char what[700];

	/* Under sd.lock: status and the applier's wait read it there. */
	pthread_mutex_lock(&sd->lock);
	u = sd->unknown;
	sd->unknown = NULL;
	pthread_mutex_unlock(&sd->lock);
	if (!u)
		return;
	unknown_what(u, what, sizeof(what));
	log_err("--sync: shutting down: the outcome of %s is unknown "
		"(etcd did not answer): it may still be applied", what);
	unknown_free(u);
}

/* Records the write of names as of unknown outcome (status names it). */
int syncd_unknown_note(struct syncd *sd, const char *backend, const char *arch,
			const char *const *names, size_t n, const char *token)
{
	struct syncd_unknown *u = calloc(1, sizeof(*u));
	size_t i;

	if (!u || !(u->backend = strdup(backend)) || !(u->arch = strdup(arch)))
		goto nomem;
	for (i = 0; i < n && i < 2; i++)
		if (!(u->names[i] = strdup(names[i])))
			goto nomem;
	u->n = i;
	snprintf(u->token, sizeof(u->token), "%s", token);
	pthread_mutex_lock(&sd->lock);
	sd->unknown = u;
	/* The applier may be in its untimed wait (nothing was unknown): it
	 * is the one that tries again every second while etcd answers, and
	 * on an idle run nothing else would wake it. */
	pthread_cond_broadcast(&sd->cond);
	pthread_mutex_unlock(&sd->lock);
	return 0;
nomem:
	unknown_free(u);
	return -ENOMEM;
}
