/* libFuzzer harness: the condition language (expr_parse, expr_eval) and the
 * template expander (tmpl_expand). The input up to its first newline is a
 * condition, the rest a template; both evaluate against a fake lookup, in
 * both dialects, bounded (fuzz_check_expansion). */
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "fuzz_common.h"
#include "template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf out = STRBUF_INIT;
	struct tmpl_result res;
	struct expr *e = NULL;
	char msg[160];
	const char *nl;
	char *cond, *tmpl;
	bool result;
	size_t n;
	int d;

	/* Both APIs take C strings: a NUL in the input ends that part. */
	nl = memchr(data, '\n', size);
	n = nl ? (size_t)(nl - (const char *)data) : size;
	cond = strndup((const char *)data, n);
	tmpl = nl ? strndup(nl + 1, size - n - 1) : strdup("");
	if (!cond || !tmpl)
		goto out;
	for (d = DIALECT_SHELL; d <= DIALECT_PYTHON; d++) {
		struct fuzz_work w = { 0 };
		struct expr_env env = { .dialect = (enum dialect)d, .fn = fuzz_counting_lookup,
					.ctx = &w };

		sb_reset(&out);
		if (e || expr_parse(cond, &e, msg, sizeof(msg)) == 0) {
			expr_eval(e, &env, &result);
			fuzz_check_expansion(strlen(cond), &out, &w);
		}
		w.lookups = 0;
		memset(&res, 0, sizeof(res));
		sb_reset(&out);
		tmpl_expand(tmpl, (enum dialect)d, FUZZ_EXPAND_MAX, fuzz_counting_lookup, &w, &out,
			    &res);
		fuzz_check_expansion(strlen(tmpl), &out, &w);
		/* The condition text is a template too in some specs' values. */
		w.lookups = 0;
		memset(&res, 0, sizeof(res));
		sb_reset(&out);
		tmpl_expand(cond, (enum dialect)d, FUZZ_EXPAND_MAX, fuzz_counting_lookup, &w, &out,
			    &res);
		fuzz_check_expansion(strlen(cond), &out, &w);
	}
out:
	expr_free(e);
	sb_release(&out);
	free(cond);
	free(tmpl);
	return 0;
}
