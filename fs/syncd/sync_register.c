/* This node's entry in the run's registry; see sync_register.h. */
#include "log.h"
#include "sync_register.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "node_record.h"
#include "register_backoff.h"
#include "spec_share.h"
#include "text.h"

/* The revoke of an unmount waits at most this long (sync_register_free). */
#define SYNC_REVOKE_MS 300u

/* A start that finds its node name held polls the holder this often. */
#define HOLD_POLL_MS 250

/* Puts of one record go in one txn (atomic: a reader never sees a summary
 * without its details) while they fit well under etcd's 1.5 MiB request
 * limit; a bigger record is put key by key, details first. */
#define TXN_MAX (1024 * 1024)

struct sync_register {
	const struct envfs_sync_api *api;
	struct etcd_client *cli;            /* the thread's */
	char *run_key;
	char *node;
	char *run;                          /* the run's name, for messages */
	/* The node name's hold: RUN/node-names/<node>, created only where
	 * it does not exist, under the lease; every record put compares its
	 * create_revision with hold_rev, so a mount that lost the name
	 * (its lease ran out and another took it) never overwrites the
	 * other's record. The thread's once started. */
	char *hold_key;
	char *mountpoint;
	char host[256];
	/* 0: not held. Written by the claim and the thread; read by the
	 * commits (sync_register_hold), hence atomic. */
	_Atomic int64_t hold_rev;
	bool hold_said;                     /* the loss was said in the log */
	pthread_t thread;
	bool started;

	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	struct node_record_kvs pending;     /* built, not taken yet (n 0: none) */
	unsigned nodes;                     /* the run's NNODES as the last record
	                                       built saw it (0: not known) */
	/* The thread's: the record taken and not put yet, and the one put
	 * last. A put sends only the keys whose bytes differ from the last
	 * one's (the lease keeps the others); a new lease or hold sends
	 * every key again. */
	struct node_record_kvs next;
	struct node_record_kvs current;
	/* For status, under lock. */
	int64_t lease;                      /* 0: none */
	int64_t lease_ttl;
	struct timespec renewed;            /* the last grant or keepalive */
	int64_t put_revision;               /* of the last record put */
	size_t put_dirs;
	uint64_t puts;
	char error[256];                    /* the last failure, or "" */
	char build_error[256];              /* the record could not be built */
};

static int64_t now_ms(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int sync_register_new(const struct envfs_sync_api *api, struct etcd_client *cli,
		      const struct sync_opts *so, struct sync_register **out)
{
	struct sync_register *r = calloc(1, sizeof(*r));
	char msg[256];
	size_t n;

	*out = NULL;
	if (!r) {
		api->close(cli);
		return -ENOMEM;
	}
	r->api = api;
	r->cli = cli;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->wake, NULL);
	if (node_name_check(so->node, msg, sizeof(msg)) < 0) {
		log_err("--sync-node: %s", msg);
		sync_register_free(r);
		return -EINVAL;
	}
	n = strlen(so->prefix) + strlen(so->run) + sizeof("/runs/");
	if (!(r->node = strdup(so->node)) || !(r->run_key = malloc(n))) {
		sync_register_free(r);
		return -ENOMEM;
	}
	snprintf(r->run_key, n, "%s/runs/%s", so->prefix, so->run);
	if (!(r->run = strdup(so->run)) ||
	    asprintf(&r->hold_key, "%s/node-names/%s", r->run_key, r->node) < 0) {
		r->hold_key = NULL;
		sync_register_free(r);
		return -ENOMEM;
	}
	if (gethostname(r->host, sizeof(r->host)) < 0)
		snprintf(r->host, sizeof(r->host), "?");
	r->host[sizeof(r->host) - 1] = '\0';
	*out = r;
	return 0;
}

/* What the hold key holds: who this mount is, for the message of a mount
 * refused the name. The pid is read at each put: the daemon forks after
 * the start-up claim. Caller-owned (free()), or NULL. */
