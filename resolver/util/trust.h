/* trust: whether anyone but a given user could have written a file.
 *
 *   $ ls -ld /tmp /tmp/run.state.yaml
 *   drwxrwxrwt root   root   /tmp
 *   -rw-rw-rw- nobody nogroup /tmp/run.state.yaml     <- refused
 *
 * A file is the user's alone when it is owned by the user or root, is
 * writable by neither its group nor others, and every directory from
 * its own up to / is owned by the user or root and writable by no one
 * else unless the sticky bit keeps others from renaming what is not
 * theirs (the rules of OpenSSH's StrictModes), and every symlink on the
 * way to it sits in such a directory too. The --state file is
 * refused otherwise (its overrides land in the run's environment, and a
 * crafted LD_PRELOAD is a takeover); the config, specs and --inherit
 * files of a daemon running as root get a warning. */
#ifndef ENVFS_TRUST_H
#define ENVFS_TRUST_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "strbuf.h"

/* Checks path (absolute, without symlinks: a realpath) for user uid.
 * Returns 1 when only uid or root could have written it, 0 when someone
 * else could, with one phrase appended to why ("owned by uid 65534",
 * "writable by others (mode 0666)", "in directory /x, which is writable
 * by others"), or a negative errno (-ENOENT when missing_ok is false and
 * path does not exist; a missing file is judged by its directories). */
int trust_path(const char *path, uid_t uid, bool missing_ok, struct strbuf *why);
/* The same for a path whose directories are known to be uid's alone
 * (trust_path() said so of its directory): judged by its own st, which
 * must not be a symlink's. */
int trust_stat(const char *path, const struct stat *st, uid_t uid, struct strbuf *why);
/* Whether every symlink met on the way to path (absolute, or from the
 * working directory) sits in a directory only uid or root could change:
 * whoever can write a link's directory can point it anywhere, which a
 * realpath hides. 1 when so, 0 when not (why gets "symlink /x/l:
 * directory /x is writable by others (mode 0777)"), or a negative errno
 * (-ELOOP past 40 links). A missing part ends the walk with 1: the
 * loader reports it. */
int trust_links(const char *path, uid_t uid, struct strbuf *why);

#endif
