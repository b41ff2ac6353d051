/* node_record: what one node of a run publishes in etcd, so that
 * `primus-envfs verify` can tell, before launch, which node's environment
 * drifted (docs/SYNC.md). The daemon builds the keys and values with
 * node_record_build() from the snapshots it serves and puts them under its
 * lease; verify decodes them (node_record_decode.h, through the sync
 * module) into the types below.
 *
 * Keys, under RUN = PREFIX/runs/ID:
 *   RUN/nodes/<node>                      the summary, a few hundred bytes
 *                                         per directory: read for every
 *                                         node
 *   RUN/node-dirs/<node>/<backend>/<arch> one directory's variables: read
 *                                         only for the nodes that differ
 *                                         and one node they are compared
 *                                         with
 * The detail keys are a subtree of their own (not under nodes/<node>/) so
 * that a range over RUN/nodes/ reads the summaries alone: 256 nodes x 17
 * directories of detail would be tens of megabytes.
 *
 * Both are JSON documents (format 1; docs/SYNC.md has the fields). Strings
 * that are valid UTF-8 are JSON strings; any other bytes (a value is any
 * bytes but NUL) are written base64 under the key's name + "_b64". No
 * record holds a secret's value or any function of it: a secret is a name
 * with "secret": true.
 *
 * The encoder is here, and the decoder beside it (node_record_decode.h,
 * reached through the sync module's table, which verify loads anyway):
 * they write and read the JSON through one module, resolver/util/json.h
 * (json_add_field and json_field_bytes), with Nettle's base64, so the
 * primus-envfs executable does not link json-c (every resolve would map
 * it for nothing). */
#ifndef ENVFS_NODE_RECORD_H
#define ENVFS_NODE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sha256.h"
#include "snapshot.h"

#define NODE_RECORD_FORMAT 1
/* A value longer than this is published as its hash and length only. */
#define NODE_RECORD_VALUE_MAX 4096
/* No key's value is longer (etcd refuses requests over 1.5 MiB by
 * default): a detail over it is published without values (hashes and
 * lengths only); one over it even so makes node_record_build fail with
 * -EMSGSIZE. */
#define NODE_RECORD_KV_MAX (1024 * 1024)
/* A directory's summary lists at most this many of its error
 * diagnostics (and counts them all), each cut after NODE_RECORD_ERROR_LEN
 * bytes: the summary is read for every node. */
#define NODE_RECORD_ERRORS_MAX 16
#define NODE_RECORD_ERROR_LEN 512
/* A node name: 1 to this many bytes of printable ASCII but '/', and
 * neither "." nor "..". */
#define NODE_NAME_MAX 253

/* ---- building (the daemon) ------------------------------------------ */

struct node_record_in {
	const char *run_key;          /* "PREFIX/runs/ID", no trailing '/' */
	const char *node;             /* this node's name (node_name_check) */
	const uint8_t *specs_digest;  /* SHA256_LEN bytes (specs_digest.h),
	                                 or NULL when not known */
	int64_t revision;             /* the last etcd revision applied */
	const char *behind;           /* why the node stopped applying the
	                                 run's changes; NULL: it applies */
	int64_t when_ms;              /* ms since the epoch: when the served
	                                 state last changed */
	const char *load_error;       /* why the latest load of the inputs
	                                 failed (the node serves the last good
	                                 resolution), or NULL */
	const struct snapshot *const *dirs;  /* every directory served */
	size_t ndirs;
};

struct node_record_kv {
	char *key;                    /* NUL-terminated */
	char *value;                  /* value_len bytes, NUL-terminated */
	size_t value_len;
};

/* v[0 .. n-2]: one detail key per directory, in the order of in->dirs;
 * v[n-1]: the summary. Put them in this order (details first), so that
 * a reader who finds a summary finds its details; readers check each
 * detail against the summary's digest and read again on a mismatch. Each
 * value is at most NODE_RECORD_KV_MAX bytes: put them one by one, or in
 * txns under etcd's request limit, all under the node's lease. Detail
 * keys of a directory no longer served may be deleted or left to the
 * lease: readers ignore a detail its summary does not list. The bytes
 * are a function of *in alone (no clock is read). */