static char *hold_value(const struct sync_register *r)
{
	char *v;

	if (asprintf(&v, "host=%s pid=%ld mount=%s", r->host, (long)getpid(),
		     r->mountpoint ? r->mountpoint : "?") < 0)
		return NULL;
	return v;
}

/* One attempt at the name: 0 (held now, hold_rev set), -EEXIST when
 * another lease holds it (its value, escaped, in who; its lease in
 * *holder), or the client's error. */
static int claim_once(struct sync_register *r, int64_t lease, struct strbuf *who,
		      int64_t *holder)
{
	const struct etcd_cmp cmp = { .key = r->hold_key, .target = ETCD_CREATE, .op = ETCD_EQ,
				      .value = 0 };
	struct etcd_txn_result res;
	struct etcd_range got = { 0 };
	char *v = hold_value(r);
	int err;

	if (!v)
		return -ENOMEM;
	err = r->api->txn(r->cli, &cmp, 1, &(struct etcd_op){ .type = ETCD_OP_PUT,
			  .key = r->hold_key, .value = v, .value_len = strlen(v), .lease = lease },
			  1, NULL, 0, &res);
	free(v);
	if (err < 0)
		return err;
	if (res.succeeded) {
		r->hold_rev = res.revision;
		return 0;
	}
	/* Held, or freed since: read who holds it (an empty answer: try
	 * again). */
	if ((err = r->api->get(r->cli, r->hold_key, &got)) < 0)
		goto out;
	err = -EAGAIN;
	if (!got.n)
		goto out;
	/* A retried txn of ours may have been the one that created it. */
	if (got.kvs[0].lease == lease) {
		r->hold_rev = got.kvs[0].create_revision;
		err = 0;
		goto out;
	}
	sb_reset(who);
	*holder = got.kvs[0].lease;
	err = text_escape(who, got.kvs[0].value, got.kvs[0].value_len > 200 ? 200 :
			  got.kvs[0].value_len);
	err = err < 0 ? err : -EEXIST;
out:
	r->api->range_free(&got);
	return err;
}

/* Whether the start-up tries a failed call again (after waiting, as sr
 * says): only a busy cluster's failure, within the start's budget. */
static bool start_again(struct start_retry *sr, int err)
{
	unsigned wait;

	if (!sr || start_retry_next(sr, err, now_ms(CLOCK_MONOTONIC), &wait) < 0)
		return false;
	nanosleep(&(struct timespec){ wait / 1000, (long)(wait % 1000) * 1000000L }, NULL);
	return true;
}

/* The start-up claim's lease, a busy cluster's failures tried again. */
static int grant(struct sync_register *r, struct start_retry *sr)
{
	int err;

	while ((err = r->api->lease_grant(r->cli, SYNC_LEASE_TTL, &r->lease,
					  &r->lease_ttl)) < 0) {
		r->lease = 0;
		if (start_again(sr, err))
			continue;
		log_err("--sync: the lease of node %s: %s%s", r->node, r->api->errmsg(r->cli),
			start_retry_busy(err) && sr ?
			" (etcd stayed busy for the whole start-up budget)" : "");
		return -EIO;
	}
	return 0;
}

/* A lease that ran out while a busy cluster held the claim back is
 * granted again this often at most: a claim that keeps finding its
 * lease gone is not looping on etcd for ever. */
#define CLAIM_MAX_REGRANTS 3

int sync_register_claim(struct sync_register *r, const char *mountpoint,
			struct start_retry *sr)
{
	const int64_t renew_ms = SYNC_LEASE_TTL * 1000 / 3;
	struct strbuf who = STRBUF_INIT;
	int64_t holder = 0, left, last_left = -1, deadline, renewed;
	unsigned regrants = 0;
	bool said = false;
	int err;

