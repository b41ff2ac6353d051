#!/bin/bash
# A truncation is a change like any write (issue 14.1): `: > VAR`, an
# O_TRUNC open closed without writing, is committed (and saved to --state)
# before close() returns, whatever the sequence of opens, truncates and
# writes. A SIGKILL right after `: > V` and a remount with the same state
# find V empty; a cat right after it reads it empty. A shell's `> FILE`,
# which closes one descriptor before it writes, still never shows the
# empty value in between: a bare truncation waits for the close of the
# writer's last descriptor of that open.
. "$(dirname "$0")/lib.sh"

state="$TMP/run.state.yaml"
dir="$MNT/env/maxtext/gfx950"
IN=(--specs "$ENVFS_SPECS" --state "$state")

# ---- `: > V`, then SIGKILL: the remount finds V empty ----
for i in $(seq 1 10); do
	envfs_mount "${IN[@]}"
	echo keep >"$dir/TRUNC_V"
	: >"$dir/TRUNC_V"
	kill -KILL "$PID"
	wait "$PID" 2>/dev/null || true
	PID=""
	fusermount3 -uz "$MNT"
	grep -q 'name: "TRUNC_V", value: ""' "$state" ||
		fail "try $i: the state file after ': > V' and SIGKILL: $(grep TRUNC_V "$state")"
	envfs_mount "${IN[@]}"
	[ "$(stat -c %s "$dir/TRUNC_V")" -eq 1 ] ||
		fail "try $i: after a remount V is '$(cat "$dir/TRUNC_V")', not empty"
	envfs_umount
done

# ---- a cat right after `: > V` reads it empty ----
envfs_mount "${IN[@]}"
for i in $(seq 1 100); do
	echo "keep$i" >"$dir/TRUNC_V"
	: >"$dir/TRUNC_V"
	v=$(cat "$dir/TRUNC_V")
	[ -z "$v" ] || fail "try $i: cat right after ': > V' read '$v'"
done

# ---- other sequences, each checked in the state file at close() ----
"$PYTHON" - "$dir/TRUNC_W" "$state" <<'PY' || fail "a truncation was not saved at close()"
import os, sys
p, state = sys.argv[1], sys.argv[2]
def saved(want):
    return ('name: "TRUNC_W", value: "%s"' % want) in open(state).read()
def put(v):
    with open(p, "w") as f:
        f.write(v)
put("one\n")
assert saved("one")
# O_TRUNC alone, one descriptor.
os.close(os.open(p, os.O_WRONLY | os.O_TRUNC))
assert saved(""), "O_TRUNC then close"
assert open(p).read() == "\n"
# O_TRUNC on a descriptor that is dup'ed: nothing is committed while the
# duplicate is open (a reader still sees the old value), everything at
# the close of the last one.
put("two\n")
fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
fd2 = os.dup(fd)
os.close(fd)
assert saved("two") and open(p).read() == "two\n", "committed while a dup was open"
os.close(fd2)
assert saved(""), "O_TRUNC, dup, close both"
assert open(p).read() == "\n"
# O_RDWR | O_TRUNC, read back (nothing), close.
put("three\n")
fd = os.open(p, os.O_RDWR | os.O_TRUNC)
assert os.read(fd, 100) == b""
os.close(fd)
assert saved(""), "O_RDWR|O_TRUNC then close"
# ftruncate(0) without a write.
put("four\n")
fd = os.open(p, os.O_WRONLY)
os.ftruncate(fd, 0)
os.close(fd)
assert saved(""), "ftruncate then close"
# O_TRUNC, then a write on the duplicate after the first close.
fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
fd2 = os.dup(fd)
os.close(fd)
os.write(fd2, b"five\n")
os.close(fd2)
assert saved("five") and open(p).read() == "five\n", "O_TRUNC, dup, write, close"
# A child that inherited the descriptor closes it last.
fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
pid = os.fork()
if pid == 0:
    os._exit(0)          # exits holding nothing else: its close is a flush
os.waitpid(pid, 0)
os.close(fd)
assert saved(""), "O_TRUNC closed by parent and child"
# A child that inherited the descriptor writes and exits while the
# opener still writes: the child's close is no end of the opener's
# work, so nothing is committed then (it was: readers, --state and the
# history got "partial", a value nobody wrote whole).
with open(p, "w") as f:
    f.write("before\n")
fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"par")
pid = os.fork()
if pid == 0:
    os.write(fd, b"tial")
    os._exit(0)
os.waitpid(pid, 0)
assert saved("before") and open(p).read() == "before\n", \
    "a child's exit committed the opener's unfinished write: %r" % open(p).read()
os.write(fd, b" whole\n")
os.close(fd)
assert saved("partial whole") and open(p).read() == "partial whole\n", "the whole write"
# The opener closes first; a child still writing commits at its close.
fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.read(r, 1)          # until the opener has closed its descriptor
    os.write(fd, b"late\n")
    os._exit(0)
os.close(fd)
os.write(w, b"x")
os.waitpid(pid, 0)
assert saved("late") and open(p).read() == "late\n", "a child's write after the opener closed"
PY
envfs_umount
# (Readers racing `echo v > V` never see it empty: tests/mount/writes.sh.)
