/* libFuzzer harness: the --inherit reader (docker env-file or environ dump,
 * chosen by content), with a host environment for bare NAME lines. */
#include "fuzz_common.h"
#include "inherit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const host_env[] = { "HOME=/root", "PATH=/bin", "A=", "EMPTY", NULL };
	struct diag_list diags = DIAG_LIST_INIT;
	struct env_list out = { 0 };

	inherit_load_buffer("image.env", (const char *)data, size, host_env, &out, &diags);
	fuzz_format_diags(&diags);
	env_list_release(&out);
	diag_list_release(&diags);
	return 0;
}
