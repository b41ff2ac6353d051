/* sync_register: this node's entry in the run's registry (issue 16): the
 * record `primus-envfs verify` reads (node_record.h), under a lease of
 * its own, for as long as the mount serves.
 *
 *   PREFIX/runs/RUN/nodes/<node>                       the summary
 *   PREFIX/runs/RUN/node-dirs/<node>/<backend>/<arch>  the details
 *
 * A thread of its own (with its own etcd client) grants the lease (TTL
 * SYNC_LEASE_TTL s), renews it every third of that, and puts the latest
 * record after every publish (sync_register_publish builds it under
 * publish_lock, CPU only; the thread puts it). A lease that expired
 * while etcd was out of reach is granted again and the record put again;
 * an unmount revokes it, so the node leaves the registry at once rather
 * than after the TTL. Nothing here waits on etcd in a request handler or
 * under publish_lock. */
#ifndef ENVFS_SYNC_REGISTER_H
#define ENVFS_SYNC_REGISTER_H

#include <stdint.h>

#include "epoch.h"
#include "strbuf.h"
#include "sync_api.h"

#define SYNC_LEASE_TTL 10

struct sync_register;

/* A registration of so->node on so's run through api, with cli, a client
 * of its own (taken over, also on failure). -EINVAL with one line on
 * stderr for a node name that cannot be a key (node_name_check), or
 * -ENOMEM. *out is caller-owned: sync_register_free(). */
int sync_register_new(const struct envfs_sync_api *api, struct etcd_client *cli,
		      const struct sync_opts *so, struct sync_register **out);
/* Starts the thread (after daemonizing). 0 or a negative errno. */
int sync_register_start(struct sync_register *r);
/* e was just published, and revision is the last etcd revision the node
 * applied: builds the record of e's directories for the thread to put.
 * A record that cannot be built is said in status (and on stderr once). */
void sync_register_publish(struct sync_register *r, const struct epoch *e,
			   int64_t revision);
/* Appends the "sync_lease:" and "sync_record:" lines of status. Never
 * waits on etcd. 0 or -ENOMEM. */
int sync_register_status(struct sync_register *r, struct strbuf *out);
/* Stops the thread, revokes the lease (one bounded call) and frees r.
 * NULL is a no-op. */
void sync_register_free(struct sync_register *r);

#endif
