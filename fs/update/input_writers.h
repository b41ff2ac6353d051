/* input_writers: whether an input a load reads (the config, each
 * --inherit file, each spec) may be in the middle of an in-place write,
 * which shows readers an empty or half-written file for a moment: the
 * reload thread reads again until no writer has one open (reload.c). */
#ifndef ENVFS_INPUT_WRITERS_H
#define ENVFS_INPUT_WRITERS_H

#include <stdbool.h>

#include "envfs_inputs.h"

/* True when some process has one of in's files open for writing. */
bool inputs_being_written(const struct envfs_inputs *in);

#endif
