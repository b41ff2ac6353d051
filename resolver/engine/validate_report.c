/* How a check of validate_snapshot() reports: the diagnostic placed at
 * the value's source and the same line in the variable's explain, and
 * the bound on a did-you-mean; shared by validate.c and
 * validate_names.c (validate_ctx.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "strbuf.h"
#include "validate_ctx.h"

/* Close enough to be a plausible misspelling of what the user meant. */
bool validate_close_enough(size_t dist, size_t len)
{
	size_t lim = len / 3 > 2 ? len / 3 : 2;

	return dist <= lim;
}

/* A diagnostic placed at a var->source-like "file:line" (or a bare place
 * such as "cli"), so a user-supplied value points at where it was given. */
static int diag_at_source(struct vctx *c, enum diag_code code, const char *source,
			  const char *msg)
{
	const char *colon;
	unsigned line = 0;
	char *file;
	int err;

	if (!source)
		return diag_add(&c->s->diags, code, NULL, 0, 0, "%s", msg);
	colon = strrchr(source, ':');
	if (colon && colon[1] && colon > source) {
		const char *p = colon + 1;
		unsigned long l = 0;

		while (*p >= '0' && *p <= '9' && l < 100000000)
			l = l * 10 + (unsigned long)(*p++ - '0');
		if (!*p) {
			line = (unsigned)l;
			if (!(file = xstrndup(source, (size_t)(colon - source))))
				return -ENOMEM;
			err = diag_add(&c->s->diags, code, file, line, 0, "%s", msg);
			free(file);
			return err;
		}
	}
	return diag_add(&c->s->diags, code, source, 0, 0, "%s", msg);
}

/* The message goes to both the diagnostics and the variable's explain, so
 * `check` and `explain` say the same thing. */
int validate_report(struct vctx *c, size_t idx, enum diag_code code, const struct strbuf *msg)
{
	int err = diag_at_source(c, code, c->s->vars[idx].source, sb_str(msg));

	return err ? err : explain_add(c, idx, sb_str(msg));
}