struct node_record_kvs {
	struct node_record_kv *v;
	size_t n;
};

/* Builds this node's keys and values. Returns 0; -EINVAL for a bad node
 * name or run key (message in msg, msglen bytes, may be 0), -EMSGSIZE
 * for a directory too big to publish (idem), -ENOMEM. *out is
 * caller-owned: node_record_kvs_free(), also after an error. */
int node_record_build(const struct node_record_in *in, struct node_record_kvs *out,
		      char *msg, size_t msglen);
void node_record_kvs_free(struct node_record_kvs *kvs);
/* The record of a node whose record cannot be built (node_record_build
 * failed with reason): a summary alone, with "unpublishable": reason and
 * no directory, so that no reader takes an older record for what the
 * node serves. in->dirs is not read. Returns 0, -EINVAL (bad node name or
 * run key) or -ENOMEM; *out as for node_record_build. */
int node_record_unpublishable(const struct node_record_in *in, const char *reason,
			      struct node_record_kvs *out);

/* 0 when node is a valid node name, else -EINVAL with the reason in msg
 * (the name is quoted with its odd bytes escaped). */
int node_name_check(const char *node, char *msg, size_t msglen);

/* The summary key of node, and the prefix of its detail keys (ending in
 * '/'): caller-owned strings (free()); either pointer may be NULL.
 * Returns 0 or -ENOMEM. */
int node_record_keys(const char *run_key, const char *node, char **summary_key,
		     char **detail_prefix);

/* ---- reading (verify) ------------------------------------------------ */

/* One directory in a summary. */
struct node_dir_sum {
	char *backend, *arch;
	uint8_t digest[SHA256_LEN];   /* node_digest.h */
	uint32_t nvars;               /* variables the digest covers */
	uint32_t nsecrets;            /* of which secret */
	char **errors;                /* its first error diagnostics, as
	                                 diag_format writes them (not escaped:
	                                 bytes from etcd) */
	size_t nlisted;               /* in errors */
	uint32_t nerrors;             /* all of them */
};

struct node_summary {
	unsigned format;
	char *node;
	char *version;                /* primus-envfs's version on the node */
	bool has_specs_digest;
	uint8_t specs_digest[SHA256_LEN];
	int64_t revision;
	char *behind;                 /* NULL: the node applies the run's
	                                 changes; else why it stopped */
	int64_t when_ms;
	char *load_error;             /* NULL: the latest load succeeded */
	char *unpublishable;          /* not NULL: the node cannot publish its
	                                 record, for this reason; no dirs */
	struct node_dir_sum *dirs;    /* sorted by backend, then arch */
	size_t ndirs;
};

/* One variable of a directory's detail. */
struct node_var {
	char *name;
	size_t name_len;
	bool secret;                  /* set, secret: nothing else is known */
	uint8_t hash[SHA256_LEN];     /* of the value (zero for a secret) */
	char *value;                  /* NULL: secret, or longer than
	                                 NODE_RECORD_VALUE_MAX / left out */
	size_t value_len;             /* the value's length (0 for a secret) */
	char *layer, *source;         /* where the value came from (diff); NULL
	                                 for a secret, or in an older record */
};

struct node_detail {
	unsigned format;
	char *node, *backend, *arch;
	uint8_t digest[SHA256_LEN];
	struct node_var *vars;        /* sorted by name, byte order */
	size_t nvars;
};

/* Free what a decoder (fs/sync/record.h) returned; NULL is a no-op. */
void node_summary_free(struct node_summary *s);
void node_detail_free(struct node_detail *d);

/* The digest of d's variables (node_digest.h's format), for a reader to
 * check the detail against a summary. */
void node_detail_digest(const struct node_detail *d, uint8_t out[SHA256_LEN]);

#endif
