/* sync_nodes: N nodes of one run as N mounts with --sync are to etcd, in
 * one process, for tests/bench/sync_1024.sh (not run by meson test):
 *
 *   sync_nodes --endpoints EP,EP,EP --run ID --nodes N --verify BIN
 *              [--etcd-pids PID,PID,PID] [--writes 20] [--verify-runs 10]
 *              [--steady S] [--specs DIR] [--prefix P]
 *
 * Each node does what the daemon's registration and watch threads do, with
 * the same etcd client (linked from fs/sync, as the module is built) and
 * the same keys: a client of its own that grants a lease of the daemon's
 * TTL, puts the node record (node_record_build over the shipped specs,
 * resolved with the node's NODE_RANK, in one txn under the lease) and
 * renews the lease every third of the TTL, its first call a random part
 * of a second after its start and a failed one again after a jittered,
 * growing back-off (fs/syncd/register_backoff.c); and a second client whose
 * thread claims the node's name and reads the run's overrides as the
 * daemon's start-up does (a random part of a second after its start, the
 * read the member's own unless it is behind the claim, syncd_startread.h;
 * a busy cluster's failures tried again with the same back-off within the
 * start-up budget, start_retry_next) and watches their prefix from the
 * next revision, reconnecting after the same back-off as the daemon does.
 * (The daemon's start-up also connects, a status call, and moves its
 * fence, a txn; its claim is under the lease, here under none.) Node i's
 * endpoints start at
 * member i % 3, as nodes spread over the members.
 *
 * Then, timed: every node registered and watching; the steady state for
 * --steady seconds (keepalives and the watches' probes); --writes
 * overrides put one after another on another client (key and value in the
 * daemon's encoding, fs/syncd/syncd_value.c), each timed from the put's
 * return to every watcher's callback; and --verify-runs runs of
 * `BIN verify --nodes N`, from fork to exit. With --etcd-pids, the etcd
 * members' CPU time in each phase and their peak RSS (/proc). The last
 * line is one "result" line of key=value pairs for the script. Exit 0, or
 * 1 with a message (a node that does not register or watch in 120 s, a
 * write some watcher never sees in 30 s, a verify that does not exit 0). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etcd.h"
#include "node_record.h"
#include "register_backoff.h"
#include "resolve.h"
#include "spec_share.h"
#include "syncd_startread.h"
#include "syncd_value.h"

/* The daemon's lease TTL (SYNC_LEASE_TTL, fs/syncd/sync_register.h),
 * renewed every third of it as there. */
#define LEASE_TTL 10
/* Every node has two threads: small stacks (curl's transfer and json-c's
 * parse need a few tens of kilobytes). */
#define STACK_BYTES (256 * 1024)
/* Puts of one record in one txn while they fit, as the daemon's. */
#define TXN_MAX (1024 * 1024)
/* Liveness bounds, not measurements. */
#define SETUP_MS 120000
#define WRITE_MS 30000

struct node {
	struct bench *b;
	int i;
	char name[32];
	struct etcd_client *rc, *wc;        /* registration, watch */
	struct node_record_kvs kvs;
	pthread_t rt, wt;
	bool rt_up, wt_up;
	int64_t started_us;                 /* its threads started */
	int64_t registered_us, watching_us; /* 0: not yet */
};

struct bench {
	struct node *nodes;
	int n;
	int writes;
	const char *ovr_prefix;             /* RUN/overrides/ */
	const char *ovr_key;                /* the key written */
	const char *names_prefix;           /* RUN/node-names/ */
	int64_t t0_us;
	pthread_mutex_t mu;
	pthread_cond_t cv;                  /* a count below moved */
	pthread_cond_t stop_cv;             /* stop */
	atomic_int registered, watching;    /* changed under mu */
	bool stop;                          /* under mu */
	atomic_int *seen;                   /* per write: watchers that saw it */
	int64_t *seen_us;                   /* [write * n + node] */
	atomic_long keepalives, keepalive_errors, leases_lost, put_errors;
	atomic_long watch_restarts, stray_events, read_retries;
	/* Start-up reads taken from the member's own store, answers behind
	 * the claim asked again, reads through the leader taken. */
	atomic_long reads_own, reads_behind, reads_leader;
	atomic_int start_failed;            /* nodes whose start-up read gave up */
	char first_error[256];              /* under mu */
};

static int64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void note_error(struct bench *b, const struct node *nd, const char *what,
		       struct etcd_client *c)
{
	pthread_mutex_lock(&b->mu);
	if (!b->first_error[0])
		snprintf(b->first_error, sizeof(b->first_error), "%s %s: %s", nd->name, what,
			 etcd_errmsg(c));
	pthread_mutex_unlock(&b->mu);
}

