/* mount_opts: the mount command line,
 *   primus-envfs [INPUTS] [-f] [-s] [-d] [-o OPTS] MOUNTPOINT
 * Our own -o options are taken out; the rest go to libfuse untouched, so
 * it reports unknown ones itself. */
#ifndef ENVFS_MOUNT_OPTS_H
#define ENVFS_MOUNT_OPTS_H

#include <stdbool.h>

#include "envfs_fuse.h"
#include "inputs.h"

#define ENVFS_DEFAULT_TIMEOUT 3600.0

struct mount_opts {
	struct cli_inputs ci;        /* INPUTS; points into argv */
	const char *mountpoint;      /* points into argv */
	bool foreground;             /* -f (also implied by -d) */
	bool single_thread;          /* -s */
	bool ro;                     /* -o ro: read-only mount */
	bool allow_other;            /* -o allow_other (adds default_permissions) */
	bool noinval;                /* -o noinval: debug, no cache invalidation */
	double entry_timeout;        /* -o entry_timeout=S */
	double attr_timeout;         /* -o attr_timeout=S */
	unsigned spin_us;            /* -o spin=US: see loop.h */
	struct fuse_args fargs;      /* for fuse_session_new(); owned */
};

/* Parses argv (argv[0] is the program name). Prints one line to stderr
 * per problem and returns -EINVAL; 0 on success. Free with
 * mount_opts_release() either way. */
int mount_opts_parse(struct mount_opts *mo, int argc, char **argv);
void mount_opts_release(struct mount_opts *mo);

#endif
