/* Per-opcode request counters; see counters.h. */
#include <stdatomic.h>

#include "counters.h"
#include "tree.h"

static const char *const op_names[OP_COUNT] = {
	[OP_LOOKUP] = "lookup",
	[OP_FORGET] = "forget",
	[OP_GETATTR] = "getattr",
	[OP_SETATTR] = "setattr",
	[OP_OPENDIR] = "opendir",
	[OP_READDIR] = "readdir",
	[OP_READDIRPLUS] = "readdirplus",
	[OP_RELEASEDIR] = "releasedir",
	[OP_OPEN] = "open",
	[OP_READ] = "read",
	[OP_WRITE] = "write",
	[OP_FLUSH] = "flush",
	[OP_FSYNC] = "fsync",
	[OP_RELEASE] = "release",
	[OP_CREATE] = "create",
	[OP_MKNOD] = "mknod",
	[OP_UNLINK] = "unlink",
	[OP_RENAME] = "rename",
	[OP_GETXATTR] = "getxattr",
	[OP_LISTXATTR] = "listxattr",
	[OP_SETXATTR] = "setxattr",
	[OP_REMOVEXATTR] = "removexattr",
	[OP_STATFS] = "statfs",
	[OP_ACCESS] = "access",
	[OP_READLINK] = "readlink",
};

/* One process serves one mount, so the counters are process-wide. Each
 * sits on its own cache line: the reader threads of a busy mount would
 * otherwise bounce one line between cores on every request. */
static struct {
	_Alignas(64) atomic_uint_fast64_t n;
} counts[OP_COUNT], status_count;

void counters_inc(enum counter_op op)
{
	atomic_fetch_add_explicit(&counts[op].n, 1, memory_order_relaxed);
}

void counters_inc_ino(enum counter_op op, fuse_ino_t ino)
{
	if (ino == INO_STATUS)
		atomic_fetch_add_explicit(&status_count.n, 1, memory_order_relaxed);
	else
		counters_inc(op);
}

uint64_t counters_get(enum counter_op op)
{
	return atomic_load_explicit(&counts[op].n, memory_order_relaxed);
}

int counters_render(struct strbuf *out)
{
	int op, err = 0;

	for (op = 0; op < OP_COUNT && err == 0; op++)
		err = sb_addf(out, "requests %s %llu\n", op_names[op],
			      (unsigned long long)counters_get(op));
	if (err == 0)
		err = sb_addf(out, "requests status %llu\n", (unsigned long long)
			      atomic_load_explicit(&status_count.n, memory_order_relaxed));
	return err;
}
