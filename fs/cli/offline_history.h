/* offline_history: a change that set or unset --state makes, in the
 * history beside the state file (STATE.history, docs/STATE.md), so that
 * the next mount's history tells it as one of the run's changes (cause
 * write or rm, the command's uid and pid) and numbers on after it. */
#ifndef ENVFS_OFFLINE_HISTORY_H
#define ENVFS_OFFLINE_HISTORY_H

#include <stddef.h>

#include "history.h"
#include "snapshot.h"

/* Appends to state_path's history the generation after its last one,
 * with each variable that differs between before and after (one
 * directory's snapshots, secrets by name only). A history file that is
 * missing is made; one that cannot be read, is not to be trusted or does
 * not read back is left as it is. Returns 0, or a negative errno with a
 * phrase in msg: the change itself stands either way. */
int offline_history_note(const char *state_path, const struct snapshot *before,
			 const struct snapshot *after, enum hist_cause cause, char *msg,
			 size_t msglen);

#endif
