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
#include "../ytree_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A finding is an abort, so libFuzzer keeps the input. */
static void same_or_abort(const struct ynode *a, const struct ynode *b)
{
	struct strbuf why = STRBUF_INIT;

	if (ytree_differ(a, b, &why))
		abort();
	sb_release(&why);
}

static void same_diags_or_abort(const struct diag_list *a, const struct diag_list *b)
{
	struct strbuf why = STRBUF_INIT;

	if (ydiags_differ(a, b, &why))
		abort();
	sb_release(&why);
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
