#!/usr/bin/env bash
# A write whose outcome is unknown on a run where nothing else happens:
# the only member stopped for less than the watch's probe, so the watch
# never drops and no change arrives. The node must still learn the
# outcome on its own once etcd answers (docs/SYNC.md: a try every second
# while the watch answers), not only at the next local commit: a script
# that waits for status to stop naming the write, as `set` advises, would
# wait for ever (last attack, F1).
NODE_STDERR_ALLOW='--sync: the outcome of .* is known now'
. "$(dirname "$0")/mountlib.sh"

etcd_cluster_start 1
# A second node of the run: what it does wakes node 0's applier now and
# then, which must not put off its try every time (seen with two nodes).
node_mount 0 --sync-timeout 1000
node_mount 1 --sync-timeout 1000

set_rc base
[ "$RC" = 0 ] || fail "set with a prompt cluster: exit $RC: $(cat "$TMP/set.err")"
etcd_stop 0
set_rc lost
etcd_cont 0
[ "$RC" = 3 ] || fail "set with the member stopped: exit $RC, want 3 (outcome unknown): $(cat "$TMP/set.err")"
node_status 0 | grep >/dev/null -x "sync_write_unknown: $DIR_BA NCCL_DEBUG" ||
	fail "outcome unknown, but status does not name the write: $(node_status 0 | grep '^sync')"
node_wait_learned 0 "an idle run, its member back"
grep -q 'the outcome of .* is known now' "${NODE_ERR_FILES[0]}" ||
	fail "status no longer names the write, but the log does not say what became of it"
in_etcd=$(ectl get "/primus-envfs/runs/$RUN/overrides/$DIR_BA/NCCL_DEBUG" --print-value-only)
in_etcd=${in_etcd#=}
case $in_etcd in base | lost) ;; *) fail "etcd holds $in_etcd, want base or lost" ;; esac
node_wait_value 0 NCCL_DEBUG "$in_etcd"
node_wait_value 1 NCCL_DEBUG "$in_etcd"
echo ok
