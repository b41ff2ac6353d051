/* history_note: a published change, noted in the mount's history
 * (history.h) by the one who publishes it: a reload, a commit through the
 * mount, a change from another node.
 *
 * The writer of a commit is the request's (FUSE gives its uid and pid):
 * the handler hands it to the commit, which stamps the override and
 * notes the generation with it. */
#ifndef ENVFS_HISTORY_NOTE_H
#define ENVFS_HISTORY_NOTE_H

#include <stdbool.h>
#include <stdint.h>

#include "envfs.h"
#include "epoch.h"
#include "history.h"

/* Who made a change: through the mount, the request's uid and pid; from
 * another node (the applier's), what that node's fence said of it. A
 * change with no writer known (a reload) is passed NULL. */
struct hist_writer {
	uint32_t uid;
	int32_t pid;
	/* Another node's change only: */
	bool no_ids;               /* its uid and pid are not known */
	const char *node;          /* that node (borrowed), or NULL */
	bool has_cause;            /* cause holds what it did */
	enum hist_cause cause;
};

/* Now, and who (may be NULL): the stamp of an override it sets. */
void history_stamp(const struct hist_writer *who, struct override_stamp *out);

/* Notes the generation next (publish_lock held; next not yet published)
 * as the changes from prev, made for cause by who (may be NULL); with
 * node, by that node. Another node's change (HIST_SYNC) takes its node
 * and cause from who; one made here on a --sync mount is this node's.
 * A change that changed no value notes nothing; a
 * start notes a generation with no change (its values are the mount's).
 * Out of memory loses the generation (said in the log), never the change. */
void history_note(struct envfs *fs, const struct epoch *prev, const struct epoch *next,
		  enum hist_cause cause, const char *node, const struct hist_writer *who);

/* The history as the mount's history file serves it (history_render_json),
 * rendered now. *out is one reference. Returns 0 or -ENOMEM. */
struct blob;
int history_blob(struct envfs *fs, struct blob **out);

#endif
