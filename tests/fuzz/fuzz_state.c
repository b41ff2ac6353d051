/* libFuzzer harness: the --state file loader (statefile_load_buffer), and
 * the round trip every state it accepts must survive: rendered again and
 * loaded back, it holds exactly the same overrides.
 *
 *   FUZZ_ONLY=state tests/fuzz/run.sh 60 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "statefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_or_abort(const struct override_set *a, const struct override_set *b)
{
	size_t k;

	if (a->n != b->n)
		abort();
	for (k = 0; k < a->n; k++) {
		const struct override *x = &a->v[k];
		const struct override *y = override_set_find(b, x->backend, x->arch, x->name);

		if (!y || !x->value != !y->value || x->value_len != y->value_len ||
		    x->private != y->private ||
		    (x->value && memcmp(x->value, y->value, x->value_len)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list diags = DIAG_LIST_INIT;
	struct override_set ov = { 0 }, back = { 0 };
	struct strbuf sb = STRBUF_INIT;

	if (statefile_load_buffer("fuzz.yaml", (const char *)data, size, &ov, &diags) == 0 &&
	    statefile_render(&ov, &sb) == 0) {
		if (statefile_load_buffer("again.yaml", sb.buf, sb.len, &back, &diags) != 0)
			abort();
		same_or_abort(&ov, &back);
	}
	fuzz_format_diags(&diags);
	sb_release(&sb);
	override_set_release(&ov);
	override_set_release(&back);
	diag_list_release(&diags);
	return 0;
}
