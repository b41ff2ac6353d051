/* When a node's registration calls etcd again; see register_backoff.h. */
#include "register_backoff.h"

#include <errno.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static unsigned draw(unsigned cap, unsigned *seed)
{
	return cap / 2 + (unsigned)rand_r(seed) % (cap - cap / 2 + 1);
}

static unsigned cap_of(unsigned failures)
{
	unsigned cap = REGISTER_BACKOFF_BASE_MS, f;

	for (f = 1; f < failures && cap < REGISTER_BACKOFF_MAX_MS; f++)
		cap *= 2;
	return cap < REGISTER_BACKOFF_MAX_MS ? cap : REGISTER_BACKOFF_MAX_MS;
}

unsigned register_backoff_ms(unsigned failures, unsigned *seed)
{
	return draw(cap_of(failures), seed);
}

unsigned register_backoff_within_ms(unsigned failures, unsigned limit_ms, unsigned *seed)
{
	unsigned cap = cap_of(failures);

	return draw(cap < limit_ms || !limit_ms ? cap : limit_ms, seed);
}

unsigned register_start_delay_ms(unsigned *seed)
{
	return (unsigned)rand_r(seed) % REGISTER_START_SPREAD_MS;
}

unsigned register_put_spread_ms(unsigned nodes)
{
	uint64_t w = (uint64_t)nodes * REGISTER_SPREAD_PER_NODE_MS;

	if (w < REGISTER_START_SPREAD_MS)
		return REGISTER_START_SPREAD_MS;
	return w > REGISTER_SPREAD_MAX_MS ? REGISTER_SPREAD_MAX_MS : (unsigned)w;
}

unsigned register_put_delay_ms(unsigned nodes, unsigned *seed)
{
	return (unsigned)rand_r(seed) % register_put_spread_ms(nodes);
}

unsigned register_seed(void)
{
	struct timespec t;
	unsigned s;

	clock_gettime(CLOCK_MONOTONIC, &t);
	/* The address of a local differs between threads (their stacks);
	 * the thread id between threads that reuse one stack. */
	s = (unsigned)t.tv_nsec ^ (unsigned)t.tv_sec * 2654435761u ^ (unsigned)getpid() * 40503u ^
	    (unsigned)(uintptr_t)&s ^ (unsigned)(uintptr_t)pthread_self() * 2246822519u;
	return s ? s : 1;
}

void start_retry_init(struct start_retry *sr, unsigned timeout_ms, int64_t now_ms,
		      unsigned seed)
{
	/* The default of sync_api.h, not included here: this file is pure. */
	unsigned t = timeout_ms ? timeout_ms : 2000u;

	sr->start_ms = now_ms;
	sr->budget_ms = t * START_BUDGET_FACTOR;
	sr->failures = 0;
	sr->seed = seed ? seed : 1;
}

bool start_retry_busy(int err)
{
	return err == -ETIMEDOUT || err == -EAGAIN || err == -ECONNRESET;
}

int start_retry_next(struct start_retry *sr, int err, int64_t now_ms, unsigned *wait_ms)
{
	int64_t left = sr->start_ms + (int64_t)sr->budget_ms - now_ms;
	unsigned w;

	if (!start_retry_busy(err) || left <= 0)
		return err;
	w = register_backoff_ms(++sr->failures, &sr->seed);
	*wait_ms = (int64_t)w < left ? w : (unsigned)left;
	return 0;
}
