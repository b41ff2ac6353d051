/* spec: the backend and runner spec files (specs/NAME.yaml), loaded and checked.
 * The schema is documented in specs/README.md; this is its in-memory form.
 * A spec_set is immutable once loaded and shared by every resolution. */
#ifndef ENVFS_SPEC_H
#define ENVFS_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "dialect.h"
#include "hindex.h"
#include "names.h"
#include "vtype.h"

struct arena;
struct expr;

enum spec_mode { SPEC_MODE_DEFAULT, SPEC_MODE_SET };
enum spec_kind { SPEC_KIND_VALUE, SPEC_KIND_FLAGS };

struct spec_flag {
	char *text;               /* template, e.g. --xla_gpu_autotune_level=${X:-4} */
	char *when;               /* condition source or NULL */
	struct expr *when_expr;   /* when, parsed; NULL when absent or bad */
	char *note;
	unsigned line, col;
};

struct spec_pin {
	char *arch;
	char *value;
};

struct spec_var {
	char *name;
	unsigned line, col;
	enum spec_kind kind;
	char *value;              /* template; NULL for a pure declaration */
	struct spec_flag *flags;  /* SPEC_KIND_FLAGS */
	size_t nflags;
	char *append_from;        /* SPEC_KIND_FLAGS: e.g. XLA_FLAGS_APPEND */
	enum spec_mode mode;
	enum dialect dialect;     /* the program the entry models: its own
	                             dialect: key, else its file's */
	bool has_dialect;         /* dialect: given on the entry */
	char *detect;             /* "ib_hca" or "ip_interface": the value is
	                             what the runner detects on the node */
	bool detected;            /* layer `detected` (implied by detect:) */
	bool export;              /* false: a parameter read with a default */
	char **arch;              /* NULL: every arch */
	size_t narch;
	char *when;               /* condition source or NULL */
	struct expr *when_expr;   /* when, parsed; NULL when absent or bad */
	char *note;
	bool secret;
	bool secret_given;        /* secret: written (false keeps a name the
	                             secret patterns match from being one) */
	unsigned scope;           /* SCOPE_* bits; 0 = unspecified */
	struct vtype_def type;
	struct spec_pin *pins;    /* per-arch forced values */
	size_t npins;
};

struct spec_retired {
	char *name;
	char *replaced_by;        /* may be NULL */
	char *note;               /* may be NULL */
};

/* Which environment a rule reads. */
enum rule_at {
	RULE_AT_FINAL,            /* what the training process gets */
	RULE_AT_RUNNER,           /* what the runner leaves: what Primus's
	                             launcher validates (lib/validation.sh) */
};

struct spec_rule {
	char *when;               /* condition */
	struct expr *when_expr;   /* when, parsed; NULL when bad */
	enum rule_at at;
	enum diag_code code;      /* code:, or the generic one of sev */
	enum diag_sev sev;        /* the code's */
	char *message;            /* a template: ${NAME} shows a value */
	unsigned line, col;
};

struct spec {
	char *file;               /* path as given, for provenance */
	char *display;            /* "specs/maxtext.yaml": used in sources */
	char *backend;            /* NULL for the runner base */
	bool is_runner;
	bool uses_runner;         /* gets base.yaml (default true) */
	bool relaxed_values;      /* value_reading: relaxed: owned names are read
	                             stripped, empty meaning unset, enums and
	                             list entries in any case (torch_fl) */
	enum dialect dialect;     /* dialect: key; default shell for the runner
	                             (its scripts are bash), python for a
	                             backend (env_spec.py) */
	char **arches;
	size_t narches;
	char **passthrough;       /* names forwarded when set and non-empty */
	size_t npassthrough;
	char **pass_prefixes;     /* every non-empty variable with one of
	                             these prefixes is forwarded too */
	size_t npass_prefixes;
	char *owned_prefix;       /* e.g. FLAGOS_, or NULL */
	/* models: what the spec was written from: the project, its version
	 * and the commit read (all three, or all NULL). */
	char *models_source, *models_version, *models_commit;
	char **families;          /* prefixes of dynamic families, e.g. FLAGOS_OP_ */
	size_t nfamilies;
	char **secret_patterns;   /* globs (names.h): every name one matches
	                             is a secret, unless an entry says
	                             secret: false */
	size_t nsecret_patterns;
	struct names_glob_set secret_set;  /* secret_patterns, ready to match */
	struct spec_retired *retired;  /* sorted by name */
	size_t nretired;
	struct spec_rule *rules;
	size_t nrules;
	struct spec_var *vars;    /* document order; a name may repeat (arch/when) */
	size_t nvars;
	size_t *by_name;          /* indices into vars sorted by name, then order */
	struct hindex name_ix;    /* each name's first position in by_name: a
	                             lookup per variable of a resolve, where a
	                             binary search was 14 strcmp */
	/* Owns every string above but file and display: the text of the
	 * spec's YAML document, taken over instead of copied string by
	 * string, so it also keeps the keys and any rejected value (about
	 * the size of the file). The arrays are malloc'd, and so is each
	 * when_expr: parsed (and its patterns compiled) once here, then only
	 * read, by every world and thread the spec is shared with. */
	struct arena *text;
};

/* One documented variable of the seeds' reference tables (catalog.yaml,
 * its documentation from catalog.docs.yaml or from catalog.yaml itself). */
struct catalog_entry {
	char *name;
	struct vtype_def type;
	char *def;                /* documented default, text */
	char *description;        /* NULL when the docs were not read */
	char *where_used;
	char *where_set;
	unsigned docs_line;       /* its entry in catalog.docs.yaml, or 0 */
};

struct names;

