#!/usr/bin/env bash
# The 1 MiB bound of the overrides (the --state document) with --sync:
# - a write that would take the node's overrides past it is refused with
#   EFBIG before anything is shared: etcd, the writer and the other node
#   all keep what they had (a file that write created is nowhere: a
#   creation is shared by its first close);
# - a node whose own node-local overrides take it past the bound still
#   applies every change of the run, saves its --state, and restarts from
#   it with everything in place.
. "$(dirname "$0")/mountlib.sh"

OVP="/primus-envfs/runs/$RUN/overrides/$DIR_BA"

etcd_cluster_start 1
node_mount 0
node_mount 1
NODE_STDERR_ALLOW='^$'

# big I NAME N [private]: writes N bytes of 'x' (private: of 'p') to NAME
# on node I, with one close(); prints "ok" or the errno's name. A private
# file is a secret, and so is any variable with the same value: the
# run's values must differ from the node's own.
big() {
	"$PYTHON" - "$(node_dir "$1")/$2" "$3" "${4:-}" <<'PY'
import errno, os, sys
path, n, private = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "private"
try:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    try:
        os.write(fd, (b"p" if private else b"x") * n + b"\n")
    finally:
        os.close(fd)
    print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PY
}

# len_of I NAME: the length of NAME's value on node I (-1: absent), as
# read (a secret's stat size is 0).
len_of() {
	local f n
	f="$(node_dir "$1")/$2"
	if n=$(wc -c <"$f" 2>/dev/null); then echo $((n - 1)); else echo -1; fi
}

etcd_len() {
	local v
	v=$(ectl get "$OVP/$1" --print-value-only)
	if [ -z "$v" ]; then echo -1; else echo $((${#v} - 1)); fi
}

# ---- the write that passes the bound is refused before it is shared --------------
refused=""
for k in $(seq 1 10); do
	r=$(big 0 "ENVFS_BIG_$k" 120000)
	if [ "$r" != ok ]; then
		[ "$r" = EFBIG ] || fail "write $k: $r, want EFBIG"
		refused=$k
		break
	fi
done
[ -n "$refused" ] || fail "ten writes of 120000 bytes all passed the 1 MiB bound"
note "write $refused refused with EFBIG"
# Nothing of the refused write is anywhere, its creation included: a
# created file is shared by its first close, and this one was refused.
# The rm is the sync point: once node 1 has it, it has all before it.
rm "$(node_dir 0)/ENVFS_BIG_1"
node_wait_value 1 ENVFS_BIG_1 "<absent>"
[ "$(node_read 1 "ENVFS_BIG_$refused")" = "<absent>" ] ||
	fail "node 1 has $(len_of 1 "ENVFS_BIG_$refused") bytes of the refused write's variable"
[ "$(etcd_len "ENVFS_BIG_$refused")" = -1 ] ||
	fail "etcd holds $(etcd_len "ENVFS_BIG_$refused") bytes for the refused write, want no key"
[ "$(len_of 0 "ENVFS_BIG_$refused")" = -1 ] || fail "node 0 serves $(len_of 0 "ENVFS_BIG_$refused") bytes"
! grep -q "ENVFS_BIG_$refused" "$TMP/state.0" || fail "node 0's --state has the refused create"
for k in $(seq 2 $((refused - 1))); do
	rm "$(node_dir 0)/ENVFS_BIG_$k"
	node_wait_value 1 "ENVFS_BIG_$k" "<absent>"
done

# ---- node-local overrides past the bound do not stop the run's changes -------------
for k in 1 2 3; do
	[ "$(big 1 "ENVFS_MINE_$k" 120000 private)" = ok ] || fail "node 1: private write $k refused"
done
# Node 0 writes 6 more: its overrides stay under the bound, node 1's pass it.
for k in 1 2 3 4 5 6; do
	[ "$(big 0 "ENVFS_RUN_$k" 120000)" = ok ] || fail "node 0: write $k refused"
done
for k in 1 2 3 4 5 6; do
	for t in $(seq 1 500); do
		[ "$(len_of 1 "ENVFS_RUN_$k")" = 120000 ] && break
		sleep 0.02
	done
	[ "$(len_of 1 "ENVFS_RUN_$k")" = 120000 ] ||
		fail "node 1 did not apply ENVFS_RUN_$k: $(node_status 1 | grep '^sync_last_error')"
done
node_status 1 | grep >/dev/null -x 'sync_last_error: none' || fail "node 1: $(node_status 1 | grep '^sync_last_error')"
[ "$(stat -c %s "$TMP/state.1")" -gt 1048576 ] || fail "node 1's --state is not past 1 MiB"
# It restarts from that --state and serves the run and its own.
node_umount 1
node_mount 1
for k in 1 2 3 4 5 6; do
	[ "$(len_of 1 "ENVFS_RUN_$k")" = 120000 ] || fail "after restart, node 1 lacks ENVFS_RUN_$k"
done
for k in 1 2 3; do
	[ "$(len_of 1 "ENVFS_MINE_$k")" = 120000 ] || fail "after restart, node 1 lacks ENVFS_MINE_$k"
	[ "$(etcd_len "ENVFS_MINE_$k")" = -1 ] || fail "the private ENVFS_MINE_$k is in etcd"
done
echo ok
