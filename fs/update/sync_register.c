/* This node's entry in the run's registry; see sync_register.h. */
#include "sync_register.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "node_record.h"
#include "spec_share.h"

/* The revoke of an unmount waits at most this long (sync_register_free). */
#define SYNC_REVOKE_MS 300u

/* Puts of one record go in one txn (atomic: a reader never sees a summary
 * without its details) while they fit well under etcd's 1.5 MiB request
 * limit; a bigger record is put key by key, details first. */
#define TXN_MAX (1024 * 1024)

struct sync_register {
	const struct envfs_sync_api *api;
	struct etcd_client *cli;            /* the thread's */
	char *run_key;
	char *node;
	pthread_t thread;
	bool started;

	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	struct node_record_kvs pending;     /* built, not put yet (n 0: none) */
	struct node_record_kvs current;     /* put last, for a new lease; the
	                                       thread's */
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
		fprintf(stderr, "primus-envfs: --sync-node: %s\n", msg);
		sync_register_free(r);
		return -EINVAL;
	}
	n = strlen(so->prefix) + strlen(so->run) + sizeof("/runs/");
	if (!(r->node = strdup(so->node)) || !(r->run_key = malloc(n))) {
		sync_register_free(r);
		return -ENOMEM;
	}
	snprintf(r->run_key, n, "%s/runs/%s", so->prefix, so->run);
	*out = r;
	return 0;
}

static void set_error(struct sync_register *r, const char *what)
{
	pthread_mutex_lock(&r->lock);
	snprintf(r->error, sizeof(r->error), "%s: %s", what, r->api->errmsg(r->cli));
	pthread_mutex_unlock(&r->lock);
}

/* Puts kvs under lease. 0, or the client's error. */
static int put_record(struct sync_register *r, const struct node_record_kvs *kvs,
		      int64_t lease, int64_t *revision)
{
	struct etcd_op *ops = calloc(kvs->n ? kvs->n : 1, sizeof(*ops));
	struct etcd_txn_result res;
	size_t k, total = 0;
	int err = 0;

	if (!ops)
		return -ENOMEM;
	for (k = 0; k < kvs->n; k++) {
		ops[k] = (struct etcd_op){ .type = ETCD_OP_PUT, .key = kvs->v[k].key,
					   .value = kvs->v[k].value,
					   .value_len = kvs->v[k].value_len, .lease = lease };
		total += strlen(kvs->v[k].key) + kvs->v[k].value_len;
	}
	if (total <= TXN_MAX) {
		err = r->api->txn(r->cli, NULL, 0, ops, kvs->n, NULL, 0, &res);
		*revision = res.revision;
	} else {
		for (k = 0; k < kvs->n && !err; k++)
			err = r->api->put(r->cli, ops[k].key, ops[k].value, ops[k].value_len,
					  lease, revision);
	}
	free(ops);
	return err;
}

