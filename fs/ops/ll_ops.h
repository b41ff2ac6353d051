/* ll_ops: the FUSE low-level request handlers (envfs_ll_<op>).
 *
 * Each handler reads the published epoch (epoch.h) between epoch_enter()
 * and epoch_leave(), replying before it leaves; none ever waits on the
 * reload thread or sends a notification. Opens render their bytes once
 * into a per-open buffer (fi->fh) that reads slice, so a reader keeps the
 * content it opened whatever reloads meanwhile. The session's userdata is
 * the struct envfs. */
#ifndef ENVFS_LL_OPS_H
#define ENVFS_LL_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "envfs_fuse.h"

extern const struct fuse_lowlevel_ops envfs_ll_ops;

/* True when file handle fh, given out by envfs_ll_ops' open or create,
 * buffers writes: a commit holds its lock, so requests on it may wait
 * (loop.h, fh_may_block). */
bool envfs_fh_may_block(uint64_t fh);

#endif
