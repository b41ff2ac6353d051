/* libFuzzer harness: the spec loader (spec_load_buffer), the catalog loader
 * on the same bytes, and template expansion of every value and flag the
 * spec declares, as resolution would do, bounded (fuzz_check_expansion). */
#include <string.h>

#include "arena.h"
#include "fuzz_common.h"
#include "spec.h"
#include "template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Expands src in both dialects, bounded (fuzz_check_expansion). */
static void expand(const char *src, struct strbuf *out)
{
	struct tmpl_result res;
	int d;

	if (!src)
		return;
	for (d = DIALECT_SHELL; d <= DIALECT_PYTHON; d++) {
		struct fuzz_work w = { 0 };

		memset(&res, 0, sizeof(res));
		sb_reset(out);
		tmpl_expand(src, (enum dialect)d, FUZZ_EXPAND_MAX, fuzz_counting_lookup, &w, out,
			    &res);
		fuzz_check_expansion(strlen(src), out, &w);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list diags = DIAG_LIST_INIT;
	struct catalog_entry *cat = NULL;
	struct arena *docs = NULL;
	struct strbuf out = STRBUF_INIT;
	struct spec *s = NULL;
	size_t ncat = 0, i, j;

	spec_load_buffer("specs/fuzz.yaml", (const char *)data, size, &s, &diags);
	/* A spec that loaded with errors is still handed back: walk it too. */
	for (i = 0; s && i < s->nvars; i++) {
		expand(s->vars[i].value, &out);
		for (j = 0; j < s->vars[i].nflags; j++)
			expand(s->vars[i].flags[j].text, &out);
		for (j = 0; j < s->vars[i].npins; j++)
			expand(s->vars[i].pins[j].value, &out);
	}
	catalog_load_buffer("specs/catalog.yaml", (const char *)data, size, &cat, &ncat,
			    &diags);
	/* The same bytes as the docs of the catalog they made (or of none). */
	catalog_docs_load_buffer("specs/catalog.docs.yaml", (const char *)data, size, cat, ncat,
				 "specs/catalog.yaml", &docs, &diags);
	fuzz_format_diags(&diags);
	sb_release(&out);
	catalog_free(cat, ncat);
	arena_free(docs);
	spec_free(s);
	diag_list_release(&diags);
	return 0;
}
