/* env_diff: two environments side by side, each a run record read back
 * (run_record.h): what `primus-envfs diff` prints. Every variable that
 * differs is shown once with both values and each side's layer and
 * source, a flag-list variable (XLA_FLAGS) flag by flag, and the
 * diagnostics found on one side only. A secret is never shown: only
 * whether it is the same, differs, or cannot be compared (a record on
 * disk holds no secret's value).
 *
 *   $ primus-envfs diff record:good-run.json --config exp.yaml -b maxtext -a gfx950
 *   changed NCCL_DEBUG
 *     a: "INFO"  config  exp.yaml:4
 *     b: ""      runner  specs/base.yaml:100
 */
#ifndef ENVFS_ENV_DIFF_H
#define ENVFS_ENV_DIFF_H

#include <stdbool.h>

#include "run_record.h"
#include "strbuf.h"

#define ENV_DIFF_VERSION 1

struct env_diff_side {
	const struct rr_doc *doc;
	const char *label;        /* how the user named it: "record:run.json" */
};

enum env_diff_format { ENV_DIFF_TEXT, ENV_DIFF_JSON };

/* Appends the comparison of a and b to out; with all, equal variables
 * are listed too. *differ is true when a variable or a diagnostic
 * differs (a secret that cannot be compared does not count). Returns 0
 * or -ENOMEM. */
int env_diff(const struct env_diff_side *a, const struct env_diff_side *b,
	     enum env_diff_format fmt, bool all, struct strbuf *out, bool *differ);

#endif
