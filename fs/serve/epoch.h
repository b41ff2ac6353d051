/* epoch: what the mount serves right now.
 *
 * An epoch is one published resolution: a reference to every directory's
 * snapshot, the views rendered from them (lazily, once), and the status and
 * diagnostics text of the load that made it. Epochs are immutable once
 * published (the lazily filled view slots are set once, atomically), so
 * request handlers read them without locks; a reload builds the next epoch
 * and swaps the pointer.
 *
 * A request handler brackets its work with epoch_enter()/epoch_leave(),
 * replying to the kernel before it leaves. The reload thread waits for the
 * old epoch to have no such handler before it sends invalidations, so an
 * old answer can never reach the kernel after the invalidation that was
 * meant to drop it. */
#ifndef ENVFS_EPOCH_H
#define ENVFS_EPOCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "blob.h"
#include "resolve.h"
#include "sha256.h"
#include "snapshot.h"
#include "view.h"

/* Views no larger than this stay rendered for the epoch's life; larger
 * ones are rendered per open (and per read-through on -o ro) and only
 * their size and checksum are kept. At 10,000 variables the views are
 * 3.1 MB per epoch and a reload holds two epochs, while a render costs a
 * few milliseconds and big views (explain above all) are rarely read. At
 * 2,000 variables every view but explain stays under the limit, so the
 * common reads keep their shared bytes. */
#define VIEW_KEEP_MAX (128 * 1024)

/* What is known of a view without its bytes. */
struct view_meta {
	size_t len;
	uint8_t sum[SHA256_LEN];      /* SHA-256 of the bytes */
};

struct epoch_dir {
	struct snapshot *snap;                    /* one reference */
	_Atomic(struct blob *) views[VIEW_COUNT]; /* kept renders, set once */
	/* -o ro: a large view some reader is going through (reads come
	 * without a handle, one chunk at a time); dropped when a read
	 * reaches its end. A reader that stops before the end (head -c)
	 * leaves it until the epoch goes: at most one render per view and
	 * directory, as before large views stopped being kept. Guarded by a
	 * lock in epoch_view.c. */
	struct blob *reading[VIEW_COUNT];
	/* meta[k] is valid once meta_ready[k] is set (set once). */
	struct view_meta meta[VIEW_COUNT];
	atomic_int meta_ready[VIEW_COUNT];        /* 0 no, 1 being set, 2 yes */
};

/* The host entry of one backend: env/<backend>/host, a
 * symlink to the arch directory a launch on this node uses. */
struct epoch_host {
	char *backend;               /* owned */
	char *arch;                  /* owned; NULL: no host entry */
	char *why;                   /* owned; why there is none, or NULL */
};

struct epoch {
	atomic_long refs;
	atomic_long busy;            /* request handlers inside this epoch */
	struct epoch_dir *dirs;      /* sorted by backend, then arch */
	size_t ndirs;
	uint64_t generation;         /* grows with every change under env/ */
	struct timespec changed;     /* when generation last grew: the mtime
	                                of everything under env/ */
	struct timespec loaded;      /* the load attempt that made this epoch */
	struct blob *status;         /* set before publishing; owned */
	struct blob *diagnostics;
	char *last_error;            /* why the latest load failed, or NULL;
	                                owned (a commit carries it over) */
	struct epoch_host *hosts;    /* one per backend, sorted; owned */
	size_t nhosts;
};

/* A new epoch over r's directories (one snapshot reference each; r stays
 * the caller's), with digests rendered. *out holds one reference. */
int epoch_from_resolution(const struct resolution *r, struct epoch **out);
/* A new epoch sharing src's directories and rendered views, for a failed
 * load that keeps serving the last good resolution. */
int epoch_clone_dirs(const struct epoch *src, struct epoch **out);
/* A new epoch sharing src's directories and rendered views but for the
 * one of snap's backend/arch, which becomes snap (the epoch takes its own
 * reference) with its digest rendered: an override commit re-resolves one
 * directory. Generation and times are src's. -ENOENT when src has no such
 * directory. */