/* Sleeps until ms from now or the stop; true when stopping. */
static bool pause_ms(struct bench *b, int64_t ms)
{
	int64_t until = now_us() + ms * 1000;
	struct timespec ts;
	bool stop;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&b->mu);
	while (!b->stop && now_us() < until)
		pthread_cond_timedwait(&b->stop_cv, &b->mu, &ts);
	stop = b->stop;
	pthread_mutex_unlock(&b->mu);
	return stop;
}

static int put_record(struct node *nd, int64_t lease)
{
	struct etcd_op *ops = calloc(nd->kvs.n, sizeof(*ops));
	struct etcd_txn_result res;
	size_t k, total = 0;
	int err = 0;

	if (!ops)
		return -ENOMEM;
	for (k = 0; k < nd->kvs.n; k++) {
		ops[k] = (struct etcd_op){ .type = ETCD_OP_PUT, .key = nd->kvs.v[k].key,
					   .value = nd->kvs.v[k].value,
					   .value_len = nd->kvs.v[k].value_len, .lease = lease };
		total += strlen(nd->kvs.v[k].key) + nd->kvs.v[k].value_len;
	}
	if (total <= TXN_MAX)
		err = etcd_txn(nd->rc, NULL, 0, ops, nd->kvs.n, NULL, 0, &res);
	else
		for (k = 0; k < nd->kvs.n && !err; k++)
			err = etcd_put(nd->rc, ops[k].key, ops[k].value, ops[k].value_len, lease,
				       NULL);
	free(ops);
	return err;
}

/* The nodes' threads run at --nice N (default 0: the caller's), the
 * writer and verify at the caller's priority. A niced node stands for a
 * machine of its own that leaves etcd its CPU; on a machine others load
 * it may starve the nodes until their own calls time out (both were seen
 * here: docs/PERFORMANCE.md). */
static int node_nice;

static void be_a_node(void)
{
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), node_nice);
}

/* The registration thread: lease, record, keepalives until the stop.
 * As the daemon's (fs/syncd/sync_register.c): the first call after a
 * random part of a second, each failed one again after a random wait
 * that grows with the failures, and the lease renewed on time whatever
 * the record's retries do (a lease left to run out while its puts are
 * retried costs the cluster a grant and a whole record again). */
static void *register_thread(void *arg)
{
	struct node *nd = arg;
	struct bench *b = nd->b;
	const int64_t renew_ms = LEASE_TTL * 1000 / 3;
	int64_t lease = 0, ttl, retry_at, next_renew = 0, now, wait;
	unsigned failures = 0, ka_failures = 0, seed = register_seed();
	bool put = false;
	int err;

	be_a_node();
	if (pause_ms(b, register_put_delay_ms((unsigned)b->n, &seed)))
		return NULL;
	retry_at = now_us() / 1000;
	for (;;) {
		now = now_us() / 1000;
		if (!lease && now >= retry_at) {
			if ((err = etcd_lease_grant(nd->rc, LEASE_TTL, &lease, &ttl)) < 0) {
				lease = 0;
				if (err == -EINTR)
					break;
				note_error(b, nd, "lease grant", nd->rc);
				retry_at = now_us() / 1000 + register_backoff_ms(++failures, &seed);
				goto wait;
			}
			next_renew = now_us() / 1000 + renew_ms;
			ka_failures = 0;
			put = false;
		}
		if (lease && !put && now >= retry_at) {
			if ((err = put_record(nd, lease)) < 0) {
				if (err == -EINTR)
					break;
				atomic_fetch_add(&b->put_errors, 1);
				note_error(b, nd, "putting the node record", nd->rc);
				if (err == -ENOENT) {
					atomic_fetch_add(&b->leases_lost, 1);
					lease = 0;
				}
				retry_at = now_us() / 1000 + register_backoff_ms(++failures, &seed);
				goto wait;
			}
			failures = 0;
			put = true;
			if (!nd->registered_us) {
				pthread_mutex_lock(&b->mu);
				nd->registered_us = now_us();
				atomic_fetch_add(&b->registered, 1);
				pthread_cond_broadcast(&b->cv);
				pthread_mutex_unlock(&b->mu);
			}
		}
		if (lease && now_us() / 1000 >= next_renew) {
			err = etcd_lease_keepalive(nd->rc, lease, &ttl);
			if (err == -EINTR)
				break;
			atomic_fetch_add(&b->keepalives, 1);
			ka_failures = err < 0 && err != -ENOENT ? ka_failures + 1 : 0;
			if (err == -ENOENT) {
				/* Expired while the cluster was too busy to renew
				 * it: the daemon grants a new one at once and puts
				 * the record again. */
				atomic_fetch_add(&b->leases_lost, 1);
				lease = 0;
				retry_at = now_us() / 1000;
				continue;
			}
			if (err < 0) {
				atomic_fetch_add(&b->keepalive_errors, 1);
				note_error(b, nd, "lease keepalive", nd->rc);
			}
			next_renew = now_us() / 1000 +
				     (ka_failures ? register_backoff_within_ms(ka_failures,
									       (unsigned)renew_ms, &seed)
						  : renew_ms);
		}
wait:
		now = now_us() / 1000;
		wait = lease ? next_renew - now : retry_at - now;
		if (lease && !put && retry_at - now < wait)
			wait = retry_at - now;
		if (pause_ms(b, wait > 0 ? wait : 0))
			break;
	}
	return NULL;
}

