#!/usr/bin/env bash
# A write whose outcome is unknown, on a cluster that answers the watch at
# once but takes 0.7 s for every txn (tests/sync/lagproxy.py in front
# of the member). The node must still learn the outcome: its tries while
# the watch answers wait the whole --sync-timeout, not only the 500 ms of
# the try made when the watch comes back. With that short bound alone,
# every try gave up and status named the write for good (seen in CI as
# sync_quorum_eio's "the outcome was never learned", at load).
NODE_STDERR_ALLOW='--sync: the outcome of .* is known now'
. "$(dirname "$0")/mountlib.sh"

etcd_cluster_start 1
proxy_start 0
NODE_ENDPOINTS="127.0.0.1:$PROXY_PORT"
node_mount 0 --sync-timeout 2000

set_rc base
[ "$RC" = 0 ] || fail "set with a prompt cluster: exit $RC: $(cat "$TMP/set.err")"

# Every txn waits 5 s in the proxy: the write's answer is lost (the
# client gives up within twice its 2 s bound) though the txn may apply.
echo 5000 >"$LAG/txn_delay_ms"
set_rc lost
[ "$RC" = 3 ] || fail "a txn slower than the bound: set exit $RC, want 3 (outcome unknown): $(cat "$TMP/set.err")"
node_status 0 | grep >/dev/null -x "sync_write_unknown: $DIR_BA NCCL_DEBUG" ||
	fail "outcome unknown, but status does not name the write: $(node_status 0 | grep '^sync')"

# Now a txn takes 0.7 s: longer than the quick try's 500 ms, within one
# attempt of the 2 s bound (the client gives an attempt about half).
echo 700 >"$LAG/txn_delay_ms"
node_wait_learned 0 "txns of 0.7 s against a 2 s bound"
rm -f "$LAG/txn_delay_ms"
in_etcd=$(ectl get "/primus-envfs/runs/$RUN/overrides/$DIR_BA/NCCL_DEBUG" --print-value-only)
in_etcd=${in_etcd#=}
note "the write of unknown outcome: etcd holds $in_etcd"
case $in_etcd in base | lost) ;; *) fail "etcd holds $in_etcd, want base or lost" ;; esac
node_wait_value 0 NCCL_DEBUG "$in_etcd"
echo ok
