#!/usr/bin/env bash
# More keys under the run's overrides prefix than one etcd range returns
# (10,000): 9,999 overrides of another directory sort first. A re-read
# after a compaction pages through the whole prefix, so the overrides
# after the first 10,000 keys stay, and a node started then reads them
# all.
. "$(dirname "$0")/mountlib.sh"

OVR="/primus-envfs/runs/$RUN/overrides"
OVP="$OVR/$DIR_BA"
NODE_STDERR_ALLOW='^$'

etcd_cluster_start 1
t0=$(now_ms)
bulk_put 1 9998 "$OVR/aaa/gfx0/V%05d" =1 100
note "9,998 overrides of aaa/gfx0 written in $(($(now_ms) - t0)) ms"
ectl put "$OVP/ENVFS_KEEP" "=keep" >/dev/null
ectl put "$OVP/ENVFS_GONE" "=gone" >/dev/null
t0=$(now_ms)
node_mount 0
note "node 0 served after $(($(now_ms) - t0)) ms (start-up read of 10,000 keys)"
node_mount 1
node_wait_value 1 ENVFS_KEEP keep 5
node_wait_value 1 ENVFS_GONE gone 5

# ---- a compaction while node 1 is stopped -------------------------------------
kill -STOP "${NODE_PID[1]}"
etcd_restart 0
bulk_put 9999 10000 "$OVR/aaa/gfx0/V%05d" =1
ectl put "$OVP/ENVFS_C" "=new" >/dev/null
ectl del "$OVP/ENVFS_GONE" >/dev/null
etcd_compact
note "$(ectl get "$OVR/" --prefix --count-only -w json | sed 's/.*"count":\([0-9]*\).*/\1/') keys, compacted at $(etcd_revision)"
kill -CONT "${NODE_PID[1]}"
node_wait_value 1 ENVFS_C new 20
node_wait_value 1 ENVFS_GONE "<absent>" 5
node_wait_value 1 ENVFS_KEEP keep 5
node_status 1 | grep >/dev/null -E "^sync_resyncs: [1-9]" || fail "node 1 did not re-read: $(node_status 1 | grep ^sync)"
for i in 0 1; do
	for t in $(seq 1 100); do
		node_status "$i" | grep >/dev/null -x 'sync_overrides: local 0 remote 10002' && break
		sleep 0.1
	done
	node_status "$i" | grep >/dev/null -x 'sync_overrides: local 0 remote 10002' ||
		fail "node $i: $(node_status "$i" | grep ^sync_overrides)"
done

# ---- a node started now reads every key -----------------------------------------
t0=$(now_ms)
node_mount 2
note "node 2 served after $(($(now_ms) - t0)) ms (start-up read of 10,002 keys)"
node_wait_value 2 ENVFS_KEEP keep 5
node_wait_value 2 ENVFS_C new 5
node_wait_value 2 ENVFS_GONE "<absent>" 5
node_status 2 | grep >/dev/null -x 'sync_overrides: local 0 remote 10002' ||
	fail "node 2: $(node_status 2 | grep ^sync_overrides)"
for i in 0 1 2; do node_umount "$i"; done
echo ok
