/* The node registration of --sync (fs/syncd/sync_register.c) against a
 * fake etcd (the api table filled with stubs that record every txn), and
 * its retry pacing (fs/syncd/register_backoff.c). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "epoch.h"
#include "node_fixture.h"
#include "register_backoff.h"
#include "sync_register.h"

/* ---- the retry pacing -------------------------------------------------- */

static void test_backoff_grows_within_bounds(void **state)
{
	unsigned seed = 12345, f, k, cap;

	(void)state;
	for (f = 1; f <= 10; f++) {
		cap = f >= 4 ? 8000u : 1000u << (f - 1);
		for (k = 0; k < 200; k++) {
			unsigned d = register_backoff_ms(f, &seed);

			assert_true(d >= cap / 2);
			assert_true(d <= cap);
		}
	}
	/* 0 failures counts as one. */
	for (k = 0; k < 50; k++) {
		unsigned d = register_backoff_ms(0, &seed);

		assert_true(d >= 500 && d <= 1000);
	}
	/* Within a limit (a keepalive before its lease ends). */
	for (f = 1; f <= 6; f++)
		for (k = 0; k < 50; k++) {
			unsigned d = register_backoff_within_ms(f, 3000, &seed);

			cap = f >= 3 ? 3000u : 1000u << (f - 1);
			assert_true(d >= cap / 2 && d <= cap);
		}
}

/* Nodes that fail together wait different times: the draws of one
 * failure count spread over most of their range. */
static void test_backoff_jittered(void **state)
{
	unsigned f;

	(void)state;
	for (f = 1; f <= 5; f++) {
		unsigned lo = ~0u, hi = 0, k, distinct = 0, prev = 0;

		for (k = 0; k < 1000; k++) {
			/* A seed per node, as each thread draws its own. */
			unsigned seed = 7919u * (k + 1), d = register_backoff_ms(f, &seed);

			lo = d < lo ? d : lo;
			hi = d > hi ? d : hi;
			distinct += k && d != prev;
			prev = d;
		}
		unsigned cap = f >= 4 ? 8000u : 1000u << (f - 1);
		/* Over 1000 draws: the lowest in the range's bottom tenth,
		 * the highest in its top tenth. */
		assert_true(lo < cap / 2 + cap / 20);
		assert_true(hi > cap - cap / 20);
		assert_true(distinct > 900);
	}
}

