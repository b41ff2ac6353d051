/* config: the experiment YAML's top-level `env:` block (SPEC section 5). */
#ifndef ENVFS_CONFIG_H
#define ENVFS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "lookup.h"
#include "strbuf.h"

#define CONFIG_MAX_VALUE 131072

struct config_entry {
	char *name;               /* name and raw point into config.text */
	char *raw;                /* the value as written (literal text) */
	size_t raw_len;
	unsigned line, col;       /* place of the value (last occurrence) */
};

struct config {
	char *file;               /* path as given, used in sources */
	struct config_entry *env; /* order of first appearance, last value wins */
	char *text;               /* every entry's name and raw, NUL-ended */
	size_t nenv;
	char **frameworks;        /* modules.*.framework values, distinct */
	size_t nframeworks;
};

/* Loads path. Diagnostics of section 5 go to diags with file:line:col.
 * A YAML syntax error returns -EINVAL (the caller keeps its last good
 * config); an unreadable file returns its negative errno. Bad keys and
 * bad values are diagnostics only: they are skipped, the rest loaded.
 * *out is caller-owned, freed with config_free(). */
int config_load(const char *path, struct config **out, struct diag_list *diags);
/* The same over a buffer named name (for tests and fuzzing). */
int config_load_buffer(const char *name, const char *buf, size_t len,
		       struct config **out, struct diag_list *diags);
void config_free(struct config *cfg);

/* Expands e->raw by Primus's rule: only $NAME and ${NAME} (NAME is
 * [A-Za-z0-9_]+) expand, and only when fn says NAME is set; everything else
 * is literal. Appends to out; warnings (an unset ${NAME} left literal) go to
 * diags with e's place. Returns 0 or a negative errno. */
int config_expand(const struct config *cfg, const struct config_entry *e,
		  envfs_lookup_fn fn, void *ctx, struct strbuf *out,
		  struct diag_list *diags);

#endif
