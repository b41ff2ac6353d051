/* run_record: one JSON document that says exactly what a directory's run
 * gets and why: the environment, each variable's provenance, the
 * diagnostics, the digests, the program and specs it came from and the
 * SHA-256 of each input file. Saved before a run (`primus-envfs record`,
 * or the `record` file of a mount's directory), it is what `diff` compares
 * a later environment against.
 *
 *   $ primus-envfs record --config exp.yaml -b maxtext -a gfx950 -o run.json
 *   $ primus-envfs diff record:run.json --config exp.yaml -b maxtext -a gfx950
 *
 * Its shape is the JSON Schema specs/schemas/record.schema.json, version
 * RUN_RECORD_VERSION; a change of shape is a new version. */
#ifndef ENVFS_RUN_RECORD_H
#define ENVFS_RUN_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"
#include "strbuf.h"

#define RUN_RECORD_VERSION 1

enum run_record_flags {
	/* Secret values are written as "value" like the others. Only for a
	 * record that never leaves the process (diff compares two such):
	 * a record on disk or in the mount holds no secret's value and no
	 * hash of one (a hash of a short token is a dictionary attack away
	 * from it). */
	RUN_RECORD_SECRET_VALUES = 1,
	/* rr_doc_from_snapshot only: the directory digest is not rendered
	 * (digest stays NULL), for a diff whose text output does not show it
	 * (rendering a 10,000-variable view for it was a sixth of a side). */
	RUN_RECORD_NO_DIGEST = 2,
};

/* Appends the record of s to out. Returns 0 or -ENOMEM. */
int run_record_render(const struct snapshot *s, unsigned flags, struct strbuf *out);

/* ---- a record read back (run_record_decode.h fills these) --------------- */

struct rr_flag {              /* one effective flag of a flag-list variable */
	char *flag;               /* "--xla_gpu_autotune_level" */
	char *token;              /* "--xla_gpu_autotune_level=4" */
	size_t token_len;
	char *layer;
};

struct rr_var {
	char *name;
	size_t name_len;
	char *value;              /* NULL: unset, a secret not recorded, or a
	                             value a node record has by hash only */
	size_t value_len;
	bool has_hash;            /* hash is the value's SHA-256 (a node's
	                             value too long to publish) */
	uint8_t hash[32];
	bool set, exported, secret;
	char *layer, *source;     /* NULL when unset */
	bool is_flags;
	struct rr_flag *flags;
	size_t nflags;
};

struct rr_diag {
	char *severity, *code;    /* code NULL in a record that has none */
	bool silenced;
	char *file;               /* NULL: no place */
	unsigned line, column;
	char *message;
};

/* Every string of a record and its flag lists live in its arena: a
 * record of 10,000 variables was 60,000 allocations, freed one by one. */
struct rr_doc {
	int version;
	char *program_version, *backend, *arch, *digest;
	char *specs_sha256;       /* NULL when not known */
	struct rr_var *vars;      /* in the record's order: sorted by name */
	size_t nvars;
	struct rr_diag *diags;
	size_t ndiags;
	struct arena *arena;      /* the strings and flag lists above (the
	                             vars and diags arrays are malloc'd) */
};

/* An empty record (version 0, no variables) with its arena. Returns it
 * (caller-owned, rr_doc_free()) or NULL. */
struct rr_doc *rr_doc_new(void);
/* Frees d, its arrays and its arena. NULL is a no-op. */
void rr_doc_free(struct rr_doc *d);
/* Empties d's variables (or diagnostics), keeping the array for reuse;
 * what they held stays in the arena until d is freed. */
void rr_doc_drop_vars(struct rr_doc *d);
void rr_doc_drop_diags(struct rr_doc *d);
/* The order a record's variables are written in: by name, bytewise,
 * a shorter name before a longer one it begins. <0, 0 or >0. */
int rr_var_name_cmp(const struct rr_var *a, const struct rr_var *b);
/* The record of s as run_record_decode() would read it back from
 * run_record_render(s, flags), built directly (no JSON in between, for
 * diff's sides resolved in this process). *out is caller-owned:
 * rr_doc_free(). Returns 0 or -ENOMEM. */
int rr_doc_from_snapshot(const struct snapshot *s, unsigned flags, struct rr_doc **out);

#endif
