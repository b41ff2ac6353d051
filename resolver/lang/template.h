/* template: value templates of specs, in bash's syntax.
 *
 *   ${NAME}             NAME's value, "" when unset
 *   ${NAME:-default}    NAME's value when set and non-empty, else default
 *                       (itself a template)
 *   ${NAME-default}     NAME's value when set (even empty), else default:
 *                       os.getenv(NAME, default)
 *   $(indices NAME)     "0,1,…,N-1" for the integer N the dialect reads
 *                       out of NAME (seq -s, 0 $((N - 1)) in the shell,
 *                       range(int(N)) in Python); "" when N < 1
 *   $$                  a literal $
 * Any other `$` is literal. A reference in a cycle is left as written. */
#ifndef ENVFS_TEMPLATE_H
#define ENVFS_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "dialect.h"
#include "lookup.h"
#include "strbuf.h"

struct tmpl_result {
	bool cycle;          /* a reference was left unexpanded: cycle */
	bool too_long;       /* the expansion passed max_len and stopped */
	char problem[160];   /* first problem found (bad syntax, bad count), or
	                        "": names variables, never quotes a value */
};

/* Appends the expansion of src to out, read in dialect d (the integers of
 * $(indices)). Stops, with res->too_long, once more than max_len bytes
 * were added (the limit of one environment string), so a template that
 * doubles its input stays bounded. Returns 0, or a negative errno from
 * the lookup other than -ELOOP, or -ENOMEM; out is then as it was. */
int tmpl_expand(const char *src, enum dialect d, size_t max_len, envfs_lookup_fn fn,
		void *ctx, struct strbuf *out, struct tmpl_result *res);

/* Calls fn(ctx, name, len) for every variable src reads (defaults
 * included), stopping at the first negative return, which it returns. */
int tmpl_names(const char *src, int (*fn)(void *ctx, const char *name, size_t len), void *ctx);

#endif
