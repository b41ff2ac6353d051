#!/usr/bin/env bash
# primus-envfs set|unset|get --mount DIR on --sync mounts: a set on one
# node is read back on another and by get; with etcd gone a set fails
# with one line and a non-zero exit (1 "not applied", or 3 "outcome
# unknown" exactly when the mount's status names the write as
# sync_write_unknown), where bash's `echo v > FILE` exits 0 (it ignores
# close()'s error: why scripts use set); --state on a state file a
# mount holds is refused naming the holder.
. "$(dirname "$0")/mountlib.sh"

# run EXPECTED_RC CMD...: stdout in $TMP/out, stderr in $TMP/err.
run() {
	local want=$1 rc=0
	shift
	"$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, want $want: $(cat "$TMP/err")"
}

etcd_cluster_start 1
node_mount 0 --sync-timeout 1000
node_mount 1 --sync-timeout 1000
M0=$(node_mnt 0)
M1=$(node_mnt 1)
V=NVTE_DEBUG_LEVEL

run 0 "$ENVFS_BIN" set --mount "$M0" "$DIR_BA" $V 5
[ ! -s "$TMP/err" ] || fail "set printed: $(cat "$TMP/err")"
node_wait_value 1 $V 5
run 0 "$ENVFS_BIN" get --mount "$M1" "$DIR_BA" $V
[ "$(cat "$TMP/out")" = 5 ] || fail "get on node 1 printed '$(cat "$TMP/out")'"
run 0 "$ENVFS_BIN" set --mount "$M0" "$DIR_BA" XLA_FLAGS --xla_dump_to=/tmp/d
node_wait_value 1 XLA_FLAGS --xla_dump_to=/tmp/d
run 0 "$ENVFS_BIN" unset --mount "$M0" "$DIR_BA" XLA_FLAGS
run 1 "$ENVFS_BIN" set --mount "$M0" "$DIR_BA" 9LIVES x
grep -q "9LIVES: not a variable name" "$TMP/err" || fail "bad name: $(cat "$TMP/err")"
run 64 "$ENVFS_BIN" set --mount "$M0" maxtext/nosuch $V 1
run 1 "$ENVFS_BIN" get --mount "$M0" "$DIR_BA" NO_SUCH_VARIABLE
grep -q "not set" "$TMP/err" || fail "get of a missing name: $(cat "$TMP/err")"

# A state file a running mount holds is refused, naming it.
run 1 "$ENVFS_BIN" set --state "$TMP/state.0" "$DIR_BA" $V 7
grep -q "in use by another primus-envfs (pid ${NODE_PID[0]})" "$TMP/err" ||
	fail "--state of a mounted state file: $(cat "$TMP/err")"

# ---- etcd gone -----------------------------------------------------------------------
etcd_kill 0
set +e
bash -c "echo 6 >'$(node_dir 0)/$V'" 2>"$TMP/bash.err"
bash_rc=$?
"$ENVFS_BIN" set --mount "$M0" "$DIR_BA" $V 7 >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
note "with etcd down: bash's echo > FILE exited $bash_rc; set exited $rc: $(cat "$TMP/err")"
[ "$bash_rc" -eq 0 ] ||
	note "bash reported the failed commit (exit $bash_rc): the README's caveat is conservative here"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "set with etcd down: want one line, got: $(cat "$TMP/err")"
if node_status 0 | grep >/dev/null -x "sync_write_unknown: $DIR_BA $V"; then
	[ "$rc" -eq 3 ] || fail "status names the write as unknown, set exited $rc"
	grep -q "outcome unknown" "$TMP/err" || fail "set: $(cat "$TMP/err")"
else
	[ "$rc" -eq 1 ] || fail "set with etcd down exited $rc, want 1 (or 3 with status naming it)"
	grep -q "not applied on any node" "$TMP/err" || fail "set: $(cat "$TMP/err")"
fi
[ "$(node_read 0 $V)" = 5 ] || [ "$rc" -eq 3 ] ||
	fail "a set that failed changed $V on node 0 to $(node_read 0 $V)"
run_unset_rc=0
"$ENVFS_BIN" unset --mount "$M0" "$DIR_BA" $V 2>"$TMP/err" || run_unset_rc=$?
[ "$run_unset_rc" -eq 1 ] || [ "$run_unset_rc" -eq 3 ] ||
	fail "unset with etcd down exited $run_unset_rc: $(cat "$TMP/err")"

NODE_STDERR_ALLOW='etcd|sync|commit|unreachable|connect|lease|register|timed out'
node_umount 0
node_umount 1

# The state of a --sync node, offline: a set or unset there would not
# reach the run, and the node's next start replaces it with the run's
# overrides (it exited 0, and the start then dropped it, saying the run
# had removed it): refused, naming the run and the node; get still reads.
cp "$TMP/state.0" "$TMP/state.before"
grep -q "^sync: {run: \"$RUN\", node: \"node0\"}\$" "$TMP/state.0" ||
	fail "the state of a --sync node does not say its run: $(head -5 "$TMP/state.0")"
for op in "set $DIR_BA ENVFS_OFFLINE 1" "unset $DIR_BA $V"; do
	run 1 "$ENVFS_BIN" ${op%% *} --state "$TMP/state.0" ${op#* }
	grep -q "is the state of node node0 in the --sync run $RUN" "$TMP/err" &&
		grep -q -- "--mount" "$TMP/err" || fail "${op%% *} --state of a --sync node's state: $(cat "$TMP/err")"
done
cmp -s "$TMP/state.0" "$TMP/state.before" || fail "a refused offline change changed the state file"
run 0 "$ENVFS_BIN" get --state "$TMP/state.0" "$DIR_BA" NNODES
echo "sync set: all checks passed"
