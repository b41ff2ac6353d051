/* syncd's parts (syncd.c: start and stop, keys; syncd_commit.c;
 * syncd_watch.c: the watch and the applier; syncd_status.c). Not for
 * other files. */
#ifndef ENVFS_SYNCD_INTERNAL_H
#define ENVFS_SYNCD_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "syncd.h"
#include "syncd_value.h"

/* The highest revision this node has of one key (relative to the
 * overrides' prefix), and whether the key exists there. */
struct syncd_key {
	char *key;
	int64_t rev;
	bool present;
	bool secret;             /* a commit kept it node-local */
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

struct syncd {
	struct envfs *fs;
	const struct sync_opts *so;          /* borrowed from the mount's options */
	const struct envfs_sync_api *api;
	struct etcd_client *cli;             /* commits (under publish_lock) */
	struct etcd_client *wcli;            /* the watch thread's */
	char *prefix;                        /* PREFIX/runs/RUN/overrides/ */
	size_t prefix_len;
	int64_t start_rev;                   /* the start-up read's revision */
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
	unsigned resync_gen;
	bool connected;
	int64_t seen_rev;                    /* the latest revision etcd told */
	int64_t applied_rev;                 /* the latest the applier finished */
	uint64_t member;                     /* the watch's member */
	char endpoint[128];                  /* the watch's endpoint */
	char commit_endpoint[128];           /* the commits' */
	char last_error[512];
	struct timespec last_applied;
	uint64_t nremote_applied, nresyncs;

	struct sync_register *reg;           /* sync-verify: the node's registry
	                                        entry (sync_register.h) */
};

/* The last error, "what: msg", one line (status' sync_last_error). */
void syncd_set_error(struct syncd *sd, const char *what, const char *msg);
/* Notes the endpoint c (cli or wcli) uses now, for status. */
void syncd_note_endpoint(struct syncd *sd, struct etcd_client *c);
/* The revision this node has of rel (lock held), or NULL; borrowed. */
struct syncd_key *syncd_key_find(struct syncd *sd, const char *rel);
/* Records rel at rev, present or not, unless it has a newer one (lock
 * held). 0 or -ENOMEM. */
int syncd_key_note(struct syncd *sd, const char *rel, int64_t rev, bool present);
/* The key of backend/arch/name (caller-owned, free()), its part after
 * the prefix at *rel. NULL: out of memory. */
char *syncd_key_of(struct syncd *sd, const char *backend, const char *arch,
		   const char *name, const char **rel);

/* The threads (syncd_watch.c); arg is the syncd. */
void *syncd_watch_main(void *arg);
void *syncd_apply_main(void *arg);

#endif
