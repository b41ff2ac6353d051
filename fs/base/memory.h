/* memory: how the daemon asks glibc's allocator to hand freed memory back.
 *
 * The daemon's footprint is dominated by short-lived, large working sets
 * (a load builds a whole new generation while the old one still serves;
 * a view is rendered into a growing buffer), followed by long quiet
 * periods. glibc's defaults suit the opposite: they keep freed memory for
 * reuse, per thread. */
#ifndef ENVFS_MEMORY_H
#define ENVFS_MEMORY_H

/* Sets the allocator policy; call once, before any thread starts. */
void memory_policy_init(void);
/* Returns freed pages to the kernel: call after a load or a reload has
 * dropped its transient structures and the previous generation. */
void memory_release_freed(void);
/* The opposite policy, for the commands that run once and exit (resolve,
 * check, exec): keep freed memory instead of handing it back. */
void memory_policy_short_lived(void);

#endif
