/* loop: the FUSE request loop.
 *
 * The calling thread reads every request from /dev/fuse and answers the
 * quick ones (lookups, attributes, read opens, reads, listings) itself.
 * Requests that may wait on the disk, because they commit an override to
 * the --state file (write opens, WRITE, FLUSH, write RELEASE, create,
 * truncate, unlink, rename...), or on a commit, because they use a write
 * handle whose buffer a commit holds (its READ and GETATTR), are copied
 * to a small pool of worker threads, so a commit's fsync never holds up
 * a reader.
 *
 * After each request the reading thread keeps polling /dev/fuse for a
 * short while (spin_us) before it sleeps: on a small VM, waking a sleeping
 * daemon costs every OPEN a cross-CPU wakeup of tens of microseconds, and
 * a `cat` loop or a container start issues its opens back to back
 * (docs/PERFORMANCE.md). An idle mount costs nothing: the thread sleeps in
 * ppoll() once spin_us have passed without a request. */
#ifndef ENVFS_LOOP_H
#define ENVFS_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "envfs_fuse.h"

#define LOOP_DEFAULT_WORKERS 4

struct loop_opts {
	unsigned spin_us;        /* polling after a request; 0: sleep at once */
	unsigned workers;        /* 0: everything on the reading thread (-s) */
	/* True when a request on file handle fh may wait for a commit (the
	 * handle buffers writes, and its lock is held across a commit); such
	 * reads and getattrs go to the workers too. NULL: none does. */
	bool (*fh_may_block)(uint64_t fh);
	/* Called once the workers run, before the first request is read
	 * (daemonize's "ready"); a negative errno from it ends the loop. */
	int (*on_ready)(void *arg);
	void *ready_arg;
	/* Called once the loop ends, before the workers are joined: wakes a
	 * handler that waits on the network (a --sync commit), so that a
	 * SIGTERM ends the daemon within its bound. NULL: none. */
	void (*on_stop)(void *arg);
	void *stop_arg;
};

/* Runs the session until it is unmounted or a termination signal
 * (libfuse's handlers, installed by the caller) ends it. The caller's
 * SIGINT, SIGTERM and SIGHUP are blocked except while the loop sleeps,
 * and the workers never take them, so no signal can slip in between the
 * exit check and the sleep. Returns 0 on a clean end, or a negative errno
 * when /dev/fuse fails or no worker can be started. */
int loop_run(struct fuse_session *se, const struct loop_opts *o);

#endif
