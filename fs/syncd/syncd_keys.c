/* syncd_keys: what the daemon knows of the run's keys (the revision and
 * presence of each, by its path under the prefix) and the facts status
 * shows (the last error, a stall, the endpoint each client talks to);
 * and what the node record is told after every publish. Every other
 * file of the sync calls down to these; they call nothing of theirs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "log.h"
#include "resolve.h"
#include "sync_register.h"
#include "syncd_internal.h"
#include "text.h"

static void set_error(struct syncd *sd, const char *what, const char *msg, bool unheld,
		      int64_t hold)
{
	size_t n = strlen(what);

	pthread_mutex_lock(&sd->lock);
	sd->last_error_unheld = unheld;
	sd->last_error_hold = hold;
	/* Cut to fit: the start of a message says the most. */
	snprintf(sd->last_error, sizeof(sd->last_error), "%s: ", what);
	if (n + 2 < sizeof(sd->last_error))
		snprintf(sd->last_error + n + 2, sizeof(sd->last_error) - n - 2, "%s", msg);
	/* One line in status. */
	sd->last_error[strcspn(sd->last_error, "\n")] = '\0';
	pthread_mutex_unlock(&sd->lock);
}

void syncd_set_error(struct syncd *sd, const char *what, const char *msg)
{
	set_error(sd, what, msg, false, 0);
}

void syncd_set_error_unheld(struct syncd *sd, const char *what, const char *msg, int64_t hold)
{
	set_error(sd, what, msg, true, hold);
}

bool syncd_set_stalled(struct syncd *sd, bool apply, const char *key, const char *why)
{
	bool changed = false;
	char *k = NULL;

	if (why && key && !(k = strdup(key)))
		return false;
	pthread_mutex_lock(&sd->lock);
	if (!why) {
		if (sd->stalled[0] && sd->apply_stalled == apply) {
			sd->stalled[0] = '\0';
			free(sd->stalled_key);
			sd->stalled_key = NULL;
			changed = true;
			log_notice("--sync: node %s applies the run's changes again",
				sd->so->node);
		}
	} else if (strcmp(sd->stalled, why)) {
		changed = !sd->stalled[0];
		snprintf(sd->stalled, sizeof(sd->stalled), "%s", why);
		sd->stalled[strcspn(sd->stalled, "\n")] = '\0';
		sd->apply_stalled = apply;
		free(sd->stalled_key);
		sd->stalled_key = k;
		k = NULL;
		if (changed)
			log_err("--sync: node %s stopped applying the run's "
				"changes: %s", sd->so->node, sd->stalled);
	}
	pthread_mutex_unlock(&sd->lock);
	free(k);
	return changed;
}

void syncd_note_endpoint(struct syncd *sd, struct etcd_client *c)
{
	char *to = c == sd->cli ? sd->commit_endpoint : sd->endpoint;

	pthread_mutex_lock(&sd->lock);
	snprintf(to, sizeof(sd->endpoint), "%s", sd->api->endpoint(c));
	pthread_mutex_unlock(&sd->lock);
}

struct syncd_key *syncd_key_find(struct syncd *sd, const char *rel)
{
	struct hindex_probe p;
	size_t i;

	for (i = hindex_first(&sd->keys_index, hindex_hash(rel, strlen(rel), HINDEX_SEED), &p);
	     i != HINDEX_NONE; i = hindex_next(&sd->keys_index, &p))
		if (!strcmp(sd->keys[i].key, rel))
			return &sd->keys[i];
	return NULL;
}

/* Records rel at rev (lock held). */
int syncd_key_note(struct syncd *sd, const char *rel, int64_t rev, bool present)
{
	struct syncd_key *k = syncd_key_find(sd, rel);

	if (!k) {
		if (GROW(sd->keys, sd->capkeys, sd->nkeys, 16) < 0)
			return -ENOMEM;
		k = &sd->keys[sd->nkeys];
		if (!(k->key = strdup(rel)))
			return -ENOMEM;
		if (hindex_insert(&sd->keys_index, hindex_hash(rel, strlen(rel), HINDEX_SEED),
				  sd->nkeys) < 0) {
			free(k->key);
			return -ENOMEM;
		}
		k->seen = 0;
		k->rev = 0;
		k->present = k->secret = k->node_local = k->said = false;
		sd->nkeys++;
	}
	if (rev >= k->rev) {
		k->rev = rev;
		k->present = present;
	}
	k->seen = sd->resync_gen;
	return 0;
}

/* The key of backend/arch/name (caller-owned), its relative part at
 * *rel. */
char *syncd_key_of(struct syncd *sd, const char *backend, const char *arch,
		   const char *name, const char **rel)
{
	char *k;

	if (asprintf(&k, "%s%s/%s/%s", sd->prefix, backend, arch, name) < 0)
		return NULL;
	*rel = k + sd->prefix_len;
	return k;
}

bool syncd_ignore_node_key(struct syncd *sd, const struct world *w, const char *rel,
			   const char *name)
{
	struct strbuf q = STRBUF_INIT;
	struct syncd_key *k;
	bool say;
	char *key;

	if (!w || !world_node_scoped(w, name))
		return false;
	pthread_mutex_lock(&sd->lock);
	if (!(k = syncd_key_find(sd, rel)) && syncd_key_note(sd, rel, 0, false) == 0)
		k = syncd_key_find(sd, rel);
	/* Without memory to remember it, said again next time. */
	say = !k || !k->said;
	if (k)
		k->said = true;
	pthread_mutex_unlock(&sd->lock);
	if (!say)
		return true;
	/* Quoted and escaped: a key is any bytes (its prefix is the user's). */
	if (asprintf(&key, "%s%s", sd->prefix, rel) >= 0) {
		if (text_quote(&q, key, strlen(key), 300) == 0)
			log_warn("--sync: ignoring %s: %s is node-scoped (scope: node), each node "
				 "keeps its own (docs/SYNC.md)", sb_str(&q), name);
		free(key);
	}
	sb_release(&q);
	return true;
}

/* ==== NODE REGISTRATION (sync-verify, fs/syncd/sync_register.c) ==========
 * Called after every publish of new snapshots: at start, after a reload
 * and after every commit, local or from etcd, with publish_lock held but
 * at start. The registration puts the node record (node_record_build)
 * under its lease; it must not wait on etcd here (hand the work to its
 * own thread). sync-verify's calls go in lines of their own below. */
void syncd_published(struct syncd *sd)
{
	char behind[sizeof(sd->stalled)];
	struct epoch *e;
	int64_t rev;

	if (!sd || !sd->reg)
		return;
	pthread_mutex_lock(&sd->lock);
	rev = sd->applied_rev;
	memcpy(behind, sd->stalled, sizeof(behind));
	pthread_mutex_unlock(&sd->lock);
	e = epoch_current(&sd->fs->state);
	sync_register_publish(sd->reg, e, rev, behind[0] ? behind : NULL);
	epoch_unref(e);
}
/* ==== end of NODE REGISTRATION ========================================== */
