/* libFuzzer harness: the condition language (expr_parse, expr_eval) and the
 * template expander (tmpl_expand). The input up to its first newline is a
 * condition, the rest a template; both evaluate against a fake lookup. */
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
	bool result, cycle;
	size_t n;

	/* Both APIs take C strings: a NUL in the input ends that part. */
	nl = memchr(data, '\n', size);
	n = nl ? (size_t)(nl - (const char *)data) : size;
	cond = strndup((const char *)data, n);
	tmpl = nl ? strndup(nl + 1, size - n - 1) : strdup("");
	if (!cond || !tmpl)
		goto out;
	if (expr_parse(cond, &e, msg, sizeof(msg)) == 0)
		expr_eval(e, fuzz_lookup, NULL, &result, &cycle);
	memset(&res, 0, sizeof(res));
	tmpl_expand(tmpl, fuzz_lookup, NULL, &out, &res);
	/* The condition text is a template too in some specs' values. */
	memset(&res, 0, sizeof(res));
	sb_reset(&out);
	tmpl_expand(cond, fuzz_lookup, NULL, &out, &res);
out:
	expr_free(e);
	sb_release(&out);
	free(cond);
	free(tmpl);
	return 0;
}