static void test_start_delay(void **state)
{
	unsigned lo = ~0u, hi = 0, k;

	(void)state;
	for (k = 0; k < 1000; k++) {
		unsigned seed = 104729u * (k + 1), d = register_start_delay_ms(&seed);

		assert_true(d < REGISTER_START_SPREAD_MS);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	assert_true(lo < REGISTER_START_SPREAD_MS / 10);
	assert_true(hi > REGISTER_START_SPREAD_MS - REGISTER_START_SPREAD_MS / 10);
	/* Seeds of two threads of one start differ. */
	assert_true(register_seed() != 0);
}

/* The first record's put spreads over a window that grows with the run's
 * node count: a second up to 100 nodes, 10 ms a node beyond, at most
 * 30 s; uniform within it. */
static void test_put_delay_spreads_with_the_nodes(void **state)
{
	static const unsigned nodes[] = { 0, 1, 64, 100, 256, 1024, 100000 };
	static const unsigned window[] = { 1000, 1000, 1000, 1000, 2560, 10240, 30000 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		unsigned lo = ~0u, hi = 0, k;

		assert_int_equal(register_put_spread_ms(nodes[i]), window[i]);
		for (k = 0; k < 2000; k++) {
			unsigned seed = 7919u * (k + 1), d = register_put_delay_ms(nodes[i], &seed);

			assert_true(d < window[i]);
			lo = d < lo ? d : lo;
			hi = d > hi ? d : hi;
		}
		assert_true(lo < window[i] / 10);
		assert_true(hi > window[i] - window[i] / 10);
	}
}

/* ---- the start-up's retries ------------------------------------------ */

static void test_start_retry_busy_within_budget(void **state)
{
	struct start_retry sr;
	unsigned w = 0, k;

	(void)state;
	start_retry_init(&sr, 2000, 1000, 7);
	assert_int_equal(sr.budget_ms, 2000 * START_BUDGET_FACTOR);
	/* The registration's back-off, growing with each busy answer. */
	assert_int_equal(start_retry_next(&sr, -ETIMEDOUT, 1000, &w), 0);
	assert_in_range(w, 500, 1000);
	assert_int_equal(start_retry_next(&sr, -EAGAIN, 2000, &w), 0);
	assert_in_range(w, 1000, 2000);
	assert_int_equal(start_retry_next(&sr, -ECONNRESET, 4000, &w), 0);
	assert_in_range(w, 2000, 4000);
	for (k = 0; k < 5; k++) {
		assert_int_equal(start_retry_next(&sr, -ETIMEDOUT, 5000, &w), 0);
		assert_in_range(w, 4000, 8000);
	}
	/* Cut to what is left of the budget, then spent. */
	assert_int_equal(start_retry_next(&sr, -ETIMEDOUT, 1000 + 30000 - 300, &w), 0);
	assert_in_range(w, 1, 300);
	assert_int_equal(start_retry_next(&sr, -ETIMEDOUT, 1000 + 30000, &w), -ETIMEDOUT);
	assert_int_equal(start_retry_next(&sr, -EAGAIN, 1000 + 40000, &w), -EAGAIN);
	/* The budget follows --sync-timeout; 0 is the default. */
	start_retry_init(&sr, 100, 0, 7);
	assert_int_equal(sr.budget_ms, 100 * START_BUDGET_FACTOR);
	start_retry_init(&sr, 0, 0, 7);
	assert_int_equal(sr.budget_ms, 2000 * START_BUDGET_FACTOR);
}

static void test_start_retry_not_busy_fails_at_once(void **state)
{
	const int errs[] = { -ECONNREFUSED, -EHOSTUNREACH, -EPERM, -EACCES, -EINVAL, -ENOMEM,
			     -EEXIST, -EIO };
	struct start_retry sr;
	unsigned w = 12345;
	size_t k;

	(void)state;
	start_retry_init(&sr, 2000, 0, 7);
	for (k = 0; k < sizeof(errs) / sizeof(errs[0]); k++) {
		assert_false(start_retry_busy(errs[k]));
		assert_int_equal(start_retry_next(&sr, errs[k], 0, &w), errs[k]);
	}
	assert_int_equal(sr.failures, 0);
	assert_int_equal(w, 12345);
}

/* ---- a fake etcd ------------------------------------------------------------ */

#define MAXTXN 16
#define MAXOPS 64

struct txn_seen {
	size_t nops;
	char *keys[MAXOPS];
	size_t cmp_n;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct txn_seen txn[MAXTXN];
	size_t ntxn;
	int64_t rev;
	int txn_err;		/* every txn fails with it while set */
	size_t failed_txns;
	size_t keepalives;
} fk = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static int f_txn(struct etcd_client *c, const struct etcd_cmp *cmp, size_t ncmp,
		 const struct etcd_op *ops, size_t nops, const struct etcd_op *eops, size_t neops,
		 struct etcd_txn_result *res)
{
	size_t k;

	(void)c;
	(void)cmp;
	(void)eops;
	(void)neops;
	pthread_mutex_lock(&fk.mu);
	if (fk.txn_err) {
		fk.failed_txns++;
		pthread_mutex_unlock(&fk.mu);
		return fk.txn_err;
	}
	if (fk.ntxn < MAXTXN) {
		struct txn_seen *t = &fk.txn[fk.ntxn];

		t->nops = nops;
		t->cmp_n = ncmp;
		for (k = 0; k < nops && k < MAXOPS; k++)
			t->keys[k] = strdup(ops[k].key);
	}
	fk.ntxn++;
	res->succeeded = true;
	res->uncertain = false;
	res->revision = ++fk.rev;
	pthread_cond_broadcast(&fk.cv);
	pthread_mutex_unlock(&fk.mu);
	return 0;
}

/* The next grants fail with grant_err, this many of them. */
static int grant_err, grant_fails, grants;

static int f_grant(struct etcd_client *c, int64_t ttl, int64_t *id, int64_t *granted)
{
	(void)c;
	grants++;
	if (grant_fails > 0) {
		grant_fails--;
		return grant_err;
	}
	*id = 42;
	if (granted)
		*granted = ttl;
	return 0;
}

static int f_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl)
{
	(void)c;
	(void)id;
	if (ttl)
		*ttl = SYNC_LEASE_TTL;
	pthread_mutex_lock(&fk.mu);
	fk.keepalives++;
	pthread_cond_broadcast(&fk.cv);
	pthread_mutex_unlock(&fk.mu);
	return 0;
}

