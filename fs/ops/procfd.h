/* procfd: what /proc says about the descriptors a process holds.
 *
 * FLUSH comes with every close() of a descriptor, and the kernel does not
 * say whether it was the last one of the open (RELEASE, which does, comes
 * after close() has returned). A shell's `> FILE` opens, dup2s the file
 * onto stdout and closes the original before anything is written, so a
 * truncation committed at that first FLUSH would show readers an empty
 * value for a moment; one committed only at RELEASE is not durable when
 * close() returns. The closing process's fdinfo answers the
 * question: does it still hold a descriptor of this file, opened the same
 * way? Reading it costs no request to the mount itself. */
#ifndef ENVFS_PROCFD_H
#define ENVFS_PROCFD_H

#include <stdbool.h>
#include <sys/types.h>

/* The device of the filesystem mounted at mountpoint (the top one when
 * several are stacked), from /proc/self/mountinfo. Returns 0 or a
 * negative errno (-ENOENT: nothing is mounted there). */
int procfd_mount_dev(const char *mountpoint, dev_t *dev);
/* The type ("fuse.primus-envfs") of the top mount at path (absolute, as
 * mountinfo lists it; nothing at path is touched, so a dead mount can be
 * asked about) into type, cut to size. 0, -ENOENT, or a negative errno. */
int procfd_mount_type(const char *path, char *type, size_t size);

/* 1 when process pid holds a descriptor open on inode ino of the
 * filesystem on dev with access mode accmode (O_RDONLY, O_WRONLY or
 * O_RDWR), 0 when it holds none, or a negative errno when /proc cannot
 * tell (the process is gone, in another pid namespace, or not ours to
 * inspect). */
int procfd_holds(pid_t pid, dev_t dev, unsigned long long ino, int accmode);

#endif
