/* The launch simulation that resolve.c runs, shared by its steps: the
 * variable table and its records, and one function set per step. Internal
 * to the engine: nothing outside resolve*.c includes it.
 *
 *   resolve_table.c        the table, the offer rule, diagnostics at an entry
 *   resolve_entry.c        one spec entry's when:, template or detected value
 *   resolve_inputs.c       the declared names, image, host, cli, overrides
 *   resolve_runner.c       step 4: the runner base, then --env again
 *   resolve_forward.c      names an entry reads before its file sets them
 *   resolve_config.c       step 5: the config's env: block
 *   resolve_backend.c      step 6: the backend spec
 *   resolve_flags.c        the flag-list merge (XLA_FLAGS)
 *   resolve_fixed_point.c  the second pass over the exported environment
 *   resolve_snapshot.c     the snapshot built from a finished simulation
 *   resolve_run.c          the steps in order (sim_run)
 *   resolve.c              resolve_dir(), resolve_all() */
#ifndef ENVFS_RESOLVE_SIM_H
#define ENVFS_RESOLVE_SIM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hindex.h"
#include "resolve.h"
#include "strbuf.h"

struct expr;

#define NONE UINT32_MAX
/* One NAME=value may not pass this: execve refuses it (MAX_ARG_STRLEN). */
#define RESOLVE_MAX_VALUE CONFIG_MAX_VALUE
/* What the expansions of one directory may produce in all, so doubling
 * templates or config values stay linear in their input. */
#define RESOLVE_MAX_TOTAL (16u << 20)
/* Names listed in one message. */
#define MSG_NAMES_MAX 6

enum rule {
	RULE_ALWAYS,          /* export NAME=... ; os.environ[k] = v */
	RULE_UNSET_OR_EMPTY,  /* export NAME=${NAME:-v} */
	RULE_UNSET,           /* os.environ.setdefault(NAME, v) */
};

enum step { STEP_INPUTS, STEP_RUNNER, STEP_CONFIG, STEP_BACKEND };

/* One value a layer offered a variable, in launch order. */
struct rec {
	const char *val;              /* NULL: unset (an override's rm) */
	size_t len;
	const char *source;           /* outlives the simulation; NULL for a
	                                 spec entry (sim_rec_source() names it) */
	const struct spec_var *sv;    /* the spec entry, if any */
	uint32_t next;                /* the variable's next record */
	unsigned char layer;
	bool applied;                 /* it became the value */
	bool secret;                  /* built from a secret: redacted even
	                                 where an override made the variable
	                                 public (shadowed values) */
};

/* An export: false entry that applies: [0] the runner's, [1] the backend's. */
struct evar_param {
	const struct spec_var *sv;
	const char *val;
	uint32_t len;
	bool secret;                  /* val was built from a secret */
};

/* One per name the launch knows: 10,000 of them twice over during the
 * fixed point (two simulations), so the layout is kept tight (the peak
 * RSS target of docs/PERFORMANCE.md): lengths in 32 bits (no value
 * exceeds the value limit, no input file 1 MiB), flags as bits, and the
 * rare export: false parameters behind one pointer. */
struct evar {
	const char *name;
	const char *val;              /* the environment */
	uint32_t name_len;
	uint32_t len;
	uint32_t win;                 /* the record of the value, or NONE */
	uint32_t head, tail;          /* records */
	uint32_t last_entry[2];       /* 1 + the index of the last entry of the
	                                 runner [0] / the backend [1] that sets
	                                 it, 0 when none does */
	uint32_t nflags;
	uint32_t runner_seen_len;
	unsigned char layer;
	bool set : 1;
	bool flags_runner : 1;
	bool have_def : 1;
	bool def_secret : 1;          /* def was built from a secret */
	bool pinned : 1;              /* an override: nothing else changes it */
	bool pending : 1;             /* that override is a --sync create not
	                                 shared yet (snap_var.pending) */
	bool secret : 1;
	bool name_secret : 1;         /* sim_secret_by_name's answer (secret
	                                 starts from it, then may change) */
	bool consumed : 1;            /* an append_from: never exported */
	bool config_set : 1;          /* the config's env: set it */
	bool runner_seen_set : 1;
	/* what the specs say */
	const struct spec_var *flags_decl;
	struct evar_param *param;     /* [2] in the arena; NULL: neither */
	const char *note;
	const char *def;
	const char *runner_seen;      /* its value when the runner ran */
	/* flag lists */
	struct snap_flag *flags;
	const char *effective;
	const char *explain;          /* arena, lines */
};

