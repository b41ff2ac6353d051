/* syncd_status: the sync lines of MOUNT/status; see syncd.h. */
#include <stdio.h>
#include <string.h>

#include "status.h"
#include "syncd_internal.h"
#include "sync_register.h"

int syncd_status(struct syncd *sd, struct strbuf *out)
{
	struct envfs *fs = sd->fs;
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
	    (err = sb_addf(out, "sync_last_error: %s\n", sd->last_error)) < 0)
		goto out;
	/* Local: what etcd does not have from this node (secrets above all),
	 * by name only. */
	pthread_mutex_lock(&fs->ov_lock);
	for (i = 0; i < fs->ov.n && err == 0; i++) {
		const struct override *o = &fs->ov.v[i];
		char rel[1024];
		struct syncd_key *k;

		snprintf(rel, sizeof(rel), "%s/%s/%s", o->backend, o->arch, o->name);
		k = syncd_key_find(sd, rel);
		if (!o->private && k && k->present && !k->secret) {
			nremote++;
			continue;
		}
		nlocal++;
		err = sb_addf(out, "sync_local %s: %s\n", rel,
			      o->private || (k && k->secret) ? "secret, node-local" :
							      "not in etcd");
	}
	pthread_mutex_unlock(&fs->ov_lock);
	if (err == 0)
		err = sb_addf(out, "sync_overrides: local %zu remote %zu\n", nlocal, nremote);
	/* The node's lease line is sync-verify's (fs/update/sync_register.c),
	 * appended in lines of its own after this one. */
out:
	pthread_mutex_unlock(&sd->lock);
	/* sync-verify: the lease and the record. */
	if (err == 0 && sd->reg)
		err = sync_register_status(sd->reg, out);
	return err;
}
