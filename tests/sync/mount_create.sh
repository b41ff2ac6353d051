#!/usr/bin/env bash
# Creating an override file shares one value, the one its first close
# carries: etcd never holds the empty value the create makes in passing
# (another node would see it, and a failure before the close would
# leave it everywhere). The writer's node has the file from the create
# on. Checked on etcd's own counts: a key's version is 1 after one
# `echo v > NEW`, and while the creating open is held no key exists.
# An O_EXCL create still fails where another node created the name
# first: its close gets EEXIST and the other node's value stays.
. "$(dirname "$0")/mountlib.sh"

RUNP="/primus-envfs/runs/$RUN"

etcd_cluster_start 1
node_mount 0
node_mount 1

# key_field NAME FIELD: FIELD (version, value as etcd holds it) of NAME's key.
key_field() {
	ectl get "$RUNP/overrides/$DIR_BA/$1" -w json | "$PYTHON" -c '
import base64, json, sys
kvs = json.load(sys.stdin).get("kvs", [])
f = sys.argv[1]
print("<none>" if not kvs else base64.b64decode(kvs[0]["value"]).decode() if f == "value" else kvs[0][f])
' "$2"
}

# The shell's way: open(O_CREAT|O_TRUNC), dup2, close, write, close.
echo v1 >"$(node_dir 0)/ENVFS_NEW1" || fail "echo v1 > ENVFS_NEW1"
node_wait_value 1 ENVFS_NEW1 v1
[ "$(key_field ENVFS_NEW1 version)" = 1 ] ||
	fail "ENVFS_NEW1's key has version $(key_field ENVFS_NEW1 version) after one write (an empty value went first)"
[ "$(key_field ENVFS_NEW1 value)" = "=v1" ] || fail "ENVFS_NEW1 in etcd: $(key_field ENVFS_NEW1 value)"

# While the creating open is held: the file is there on the writer,
# and etcd has no key. The hold ends when this shell says so.
mkfifo "$TMP/go" "$TMP/held"
"$PYTHON" - "$(node_dir 0)/ENVFS_NEW2" "$TMP/go" "$TMP/held" <<'PY' &
import os, sys
path, go, held = sys.argv[1:4]
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
with open(held, "w") as h:
    h.write("open %s\n" % os.path.exists(path))
with open(go) as g:
    g.read()
os.write(fd, b"v2\n")
os.close(fd)
PY
WPID=$!
read -r what size <"$TMP/held"
[ "$what $size" = "open True" ] || fail "the created file on the writer: $what $size"
[ -e "$(node_dir 0)/ENVFS_NEW2" ] || fail "node 0 has no ENVFS_NEW2 while it is open"
[ "$(key_field ENVFS_NEW2 version)" = "<none>" ] ||
	fail "etcd has ENVFS_NEW2 before its first close: $(key_field ENVFS_NEW2 value)"
# Nor is it in --state when another variable's commit saves the state
# meanwhile: a crash now must not bring back a create etcd never got.
echo other >"$(node_dir 0)/ENVFS_OTHER" || fail "echo other > ENVFS_OTHER"
grep -q "ENVFS_OTHER" "$TMP/state.0" || fail "node 0's --state lacks ENVFS_OTHER"
! grep -q "ENVFS_NEW2" "$TMP/state.0" || fail "node 0's --state holds the pending create ENVFS_NEW2"
echo >"$TMP/go"
wait "$WPID" || fail "the writer of ENVFS_NEW2 failed"
node_wait_value 1 ENVFS_NEW2 v2
[ "$(key_field ENVFS_NEW2 version)" = 1 ] || fail "ENVFS_NEW2's key has version $(key_field ENVFS_NEW2 version)"
grep -q "ENVFS_NEW2" "$TMP/state.0" || fail "node 0's --state lacks ENVFS_NEW2 after its close"

# A create with nothing written (touch) shares the empty value, once.
touch "$(node_dir 0)/ENVFS_NEW3" || fail "touch ENVFS_NEW3"
node_wait_value 1 ENVFS_NEW3 ""
[ "$(key_field ENVFS_NEW3 version)" = 1 ] || fail "ENVFS_NEW3's key has version $(key_field ENVFS_NEW3 version)"
[ "$(key_field ENVFS_NEW3 value)" = "=" ] || fail "ENVFS_NEW3 in etcd: $(key_field ENVFS_NEW3 value)"

# O_EXCL: another node creates the name while this open is held.
"$PYTHON" - "$(node_dir 0)/ENVFS_NEW4" "$TMP/go" "$TMP/held" <<'PY' >"$TMP/excl.out" &
import errno, os, sys
path, go, held = sys.argv[1:4]
fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
with open(held, "w") as h:
    h.write("open\n")
with open(go) as g:
    g.read()
os.write(fd, b"mine\n")
try:
    os.close(fd)
    print("close ok")
except OSError as e:
    print("close " + errno.errorcode[e.errno])