static int on_events(void *arg, int64_t revision, const struct etcd_event *ev, size_t n)
{
	struct node *nd = arg;
	struct bench *b = nd->b;
	int64_t t = now_us();
	size_t k;

	(void)revision;
	if (!nd->watching_us) {
		pthread_mutex_lock(&b->mu);
		nd->watching_us = t;
		atomic_fetch_add(&b->watching, 1);
		pthread_cond_broadcast(&b->cv);
		pthread_mutex_unlock(&b->mu);
	}
	for (k = 0; k < n; k++) {
		const char *v;
		size_t vlen;
		char num[16];
		long w;

		if (ev[k].type != ETCD_EV_PUT || strcmp(ev[k].key, b->ovr_key) ||
		    syncd_value_decode(ev[k].value, ev[k].value_len, &v, &vlen) < 0 || !v ||
		    vlen >= sizeof(num)) {
			atomic_fetch_add(&b->stray_events, 1);
			continue;
		}
		memcpy(num, v, vlen);
		num[vlen] = '\0';
		w = strtol(num, NULL, 10);
		if (w < 0 || w >= b->writes || b->seen_us[w * b->n + nd->i])
			continue;
		b->seen_us[w * b->n + nd->i] = t;
		if (atomic_fetch_add(&b->seen[w], 1) + 1 == b->n) {
			pthread_mutex_lock(&b->mu);
			pthread_cond_broadcast(&b->cv);
			pthread_mutex_unlock(&b->mu);
		}
	}
	return 0;
}

/* The daemon's claim of its node name (fs/syncd/sync_register.c): the
 * hold key created where it does not exist, a busy cluster's failures
 * tried again within the start-up budget. Here without a lease (the
 * registration thread's comes later). *rev: the revision that created
 * it, the start-up read's floor. 0, or < 0 when the node gives up. */
static int claim(struct node *nd, struct start_retry *sr, int64_t *rev)
{
	struct bench *b = nd->b;
	struct etcd_txn_result res;
	struct etcd_range got = { 0 };
	char key[700];
	unsigned wait;
	int err;

	snprintf(key, sizeof(key), "%s%s", b->names_prefix, nd->name);
	for (;;) {
		err = etcd_put_if(nd->wc, key, nd->name, strlen(nd->name), 0, 0, &res);
		if (err == 0 && res.succeeded) {
			*rev = res.revision;
			return 0;
		}
		/* A retried txn of ours that landed before. */
		if (err == 0 && (err = etcd_get(nd->wc, key, &got)) == 0 && got.n) {
			*rev = got.kvs[0].create_revision;
			etcd_range_free(&got);
			return 0;
		}
		etcd_range_free(&got);
		if (err == -EINTR)
			return err;
		note_error(b, nd, "claiming the name", nd->wc);
		atomic_fetch_add(&b->read_retries, 1);
		if (start_retry_next(sr, err ? err : -EAGAIN, now_us() / 1000, &wait) < 0) {
			atomic_fetch_add(&b->start_failed, 1);
			return -EIO;
		}
		if (pause_ms(b, wait))
			return -EINTR;
	}
}

/* The watch thread: the name's claim and the overrides read, then
 * watched from the next revision, as the daemon's start-up and watch
 * thread do (fs/syncd/syncd.c, syncd_watch.c): the claim a random part
 * of a second after the start, the read the member's own unless it is
 * behind the claim (syncd_startread.h), and a busy cluster's failures of
 * either tried again with the registration's back-off within the start-up
 * budget (start_retry_next; past it the daemon's mount would exit 2, here
 * the node gives up and is counted); a stream that ends is resumed where
 * it ended after the same back-off. */
