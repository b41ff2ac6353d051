/* history_store: the mount's history kept beside --state, in
 * STATE.history (history_file.h; docs/STATE.md), so that a remount with
 * the same state file goes on telling the earlier generations.
 *
 *   $ primus-envfs --state /var/lib/run.state ... /mnt/primus
 *   $ ls /var/lib/run.state*
 *   /var/lib/run.state  /var/lib/run.state.history  /var/lib/run.state.lock
 *
 * Loaded once at start, before the first resolution (whose generation
 * then follows the last one kept); rewritten after generations are
 * noted, with the state file's discipline (a 0600 temporary file,
 * fsync, rename, the directory's fsync), by a thread of its own once the
 * mount runs: a writer's close() waits for the state file's save, not
 * for the history's, and a burst of generations is one save. It holds
 * no secret's value: the history holds none. */
#ifndef ENVFS_HISTORY_STORE_H
#define ENVFS_HISTORY_STORE_H

#include "envfs.h"

/* With --state and a history kept: sets fs->hist_path and loads what it
 * holds into fs->hist. A file someone else could have written is refused
 * as the state file is (-EPERM, said on stderr: the mount stops). One
 * that does not read back is named with its line on stderr and the
 * history starts empty (0): it is only a record. -ENOMEM. */
int history_store_load(struct envfs *fs);

/* Starts the saver thread (with a history file: fs->hist_saver, owned
 * by fs until history_store_stop). 0, or a negative errno (said). */
int history_store_start(struct envfs *fs);

/* Has fs->hist_path rewritten from fs->hist: by the saver thread, soon,
 * when it runs; at once otherwise (publish_lock held, so saves are in
 * order). A failure is said in the log once in a row; the change
 * stands. */
void history_store_save(struct envfs *fs);

/* Notes that a generation was pushed whose save waits for the next one
 * (a reload's): history_store_stop saves it if none came. */
void history_store_later(struct envfs *fs);

/* Makes the saver's last save (of everything noted before the call,
 * a generation history_store_later noted included) and stops it; later
 * saves are made at once. Without a saver, nothing. */
void history_store_stop(struct envfs *fs);

#endif