PY
WPID=$!
read -r what <"$TMP/held"
echo theirs >"$(node_dir 1)/ENVFS_NEW4" || fail "node 1 writing ENVFS_NEW4"
node_wait_value 0 ENVFS_NEW4 theirs
echo >"$TMP/go"
wait "$WPID" || fail "the O_EXCL writer failed: $(cat "$TMP/excl.out")"
[ "$(cat "$TMP/excl.out")" = "close EEXIST" ] || fail "the O_EXCL close: $(cat "$TMP/excl.out")"
[ "$(key_field ENVFS_NEW4 value)" = "=theirs" ] || fail "ENVFS_NEW4 in etcd: $(key_field ENVFS_NEW4 value)"
[ "$(node_read 0 ENVFS_NEW4)" = theirs ] || fail "node 0 serves ENVFS_NEW4 as $(node_read 0 ENVFS_NEW4)"
[ "$(node_read 1 ENVFS_NEW4)" = theirs ] || fail "node 1 serves ENVFS_NEW4 as $(node_read 1 ENVFS_NEW4)"

# A bare create (O_CREAT, nothing written, as touch does) held open while
# another node writes the name: in etcd's order the create came first,
# so the other node's value stays everywhere (an empty value committed
# over it at the close is a state no serial order gives).
"$PYTHON" - "$(node_dir 0)/ENVFS_NEW7" "$TMP/go" "$TMP/held" <<'PY' >"$TMP/bare.out" &
import errno, os, sys
path, go, held = sys.argv[1:4]
fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
with open(held, "w") as h:
    h.write("open\n")
with open(go) as g:
    g.read()
try:
    os.close(fd)
    print("close ok")
except OSError as e:
    print("close " + errno.errorcode[e.errno])
PY
WPID=$!
read -r what <"$TMP/held"
echo theirs >"$(node_dir 1)/ENVFS_NEW7" || fail "node 1 writing ENVFS_NEW7"
node_wait_value 0 ENVFS_NEW7 theirs
echo >"$TMP/go"
wait "$WPID" || fail "the bare creator failed: $(cat "$TMP/bare.out")"
[ "$(cat "$TMP/bare.out")" = "close ok" ] || fail "the bare create's close: $(cat "$TMP/bare.out")"
[ "$(key_field ENVFS_NEW7 value)" = "=theirs" ] || fail "ENVFS_NEW7 in etcd: $(key_field ENVFS_NEW7 value)"
for i in 0 1; do
	[ "$(node_read $i ENVFS_NEW7)" = theirs ] || fail "node $i serves ENVFS_NEW7 as '$(node_read $i ENVFS_NEW7)'"
done

# A first close etcd refuses (no member up: EIO, applied nowhere) leaves
# no trace of the creation either: the file is gone on the writer too.
etcd_kill 0
create_close "$(node_dir 0)/ENVFS_NEW5" lost >"$TMP/down.out"
[ "$(cat "$TMP/down.out")" = "close EIO" ] || fail "the close with etcd down: $(cat "$TMP/down.out")"
[ ! -e "$(node_dir 0)/ENVFS_NEW5" ] || fail "node 0 keeps the file whose first close failed: '$(node_read 0 ENVFS_NEW5)'"
etcd_restart 0
echo after >"$(node_dir 0)/ENVFS_NEW6"
node_wait_value 1 ENVFS_NEW6 after 20
[ "$(node_read 1 ENVFS_NEW5)" = "<absent>" ] || fail "node 1 has ENVFS_NEW5: $(node_read 1 ENVFS_NEW5)"
[ "$(key_field ENVFS_NEW5 version)" = "<none>" ] || fail "etcd has ENVFS_NEW5"
node_status 0 >"$TMP/st.0"
! grep -q "^sync_local .*ENVFS_NEW5" "$TMP/st.0" || fail "node 0 lists ENVFS_NEW5: $(grep ^sync_local "$TMP/st.0")"

# The same over a name the run has removed (rm records an unset, a key in
# etcd): the create's first close fails, and the writer goes back to the
# run's state, the name unset, not to a file of its own that no other
# node has.
rm "$(node_dir 0)/NCCL_DEBUG" || fail "rm NCCL_DEBUG"
node_wait_value 1 NCCL_DEBUG "<absent>"
etcd_kill 0
create_close "$(node_dir 0)/NCCL_DEBUG" INFO >"$TMP/down2.out"
[ "$(cat "$TMP/down2.out")" = "close EIO" ] || fail "the close over an unset name with etcd down: $(cat "$TMP/down2.out")"
[ "$(node_read 0 NCCL_DEBUG)" = "<absent>" ] ||
	fail "node 0 keeps NCCL_DEBUG as '$(node_read 0 NCCL_DEBUG)' after its create's first close failed (the run has it unset)"
etcd_restart 0
echo after2 >"$(node_dir 0)/ENVFS_NEW8"
node_wait_value 1 ENVFS_NEW8 after2 20
[ "$(node_read 0 NCCL_DEBUG)" = "<absent>" ] || fail "node 0 serves NCCL_DEBUG as '$(node_read 0 NCCL_DEBUG)'"
[ "$(node_read 1 NCCL_DEBUG)" = "<absent>" ] || fail "node 1 serves NCCL_DEBUG as '$(node_read 1 NCCL_DEBUG)'"
for i in 0 1; do node_umount "$i"; done
echo "ok"
