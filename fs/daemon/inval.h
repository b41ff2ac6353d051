/* inval: precise kernel cache invalidation after the served state changes.
 *
 * The mount answers with long entry/attribute timeouts and keeps the page
 * cache across opens, so after a reload the kernel must be told exactly
 * which names and inodes went stale: changed files (data and attributes),
 * removed names and added names (negative dentries). Only nodes the kernel
 * holds (lookup count > 0) are worth a message.
 *
 * Notifications must not be sent from inside a request handler (the kernel
 * may wait on the very request being handled: libfuse
 * doc/README.notifications), so a list is computed anywhere and sent by the
 * reload thread. */
#ifndef ENVFS_INVAL_H
#define ENVFS_INVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "envfs.h"
#include "epoch.h"

struct inval_item {
	fuse_ino_t ino;       /* inode to invalidate (parent == 0) */
	fuse_ino_t parent;    /* != 0: drop the entry name in parent */
	char *name;           /* owned; entry items only */
	size_t name_len;
};

struct inval_list {
	struct inval_item *v;
	size_t n, cap;
	bool changed;         /* something under env/ differs */
};

#define INVAL_LIST_INIT { NULL, 0, 0, false }

/* Appends to out what the kernel may hold stale when new replaces old,
 * and sets out->changed when anything under env/ differs. Renders views
 * of both epochs only where the kernel holds the view's node. Returns 0
 * or -ENOMEM.
 *
 * Which nodes the kernel holds is only known once no request handler
 * can still answer from old: a lookup in old counts its reference just
 * before it replies, and would be missed (its old inode kept for good,
 * tree.h). So: fs NULL before publishing (out->changed only, for the
 * generation; nothing is appended), and with fs after new is published
 * and epoch_wait_idle(old) returned. */
int inval_diff(struct envfs *fs, struct epoch *old, struct epoch *new,
	       struct inval_list *out);
int inval_add_inode(struct inval_list *l, fuse_ino_t ino);
int inval_add_entry(struct inval_list *l, fuse_ino_t parent, const char *name,
		    size_t name_len);
/* Sends every item; an inode or name the kernel no longer has (-ENOENT)
 * and a session being unmounted (-EBADF, -ENODEV) are expected. Returns
 * the number of unexpected failures (reported in the log). */
int inval_send(struct fuse_session *se, const struct inval_list *l);
void inval_list_release(struct inval_list *l);

#endif
