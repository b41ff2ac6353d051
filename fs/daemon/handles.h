/* handles: every file handle (fi->fh) the kernel holds.
 *
 * The kernel sends RELEASE and RELEASEDIR in the background, after
 * close() has returned, and not at all once the daemon stops reading
 * requests: a SIGTERM or an unmount while a directory listing or a file
 * is open leaves its handle behind. Each handle is registered here from
 * its open until its release, and cmd_mount frees whatever is left once
 * the session loop has ended (and joined its workers), so no exit leaks
 * the epochs, buffers and pending writes that handles own.
 *
 * The registry is an intrusive doubly linked list under one mutex: the
 * handle embeds its struct handle, so adding and removing cost no
 * allocation and cannot fail. */
#ifndef ENVFS_HANDLES_H
#define ENVFS_HANDLES_H

#include <pthread.h>
#include <stddef.h>

struct handle {
	struct handle *prev, *next;      /* in the registry while open */
	/* Frees the object that embeds the handle (never commits
	 * anything: by then nobody is left to learn of a failure). */
	void (*release)(struct handle *h);
};

struct handles {
	pthread_mutex_t lock;
	struct handle head;              /* sentinel of a circular list */
	size_t n;                        /* registered handles */
};

void handles_init(struct handles *hs);
/* Registers h, which must not be registered; release is h's destructor. */
void handles_add(struct handles *hs, struct handle *h, void (*release)(struct handle *));
/* Unregisters h; a handle that is not registered is left alone. */
void handles_del(struct handles *hs, struct handle *h);
/* The number of handles registered now. */
size_t handles_count(struct handles *hs);
/* Releases every handle still registered and destroys the registry.
 * Only when no request handler can run any more. Returns how many there
 * were. */
size_t handles_release_all(struct handles *hs);

#endif