static int f_revoke(struct etcd_client *c, int64_t id)
{
	(void)c;
	(void)id;
	return 0;
}

static int f_dup(struct etcd_client **out, const struct etcd_client *c)
{
	*out = (struct etcd_client *)c;
	return 0;
}

static void f_close(struct etcd_client *c)
{
	(void)c;
}

static void f_interrupt(struct etcd_client *c)
{
	(void)c;
}

static void f_bound(struct etcd_client *c, unsigned ms)
{
	(void)c;
	(void)ms;
}

static const char *f_errmsg(const struct etcd_client *c)
{
	(void)c;
	return "fake";
}

static void f_range_free(struct etcd_range *r)
{
	(void)r;
}

static const struct envfs_sync_api fake_api = {
	.version = ENVFS_SYNC_API_VERSION, .size = sizeof(struct envfs_sync_api),
	.dup = f_dup, .close = f_close, .errmsg = f_errmsg, .interrupt = f_interrupt,
	.range_free = f_range_free, .txn = f_txn, .lease_grant = f_grant,
	.lease_keepalive = f_keepalive, .lease_revoke = f_revoke, .set_bound = f_bound,
};

/* Waits (bounded: a hang guard, not a measurement) for the fake's
 * want-th txn; false when it never came. */
static bool wait_txns(size_t want)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 20;
	pthread_mutex_lock(&fk.mu);
	while (fk.ntxn < want)
		if (pthread_cond_timedwait(&fk.cv, &fk.mu, &ts) != 0)
			break;
	ok = fk.ntxn >= want;
	pthread_mutex_unlock(&fk.mu);
	return ok;
}

/* Waits until the thread took the last published record: status no
 * longer says a newer one is being put. */
