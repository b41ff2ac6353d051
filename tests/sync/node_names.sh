#!/usr/bin/env bash
# A node name is held by one mount at a time, on a real etcd
# (mountlib.sh):
#   - a second mount of the run with a node name already held is refused
#     at start (exit 2), naming the name and the holder (host, pid, mount
#     point), and the holder stays registered: verify still passes;
#   - the default node name is the host name, and is held the same way;
#   - a node restarted after a crash (SIGKILL: its lease lives on for up to
#     its TTL) mounts again: it waits for the dead holder's lease to end;
#   - an unmounted node frees its name at once.
. "$(dirname "$0")/mountlib.sh"

# The restarted node says it waits for the dead holder.
NODE_STDERR_ALLOW='is held by .*; waiting up to [0-9]+ s for its lease to end'
etcd_cluster_start 1
EP=$(etcd_endpoints)
HOST=$(hostname)

# second NAME|"" : a mount of the run on $TMP/mnt.second with --sync-node
# NAME (none: the default), in the foreground in the background; its exit
# status in $rc, its stderr in $TMP/second.err. One that mounts is a
# failure (unmounted first), never a hang.
second() {
	local a=(--sync "etcd://$EP" --run "$RUN") pid
	[ -z "$1" ] || a+=(--sync-node "$1")
	mkdir -p "$TMP/mnt.second"
	"$ENVFS_BIN" --specs "$ENVFS_SPECS" "${a[@]}" -f "$TMP/mnt.second" \
		2>"$TMP/second.err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if mountpoint -q "$TMP/mnt.second"; then
			fusermount3 -u "$TMP/mnt.second"
			wait "$pid" || true
			fail "a second mount of '$1' was mounted"
		fi
		sleep 0.05
	done
	rc=0
	wait "$pid" || rc=$?
}

# fence_rev NODE: the mod_revision of NODE's fence key (0: none).
fence_rev() {
	local r
	r=$(ectl get "/primus-envfs/runs/$RUN/fence/$1" -w json |
		sed -n 's/.*"mod_revision":\([0-9]*\).*/\1/p')
	echo "${r:-0}"
}

node_mount 0 --specs "$ENVFS_SPECS"
verify_rc 0 --nodes 1 --wait 10
fence0=$(fence_rev node0)
[ "$fence0" -gt 0 ] || fail "node0 has no fence"
second node0
[ "$rc" = 2 ] || fail "a second mount of node0: exit $rc: $(cat "$TMP/second.err")"
grep -q "^primus-envfs: --sync-node node0: the name is held by another mount of run $RUN (host=$HOST pid=${NODE_PID[0]} mount=$TMP/mnt.0)" \
	"$TMP/second.err" || fail "the refusal does not name the holder: $(cat "$TMP/second.err")"
note "refused: $(head -1 "$TMP/second.err")"
# A refused mount touches nothing of the holder's: its fence did not move
# (the holder's next write would fail its compare).
[ "$(fence_rev node0)" = "$fence0" ] ||
	fail "the refused mount moved node0's fence (revision $fence0, now $(fence_rev node0))"
# The holder is untouched: registered, and its status says so.
verify_rc 0 --nodes 1
grep -q '^sync_record: .*/nodes/node0, 17 directories, put at revision' "$(node_mnt 0)/status" ||
	fail "node0's status: $(grep '^sync' "$(node_mnt 0)/status")"
! grep -q '^sync_record_error' "$(node_mnt 0)/status" ||
	fail "node0's status has an error: $(grep '^sync' "$(node_mnt 0)/status")"

# ---- the default name: the host name ----------------------------------------------
mkdir -p "$TMP/mnt.host"
"$ENVFS_BIN" --specs "$ENVFS_SPECS" --sync "etcd://$EP" --run "$RUN" -f "$TMP/mnt.host" \
	2>"$TMP/host.err" &
HPID=$!
for _ in $(seq 1 300); do
	mountpoint -q "$TMP/mnt.host" && break
	kill -0 "$HPID" 2>/dev/null || fail "the mount with the default name exited: $(cat "$TMP/host.err")"
	sleep 0.05
done
verify_rc 0 --nodes 2 --wait 10
grep -q "^verify: run $RUN: 2 nodes registered and equal" "$TMP/v.out" || fail "$(cat "$TMP/v.out")"
ectl get "/primus-envfs/runs/$RUN/nodes/$HOST" --keys-only | grep >/dev/null . ||
	fail "no record under the host name $HOST; verify said: $(cat "$TMP/v.out"); the run's keys: $(ectl get "/primus-envfs/runs/$RUN/" --prefix --keys-only | grep .); the mount's status: $(grep '^sync' "$TMP/mnt.host/status"); its stderr: $(cat "$TMP/host.err")"
second ""
[ "$rc" = 2 ] && grep -q "^primus-envfs: --sync-node $HOST: the name is held by another mount of run $RUN (host=$HOST pid=$HPID mount=$TMP/mnt.host)" \
	"$TMP/second.err" || fail "a second mount with the default name: exit $rc: $(cat "$TMP/second.err")"
fusermount3 -u "$TMP/mnt.host"
wait "$HPID" || fail "the default-name mount exited $?"
[ ! -s "$TMP/host.err" ] || fail "the default-name mount's stderr: $(cat "$TMP/host.err")"

# ---- an unmount frees the name at once ---------------------------------------
node_umount 0
node_mount 0 --specs "$ENVFS_SPECS"
[ ! -s "$NODE_ERR" ] || fail "a mount after an unmount waited: $(cat "$NODE_ERR")"

# ---- a restart after a crash: the dead holder's lease ends, the name is free ----
old=${NODE_PID[0]}
kill -KILL "$old"
wait "$old" 2>/dev/null || true
fusermount3 -uz "$(node_mnt 0)"
NODE_PID[0]=""
node_mount 0 --specs "$ENVFS_SPECS"
grep -q "node0 is held by .*pid=$old.*; waiting up to [0-9]* s for its lease to end" "$NODE_ERR" ||
	fail "the restart did not say it waits for the dead holder: $(cat "$NODE_ERR")"
verify_rc 0 --nodes 1 --wait 10
grep -q "^verify: run $RUN: 1 node registered and equal" "$TMP/v.out" || fail "$(cat "$TMP/v.out")"
node_umount 0
echo "node_names: all checks passed"
