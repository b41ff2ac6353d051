/* daemonize: detach the mounted daemon from the terminal, and tell the
 * shell only once the mount is ready.
 *
 * Ours rather than libfuse's fuse_daemonize() for the one reason that
 * matters to a caller: that one reports success before the daemon has
 * started its threads, so a start that fails after the fork would exit 0
 * and leave nothing mounted. */
#ifndef ENVFS_DAEMONIZE_H
#define ENVFS_DAEMONIZE_H

#include <stdbool.h>

/* Without foreground: forks, and the parent waits for
 * envfs_daemonize_done() in the child: it exits 0 then, or 2 when the
 * child exits first (its reasons are on the terminal: stdio stays until
 * done). The child gets a session of its own. *ready is the fd to hand to
 * envfs_daemonize_done(), -1 in the foreground. The directory stays:
 * inputs named relative to it are reloaded from there. Returns 0 in the
 * process that goes on, or a negative errno. */
int envfs_daemonize_begin(bool foreground, int *ready);

/* The daemon is up: its messages go to syslog (log.h), stdio goes to
 * /dev/null (the terminal may go away) and the parent is released. Closes ready; nothing to do for -1.
 * Returns 0 or a negative errno (the parent then exits 2). */
int envfs_daemonize_done(int ready);

#endif
