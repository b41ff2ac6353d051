/* rule: a spec's cross-variable check and its message. */
#include "rule.h"

#include <errno.h>
#include <stdbool.h>

#include "expr.h"
#include "strbuf.h"
#include "template.h"
#include "text.h"

/* Longest message a rule may print with its values in. */
#define RULE_MSG_MAX 1024

int rule_check(const struct spec *sp, const struct spec_rule *r, envfs_lookup_fn cond,
	       envfs_lookup_fn shown, void *ctx, struct diag_list *diags)
{
	struct expr_env env = { sp->dialect, cond, ctx, false, "" };
	struct tmpl_result res = { 0 };
	struct strbuf raw = STRBUF_INIT, msg = STRBUF_INIT;
	bool hit = false;
	int err;

	/* No tree: the condition did not parse, the spec's error already. */
	if (!r->when_expr)
		return 0;
	if ((err = expr_eval(r->when_expr, &env, &hit)) < 0 || !hit)
		goto out;
	err = tmpl_expand(r->message, sp->dialect, RULE_MSG_MAX, shown, ctx, &raw, &res);
	/* A value may hold a newline or a tab: the diagnostic stays one line. */
	if (err < 0 || (err = text_escape(&msg, raw.buf ? raw.buf : "", raw.len)) < 0)
		goto out;
	err = diag_add(diags, r->code, sp->display, r->line, r->col, "%s%s", sb_str(&msg),
		       res.too_long ? "..." : "");
out:
	sb_release(&raw);
	sb_release(&msg);
	return err;
}
