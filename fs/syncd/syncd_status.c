/* syncd_status: the sync lines of MOUNT/status; see syncd.h. */
#include <stdio.h>
#include <string.h>

#include "epoch.h"
#include "snapshot.h"
#include "status.h"
#include "syncd_internal.h"
#include "text.h"
#include "sync_register.h"

/* Whether e serves o's variable as node-scoped (--state may hold an
 * override of it that no commit of this mount kept back). */
static bool node_scoped(const struct epoch *e, const struct override *o)
{
	const struct epoch_dir *d = e ? epoch_find_dir(e, o->backend, o->arch) : NULL;
	const struct snap_var *v = d ? snapshot_find(d->snap, o->name, strlen(o->name)) : NULL;

	return v && v->node;
}

/* sd->last_error as status shows it (under sd->lock): a mount that lost
 * its node name and holds it again (a new hold: a later claim) no longer
 * says that it does not; a later error replaces the message anyway. */
static const char *last_error(const struct syncd *sd)
{
	int64_t hold = sd->reg ? sync_register_hold(sd->reg) : 0;

	if (sd->last_error_unheld && hold && hold != sd->last_error_hold)
		return "none";
	return sd->last_error;
}

int syncd_status(struct syncd *sd, struct strbuf *out)
{
	struct envfs *fs = sd->fs;
	/* Which variables are node-scoped: the epoch served says. */
	struct epoch *e = epoch_current(&fs->state);
	size_t i, nremote = 0, nlocal = 0;
	int err;

	pthread_mutex_lock(&sd->lock);
	if ((err = sb_addf(out, "sync: %s\n", sd->so->endpoints)) < 0 ||
	    (err = sb_addf(out, "sync_run: %s\n", sd->so->run)) < 0 ||
	    (err = sb_addf(out, "sync_node: %s\n", sd->so->node)) < 0 ||
	    (err = sb_addf(out, "sync_endpoint: %s\n", sd->endpoint)) < 0 ||
	    (err = sb_addf(out, "sync_member: %016llx\n", (unsigned long long)sd->member)) < 0 ||
	    (err = sb_addf(out, "sync_commit_endpoint: %s\n", sd->commit_endpoint)) < 0 ||
	    (err = sb_addf(out, "sync_connected: %s\n", sd->connected ? "yes" : "no")) < 0 ||
	    (err = sb_addf(out, "sync_revision: %lld\n", (long long)sd->applied_rev)) < 0 ||
	    (err = sb_addf(out, "sync_lag: %lld\n",
			   (long long)(sd->seen_rev > sd->applied_rev ?
				       sd->seen_rev - sd->applied_rev : 0))) < 0 ||
	    (err = (sd->last_applied.tv_sec ?
		    status_add_time(out, "sync_last_applied", &sd->last_applied) :
		    sb_adds(out, "sync_last_applied: never\n"))) < 0 ||
	    (err = sb_addf(out, "sync_resyncs: %llu\n", (unsigned long long)sd->nresyncs)) < 0 ||
	    (err = sb_addf(out, "sync_stalled: %s\n", sd->stalled[0] ? sd->stalled : "no")) < 0 ||
	    (err = sb_addf(out, "sync_last_error: %s\n", last_error(sd))) < 0)
		goto out;
	/* A write that got ETIMEDOUT and may still be applied. */
	for (i = 0; sd->unknown && i < sd->unknown->n && err == 0; i++) {
		const struct syncd_unknown *u = sd->unknown;

		if ((err = sb_adds(out, "sync_write_unknown: ")) < 0 ||
		    (err = text_escape(out, u->backend, strlen(u->backend))) < 0 ||
		    (err = sb_adds(out, "/")) < 0 ||
		    (err = text_escape(out, u->arch, strlen(u->arch))) < 0 ||
		    (err = sb_adds(out, " ")) < 0 ||
		    (err = text_escape(out, u->names[i], strlen(u->names[i]))) < 0)
			goto out;
		err = sb_adds(out, "\n");
	}
	if (err < 0)
		goto out;
	/* Local: what etcd does not have from this node (secrets above all),
	 * by name only. */
	pthread_mutex_lock(&fs->ov_lock);
	for (i = 0; i < fs->ov.n && err == 0; i++) {
		const struct override *o = &fs->ov.v[i];
		char rel[1024];
		struct syncd_key *k;
		bool secret, node;

		snprintf(rel, sizeof(rel), "%s/%s/%s", o->backend, o->arch, o->name);
		k = syncd_key_find(sd, rel);
		secret = o->private || (k && k->secret);
		node = (k && k->node_local) || node_scoped(e, o);
		/* A node-scoped name's key may be in etcd (another node's,
		 * ignored): this node's override is still its own. */
		if (!secret && !node && k && k->present) {
			nremote++;
			continue;
		}
		nlocal++;
		err = sb_addf(out, "sync_local %s: %s\n", rel,
			      secret ? "secret, node-local" :
			      node ? "scope node, kept on this node" : "not in etcd");
	}
	pthread_mutex_unlock(&fs->ov_lock);
	if (err == 0)
		err = sb_addf(out, "sync_overrides: local %zu remote %zu\n", nlocal, nremote);
	/* The node's lease line is sync-verify's (fs/syncd/sync_register.c),
	 * appended in lines of its own after this one. */
out:
	pthread_mutex_unlock(&sd->lock);
	epoch_unref(e);
	/* sync-verify: the lease and the record. */
	if (err == 0 && sd->reg)
		err = sync_register_status(sd->reg, out);
	return err;
}
