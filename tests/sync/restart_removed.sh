#!/usr/bin/env bash
# A node that crashes, misses an rm and an mv, and comes back with its
# --state: what the run removed while it was away is gone on it too (its
# --state still had the names). Before, the restarted node kept them as
# node-local overrides ("sync_local ...: not in etcd"), so the job on it
# saw values the run had removed, which no serial order of the
# acknowledged operations gives (found by an attack on the many-node
# path). A node new to the run (no fence of its name) keeps what its
# --state has as node-local, as docs/SYNC.md says; a node's node-scoped
# names stay its own either way.
NODE_STDERR_ALLOW='--sync: maxtext/gfx950/Z(GONE|MOVED): removed from the run while this node was away; the override --state kept is dropped|--sync-node node1 is held by .*; waiting up to [0-9]+ s for its lease to end'
. "$(dirname "$0")/mountlib.sh"

etcd_cluster_start 3
# Node 2's --state, from before it ever joined the run: one override.
printf 'version: 1\noverrides:\n  - {backend: "maxtext", arch: "gfx950", name: "ZLOCAL", value: "mine"}\n' \
	>"$TMP/state.2"
node_mount 0
node_mount 1
d0=$(node_dir 0)
"$ENVFS_BIN" set --mount "$(node_mnt 0)" "$DIR_BA" ZGONE before || fail "set ZGONE"
"$ENVFS_BIN" set --mount "$(node_mnt 0)" "$DIR_BA" ZMOVED moved || fail "set ZMOVED"
"$ENVFS_BIN" set --mount "$(node_mnt 0)" "$DIR_BA" ZKEPT kept || fail "set ZKEPT"
node_wait_value 1 ZGONE before
node_wait_value 1 ZMOVED moved
node_wait_value 1 ZKEPT kept
grep >/dev/null 'ZGONE' "$TMP/state.1" || fail "node 1's --state does not hold ZGONE"

# Node 1 dies (no unmount); the run removes one name and moves another.
kill -KILL "${NODE_PID[1]}"
wait "${NODE_PID[1]}" 2>/dev/null || true
fusermount3 -uz "$(node_mnt 1)"
"$ENVFS_BIN" unset --mount "$(node_mnt 0)" "$DIR_BA" ZGONE || fail "unset ZGONE"
mv "$d0/ZMOVED" "$d0/ZNEW" || fail "mv ZMOVED ZNEW"

# Back, with the same --state and node name.
node_mount 1
node_wait_value 1 ZNEW moved
for n in ZGONE ZMOVED; do
	[ ! -e "$(node_dir 1)/$n" ] ||
		fail "node 1 still has $n=$(cat "$(node_dir 1)/$n") after its restart: the run removed it"
	! grep >/dev/null "name: \"$n\"" "$TMP/state.1" || fail "node 1's --state still holds $n"
done
[ "$(node_read 1 ZKEPT)" = kept ] || fail "node 1 lost ZKEPT, which the run still has"
[ "$(node_read 1 NODE_RANK)" = 1 ] || fail "node 1's node-scoped NODE_RANK: $(node_read 1 NODE_RANK)"
! grep >/dev/null '^sync_local .*not in etcd' "$(node_mnt 1)/status" ||
	fail "node 1 lists overrides etcd does not have: $(grep '^sync_local' "$(node_mnt 1)/status")"

# A node new to the run keeps its own --state's override, node-local.
node_mount 2
[ "$(node_read 2 ZLOCAL)" = mine ] || fail "node 2, new to the run, lost ZLOCAL from its --state"
grep >/dev/null -x "sync_local $DIR_BA/ZLOCAL: not in etcd" "$(node_mnt 2)/status" ||
	fail "node 2 does not list ZLOCAL as node-local: $(grep '^sync_local' "$(node_mnt 2)/status")"
echo ok
