/* fdio: writing a buffer to a descriptor whole. write(2) may take part
 * of a buffer (a pipe, a signal); every output path of the program wants
 * all of it or an error. */
#ifndef ENVFS_FDIO_H
#define ENVFS_FDIO_H

#include <stddef.h>

/* Writes the n bytes at p to fd, again after a short write or EINTR:
 * 0, or the negative errno of the write that failed (what came before it
 * may have been written). */
int fd_write_all(int fd, const void *p, size_t n);

#endif
