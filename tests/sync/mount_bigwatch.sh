#!/usr/bin/env bash
# A watch that fell behind while more than the client's 64 MiB reply
# limit of events was written under the run's overrides prefix (here keys
# that are not overrides, 1.5 MB each, which every node ignores): the node
# catches up (etcd sends the batch in fragments), applies the override
# written after them, and says it is connected and where it is; a node started
# afterwards reads the prefix (keys first, values of overrides only) and
# mounts.
. "$(dirname "$0")/mountlib.sh"

OVR="/primus-envfs/runs/$RUN/overrides"
OVP="$OVR/$DIR_BA"
# The junk keys are said once each at start-up, and in status.
NODE_STDERR_ALLOW="^primus-envfs: --sync: ignoring (\"$OVR/junk/big[0-9]+\": not an override|[0-9]+ more keys that are not overrides)"

etcd_cluster_start 1
node_mount 0
node_mount 1
py_errno "put('$(node_dir 0)/ENVFS_W', 'old\n')" | grep >/dev/null -x ok || fail "node 0: write old"
node_wait_value 1 ENVFS_W old

# ---- node 1's watch falls behind by ~76 MB (base64) of events --------------------------
# Stopped, and its stream broken by a member restart: it resumes from
# where it was, and etcd sends everything since in one batch.
kill -STOP "${NODE_PID[1]}"
etcd_restart 0
t0=$(now_ms)
bulk_put 1 38 "$OVR/junk/big%d" @1500000
note "38 keys of 1.5 MB written in $(($(now_ms) - t0)) ms"
for t in 1 2 3; do
	r=$(py_errno "put('$(node_dir 0)/ENVFS_W', 'new\n')")
	[ "$r" = ok ] && break
done
[ "$r" = ok ] || fail "node 0: write new: $r"
kill -CONT "${NODE_PID[1]}"
node_wait_value 1 ENVFS_W new 20
# And it goes on applying, and says where it is: connected, not stalled,
# at or past the revision of the last write.
py_errno "put('$(node_dir 0)/ENVFS_W2', 'after\n')" | grep >/dev/null -x ok || fail "node 0: write after"
node_wait_value 1 ENVFS_W2 after
w2=$(ectl get "$OVP/ENVFS_W2" -w json | sed -n 's/.*"mod_revision":\([0-9]*\).*/\1/p')
for t in $(seq 1 100); do
	st=$(node_status 1)
	r=$(sed -n 's/^sync_revision: //p' <<<"$st")
	grep -qx "sync_connected: yes" <<<"$st" && [ "${r:-0}" -ge "$w2" ] && break
	sleep 0.1
done
grep -qx "sync_connected: yes" <<<"$st" && [ "${r:-0}" -ge "$w2" ] ||
	fail "node 1 after catching up (ENVFS_W2 at $w2): $(grep ^sync <<<"$st" | tr '\n' ';')"
grep -qx 'sync_stalled: no' <<<"$st" || fail "node 1: $(grep ^sync_stalled <<<"$st")"
# Through the watch (fragments joined), not a re-read of the prefix.
grep -qx 'sync_resyncs: 0' <<<"$st" || fail "node 1 re-read: $(grep ^sync_resyncs <<<"$st")"

# ---- a node started now reads the prefix ------------------------------------
node_mount 2
node_wait_value 2 ENVFS_W new 5
node_wait_value 2 ENVFS_W2 after 5
py_errno "put('$(node_dir 2)/ENVFS_W3', 'from2\n')" | grep >/dev/null -x ok || fail "node 2: write"
node_wait_value 0 ENVFS_W3 from2
node_wait_value 1 ENVFS_W3 from2
for i in 0 1 2; do node_umount "$i"; done
echo ok