	if (!(r->mountpoint = strdup(mountpoint)))
		return -ENOMEM;
	if ((err = grant(r, sr)) < 0)
		return err;
	clock_gettime(CLOCK_REALTIME, &r->renewed);
	renewed = now_ms(CLOCK_MONOTONIC);
	/* A holder that died keeps the name until its lease runs out (at
	 * most its TTL after its last renewal); one that renews is alive. */
	deadline = renewed + (SYNC_LEASE_TTL + 1) * 1000;
	for (;;) {
		err = claim_once(r, r->lease, &who, &holder);
		if (err < 0 && err != -EEXIST && err != -EAGAIN && err != -ENOMEM &&
		    start_again(sr, err))
			continue;
		/* The lease ran out while a busy cluster held the claim back. */
		if (err == -ENOENT && sr && sr->failures && regrants++ < CLAIM_MAX_REGRANTS) {
			if ((err = grant(r, sr)) < 0)
				goto out;
			renewed = now_ms(CLOCK_MONOTONIC);
			clock_gettime(CLOCK_REALTIME, &r->renewed);
			continue;
		}
		if (err == 0 || (err != -EEXIST && err != -EAGAIN))
			break;
		if (err == -EEXIST) {
			if (!said)
				log_notice("--sync-node %s is held by %s; waiting "
					"up to %d s for its lease to end (a mount that died holds "
					"it until then)", r->node, who.buf, SYNC_LEASE_TTL + 1);
			said = true;
			left = -1;
			if (r->api->lease_ttl(r->cli, holder, &left, NULL) == -ENOENT)
				continue;
			if ((last_left >= 0 && left > last_left) ||
			    now_ms(CLOCK_MONOTONIC) >= deadline) {
				log_err("--sync-node %s: the name is held by "
					"another mount of run %s (%s); give this mount another "
					"--sync-node, or unmount that one", r->node, r->run,
					who.buf);
				err = -EEXIST;
				goto out;
			}
			last_left = left;
		}
		if (now_ms(CLOCK_MONOTONIC) - renewed >= renew_ms) {
			if ((err = r->api->lease_keepalive(r->cli, r->lease, NULL)) < 0)
				break;
			renewed = now_ms(CLOCK_MONOTONIC);
			clock_gettime(CLOCK_REALTIME, &r->renewed);
		}
		nanosleep(&(struct timespec){ 0, HOLD_POLL_MS * 1000000L }, NULL);
	}
	if (err < 0) {
		log_err("--sync-node %s: cannot take the name: %s%s", r->node,
			err == -ENOMEM ? strerror(ENOMEM) : r->api->errmsg(r->cli),
			start_retry_busy(err) && sr ? " (etcd stayed busy for the whole start-up "
			"budget)" : "");
		err = err == -ENOMEM ? err : -EIO;
	}
out:
	sb_release(&who);
	return err;
}

int64_t sync_register_claim_revision(const struct sync_register *r)
{
	return atomic_load(&r->hold_rev);
}

int64_t sync_register_hold(const struct sync_register *r)
{
	return atomic_load(&r->hold_rev);
}

const char *sync_register_hold_key(const struct sync_register *r)
{
	return r->hold_key;
}

static void set_error(struct sync_register *r, const char *what)
{
	pthread_mutex_lock(&r->lock);
	snprintf(r->error, sizeof(r->error), "%s: %s", what, r->api->errmsg(r->cli));
	pthread_mutex_unlock(&r->lock);
}

/* True when last holds kv's key with the same bytes. */
static bool kv_unchanged(const struct node_record_kvs *last, const struct node_record_kv *kv)
{
	size_t k;

	for (k = 0; k < last->n; k++)
		if (!strcmp(last->v[k].key, kv->key))
			return last->v[k].value_len == kv->value_len &&
			       !memcmp(last->v[k].value, kv->value, kv->value_len);
	return false;
}

/* Puts under lease the keys of kvs whose bytes differ from last's (last
 * NULL: every key, and the hold key, whose pid may have changed), in txns
 * of at most TXN_MAX bytes, details first, each only while the name is
 * still this mount's. *sent: how many keys went (0: nothing differed, no
 * call). 0, -ESTALE when the name is not this mount's (hold_rev is
 * cleared), or the client's error. */
