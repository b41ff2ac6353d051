/* load: world loading with diagnostics on stderr, for the subcommands. */
#ifndef ENVFS_LOAD_H
#define ENVFS_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "inputs.h"

/* Loads the world. Error diagnostics are printed (one line each) when
 * print_errors; returns 0, or the world_load error with *out still set
 * when the world came back. */
int load_world(const struct cli_inputs *ci, bool print_errors, struct world **out);
/* Prints every diagnostic of l at or above min, identical lines once (a
 * load-time problem repeats in every directory); counts[sev] is increased
 * per printed line when counts is not NULL. */
void print_diags(const struct diag_list *l, enum diag_sev min, size_t counts[3]);

#endif
