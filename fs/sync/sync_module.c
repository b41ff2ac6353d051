/* The module's one export: the table of sync_api.h over the etcd client
 * of etcd.h. Built into primus-envfs-sync.so only. */
#include <errno.h>
#include <stdio.h>

#include "etcd.h"
#include "node_record_decode.h"

/* The table's open: the sync options as the client's. Attempts of at
 * most 1000 ms, or half the bound when that is less, so that a silent
 * member leaves time for another (etcd.h, Bounds). */
static int sync_open(struct etcd_client **out, const struct sync_opts *o,
                     char *msg, size_t msglen)
{
	struct etcd_opts eo = ETCD_OPTS_INIT;
	unsigned total = o->timeout_ms ? o->timeout_ms : SYNC_DEFAULT_TIMEOUT_MS;

	if (!o->endpoints) {
		if (msglen)
			snprintf(msg, msglen, "etcd: no endpoints");
		return -EINVAL;
	}
	eo.total_ms = total;
	eo.attempt_ms = total / 2 < 1000 ? total / 2 : 1000;
	if (eo.attempt_ms < 250)
		eo.attempt_ms = total < 250 ? total : 250;
	eo.ca_file = o->ca_file;
	eo.cert_file = o->cert_file;
	eo.key_file = o->key_file;
	eo.user = o->user;
	eo.password = o->password;
	return etcd_client_new(out, o->endpoints, &eo, msg, msglen);
}

static const struct envfs_sync_api api = {
	.version = ENVFS_SYNC_API_VERSION,
	.size = sizeof(struct envfs_sync_api),
	.open = sync_open,
	.dup = etcd_client_dup,
	.close = etcd_client_free,
	.errmsg = etcd_errmsg,
	.endpoint = etcd_endpoint,
	.interrupt = etcd_interrupt,
	.stats = etcd_stats,
	.connect = etcd_connect,
	.status = etcd_status,
	.health = etcd_health,
	.get = etcd_get,
	.get_prefix = etcd_get_prefix,
	.range_free = etcd_range_free,
	.put = etcd_put,
	.del = etcd_delete,
	.del_prefix = etcd_delete_prefix,
	.txn = etcd_txn,
	.put_if = etcd_put_if,
	.move = etcd_move,
	.lease_grant = etcd_lease_grant,
	.lease_keepalive = etcd_lease_keepalive,
	.lease_revoke = etcd_lease_revoke,
	.lease_ttl = etcd_lease_ttl,
	.watch = etcd_watch,
	.backoff_ms = etcd_backoff_ms,
	.decode_summary = record_decode_summary,
	.decode_detail = record_decode_detail,
	.set_bound = etcd_set_bound,
	.range_read = etcd_range_read,
	.follow = etcd_client_follow,
};

const struct envfs_sync_api *envfs_sync_api(unsigned version);

const struct envfs_sync_api *envfs_sync_api(unsigned version)
{
	return version == ENVFS_SYNC_API_VERSION ? &api : NULL;
}
