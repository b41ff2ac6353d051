/* snapshot: the resolved environment of one <backend>/<arch> directory.
 *
 * Immutable once built and reference-counted, so any number of threads may
 * read it while a reload builds the next one; a FUSE open holds a reference
 * to the snapshot it was opened on. Every string is borrowed for the
 * snapshot's life: from its arena, or from the specs it holds. */
#ifndef ENVFS_SNAPSHOT_H
#define ENVFS_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "arena.h"
#include "layer.h"

struct snap_flag {            /* one effective flag of a flag-list variable */
	const char *key;          /* text before '=' */
	const char *token;        /* the whole winning token */
	enum layer layer;         /* the layer of the part that set it */
	const char *source;       /* where that part was written ("FILE:LINE",
	                             "cli", ...), or NULL when not known */
};

/* 10,000 of these live twice during a reload (the served snapshot and
 * the one being built), so the fields are packed: lengths in 32 bits,
 * flags in bits. */
struct snap_var {
	const char *name;
	const char *value;        /* NULL when the variable is not set */
	uint32_t name_len;
	uint32_t value_len;
	unsigned layer : 8;       /* enum layer: the winning one (LAYER_NONE
	                             when unset) */
	bool set : 1;             /* has a file in the directory */
	bool exported : 1;        /* in env_file/environ/env.sh/env.json */
	bool secret : 1;
	bool node : 1;            /* scope: node in a spec: differs per node
	                             by design, left out of node_digest() */
	bool is_flags : 1;        /* kind: flags */
	bool def_secret : 1;      /* def was built from a secret: shown where
	                             the value of a secret would be */
	bool view_name : 1;       /* named like a view: only reachable via views */
	bool pending : 1;         /* --sync: an override file created through
	                             this mount whose first close has not
	                             shared it with the run yet: this node's
	                             alone, and no change of the run's (the
	                             history leaves it out) */
	uint32_t nflags;
	const char *source;       /* "specs/maxtext.yaml:42", "exp.yaml:12",
	                             "image:FILE:3", "host", "cli", "override" */
	const char *layers;       /* every supplying layer, low to high, space-separated */
	const char *shadowed;     /* "layer=value\n" lines that lost (secrets
	                             redacted), or NULL */
	const char *def;          /* backend/runner default value, or NULL */
	const char *note;         /* spec note, else catalog description, or NULL */
	const char *effective;    /* flag-list: one effective token per line, or NULL */
	const struct snap_flag *flags;
	const char *explain;      /* extra explain lines (XLA messages, type
	                             meaning, retired notes), or NULL */
};

struct spec_share;

struct snap_input {           /* an input file of the world resolved */
	const char *kind;         /* "specs", "config", "inherit", "env-file" */
	const char *path;
	const char *sha256;       /* hex, or NULL when it could not be read
	                             or is withheld */
	bool secret;              /* withheld: a secret takes its value from
	                             the file (world_input.secret) */
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
	const char *explain;      /* lines heading explain (static), or NULL */
	const struct snap_input *inputs; /* for the run record, in load order */
	size_t ninputs;
	const char *models;       /* "SOURCE VERSION, commit COMMIT": what the
	                             specs of this directory model, or NULL */
	struct arena *arena;      /* owns every string and array above that
	                             the specs do not hold */
	struct spec_share *specs; /* one reference, or NULL: the specs the
	                             strings above may point into */
};

/* Borrowed lookup by name (binary search); NULL when absent. */
const struct snap_var *snapshot_find(const struct snapshot *s, const char *name,
				     size_t name_len);
/* Takes a reference; returns s. */
struct snapshot *snapshot_ref(struct snapshot *s);
/* Drops a reference; frees on the last. NULL is a no-op. */
void snapshot_unref(struct snapshot *s);

#endif
