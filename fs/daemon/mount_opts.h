/* mount_opts: the mount's command line,
 *   primus-envfs [INPUTS] [-f] [-s] [-d] [-o OPTS] [SOURCE] MOUNTPOINT
 * and mount(8)'s, for mount.fuse.primus-envfs,
 *   mount.fuse.primus-envfs SOURCE MOUNTPOINT [-sfnvrw] [-o OPTS]
 * The options are taken by getopt_long, the -o lists by libfuse's
 * fuse_opt_parse: every INPUT has a mount-option name (config=FILE, ...),
 * our own options are taken out, fstab's are dropped, and the rest go to
 * libfuse untouched, so it reports unknown ones itself. */
#ifndef ENVFS_MOUNT_OPTS_H
#define ENVFS_MOUNT_OPTS_H

#include <stdbool.h>

#include "envfs_fuse.h"
#include "inputs.h"
#include "sync_opts.h"

#define ENVFS_DEFAULT_TIMEOUT 3600.0
/* -o spin=US: the request loop's spin after a request (fs/mount/loop.c),
 * its default and its bound. */
#define LOOP_DEFAULT_SPIN_US 50
#define LOOP_MAX_SPIN_US 10000

struct mount_opts {
	struct cli_inputs ci;        /* INPUTS, from options and -o */
	struct sync_opts so;         /* --sync and its companions (sync_opts.h) */
	const char *mountpoint;      /* points into argv */
	bool foreground;             /* -f (also implied by -d) */
	bool single_thread;          /* -s */
	bool fake;                   /* mount(8)'s -f: load, do not mount */
	bool help;                   /* -h: the help was printed */
	bool ro;                     /* -o ro: read-only mount */
	bool allow_other;            /* -o allow_other (adds default_permissions) */
	int noinval;                 /* -o noinval: debug, no cache invalidation */
	double entry_timeout;        /* -o entry_timeout=S */
	double attr_timeout;         /* -o attr_timeout=S */
	unsigned spin_us;            /* -o spin=US: see loop.h */
	unsigned history;            /* -o history=N: generations kept (0: none) */
	struct fuse_args fargs;      /* for fuse_session_new(); owned */
};

/* Parses argv (argv[0] is the program name), then scrubs every --env and
 * -o env= value from argv (inputs_scrub_env_arg): mo holds copies. Prints
 * one line per problem and returns -EINVAL (exit 64); 0 on success. Free
 * with mount_opts_release() either way. */
int mount_opts_parse(struct mount_opts *mo, int argc, char **argv, bool as_helper);
void mount_opts_release(struct mount_opts *mo);

#endif
