/* chain: every (directory, name) a path's meaning depends on.
 *
 *   /cfg/exp.yaml -> ..data/exp.yaml        (/cfg, exp.yaml)
 *   /cfg/..data   -> ..2026_12_01_...       (/cfg, ..data)
 *   /cfg/..2026_12_01_.../exp.yaml          (/cfg/..2026_12_01_..., exp.yaml)
 *
 * A change of any of those names (an edit of the file, a rename over
 * it, a link pointed elsewhere, a Kubernetes ConfigMap swapping ..data)
 * changes what the path reads, so the reload thread watches each
 * directory for its names. The chain is computed again after
 * every reload, since each swap changes it. */
#ifndef ENVFS_CHAIN_H
#define ENVFS_CHAIN_H

/* Calls each(dir, name, arg) for every symlink met resolving path (in
 * any component, followed recursively) and for the file it ends at (or
 * the first missing component, so its creation is seen). A relative path
 * is taken from the current directory. Stops at the first nonzero
 * return of each, which is returned; else 0, or -ENOMEM, or -ELOOP past
 * 40 links (what was met so far has been reported). */
int chain_walk(const char *path, int (*each)(const char *dir, const char *name, void *arg),
	       void *arg);

#endif
