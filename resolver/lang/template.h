/* template: value templates of specs.
 *
 *   ${NAME}             the final value of NAME, "" when unset
 *   ${NAME:-default}    NAME's value when set and non-empty, else default
 *                       (itself a template)
 *   $(indices NAME)     "0,1,…,N-1" for the integer value N of NAME
 *                       (0 < N <= 1024); empty, with a problem, otherwise
 *   $$                  a literal $
 * Any other `$` is literal. A reference in a cycle is left as written. */
#ifndef ENVFS_TEMPLATE_H
#define ENVFS_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "lookup.h"
#include "strbuf.h"

struct tmpl_result {
	bool cycle;          /* a reference was left unexpanded: cycle */
	char problem[160];   /* first problem found (bad syntax, bad count), or "" */
};

/* Appends the expansion of src to out. Returns 0, or a negative errno
 * from the lookup other than -ELOOP, or -ENOMEM. */
int tmpl_expand(const char *src, envfs_lookup_fn fn, void *ctx,
		struct strbuf *out, struct tmpl_result *res);

#endif
