/* state_lock: taking the --state file for the daemon's life.
 *
 *   $ primus-envfs --state run.state.yaml /mnt/a
 *   $ primus-envfs --state run.state.yaml /mnt/b
 *   primus-envfs: --state run.state.yaml is in use by another primus-envfs (pid 4711); ...
 *
 * At start, before anything is loaded or mounted:
 * - the path is resolved once (symlinks followed, also a dangling link
 *   whose target does not exist yet), and every save replaces the file it
 *   resolved to, so a link to persistent storage stays a link;
 * - what is there must be a regular file (or nothing, in a directory that
 *   exists): a device, a FIFO or a directory is refused;
 * - the file and every directory above it must be the daemon user's (or
 *   root's) alone (trust.h): a state file someone else could have written
 *   is refused, since its overrides become the run's environment;
 * - an exclusive lock is taken on FILE.lock beside it (flock, so it
 *   survives the daemonizing fork and goes with the last descriptor, also
 *   on SIGKILL), and the lock file holds the daemon's PID, which a second
 *   daemon names when it is refused (after waiting up to 3 s for a
 *   daemon that was just unmounted and is still saving and exiting:
 *   `fusermount3 -u` returns before it has). Each daemon rewrites the whole file
 *   from its own memory, so two on one file would lose each other's
 *   writes. */
#ifndef ENVFS_STATE_LOCK_H
#define ENVFS_STATE_LOCK_H

struct state_lock {
	char *path;                  /* the resolved state file; owned */
	int fd;                      /* the locked FILE.lock, or -1 */
};

/* Resolves, checks and locks given (the --state argument). Prints one
 * line to stderr naming the problem and returns a negative errno on any
 * refusal. Release with state_lock_release() either way. */
int state_lock_take(const char *given, struct state_lock *out);
/* Writes the calling process's PID into the lock file (after the
 * daemonizing fork, which changed it). */
void state_lock_note_pid(struct state_lock *l);
void state_lock_release(struct state_lock *l);

#endif
