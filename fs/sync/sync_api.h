/* sync_api: what the module primus-envfs-sync.so gives the executable.
 *
 *   const struct envfs_sync_api *api;
 *   struct etcd_client *c;
 *   char msg[512];
 *   if (sync_load(&api, msg, sizeof msg) < 0 ||          (sync_load.h)
 *       api->open(&c, &opts, msg, sizeof msg) < 0)
 *           errx(2, "%s", msg);
 *   if (api->connect(c, NULL) < 0)
 *           errx(2, "%s", api->errmsg(c));
 *
 * Why a module: libcurl and the thirty libraries it maps cost every run of
 * `resolve`, `check` and `exec` about 9 ms and 6 MB (docs/PERFORMANCE.md),
 * so the etcd client (fs/sync/etcd*.c, libcurl + json-c) is built as a
 * shared module loaded with dlopen only by a mount with --sync and by
 * `verify`. The module exports one symbol, envfs_sync_api(); this header
 * is the only one of fs/sync/ the executable includes, and it holds plain
 * C types only (no curl, no json-c), so the executable needs neither.
 *
 * The types below are the etcd client's own (fs/sync/etcd.h declares the
 * functions, which the table's entries are, one for one, with the same
 * contracts: bounds, errors, threads). The module never calls into the
 * executable: whatever it needs comes through these arguments.
 *
 * Versions. envfs_sync_api(ENVFS_SYNC_API_VERSION) returns the table, or
 * NULL when the module speaks another version. New entries are only ever
 * added at the end of the table, without a version change; `size` is the
 * module's sizeof(struct envfs_sync_api), so a caller checks that an
 * entry exists with ENVFS_SYNC_HAS(api, member) (the loader refuses a
 * module whose table is shorter than the executable's). An entry another
 * helper adds is agreed here, in a comment above it. */
#ifndef ENVFS_SYNC_API_H
#define ENVFS_SYNC_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 2: struct etcd_range_req gained min_mod_revision, max_mod_revision.
 * 3: and serializable. */
#define ENVFS_SYNC_API_VERSION 3
/* The module's file name, and the one symbol it exports. */
#define ENVFS_SYNC_MODULE_NAME "primus-envfs-sync.so"
#define ENVFS_SYNC_API_SYMBOL "envfs_sync_api"

/* ---- the sync options (fs/cli/sync_opts.h parses them) ------------------ */

/* What --sync and its companions say; one struct for the mount and for
 * `verify`. Every string is owned (sync_opts_release frees them, and
 * wipes the password). */
struct sync_opts {
	char *endpoints;        /* --sync etcd://HOST:PORT[,HOST:PORT...];
	                         * NULL: no sync */
	char *run;              /* --run ID (default $SLURM_JOB_ID) */
	char *prefix;           /* --sync-prefix P (default /primus-envfs),
	                         * no trailing '/' */
	char *ca_file;          /* --sync-ca FILE */
	char *cert_file;        /* --sync-cert FILE */
	char *key_file;         /* --sync-key FILE */
	char *user;             /* --sync-user NAME */
	char *password_file;    /* --sync-password-file FILE (for messages) */
	char *password;         /* read from password_file or the variable
	                         * PRIMUS_ENVFS_SYNC_PASSWORD; never argv */
	char *node;             /* --sync-node NAME (default the host name) */
	unsigned timeout_ms;    /* --sync-timeout MS: one call's bound
	                         * (default SYNC_DEFAULT_TIMEOUT_MS) */
};

#define SYNC_DEFAULT_PREFIX "/primus-envfs"
#define SYNC_DEFAULT_TIMEOUT_MS 2000u
#define SYNC_PASSWORD_ENV "PRIMUS_ENVFS_SYNC_PASSWORD"

/* ---- the etcd client's types (fs/sync/etcd.h) ----------------------------- */

#define ETCD_MAX_ENDPOINTS 16
#define ETCD_RANGE_MAX 10000
#define ETCD_REPLY_MAX (64u << 20)

struct etcd_client;
struct node_summary;         /* node_record.h */
struct node_detail;

struct etcd_opts {
	unsigned attempt_ms;    /* one attempt on one endpoint (0: 1000) */
	unsigned total_ms;      /* one call, all attempts (0: 2000) */
	unsigned probe_ms;      /* a silent watch checks its member this
	                         * often (0: 2000) */
	const char *ca_file;    /* PEM; NULL: plain http by default */
	const char *cert_file;  /* PEM client certificate, with key_file */
	const char *key_file;
	const char *user;       /* NULL: no authentication */
	const char *password;   /* copied; the client wipes its copy on free */
};

#define ETCD_OPTS_INIT { 0, 0, 0, NULL, NULL, NULL, NULL, NULL }

/* What the client did so far (for status pages and tests). */
struct etcd_stats {
	uint64_t calls;          /* API calls */
	uint64_t attempts;       /* HTTP requests, probes excluded */
	uint64_t failovers;      /* moves to another endpoint */
	uint64_t auths;          /* successful authentications */
	uint64_t reauths;        /* of which: after an invalid token */
};

