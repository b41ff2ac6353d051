/* flag_token: the tokens of a flag-list value (XLA_FLAGS) as the launch
 * reads them: split at spaces, tabs and newlines, each keyed by the text
 * before its first '='. The resolver's effective flags and diff's flags
 * of a value alone (a history generation) split alike. */
#ifndef ENVFS_FLAG_TOKEN_H
#define ENVFS_FLAG_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

/* The next token of [*t, end): false when only spaces are left; else
 * *tok and *len the token, *key_len the length of its key, and *t just
 * past it. */
bool flag_token_next(const char **t, const char *end, const char **tok, size_t *len,
		     size_t *key_len);

#endif