struct sim {
	const struct world *w;
	const struct spec *backend, *runner;
	const char *arch;
	struct arena *arena;          /* texts that outlive the simulation */
	struct evar *v;
	size_t nv, capv;
	struct hindex index;          /* of v by name */
	struct rec *recs;
	size_t nrecs, caprecs;
	struct diag_list diags;
	size_t total;
	bool total_reported;
	/* what the current step reads */
	enum step step;
	bool taint;                   /* the current computation read a secret */
	/* inputs */
	const struct env_list *image;
	bool full;                    /* host, cli and overrides (the first pass) */
	const struct override_set *ov;
	/* NULL, or a pass over the same world and directory whose names'
	 * name_secret is taken instead of matching the patterns again */
	const struct sim *names_from;
	/* per runner entry, for the config diagnostics */
	struct reader { const char *name; size_t len; const struct spec_var *by; } *readers;
	size_t nreaders, capreaders;
	size_t nforward;              /* forward references found */
	uint32_t *entry_var[2];       /* the variable of each entry of the
	                                 runner [0] and the backend [1] (NONE
	                                 for another arch) */
	struct strbuf scratch;        /* one template's expansion at a time */
};

/* Forward references reported one by one before a summary. */
#define FORWARD_SHOWN 10

/* A spec entry's outcome at its step. */
struct eval {
	const char *val;              /* arena or the spec's own bytes */
	size_t len;
	bool applies, secret, ok;
};

/* resolve_table.c */
/* The index of name's variable, or NONE. */
uint32_t sim_find(const struct sim *s, const char *name, size_t len);
/* Whether name is a secret by name (a --secret glob, or unless only_cli a
 * spec's secret pattern). */
bool sim_secret_by_name(const struct sim *s, const char *name, size_t len, bool only_cli);
/* The variable of name (borrowed: it must outlive the simulation), added
 * when new, in *out. Returns 0, -ENOMEM or -EFBIG. */
int sim_var(struct sim *s, const char *name, size_t len, uint32_t *out);
/* Appends record r to variable vi (its index in *out unless NULL).
 * Returns 0, -ENOMEM or -EFBIG. */
int sim_rec_add(struct sim *s, uint32_t vi, struct rec r, uint32_t *out);
int sim_offer(struct sim *s, uint32_t vi, enum layer layer, const char *val, size_t len,
	      const char *source, const struct spec_var *sv, enum rule rule, bool secret);
const struct evar_param *sim_param_of(const struct evar *e, int k);
int sim_param_set(struct sim *s, struct evar *e, int k, const struct spec_var *sv,
		  const char *val, size_t len, bool secret);
const struct spec *sim_spec_of(const struct sim *s, bool runner);
int sim_warn_at(struct sim *s, enum diag_code code, const struct spec *sp,
		const struct spec_var *sv, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Appends a line to v's explain text (arena). */
int sim_explain_add(struct sim *s, struct evar *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *sim_rec_source(struct sim *s, const struct rec *r);
/* "FILE:LINE" of sv, an entry of sp, in the arena; NULL out of memory. */
const char *sim_spec_entry_source(struct sim *s, const struct spec *sp, const struct spec_var *sv);

/* resolve_entry.c */
/* Counts n bytes against the directory's expansion budget; past it, one
 * diagnostic. */
int sim_count_total(struct sim *s, size_t n);
int sim_entry_when(struct sim *s, const struct spec *sp, const struct spec_var *sv,
		   const char *cond, const struct expr *ex, bool *ok);
int sim_entry_template(struct sim *s, const struct spec *sp, const struct spec_var *sv,
		       const char *src, struct eval *out);
int sim_entry_eval(struct sim *s, const struct spec *sp, const struct spec_var *sv,
		   struct eval *out);
enum rule sim_rule_of(const struct spec_var *sv);
enum layer sim_layer_of(const struct spec *sp, const struct spec_var *sv);

/* resolve_flags.c */
int sim_managed_flags(struct sim *s, const struct spec *sp, const struct spec_var *decl,
		      struct eval *out);
int sim_flags_apply(struct sim *s, uint32_t vi, const struct spec *sp,
		    const struct spec_var *decl, const struct eval *managed);

/* resolve_inputs.c */
int sim_declare_specs(struct sim *s);
int sim_apply_list(struct sim *s, const struct env_list *l, enum layer layer, bool host);
int sim_apply_slurm(struct sim *s);
int sim_pin_overrides(struct sim *s);
int sim_finish_overrides(struct sim *s);

/* resolve_forward.c */
/* Warns about the names entry k of sp reads before its file sets them. */
int sim_check_forward(struct sim *s, const struct spec *sp, size_t k);

/* resolve_runner.c */
int sim_step_runner(struct sim *s);

/* resolve_config.c */
int sim_step_config(struct sim *s);

/* resolve_backend.c */
int sim_step_backend(struct sim *s);
int sim_warn_empty_params(struct sim *s);

/* resolve_run.c */
/* Runs the launch over s->image (and, for the full pass, the host, cli and
 * overrides). The caller releases s with sim_release() either way. */
int sim_run(struct sim *s);
/* resolve_table.c */
void sim_release(struct sim *s);
bool sim_exported(const struct evar *e);

/* resolve_fixed_point.c */
int sim_fixed_point(struct sim *s1);

/* resolve_snapshot.c */
/* On success *out holds one reference and owns s->arena (set to NULL). */
int sim_build_snapshot(struct sim *s, struct snapshot **out);
/* Replaces every secret value of s found in l's messages by <redacted>. */
int sim_scrub_diags(struct sim *s, struct diag_list *l);

#endif
