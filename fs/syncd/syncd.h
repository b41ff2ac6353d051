/* syncd: a mount's share of the run's overrides through etcd (--sync;
 * docs/SYNC.md).
 *
 *   node 0: echo 5 > /mnt/primus/env/maxtext/gfx950/XLA_GPU_AUTOTUNE_LEVEL
 *   node 1: cat /mnt/primus/env/maxtext/gfx950/XLA_GPU_AUTOTUNE_LEVEL    5
 *
 * A write through the mount is committed to etcd (one txn, bounded by
 * --sync-timeout) before --state and before close() returns; every node
 * watches PREFIX/runs/RUN/overrides/ from the revision of its start-up
 * read and applies what others wrote in revision order, as a commit of its
 * own (re-resolve, publish, invalidate). Per key the highest revision
 * applied is kept: an event at or below it (the node's own echo, an old
 * write that raced a newer local one) is dropped, so racing writers end on
 * the highest revision everywhere. Secrets never leave the node.
 *
 * Threads: the watch (its own client) hands events to the applier, which
 * takes publish_lock; commits use the first client under publish_lock.
 *
 * The etcd client lives in the module primus-envfs-sync.so (sync_api.h),
 * loaded here and nowhere else in the mount: a mount without --sync never
 * maps it. */
#ifndef ENVFS_SYNCD_H
#define ENVFS_SYNCD_H

#include <stdbool.h>
#include <stddef.h>

#include <time.h>

#include "envfs.h"
#include "inval.h"
#include "strbuf.h"
#include "sync_api.h"

struct syncd;
struct snapshot;
struct world;

/* Loads the module, makes the client, connects (authenticating when a
 * user is given) and reads the run's overrides into fs->ov (etcd's value
 * wins over --state's for every key etcd has, but a node's private
 * override stays), all within so->timeout_ms per call; call after
 * load_state and before the first load. On failure prints one line naming
 * what failed and returns a negative errno: -EINVAL when the options are
 * wrong (a malformed endpoint list: the mount exits 64, as verify does),
 * else another (the mount exits 2). *out is
 * caller-owned: syncd_free(). */
int syncd_new(struct envfs *fs, const struct sync_opts *so, struct syncd **out);
/* The start-up read into fs->ov, once the first load has read the
 * inputs (w: the world it resolves; node-scoped names are known from it):
 * a key for a name the specs mark `scope: node` is not taken (named on
 * stderr), each node keeps its own. Saves --state when it changed. 0 or a
 * negative errno (said on stderr). */
int syncd_take_startup(struct syncd *sd, const struct world *w);
/* Starts the watch and the applier (after daemonizing: threads do not
 * survive the fork). 0 or a negative errno. */
int syncd_start(struct syncd *sd);
/* Stops and joins the threads; call before the reload thread is freed
 * (the applier hands it invalidations). NULL or not started: a no-op. */
void syncd_stop(struct syncd *sd);
/* syncd_stop, then frees sd. NULL is a no-op. */
void syncd_free(struct syncd *sd);

/* Called by commit.c under publish_lock, after the local change is
 * applied to fs->ov and resolved (snap: the new snapshot of
 * backend/arch) and before --state: puts the n names' overrides (as
 * fs->ov has them now) in etcd in one txn, deletes the keys of those
 * without one; excl: names[0]'s key must not exist (O_EXCL,
 * RENAME_NOREPLACE). A name that is secret in snap, or whose override is
 * private, or that the specs mark `scope: node`, or in mine (bit i:
 * names[i] was a private override and is removed), stays node-local
 * (status lists it). Each key is compared with
 * the revision this node has of it, and the node's fence with where the
 * node left it (syncd_fence.c); the fence's token names cause
 * (history.h's name of it) and who (may be NULL), for the history of
 * the other nodes. Returns 0 (applied), -EAGAIN when
 * another node changed a key first (where etcd has the keys now is kept
 * for syncd_catch_up: the caller rolls back, catches up and recomputes
 * the change from the result), -EEXIST when excl failed (kept too), -EIO when etcd
 * refused or did not answer within the bound and the write is applied
 * nowhere, or -ETIMEDOUT when no member took the fence's move either:
 * the outcome is unknown (status' sync_write_unknown names it until it
 * is learned). status' sync_last_error says which. */
struct hist_writer;
int syncd_commit(struct syncd *sd, const struct hist_writer *who, const char *backend,
		 const char *arch, const char *const *names, size_t n, unsigned mine, bool excl,
		 const char *cause, const struct snapshot *snap);
/* After a syncd_commit that succeeded with names in mine (bit i: names[i]
 * was a private override, removed): the node takes each one's value
 * from etcd, the run's that the private override hid and the watch
 * passed over, as another node's change (publish_lock held). Nothing
 * kept: a no-op. */
void syncd_readopt(struct syncd *sd, struct inval_list *inval);
/* Whether etcd has backend/arch/name's key, as far as this node knows
 * (publish_lock held). */
bool syncd_key_present(struct syncd *sd, const char *backend, const char *arch,
		       const char *name);
/* After a syncd_commit that failed its compare (rolled back): waits until
 * the watch has applied the keys as the failed commit read them in etcd,
 * so the node takes the other node's change whole and in revision order
 * (an mv's two keys together, the changes before it first) and tells the
 * history every node tells. Called with publish_lock held, which the
 * applier needs: released while it waits, held again on return. Returns
 * 0 (nothing to wait for included), or -EIO when the watch has not got
 * there by t0 + --sync-timeout or the mount is stopping
 * (sync_last_error says which). */
int syncd_catch_up(struct syncd *sd, const struct timespec *t0);
/* Whether a commit recomputed attempt times since t0 may go again (at
 * most 20 times, within --sync-timeout); false sets sync_last_error. */
bool syncd_may_retry(struct syncd *sd, unsigned attempt, const struct timespec *t0);
/* A shutdown began (a signal ended the request loop): the commit in
 * flight stops waiting on etcd and, after one short fence move, answers
 * EIO; later commits send nothing. Safe from another thread. */
void syncd_interrupt(struct syncd *sd);

/* After a syncd_commit that succeeded, the local change failed (--state
 * could not be saved): the node takes name's value from its echo, as
 * from another node. */
void syncd_unshare(struct syncd *sd, const char *backend, const char *arch,
		   const char *name);

/* Called after every publish of new snapshots: at start (syncd_start), by
 * a reload and by every commit, local or applied from etcd (publish_lock
 * held then). The node registration hooks in here (see syncd_keys.c). */
void syncd_published(struct syncd *sd);

/* Appends the "sync..." lines of MOUNT/status (no values, ever). Safe
 * from request handlers: never waits on etcd. 0 or -ENOMEM. */
int syncd_status(struct syncd *sd, struct strbuf *out);

/* The functions above that fs/daemon and fs/update call, as they call
 * them (envfs_hooks.h): the mount hands this table to envfs_new. */
extern const struct envfs_sync_hooks syncd_hooks;

#endif
