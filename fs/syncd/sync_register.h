/* sync_register: this node's entry in the run's registry (docs/SYNC.md): the
 * record `primus-envfs verify` reads (node_record.h), under a lease of
 * its own, for as long as the mount serves.
 *
 *   PREFIX/runs/RUN/nodes/<node>                       the summary
 *   PREFIX/runs/RUN/node-dirs/<node>/<backend>/<arch>  the details
 *   PREFIX/runs/RUN/node-names/<node>                  the name's hold
 *
 * A node name is held by one mount at a time: the start-up claim creates
 * the hold key only where it does not exist, under the mount's lease, and
 * every record put compares it (sync_register_claim).
 *
 * A thread of its own (with its own etcd client) grants the lease (TTL
 * SYNC_LEASE_TTL s), renews it every third of that, and puts the latest
 * record after every publish (sync_register_publish builds it under
 * publish_lock, CPU only; the thread puts it): only its keys whose bytes
 * changed, none when none did (the lease keeps the others). The first
 * put waits a random part of a second and a failed call is retried after
 * a random, growing wait (register_backoff.h), so that the nodes of a job
 * that start together do not call etcd in step. A lease that expired
 * while etcd was out of reach is granted again and the record put again;
 * an unmount revokes it, so the node leaves the registry at once rather
 * than after the TTL. Nothing here waits on etcd in a request handler or
 * under publish_lock. */
#ifndef ENVFS_SYNC_REGISTER_H
#define ENVFS_SYNC_REGISTER_H

#include <stdint.h>

#include "epoch.h"
#include "register_backoff.h"
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
/* Takes the node name for the mount on mountpoint, before it serves:
 * grants the lease and creates the hold key where none exists. A name
 * held by another lease is waited for while that lease may be a dead
 * mount's (until it is not renewed for its TTL, SYNC_LEASE_TTL + 1 s at
 * most, said on stderr); a holder that renews it is alive: -EEXIST, with
 * a line naming the name and the holder (host, pid, mount point). -EIO
 * (etcd failed, said on stderr) or -ENOMEM. A busy cluster's failures are
 * tried again as sr says (start_retry_next; NULL: never), the stderr line
 * only for the last. */
int sync_register_claim(struct sync_register *r, const char *mountpoint,
			struct start_retry *sr);
/* The revision of the claim's write, after a successful
 * sync_register_claim and before sync_register_start (the thread's then):
 * a write this mount made after it started, so higher than the revision
 * of every write etcd acknowledged before. */
int64_t sync_register_claim_revision(const struct sync_register *r);
/* Whether the mount holds its node name now, as far as it knows: the
 * create_revision of its hold key (sync_register_hold_key), or 0 when it
 * does not (its lease ran out, and it has not taken the name again). Any
 * thread. A commit compares the key's create_revision with it in its txn,
 * so one that lost the name applies nowhere even before the thread
 * notices. */
int64_t sync_register_hold(const struct sync_register *r);
/* PREFIX/runs/RUN/node-names/NODE; lives as long as r. */
const char *sync_register_hold_key(const struct sync_register *r);
/* Starts the thread (after daemonizing). 0 or a negative errno. */
int sync_register_start(struct sync_register *r);
/* e was just published, and revision is the last etcd revision the node
 * applied; behind (NULL: none) says why the node stopped applying the
 * run's changes: builds the record of e's directories for the thread to
 * put. A record that cannot be built is said in status (and in the log
 * once). */
void sync_register_publish(struct sync_register *r, const struct epoch *e,
			   int64_t revision, const char *behind);
/* Appends the "sync_lease:" and "sync_record:" lines of status. Never
 * waits on etcd. 0 or -ENOMEM. */
int sync_register_status(struct sync_register *r, struct strbuf *out);
/* Stops the thread, revokes the lease (one bounded call) and frees r.
 * NULL is a no-op. */
void sync_register_free(struct sync_register *r);

#endif
