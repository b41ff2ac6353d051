/* status_parts: the live sections of MOUNT/status that are not the
 * epoch's (the sync lines, the request counters). Each registers a
 * function before the mount serves; status_live appends them in
 * registration order on every read. So status needs to know none of
 * them: a part depends on status, never the other way round. */
#ifndef ENVFS_STATUS_PARTS_H
#define ENVFS_STATUS_PARTS_H

#include <stddef.h>

#include "strbuf.h"

/* Appends the part's lines to out; 0 or -ENOMEM. Called on any thread
 * that reads status, so it takes the locks its own data needs. */
typedef int (*status_part_fn)(void *arg, struct strbuf *out);

#define STATUS_MAX_PARTS 4

struct status_parts {
	struct {
		status_part_fn fn;
		void *arg;
	} v[STATUS_MAX_PARTS];
	size_t n;
};

/* Adds a part. Only before the mount serves (no lock: the FUSE threads
 * read the list and do not exist yet). -ENOSPC past STATUS_MAX_PARTS. */
int status_part_add(struct status_parts *p, status_part_fn fn, void *arg);

#endif
