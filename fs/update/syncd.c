/* The mount's sync with etcd; see syncd.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncd.h"

struct syncd {
	struct envfs *fs;
	const struct sync_opts *so;          /* borrowed from the mount's options */
	const struct envfs_sync_api *api;
	struct etcd_client *cli;             /* commits (under publish_lock) */
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
	*out = sd;
	sd = NULL;
out:
	syncd_free(sd);
	return err;
}

void syncd_free(struct syncd *sd)
{
	if (!sd)
		return;
	if (sd->cli)
		sd->api->close(sd->cli);
	free(sd);
}
