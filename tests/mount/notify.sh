#!/bin/bash
# Readiness for systemd's Type=notify (system/primus-envfs.service.in):
# with $NOTIFY_SOCKET set, the foreground daemon sends READY=1 once the
# mount is there and served, and STOPPING=1 when it goes; without it,
# libsystemd is never even loaded (it costs every process that maps it).
. "$(dirname "$0")/lib.sh"

HANG_MS=$(scaled_ms 10000)
SOCK="$TMP/notify.sock"
OUT="$TMP/notify.out"

# Each datagram a line, with whether $MNT was a mount when it came
# (from mountinfo: asking the mount itself could wait on the daemon).
"$PYTHON" -c '
import socket, sys
sock, out, mnt = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock)
open(sock + ".bound", "w").close()
with open(out, "w") as f:
    while True:
        msg = s.recv(4096).decode("utf-8", "replace").strip()
        with open("/proc/self/mountinfo") as m:
            mounted = any(l.split()[4] == mnt for l in m)
        f.write("%s %s\n" % (msg.replace("\n", ","), "mounted" if mounted else "unmounted"))
        f.flush()
' "$SOCK" "$OUT" "$MNT" &
LISTENER=$!
test_cleanup() {
	kill "$LISTENER" 2>/dev/null
}
wait_for_file "$SOCK.bound" "the notify listener did not bind $SOCK"

# wait_line ERE: waits until the listener wrote a line matching ERE.
wait_line() {
	local start
	start=$(now_ms)
	until grep -qxE -- "$1" "$OUT"; do
		[ $(($(now_ms) - start)) -le "$HANG_MS" ] || fail "no '$1' from the daemon; got: $(cat "$OUT")"
		sleep 0.02
	done
}

NOTIFY_SOCKET=$SOCK envfs_mount --specs "$ENVFS_SPECS"
wait_line "READY=1 mounted"
[ "$(cat "$MNT/env/maxtext/gfx950/NNODES")" = 1 ] || fail "NNODES after READY=1"
grep -q 'libsystemd\.so' "/proc/$PID/maps" || fail "READY=1 without libsystemd mapped?"
envfs_umount
# fusermount3 took the mount away before the daemon heard of it.
wait_line "STOPPING=1 (un)?mounted"
[ "$(wc -l <"$OUT")" -eq 2 ] || fail "more than READY=1 and STOPPING=1: $(cat "$OUT")"

# Not under systemd: nothing sent, libsystemd not loaded.
envfs_mount --specs "$ENVFS_SPECS"
! grep -q 'libsystemd\.so' "/proc/$PID/maps" || fail "libsystemd is mapped without \$NOTIFY_SOCKET"
envfs_umount
[ "$(wc -l <"$OUT")" -eq 2 ] || fail "a mount without \$NOTIFY_SOCKET sent: $(cat "$OUT")"
echo "ok: notify"
