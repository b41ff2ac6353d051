/* layer: the layers a value can come from, in the order a launch applies them. */
#ifndef ENVFS_LAYER_H
#define ENVFS_LAYER_H

enum layer {
	LAYER_NONE = 0,
	LAYER_IMAGE,          /* in launch order */
	LAYER_HOST,
	LAYER_CLI,
	LAYER_DETECTED,
	LAYER_RUNNER,
	LAYER_CONFIG,
	LAYER_BACKEND,
	LAYER_OVERRIDE,
};

/* "backend", "runner", …; "" for LAYER_NONE. Static. */
const char *layer_name(enum layer l);

#endif