static void *register_thread(void *arg)
{
	struct sync_register *r = arg;
	const int64_t renew_ms = SYNC_LEASE_TTL * 1000 / 3;
	int64_t lease = 0, ttl = 0, next_renew = 0, rev = 0, retry_at = 0;
	bool reput = false;
	int err;

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		int64_t now = now_ms(CLOCK_MONOTONIC), wait_until;
		struct timespec ts;

		if (now < retry_at)
			goto sleep;
		if (!lease) {
			pthread_mutex_unlock(&r->lock);
			err = r->api->lease_grant(r->cli, SYNC_LEASE_TTL, &lease, &ttl);
			pthread_mutex_lock(&r->lock);
			if (err < 0) {
				lease = 0;
				pthread_mutex_unlock(&r->lock);
				set_error(r, "lease grant");
				pthread_mutex_lock(&r->lock);
				retry_at = now_ms(CLOCK_MONOTONIC) + 1000;
				continue;
			}
			r->lease = lease;
			r->lease_ttl = ttl;
			clock_gettime(CLOCK_REALTIME, &r->renewed);
			next_renew = now_ms(CLOCK_MONOTONIC) + renew_ms;
			reput = true;
		}
		if (r->pending.n) {
			node_record_kvs_free(&r->current);
			r->current = r->pending;
			r->pending = (struct node_record_kvs){ 0 };
			reput = true;
		}
		if (reput && r->current.n) {
			pthread_mutex_unlock(&r->lock);
			err = put_record(r, &r->current, lease, &rev);
			if (err < 0)
				set_error(r, "putting the node record");
			pthread_mutex_lock(&r->lock);
			if (err == -ENOENT) {
				lease = r->lease = 0;
				continue;
			}
			if (err < 0) {
				retry_at = now_ms(CLOCK_MONOTONIC) + 1000;
				continue;
			}
			reput = false;
			r->put_revision = rev;
			r->put_dirs = r->current.n - 1;
			r->puts++;
			r->error[0] = '\0';
		}
		if (now_ms(CLOCK_MONOTONIC) >= next_renew) {
			pthread_mutex_unlock(&r->lock);
			err = r->api->lease_keepalive(r->cli, lease, &ttl);
			if (err < 0)
				set_error(r, "lease keepalive");
			pthread_mutex_lock(&r->lock);
			if (err == -ENOENT) {
				/* Expired while etcd was out of reach: a new
				 * lease, and the record again. */
				lease = r->lease = 0;
				continue;
			}
			if (err < 0) {
				next_renew = now_ms(CLOCK_MONOTONIC) + 1000;
				continue;
			}
			clock_gettime(CLOCK_REALTIME, &r->renewed);
			r->lease_ttl = ttl;
			if (!reput)
				r->error[0] = '\0';
			next_renew = now_ms(CLOCK_MONOTONIC) + renew_ms;
		}
sleep:
		/* While a failure's retry is due, nothing runs before it (a
		 * pending record or a renewal waits): never a busy loop. */
		now = now_ms(CLOCK_MONOTONIC);
		if (r->stop || (r->pending.n && now >= retry_at))
			continue;
		wait_until = now < retry_at ? retry_at : next_renew;
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
	return NULL;
}

int sync_register_start(struct sync_register *r)
{
	int err;

	if ((err = pthread_create(&r->thread, NULL, register_thread, r)) != 0) {
		fprintf(stderr, "primus-envfs: cannot start the registration thread: %s\n",
			strerror(err));
		return -err;
	}
	r->started = true;
	return 0;
}

void sync_register_publish(struct sync_register *r, const struct epoch *e, int64_t revision)
{
	const struct snapshot **dirs = calloc(e->ndirs ? e->ndirs : 1, sizeof(*dirs));
	const struct spec_share *sh = e->ndirs ? e->dirs[0].snap->specs : NULL;
	struct node_record_in in = {
		.run_key = r->run_key, .node = r->node,
		.specs_digest = sh && sh->has_digest ? sh->digest : NULL,
		.revision = revision,
		.when_ms = (int64_t)e->changed.tv_sec * 1000 + e->changed.tv_nsec / 1000000,
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
	pthread_mutex_lock(&r->lock);
	if (err < 0) {
		/* Said once, not at every publish. */
		if (!r->build_error[0])
			fprintf(stderr, "primus-envfs: the node record cannot be built: %s\n",
				msg[0] ? msg : strerror(-err));
		snprintf(r->build_error, sizeof(r->build_error), "%s",
			 msg[0] ? msg : strerror(-err));
		node_record_kvs_free(&kvs);
	} else {
		r->build_error[0] = '\0';
		node_record_kvs_free(&r->pending);
		r->pending = kvs;
		pthread_cond_signal(&r->wake);
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
			      r->pending.n ? " (a newer one is being put)" : "");
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
		/* Leave the registry now, not after the TTL: verify counts
		 * the nodes that serve. On a client of its own: the
		 * interrupted one refuses every later call (etcd_conn.c
		 * never clears the flag). */
		if (r->lease && r->api->dup(&rc, r->cli) == 0) {
			/* Bounded short: a SIGTERM ends the daemon within 2 s
			 * even with no member answering, and a lease not
			 * revoked still ends with its TTL. */
			r->api->set_bound(rc, SYNC_REVOKE_MS);
			r->api->lease_revoke(rc, r->lease);
			r->api->close(rc);
		}
	}
	node_record_kvs_free(&r->pending);
	node_record_kvs_free(&r->current);
	if (r->cli)
		r->api->close(r->cli);
	pthread_cond_destroy(&r->wake);
	pthread_mutex_destroy(&r->lock);
	free(r->run_key);
	free(r->node);
	free(r);
}
