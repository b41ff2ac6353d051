#!/bin/bash
# Daemon death and shutdown (issue 8.6): with -o auto_unmount the mount goes
# away when the daemon is SIGKILLed; SIGTERM exits 0 and unmounts within 2 s;
# a dead mount answers ENOTCONN, and after `fusermount3 -uz` a remount works.
. "$(dirname "$0")/lib.sh"

IN=(--specs "$ENVFS_SPECS")
VAR="$MNT/env/maxtext/gfx950/NNODES"

# errno_of PATH: the errno name a stat of PATH fails with, or "ok".
errno_of() {
	python3 - "$1" <<'PY'
import errno, os, sys
try:
    os.stat(sys.argv[1])
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}

# SIGTERM: exit status 0 and no mount left, within 2 s.
envfs_mount "${IN[@]}"
[ "$(cat "$VAR")" = 1 ] || fail "NNODES before SIGTERM"
start=$(now_ms)
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
PID=""
took=$(($(now_ms) - start))
[ "$rc" -eq 0 ] || fail "SIGTERM: exit status $rc"
! mountpoint -q "$MNT" || fail "SIGTERM left $MNT mounted"
[ "$took" -le 2000 ] || fail "SIGTERM took $took ms to unmount and exit (limit 2000)"
note "SIGTERM: exited 0 and unmounted in $took ms"

# The same while a process holds a directory, a view and a write open
# (whose RELEASE never comes), and with SIGINT: the kernel's references
# do not keep the daemon from exiting.
for sig in TERM INT; do
	envfs_mount "${IN[@]}"
	rm -f "$TMP/held"
	"$PYTHON" - "$MNT/env/maxtext/gfx950" "$TMP/held" <<'PY' &
import os, sys, time
d, flag = sys.argv[1], sys.argv[2]
fds = [os.open(d, os.O_RDONLY | os.O_DIRECTORY), os.open(d + "/env_file", os.O_RDONLY),
       os.open(d + "/NNODES", os.O_WRONLY)]
os.write(fds[2], b"2")
open(flag, "w").close()
time.sleep(10)
PY
	holder=$!
	wait_for_file "$TMP/held" "SIG$sig: the holder did not open its files"
	start=$(now_ms)
	kill -"$sig" "$PID"
	rc=0
	wait "$PID" || rc=$?
	PID=""
	took=$(($(now_ms) - start))
	kill "$holder" 2>/dev/null || true
	wait "$holder" 2>/dev/null || true
	[ "$rc" -eq 0 ] || fail "SIG$sig with open files: exit status $rc"
	! mountpoint -q "$MNT" || fail "SIG$sig with open files left $MNT mounted"
	[ "$took" -le 2000 ] || fail "SIG$sig with open files took $took ms (limit 2000)"
	note "SIG$sig with files held open: exited 0 and unmounted in $took ms"
done

# SIGKILL without auto_unmount: the mount stays, dead: ENOTCONN.
envfs_mount "${IN[@]}"
[ "$(cat "$VAR")" = 1 ] || fail "NNODES before SIGKILL"
kill -KILL "$PID"
wait "$PID" 2>/dev/null || true
PID=""
e=$(errno_of "$VAR")
[ "$e" = ENOTCONN ] || fail "a dead mount answered $e, want ENOTCONN"
# Every kind of access, not only stat.
for expr in "open('$VAR').read()" "os.listdir('$MNT/env')" "put('$VAR', '2')"; do
	e=$(py_errno "$expr")
	[ "$e" = ENOTCONN ] || fail "a dead mount: $expr gave $e, want ENOTCONN"
done
fusermount3 -uz "$MNT" || fail "fusermount3 -uz on the dead mount"
! mountpoint -q "$MNT" || fail "dead mount still there after fusermount3 -uz"

# Remounting on the same mountpoint works.
envfs_mount "${IN[@]}"
[ "$(cat "$VAR")" = 1 ] || fail "NNODES after remount"
envfs_umount

# SIGKILL with -o auto_unmount: the mount disappears by itself.
envfs_mount "${IN[@]}" -o auto_unmount
[ "$(cat "$VAR")" = 1 ] || fail "NNODES with auto_unmount"
kill -KILL "$PID"
wait "$PID" 2>/dev/null || true
PID=""
for _ in $(seq 1 500); do
	mountpoint -q "$MNT" || break
	sleep 0.02
done
! mountpoint -q "$MNT" || fail "auto_unmount: $MNT still mounted 10 s after SIGKILL"
note "auto_unmount: the mount went away after SIGKILL"
# And the mount point takes a new mount at once.
envfs_mount "${IN[@]}"
[ "$(cat "$VAR")" = 1 ] || fail "NNODES after auto_unmount and remount"
envfs_umount
echo "death: ok"
