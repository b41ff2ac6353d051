/* infile: opening an input file (config, spec, --inherit, --state).
 *
 * Inputs are read from regular files only: a FIFO blocks
 * the reader until someone writes to it (forever, for the reload
 * thread), and opening a device may do something (a tape rewinds). The
 * path is checked before it is opened, opened non-blocking so a FIFO
 * swapped in between does not block, and checked again on the
 * descriptor. */
#ifndef ENVFS_INFILE_H
#define ENVFS_INFILE_H

#include <stddef.h>
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
/* The whole of path, opened by infile_open: 0 with *buf NUL-terminated
 * after *len bytes, -EFBIG once more than max bytes are there (a regular
 * file's size is checked before anything is read; a file that grows
 * while read is cut off at the limit), -EINVAL when path is not a
 * regular file, another negative errno when it cannot be opened or read.
 * *buf is caller-owned (free()); on error it is left alone. */
int infile_read(const char *path, size_t max, char **buf, size_t *len);
/* infile_read on an open descriptor (not closed here), for a caller that
 * tells open errors from read errors or reads something other than a
 * path. The size check applies only when fd is a regular file. */
int infile_read_fd(int fd, size_t max, char **buf, size_t *len);

#endif
