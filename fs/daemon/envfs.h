/* envfs: the running daemon, shared by the request handlers (fs/ops/ll_*.c),
 * the reload thread (reload.c), the sync threads (syncd*.c) and the
 * command (cmd_mount.c), and its lifecycle:
 *
 *   envfs_new     everything up to the first load, loaded: no thread yet
 *   envfs_start   after the daemon forked: the reload, history and sync
 *                 threads
 *   ... the request loop (loop.h) ...
 *   envfs_stop    those threads stopped (before the unmount)
 *   envfs_free    the rest, once no request handler can run */
#ifndef ENVFS_ENVFS_H
#define ENVFS_ENVFS_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "envfs_fuse.h"
#include "envfs_hooks.h"
#include "handles.h"
#include "history.h"
#include "mount_opts.h"
#include "resolve.h"
#include "epoch.h"
#include "status_parts.h"
#include "tree.h"

struct reloader;
struct syncd;

/* Lock ordering in the daemon (docs/DESIGN.md has the threads, the
 * epochs and every nesting, with where it happens):
 *
 *   wopen_lock
 *     wbuf.lock                       one write open's (ll_internal.h)
 *       publish_lock   live_lock      never one under the other
 *         syncd.lock                  (syncd_internal.h)
 *           ov_lock
 *             state.lock, tree lock, hist_lock, sync_register lock,
 *             reloader qlock, reading_lock, handles lock, pool lock,
 *             the sync module's load_lock
 *
 * A thread holding a lock takes only locks below it; the last lines are
 * leaves, nothing is taken after them. Inside epoch_enter() a handler
 * must not wait for publish_lock or a wbuf.lock (nor wopen_lock, which
 * leads to one): a publisher holds them while it waits for the old
 * epoch's handlers (envfs_publish, publish.h). DESIGN.md lists where
 * the code departs from this today. Invalidations are sent with none of
 * these held. */
struct envfs {
	const struct mount_opts *opts;   /* borrowed from cmd_mount */
	/* --state resolved once at start (state_lock.h), or NULL; borrowed
	 * from cmd_mount. */
	const char *state_path;
	struct tree *tree;               /* owned */
	struct epoch_slot state;              /* the published epoch */
	/* Per-run overrides (writes through the mount); every load passes them to
	 * resolve_all so they survive reloads. Guarded by ov_lock. */
	pthread_mutex_t ov_lock;
	struct override_set ov;
	/* The size of the --state document the last commit rendered (0:
	 * none yet), under publish_lock: a change over the bound that does
	 * not grow it (an rm) still passes (commit.c). */
	size_t state_doc_len;
	/* Held by whoever builds and publishes the next epoch (the reload
	 * thread, a commit through the mount, the sync applier: publish.h),
	 * so epochs follow one another and the diff is always against the
	 * one being replaced. May be held across a bounded etcd call and an fsync. */
	pthread_mutex_t publish_lock;
	struct world *world;             /* last good inputs; owned */
	/* Inputs another user can change, as the last load attempt found
	 * them (inputs_trust.h), for status; under publish_lock. Found
	 * while the inputs are read, never when status is rendered: a
	 * commit must not wait on the inputs' filesystem. */
	struct diag_list trust;
	uid_t uid;                       /* owner of every file */
	gid_t gid;
	/* The mount's device, to find the mount's files among a process's
	 * descriptors (procfd.h); 0 when /proc did not say. */
	dev_t dev;
	struct fuse_session *se;         /* set once mounted */
	struct reloader *reloader;       /* owned, through reload_hooks */
	struct syncd *sync;              /* --sync; owned, or NULL */
	/* What reloader and sync are reached through (envfs_hooks.h):
	 * borrowed from cmd_mount, set first, never changed. */
	const struct envfs_reload_hooks *reload_hooks;
	const struct envfs_sync_hooks *sync_hooks;
	/* Open write handles (ll_write.c), so the truncate the kernel sends
	 * for an O_TRUNC open is applied to that open, not committed.
	 * Guarded by wopen_lock. */
	pthread_mutex_t wopen_lock;
	struct open_file *wopens;
	/* Every handle the kernel holds (open files and directories), so
	 * those it never released are freed at exit (handles.h). */
	struct handles handles;
	/* -o ro fast path (ll_ops.c, ll_read.c): set at init when the kernel can do
	 * without OPEN / OPENDIR, which then get ENOSYS, so a warm `cat`
	 * costs no request at all. */
	bool zero_open;
	bool zero_opendir;
	/* The status bytes whose size the kernel was last told (getattr,
	 * lookup), which reads without an open then serve, so size and
	 * bytes agree. Guarded by live_lock. */
	pthread_mutex_t live_lock;
	struct blob *status_blob;        /* one reference, or NULL */
	struct blob *status_src;         /* one reference: the epoch status
	                                    text it extends, which names the
	                                    epoch without keeping it alive */
	/* What status appends after the epoch's text (status_parts.h):
	 * filled before the mount serves, read-only after. */
	struct status_parts status_parts;
	/* The last generations (history.h), noted under publish_lock by
	 * whoever publishes (history_note.h); read and changed under
	 * hist_lock, which is taken last (no other lock after it). */
	pthread_mutex_t hist_lock;
	struct history hist;
	char *hist_path;                 /* --state's STATE.history, or NULL:
	                                    history_store.h; owned */
	struct history_saver *hist_saver; /* its saver thread, or NULL
	                                     (history_store.h); owned */
};

/* Builds the daemon for opts and --state's resolved path state_path
 * (NULL: none): the --state overrides and history read, the inputs
 * watched (reload->make) and, with --sync, etcd's overrides read
 * (sync->make), then the first load published (reload->load_initial).
 * opts, state_path and both tables are borrowed for the daemon's whole
 * life. No thread is started. *out is caller-owned: envfs_free().
 * Returns 0; -EINVAL only when the --sync options are wrong
 * (a usage error); another negative errno for any other failure (one
 * that is -EINVAL where it happens, a state file that does not parse, is
 * -EIO here). Every failure is said in the log. */
int envfs_new(const struct mount_opts *opts, const char *state_path,
	      const struct envfs_reload_hooks *reload, const struct envfs_sync_hooks *sync,
	      struct envfs **out);
/* Starts the reload thread, then with --sync the sync threads. Only
 * after the fork that daemonizes (threads do not survive it). Returns 0
 * or a negative errno; envfs_stop stops what did start. */
int envfs_start(struct envfs *fs);
/* Stops the threads envfs_start started: the sync applier and watch
 * first (they feed the reload thread), then the reload thread, which
 * sends invalidations on fs->se, so before the unmount. -ETIMEDOUT when
 * the reload thread did not stop within RELOAD_STOP_MS (stuck on an
 * input that does not answer): fs must then never be freed, as that
 * thread may still read it. 0 otherwise, also when called again. */
int envfs_stop(struct envfs *fs);
/* Frees fs and all it owns, freeing whatever the kernel opened and never
 * released (handles.h): only once no request handler can run (the
 * request loop has returned). Stops the threads first if envfs_stop was
 * not called (frees nothing when that fails). Safe on NULL and on a
 * half-built daemon: envfs_new's one exit path frees its own. The FUSE
 * session is the caller's, and may outlive fs: libfuse hands its
 * userdata (fs) to the request handlers and init alone (envfs_ll_ops has
 * no destroy callback). */
void envfs_free(struct envfs *fs);

#endif
