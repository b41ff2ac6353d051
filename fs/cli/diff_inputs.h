/* diff_inputs: the two sides of `diff A-INPUTS -- MORE` resolved at once,
 * on two threads, with the same records, exit status and messages as
 * resolving one after the other (cmd_diff.c's side_from_inputs). */
#ifndef ENVFS_DIFF_INPUTS_H
#define ENVFS_DIFF_INPUTS_H

#include "args.h"
#include "run_record.h"

/* Resolves a (the inputs before --) and b (those inputs and the ones
 * after --) into run records, built with record_flags (run_record.h:
 * RUN_RECORD_SECRET_VALUES, RUN_RECORD_NO_DIGEST).
 * inputs_finish is called on b, then on a. Returns the exit status: 0 with
 * both records set (caller-owned, rr_doc_free()), else nothing set and the
 * reason printed on stderr. */
int diff_inputs_resolve(struct cli_args *a, struct cli_args *b, unsigned record_flags,
			struct rr_doc **doc_a, struct rr_doc **doc_b);

#endif