static void *watch_thread(void *arg)
{
	struct node *nd = arg;
	struct bench *b = nd->b;
	struct etcd_range r = { 0 };
	struct etcd_watch_end end;
	struct start_retry sr;
	struct start_read rd;
	int64_t from = 0, floor = 0;
	unsigned failures = 0, seed = register_seed(), wait;
	bool started = false;
	int err;

	be_a_node();
	start_retry_init(&sr, SYNC_DEFAULT_TIMEOUT_MS, 0, seed);
	if (pause_ms(b, register_start_delay_ms(&sr.seed)))
		return NULL;
	sr.start_ms = now_us() / 1000;
	if (claim(nd, &sr, &floor) < 0)
		return NULL;
	start_read_init(&rd, floor);
	for (;;) {
		if (!from) {
			/* After the start (a compaction), the daemon's re-read
			 * goes through the leader. */
			bool own = !started && start_read_serializable(&rd);
			struct etcd_range_req rq = { .prefix = b->ovr_prefix, .serializable = own };

			err = etcd_range_read(nd->wc, &rq, &r);
			from = r.revision + 1;
			if (!started && (err = start_read_check(&rd, err, r.revision, &seed,
								&wait)) > 0) {
				atomic_fetch_add(&b->reads_behind, 1);
				etcd_range_free(&r);
				from = 0;
				if (pause_ms(b, wait))
					break;
				continue;
			}
			etcd_range_free(&r);
			if (err == 0 && !started)
				atomic_fetch_add(own ? &b->reads_own : &b->reads_leader, 1);
			if (err < 0) {
				from = 0;
				if (err == -EINTR)
					break;
				note_error(b, nd, "reading the overrides", nd->wc);
				atomic_fetch_add(&b->read_retries, 1);
				if (!started) {
					if (start_retry_next(&sr, err, now_us() / 1000, &wait) < 0) {
						atomic_fetch_add(&b->start_failed, 1);
						break;
					}
				} else {
					wait = register_backoff_ms(++failures, &seed);
				}
				if (pause_ms(b, wait))
					break;
				continue;
			}
			started = true;
		}
		err = etcd_watch(nd->wc, b->ovr_prefix, from, on_events, nd, &end);
		if (err == -EINTR || err == 0)
			break;
		atomic_fetch_add(&b->watch_restarts, 1);
		if (err == -ECONNRESET)
			from = end.next_revision;
		else if (err == -ESTALE)
			from = 0;
		else
			note_error(b, nd, "watch", nd->wc);
		if (nd->watching_us)
			failures = 0;
		if (pause_ms(b, register_backoff_ms(++failures, &seed)))
			break;
	}
	return NULL;
}

/* ---- etcd's processes --------------------------------------------------- */

static pid_t etcd_pid[8];
static int netcd;

/* CPU time of the etcd members so far, in ms (utime + stime). */
static double etcd_cpu_ms(void)
{
	long tick = sysconf(_SC_CLK_TCK);
	double ms = 0;
	int k;

	for (k = 0; k < netcd; k++) {
		char path[64], buf[1024], *p;
		unsigned long ut, st;
		FILE *f;
		size_t len;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)etcd_pid[k]);
		if (!(f = fopen(path, "r")))
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		/* After the command's ")": state is field 3, utime 14. */
		if (!(p = strrchr(buf, ')')) ||
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			   &st) != 2)
			continue;
		ms += (double)(ut + st) * 1000.0 / (double)tick;
	}
	return ms;
}

/* The members' peak RSS (VmHWM), summed and the largest, in KiB. */
static void etcd_rss_kib(long *sum, long *max)
{
	int k;

	*sum = *max = 0;
	for (k = 0; k < netcd; k++) {
		char path[64], line[256];
		long v;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", (int)etcd_pid[k]);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "VmHWM: %ld", &v) == 1) {
				*sum += v;
				if (v > *max)
					*max = v;
			}
		fclose(f);
	}
}

static double self_cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000.0 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000.0;
}

/* ---- figures ---------------------------------------------------------- */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-th percentile of v (nearest rank); sorts v. */
static double pctl(double *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_dbl);
	i = (size_t)ceil(q * (double)n);
	return v[i ? (i > n ? n : i) - 1 : 0];
}

/* ---- set-up -------------------------------------------------------------- */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("sync_nodes: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Node i's record, from the specs resolved with its NODE_RANK and the
 * job's NNODES (without it every node of rank 1 and up carries the
 * launcher's error, and verify's gate fails). */
