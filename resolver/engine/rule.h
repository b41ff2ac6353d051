/* rule: one `rules:` entry of a spec, checked over an environment.
 *
 * A rule's condition reads the real values; its message may name them as
 * ${NAME} (so it can say what the launcher will say: "Invalid NNODES:
 * '+3'"), read through a second lookup that shows a secret as (secret).
 * Final rules run over a directory's resolved values (validate_rules.c); rules
 * with `at: runner` over the environment the runner leaves, which is what
 * Primus's launcher validates (resolve_runner.c). */
#ifndef ENVFS_RULE_H
#define ENVFS_RULE_H

#include "diag.h"
#include "lookup.h"
#include "spec.h"

/* Adds r's diagnostic to diags when its condition holds over cond; the
 * message is expanded over shown. A condition that does not parse was
 * reported by the loader and is skipped. Returns 0, -ENOMEM or a
 * negative errno of a lookup. */
int rule_check(const struct spec *sp, const struct spec_rule *r, envfs_lookup_fn cond,
	       envfs_lookup_fn shown, void *ctx, struct diag_list *diags);

#endif
