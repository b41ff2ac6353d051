/* commit: applying a change written through the mount (docs/STATE.md).
 *
 *   $ echo 5 > /mnt/primus/env/maxtext/gfx950/XLA_GPU_AUTOTUNE_LEVEL
 *   $ grep -o 'autotune_level=.' /mnt/primus/env/maxtext/gfx950/XLA_FLAGS
 *   autotune_level=5
 *
 * One commit updates fs->ov, re-resolves the one <backend>/<arch> against
 * the kept world (derived values follow: templates see final values),
 * writes --state (atomically, before returning), and publishes the next
 * epoch. Either all of that happens or none of it: a failure rolls the
 * overrides back and leaves the state file and the epoch as they were.
 *
 * who is the request's writer, for the override's stamp and the
 * history (NULL: not known).
 *
 * Callers are request handlers. They must not be inside epoch_enter()
 * (the commit waits for the old epoch's handlers to finish). *inval gets
 * what the kernel may hold stale; hand it to the reload thread
 * (reloader_queue), never send it from the handler. */
#ifndef ENVFS_COMMIT_H
#define ENVFS_COMMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "envfs.h"
#include "history_note.h"
#include "inval.h"

/* Overrides name with value (len bytes; no NUL, at most
 * STATEFILE_VALUE_MAX: the caller checks). With --state or --sync,
 * -EFBIG when the overrides would no longer fit the --state document's
 * bound (STATEFILE_WRITE_MAX), checked before anything is shared; so
 * for every change that adds to them. With --sync, a change whose
 * compare fails because another node changed a key first is computed
 * again from what etcd holds (an mv moves the value it then reads). */
int commit_set(struct envfs *fs, const struct hist_writer *who, const char *backend,
	       const char *arch, const char *name, const char *value, size_t len, bool excl,
	       struct inval_list *inval);
/* Creates name with the empty value unless it is visible: then *created
 * is false and nothing changes (-EEXIST instead when excl). private: a
 * file created with a mode that grants nothing to others, whose variable
 * is a secret. With --sync the creation is this node's alone (neither in
 * etcd nor in --state) until the open's first commit_set, whose excl
 * (the O_EXCL of the create) then asks that no other node has the name:
 * an empty value is never shared in passing. */
int commit_create(struct envfs *fs, const struct hist_writer *who, const char *backend,
		  const char *arch, const char *name, bool excl, bool private, bool *created,
		  struct inval_list *inval);
/* --sync: after the first commit_set of a created file failed, drops the
 * empty override the create made, unless etcd has the name (another
 * node's value): the creation is then applied nowhere either. */
int commit_uncreate(struct envfs *fs, const struct hist_writer *who, const char *backend,
		    const char *arch, const char *name, struct inval_list *inval);
/* rm: drops name's override, or records an unset when it has none.
 * -ENOENT when name is not visible. */
int commit_remove(struct envfs *fs, const struct hist_writer *who, const char *backend,
		  const char *arch, const char *name, struct inval_list *inval);
/* mv from to within one directory: to gets from's value, and is private
 * when from was a secret; from is removed as by commit_remove. -ENOENT
 * when from is not visible; -EEXIST when noreplace and to is. */
int commit_move(struct envfs *fs, const struct hist_writer *who, const char *backend,
		const char *arch, const char *from, const char *to, bool noreplace,
		struct inval_list *inval);
/* truncate(2) on a path: the file ("value\n") cut to size, one trailing
 * newline stripped. -EINVAL when size would extend it (a NUL byte). */
int commit_truncate(struct envfs *fs, const struct hist_writer *who, const char *backend,
		    const char *arch, const char *name, off_t size, struct inval_list *inval);

/* chmod between 0600 and 0644: makes name's override private (a secret)
 * or not. -EPERM when name has no override to carry the flag, or stays
 * secret for another reason; 0 when it already is as asked. */
int commit_privacy(struct envfs *fs, const struct hist_writer *who, const char *backend,
		   const char *arch, const char *name, bool private, struct inval_list *inval);

/* One change another node made, read from etcd: name set to value (len
 * bytes; NULL: an unset), or, with drop, its override dropped. */
struct remote_change {
	const char *backend, *arch, *name;
	const char *value;
	size_t len;
	bool drop;
};

/* --sync (syncd_watch.c): applies the n changes of one etcd revision to
 * backend/arch (each rc's own backend and arch are not read) as one
 * commit: one generation, as a local mv is. Not shared back, and never
 * refused for the size of --state (the run holds it already). The
 * caller holds publish_lock (it orders the change against local
 * commits). A directory this node does not serve keeps the overrides
 * for a later load. */
int commit_remote(struct envfs *fs, const struct hist_writer *who, const char *backend,
		  const char *arch, const struct remote_change *rc, size_t n, struct inval_list *inval);

#endif
