/* daemonize: detach the mounted daemon from the terminal. */
#ifndef ENVFS_DAEMONIZE_H
#define ENVFS_DAEMONIZE_H

#include <stdbool.h>

/* Without foreground: forks; the parent waits until the child has
 * detached (new session, stdio on /dev/null) and exits 0, or 1 when the
 * child failed first, so the shell gets its prompt back with the mount
 * usable. The directory stays: inputs named relative to where the daemon
 * started are reloaded from there. Returns 0 in the process that goes on,
 * or a negative errno.
 *
 * Ours rather than libfuse's fuse_daemonize(): that one lives in the
 * object file that also holds fuse_main(), which would pull libfuse's
 * high-level API and its dlopen()ed modules into a static executable. */
int envfs_daemonize(bool foreground);

#endif
