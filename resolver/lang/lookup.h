/* lookup: how templates and conditions ask for another variable's value. */
#ifndef ENVFS_LOOKUP_H
#define ENVFS_LOOKUP_H

#include <stddef.h>

/* Returns 1 and sets *val and *val_len (borrowed, valid until the evaluation
 * ends) when NAME is set; 0 when it is unset; -ELOOP when NAME is part of a
 * reference cycle (the caller leaves that reference unexpanded / unset);
 * another negative errno on failure. */
typedef int (*envfs_lookup_fn)(void *ctx, const char *name, size_t name_len,
			       const char **val, size_t *val_len);

#endif
