/* spec_share: a loaded spec set with a reference count.
 *
 * The worlds of one daemon share it across reloads that did not touch the
 * specs, and every snapshot resolved from it holds a reference, so a
 * snapshot can point at the names, values and notes the specs already
 * hold instead of copying them (at 10,000 variables the copies were a
 * megabyte per generation). */
#ifndef ENVFS_SPEC_SHARE_H
#define ENVFS_SPEC_SHARE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "sha256.h"
#include "spec.h"

struct spec_share {
	atomic_long refs;
	struct spec_set *set;          /* owned */
	struct diag_list diags;        /* what loading set said */
	bool has_digest;               /* digest below was taken */
	uint8_t digest[SHA256_LEN];    /* specs_dir_digest() before loading */
};

/* Wraps set (taken over, also on failure: freed) with one reference and
 * a copy of diags. *out is the caller's reference (spec_share_unref()).
 * Returns 0 or -ENOMEM. */
int spec_share_new(struct spec_set *set, const struct diag_list *diags,
		   struct spec_share **out);
/* Takes a reference; returns sh (NULL stays NULL). */
struct spec_share *spec_share_ref(struct spec_share *sh);
/* Drops a reference; frees on the last. NULL is a no-op. */
void spec_share_unref(struct spec_share *sh);

#endif