struct etcd_status {
	uint64_t member_id;      /* the member that answered */
	uint64_t leader_id;      /* 0: it knows no leader */
	uint64_t raft_term;
	int64_t revision;        /* the store's current revision */
	int64_t db_size;
	char version[32];        /* etcd's version, e.g. "3.4.23" */
};

struct etcd_kv {
	char *key;               /* key_len bytes, NUL-terminated */
	size_t key_len;
	char *value;             /* value_len bytes, NUL-terminated too */
	size_t value_len;
	int64_t create_revision;
	int64_t mod_revision;
	int64_t version;
	int64_t lease;           /* 0: none */
};

struct etcd_range {
	struct etcd_kv *kvs;     /* sorted by key */
	size_t n;
	int64_t revision;        /* the store's revision this answer is of:
	                          * watch from revision + 1 to miss nothing */
	bool more;               /* the limit cut the answer short */
	int64_t count;           /* keys in the whole range (etcd's count) */
};

/* One page of a range (etcd_range_read): the keys starting with prefix,
 * after `after` (exclusive; NULL: from the first) up to `last`
 * (inclusive; NULL: to the prefix's end), sorted by key. Pages of one
 * read pass the first page's revision, so that every page shows the
 * store as it was then. */
struct etcd_range_req {
	const char *prefix;      /* "" is every key */
	const char *after;
	const char *last;
	size_t limit;            /* 0 or more than ETCD_RANGE_MAX: that */
	int64_t revision;        /* 0: the current one */
	bool keys_only;          /* no values (the rest of each kv is there) */
	/* Only keys last changed within [min, max] (0: no bound). etcd
	 * still walks the range, but the answer holds those keys alone. */
	int64_t min_mod_revision, max_mod_revision;
	/* Answered by the member from its own store, without a round
	 * through the leader: cheaper, but as of the revision that member
	 * applied, which may be behind what etcd acknowledged (the answer's
	 * revision says which). */
	bool serializable;
};

enum etcd_target { ETCD_MOD, ETCD_CREATE, ETCD_VERSION };
enum etcd_cmp_op { ETCD_EQ, ETCD_NE, ETCD_LT, ETCD_GT };

/* key's mod_revision, create_revision or version compared with value; a
 * missing key has all three 0. */
struct etcd_cmp {
	const char *key;
	enum etcd_target target;
	enum etcd_cmp_op op;
	int64_t value;
};

enum etcd_op_type { ETCD_OP_PUT, ETCD_OP_DELETE };

struct etcd_op {
	enum etcd_op_type type;
	const char *key;
	const void *value;       /* PUT */
	size_t value_len;
	int64_t lease;           /* PUT; 0: none */
};

struct etcd_txn_result {
	bool succeeded;          /* every compare held: the then-ops ran */
	bool uncertain;          /* !succeeded, but an earlier attempt of
	                          * this call timed out after sending: it
	                          * may have applied the then-ops. When the
	                          * txn fails (an error), whether some
	                          * attempt was sent and lost its answer:
	                          * false, nothing can apply */
	int64_t revision;        /* the store's revision after the txn */
};

enum etcd_event_type { ETCD_EV_PUT, ETCD_EV_DELETE };

struct etcd_event {
	enum etcd_event_type type;
	const char *key;         /* borrowed for the callback's duration */
	size_t key_len;
	const char *value;       /* DELETE: "" */
	size_t value_len;
	int64_t create_revision; /* DELETE: 0 */
	int64_t mod_revision;    /* the revision of this change */
	int64_t version;
	int64_t lease;
};

/* See etcd_watch() in etcd.h. */
typedef int (*etcd_watch_fn)(void *arg, int64_t revision,
                             const struct etcd_event *ev, size_t n);

struct etcd_watch_end {
	int64_t next_revision;   /* resume here: after the last revision
	                          * delivered (the start, if none was) */
	int64_t compact_revision;/* -ESTALE: the oldest revision etcd keeps */
};

/* ---- the table ------------------------------------------------------------- */

struct envfs_sync_api {
	unsigned version;        /* ENVFS_SYNC_API_VERSION */
	size_t size;             /* the module's sizeof(struct envfs_sync_api) */

	/* A client of o->endpoints with o's TLS files, user and password,
	 * bounded by o->timeout_ms per call (attempts of at most 1000 ms,
	 * or half the bound when that is less; at least 250 ms). Sends
	 * nothing yet: call connect. On error -EINVAL or -ENOMEM with a
	 * one-line message in msg that names the option at fault. *out is
	 * caller-owned: close. */
	int (*open)(struct etcd_client **out, const struct sync_opts *o,
	            char *msg, size_t msglen);
	/* etcd_client_dup, etcd_client_free, etcd_errmsg, etcd_endpoint,
	 * etcd_interrupt, etcd_stats. */
	int (*dup)(struct etcd_client **out, const struct etcd_client *c);
	void (*close)(struct etcd_client *c);
	const char *(*errmsg)(const struct etcd_client *c);
	const char *(*endpoint)(const struct etcd_client *c);
	void (*interrupt)(struct etcd_client *c);
	void (*stats)(const struct etcd_client *c, struct etcd_stats *out);

