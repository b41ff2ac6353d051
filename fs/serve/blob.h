/* blob: immutable, reference-counted bytes shared between the published
 * state and open files (a rendered view, a variable's "value\n", status).
 * A reader holding a reference keeps the bytes whole whatever a reload
 * publishes meanwhile. */
#ifndef ENVFS_BLOB_H
#define ENVFS_BLOB_H

#include <stdatomic.h>
#include <stddef.h>

#include "strbuf.h"

struct blob {
	atomic_long refs;
	size_t len;
	char *data;               /* inline below, or a buffer taken over
	                             from a strbuf (blob_take_sb) */
	char inline_data[];
};

/* Copies len bytes of data into a new blob holding one reference
 * (caller-owned, blob_unref()). Returns 0 or -ENOMEM. */
int blob_new(const void *data, size_t len, struct blob **out);
/* The same from a strbuf's contents (sb is left untouched). */
int blob_from_sb(const struct strbuf *sb, struct blob **out);
/* Takes sb's buffer over without copying it (a rendered view is megabytes:
 * a copy doubled the peak of every render); sb is left empty, also on
 * failure. *out holds one reference (caller's, blob_unref()). Returns 0 or
 * -ENOMEM. */
int blob_take_sb(struct strbuf *sb, struct blob **out);
/* Takes a reference; returns b. */
struct blob *blob_ref(struct blob *b);
/* Drops a reference; frees on the last. NULL is a no-op. */
void blob_unref(struct blob *b);
/* True when both hold the same bytes (NULL equals only NULL). */
int blob_equal(const struct blob *a, const struct blob *b);

#endif
