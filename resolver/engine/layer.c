#include "layer.h"

const char *layer_name(enum layer l)
{
	static const char *const names[] = {
		[LAYER_NONE] = "", [LAYER_IMAGE] = "image", [LAYER_HOST] = "host",
		[LAYER_CLI] = "cli", [LAYER_DETECTED] = "detected",
		[LAYER_RUNNER] = "runner", [LAYER_CONFIG] = "config",
		[LAYER_BACKEND] = "backend", [LAYER_OVERRIDE] = "override",
	};

	if ((unsigned)l >= sizeof(names) / sizeof(names[0]))
		return "";
	return names[l];
}
