#!/bin/bash
# Where a daemonized mount's messages go: without -f the daemon's stdio is
# /dev/null, so its runtime messages (here: a reload that fails) go to
# syslog(3), facility daemon, ident primus-envfs with the daemon's pid,
# and nothing of them to the terminal the command was started from. The
# test owns a mount namespace with /dev overlaid, so /dev/log is a
# datagram socket of its own listener, whatever the machine runs.
# Skipped (77) only where a private mount namespace or overlayfs cannot
# be had (not root, a container without CAP_SYS_ADMIN).
if [ -z "${ENVFS_SYSLOG_NS:-}" ]; then
	if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null ||
		! unshare -m --propagation private true 2>/dev/null; then
		echo "needs root and unshare -m: skipped" >&2
		exit 77
	fi
	ENVFS_SYSLOG_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

HANG_MS=$(scaled_ms 10000)

# /dev as it is, with a /dev/log of this test's own on top.
mkdir "$TMP/ovl"
mount -t tmpfs tmpfs "$TMP/ovl" || fail "tmpfs on $TMP/ovl"
mkdir "$TMP/ovl/up" "$TMP/ovl/work"
mount -t overlay overlay -o "lowerdir=/dev,upperdir=$TMP/ovl/up,workdir=$TMP/ovl/work" /dev || {
	note "overlayfs not available: skipped"
	exit 77
}
rm -f /dev/log

# One datagram a line; the ready file exists once the socket is bound.
LOG="$TMP/syslog.out"
"$PYTHON" -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
open(sys.argv[2], "w").close()
with open(sys.argv[1], "w") as out:
    while True:
        out.write(s.recv(65536).decode("utf-8", "replace").rstrip("\0\n") + "\n")
        out.flush()
' "$LOG" "$TMP/listening" &
LISTENER=$!
test_cleanup() {
	kill "$LISTENER" 2>/dev/null
	wait "$LISTENER" 2>/dev/null
	# The daemon may still hold /dev/null of the overlay; lazily.
	umount -l /dev 2>/dev/null
	umount -l "$TMP/ovl" 2>/dev/null
}
wait_for_file "$TMP/listening" "the syslog listener did not bind /dev/log"

cfg="$TMP/exp.yaml"
printf 'env:\n  NCCL_IB_GID_INDEX: "5"\n' >"$cfg"
"$ENVFS_BIN" --specs "$ENVFS_SPECS" --config "$cfg" "$MNT" >"$TMP/start.out" 2>"$TMP/start.err" ||
	fail "daemonized mount failed: $(cat "$TMP/start.err")"
mountpoint -q "$MNT" || fail "daemonized mount: not mounted"
PID=$(pgrep -f -n -- "primus-envfs.* $MNT\$") || fail "no daemon found"
[ "$(readlink "/proc/$PID/fd/2")" = /dev/null ] || fail "the daemon's stderr is $(readlink "/proc/$PID/fd/2")"
[ "$(cat "$MNT/env/maxtext/gfx950/NCCL_IB_GID_INDEX")" = 5 ] || fail "initial value"

# A reload that fails: the reason is in status (the event to wait for),
# and the same reason reaches syslog at error level: <27> is daemon.err.
printf 'env:\n  NCCL_IB_GID_INDEX: "8\n  bad: [\n' >"$cfg"
start=$(now_ms)
until grep -q '^last_error: .*error' "$MNT/status"; do
	[ $(($(now_ms) - start)) -le "$HANG_MS" ] || fail "status shows no error: $(cat "$MNT/status")"
	sleep 0.02
done
reason=$(sed -n 's/^last_error: //p' "$MNT/status")
want="the inputs did not load: $reason; still serving generation 1"
line="<27>[A-Z][a-z][a-z] [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] primus-envfs\\[$PID\\]: "
until grep -qxF -- "$want" <(sed -n "s/^$line//p" "$LOG"); do
	[ $(($(now_ms) - start)) -le "$HANG_MS" ] ||
		fail "no syslog line '$want' from primus-envfs[$PID]; the socket got: $(cat "$LOG")"
	sleep 0.02
done
grep -q "^${line}the inputs did not load: $cfg:[0-9]*:[0-9]*: error" "$LOG" ||
	fail "the syslog line does not name the config's line: $(cat "$LOG")"
note "syslog: $(grep -m1 "$cfg" "$LOG")"

# Nothing went to the terminal: neither the start nor the failed reload.
[ ! -s "$TMP/start.out" ] && [ ! -s "$TMP/start.err" ] ||
	fail "the daemonized start printed: $(cat "$TMP/start.out" "$TMP/start.err")"

# The next good edit recovers; the daemon unmounts and ends cleanly.
printf 'env:\n  NCCL_IB_GID_INDEX: "9"\n' >"$cfg"
wait_for_value "$MNT/env/maxtext/gfx950/NCCL_IB_GID_INDEX" 9 "$HANG_MS" >/dev/null
# Every reload of the broken file is over now: its reason was said once.
[ "$(grep -c 'did not load' "$LOG")" -eq 1 ] || fail "the failure was said more than once: $(cat "$LOG")"
fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT"
for _ in $(seq 1 250); do
	kill -0 "$PID" 2>/dev/null || break
	sleep 0.02
done
! kill -0 "$PID" 2>/dev/null || fail "the daemon did not exit after the unmount"
PID=""
echo "ok: syslog"
