/* etcd_driver: the etcd client of fs/sync as a command line, for the live
 * tests in tests/sync. Commands run in order on one client,
 * separated by ':':
 *
 *   etcd_driver --endpoints 127.0.0.1:2379 put /a x : get /a : stats
 *
 * Output is line-oriented and meant for grep; values print in hex where
 * they may be binary. Every failed call prints to stderr
 *   error ERRNO_NAME MS: MESSAGE
 * (MS: how long the call took) and makes the exit status 3; a failed
 * compare or a missing key makes it 1; bad usage 2. The password comes
 * from an environment variable or a file, never from argv. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etcd.h"

static struct etcd_client *cli;
static struct etcd_client *twin; /* `twin`: a dup of cli, for `follow` */
static const char *endpoints;
static struct etcd_opts opts = ETCD_OPTS_INIT;
static bool resume;
static int status;
static int64_t last_lease;

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The wall clock in ms, for the shell's $EPOCHREALTIME. */
static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(void)
{
	fputs("usage: etcd_driver [--endpoints LIST] [--ca F --cert F --key F]\n"
	      "         [--user U (--password-env VAR | --password-file F)]\n"
	      "         [--attempt-ms N] [--total-ms N] [--probe-ms N] [--resume]\n"
	      "         COMMAND [ARG...] [: COMMAND [ARG...]]...\n"
	      "commands: put KEY VALUE [LEASE|last], put-file KEY FILE, get KEY, meta KEY,\n"
	      "  range PREFIX [LIMIT], del KEY, delp PREFIX, cas KEY VALUE MODREV,\n"
	      "  create KEY VALUE, mv FROM TO, lease-grant TTL, lease-keepalive ID,\n"
	      "  lease-hold ID SECONDS, lease-revoke ID, lease-ttl ID,\n"
	      "  watch PREFIX REV N [SECONDS], stream PREFIX COUNT [INTERVAL_MS],\n"
	      "  bench N, health, status, connect, sleep MS, stats, endpoint,\n"
	      "  twin (a dup of the client, made now), follow (the twin starts its next\n"
	      "  call after the endpoint the client's last call tried first), twin-endpoint\n", stderr);
	exit(2);
}

/* Prints the last failure, with the call's duration. */
static int failed(int err, int64_t t0)
{
	fprintf(stderr, "error %s %" PRId64 ": %s\n", strerrorname_np(-err),
	        (now_us() - t0) / 1000, etcd_errmsg(cli));
	status = 3;
	return err;
}

