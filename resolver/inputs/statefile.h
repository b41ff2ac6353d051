/* statefile: the --state file, where a mount keeps the overrides written
 * through it (the format is docs/STATE.md).
 *
 *   version: 1
 *   overrides:
 *     - {backend: "maxtext", arch: "gfx950", name: "XLA_GPU_AUTOTUNE_LEVEL", value: "5"}
 *     - {backend: "maxtext", arch: "gfx950", name: "NCCL_ALGO", unset: true}
 *
 * Values are YAML double-quoted with every byte that needs it escaped, so
 * any value round-trips; one that is not valid UTF-8 (which YAML cannot
 * carry) is written as value_hex. Reading goes through the bounded
 * yaml_tree loader, with its larger bound (YDOC_LARGE), so the document
 * is at most STATEFILE_LOAD_MAX.
 *
 * Two bounds. A change written through the mount must leave the document
 * within STATEFILE_WRITE_MAX (the mount checks it before the change is
 * shared: EFBIG); with --sync every node checks it, so the run's
 * overrides stay about that size. A change from another node is never
 * refused for it (writes racing on several nodes, or a node's own
 * node-local overrides, can take one node past it): the file then holds
 * up to STATEFILE_LOAD_MAX, and loads back. */
#ifndef ENVFS_STATEFILE_H
#define ENVFS_STATEFILE_H

#include <stddef.h>

#include "diag.h"
#include "override.h"
#include "strbuf.h"
#include "yaml_tree.h"

#define STATEFILE_VERSION 1
/* The largest override value (a write of more is EFBIG). */
#define STATEFILE_VALUE_MAX 131072
/* What a local change may leave the document at (docs/STATE.md). */
#define STATEFILE_WRITE_MAX YT_MAX_FILE_SIZE
/* What a state file may hold: YDOC_LARGE's bound, the most one read of
 * etcd returns. */
#define STATEFILE_LOAD_MAX YT_MAX_LARGE_FILE_SIZE

/* Appends the overrides of path to ov. A missing file is an empty state
 * (0). A file that does not parse or breaks the format is never partly
 * applied: -EINVAL, ov untouched, and an error diagnostic naming
 * file:line:col. An unreadable file: its negative errno, with a
 * diagnostic. -ENOMEM may leave ov partly extended. */
int statefile_load(const char *path, struct override_set *ov,
		   struct diag_list *diags);
/* The same over a buffer; name is used in diagnostics. */
int statefile_load_buffer(const char *name, const char *buf, size_t len,
			  struct override_set *ov, struct diag_list *diags);

/* Appends the document for ov to out, overrides sorted by backend, arch
 * and name. Returns 0, -ENOMEM, or -EFBIG when it would not load back
 * (larger than STATEFILE_LOAD_MAX); the caller checks
 * STATEFILE_WRITE_MAX. */
int statefile_render(const struct override_set *ov, struct strbuf *out);

/* Replaces path with the document for ov atomically: a temporary file in
 * the same directory (mode 0600: values may be secrets), written, fsynced,
 * renamed over path, then the directory fsynced. On failure path is
 * untouched and the negative errno returned. */
int statefile_save(const char *path, const struct override_set *ov);
/* The same with a document statefile_render made (doc is borrowed). */
int statefile_write(const char *path, const struct strbuf *doc);

#endif
