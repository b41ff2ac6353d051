/* publish: putting the next epoch in place of the served one. Every
 * change of what the mount serves goes through here, publish_lock held
 * throughout, so epochs follow one another and each is diffed against
 * the one it replaces (docs/DESIGN.md, "One publish, three callers"):
 *
 *   envfs_stage(prev, next, inval)   next's generation: prev's, or one
 *                                    more when anything under env/ changed
 *   ... the caller renders next's status and diagnostics, lists their
 *       inodes, and makes the change durable (--sync's etcd txn, --state):
 *       whatever may fail, before anything is visible ...
 *   envfs_publish(fs, &p, inval)     cannot fail: noted, swapped in, the
 *                                    old epoch's handlers waited for, the
 *                                    kernel's stale caches listed
 *
 * The callers: a reload (envfs_reload), a commit through the mount and a
 * change from another node (commit.c's apply, through commit_remote).
 * No other file calls epoch_publish or epoch_wait_idle
 * (tests/tree_rules.sh checks). The invalidations are sent by the caller
 * once publish_lock is dropped (inval.h, reload.h). */
#ifndef ENVFS_PUBLISH_H
#define ENVFS_PUBLISH_H

#include <stdbool.h>

#include "envfs.h"
#include "epoch.h"
#include "history_note.h"
#include "inval.h"

/* Sets next's generation (and when it last changed) from prev: the same
 * when nothing under env/ differs, else prev's + 1; inval->changed says
 * which. Before next's status is rendered (it shows the generation).
 * Returns 0 or -ENOMEM. */
int envfs_stage(struct epoch *prev, struct epoch *next, struct inval_list *inval);

/* One publish, for envfs_publish. */
struct envfs_next {
	struct epoch *prev;          /* the served epoch next replaces
	                                (publish_lock kept it so); borrowed */
	struct epoch *next;          /* taken: envfs_publish sets it NULL */
	/* next has new directories, staged against prev (envfs_stage): the
	 * history notes them for cause by who (may be NULL), and the kernel's
	 * caches under env/ are listed. false: a load that failed, serving
	 * prev's directories with its reasons (only status and diagnostics
	 * change). */
	bool dirs;
	enum hist_cause cause;
	const struct hist_writer *who;
	/* A reload's: the world next was resolved from, taken as fs->world.
	 * The world it replaces is freed only after the old epoch, whose
	 * snapshots may borrow its strings. NULL: fs->world stays. */
	struct world *world;
};

/* Publishes p->next in place of p->prev (publish_lock held; not inside
 * an epoch): notes it in the history, swaps it in, waits (at most 100 ms)
 * for the handlers still answering from the old epoch, so that their
 * answers reach the kernel before the invalidations do, then appends to
 * inval what the kernel holds stale (inval_diff with the tree), frees
 * what is replaced, and with --sync hands the node record on
 * (fs->sync_hooks->published). Out of memory loses invalidations (said in the
 * log), never the publish. */
void envfs_publish(struct envfs *fs, struct envfs_next *p, struct inval_list *inval);

#endif
