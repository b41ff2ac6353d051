/* The state of one validate_snapshot() run, shared by validate.c and the
 * checks it calls in validate_names.c and validate_rules.c. Internal to the
 * engine. */
#ifndef ENVFS_VALIDATE_CTX_H
#define ENVFS_VALIDATE_CTX_H

#include <stdbool.h>
#include <stddef.h>

#include "resolve_internal.h"
#include "strbuf.h"

struct vctx {
	const struct spec_set *set;
	const struct spec *backend;
	const struct spec *runner;      /* NULL: the backend does not use it */
	struct snapshot *s;
	struct strbuf *ex;              /* per s->vars[i]: explain lines to append */
	/* Positions of the walk over the backend's and the runner's by_name
	 * and the catalog along with s->vars (all sorted by name). */
	size_t bpos, rpos, cpos;
	bool fold;                      /* the variable being checked is read
	                                   case-insensitively (relaxed) */
};

/* The entries that may type a name: positions in the by_name of the
 * backend and of the runner, and its catalog entry. */
struct entries {
	size_t bfirst, bn, rfirst, rn;
	const struct catalog_entry *ce;
};

/* Where a variable's type comes from, for the wording of messages. */
struct tinfo {
	const struct vtype_def *t;
	const struct spec *spec;        /* NULL when from the catalog */
	const struct spec_var *sv;
	const struct catalog_entry *ce;
};

/* Close enough to be a plausible misspelling of what the user meant. */
bool validate_close_enough(size_t dist, size_t len);
/* Appends line to the explain lines of s->vars[idx]. Inline: the
 * simulation has an explain_add() of its own. */
static inline int explain_add(struct vctx *c, size_t idx, const char *line)
{
	int err = sb_adds(&c->ex[idx], line);

	return err ? err : sb_addc(&c->ex[idx], '\n');
}
/* The message goes to both the diagnostics and the variable's explain, so
 * `check` and `explain` say the same thing. */
int validate_report(struct vctx *c, size_t idx, enum diag_code code, const struct strbuf *msg);
int validate_explain_retired(struct vctx *c, size_t idx);
int validate_check_owned(struct vctx *c, size_t idx, const struct spec *sp);
/* The final rules; `at: runner` ones ran during the simulation. */
int validate_check_rules(struct vctx *c, const struct spec *sp);

#endif