int epoch_with_dir(const struct epoch *src, struct snapshot *snap, struct epoch **out);
struct epoch *epoch_ref(struct epoch *e);
void epoch_unref(struct epoch *e);
/* A directory of no epoch, for snap alone (the epoch takes its own
 * reference): where a view's inode renders its bytes once the published
 * epochs have moved on (tree.h). *out is caller-owned: epoch_dir_free(). */
int epoch_dir_alone(struct snapshot *snap, struct epoch_dir **out);
void epoch_dir_free(struct epoch_dir *d);

/* True when v has a file in its directory: set, and named so that a
 * directory can hold it. A name with a '/', "." or "..", an empty one, one
 * longer than NAME_MAX and one named like a view is reachable through the
 * views only: the kernel refuses a listing that holds such
 * a name with EIO, and "." or ".." would shadow the dot entries. */
bool epoch_var_visible(const struct snap_var *v);

/* Fills e's host entries from w, one per backend e has (world_host_arch;
 * none where an arch directory is named host). Returns 0 or -ENOMEM. */
int epoch_set_hosts(struct epoch *e, const struct world *w);
/* Copies src's host entries into e (a clone, a commit). */
int epoch_copy_hosts(struct epoch *e, const struct epoch *src);
/* The target of backend's host entry (borrowed), or NULL with *why
 * (borrowed, may be NULL) saying why there is none. */
const char *epoch_host(const struct epoch *e, const char *backend, const char **why);

/* Borrowed directory, or NULL. */
struct epoch_dir *epoch_find_dir(const struct epoch *e, const char *backend,
				 const char *arch);
/* True when some directory belongs to backend. */
bool epoch_has_backend(const struct epoch *e, const char *backend);
/* The view's bytes: the kept render, or (for a large view) a fresh one.
 * *out holds a reference either way (caller's, blob_unref()). Records the
 * view's meta. Returns 0 or a negative errno. */
int epoch_view(struct epoch_dir *d, enum view_kind kind, struct blob **out);
/* The view's size and checksum, rendering it (and dropping the bytes of a
 * large one) when not known yet. *out is borrowed for d's life. */
int epoch_view_meta(struct epoch_dir *d, enum view_kind kind,
		    const struct view_meta **out);
/* The view's meta when already known, else NULL (never renders). */
const struct view_meta *epoch_view_meta_known(struct epoch_dir *d, enum view_kind kind);
/* Whether two views' bytes are equal, by their metas. */
bool view_meta_equal(const struct view_meta *a, const struct view_meta *b);
/* The bytes of the view for a handle-less read at off (-o ro): like
 * epoch_view, but a large view is rendered once per read-through and
 * shared until epoch_view_read_end(). *out is the caller's reference. */
int epoch_view_read(struct epoch_dir *d, enum view_kind kind, struct blob **out);
/* A handle-less read of b ended at end: at the end of the bytes, the
 * read-through is over and its render is dropped. */
void epoch_view_read_end(struct epoch_dir *d, enum view_kind kind,
			 const struct blob *b, size_t end);
/* Waits until no request handler is inside e (at most max_ms). */
void epoch_wait_idle(struct epoch *e, int max_ms);

/* The published epoch: one pointer, swapped under a lock by the reload
 * and commit paths, read by every request handler. */
struct epoch_slot {
	pthread_mutex_t lock;
	struct epoch *cur;           /* one reference; never NULL once started */
};

void epoch_slot_init(struct epoch_slot *s, struct epoch *first);  /* takes first's ref */
void epoch_slot_release(struct epoch_slot *s);
/* The current epoch with a reference and the handler mark; pair with
 * epoch_leave() after replying. */
struct epoch *epoch_enter(struct epoch_slot *s);
void epoch_leave(struct epoch *e);
/* A reference to the current epoch, without the handler mark. */
struct epoch *epoch_current(struct epoch_slot *s);
/* Publishes e (takes its reference); returns the previous epoch with the
 * state's reference, for the caller to diff and unref. */
struct epoch *epoch_publish(struct epoch_slot *s, struct epoch *e);

#endif
