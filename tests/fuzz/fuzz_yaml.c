/* libFuzzer harness: the fast YAML path against libyaml. Whenever the fast
 * path answers, its tree or its limit error must be libyaml's exactly; the
 * automatic path must always give libyaml's answer.
 *
 *   FUZZ_ONLY=yaml tests/fuzz/run.sh 60 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "yaml_fast.h"
#include "yaml_tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_or_abort(const struct ynode *a, const struct ynode *b)
{
	size_t i;

	if (!a || !b) {
		if (a != b)
			abort();
		return;
	}
	if (a->kind != b->kind || a->line != b->line || a->col != b->col ||
	    !a->tag != !b->tag || (a->tag && strcmp(a->tag, b->tag)))
		abort();
	switch (a->kind) {
	case YN_SCALAR:
		if (a->len != b->len || memcmp(a->str, b->str, a->len) ||
		    a->style != b->style || a->str[a->len] || b->str[b->len])
			abort();
		break;
	case YN_SEQ:
		if (a->nitems != b->nitems)
			abort();
		for (i = 0; i < a->nitems; i++)
			same_or_abort(a->items[i], b->items[i]);
		break;
	case YN_MAP:
		if (a->npairs != b->npairs)
			abort();
		for (i = 0; i < a->npairs; i++) {
			same_or_abort(a->pairs[i].key, b->pairs[i].key);
			same_or_abort(a->pairs[i].val, b->pairs[i].val);
		}
		break;
	}
}

static void same_diags_or_abort(const struct diag_list *a, const struct diag_list *b)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	size_t i;

	if (a->n != b->n)
		abort();
	for (i = 0; i < a->n; i++) {
		sb_reset(&x);
		sb_reset(&y);
		if (diag_format(&a->v[i], &x) < 0 || diag_format(&b->v[i], &y) < 0)
			abort();
		if (strcmp(sb_str(&x), sb_str(&y)))
			abort();
	}
	sb_release(&x);
	sb_release(&y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list dl = DIAG_LIST_INIT, df = DIAG_LIST_INIT, da = DIAG_LIST_INIT;
	struct ydoc *l = NULL, *f = NULL, *a = NULL;
	const char *buf = (const char *)data;
	int rl, rf, ra;

	rl = ydoc_load_buffer_mode("fuzz.yaml", buf, size, YDOC_LIBYAML, &l, &dl);
	rf = ydoc_load_buffer_mode("fuzz.yaml", buf, size, YDOC_FAST, &f, &df);
	ra = ydoc_load_buffer_mode("fuzz.yaml", buf, size, YDOC_AUTO, &a, &da);
	/* Aliases make the tree a DAG: compare only what the fast path
	 * answers (never aliases) node by node; auto against libyaml by
	 * result and diagnostics. */
	if (ra != rl)
		abort();
	same_diags_or_abort(&dl, &da);
	if (rf != YFAST_UNSUPPORTED) {
		if (rf != rl)
			abort();
		same_diags_or_abort(&dl, &df);
		if (rl == 0)
			same_or_abort(l->root, f->root);
		if (rl == 0)
			same_or_abort(l->root, a->root);
	} else if (f || df.n) {
		abort();
	}
	fuzz_format_diags(&dl);
	ydoc_free(l);
	ydoc_free(f);
	ydoc_free(a);
	diag_list_release(&dl);
	diag_list_release(&df);
	diag_list_release(&da);
	return 0;
}
