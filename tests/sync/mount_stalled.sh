#!/usr/bin/env bash
# A node that cannot apply a change of the run (here: its --state file
# was replaced by a directory, so no state can be saved) says so: status
# (sync_stalled:), one line on stderr, and its node record, so that
# verify fails naming it while it is behind, and passes again once it
# applied the change.
. "$(dirname "$0")/mountlib.sh"

NODE_STDERR_ALLOW="^primus-envfs: (--sync: node node1 (stopped applying the run's changes: cannot apply $DIR_BA/ENVFS_S: Is a directory|applies the run's changes again)|cannot save the state to .*state\.1.*|.*state\.1: cannot restore the previous overrides after a failed save: .*)$"

verify_rc() {
	local want=$1 rc=0
	shift
	"$ENVFS_BIN" verify --sync "etcd://$(etcd_endpoints)" --run "$RUN" "$@" >"$TMP/v.out" \
		2>"$TMP/v.err" || rc=$?
	[ "$rc" = "$want" ] || fail "verify $*: exit $rc, want $want: $(cat "$TMP/v.out" "$TMP/v.err")"
}

# wait_verify WANT ARG...: verify until it exits WANT (the records are put
# by a thread of each node, a moment after the change).
wait_verify() {
	local want=$1 rc t
	shift
	for t in $(seq 1 100); do
		rc=0
		"$ENVFS_BIN" verify --sync "etcd://$(etcd_endpoints)" --run "$RUN" "$@" \
			>"$TMP/v.out" 2>"$TMP/v.err" || rc=$?
		[ "$rc" = "$want" ] && return 0
		sleep 0.1
	done
	fail "verify $*: exit $rc, want $want: $(cat "$TMP/v.out" "$TMP/v.err")"
}

etcd_cluster_start 1
node_mount 0 --env NNODES=2
node_mount 1 --env NNODES=2
py_errno "put('$(node_dir 0)/ENVFS_S', 'one\n')" | grep >/dev/null -x ok || fail "node 0: write one"
node_wait_value 1 ENVFS_S one
wait_verify 0 --nodes 2
node_status 1 | grep >/dev/null -x 'sync_stalled: no' || fail "node 1: $(node_status 1 | grep ^sync_stalled)"

# ---- node 1 cannot save its state --------------------------------------------
rm -f "$TMP/state.1"
mkdir "$TMP/state.1"
py_errno "put('$(node_dir 0)/ENVFS_S', 'two\n')" | grep >/dev/null -x ok || fail "node 0: write two"
for t in $(seq 1 100); do
	node_status 1 | grep >/dev/null '^sync_stalled: cannot apply' && break
	sleep 0.1
done
node_status 1 | grep >/dev/null -x "sync_stalled: cannot apply $DIR_BA/ENVFS_S: Is a directory" ||
	fail "node 1 does not say it stalled: $(node_status 1 | grep ^sync | tr '\n' ';')"
[ "$(node_read 1 ENVFS_S)" = one ] || fail "node 1: ENVFS_S is $(node_read 1 ENVFS_S)"
wait_verify 1 --nodes 2
grep -qx "verify: node \"node1\" is behind: it stopped applying the run's changes (\"cannot apply $DIR_BA/ENVFS_S: Is a directory\")" \
	"$TMP/v.out" || fail "verify does not name node1 as behind: $(cat "$TMP/v.out")"
grep -q "node node1 stopped applying the run's changes" "${NODE_ERR_FILES[1]}" ||
	fail "node 1 said nothing on stderr: $(cat "${NODE_ERR_FILES[1]}")"

# ---- the state can be saved again: the next change goes through ---------------
rmdir "$TMP/state.1"
py_errno "put('$(node_dir 0)/ENVFS_S', 'three\n')" | grep >/dev/null -x ok || fail "node 0: write three"
node_wait_value 1 ENVFS_S three
node_status 1 | grep >/dev/null -x 'sync_stalled: no' || fail "node 1: $(node_status 1 | grep ^sync_stalled)"
wait_verify 0 --nodes 2
for i in 0 1; do node_umount "$i"; done
echo ok
