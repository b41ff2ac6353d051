/* override: the per-run overrides, writes through the mount, each of one
 * <backend>/<arch>/<name>, that the layering applies last. */
#ifndef ENVFS_OVERRIDE_H
#define ENVFS_OVERRIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"

/* When an override was last changed, and by whom, for explain. */
struct override_stamp {
	int64_t when_ms;               /* ms since the epoch; 0: not known
	                                  (loaded from --state) */
	bool has_writer;               /* uid and pid: a write through the
	                                  mount; else another node's change */
	uint32_t uid;
	int32_t pid;
};

struct override {
	char *backend, *arch, *name;
	char *value;                   /* NULL when unset (rm) */
	size_t value_len;
	bool private;                  /* a secret: made by a file created
	                                  with a mode that grants nothing to
	                                  others, or moved from a secret */
	struct override_stamp stamp;   /* a new override's is all 0 */
	bool pending;                  /* --sync: a create not committed yet
	                                  (its first close shares it): never
	                                  in --state; a new value clears it */
	/* The pending create replaced the run's unset of the name (an rm)
	 * on this node only: undoing the create puts the unset back, with
	 * its flag and stamp, and --state meanwhile holds the unset. */
	bool over_unset;
	bool unset_private;
	struct override_stamp unset_stamp;
};

struct override_set {
	struct override *v;
	size_t n, cap;
	struct hindex index;           /* v by backend, arch and name: a
	                                  start-up read of n keys costs n,
	                                  not n^2 (change v only through
	                                  the override_set_* calls) */
	char *sync_run, *sync_node;    /* the --sync run and node these are
	                                  the state of (the state file's
	                                  sync:), or NULL; owned */
};

/* Override bookkeeping; value NULL records an unset. Copies its inputs. */
int override_set_put(struct override_set *ov, const char *backend,
		     const char *arch, const char *name, const char *value,
		     size_t value_len);
/* Sets whether the override of name is private (a new value for it keeps
 * the flag); returns 0, or -ENOENT when there is none. */
int override_set_mark_private(struct override_set *ov, const char *backend,
			      const char *arch, const char *name, bool private);
/* Sets whether the override of name is a pending create; returns 0, or
 * -ENOENT when there is none. */
int override_set_mark_pending(struct override_set *ov, const char *backend,
			      const char *arch, const char *name, bool pending);
/* Marks the override of name a pending create over the run's unset,
 * whose private flag and stamp were unset_private and unset_stamp (see
 * over_unset); returns 0, or -ENOENT when there is none. */
int override_set_mark_pending_over_unset(struct override_set *ov, const char *backend,
					 const char *arch, const char *name, bool unset_private,
					 const struct override_stamp *unset_stamp);
/* Sets the stamp of name's override; returns 0, or -ENOENT when there is
 * none. */
int override_set_stamp(struct override_set *ov, const char *backend, const char *arch,
		       const char *name, const struct override_stamp *stamp);
/* Drops the override of name; returns 0, or -ENOENT when there was none. */
int override_set_drop(struct override_set *ov, const char *backend,
		      const char *arch, const char *name);
const struct override *override_set_find(const struct override_set *ov,
					 const char *backend, const char *arch,
					 const char *name);
void override_set_release(struct override_set *ov);

#endif
