#!/bin/bash
# A dead mount at the mount point (a daemon killed with SIGKILL, as Slurm
# escalates on a step, leaves "Transport endpoint is not connected"):
# a dead primus-envfs mount is detached by the next mount, which then
# mounts in its place (not on top of it) and leaves nothing behind when
# unmounted; a dead mount of another filesystem is refused with one line
# saying how to clear it.
. "$(dirname "$0")/lib.sh"

IN=(--specs "$ENVFS_SPECS")
VAR="$MNT/env/maxtext/gfx950/NNODES"
ENVFS_STDERR_ALLOW='^primus-envfs: note: .*dead primus-envfs mount'

# errno_of PATH: what statvfs(PATH) fails with, or "ok".
errno_of() {
	python3 - "$1" <<'PY'
import errno, os, sys
try:
    os.statvfs(sys.argv[1])
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}
mounts_at() {
	python3 - "$1" <<'PY'
import sys
p = sys.argv[1]
n = 0
for l in open("/proc/self/mountinfo"):
    f = l.split()
    if f[4].encode().decode("unicode_escape") == p:
        n += 1
print(n)
PY
}

# envfs_mount's wait sees the dead mount as a mount point at once: wait
# until the new daemon serves.
mount_over_dead() {
	local i
	envfs_mount "$@"
	for i in $(seq 1 500); do
		[ "$(errno_of "$MNT")" = ok ] && [ -r "$VAR" ] && return 0
		kill -0 "$PID" 2>/dev/null || fail "the daemon exited: $(cat "$DAEMON_ERR")"
		sleep 0.02
	done
	fail "$MNT still answers $(errno_of "$MNT") 10 s after the new mount started"
}

kill_daemon() {
	kill -KILL "$PID"
	wait "$PID" 2>/dev/null || true
	PID=""
	[ "$(errno_of "$MNT")" = ENOTCONN ] || fail "a SIGKILLed daemon left $(errno_of "$MNT"), want ENOTCONN"
}

# Twice dead (two jobs killed in turn): each next mount clears what is there.
envfs_mount "${IN[@]}"
kill_daemon
mount_over_dead "${IN[@]}"
grep -q "note: $MNT held a dead primus-envfs mount" "$DAEMON_ERR" ||
	fail "no note about the dead mount: $(cat "$DAEMON_ERR")"
[ "$(cat "$VAR")" = 1 ] || fail "NNODES after mounting over a dead mount"
[ "$(mounts_at "$MNT")" = 1 ] || fail "$(mounts_at "$MNT") mounts at $MNT, want 1 (not stacked on the dead one)"
kill_daemon
mount_over_dead "${IN[@]}"
[ "$(mounts_at "$MNT")" = 1 ] || fail "second time: $(mounts_at "$MNT") mounts at $MNT"
envfs_umount
[ "$(mounts_at "$MNT")" = 0 ] || fail "unmounting left $(mounts_at "$MNT") mounts at $MNT"
[ "$(errno_of "$MNT")" = ok ] || fail "after unmount $MNT answers $(errno_of "$MNT")"

# Another filesystem's dead mount is not ours to remove: one line, exit 2.
envfs_mount "${IN[@]}" -o subtype=otherfs
grep -q "fuse.otherfs" /proc/self/mountinfo || fail "subtype=otherfs did not give fuse.otherfs"
kill_daemon
rc=0
"$ENVFS_BIN" "${IN[@]}" -f "$MNT" 2>"$TMP/foreign.err" || rc=$?
[ "$rc" -eq 2 ] || fail "a foreign dead mount: exit $rc, want 2"
[ "$(wc -l <"$TMP/foreign.err")" -eq 1 ] || fail "want one line: $(cat "$TMP/foreign.err")"
grep -q "fuse.otherfs" "$TMP/foreign.err" && grep -q "fusermount3 -uz $MNT" "$TMP/foreign.err" ||
	fail "the refusal does not name the mount and the way out: $(cat "$TMP/foreign.err")"
fusermount3 -uz "$MNT" || fail "fusermount3 -uz"
envfs_mount "${IN[@]}"
envfs_umount
note "dead mounts: ours detached, another's refused with the way out"
