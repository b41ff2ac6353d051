/* snapshot: the resolved environment of one <backend>/<arch> directory.
 *
 * Immutable once built and reference-counted, so any number of threads may
 * read it while a reload builds the next one; a FUSE open holds a reference
 * to the snapshot it was opened on. Every string is borrowed for the
 * snapshot's life. */
#ifndef ENVFS_SNAPSHOT_H
#define ENVFS_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "arena.h"
#include "layer.h"

struct snap_flag {            /* one effective flag of a flag-list variable */
	const char *key;          /* text before '=' */
	const char *token;        /* the whole winning token */
	enum layer layer;         /* the layer of the part that set it */
};

struct snap_var {
	const char *name;
	size_t name_len;
	const char *value;        /* NULL when the variable is not set */
	size_t value_len;
	bool set;                 /* has a file in the directory */
	bool exported;            /* in env_file/environ/env.sh/env.json */
	bool secret;
	bool is_flags;            /* kind: flags */
	bool view_name;           /* named like a view: only reachable via views */
	enum layer layer;         /* winning layer (LAYER_NONE when unset) */
	const char *source;       /* "specs/maxtext.yaml:42", "exp.yaml:12",
	                             "image:FILE:3", "host", "cli", "override" */
	const char *layers;       /* every supplying layer, low to high, space-separated */
	const char *shadowed;     /* "layer=value\n" lines that lost (secrets
	                             redacted), or NULL */
	const char *def;          /* backend/runner default value, or NULL */
	const char *note;         /* spec note, else catalog description, or NULL */
	const char *effective;    /* flag-list: one effective token per line, or NULL */
	const struct snap_flag *flags;
	size_t nflags;
	const char *explain;      /* extra explain lines (XLA messages, type
	                             meaning, retired notes), or NULL */
};

struct snapshot {
	atomic_long refs;
	const char *backend;
	const char *arch;
	struct snap_var *vars;    /* sorted by name (byte order), set or not */
	size_t nvars;
	size_t nset;              /* how many have set == true */
	bool secret_in_views;     /* an exported variable is secret */
	struct diag_list diags;   /* diagnostics for this directory (global ones
	                             included) */
	struct arena *arena;      /* owns every string and array above */
};

/* Borrowed lookup by name (binary search); NULL when absent. */
const struct snap_var *snapshot_find(const struct snapshot *s, const char *name,
				     size_t name_len);
/* Takes a reference; returns s. */
struct snapshot *snapshot_ref(struct snapshot *s);
/* Drops a reference; frees on the last. NULL is a no-op. */
void snapshot_unref(struct snapshot *s);

#endif
