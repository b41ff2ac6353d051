/* history: the last generations of a mount, each with when, why and by
 * whom it was made and, per variable it changed, the value before and
 * after (a secret's values are never kept: only whether it was set).
 * Built by comparing the snapshots a change replaced with those it
 * published, so a generation holds the changed values and nothing else.
 *
 *   $ primus-envfs history --mount /mnt/primus maxtext/gfx950 NCCL_DEBUG
 *   gen 7  2026-12-01T10:02:11Z  write  uid 1000 pid 4242
 *     maxtext/gfx950 NCCL_DEBUG: "" (runner) -> "INFO" (override)
 *
 * Not thread-safe: the daemon adds under its publish lock and renders
 * under a lock of its own (fs/update). */
#ifndef ENVFS_HISTORY_H
#define ENVFS_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "snapshot.h"
#include "strbuf.h"

#define HISTORY_VERSION 1
#define HISTORY_DEFAULT_KEEP 64
#define HISTORY_MAX_KEEP 100000
/* The largest generation number a history file may hold: the next must
 * follow it, and every JSON reader (a double holds integers exactly up
 * to 2^53) must read it as written. A mount making a generation every
 * millisecond reaches it in 285,000 years. */
#define HISTORY_GEN_MAX (1ull << 53)

enum hist_cause {
	HIST_START,       /* the mount's first resolution, or its --state */
	HIST_WRITE,       /* a variable file written through the mount */
	HIST_RM,
	HIST_MV,
	HIST_RELOAD,      /* an input changed */
	HIST_SYNC,        /* another node's change, applied */
	HIST_CAUSE_COUNT
};

struct hist_value {           /* one side of a change */
	bool set;
	char *value;              /* NULL when unset, or a secret's */
	size_t len;
	char *layer, *source;     /* NULL when unset */
};

struct hist_change {
	char *backend, *arch, *name;
	bool secret;
	struct hist_value before, after;
};

struct hist_gen {
	uint64_t generation;
	struct timespec when;     /* CLOCK_REALTIME */
	enum hist_cause cause;
	bool has_writer;          /* uid and pid are the writer's (FUSE's) */
	uint32_t uid;
	int32_t pid;
	char *node;               /* with --sync: the node that wrote it; or NULL */
	struct hist_change *changes;
	size_t nchanges, cap;
};

struct history {
	struct hist_gen *ring;    /* cap slots, the oldest at start */
	size_t cap, n, start;
};

/* "write", "rm", ...: static; NULL out of range. */
const char *hist_cause_name(enum hist_cause c);
/* The cause a name says, or -EINVAL. */
int hist_cause_from_name(const char *name, enum hist_cause *out);

/* An empty history keeping the last keep generations (1..HISTORY_MAX_KEEP).
 * Returns 0, -EINVAL or -ENOMEM. Free with history_release(). */
int history_init(struct history *h, size_t keep);
void history_release(struct history *h);

/* Appends to g one change per variable whose value or presence differs
 * between old and new (the same directory; either may be NULL: no such
 * directory). Copies what it keeps. Returns 0 or -ENOMEM. */
int hist_gen_compare(struct hist_gen *g, const struct snapshot *old,
		     const struct snapshot *new);
/* Appends one change, copying its strings (values NULL for a secret).
 * Returns 0 or -ENOMEM. */
int hist_gen_add(struct hist_gen *g, const char *backend, const char *arch,
		 const char *name, bool secret, const struct hist_value *before,
		 const struct hist_value *after);
/* Frees what g holds (g itself is the caller's). */
void hist_gen_release(struct hist_gen *g);
/* Releases v[0..n) and frees v (an array history_decode made). */
void hist_gens_free(struct hist_gen *v, size_t n);

/* Takes g over (its contents; *g is left empty), dropping the oldest
 * generation when full. A generation with no change is not kept (it is
 * released), unless it is HIST_START. */
void history_push(struct history *h, struct hist_gen *g);
/* Makes each change of h whose variable is_secret(ctx, backend, arch,
 * name) calls a secret a secret's change, its values dropped: a history
 * written before a --secret or a secret pattern covered a name (or a
 * hand-made file) must not keep serving its values. Returns how many
 * changes lost a value. */
size_t history_redact(struct history *h,
		      bool (*is_secret)(void *ctx, const char *backend, const char *arch,
					const char *name),
		      void *ctx);
/* The i-th generation, oldest first; NULL past the end. Borrowed. */
const struct hist_gen *history_at(const struct history *h, size_t i);

/* What history_json and history_text show: the changes of one directory
 * (backend and arch), of one variable when name is set; NULL: all. */
struct hist_filter {
	const char *backend, *arch, *name;
};

/* gens[0..n), oldest first, as JSON (specs/schemas/history.schema.json):
 * only the changes f lets through, and only the generations left with one
 * (f NULL: everything); secrets carry no value. keep is the mount's bound.
 * Returns 0 or -ENOMEM. */
int history_json(const struct hist_gen *const *gens, size_t n, size_t keep,
		 const struct hist_filter *f, struct strbuf *out);
/* The same for people: a line per generation, a line per change. */
int history_text(const struct hist_gen *const *gens, size_t n, const struct hist_filter *f,
		 struct strbuf *out);
/* The whole of h: history_json with no filter. */
int history_render_json(const struct history *h, struct strbuf *out);

#endif
