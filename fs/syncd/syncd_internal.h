/* syncd's parts, top down (each calls only the ones below it):
 *   syncd.c         start and stop
 *   syncd_status.c  the status lines
 *   syncd_commit.c  a local change into etcd
 *   syncd_watch.c   the watch and the applier
 *   syncd_read.c    reads of the whole prefix
 *   syncd_fence.c   the fence, a write of unknown outcome
 *   syncd_items.c   a key and value as the applier's item
 *   syncd_keys.c    the keys known, status facts, the record's hook
 * Not for other files. */
#ifndef ENVFS_SYNCD_INTERNAL_H
#define ENVFS_SYNCD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "hindex.h"
#include "syncd.h"
#include "syncd_value.h"
#include "inval.h"

/* The highest revision this node has of one key (relative to the
 * overrides' prefix), and whether the key exists there. */
struct syncd_key {
	char *key;
	int64_t rev;
	bool present;
	bool secret;             /* a commit kept it node-local */
	bool node_local;         /* a commit kept it on the node: its name
	                            is node-scoped */
	bool said;               /* its key was named on stderr as ignored */
	unsigned seen;           /* resync generation that saw it */
};

/* One change read from etcd, for the applier; or a marker. */
enum syncd_item_kind { IT_CHANGE, IT_PROGRESS, IT_RESYNC_START, IT_RESYNC_END };

struct syncd_item {
	struct syncd_item *next;
	enum syncd_item_kind kind;
	char *key;               /* relative; owned */
	char *value;             /* owned; NULL: an unset */
	size_t len;
	bool drop;               /* the key was deleted */
	int64_t rev;
};

struct sync_register;

/* A fence token: kind, nonce, count and, for a commit, the writer (the
 * cause, uid and pid another node's history shows). */
#define SYNCD_TOKEN_MAX 96

/* The one fence move of a shutdown, bounded so that the daemon exits
 * within 2 s of a SIGTERM. */
#define SHUTDOWN_FENCE_MS 500

/* A commit whose answer was lost while no member could take the fence
 * move: it may still apply. Resolved (syncd_fence_resolve, syncd_fence.c) at
 * the next commit or once the watch is back. */
struct syncd_unknown {
	char *backend, *arch;    /* owned */
	char *names[2];          /* owned; NULL past n */
	size_t n;
	char token[SYNCD_TOKEN_MAX];          /* the fence value the commit puts */
};

struct syncd {
	struct envfs *fs;
	const struct sync_opts *so;          /* borrowed from the mount's options */
	const struct envfs_sync_api *api;
	struct etcd_client *cli;             /* commits (under publish_lock) */
	struct etcd_client *wcli;            /* the watch thread's */
	struct etcd_client *fcli;            /* fence moves (under publish_lock) */
	struct etcd_client *hcli;            /* the applier's: who wrote a
	                                        revision (syncd_watch.c) */
	struct etcd_client *scli;            /* the one fence move of a shutdown,
	                                        bounded short (SHUTDOWN_FENCE_MS) */
	char *fence_key;                     /* PREFIX/runs/RUN/fence/NODE */
	bool fence_existed;                  /* the node had a fence in the run
	                                        before this start: it was a
	                                        node of the run, and what its
	                                        --state shares came from or
	                                        went to etcd */
	int64_t fence_rev;                   /* its mod_revision as this node
	                                        left it (publish_lock) */
	uint64_t fence_nonce, fence_seq;     /* the tokens' (publish_lock) */
	struct syncd_unknown *unknown;       /* publish_lock; status: lock too */
	char **readopt;                      /* keys (relative) whose private
	                                        override a commit removed, for
	                                        syncd_readopt (publish_lock) */
	size_t nreadopt;
	struct syncd_item *fresh;            /* where a failed compare read the
	                                        keys, for syncd_catch_up
	                                        (publish_lock) */
	atomic_bool shutting;                /* syncd_interrupt was called */
	char *prefix;                        /* PREFIX/runs/RUN/overrides/ */
	size_t prefix_len;
	int64_t start_rev;                   /* the start-up read's revision */
	bool junk_named;                     /* a start-up read named its junk
	                                        keys (one read again does not) */
	struct syncd_item *startup;          /* what it read, until the first
	                                        load (syncd_take_startup) */
	pthread_t watcher, applier;
	bool started;

	/* Everything below: under lock. keys also only changes under
	 * publish_lock, so a commit and the applier see one order. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	struct syncd_item *head, **tail;
	struct syncd_key *keys;
	size_t nkeys, capkeys;
	struct hindex keys_index;            /* keys by key: the start-up read
	                                        of n keys costs n, not n^2 */
	unsigned resync_gen;
	bool connected;
	int64_t seen_rev;                    /* the latest revision etcd told */
	int64_t applied_rev;                 /* the latest the applier finished */
	uint64_t member;                     /* the watch's member */
	char endpoint[128];                  /* the watch's endpoint */
	char commit_endpoint[128];           /* the commits' */
	char last_error[512];
	/* last_error says this mount does not hold its node name, and the
	 * hold it compared then (0: none); status stops saying it once the
	 * register holds the name under another. */
	bool last_error_unheld;
	int64_t last_error_hold;
	char stalled[768];                   /* why the node stopped applying;
	                                        "": it applies */
	bool apply_stalled;                  /* the applier's stall, else the
	                                        watch's */
	char *stalled_key;                   /* the applier's: the change it
	                                        could not apply (owned) */
	struct etcd_watch_end *wend;         /* the watch thread's: where the
	                                        running watch is (its stack) */
	struct timespec last_applied;
	uint64_t nremote_applied, nresyncs;

	struct sync_register *reg;           /* sync-verify: the node's registry
	                                        entry (sync_register.h) */
};

