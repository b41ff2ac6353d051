/* envfs: the running daemon, shared by the request handlers (fs/ops/ll_*.c),
 * the reload thread (reload.c) and the command (cmd_mount.c). */
#ifndef ENVFS_ENVFS_H
#define ENVFS_ENVFS_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "envfs_fuse.h"
#include "handles.h"
#include "mount_opts.h"
#include "resolve.h"
#include "epoch.h"
#include "tree.h"

struct reloader;
struct syncd;

struct envfs {
	const struct mount_opts *opts;   /* borrowed from cmd_mount */
	/* --state resolved once at start (state_lock.h), or NULL; borrowed
	 * from cmd_mount. */
	const char *state_path;
	struct tree *tree;               /* owned */
	struct epoch_slot state;              /* the published epoch */
	/* Per-run overrides (issue 5 writes them); every load passes them to
	 * resolve_all so they survive reloads. Guarded by ov_lock. */
	pthread_mutex_t ov_lock;
	struct override_set ov;
	/* Held by whoever builds and publishes the next epoch (the reload
	 * thread now; commits of overrides later), so epochs follow one
	 * another and the diff is always against the one being replaced. */
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
	struct reloader *reloader;       /* owned */
	struct syncd *sync;              /* --sync (syncd.h); owned, or NULL */
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
};

#endif
