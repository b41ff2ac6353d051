/* view: the whole-directory files (env_file, environ, env.sh, ...), rendered from a snapshot.
 * `primus-envfs resolve --format` and the mount call the same function,
 * so the bytes are the same by construction. */
#ifndef ENVFS_VIEW_H
#define ENVFS_VIEW_H

#include <stdbool.h>

#include "sha256.h"
#include "snapshot.h"
#include "strbuf.h"

enum view_kind {
	VIEW_ENV_FILE,
	VIEW_ENVIRON,
	VIEW_SH,
	VIEW_JSON,
	VIEW_EXPLAIN,
	VIEW_DIGEST,
	VIEW_COMPOSE,
	VIEW_RECORD,              /* the run record (run_record.h) */
	VIEW_COUNT
};

/* Appends the view's bytes to out. Returns 0 or a negative errno. */
int view_render(const struct snapshot *s, enum view_kind kind, struct strbuf *out);
/* The view's size and SHA-256 (*len, sum), rendered piece by piece so a
 * large one is never whole in memory. out must be empty; when the view is
 * no longer than keep, its bytes are left in out as well (same bytes as
 * view_render), else out is left empty. Returns 0 or a negative errno. */
int view_measure(const struct snapshot *s, enum view_kind kind, size_t keep,
		 struct strbuf *out, size_t *len, uint8_t sum[SHA256_LEN]);
/* File name in the mount: env_file environ env.sh env.json explain digest
 * compose.env record. */
const char *view_file_name(enum view_kind kind);
/* The --format name of a view (env_file, environ, sh, json, ...). */
const char *view_format_name(enum view_kind kind);
/* Fills out with every --format name, in view order, then NULL. */
void view_format_names(const char *out[VIEW_COUNT + 1]);
/* Finds a view by file name or --format name (sh, json, compose also
 * accepted). Returns 0 or -EINVAL. */
int view_from_name(const char *name, enum view_kind *out);
/* True when name is a view's file name: a variable of that name has no
 * file of its own (it is only in the views). */
bool view_is_name(const char *name);
/* True when the view shows a secret value (mode 0600). */
bool view_is_secret(const struct snapshot *s, enum view_kind kind);

#endif
