/* The mount's sync with etcd; see syncd.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncd.h"
#include "sync_register.h"

struct syncd {
	struct envfs *fs;
	const struct sync_opts *so;          /* borrowed from the mount's options */
	const struct envfs_sync_api *api;
	struct etcd_client *cli;             /* commits (under publish_lock) */
	struct sync_register *reg;           /* the node's registry entry
	                                        (sync-verify's) */
	int64_t applied_revision;            /* the last revision applied */
};

int syncd_new(struct envfs *fs, const struct sync_opts *so, struct syncd **out)
{
	struct syncd *sd = calloc(1, sizeof(*sd));
	char msg[1024];
	int err;

	*out = NULL;
	if (!sd) {
		fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	sd->fs = fs;
	sd->so = so;
	if ((err = sync_load(&sd->api, msg, sizeof(msg))) < 0 ||
	    (err = sd->api->open(&sd->cli, so, msg, sizeof(msg))) < 0) {
		fprintf(stderr, "primus-envfs: --sync: %s\n", msg);
		goto out;
	}
	if ((err = sd->api->connect(sd->cli, NULL)) < 0) {
		fprintf(stderr, "primus-envfs: --sync %s: %s\n", so->endpoints,
			sd->api->errmsg(sd->cli));
		goto out;
	}
	/* ---- sync-verify: the registration, with a client of its own ---- */
	{
		struct etcd_client *rc;

		if ((err = sd->api->dup(&rc, sd->cli)) < 0 ||
		    (err = sync_register_new(sd->api, rc, so, &sd->reg)) < 0) {
			if (err == -ENOMEM)
				fprintf(stderr, "primus-envfs: %s\n", strerror(ENOMEM));
			goto out;
		}
	}
	/* ---- end sync-verify ---- */
	*out = sd;
	sd = NULL;
out:
	syncd_free(sd);
	return err;
}

/* ---- sync-verify: the registration's calls ---- */
int syncd_start(struct syncd *sd)
{
	return sync_register_start(sd->reg);
}

void syncd_published(struct syncd *sd)
{
	struct epoch *e;

	if (!sd || !sd->reg)
		return;
	e = epoch_current(&sd->fs->state);
	sync_register_publish(sd->reg, e, sd->applied_revision);
	epoch_unref(e);
}

int syncd_status(struct syncd *sd, struct strbuf *out)
{
	return sd && sd->reg ? sync_register_status(sd->reg, out) : 0;
}
/* ---- end sync-verify ---- */

void syncd_free(struct syncd *sd)
{
	if (!sd)
		return;
	sync_register_free(sd->reg);
	if (sd->cli)
		sd->api->close(sd->cli);
	free(sd);
}
