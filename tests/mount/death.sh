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

# SIGKILL without auto_unmount: the mount stays, dead: ENOTCONN.
envfs_mount "${IN[@]}"
[ "$(cat "$VAR")" = 1 ] || fail "NNODES before SIGKILL"
kill -KILL "$PID"
wait "$PID" 2>/dev/null || true
PID=""
e=$(errno_of "$VAR")
[ "$e" = ENOTCONN ] || fail "a dead mount answered $e, want ENOTCONN"
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
for _ in $(seq 1 100); do
	mountpoint -q "$MNT" || break
	sleep 0.02
done
! mountpoint -q "$MNT" || fail "auto_unmount: $MNT still mounted 2 s after SIGKILL"
note "auto_unmount: the mount went away after SIGKILL"
echo "death: ok"
