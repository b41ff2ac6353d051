/* view_digest: the digest view of a snapshot, apart from the other views
 * so that the run record (run_record.c), which the record view renders,
 * takes it without going through the view table. */
#ifndef ENVFS_VIEW_DIGEST_H
#define ENVFS_VIEW_DIGEST_H

#include <stdbool.h>
#include <string.h>

#include "snapshot.h"
#include "strbuf.h"

/* Whether v is in the environ block: exported and set, and no NUL in its
 * value (an environ string cannot hold one; such a value, which the
 * resolver reports, is left out rather than cut short). */
static inline bool view_in_environ(const struct snap_var *v)
{
	return v->set && v->exported && v->value &&
	       !(v->value_len && memchr(v->value, '\0', v->value_len));
}

/* What the digest hashes in place of a secret's value. */
#define VIEW_SECRET_MARKER "<redacted>"

/* Appends the digest line: the SHA-256, in hex and a newline, of the
 * environ block with every secret's value replaced by VIEW_SECRET_MARKER
 * (digest is readable by everyone, and a hash over values all readable
 * but one is a dictionary attack on that one). 0 or -ENOMEM. */
int view_digest(const struct snapshot *s, struct strbuf *out);

#endif
