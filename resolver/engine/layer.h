/* layer: the precedence layers of SPEC section 3, lowest first. */
#ifndef ENVFS_LAYER_H
#define ENVFS_LAYER_H

enum layer {
	LAYER_NONE = 0,
	LAYER_BACKEND,
	LAYER_RUNNER,
	LAYER_IMAGE,
	LAYER_HOST,
	LAYER_CLI,
	LAYER_CONFIG,
	LAYER_OVERRIDE,
};

/* "backend", "runner", …; "" for LAYER_NONE. Static. */
const char *layer_name(enum layer l);

#endif
