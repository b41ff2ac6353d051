/* syncd: a mount's share of the run's overrides through etcd (--sync,
 * issue 16; docs/SYNC.md).
 *
 * The etcd client lives in the module primus-envfs-sync.so (sync_api.h),
 * loaded here and nowhere else in the mount: a mount without --sync never
 * maps it. */
#ifndef ENVFS_SYNCD_H
#define ENVFS_SYNCD_H

#include "envfs.h"
#include "strbuf.h"
#include "sync_api.h"

struct syncd;

/* Loads the module, makes the client and connects (authenticating when a
 * user is given), within so->timeout_ms. On failure prints one line
 * naming what failed and returns a negative errno (the mount exits 2).
 * *out is caller-owned: syncd_free(). */
int syncd_new(struct envfs *fs, const struct sync_opts *so, struct syncd **out);
/* Stops the threads (if started) and frees sd. NULL is a no-op. */
void syncd_free(struct syncd *sd);

/* Starts the threads (after daemonizing: threads do not survive the
 * fork). 0 or a negative errno. */
int syncd_start(struct syncd *sd);
/* Called after every publish of new snapshots (at start, by a reload,
 * by every commit; publish_lock held): the node registration hooks in
 * here (sync_register.h). NULL is a no-op. */
void syncd_published(struct syncd *sd);
/* Appends the "sync..." lines of MOUNT/status (no values, ever). Safe
 * from request handlers: never waits on etcd. NULL: nothing. 0 or
 * -ENOMEM. */
int syncd_status(struct syncd *sd, struct strbuf *out);

#endif