static void build_record(struct node *nd, int nnodes, const char *specs, const char *run_key)
{
	char env[32], nn[32], msg[256];
	const char *e[2] = { env, nn };
	struct envfs_inputs in = { .specs_dir = specs, .env = e, .nenv = 2 };
	struct resolution *r = NULL;
	struct world *w = NULL;
	const struct spec_share *sh;

	snprintf(env, sizeof(env), "NODE_RANK=%d", nd->i);
	snprintf(nn, sizeof(nn), "NNODES=%d", nnodes);
	if (world_load(&in, &w) < 0 || resolve_all(w, NULL, &r) < 0 || !r->ndirs)
		die("cannot resolve the specs in %s", specs);
	sh = r->dirs[0]->specs;
	struct node_record_in ri = {
		.run_key = run_key, .node = nd->name,
		.specs_digest = sh && sh->has_digest ? sh->digest : NULL,
		.revision = 1, .when_ms = (int64_t)time(NULL) * 1000,
		.dirs = (const struct snapshot *const *)r->dirs, .ndirs = r->ndirs,
	};
	if (node_record_build(&ri, &nd->kvs, msg, sizeof(msg)) < 0)
		die("node %s: %s", nd->name, msg);
	resolution_free(r);
	world_free(w);
}

/* The endpoints "a,b,c" rotated to start at the k-th. Caller-owned. */
static char *rotate(const char *eps, int k)
{
	char *copy = strdup(eps), *part[ETCD_MAX_ENDPOINTS], *s, *out;
	int n = 0, j;
	size_t len = strlen(eps) + 1;

	if (!copy || !(out = calloc(1, len)))
		die("out of memory");
	for (s = strtok(copy, ","); s && n < ETCD_MAX_ENDPOINTS; s = strtok(NULL, ","))
		part[n++] = s;
	for (j = 0; j < n; j++) {
		if (j)
			strcat(out, ",");
		strcat(out, part[(k + j) % n]);
	}
	free(copy);
	return out;
}

/* Waits until *count reaches want or the bound; false on timeout. */
static bool wait_count(struct bench *b, atomic_int *count, int want, int64_t ms)
{
	int64_t until = now_us() + ms * 1000;
	bool ok;

	pthread_mutex_lock(&b->mu);
	while (atomic_load(count) < want && now_us() < until) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&b->cv, &b->mu, &ts);
	}
	ok = atomic_load(count) >= want;
	pthread_mutex_unlock(&b->mu);
	return ok;
}

