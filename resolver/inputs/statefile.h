/* statefile: the --state file, where a mount keeps the overrides written
 * through it (SPEC 7; the format is docs/STATE.md).
 *
 *   version: 1
 *   overrides:
 *     - {backend: "maxtext", arch: "gfx950", name: "XLA_GPU_AUTOTUNE_LEVEL", value: "5"}
 *     - {backend: "maxtext", arch: "gfx950", name: "NCCL_ALGO", unset: true}
 *
 * Values are YAML double-quoted with every byte that needs it escaped, so
 * any value round-trips; one that is not valid UTF-8 (which YAML cannot
 * carry) is written as value_hex. Reading goes through the bounded
 * yaml_tree loader, so the document is at most YT_MAX_FILE_SIZE. */
#ifndef ENVFS_STATEFILE_H
#define ENVFS_STATEFILE_H

#include <stddef.h>

#include "diag.h"
#include "resolve.h"
#include "strbuf.h"

#define STATEFILE_VERSION 1
/* The largest override value (SPEC 7: EFBIG beyond it). */
#define STATEFILE_VALUE_MAX 131072

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
 * (larger than YT_MAX_FILE_SIZE). */
int statefile_render(const struct override_set *ov, struct strbuf *out);

/* Replaces path with the document for ov atomically: a temporary file in
 * the same directory (mode 0600: values may be secrets), written, fsynced,
 * renamed over path, then the directory fsynced. On failure path is
 * untouched and the negative errno returned. */
int statefile_save(const char *path, const struct override_set *ov);

#endif