static void wait_taken(struct sync_register *r)
{
	int k;

	for (k = 0; k < 20000; k++) {
		struct strbuf sb = STRBUF_INIT;
		bool pending;

		assert_int_equal(sync_register_status(r, &sb), 0);
		pending = strstr(sb_str(&sb), "not put yet") ||
			  strstr(sb_str(&sb), "a newer one is being put");
		sb_release(&sb);
		if (!pending)
			return;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	fail_msg("the registration thread never took the record");
}

static bool has_key(const struct txn_seen *t, const char *suffix)
{
	size_t k, n = strlen(suffix);

	for (k = 0; k < t->nops; k++) {
		size_t l = strlen(t->keys[k]);

		if (l >= n && !strcmp(t->keys[k] + l - n, suffix))
			return true;
	}
	return false;
}

/* An epoch over n's resolution: what sync_register_publish reads. */
static void epoch_of(struct node *n, struct epoch *e, struct epoch_dir *dirs)
{
	size_t k;

	memset(e, 0, sizeof(*e));
	for (k = 0; k < n->r->ndirs; k++) {
		memset(&dirs[k], 0, sizeof(dirs[k]));
		dirs[k].snap = n->r->dirs[k];
	}
	e->dirs = dirs;
	e->ndirs = n->r->ndirs;
	e->changed.tv_sec = 1700000000;
}

static void test_record_put_only_when_changed(void **state)
{
	struct node a = { .env = { "NODE_RANK=3" } }, b = { .env = { "NODE_RANK=3", "PLAIN=other" } };
	char prefix[] = "/p", run[] = "r1", node[] = "n1";
	struct sync_opts so = { .prefix = prefix, .run = run, .node = node };
	struct sync_register *r = NULL;
	struct epoch ea, eb;
	struct epoch_dir *da, *db;
	size_t k, full;

	(void)state;
	node_load(&a);
	assert_int_equal(resolve_all(a.w, &a.ov, &a.r), 0);
	node_load(&b);
	assert_int_equal(resolve_all(b.w, &b.ov, &b.r), 0);
	assert_true(a.r->ndirs >= 2);
	assert_int_equal(a.r->ndirs, b.r->ndirs);
	da = calloc(a.r->ndirs, sizeof(*da));
	db = calloc(b.r->ndirs, sizeof(*db));
	assert_non_null(da);
	assert_non_null(db);
	epoch_of(&a, &ea, da);
	/* a's directories but the first, which is b's. */
	epoch_of(&a, &eb, db);
	db[0].snap = b.r->dirs[0];

	assert_int_equal(sync_register_new(&fake_api, NULL, &so, &r), 0);
	assert_int_equal(sync_register_claim(r, "/mnt/x", NULL), 0);
	assert_true(wait_txns(1)); /* the name's hold */
	assert_int_equal(sync_register_start(r), 0);

	/* The first record: every key, with the hold (its pid), in one txn. */
	sync_register_publish(r, &ea, 5, NULL);
	assert_true(wait_txns(2));
	full = fk.txn[1].nops;
	assert_int_equal(full, 1 + 1 + a.r->ndirs);
	assert_true(has_key(&fk.txn[1], "/node-names/n1"));
	assert_true(has_key(&fk.txn[1], "/nodes/n1"));
	assert_int_equal(fk.txn[1].cmp_n, 1);

	/* The same record again: nothing is put. */
	sync_register_publish(r, &ea, 5, NULL);
	wait_taken(r);

	/* A newer revision changes the summary alone: only it is put, still
	 * under the compare of the name's hold. */
	sync_register_publish(r, &ea, 6, NULL);
	assert_true(wait_txns(3));
	assert_int_equal(fk.txn[2].nops, 1);
	assert_true(has_key(&fk.txn[2], "/nodes/n1"));
	assert_int_equal(fk.txn[2].cmp_n, 1);

	/* One directory's values change (another PLAIN): the summary
	 * (its digests) and that directory's detail, no other. */
	sync_register_publish(r, &eb, 6, NULL);
	assert_true(wait_txns(4));
	assert_int_equal(fk.txn[3].nops, 2);
	assert_true(has_key(&fk.txn[3], "/nodes/n1"));
	assert_false(has_key(&fk.txn[3], "/node-names/n1"));

	pthread_mutex_lock(&fk.mu);
	assert_int_equal(fk.ntxn, 4);
	pthread_mutex_unlock(&fk.mu);

	sync_register_free(r);
	for (k = 0; k < fk.ntxn && k < MAXTXN; k++)
		for (size_t j = 0; j < fk.txn[k].nops && j < MAXOPS; j++)
			free(fk.txn[k].keys[j]);
	free(da);
	free(db);
	node_release(&a);
	node_release(&b);
}

/* The claim tries a busy cluster's lease grant again within the start's
 * budget, and gives up at once where nothing listens or the budget is
 * spent. */
static void test_claim_retries_a_busy_cluster(void **state)
{
	char prefix[] = "/p", run[] = "r2", node[] = "n2";
	struct sync_opts so = { .prefix = prefix, .run = run, .node = node };
	struct sync_register *r = NULL;
	struct start_retry sr;
	struct timespec t;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t);
	/* Two timeouts, then the grant: held. */
	grant_err = -ETIMEDOUT;
	grant_fails = 2;
	grants = 0;
	start_retry_init(&sr, 2000, (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000, 7);
	assert_int_equal(sync_register_new(&fake_api, NULL, &so, &r), 0);
	assert_int_equal(sync_register_claim(r, "/mnt/y", &sr), 0);
	assert_int_equal(grants, 3);
	assert_int_equal(sr.failures, 2);
	sync_register_free(r);

	/* Refused: one call, -EIO. */
	grant_err = -ECONNREFUSED;
	grant_fails = 1;
	grants = 0;
	start_retry_init(&sr, 2000, (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000, 7);
	assert_int_equal(sync_register_new(&fake_api, NULL, &so, &r), 0);
	assert_int_equal(sync_register_claim(r, "/mnt/y", &sr), -EIO);
	assert_int_equal(grants, 1);
	sync_register_free(r);

	/* Busy for longer than a budget already spent: no second call. */
	grant_err = -ETIMEDOUT;
	grant_fails = 100;
	grants = 0;
	start_retry_init(&sr, 100, (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000 - 1500, 7);
	assert_int_equal(sync_register_new(&fake_api, NULL, &so, &r), 0);
	assert_int_equal(sync_register_claim(r, "/mnt/y", &sr), -EIO);
	assert_int_equal(grants, 1);
	sync_register_free(r);
	grant_fails = 0;
}

/* A cluster that answers keepalives but no txn (every record put times
 * out, as on a loaded cluster) must not lose the node's lease: the
 * renewal is due whatever the put's retries do. The put's failures used
 * to loop back to the put, so the lease ran out after its TTL, and with
 * it the record and the node name. */
static void test_renews_while_puts_fail(void **state)
{
	struct node a = { .env = { "NODE_RANK=1" } };
	char prefix[] = "/p", run[] = "r3", node[] = "n3";
	struct sync_opts so = { .prefix = prefix, .run = run, .node = node };
	struct sync_register *r = NULL;
	struct epoch ea;
	struct epoch_dir *da;
	struct timespec ts;
	size_t failed;
	bool renewed;

	(void)state;
	node_load(&a);
	assert_int_equal(resolve_all(a.w, &a.ov, &a.r), 0);
	da = calloc(a.r->ndirs, sizeof(*da));
	assert_non_null(da);
	epoch_of(&a, &ea, da);
	assert_int_equal(sync_register_new(&fake_api, NULL, &so, &r), 0);
	assert_int_equal(sync_register_claim(r, "/mnt/z", NULL), 0);
	pthread_mutex_lock(&fk.mu);
	fk.txn_err = -ETIMEDOUT;
	fk.keepalives = 0;
	fk.failed_txns = 0;
	pthread_mutex_unlock(&fk.mu);
	assert_int_equal(sync_register_start(r), 0);
	sync_register_publish(r, &ea, 5, NULL);

	/* Hang guard: two TTLs (the renewal is due after a third of one). */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2 * SYNC_LEASE_TTL;
	pthread_mutex_lock(&fk.mu);
	while (!fk.keepalives)
		if (pthread_cond_timedwait(&fk.cv, &fk.mu, &ts) != 0)
			break;
	renewed = fk.keepalives > 0;
	failed = fk.failed_txns;
	pthread_mutex_unlock(&fk.mu);
	sync_register_free(r);
	pthread_mutex_lock(&fk.mu);
	fk.txn_err = 0;
	pthread_mutex_unlock(&fk.mu);
	free(da);
	node_release(&a);
	/* The puts were tried, and failed, meanwhile. */
	assert_true(failed >= 1);
	assert_true(renewed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff_grows_within_bounds),
		cmocka_unit_test(test_backoff_jittered),
		cmocka_unit_test(test_start_delay),
		cmocka_unit_test(test_put_delay_spreads_with_the_nodes),
		cmocka_unit_test(test_record_put_only_when_changed),
		cmocka_unit_test(test_start_retry_busy_within_budget),
		cmocka_unit_test(test_start_retry_not_busy_fails_at_once),
		cmocka_unit_test(test_claim_retries_a_busy_cluster),
		cmocka_unit_test(test_renews_while_puts_fail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