/* The last error, "what: msg", one line (status' sync_last_error). */
void syncd_set_error(struct syncd *sd, const char *what, const char *msg);
/* The same for an error that holds only while this mount does not hold
 * its node name (hold: the hold compared, 0 when none): status says
 * "none" once the name is this mount's again. */
void syncd_set_error_unheld(struct syncd *sd, const char *what, const char *msg, int64_t hold);
/* Says that the node stopped applying (why, one line) or applies again
 * (why NULL): status' sync_stalled line, one line in the log at each
 * change, the node record's "behind". apply: the applier's stall (key:
 * the change it could not apply), else the watch's; clearing clears that
 * kind only. Returns true when the word changed: the caller then calls
 * syncd_published (publish_lock held). */
bool syncd_set_stalled(struct syncd *sd, bool apply, const char *key, const char *why);
/* Notes the endpoint c (cli or wcli) uses now, for status. */
void syncd_note_endpoint(struct syncd *sd, struct etcd_client *c);
/* The revision this node has of rel (lock held), or NULL; borrowed. */
struct syncd_key *syncd_key_find(struct syncd *sd, const char *rel);
/* Records rel at rev, present or not, unless it has a newer one (lock
 * held). 0 or -ENOMEM. */
int syncd_key_note(struct syncd *sd, const char *rel, int64_t rev, bool present);
/* True when name is node-scoped in w (the specs mark it `scope: node`):
 * etcd's key rel for it (another node's, or a hand-made one) is never
 * applied, and named once on stderr. Lock not held. */
bool syncd_ignore_node_key(struct syncd *sd, const struct world *w, const char *rel,
			   const char *name);
/* The key of backend/arch/name (caller-owned, free()), its part after
 * the prefix at *rel. NULL: out of memory. */
char *syncd_key_of(struct syncd *sd, const char *backend, const char *arch,
		   const char *name, const char **rel);

/* An event or a kv as an item, into *out (caller-owned:
 * syncd_items_free()). 0, -EINVAL when it is not an override (its key or
 * its value), or -ENOMEM. Says nothing: the watch notes a key it ignores
 * in status, the start-up read names it in the log. Lock not held. */
int syncd_item_of(struct syncd *sd, const char *key, const char *v, size_t vlen, bool drop,
		  int64_t rev, struct syncd_item **out);
/* Frees a list of items (next-linked); NULL is a no-op. */
void syncd_items_free(struct syncd_item *it);

/* Reads every override under sd->prefix with c (syncd_read.c), page by
 * page at one revision (*revision), into *out: IT_CHANGE items in key
 * order, caller-owned (syncd_items_free). Keys that are not overrides
 * are left out and said (startup: in the log, else in status). A failure
 * is said the same way; 0 or a negative errno. serializable: every page
 * as the member c asks has it (etcd_range_req), which may be behind: the
 * caller checks *revision. */
int syncd_read_prefix(struct syncd *sd, struct etcd_client *c, bool startup, bool serializable,
		      struct syncd_item **out, int64_t *revision);
/* Applies the n changes at items (a list of IT_CHANGE items of one
 * revision, or what a failed compare read) as one generation per
 * directory; publish_lock held. who: the writer the history notes
 * (history_note.h), or NULL when not known. The invalidations into l. */
struct hist_writer;
void syncd_apply_items(struct syncd *sd, struct syncd_item *items,
		       const struct hist_writer *who, struct inval_list *l);
/* The fence (syncd_fence.c). A token no other write has, kind 'c' (a
 * commit) or 'f' (a move): the mount's nonce and a count. */
void syncd_make_token(struct syncd *sd, char kind, char *out, size_t n);
/* The compare that makes a txn apply only while this mount holds its
 * node name, into *cmp: 0, or -ESTALE when the mount knows it does not
 * hold the name now. */
int syncd_hold_cmp(struct syncd *sd, struct etcd_cmp *cmp);
/* After a failed compare: 1 when the name is still this mount's, 0 when
 * not, or the client's error. */
int syncd_hold_check(struct syncd *sd, struct etcd_client *c);
/* Reads the fence (sd->fence_rev follows it): 1 when it holds token
 * (that commit applied, at *rev), 0 when not, or a negative errno; with
 * foreign, -ESTALE when it holds another mount's token. */
int syncd_fence_read(struct syncd *sd, struct etcd_client *c, const char *token, int64_t *rev,
		     bool foreign);
/* Moves the fence past a commit of token whose answer was lost: 0 when
 * that commit can no longer apply, 1 when it had applied (at *rev),
 * -ESTALE when this mount cannot tell (it does not hold its node name),
 * another negative errno when etcd did not take the move. */
int syncd_fence_move(struct syncd *sd, struct etcd_client *c, const char *token, int64_t *rev);
/* Records the write of names as of unknown outcome (status names it).
 * 0 or -ENOMEM. */
int syncd_unknown_note(struct syncd *sd, const char *backend, const char *arch,
		       const char *const *names, size_t n, const char *token);
/* Moves the fence at start: a request a previous mount of this node
 * left in a member can no longer apply. 0 or -EIO (message printed). */
int syncd_fence_init(struct syncd *sd);
/* Learns the outcome of sd->unknown, when etcd answers (publish_lock
 * held). quick: the applier's try, bounded by SHUTDOWN_FENCE_MS rather
 * than --sync-timeout (local writes wait behind it). 0 when there is
 * none left. */
int syncd_fence_resolve(struct syncd *sd, bool quick);

/* At the end: logs the write of unknown outcome still pending, and
 * forgets it. */
void syncd_unknown_release(struct syncd *sd);

/* The threads (syncd_watch.c); arg is the syncd. */
void *syncd_watch_main(void *arg);
void *syncd_apply_main(void *arg);

#endif
