/* expr: the `when:` condition language of specs.
 *
 *   NNODES > 1
 *   DUMP_HLO == "1" && !(NAME != 'x' || COUNT <= 3)
 *
 * Operands: a variable NAME (its value; unset reads as ""), a quoted
 * string ('…' or "…", backslash escapes the next character in "…"), an
 * integer literal, or int(NAME, FALLBACK): NAME read as an integer, and
 * FALLBACK when it is unset or not one (env_spec.py's `try:
 * int(os.getenv(NAME, "1")) except ValueError: 1`), or on(NAME): true when
 * NAME's value, stripped of blanks, is 1, true, on or yes in any case (a
 * switch as torch_fl's flag() reads it). `==` and `!=` compare
 * text; `<` `<=` `>` `>=` compare integers read in the entry's dialect
 * (dialect.h: bash arithmetic or Python's int()) and are false when either
 * side is not one. `NAME =~ 'PATTERN'` is bash's [[ =~ ]]: a POSIX
 * extended regular expression, given as a quoted literal, compiled (and
 * refused when bad or holding a back-reference) at parse time. A bare
 * operand is true when its text is non-empty.
 * `&&`, `||`, `!` and parentheses as in C. */
#ifndef ENVFS_EXPR_H
#define ENVFS_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "dialect.h"
#include "lookup.h"

struct expr;

/* What an evaluation reads through, and what it found on the way. */
struct expr_env {
	enum dialect dialect;
	envfs_lookup_fn fn;
	void *ctx;
	bool cycle;               /* out: a name in a cycle read as unset */
	char problem[160];        /* out: the first operand that was no integer,
	                             naming variables, never quoting a value */
};

/* Parses src. On a syntax error returns -EINVAL and writes a one-line
 * message (with the 1-based column) into err. *out is caller-owned, freed
 * with expr_free(). */
int expr_parse(const char *src, struct expr **out, char *err, size_t errlen);
/* Evaluates e through env (its cycle and problem are reset first). Returns
 * 0 and sets *result, or the negative errno the lookup returned other than
 * -ELOOP (a name in a cycle reads as unset and sets env->cycle). e is only
 * read (its patterns go to regexec, MT-safe on a shared regex_t), so one
 * parsed tree may be evaluated from several threads at once, each with
 * its own env: a spec parses its conditions once and shares them. */
int expr_eval(const struct expr *e, struct expr_env *env, bool *result);
/* Calls fn(ctx, name, len) for every variable e reads, stopping at the
 * first negative return, which it returns; else 0. */
int expr_names(const struct expr *e, int (*fn)(void *ctx, const char *name, size_t len),
	       void *ctx);
void expr_free(struct expr *e);

#endif
