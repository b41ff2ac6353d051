/* syncd: a mount's share of the run's overrides through etcd (--sync,
 * issue 16; docs/SYNC.md).
 *
 * The etcd client lives in the module primus-envfs-sync.so (sync_api.h),
 * loaded here and nowhere else in the mount: a mount without --sync never
 * maps it. */
#ifndef ENVFS_SYNCD_H
#define ENVFS_SYNCD_H

#include "envfs.h"
#include "sync_api.h"

struct syncd;

/* Loads the module, makes the client and connects (authenticating when a
 * user is given), within so->timeout_ms. On failure prints one line
 * naming what failed and returns a negative errno (the mount exits 2).
 * *out is caller-owned: syncd_free(). */
int syncd_new(struct envfs *fs, const struct sync_opts *so, struct syncd **out);
/* Stops the threads (if started) and frees sd. NULL is a no-op. */
void syncd_free(struct syncd *sd);

#endif