static int put_record(struct sync_register *r, const struct node_record_kvs *kvs,
		      const struct node_record_kvs *last, int64_t lease, int64_t *revision,
		      size_t *sent)
{
	const struct etcd_cmp cmp = { .key = r->hold_key, .target = ETCD_CREATE, .op = ETCD_EQ,
				      .value = r->hold_rev };
	struct etcd_op *ops = calloc(kvs->n + 1, sizeof(*ops));
	struct etcd_txn_result res;
	char *who = last ? NULL : hold_value(r);
	size_t k, n = 0, first = 0, total = 0;
	int err = 0;

	*sent = 0;
	if (!ops || (!last && !who)) {
		err = -ENOMEM;
		goto out;
	}
	if (!last)
		ops[n++] = (struct etcd_op){ .type = ETCD_OP_PUT, .key = r->hold_key, .value = who,
					     .value_len = strlen(who), .lease = lease };
	for (k = 0; k < kvs->n; k++)
		if (!last || !kv_unchanged(last, &kvs->v[k]))
			ops[n++] = (struct etcd_op){ .type = ETCD_OP_PUT, .key = kvs->v[k].key,
						     .value = kvs->v[k].value,
						     .value_len = kvs->v[k].value_len,
						     .lease = lease };
	for (k = 0; k < n && !err; k++) {
		total += strlen(ops[k].key) + ops[k].value_len;
		if (k + 1 < n && total + strlen(ops[k + 1].key) + ops[k + 1].value_len <= TXN_MAX)
			continue;
		err = r->api->txn(r->cli, &cmp, 1, ops + first, k + 1 - first, NULL, 0, &res);
		if (!err && !res.succeeded) {
			r->hold_rev = 0;
			err = -ESTALE;
		}
		*revision = res.revision;
		first = k + 1;
		total = 0;
	}
	if (!err)
		*sent = n;
out:
	free(who);
	free(ops);
	return err;
}

