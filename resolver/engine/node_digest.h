/* node_digest: what of one directory must be equal on every node of a run.
 *
 * The digest view hashes the whole environ, so two correctly configured
 * nodes differ (NODE_RANK). The node digest leaves out the variables the
 * specs mark `scope: node` (different per node by design: ranks, detected
 * interfaces, host names) and never depends on a secret's value: a secret
 * contributes its name and the fact that it is set. Two nodes whose
 * secrets differ in value only have equal digests; nothing published can
 * tell them apart (a hash of a short token is a dictionary attack away
 * from the token, and etcd has many readers).
 *
 * Format 1, SHA-256 over:
 *   "primus-envfs node-digest 1\n"
 *   then, for each counted variable in name byte order:
 *     name bytes, NUL, 'v', SHA-256 of the value (32 bytes)   non-secret
 *     name bytes, NUL, 's'                                     secret
 * where counted means exported (in environ) and not node-scoped. A name
 * holds no NUL, so the encoding is unambiguous, and the digest can be
 * computed again from the per-variable hashes a node publishes
 * (node_record.h), which is how a reader checks a record's detail against
 * its summary. */
#ifndef ENVFS_NODE_DIGEST_H
#define ENVFS_NODE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sha256.h"
#include "snapshot.h"

#define NODE_DIGEST_FORMAT 1

/* True when v counts in the node digest: exported, not node-scoped. */
bool node_digest_counts(const struct snap_var *v);

/* The node digest of s. Returns 0, or -EINVAL when s is NULL. */
int node_digest(const struct snapshot *s, uint8_t out[SHA256_LEN]);

/* The digest over entries given one by one, in name byte order, as a
 * reader recomputes it from a record: node_digest_init(), then
 * node_digest_add() per counted variable (value_hash NULL for a secret),
 * then node_digest_end(). */
void node_digest_init(struct sha256_stream *h);
void node_digest_add(struct sha256_stream *h, const char *name, size_t name_len,
		     const uint8_t *value_hash);
void node_digest_end(struct sha256_stream *h, uint8_t out[SHA256_LEN]);

#endif
