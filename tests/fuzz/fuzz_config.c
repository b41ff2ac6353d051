/* libFuzzer harness: the experiment config loader (config_load_buffer) and
 * Primus's $NAME expansion of every env: value it returns.
 *
 *   tests/fuzz/run.sh 60        # every harness, 60 s each */
#include <string.h>

#include "config.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list diags = DIAG_LIST_INIT;
	struct config *cfg = NULL;
	struct strbuf out = STRBUF_INIT;
	size_t i;

	if (config_load_buffer("fuzz.yaml", (const char *)data, size, &cfg, &diags) == 0) {
		for (i = 0; i < cfg->nenv; i++) {
			sb_reset(&out);
			if (config_expand(cfg, &cfg->env[i], fuzz_lookup, NULL, &out,
					  &diags) < 0)
				break;
		}
	}
	fuzz_format_diags(&diags);
	sb_release(&out);
	config_free(cfg);
	diag_list_release(&diags);
	return 0;
}
