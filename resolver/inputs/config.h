/* config: the experiment YAML's top-level `env:` block,
 * read the way Primus applies it (PrimusRuntime._apply_config_env):
 *
 *   raw = yaml.safe_load(f)            # the whole file, or nothing
 *   for key, value in raw["env"].items():
 *       os.environ[str(key)] = os.path.expandvars(str(value))
 *
 * so a value is str() of what PyYAML builds (0.960 -> "0.96", 010 -> "8",
 * [a, b] -> "['a', 'b']"), keys are applied in dict order, and a key
 * Python refuses ("", "A=B") raises and ends the loop: it and every later
 * key are not applied. */
#ifndef ENVFS_CONFIG_H
#define ENVFS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "lookup.h"
#include "sha256.h"
#include "strbuf.h"

#define CONFIG_MAX_VALUE 131072
/* Longest value text quoted inside a message. */
#define CONFIG_MSG_TEXT_MAX 60

struct config_entry {
	char *name;               /* str() of the key; points into config.text */
	char *value;              /* str() of the value, before expandvars */
	size_t value_len;
	unsigned line, col;       /* place of the value (last occurrence) */
};

struct config_place {
	char *module;             /* the modules: key */
	unsigned line, col;
};

struct config {
	char *file;               /* path as given, used in sources */
	struct config_entry *env; /* the keys Primus applies, in that order;
	                             a name may repeat (1 and "1" are two dict
	                             keys but one variable) */
	char *text;               /* every entry's name and value, NUL-ended */
	size_t nenv;
	char **frameworks;        /* modules.*.framework values, distinct */
	struct config_place *framework_at; /* beside each, where it is first
	                             given and in which module */
	size_t nframeworks;
	/* The codes a "# primus-envfs: ignore=CODE[,CODE]" comment on the
	 * line of an env: entry silences there. */
	struct diag_silence silence;
	struct file_digest digest; /* of the bytes loaded (config_load) */
};

/* Which names are secret, so no message quotes their values (NULL: none). */
struct config_secrets {
	bool (*is_secret)(void *ctx, const char *name);
	void *ctx;
};

/* Loads path. Diagnostics of section 5 go to diags with file:line:col.
 * A YAML syntax error returns -EINVAL (the caller keeps its last good
 * config); an unreadable file returns its negative errno. A file PyYAML
 * cannot construct, a second document, a non-mapping env:, a refused key
 * or an unusable value are diagnostics: what Primus would not apply is
 * left out, the rest loaded. secrets may be NULL. *out is caller-owned,
 * freed with config_free(). */
int config_load(const char *path, const struct config_secrets *secrets, struct config **out,
		struct diag_list *diags);
/* config_load in two steps, so that the work can run while (or on
 * another thread than) the specs that say which names are secret load.
 * config_read reads and parses path into *r (caller-owned: to
 * config_load_read, or config_read_release); it returns -ENOMEM, else 0
 * with what config_load's read would return in r->err and its diagnostics
 * in r->diags. It loads the config too, unless an entry's warning needs
 * to know whether its name is secret (a typed value). config_load_read
 * finishes the load as config_load does (the same result, the same
 * diagnostics in the same order) and releases *r, whatever it returns. */
struct ydoc;
struct config_read {
	char *path;
	int err;
	struct ydoc *doc;
	struct file_digest digest;
	struct diag_list diags;
	struct config *cfg;          /* loaded ahead, or NULL */
	struct diag_list cfg_diags;  /* its load's diagnostics */
	bool asked;                  /* an entry asked whether it is secret */
};
int config_read(const char *path, struct config_read *r);
int config_load_read(struct config_read *r, const struct config_secrets *secrets,
		     struct config **out, struct diag_list *diags);
void config_read_release(struct config_read *r);
/* The same over a buffer named name (for tests and fuzzing). */
int config_load_buffer(const char *name, const char *buf, size_t len,
		       const struct config_secrets *secrets, struct config **out,
		       struct diag_list *diags);
void config_free(struct config *cfg);

/* Expands e->value by Python's os.path.expandvars: `$NAME` and `${NAME}`
 * (NAME is [A-Za-z0-9_]+) are replaced when fn says NAME is set;
 * everything else is literal. Appends to out, at most max_len bytes:
 * returns -E2BIG when the expansion would be longer (out then holds a
 * prefix). Warnings (a ${NAME} left literal, ${NAME:-d}) go to diags with
 * e's place, quoting the reference only when secret is false. Returns 0
 * or a negative errno. */
int config_expand(const struct config *cfg, const struct config_entry *e, bool secret,
		  size_t max_len, envfs_lookup_fn fn, void *ctx, struct strbuf *out,
		  struct diag_list *diags);

#endif