	/* etcd_connect, etcd_status, etcd_health. */
	int (*connect)(struct etcd_client *c, struct etcd_status *out);
	int (*status)(struct etcd_client *c, struct etcd_status *out);
	int (*health)(struct etcd_client *c);

	/* etcd_get, etcd_get_prefix, etcd_range_free. */
	int (*get)(struct etcd_client *c, const char *key, struct etcd_range *out);
	int (*get_prefix)(struct etcd_client *c, const char *prefix, size_t limit,
	                  struct etcd_range *out);
	void (*range_free)(struct etcd_range *r);

	/* etcd_put, etcd_delete, etcd_delete_prefix, etcd_txn, etcd_put_if,
	 * etcd_move. */
	int (*put)(struct etcd_client *c, const char *key, const void *value,
	           size_t len, int64_t lease, int64_t *revision);
	int (*del)(struct etcd_client *c, const char *key, int64_t *deleted,
	           int64_t *revision);
	int (*del_prefix)(struct etcd_client *c, const char *prefix,
	                  int64_t *deleted, int64_t *revision);
	int (*txn)(struct etcd_client *c, const struct etcd_cmp *cmp, size_t ncmp,
	           const struct etcd_op *then_ops, size_t nthen,
	           const struct etcd_op *else_ops, size_t nelse,
	           struct etcd_txn_result *res);
	int (*put_if)(struct etcd_client *c, const char *key, const void *value,
	              size_t len, int64_t lease, int64_t mod_revision,
	              struct etcd_txn_result *res);
	int (*move)(struct etcd_client *c, const char *from, int64_t from_mod,
	            const char *to, int64_t to_mod, const void *value, size_t len,
	            int64_t lease, struct etcd_txn_result *res);

	/* etcd_lease_grant, etcd_lease_keepalive, etcd_lease_revoke,
	 * etcd_lease_ttl. */
	int (*lease_grant)(struct etcd_client *c, int64_t ttl, int64_t *id,
	                   int64_t *granted_ttl);
	int (*lease_keepalive)(struct etcd_client *c, int64_t id, int64_t *ttl);
	int (*lease_revoke)(struct etcd_client *c, int64_t id);
	int (*lease_ttl)(struct etcd_client *c, int64_t id, int64_t *remaining,
	                 int64_t *granted);

	/* etcd_watch, etcd_backoff_ms. */
	int (*watch)(struct etcd_client *c, const char *prefix, int64_t start_revision,
	             etcd_watch_fn fn, void *arg, struct etcd_watch_end *end);
	unsigned (*backoff_ms)(unsigned failures);

	/* New entries go here, at the end (see the top of this file). */

	/* sync-verify's (agreed: appended, no version change). The node
	 * records' decoders (resolver/engine/node_record_decode.h): `verify`
	 * reads the records through them. The types are node_record.h's
	 * (resolver/engine/), compiled into both sides from the same header;
	 * what they return is freed with node_summary_free() and
	 * node_detail_free() (plain malloc). */
	int (*decode_summary)(const char *p, size_t n, struct node_summary **out,
	                      char *msg, size_t msglen);
	int (*decode_detail)(const char *p, size_t n, struct node_detail **out,
	                     char *msg, size_t msglen);

	/* etcd_set_bound(): a shorter bound for the calls of a shutdown. */
	void (*set_bound)(struct etcd_client *c, unsigned total_ms);

	/* etcd_range_read(): one page of a range, for reads that page
	 * through a prefix at one revision. */
	int (*range_read)(struct etcd_client *c, const struct etcd_range_req *rq,
	                  struct etcd_range *out);

	/* etcd_client_follow(): dst's next call starts after the endpoint
	 * src's last call tried first. */
	void (*follow)(struct etcd_client *dst, const struct etcd_client *src);
};

/* True when the module's table has member (it may be older). */
#define ENVFS_SYNC_HAS(api, member) \
	((api)->size >= offsetof(struct envfs_sync_api, member) + sizeof((api)->member))

/* The module's one export. */
typedef const struct envfs_sync_api *(*envfs_sync_api_fn)(unsigned version);

/* ---- the executable's side (fs/sync/sync_load.c) --------------------------- */

/* Loads the module once per process (later calls return the same table)
 * and checks its version and size. The module is, in this order: the
 * file $PRIMUS_ENVFS_SYNC_MODULE names (tests, odd installs); the build
 * tree's, when this executable is the build tree's (an uninstalled
 * build); LIBDIR/primus-envfs/ beside this executable's BINDIR (an
 * installed tree, under DESTDIR too); PREFIX/LIBDIR/primus-envfs/. On
 * error returns a negative errno with one line in msg naming the path
 * and the reason (dlerror's words). Never unloaded: libcurl is not
 * either (etcd.h, Threads). */
int sync_load(const struct envfs_sync_api **out, char *msg, size_t msglen);
/* The path sync_load uses (or used), in a static buffer. */
const char *sync_module_path(void);

#endif
