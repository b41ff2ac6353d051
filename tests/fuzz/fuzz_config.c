/* libFuzzer harness: the experiment config loader (config_load_buffer) and
 * Primus's os.path.expandvars of every env: value it returns, bounded
 * (fuzz_check_expansion: the output limit holds, the work stays linear).
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

	if (config_load_buffer("fuzz.yaml", (const char *)data, size, NULL, &cfg, &diags) == 0) {
		for (i = 0; i < cfg->nenv; i++) {
			struct fuzz_work w = { 0 };
			int err;

			sb_reset(&out);
			err = config_expand(cfg, &cfg->env[i], false, FUZZ_EXPAND_MAX,
					    fuzz_counting_lookup, &w, &out, &diags);
			fuzz_check_expansion(strlen(cfg->env[i].value), &out, &w);
			if (err < 0 && err != -E2BIG)
				break;
		}
	}
	fuzz_format_diags(&diags);
	sb_release(&out);
	config_free(cfg);
	diag_list_release(&diags);
	return 0;
}
