/* history_decode: a mount's history file (history.h's JSON) read back. */
#ifndef ENVFS_HISTORY_DECODE_H
#define ENVFS_HISTORY_DECODE_H

#include <stddef.h>

#include "history.h"

/* Decodes the n bytes at p into *out, oldest first, and the mount's bound
 * into *keep. Returns 0, -EPROTO with one line in msg, or -ENOMEM. *out
 * is caller-owned: hist_gens_free(*out, *nout). */
int history_decode(const char *p, size_t n, struct hist_gen **out, size_t *nout,
		   size_t *keep, char *msg, size_t msglen);

#endif