static void *register_thread(void *arg)
{
	struct sync_register *r = arg;
	const int64_t renew_ms = SYNC_LEASE_TTL * 1000 / 3;
	struct strbuf who = STRBUF_INIT;
	int64_t lease, ttl = 0, next_renew, rev = 0, retry_at, holder;
	/* Consecutive failures of the calls that register (grant, name,
	 * put) and of the keepalives: each retry waits a random time from a
	 * range that grows with them (register_backoff.h). */
	unsigned failures = 0, ka_failures = 0, seed = register_seed();
	const int64_t started = now_ms(CLOCK_MONOTONIC);
	bool reput = true, spread = false;
	size_t sent;
	int err;

	/* The mounts of a job start together: their first records (the
	 * largest puts) spread over a window that grows with the run's
	 * nodes, drawn once the first record says how many there are. */
	retry_at = INT64_MAX;
	pthread_mutex_lock(&r->lock);
	/* The lease of the start-up claim, renewed from when it was. */
	lease = r->lease;
	next_renew = now_ms(CLOCK_MONOTONIC) + renew_ms -
		     (now_ms(CLOCK_REALTIME) - ((int64_t)r->renewed.tv_sec * 1000 +
						r->renewed.tv_nsec / 1000000));
	while (!r->stop) {
		int64_t now = now_ms(CLOCK_MONOTONIC), wait_until;
		struct timespec ts;

		if (!spread && r->pending.n) {
			retry_at = started + register_put_delay_ms(r->nodes, &seed);
			spread = true;
		}

		/* A failure's retry is not due yet; the lease's renewal may
		 * be (a cluster that times out every put may still answer
		 * keepalives, and the lease must outlive the retries). */
		if (now < retry_at)
			goto renew;
		if (!lease) {
			pthread_mutex_unlock(&r->lock);
			err = r->api->lease_grant(r->cli, SYNC_LEASE_TTL, &lease, &ttl);
			pthread_mutex_lock(&r->lock);
			if (err < 0) {
				lease = 0;
				pthread_mutex_unlock(&r->lock);
				set_error(r, "lease grant");
				pthread_mutex_lock(&r->lock);
				retry_at = now_ms(CLOCK_MONOTONIC) +
					   register_backoff_ms(++failures, &seed);
				continue;
			}
			r->lease = lease;
			r->lease_ttl = ttl;
			clock_gettime(CLOCK_REALTIME, &r->renewed);
			next_renew = now_ms(CLOCK_MONOTONIC) + renew_ms;
			reput = true;
			r->hold_rev = 0;
		}
		if (!r->hold_rev) {
			/* A new lease: the name again, never taken from a
			 * mount that holds it now. */
			pthread_mutex_unlock(&r->lock);
			err = claim_once(r, lease, &who, &holder);
			pthread_mutex_lock(&r->lock);
			if (err == -ENOENT) {
				lease = r->lease = 0;
				continue;
			}
			if (err == -EEXIST) {
				if (!r->hold_said)
					log_err("--sync-node %s: the name was "
						"taken by another mount of run %s (%s) while this "
						"one's lease had run out; this node's record is not "
						"published", r->node, r->run, who.buf);
				r->hold_said = true;
				snprintf(r->error, sizeof(r->error), "the node name %s is held by "
					 "another mount (%s)", r->node, who.buf);
				goto renew;
			}
			if (err < 0) {
				pthread_mutex_unlock(&r->lock);
				set_error(r, "taking the node name");
				pthread_mutex_lock(&r->lock);
				retry_at = now_ms(CLOCK_MONOTONIC) +
					   register_backoff_ms(++failures, &seed);
				continue;
			}
			r->hold_said = false;
			reput = true;
		}
		if (r->pending.n) {
			node_record_kvs_free(&r->next);
			r->next = r->pending;
			r->pending = (struct node_record_kvs){ 0 };
		}
		/* A new lease or hold: the last record again, every key. */
		if (reput && !r->next.n && r->current.n) {
			r->next = r->current;
			r->current = (struct node_record_kvs){ 0 };
		}
		if (r->next.n) {
			pthread_mutex_unlock(&r->lock);
			err = put_record(r, &r->next, reput ? NULL : &r->current, lease, &rev, &sent);
			if (err < 0)
				set_error(r, "putting the node record");
			pthread_mutex_lock(&r->lock);
			if (err == -ENOENT) {
				lease = r->lease = 0;
				continue;
			}
			if (err == -ESTALE)
				continue;
			if (err < 0) {
				/* Part of a delta may have landed: the next
				 * try sends every key, or a key set back to
				 * current's bytes would keep the half-put
				 * value in etcd. */
				reput = true;
				retry_at = now_ms(CLOCK_MONOTONIC) +
					   register_backoff_ms(++failures, &seed);
				continue;
			}
			failures = 0;
			reput = false;
			node_record_kvs_free(&r->current);
			r->current = r->next;
			r->next = (struct node_record_kvs){ 0 };
			if (sent) {
				r->put_revision = rev;
				r->puts++;
			}
			r->put_dirs = r->current.n - 1;
			r->error[0] = '\0';
		}
renew:
		if (lease && now_ms(CLOCK_MONOTONIC) >= next_renew) {
			pthread_mutex_unlock(&r->lock);
			err = r->api->lease_keepalive(r->cli, lease, &ttl);
			if (err < 0)
				set_error(r, "lease keepalive");
			pthread_mutex_lock(&r->lock);
			if (err == -ENOENT) {
				/* Expired while etcd was out of reach: a new
				 * lease at once, and the record again. */
				lease = r->lease = 0;
				retry_at = now_ms(CLOCK_MONOTONIC);
				continue;
			}
			if (err < 0) {
				/* Again before the lease ends: within a third
				 * of its TTL. */
				next_renew = now_ms(CLOCK_MONOTONIC) +
					     register_backoff_within_ms(++ka_failures,
									(unsigned)renew_ms, &seed);
				continue;
			}
			ka_failures = 0;
			clock_gettime(CLOCK_REALTIME, &r->renewed);
			r->lease_ttl = ttl;
			if (!reput && r->hold_rev)
				r->error[0] = '\0';
			next_renew = now_ms(CLOCK_MONOTONIC) + renew_ms;
		}
		/* A name held by another is asked for again, after a wait
		 * that grows while it stays held. */
		if (!r->hold_rev && now_ms(CLOCK_MONOTONIC) >= retry_at)
			retry_at = now_ms(CLOCK_MONOTONIC) + register_backoff_ms(++failures, &seed);
		/* A pending record waits for its failure's retry; the
		 * renewal does not: whichever is due first ends the wait,
		 * and neither loops busy. */
		now = now_ms(CLOCK_MONOTONIC);
		if (r->stop || ((r->pending.n || r->next.n) && now >= retry_at))
			continue;
		wait_until = next_renew;
		if (!lease || (now < retry_at && retry_at < wait_until))
			wait_until = retry_at;
		/* The condition variable waits on CLOCK_REALTIME: convert. */
		clock_gettime(CLOCK_REALTIME, &ts);
		now = wait_until - now_ms(CLOCK_MONOTONIC);
		if (now > 0) {
			ts.tv_sec += now / 1000;
			ts.tv_nsec += (now % 1000) * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&r->wake, &r->lock, &ts);
		}
	}
	pthread_mutex_unlock(&r->lock);
	sb_release(&who);
	return NULL;
}

