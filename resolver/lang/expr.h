/* expr: the `when:` condition language of specs.
 *
 *   NNODES > 1
 *   DUMP_HLO == "1" && !(NAME != 'x' || COUNT <= 3)
 *
 * Operands: a variable NAME (its final value; unset reads as ""), a quoted
 * string ('…' or "…", backslash escapes the next character in "…"), or an
 * integer literal. `==` and `!=` compare text; `<` `<=` `>` `>=` compare
 * integers and are false when either side is not an integer. A bare operand
 * is true when its text is non-empty. `&&`, `||`, `!` and parentheses as in C. */
#ifndef ENVFS_EXPR_H
#define ENVFS_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "lookup.h"

struct expr;

/* Parses src. On a syntax error returns -EINVAL and writes a one-line
 * message (with the 1-based column) into err. *out is caller-owned, freed
 * with expr_free(). */
int expr_parse(const char *src, struct expr **out, char *err, size_t errlen);
/* Evaluates e. Returns 0 and sets *result, or the negative errno the lookup
 * returned other than -ELOOP (a name in a cycle reads as unset and sets
 * *cycle when cycle is not NULL). */
int expr_eval(const struct expr *e, envfs_lookup_fn fn, void *ctx, bool *result,
	      bool *cycle);
void expr_free(struct expr *e);

#endif
