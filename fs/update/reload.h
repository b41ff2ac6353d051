/* reload: loading the inputs into an epoch, and the thread that watches
 * them: a change shows within 100 ms, and an open keeps what it read.
 *
 * inotify watches the directories holding the config, the specs and each
 * --inherit file, filtered by name, so an editor that writes a new file
 * and renames it over the old one is seen like an in-place write. Events
 * are debounced briefly, the inputs re-resolved, the new epoch published,
 * and the kernel told precisely what went stale. A load that fails keeps
 * the last good resolution; status and diagnostics say why. */
#ifndef ENVFS_RELOAD_H
#define ENVFS_RELOAD_H

#include <time.h>

#include "envfs.h"
#include "inval.h"

/* Debounce: a burst of events (truncate, write, close) is one reload.
 * Quiet gap and cap keep a change visible well within the 100 ms a change
 * may take to show. */
#define RELOAD_QUIET_MS 5
#define RELOAD_MAX_DEBOUNCE_MS 20
/* An input written in place is not read before its writer closes it (a
 * half-written config would make names vanish for a moment),
 * unless the writer keeps it open this long without changing anything. */
#define RELOAD_MAX_WRITER_MS 1000
/* ... or writers keep an input open, changing it, this long in all: a
 * process that holds the config open and appends to it for ever does not
 * keep the mount from reloading (the load then takes what the file holds,
 * said in the log). */
#define RELOAD_MAX_BUSY_MS 5000

/* The first load, before mounting. On success publishes generation 1 into
 * fs->state (initialising it) and returns 0. On failure prints one line
 * per error diagnostic to stderr and returns a negative errno. */
int envfs_load_initial(struct envfs *fs);

struct load;

/* Loads the inputs again and publishes the result (or the failure's
 * reason), sending invalidations unless -o noinval. Runs on the reload
 * thread; never call it from a request handler. Returns 0 when the inputs
 * loaded, else the load's negative errno (the old resolution stays, and
 * a reason other than the last attempt's is said in the log, log.h).
 * valid, when not NULL, is asked after the inputs were read and before
 * anything is published: false drops the attempt (an input changed
 * while it was read) and returns -EAGAIN. */
int envfs_reload(struct envfs *fs, bool (*valid)(void *arg), void *arg);

struct reloader;

/* Sets up the inotify watches (before the first load, so no edit between
 * load and watch is missed). *out is caller-owned: reloader_free(). */
int reloader_new(struct envfs *fs, struct reloader **out);
/* Starts the thread; call after fuse_daemonize (threads do not survive
 * its fork). Returns 0 or a negative errno. */
int reloader_start(struct reloader *r);
/* Hands invalidations to the thread to send (for changes published from
 * a request handler). Takes l's contents; l is left empty. */
int reloader_queue(struct reloader *r, struct inval_list *l);
/* The same, then waits until the thread has sent them (at most max_ms),
 * for a commit whose close() must not return before stale caches are
 * dropped. The caller must hold nothing the kernel's invalidation could
 * wait on: no request in flight of its own but FLUSH. Returns 0, or
 * -ETIMEDOUT (they are still sent later). */
int reloader_queue_wait(struct reloader *r, struct inval_list *l, int max_ms);
/* How long reloader_free waits for the thread: SIGTERM must end the
 * daemon within 2 s, whatever an input does. */
#define RELOAD_STOP_MS 1000

/* Stops and joins the thread (if started) and frees r; NULL is a no-op.
 * -ETIMEDOUT when the thread did not stop within RELOAD_STOP_MS (stuck
 * reading an input that never answers, such as a hung file server):
 * then r and everything the thread uses (the envfs, its session) must be
 * left alone, and the process should end. Else 0. */
int reloader_free(struct reloader *r);

/* The functions above as fs/daemon calls them (envfs_hooks.h): the
 * mount hands this table to envfs_new. */
extern const struct envfs_reload_hooks reload_hooks;

/* CLOCK_REALTIME ms from now, as the timed pthread waits take it (also
 * syncd's). */
struct timespec reload_deadline_in(int ms);

#endif