/* One run of verify, from fork to exit, in ms; dies unless it exits 0. */
static double run_verify(char *const argv[])
{
	int64_t t0 = now_us();
	int st;
	pid_t p = fork();

	if (p < 0)
		die("fork: %s", strerror(errno));
	if (p == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(p, &st, 0) < 0)
		die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("%s verify exited %d (want 0: every node registered, all equal)", argv[0],
		    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return (double)(now_us() - t0) / 1000.0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "endpoints", required_argument, NULL, 'e' }, { "run", required_argument, NULL, 'r' },
		{ "nodes", required_argument, NULL, 'n' }, { "verify", required_argument, NULL, 'v' },
		{ "etcd-pids", required_argument, NULL, 'p' }, { "writes", required_argument, NULL, 'w' },
		{ "verify-runs", required_argument, NULL, 'V' }, { "steady", required_argument, NULL, 't' },
		{ "specs", required_argument, NULL, 's' }, { "prefix", required_argument, NULL, 'P' },
		{ "ramp", required_argument, NULL, 'R' }, { "probe-ms", required_argument, NULL, 'B' },
		{ "nice", required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	const char *eps = NULL, *run = NULL, *verify = NULL, *specs = "specs";
	const char *prefix = SYNC_DEFAULT_PREFIX;
	int nverify = 10, steady = 10, ramp = 0, ch, i, w;
	struct bench b = { .writes = 20, .mu = PTHREAD_MUTEX_INITIALIZER,
			   .cv = PTHREAD_COND_INITIALIZER, .stop_cv = PTHREAD_COND_INITIALIZER };
	struct etcd_opts eo = ETCD_OPTS_INIT;
	struct etcd_client *writer = NULL;
	struct etcd_range nodes_read = { 0 };
	pthread_attr_t attr;
	struct rlimit rl;
	char msg[512], run_key[512], ovr_prefix[600], ovr_key[700], nodes_prefix[600];
	char names_prefix[600];
	double cpu_reg, cpu_steady, cpu_write, cpu_verify, base, c0, c1, s0, s1;
	double *lat, *last, *vt, *regl, reg_ms, watch_ms, reg50, reg99, build_s;
	long ka0;
	int64_t t;
	size_t nl = 0;
	long rss_sum, rss_max;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'e': eps = optarg; break;
		case 'r': run = optarg; break;
		case 'n': b.n = atoi(optarg); break;
		case 'v': verify = optarg; break;
		case 'w': b.writes = atoi(optarg); break;
		case 'V': nverify = atoi(optarg); break;
		case 't': steady = atoi(optarg); break;
		case 's': specs = optarg; break;
		case 'P': prefix = optarg; break;
		case 'R': ramp = atoi(optarg); break;
		case 'N': node_nice = atoi(optarg); break;
		case 'B': eo.probe_ms = (unsigned)atoi(optarg); break;
		case 'p':
			for (char *s = strtok(optarg, ","); s && netcd < 8; s = strtok(NULL, ","))
				etcd_pid[netcd++] = (pid_t)atoi(s);
			break;
		default: return 2;
		}
	}
	if (!eps || !run || !verify || b.n <= 0 || b.writes <= 0 || nverify <= 0 || steady < 0) {
		fprintf(stderr, "usage: sync_nodes --endpoints EP,EP,EP --run ID --nodes N "
			"--verify BIN [--etcd-pids P,P,P] [--writes W] [--verify-runs V] "
			"[--steady S] [--specs DIR] [--prefix P]\n");
		return 2;
	}
	/* Per node: two clients, each a curl multi handle (its wake-up
	 * socket pair) and a connection, and the watch's probe connection. */
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)b.n * 8 + 64)
		die("%d nodes need about %d file descriptors, the limit is %llu (ulimit -n)", b.n,
		    b.n * 8 + 64, (unsigned long long)rl.rlim_cur);

	snprintf(run_key, sizeof(run_key), "%s/runs/%s", prefix, run);
	snprintf(nodes_prefix, sizeof(nodes_prefix), "%s/nodes/", run_key);
	snprintf(ovr_prefix, sizeof(ovr_prefix), "%s/overrides/", run_key);
	snprintf(ovr_key, sizeof(ovr_key), "%smaxtext/gfx950/NVTE_DEBUG_LEVEL", ovr_prefix);
	b.ovr_prefix = ovr_prefix;
	b.ovr_key = ovr_key;
	snprintf(names_prefix, sizeof(names_prefix), "%s/node-names/", run_key);
	b.names_prefix = names_prefix;
	if (!(b.nodes = calloc((size_t)b.n, sizeof(*b.nodes))) ||
	    !(b.seen = calloc((size_t)b.writes, sizeof(*b.seen))) ||
	    !(b.seen_us = calloc((size_t)b.writes * (size_t)b.n, sizeof(*b.seen_us))) ||
	    !(lat = calloc((size_t)b.writes * (size_t)b.n, sizeof(*lat))) ||
	    !(last = calloc((size_t)b.writes, sizeof(*last))) ||
	    !(vt = calloc((size_t)nverify, sizeof(*vt))) ||
	    !(regl = calloc((size_t)b.n, sizeof(*regl))))
		die("out of memory");

	/* The client options of the daemon's (sync_open: a 2000 ms bound,
	 * attempts of 1000 ms). */
	eo.total_ms = SYNC_DEFAULT_TIMEOUT_MS;
	eo.attempt_ms = 1000;
	t = now_us();
	for (i = 0; i < b.n; i++) {
		struct node *nd = &b.nodes[i];
		char *mine = rotate(eps, i);

		nd->b = &b;
		nd->i = i;
		snprintf(nd->name, sizeof(nd->name), "node%04d", i);
		build_record(nd, b.n, specs, run_key);
		if (etcd_client_new(&nd->rc, mine, &eo, msg, sizeof(msg)) < 0 ||
		    etcd_client_dup(&nd->wc, nd->rc) < 0)
			die("node %d: %s", i, msg);
		free(mine);
	}
	build_s = (double)(now_us() - t) / 1e6;
	if (etcd_client_new(&writer, eps, &eo, msg, sizeof(msg)) < 0 ||
	    etcd_connect(writer, NULL) < 0)
		die("the writer: %s", writer ? etcd_errmsg(writer) : msg);
	printf("sync_nodes: %d nodes, records built in %.1f s (%zu keys each)\n", b.n, build_s,
	       b.nodes[0].kvs.n);
	fflush(stdout);

	/* All nodes start at once, as the mounts of a job do. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_BYTES);
	c0 = etcd_cpu_ms();
	s0 = self_cpu_ms();
	b.t0_us = now_us();
	for (i = 0; i < b.n; i++) {
		struct node *nd = &b.nodes[i];
		int64_t due = b.t0_us + (int64_t)ramp * 1000 * i / b.n;
		int e;

		if (now_us() < due)
			usleep((useconds_t)(due - now_us()));
		nd->started_us = now_us();
		if ((e = pthread_create(&nd->wt, &attr, watch_thread, nd)) != 0)
			die("node %d: cannot start a thread: %s", i, strerror(e));
		nd->wt_up = true;
		if ((e = pthread_create(&nd->rt, &attr, register_thread, nd)) != 0)
			die("node %d: cannot start a thread: %s", i, strerror(e));
		nd->rt_up = true;
	}
	if (!wait_count(&b, &b.registered, b.n, SETUP_MS) ||
	    !wait_count(&b, &b.watching, b.n, SETUP_MS))
		die("after %d s, %d of %d nodes registered, %d watching, %d gave up their "
		    "start-up read after the budget, %ld reads tried again (%s)", SETUP_MS / 1000,
		    atomic_load(&b.registered), b.n, atomic_load(&b.watching),
		    atomic_load(&b.start_failed), atomic_load(&b.read_retries), b.first_error);
	reg_ms = watch_ms = 0;
	for (i = 0; i < b.n; i++) {
		double r = (double)(b.nodes[i].registered_us - b.t0_us) / 1000.0;
		double wt = (double)(b.nodes[i].watching_us - b.t0_us) / 1000.0;

		reg_ms = r > reg_ms ? r : reg_ms;
		watch_ms = wt > watch_ms ? wt : watch_ms;
		/* Each node's own: from its start to its record put. */
		regl[i] = (double)(b.nodes[i].registered_us - b.nodes[i].started_us) / 1000.0;
	}
	reg50 = pctl(regl, (size_t)b.n, 0.5);
	reg99 = pctl(regl, (size_t)b.n, 0.99);
	c1 = etcd_cpu_ms();
	cpu_reg = c1 - c0;
	if (etcd_get_prefix(writer, nodes_prefix, 0, &nodes_read) < 0)
		die("reading %s: %s", nodes_prefix, etcd_errmsg(writer));
	if (nodes_read.n != (size_t)b.n)
		die("%zu node records in etcd, want %d", nodes_read.n, b.n);
	etcd_range_free(&nodes_read);
	printf("  all %d registered in %.0f ms (starts spread over %d ms), all watching in %.0f "
	       "ms; a node's own registration p50 %.0f ms, p99 %.0f ms (etcd CPU %.0f ms, ours "
	       "%.0f ms; %ld start-up calls tried again; start-up reads: %ld the member's own, "
	       "%ld through the leader, %ld answers behind the claim)\n", b.n, reg_ms, ramp,
	       watch_ms, reg50, reg99, cpu_reg, self_cpu_ms() - s0, atomic_load(&b.read_retries),
	       atomic_load(&b.reads_own), atomic_load(&b.reads_leader),
	       atomic_load(&b.reads_behind));
	fflush(stdout);

	/* The steady state: keepalives every third of the TTL and the
	 * watches' probes of a quiet stream. */
	c0 = etcd_cpu_ms();
	s0 = self_cpu_ms();
	ka0 = atomic_load(&b.keepalives);
	pause_ms(&b, (int64_t)steady * 1000);
	c1 = etcd_cpu_ms();
	s1 = self_cpu_ms();
	base = steady ? (c1 - c0) / steady / 1000.0 : 0; /* ms of CPU per ms */
	cpu_steady = base * 100.0;                       /* % of one core */
	printf("  steady %d s: etcd CPU %.1f%% of a core, ours %.1f%% (%ld keepalives, %ld "
	       "failed, %ld leases lost, %ld watch restarts)\n", steady, cpu_steady,
	       steady ? (s1 - s0) / steady / 10.0 : 0, atomic_load(&b.keepalives) - ka0,
	       atomic_load(&b.keepalive_errors), atomic_load(&b.leases_lost),
	       atomic_load(&b.watch_restarts));
	fflush(stdout);

	/* The writes: one after another, each once every watcher saw the
	 * last, a pause between them drawn from 50-150 ms so that they do
	 * not fall in step with the keepalives. */
	c0 = etcd_cpu_ms();
	t = now_us();
	srand((unsigned)getpid());
	for (w = 0; w < b.writes; w++) {
		char val[16], *enc;
		size_t enclen;
		int64_t ret;
		int ms;

		snprintf(val, sizeof(val), "%d", w);
		if (syncd_value_encode(val, strlen(val), &enc, &enclen) < 0)
			die("out of memory");
		if (etcd_put(writer, ovr_key, enc, enclen, 0, NULL) < 0)
			die("put %s: %s", ovr_key, etcd_errmsg(writer));
		ret = now_us();
		free(enc);
		if (!wait_count(&b, &b.seen[w], b.n, WRITE_MS))
			die("write %d: %d of %d watchers saw it in %d s", w,
			    atomic_load(&b.seen[w]), b.n, WRITE_MS / 1000);
		last[w] = 0;
		for (i = 0; i < b.n; i++) {
			int64_t d = b.seen_us[w * b.n + i] - ret;
			double ms_d = d > 0 ? (double)d / 1000.0 : 0;

			lat[nl++] = ms_d;
			last[w] = ms_d > last[w] ? ms_d : last[w];
		}
		ms = 50 + rand() % 101;
		pause_ms(&b, ms);
	}
	/* What the writes cost etcd beyond the steady state's rate. */
	cpu_write = etcd_cpu_ms() - c0 - base * (double)(now_us() - t) / 1000.0;

	/* verify, the real binary. */
	{
		char nodes_arg[16], sync_arg[1024];
		char *const vargv[] = { (char *)verify, "verify", "--sync", sync_arg, "--run",
					(char *)run, "--sync-prefix", (char *)prefix, "--nodes",
					nodes_arg, NULL };

		snprintf(nodes_arg, sizeof(nodes_arg), "%d", b.n);
		snprintf(sync_arg, sizeof(sync_arg), "etcd://%s", eps);
		c0 = etcd_cpu_ms();
		t = now_us();
		for (i = 0; i < nverify; i++)
			vt[i] = run_verify(vargv);
		cpu_verify = (etcd_cpu_ms() - c0 - base * (double)(now_us() - t) / 1000.0) /
			     nverify;
	}
	etcd_rss_kib(&rss_sum, &rss_max);

	{
		double l50 = pctl(lat, nl, 0.5), l99 = pctl(lat, nl, 0.99), lmax = lat[nl - 1];
		double a50 = pctl(last, (size_t)b.writes, 0.5);
		double a99 = pctl(last, (size_t)b.writes, 0.99);
		double v50 = pctl(vt, (size_t)nverify, 0.5), v99 = pctl(vt, (size_t)nverify, 0.99);

		printf("  override to every watcher, %d writes x %d watchers: p50 %.1f ms, p99 "
		       "%.1f ms, max %.1f ms; the last watcher of a write p50 %.1f ms, p99 %.1f ms "
		       "(etcd CPU %.1f ms per write over the steady state)\n", b.writes, b.n, l50,
		       l99, lmax, a50, a99, cpu_write / b.writes);
		printf("  verify --nodes %d, %d runs: p50 %.1f ms, p99 %.1f ms (etcd CPU %.0f ms "
		       "per run over the steady state)\n", b.n, nverify, v50, v99, cpu_verify);
		printf("  etcd peak RSS: %.1f MiB over %d members, largest %.1f MiB\n",
		       rss_sum / 1024.0, netcd, rss_max / 1024.0);
		printf("result nodes=%d register_ms=%.0f node_register_p50_ms=%.0f "
		       "node_register_p99_ms=%.0f watch_ms=%.0f etcd_cpu_register_ms=%.0f "
		       "etcd_cpu_steady_pct=%.1f override_p50_ms=%.1f override_p99_ms=%.1f "
		       "override_max_ms=%.1f last_p50_ms=%.1f last_p99_ms=%.1f "
		       "etcd_cpu_write_ms=%.1f verify_p50_ms=%.1f verify_p99_ms=%.1f "
		       "etcd_cpu_verify_ms=%.0f etcd_rss_mib=%.1f etcd_rss_max_mib=%.1f "
		       "leases_lost=%ld keepalive_errors=%ld watch_restarts=%ld read_retries=%ld "
		       "reads_own=%ld reads_leader=%ld reads_behind=%ld\n",
		       b.n, reg_ms, reg50, reg99, watch_ms, cpu_reg, cpu_steady, l50, l99, lmax, a50, a99,
		       cpu_write / b.writes, v50, v99, cpu_verify, rss_sum / 1024.0,
		       rss_max / 1024.0, atomic_load(&b.leases_lost),
		       atomic_load(&b.keepalive_errors), atomic_load(&b.watch_restarts),
		       atomic_load(&b.read_retries), atomic_load(&b.reads_own),
		       atomic_load(&b.reads_leader), atomic_load(&b.reads_behind));
		fflush(stdout);
	}

	/* The end: every thread stopped (the cluster is thrown away, so the
	 * leases are left to expire with it). */
	pthread_mutex_lock(&b.mu);
	b.stop = true;
	pthread_cond_broadcast(&b.stop_cv);
	pthread_mutex_unlock(&b.mu);
	for (i = 0; i < b.n; i++) {
		etcd_interrupt(b.nodes[i].rc);
		etcd_interrupt(b.nodes[i].wc);
	}
	for (i = 0; i < b.n; i++) {
		struct node *nd = &b.nodes[i];

		if (nd->rt_up)
			pthread_join(nd->rt, NULL);
		if (nd->wt_up)
			pthread_join(nd->wt, NULL);
		etcd_client_free(nd->rc);
		etcd_client_free(nd->wc);
		node_record_kvs_free(&nd->kvs);
	}
	etcd_client_free(writer);
	pthread_attr_destroy(&attr);
	free(b.nodes);
	free(b.seen);
	free(b.seen_us);
	free(lat);
	free(last);
	free(vt);
	free(regl);
	return 0;
}