struct spec_set {
	char *dir;
	struct spec *runner;      /* base.yaml, or NULL */
	struct spec **backends;   /* sorted by backend name */
	size_t nbackends;
	struct catalog_entry *catalog;  /* sorted by name */
	size_t ncatalog;
	bool has_catalog;         /* the directory has a catalog.yaml */
	struct arena *docs_text;  /* catalog.docs.yaml's strings, or NULL */
	struct names *names;      /* names/: what the stack's readers read and
	                             the flags XLA defines (names.h); NULL
	                             when the directory has none */
};

/* What spec_set_load_dir() may leave out. */
enum {
	/* catalog.docs.yaml: descriptions (the note of explain and
	 * user.primus.note), where_set and where_used, a third of all the
	 * YAML a resolve would read, for a view that shows none of them. */
	SPEC_LOAD_NO_DOCS = 1,
	/* names/: the lists of what the stack's readers read, which only
	 * the diagnostics of a name nothing reads use (check, explain, the
	 * mount); a view of values never shows one. Half of what a
	 * resolve's spec load cost besides the YAML. */
	SPEC_LOAD_NO_NAMES = 2,
};

/* Loads every *.yaml of dir: base.yaml (the runner), catalog.yaml (the
 * variable catalog), catalog.docs.yaml (its documentation) and one file
 * per backend. With only (resolve and exec, which need one backend), a dir
 * holding <only>.yaml has just that file, base.yaml and the catalog read,
 * unless <only>.yaml turns out to declare another backend; NULL reads
 * everything (check, the mount). flags: SPEC_LOAD_* (0: everything).
 * Schema errors are error diagnostics with file:line:col; returns -EINVAL
 * when any error was found, or a negative errno when dir cannot be read.
 * *out is caller-owned, freed with spec_set_free(), and is set only on
 * success. */
int spec_set_load_dir(const char *dir, const char *only, unsigned flags,
		      struct spec_set **out, struct diag_list *diags);
/* The sorted *.yaml names of dir that spec_set_load_dir() reads (hidden
 * files left out). An unreadable dir adds an error to diags (may be NULL)
 * and returns the negative errno. *out and each name are caller-owned
 * (free()). */
int spec_dir_list(const char *dir, char ***out, size_t *nout, struct diag_list *diags);
/* Without loading them: whether a spec of dir declares backend (*has; a
 * file that cannot be read counts, as for a load of one backend), and
 * the names of its backends' files without ".yaml" (*stems, each and the
 * array caller-owned, free()). For a load of one backend, which has not
 * the others. Returns 0 (an unreadable dir: nothing found) or -ENOMEM. */
int spec_dir_backends(const char *dir, const char *backend, bool *has, char ***stems,
		      size_t *nstems);
/* Loads one spec file (no catalog, no cross-file checks). */
int spec_load_file(const char *path, const char *display, struct spec **out,
		   struct diag_list *diags);
/* The same over a buffer (for fuzzing); name is the file in diagnostics. */
int spec_load_buffer(const char *name, const char *buf, size_t len, struct spec **out,
		     struct diag_list *diags);
void spec_free(struct spec *s);
/* Loads catalog.yaml into an array sorted by name; *out is caller-owned,
 * freed with catalog_free() only (the array heads a block that also owns
 * the entries' strings). */
int catalog_load_file(const char *path, const char *display,
		      struct catalog_entry **out, size_t *nout, struct diag_list *diags);
int catalog_load_buffer(const char *name, const char *buf, size_t len,
			struct catalog_entry **out, size_t *nout, struct diag_list *diags);
void catalog_free(struct catalog_entry *v, size_t n);
/* Gives the entries of cat[0..ncat) (sorted, as catalog_load_file() left
 * them) their description, where_set and where_used from
 * catalog.docs.yaml. They point into the docs' strings: *text is
 * caller-owned (arena_free()), outlives cat's use of them, and is set
 * whenever the file parsed, errors or not. An entry naming no catalog
 * entry, or one documented twice (here, or here and in catalog.yaml,
 * whose display name is catalog), is an error. */
int catalog_docs_load_file(const char *path, const char *display, struct catalog_entry *cat,
			   size_t ncat, const char *catalog, struct arena **text,
			   struct diag_list *diags);
int catalog_docs_load_buffer(const char *name, const char *buf, size_t len,
			     struct catalog_entry *cat, size_t ncat, const char *catalog,
			     struct arena **text, struct diag_list *diags);
void spec_set_free(struct spec_set *set);

/* Borrowed lookups; NULL when absent. */
const struct spec *spec_set_backend(const struct spec_set *set, const char *backend);
const struct catalog_entry *spec_set_catalog(const struct spec_set *set, const char *name);
/* The spec whose models: says what backend's directories model: its own,
 * else the runner's when it uses the runner; NULL when neither says. */
const struct spec *spec_set_models(const struct spec_set *set, const struct spec *backend);
/* The entries of s named name: returns how many, and *first is the
 * position in s->by_name of the first (entries follow in document order). */
size_t spec_entries(const struct spec *s, const char *name, size_t *first);
/* Borrowed; NULL when name is not retired in s (s may be NULL). */
const struct spec_retired *spec_retired_find(const struct spec *s, const char *name);
bool spec_has_arch(const struct spec *s, const char *arch);
/* What an entry says of its name whatever its arch and condition. */
enum spec_mark {
	SPEC_MARK_SECRET,         /* secret: true */
	SPEC_MARK_NODE,           /* scope: node */
};
/* True when an entry of name in s says m. s may be NULL. */
bool spec_name_marked(const struct spec *s, const char *name, enum spec_mark m);
bool spec_var_applies_to_arch(const struct spec_var *v, const char *arch);

#endif
