/* history_disk: reading the history file beside --state (STATE.history,
 * docs/STATE.md) as both the mount (fs/daemon/history_store.c) and the
 * offline set and unset (fs/cli/cmd_override.c) read it: a regular file,
 * refused when someone else could have written it, of at most
 * HISTORY_FILE_MAX bytes. */
#ifndef ENVFS_HISTORY_DISK_H
#define ENVFS_HISTORY_DISK_H

#include <stddef.h>

#include "strbuf.h"

/* Reads path into *buf (caller-owned, free()) and *len. -ENOENT when
 * there is none; -EPERM when someone else could have written it, -EINVAL
 * when it is no regular file, -EFBIG when too large (why says how, for
 * those); another negative errno when it cannot be read. */
int history_disk_read(const char *path, char **buf, size_t *len, struct strbuf *why);

#endif
