/* counters: how many FUSE requests of each kind the daemon has answered,
 * shown in `status` as `requests <op> <count>` lines.
 *
 *   $ grep '^requests' /mnt/primus/status
 *   requests lookup 14
 *   requests open 0
 *   requests read 3
 *
 * They make the caching policy observable: on a -o ro mount a warm `cat`
 * of a variable must not move any of them (tests/mount/requests.sh).
 * Requests about `status` itself are counted apart (`requests status`),
 * so reading the counters does not change them. Lock-free: one relaxed
 * atomic add per request. */
#ifndef ENVFS_COUNTERS_H
#define ENVFS_COUNTERS_H

#include <stdint.h>

#include "envfs_fuse.h"
#include "strbuf.h"

enum counter_op {
	OP_LOOKUP,
	OP_FORGET,        /* forget and batch forget, one per request */
	OP_GETATTR,
	OP_SETATTR,
	OP_OPENDIR,
	OP_READDIR,
	OP_READDIRPLUS,
	OP_RELEASEDIR,
	OP_OPEN,
	OP_READ,
	OP_WRITE,
	OP_FLUSH,
	OP_FSYNC,
	OP_RELEASE,
	OP_CREATE,
	OP_MKNOD,
	OP_UNLINK,
	OP_RENAME,
	OP_GETXATTR,
	OP_LISTXATTR,
	OP_SETXATTR,
	OP_REMOVEXATTR,
	OP_STATFS,
	OP_ACCESS,
	OP_READLINK,
	OP_COUNT
};

/* Counts one request of kind op. */
void counters_inc(enum counter_op op);
/* The same for a request about inode ino: those about `status` go to
 * the `requests status` line instead (see above). */
void counters_inc_ino(enum counter_op op, fuse_ino_t ino);
uint64_t counters_get(enum counter_op op);
/* Appends one `requests <op> <count>` line per kind, in enum order, then
 * `requests status <count>`. Returns 0 or -ENOMEM. */
int counters_render(struct strbuf *out);

#endif
