/* history_file: the history kept beside --state (STATE.history), so that
 * a remount with the same state file still tells the earlier
 * generations. A line format this program reads without a JSON library
 * (docs/STATE.md):
 *
 *   primus-envfs-history 1
 *   gen 7 1764583331 120000000 write 1000 4242 =node0
 *   var =maxtext =gfx950 =NNODES 0 1 ="1" =runner =specs/base.yaml:3 1 =7 =override -
 *   end 1
 *
 * A string field is "-" (none) or "=" and its bytes, every byte outside
 * 0x21..0x7e and '%' written as %XX, so a line never holds a space,
 * a newline or a NUL of its own. A secret's values are "-", always: a
 * file that says otherwise is refused, as is anything else out of
 * place, with the line at fault. */
#ifndef ENVFS_HISTORY_FILE_H
#define ENVFS_HISTORY_FILE_H

#include <stddef.h>

#include "history.h"
#include "strbuf.h"

#define HISTORY_FILE_VERSION 1
/* The largest file read back: far above what 64 generations of a large
 * mount write, far below what would hurt to hold. */
#define HISTORY_FILE_MAX (256u << 20)

/* Appends the whole of h, oldest first, to out. 0 or -ENOMEM. */
int history_file_render(const struct history *h, struct strbuf *out);

/* Reads buf (len bytes) into h (empty, from history_init), keeping the
 * last h->cap generations. On a fault: -EPROTO, h left empty, and
 * *line the 1-based line at fault with a phrase in msg. -ENOMEM too. */
int history_file_parse(const char *buf, size_t len, struct history *h, size_t *line,
		       char *msg, size_t msglen);

#endif
