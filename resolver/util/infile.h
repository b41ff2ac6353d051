/* infile: opening an input file (config, spec, --inherit, --state).
 *
 * Inputs are read from regular files only (issue 14.8): a FIFO blocks
 * the reader until someone writes to it (forever, for the reload
 * thread), and opening a device may do something (a tape rewinds). The
 * path is checked before it is opened, opened non-blocking so a FIFO
 * swapped in between does not block, and checked again on the
 * descriptor. */
#ifndef ENVFS_INFILE_H
#define ENVFS_INFILE_H

#include <sys/types.h>

#include "diag.h"

/* A read-only, close-on-exec descriptor of path (following symlinks),
 * or a negative errno: -EINVAL when path is not a regular file, with
 * *kind (static; may be NULL) saying what it is: "a FIFO", "a directory",
 * "a character device", ... */
int infile_open(const char *path, const char **kind);
/* What a file of this mode is, as infile_open's *kind says it. */
const char *infile_kind(mode_t mode);
/* Adds the error for a path infile_open refused with -EINVAL ("not a
 * regular file (a FIFO); inputs are read from regular files only") and
 * returns -EINVAL, or -ENOMEM. */
int infile_refused(struct diag_list *diags, const char *path);

#endif