static void hex(FILE *f, const char *p, size_t n)
{
	if (!n)
		fputc('-', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", (unsigned char)p[i]);
}

static int64_t num(const char *s)
{
	char *end;
	long long v;

	if (!strcmp(s, "last"))
		return last_lease;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		usage();
	return v;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f) {
		perror(path);
		exit(2);
	}
	do {
		if (n == cap && !(buf = realloc(buf, cap = cap ? cap * 2 : 4096)))
			exit(2);
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
}

/* ---- watch ------------------------------------------------------------------ */

struct wctx {
	long left;               /* events still wanted */
	int64_t *seen_us;        /* bench: when event i arrived */
	long nseen;
};

static int on_events(void *arg, int64_t rev, const struct etcd_event *ev, size_t n)
{
	struct wctx *w = arg;

	if (n == 0) {
		printf("# created %" PRId64 "\n", rev);
		fflush(stdout);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (w->seen_us) {
			long idx = atol(strrchr(ev[i].key, '/') ? strrchr(ev[i].key, '/') + 1 : "0");

			if (idx >= 0 && idx < w->nseen && !w->seen_us[idx])
				w->seen_us[idx] = now_us();
		} else {
			printf("ev %" PRId64 " %s %.*s ", rev, ev[i].type == ETCD_EV_PUT ? "PUT" : "DELETE",
			       (int)ev[i].key_len, ev[i].key);
			hex(stdout, ev[i].value, ev[i].value_len);
			putchar('\n');
		}
	}
	fflush(stdout);
	w->left -= (long)n;
	return w->left <= 0;
}

struct alarm_arg {
	struct etcd_client *c;
	unsigned ms;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool cancel;
};

/* Interrupts the watch from another thread after ms (etcd_interrupt). */
static void *alarm_thread(void *p)
{
	struct alarm_arg *a = p;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += a->ms / 1000;
	ts.tv_nsec += (long)(a->ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&a->mu);
	while (!a->cancel)
		if (pthread_cond_timedwait(&a->cv, &a->mu, &ts) == ETIMEDOUT) {
			etcd_interrupt(a->c);
			break;
		}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

static bool transient(int err)
{
	return err == -ECONNRESET || err == -ETIMEDOUT || err == -EAGAIN ||
	       err == -ECONNREFUSED || err == -EHOSTUNREACH;
}

/* watch PREFIX REV N [SECONDS]: with --resume, reconnects after a stream
 * end and reads again after a compaction, as phase 2's watcher will. */
static int watch_loop(struct etcd_client *c, const char *prefix, int64_t from, struct wctx *w)
{
	struct etcd_watch_end end;
	unsigned failures = 0;
	int err;

	for (;;) {
		int64_t t0 = now_us();

		err = etcd_watch(c, prefix, from, on_events, w, &end);
		if (err == 0)
			return 0;
		if (err == -ESTALE && resume) {
			struct etcd_range r;

			printf("# compacted %" PRId64 "\n", end.compact_revision);
			if ((err = etcd_get_prefix(c, prefix, 0, &r)) < 0) {
				etcd_range_free(&r);
				if (transient(err))
					continue;
				return failed(err, t0);
			}
			printf("# reread rev %" PRId64 " n %zu\n", r.revision, r.n);
			fflush(stdout);
			from = r.revision + 1;
			etcd_range_free(&r);
			continue;
		}
		if (resume && transient(err)) {
			unsigned d = etcd_backoff_ms(++failures > 3 ? 3 : failures);

			printf("# reconnect %s from %" PRId64 " in %u ms at %" PRId64 ": %s\n",
			       strerrorname_np(-err), end.next_revision, d, wall_ms(), etcd_errmsg(c));
			fflush(stdout);
			usleep(d * 1000);
			from = end.next_revision;
			continue;
		}
		if (err == -ESTALE)
			printf("compacted %" PRId64 "\n", end.compact_revision);
		return failed(err, t0);
	}
}

static int cmd_watch(char **a, int n)
{
	struct wctx w = { 0 };
	struct alarm_arg al = { .c = cli, .mu = PTHREAD_MUTEX_INITIALIZER,
	                        .cv = PTHREAD_COND_INITIALIZER };
	pthread_t th;
	int err;

	if (n < 3)
		usage();
	w.left = (long)num(a[2]);
	if (n > 3) {
		al.ms = (unsigned)(num(a[3]) * 1000);
		pthread_create(&th, NULL, alarm_thread, &al);
	}
	err = watch_loop(cli, a[0], num(a[1]), &w);
	if (n > 3) {
		pthread_mutex_lock(&al.mu);
		al.cancel = true;
		pthread_cond_signal(&al.cv);
		pthread_mutex_unlock(&al.mu);
		pthread_join(th, NULL);
	}
	printf("end %s\n", err ? strerrorname_np(-err) : "0");
	return err;
}

/* ---- bench ---------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(int64_t *v, long n, double p)
{
	qsort(v, (size_t)n, sizeof *v, cmp_i64);
	return v[(long)(p * (double)(n - 1))] / 1000.0;
}

struct bench_watch {
	struct etcd_client *c;
	const char *prefix;
	struct wctx w;
	int err;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool ready;
};

static int bench_on_events(void *arg, int64_t rev, const struct etcd_event *ev, size_t n)
{
	struct bench_watch *b = arg;
	int done;

	if (n == 0) {
		pthread_mutex_lock(&b->mu);
		b->ready = true;
		pthread_cond_signal(&b->cv);
		pthread_mutex_unlock(&b->mu);
		return 0;
	}
	/* Under the lock: the putting thread reads b->w.left meanwhile. */
	pthread_mutex_lock(&b->mu);
	done = on_events(&b->w, rev, ev, n);
	pthread_mutex_unlock(&b->mu);
	return done;
}

static void *bench_thread(void *p)
{
	struct bench_watch *b = p;

	b->err = etcd_watch(b->c, b->prefix, 0, bench_on_events, b, NULL);
	pthread_mutex_lock(&b->mu);
	b->ready = true;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/* bench N: N puts back to back on this client while another client,
 * on the next endpoint, watches them. */
static int cmd_bench(char **a, int n)
{
	struct bench_watch b = { .prefix = "/bench/", .mu = PTHREAD_MUTEX_INITIALIZER,
	                         .cv = PTHREAD_COND_INITIALIZER };
	char msg[256], key[64], *rot;
	const char *comma;
	long count, miss = 0;
	int64_t *put_us, *start_us, *vis;
	pthread_t th;
	int err;

	if (n < 1 || (count = (long)num(a[0])) < 2)
		usage();
	/* The watcher's endpoints start one further: it sees the puts
	 * through another member, as another node would. */
	comma = strchr(endpoints, ',');
	if (comma && asprintf(&rot, "%s,%.*s", comma + 1, (int)(comma - endpoints), endpoints) < 0)
		exit(2);
	if (!comma)
		rot = strdup(endpoints);
	if ((err = etcd_client_new(&b.c, rot, &opts, msg, sizeof msg)) < 0) {
		fprintf(stderr, "%s\n", msg);
		exit(2);
	}
	free(rot);
	put_us = calloc((size_t)count, sizeof *put_us);
	start_us = calloc((size_t)count, sizeof *start_us);
	vis = calloc((size_t)count, sizeof *vis);
	b.w.seen_us = calloc((size_t)count, sizeof *b.w.seen_us);
	b.w.nseen = count;
	b.w.left = count;
	pthread_create(&th, NULL, bench_thread, &b);
	pthread_mutex_lock(&b.mu);
	while (!b.ready)
		pthread_cond_wait(&b.cv, &b.mu);
	pthread_mutex_unlock(&b.mu);
	for (long i = 0; i < count; i++) {
		int64_t t0 = now_us();

		snprintf(key, sizeof key, "/bench/%ld", i);
		start_us[i] = t0;
		if ((err = etcd_put(cli, key, "x", 1, 0, NULL)) < 0) {
			etcd_interrupt(b.c);
			pthread_join(th, NULL);
			return failed(err, t0);
		}
		put_us[i] = now_us() - t0;
	}
	/* The last events: give them 5 s, then stop the watcher. */
	for (int t = 0; t < 500; t++) {
		pthread_mutex_lock(&b.mu);
		long left = b.w.left;

		pthread_mutex_unlock(&b.mu);
		if (left <= 0)
			break;
		usleep(10000);
	}
	etcd_interrupt(b.c);
	pthread_join(th, NULL);
	long nv = 0;
	for (long i = 0; i < count; i++) {
		if (b.w.seen_us[i])
			vis[nv++] = b.w.seen_us[i] - start_us[i];
		else
			miss++;
	}
	printf("bench puts %ld put_p50_ms %.2f put_p99_ms %.2f", count, pct(put_us, count, 0.5),
	       pct(put_us, count, 0.99));
	if (nv > 1)
		printf(" visible_p50_ms %.2f visible_p99_ms %.2f", pct(vis, nv, 0.5), pct(vis, nv, 0.99));
	printf(" unseen %ld\n", miss);
	free(put_us);
	free(start_us);
	free(vis);
	free(b.w.seen_us);
	etcd_client_free(b.c);
	if (miss) {
		fprintf(stderr, "error: the watcher missed %ld of %ld puts\n", miss, count);
		status = 3;
		return -EIO;
	}
	return 0;
}

/* ---- the rest --------------------------------------------------------------- */

static void print_txn(const struct etcd_txn_result *r)
{
	printf("%s %" PRId64 "%s\n", r->succeeded ? "ok" : "failed", r->revision,
	       r->uncertain ? " uncertain" : "");
	if (!r->succeeded && status == 0)
		status = 1;
}

static int run(char **a, int n)
{
	const char *c = a[0];
	int64_t t0 = now_us(), rev = 0, v1 = 0, v2 = 0;
	struct etcd_txn_result tr;
	struct etcd_range r = { 0 };
	int err = 0;

	a++;
	n--;
	if (!strcmp(c, "put") && (n == 2 || n == 3)) {
		if ((err = etcd_put(cli, a[0], a[1], strlen(a[1]), n == 3 ? num(a[2]) : 0, &rev)) == 0)
			printf("ok %" PRId64 "\n", rev);
	} else if (!strcmp(c, "put-file") && (n == 2 || n == 3)) {
		size_t len;
		char *buf = read_all(a[1], &len);

		if ((err = etcd_put(cli, a[0], buf, len, n == 3 ? num(a[2]) : 0, &rev)) == 0)
			printf("ok %" PRId64 "\n", rev);
		free(buf);
	} else if ((!strcmp(c, "get") || !strcmp(c, "meta")) && n == 1) {
		if ((err = etcd_get(cli, a[0], &r)) == 0) {
			if (r.n == 0) {
				if (status == 0)
					status = 1;
				fprintf(stderr, "missing %s\n", a[0]);
			} else if (!strcmp(c, "get")) {
				fwrite(r.kvs[0].value, 1, r.kvs[0].value_len, stdout);
			} else {
				printf("create %" PRId64 " mod %" PRId64 " version %" PRId64
				       " lease %" PRId64 " len %zu rev %" PRId64 "\n",
				       r.kvs[0].create_revision, r.kvs[0].mod_revision, r.kvs[0].version,
				       r.kvs[0].lease, r.kvs[0].value_len, r.revision);
			}
		}
		etcd_range_free(&r);
	} else if (!strcmp(c, "range") && (n == 1 || n == 2)) {
		if ((err = etcd_get_prefix(cli, a[0], n == 2 ? (size_t)num(a[1]) : 0, &r)) == 0) {
			printf("rev %" PRId64 " n %zu more %d\n", r.revision, r.n, r.more);
			for (size_t i = 0; i < r.n; i++) {
				printf("%s %" PRId64 " ", r.kvs[i].key, r.kvs[i].mod_revision);
				hex(stdout, r.kvs[i].value, r.kvs[i].value_len);
				putchar('\n');
			}
		}
		etcd_range_free(&r);
	} else if ((!strcmp(c, "del") || !strcmp(c, "delp")) && n == 1) {
		err = c[3] ? etcd_delete_prefix(cli, a[0], &v1, &rev) : etcd_delete(cli, a[0], &v1, &rev);
		if (err == 0)
			printf("deleted %" PRId64 " rev %" PRId64 "\n", v1, rev);
	} else if (!strcmp(c, "cas") && n == 3) {
		if ((err = etcd_put_if(cli, a[0], a[1], strlen(a[1]), 0, num(a[2]), &tr)) == 0)
			print_txn(&tr);
	} else if (!strcmp(c, "create") && n == 2) {
		if ((err = etcd_put_if(cli, a[0], a[1], strlen(a[1]), 0, 0, &tr)) == 0)
			print_txn(&tr);
	} else if (!strcmp(c, "mv") && n == 2) {
		if ((err = etcd_get(cli, a[0], &r)) == 0) {
			if (r.n == 0) {
				fprintf(stderr, "missing %s\n", a[0]);
				status = status ? status : 1;
			} else if ((err = etcd_move(cli, a[0], r.kvs[0].mod_revision, a[1], 0,
			                            r.kvs[0].value, r.kvs[0].value_len, 0, &tr)) == 0) {
				print_txn(&tr);
			}
		}
		etcd_range_free(&r);
	} else if (!strcmp(c, "lease-grant") && n == 1) {
		if ((err = etcd_lease_grant(cli, num(a[0]), &last_lease, &v1)) == 0)
			printf("lease %" PRId64 " ttl %" PRId64 "\n", last_lease, v1);
	} else if (!strcmp(c, "lease-keepalive") && n == 1) {
		if ((err = etcd_lease_keepalive(cli, num(a[0]), &v1)) == 0)
			printf("ttl %" PRId64 "\n", v1);
	} else if (!strcmp(c, "lease-hold") && n == 2) {
		int64_t id = num(a[0]), until = now_us() + num(a[1]) * 1000000;
		long k = 0;

		while (now_us() < until) {
			t0 = now_us();
			if ((err = etcd_lease_keepalive(cli, id, &v1)) < 0)
				break;
			k++;
			usleep((useconds_t)(v1 * 1000000 / 4));
		}
		if (err == 0)
			printf("keepalives %ld\n", k);
	} else if (!strcmp(c, "lease-revoke") && n == 1) {
		if ((err = etcd_lease_revoke(cli, num(a[0]))) == 0)
			printf("revoked\n");
	} else if (!strcmp(c, "lease-ttl") && n == 1) {
		if ((err = etcd_lease_ttl(cli, num(a[0]), &v1, &v2)) == 0)
			printf("remaining %" PRId64 " granted %" PRId64 "\n", v1, v2);
	} else if (!strcmp(c, "watch")) {
		return cmd_watch(a, n);
	} else if (!strcmp(c, "stream") && (n == 2 || n == 3)) {
		long count = (long)num(a[1]), gap = n == 3 ? (long)num(a[2]) : 0;
		char key[256], val[32];

		for (long i = 0; i < count; i++) {
			snprintf(key, sizeof key, "%s%ld", a[0], i);
			snprintf(val, sizeof val, "v%ld", i);
			t0 = now_us();
			err = etcd_put(cli, key, val, strlen(val), 0, &rev);
			printf("put %ld %s %" PRId64 " %" PRId64 "\n", i,
			       err ? strerrorname_np(-err) : "ok", (now_us() - t0) / 1000, rev);
			if (err)
				printf("# %s\n", etcd_errmsg(cli));
			fflush(stdout);
			if (gap)
				usleep((useconds_t)gap * 1000);
		}
		return 0;
	} else if (!strcmp(c, "bench")) {
		return cmd_bench(a, n);
	} else if (!strcmp(c, "health") && n == 0) {
		if ((err = etcd_health(cli)) == 0)
			printf("healthy %s\n", etcd_endpoint(cli));
	} else if ((!strcmp(c, "status") || !strcmp(c, "connect")) && n == 0) {
		struct etcd_status st;

		err = c[0] == 's' ? etcd_status(cli, &st) : etcd_connect(cli, &st);
		if (err == 0)
			printf("member %" PRIx64 " leader %" PRIx64 " term %" PRIu64 " rev %" PRId64
			       " version %s endpoint %s\n", st.member_id, st.leader_id, st.raft_term,
			       st.revision, st.version, etcd_endpoint(cli));
	} else if (!strcmp(c, "sleep") && n == 1) {
		usleep((useconds_t)num(a[0]) * 1000);
	} else if (!strcmp(c, "stats") && n == 0) {
		struct etcd_stats s;

		etcd_stats(cli, &s);
		printf("calls %" PRIu64 " attempts %" PRIu64 " failovers %" PRIu64 " auths %" PRIu64
		       " reauths %" PRIu64 "\n", s.calls, s.attempts, s.failovers, s.auths, s.reauths);
	} else if (!strcmp(c, "endpoint") && n == 0) {
		printf("%s\n", etcd_endpoint(cli));
	} else if (!strcmp(c, "twin") && n == 0) {
		etcd_client_free(twin);
		twin = NULL;
		err = etcd_client_dup(&twin, cli);
	} else if (!strcmp(c, "follow") && n == 0 && twin) {
		etcd_client_follow(twin, cli);
	} else if (!strcmp(c, "twin-endpoint") && n == 0 && twin) {
		printf("%s\n", etcd_endpoint(twin));
	} else {
		usage();
	}
	fflush(stdout);
	return err < 0 ? failed(err, t0) : 0;
}

static char *read_password_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f) {
		perror(path);
		exit(2);
	}
	n = getline(&line, &cap, f);
	fclose(f);
	if (n < 0)
		exit(2);
	if (n && line[n - 1] == '\n')
		line[n - 1] = 0;
	return line;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "endpoints", required_argument, NULL, 'e' },
		{ "ca", required_argument, NULL, 'C' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "user", required_argument, NULL, 'u' },
		{ "password-env", required_argument, NULL, 'P' },
		{ "password-file", required_argument, NULL, 'F' },
		{ "attempt-ms", required_argument, NULL, 'a' },
		{ "total-ms", required_argument, NULL, 't' },
		{ "probe-ms", required_argument, NULL, 'p' },
		{ "resume", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	char msg[512], *pw = NULL;
	int o, err;

	endpoints = getenv("ETCD_ENDPOINTS");
	while ((o = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (o) {
		case 'e': endpoints = optarg; break;
		case 'C': opts.ca_file = optarg; break;
		case 'c': opts.cert_file = optarg; break;
		case 'k': opts.key_file = optarg; break;
		case 'u': opts.user = optarg; break;
		case 'P':
			if (!getenv(optarg)) {
				fprintf(stderr, "%s is not set\n", optarg);
				return 2;
			}
			opts.password = getenv(optarg);
			break;
		case 'F': opts.password = pw = read_password_file(optarg); break;
		case 'a': opts.attempt_ms = (unsigned)num(optarg); break;
		case 't': opts.total_ms = (unsigned)num(optarg); break;
		case 'p': opts.probe_ms = (unsigned)num(optarg); break;
		case 'r': resume = true; break;
		default: usage();
		}
	}
	if (!endpoints || optind == argc)
		usage();
	if ((err = etcd_client_new(&cli, endpoints, &opts, msg, sizeof msg)) < 0) {
		fprintf(stderr, "error %s 0: %s\n", strerrorname_np(-err), msg);
		return 3;
	}
	if (pw) {
		explicit_bzero(pw, strlen(pw));
		free(pw);
	}
	for (int i = optind; i < argc;) {
		int j = i;

		while (j < argc && strcmp(argv[j], ":"))
			j++;
		if (j == i)
			usage();
		if (run(argv + i, j - i) < 0 && status == 0)
			status = 3;
		i = j + 1;
	}
	etcd_client_free(twin);
	etcd_client_free(cli);
	return status;
}
