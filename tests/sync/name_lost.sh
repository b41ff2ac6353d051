#!/usr/bin/env bash
# A mount that lost its node name commits nothing. Node 0 stops (SIGSTOP)
# past its lease; another mount takes the name node0 and moves the fence;
# node 0 comes back. Before, its next write was acknowledged (close() 0),
# shared with the run, and moved the fence the new holder's commits
# compare: two mounts then wrote one fence, and a write whose answer was
# lost could be told "applied nowhere" when it had applied (found by an
# attack on the many-node path). Now each commit and each fence move
# compares the name's hold (node-names/NODE, its create_revision): the
# write fails with EIO, touches no key, and status says why; the holder
# goes on writing.
NODE_STDERR_ALLOW='--sync-node node0: the name was taken by another mount of run .* while this one.s lease had run out'
. "$(dirname "$0")/mountlib.sh"

etcd_cluster_start 1
fence_key="/primus-envfs/runs/$RUN/fence/node0"
ov="/primus-envfs/runs/$RUN/overrides/$DIR_BA"
node_mount 0
py_errno "put('$(node_dir 0)/NCCL_DEBUG', 'INFO\n')" | grep >/dev/null -x ok || fail "node 0: the first write"

kill -STOP "${NODE_PID[0]}"
# The hold key goes with node 0's lease (TTL 10 s): an event, with a hang guard.
for t in $(seq 1 $((400 * NODE_WAIT_SCALE))); do
	[ -z "$(ectl get "/primus-envfs/runs/$RUN/node-names/node0" --keys-only)" ] && break
	sleep 0.05
done
[ -z "$(ectl get "/primus-envfs/runs/$RUN/node-names/node0" --keys-only)" ] ||
	fail "node 0's hold outlived its lease"
node_mount 1 --sync-node node0
fence=$(ectl get "$fence_key" --print-value-only)
[ -n "$fence" ] || fail "the new holder did not move the fence"

kill -CONT "${NODE_PID[0]}"
got=$(py_errno "put('$(node_dir 0)/NCCL_DEBUG', 'WARN\n')")
[ "$got" = EIO ] || fail "a write on the mount that lost its name: close() gave $got, want EIO"
[ "$(ectl get "$fence_key" --print-value-only)" = "$fence" ] ||
	fail "the mount that lost its name moved the holder's fence: $(ectl get "$fence_key" --print-value-only)"
ectl get "$ov/NCCL_DEBUG" --print-value-only | grep -q INFO ||
	fail "the refused write reached etcd: $(ectl get "$ov/NCCL_DEBUG" --print-value-only)"
[ "$(node_read 0 NCCL_DEBUG)" = INFO ] || fail "node 0 serves '$(node_read 0 NCCL_DEBUG)', not the value before"
node_status 0 | grep -q '^sync_last_error: commit: .*node name node0' ||
	fail "status does not say why: $(node_status 0 | grep '^sync')"
# set says why, from the mount's status, and exits 1 (applied nowhere).
rc=0
"$ENVFS_BIN" set --mount "$(node_mnt 0)" "$DIR_BA" NCCL_DEBUG WARN 2>"$TMP/set.err" || rc=$?
[ "$rc" = 1 ] || fail "set on the mount that lost its name: exit $rc, want 1: $(cat "$TMP/set.err")"
grep -q 'not applied on any node.*does not hold its node name node0' "$TMP/set.err" ||
	fail "set does not say why: $(cat "$TMP/set.err")"
# The holder's writes go on.
py_errno "put('$(node_dir 1)/NCCL_DEBUG', 'TRACE\n')" | grep >/dev/null -x ok || fail "the holder's write"
ectl get "$ov/NCCL_DEBUG" --print-value-only | grep -q TRACE || fail "the holder's write is not in etcd"
# The holder leaves: node 0 takes its name back (its registration asks
# again, at most every 8 s; a hang guard on the event). From then on its
# status no longer says it does not hold the name, and it writes again.
node_umount 1
hold="/primus-envfs/runs/$RUN/node-names/node0"
for t in $(seq 1 $((600 * NODE_WAIT_SCALE))); do
	ectl get "$hold" --print-value-only | grep -q "mount=$(node_mnt 0)\$" && break
	sleep 0.05
done
ectl get "$hold" --print-value-only | grep -q "mount=$(node_mnt 0)\$" ||
	fail "node 0 did not take its name back: $(ectl get "$hold" --print-value-only)"
! node_status 0 | grep '^sync_last_error:.*does not hold its node name' ||
	fail "node 0 holds its name again, yet status says it does not"
py_errno "put('$(node_dir 0)/NCCL_DEBUG', 'VERSION\n')" | grep >/dev/null -x ok ||
	fail "node 0's write once it holds its name again"
ectl get "$ov/NCCL_DEBUG" --print-value-only | grep -q VERSION || fail "node 0's write is not in etcd"
node_umount 0
echo "name_lost: all checks passed"
