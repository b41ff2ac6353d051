/* register_backoff: when a node's registration, its start-up calls and
 * its watch call etcd again (pure, no etcd; sync_register.c, syncd.c,
 * syncd_watch.c and tests/bench/sync_nodes.c).
 *
 * The mounts of a job start together: a fixed retry period would keep
 * every node that failed in step, so each retry of the same count falls
 * on etcd at the same moment, and a cluster that was too slow for all of
 * them at once stays too slow. A wait drawn at random from a range that
 * doubles with every failure spreads them out, and the first calls of a
 * start are spread by a short random delay. */
#ifndef ENVFS_REGISTER_BACKOFF_H
#define ENVFS_REGISTER_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

/* The wait after the first failure is drawn from [BASE/2, BASE]; each
 * further failure doubles the range, up to [MAX/2, MAX]. */
#define REGISTER_BACKOFF_BASE_MS 1000u
#define REGISTER_BACKOFF_MAX_MS 8000u
/* The first registration waits a random part of this. */
#define REGISTER_START_SPREAD_MS 1000u

/* The wait in ms before the next attempt after failures (>= 1; 0 counts
 * as 1) consecutive failures, with *seed a thread's own rand_r state:
 * uniform in [cap/2, cap], cap = BASE << (failures - 1), at most MAX. */
unsigned register_backoff_ms(unsigned failures, unsigned *seed);
/* Capped at limit_ms (for a lease's keepalive, which must come again
 * before the lease ends): the same, with cap at most limit_ms. */
unsigned register_backoff_within_ms(unsigned failures, unsigned limit_ms, unsigned *seed);
/* The delay before a start's first call: uniform in
 * [0, REGISTER_START_SPREAD_MS). */
unsigned register_start_delay_ms(unsigned *seed);
/* The first record's put (the largest write of a start: 45 kB through
 * raft at the shipped specs) spreads over a window that grows with the
 * run's node count, so that a large job's mounts do not queue their
 * records at etcd at once: REGISTER_START_SPREAD_MS up to 100 nodes,
 * REGISTER_SPREAD_PER_NODE_MS a node beyond, at most
 * REGISTER_SPREAD_MAX_MS (docs/SYNC.md). */
#define REGISTER_SPREAD_PER_NODE_MS 10u
#define REGISTER_SPREAD_MAX_MS 30000u
unsigned register_put_spread_ms(unsigned nodes);
/* Uniform in [0, register_put_spread_ms(nodes)). */
unsigned register_put_delay_ms(unsigned nodes, unsigned *seed);
/* A seed that differs between the threads and processes of one start. */
unsigned register_seed(void);

/* The start-up calls of a mount (connect, the node name's claim, the read
 * of the overrides) are tried again with the same back-off while etcd
 * answers as a busy cluster does (a call that timed out, "too many
 * requests", a leader change, a connection reset), for at most
 * START_BUDGET_FACTOR times --sync-timeout from the first call (30 s at
 * the default 2000 ms), so that the mounts of a large job that overload a
 * healthy cluster at once do not fail; a cluster where nothing listens
 * (every member refused the connection) or that says no fails the first
 * time. The start's overall bound: the budget plus one call's. */
#define START_BUDGET_FACTOR 15u

struct start_retry {
	int64_t start_ms;   /* the first call, on the caller's clock */
	unsigned budget_ms;
	unsigned failures;  /* busy answers so far */
	unsigned seed;
};

/* A start whose first call is at now_ms, with --sync-timeout timeout_ms
 * (0: SYNC_DEFAULT_TIMEOUT_MS) and seed as register_seed() gives it. */
void start_retry_init(struct start_retry *sr, unsigned timeout_ms, int64_t now_ms,
		      unsigned seed);
/* Whether err is an answer of a busy (not a dead or refusing) cluster. */
bool start_retry_busy(int err);
/* After a call failed with err at now_ms: 0 with *wait_ms, how long to
 * wait before the next try (the back-off, cut to the budget left), or err
 * itself when it is not tried again (not busy, or the budget spent). */
int start_retry_next(struct start_retry *sr, int err, int64_t now_ms, unsigned *wait_ms);

#endif