int sync_register_start(struct sync_register *r)
{
	int err;

	if ((err = pthread_create(&r->thread, NULL, register_thread, r)) != 0) {
		log_err("cannot start the registration thread: %s",
			strerror(err));
		return -err;
	}
	r->started = true;
	return 0;
}

/* The run's node count as e's directories say it (NNODES, the largest
 * any says), or 0 when none does. */
static unsigned nodes_of(const struct epoch *e)
{
	unsigned long n, most = 0;
	size_t k;

	for (k = 0; k < e->ndirs; k++) {
		const struct snap_var *v = snapshot_find(e->dirs[k].snap, "NNODES", 6);
		char buf[10], *end;

		if (!v || !v->set || !v->value_len || v->value_len >= sizeof(buf) ||
		    v->value[0] < '0' || v->value[0] > '9')
			continue;
		memcpy(buf, v->value, v->value_len);
		buf[v->value_len] = '\0';
		n = strtoul(buf, &end, 10);
		if (!*end && n > most)
			most = n;
	}
	return (unsigned)most;
}

void sync_register_publish(struct sync_register *r, const struct epoch *e, int64_t revision,
			   const char *behind)
{
	const struct snapshot **dirs = calloc(e->ndirs ? e->ndirs : 1, sizeof(*dirs));
	const struct spec_share *sh = e->ndirs ? e->dirs[0].snap->specs : NULL;
	struct node_record_in in = {
		.run_key = r->run_key, .node = r->node,
		.specs_digest = sh && sh->has_digest ? sh->digest : NULL,
		.revision = revision,
		.behind = behind,
		.when_ms = (int64_t)e->changed.tv_sec * 1000 + e->changed.tv_nsec / 1000000,
		.load_error = e->last_error,
	};
	struct node_record_kvs kvs = { 0 };
	char msg[200] = "";
	size_t k;
	int err = -ENOMEM;

	if (dirs) {
		for (k = 0; k < e->ndirs; k++)
			dirs[k] = e->dirs[k].snap;
		in.dirs = dirs;
		in.ndirs = e->ndirs;
		err = node_record_build(&in, &kvs, msg, sizeof(msg));
	}
	free(dirs);
	/* A record that cannot be built must not leave the last one in
	 * place under a lease that is still renewed: verify would take it
	 * for what the node serves. One that says why replaces it. */
	if (err < 0 && err != -ENOMEM) {
		node_record_kvs_free(&kvs);
		if (!msg[0])
			snprintf(msg, sizeof(msg), "%s", strerror(-err));
		if (node_record_unpublishable(&in, msg, &kvs) < 0)
			node_record_kvs_free(&kvs);
	}
	pthread_mutex_lock(&r->lock);
	r->nodes = nodes_of(e);
	if (err < 0) {
		/* Said once, not at every publish. */
		if (!r->build_error[0])
			log_err("the node record cannot be built: %s",
				msg[0] ? msg : strerror(-err));
		snprintf(r->build_error, sizeof(r->build_error), "%s",
			 msg[0] ? msg : strerror(-err));
	} else {
		r->build_error[0] = '\0';
	}
	if (kvs.n) {
		node_record_kvs_free(&r->pending);
		r->pending = kvs;
		pthread_cond_signal(&r->wake);
	} else {
		node_record_kvs_free(&kvs);
	}
	pthread_mutex_unlock(&r->lock);
}

