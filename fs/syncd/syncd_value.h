/* syncd_value: an override as etcd holds it (docs/SYNC.md), pure code.
 *
 *   key   PREFIX/runs/RUN/overrides/BACKEND/ARCH/NAME
 *   value '=' then the value's bytes (a set; "=" alone: the empty value),
 *         or the single byte '-' (an unset); no key: no override. */
#ifndef ENVFS_SYNCD_VALUE_H
#define ENVFS_SYNCD_VALUE_H

#include <stdbool.h>
#include <stddef.h>

/* Splits rel "BACKEND/ARCH/NAME" (the key after the overrides' prefix)
 * into parts, in buf (size bytes); *b, *a, *n point into buf. False when
 * it is not one of ours: not three non-empty parts, a directory name
 * outside [A-Za-z0-9_.-], a NAME that is not a variable's name, or
 * longer than buf. */
bool syncd_key_split(const char *rel, char *buf, size_t size, char **b, char **a, char **n);

/* *out (caller-owned, free()) gets the etcd value of an override of
 * value (len bytes; NULL: an unset), *outlen its length. 0 or -ENOMEM. */
int syncd_value_encode(const char *value, size_t len, char **out, size_t *outlen);

/* An etcd value as an override: *value (borrowed from v) NULL for an
 * unset. -EPROTO when it is not one (written by hand or by another
 * version; a NUL byte; longer than a state file takes). */
int syncd_value_decode(const char *v, size_t len, const char **value, size_t *vlen);

#endif
