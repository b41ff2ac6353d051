/* inputs_trust: inputs another user can change, for a daemon running as
 * root.
 *
 *   /srv/exp.yaml: warning: another user can change this file (owned by
 *   uid 1000); primus-envfs runs as root, so that user decides what the
 *   run gets
 *
 * Root's config, specs, --inherit and --env-file files decide the environment of
 * every run launched from them; one another user can write is a way into
 * them (an LD_PRELOAD in an image file), though often a deliberate one,
 * so it is a warning, not a refusal (the --state file is refused:
 * state_lock.h). Rules: trust.h. */
#ifndef ENVFS_INPUTS_TRUST_H
#define ENVFS_INPUTS_TRUST_H

#include "diag.h"
#include "envfs_inputs.h"

/* Appends one warning to out per input of in (the config, each --inherit
 * and --env-file file, the specs directory and each spec file in it) that a user other
 * than root could change, when the calling process runs as root; nothing
 * otherwise. Returns 0 or -ENOMEM. */
int inputs_trust_check(const struct envfs_inputs *in, struct diag_list *out);

#endif