int sync_register_status(struct sync_register *r, struct strbuf *out)
{
	struct timespec now;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&r->lock);
	if (r->lease)
		err = sb_addf(out, "sync_lease: %" PRIx64 " ttl %" PRId64 " s, renewed %.1f s ago\n",
			      (uint64_t)r->lease, r->lease_ttl,
			      (double)(now.tv_sec - r->renewed.tv_sec) +
				      (now.tv_nsec - r->renewed.tv_nsec) / 1e9);
	else
		err = sb_adds(out, "sync_lease: none\n");
	if (err < 0)
		goto out;
	if (r->puts)
		err = sb_addf(out, "sync_record: %s/nodes/%s, %zu directories, put at revision %"
			      PRId64 "%s\n", r->run_key, r->node, r->put_dirs, r->put_revision,
			      r->pending.n || r->next.n ? " (a newer one is being put)" : "");
	else
		err = sb_addf(out, "sync_record: %s/nodes/%s, not put yet\n", r->run_key, r->node);
	if (err < 0)
		goto out;
	if (r->build_error[0])
		err = sb_addf(out, "sync_record_error: %s\n", r->build_error);
	else if (r->error[0])
		err = sb_addf(out, "sync_record_error: %s\n", r->error);
out:
	pthread_mutex_unlock(&r->lock);
	return err;
}

void sync_register_free(struct sync_register *r)
{
	struct etcd_client *rc;

	if (!r)
		return;
	if (r->started) {
		pthread_mutex_lock(&r->lock);
		r->stop = true;
		pthread_cond_signal(&r->wake);
		pthread_mutex_unlock(&r->lock);
		r->api->interrupt(r->cli);
		pthread_join(r->thread, NULL);
	}
	/* Leave the registry now, not after the TTL: verify counts the nodes
	 * that serve, and the name is free for the next mount. On a client
	 * of its own: an interrupted one refuses every later call
	 * (etcd_conn.c never clears the flag). */
	if (r->lease && r->api->dup(&rc, r->cli) == 0) {
		/* Bounded short: a SIGTERM ends the daemon within 2 s even
		 * with no member answering, and a lease not revoked still
		 * ends with its TTL. */
		r->api->set_bound(rc, SYNC_REVOKE_MS);
		r->api->lease_revoke(rc, r->lease);
		r->api->close(rc);
	}
	node_record_kvs_free(&r->pending);
	node_record_kvs_free(&r->next);
	node_record_kvs_free(&r->current);
	if (r->cli)
		r->api->close(r->cli);
	pthread_cond_destroy(&r->wake);
	pthread_mutex_destroy(&r->lock);
	free(r->run_key);
	free(r->node);
	free(r->run);
	free(r->hold_key);
	free(r->mountpoint);
	free(r);
}
