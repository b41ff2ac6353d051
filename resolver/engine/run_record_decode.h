/* run_record_decode: a run record's JSON (run_record.h) read back. */
#ifndef ENVFS_RUN_RECORD_DECODE_H
#define ENVFS_RUN_RECORD_DECODE_H

#include <stddef.h>

#include "run_record.h"

/* Decodes the n bytes at p. Returns 0, -EPROTO with one line in msg (not
 * a record, a version newer than RUN_RECORD_VERSION, a field of the wrong
 * shape), or -ENOMEM. *out is caller-owned: rr_doc_free(). */
int run_record_decode(const char *p, size_t n, struct rr_doc **out, char *msg, size_t msglen);

#endif
