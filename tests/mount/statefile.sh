#!/bin/bash
# The --state file at start (issue 14.2-14.4, 14.15): one daemon per state
# file (an exclusive lock for the daemon's life; a second daemon exits
# naming the holder's PID); a symlinked state path is resolved once, so
# saves go to the file it points to and the link stays; a state path that
# is a device, a FIFO or a directory, or whose directory is missing, is
# refused at start; a state file someone else could have written (another
# owner, group or world writable, in a directory others may write without
# the sticky bit) is refused. Every refusal is one clear line and a
# non-zero exit before anything is mounted, and nothing hangs.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "needs root (other owners, mknod): skipped" >&2; exit 77; }
command -v setpriv >/dev/null || { echo "setpriv is missing: skipped" >&2; exit 77; }

dir="$MNT/env/maxtext/gfx950"
sdir="$TMP/state"
mkdir -m 700 "$sdir"
state="$sdir/run.state.yaml"
IN=(--specs "$ENVFS_SPECS")
MNT2="$TMP/mnt2"      # a second, daemonized mount
MNT3="$TMP/mnt3"      # where refused mounts try
mkdir "$MNT2" "$MNT3"
EXTRA_MNTS=("$MNT2" "$MNT3")

# refused WHAT STATE PATTERN: a mount with --state STATE must exit
# non-zero within 5 s without mounting, its stderr matching PATTERN.
refused() {
	local what=$1 st=$2 pat=$3 rc=0
	timeout 5 "$ENVFS_BIN" "${IN[@]}" --state "$st" -f "$MNT3" 2>"$TMP/refused.err" || rc=$?
	if mountpoint -q "$MNT3"; then
		fusermount3 -u "$MNT3"
		fail "$what: mounted"
	fi
	[ "$rc" -ne 0 ] || fail "$what: exit 0"
	[ "$rc" -ne 124 ] || fail "$what: the start hung"
	grep -qE "$pat" "$TMP/refused.err" || fail "$what: stderr does not match '$pat': $(cat "$TMP/refused.err")"
	[ "$(wc -l <"$TMP/refused.err")" -le 2 ] || fail "$what: more than two lines: $(cat "$TMP/refused.err")"
}

# ---- one daemon per state file ----
envfs_mount "${IN[@]}" --state "$state"
echo first >"$dir/LOCK_V"
refused "a second daemon on the same file" "$state" "in use by another primus-envfs \\(pid $PID\\)"
# Through a symlink to the same file: the same lock.
ln -s "$state" "$TMP/state-link.yaml"
refused "a second daemon through a symlink" "$TMP/state-link.yaml" "in use by another primus-envfs \\(pid $PID\\)"
[ "$(cat "$dir/LOCK_V")" = first ] || fail "the first mount lost its value"
grep -q 'LOCK_V", value: "first"' "$state" || fail "the state file lost the first mount's write"
envfs_umount
# fusermount3 -u returns before the daemon has saved and exited: a mount
# right after it waits for that daemon instead of calling the file in use.
for i in 1 2 3 4 5; do
	"$ENVFS_BIN" "${IN[@]}" --state "$state" "$MNT2" 2>"$TMP/again.err" ||
		fail "mount $i right after an unmount: $(cat "$TMP/again.err")"
	echo "again$i" >"$MNT2/env/maxtext/gfx950/LOCK_V"
	fusermount3 -u "$MNT2"
done
grep -q 'LOCK_V", value: "again5"' "$state" || fail "the last quick remount's write is not saved"
# The lock goes with the daemon, also after SIGKILL.
envfs_mount "${IN[@]}" --state "$state"
kill -KILL "$PID"
wait "$PID" 2>/dev/null || true
PID=""
fusermount3 -uz "$MNT"
envfs_mount "${IN[@]}" --state "$state"
[ "$(cat "$dir/LOCK_V")" = again5 ] || fail "after a SIGKILL and a remount"
envfs_umount
# A daemonized mount: the message names the daemon, not the parent that
# returned the prompt.
"$ENVFS_BIN" "${IN[@]}" --state "$state" "$MNT2" 2>"$TMP/bg.err" || fail "background mount: $(cat "$TMP/bg.err")"
refused "a second daemon beside a daemonized one" "$state" "in use by another primus-envfs \\(pid [0-9]+\\)"
holder=$(sed -n 's/.*(pid \([0-9]*\)).*/\1/p' "$TMP/refused.err")
[ -n "$holder" ] && kill -0 "$holder" 2>/dev/null || fail "pid $holder is not running"
tr '\0' ' ' <"/proc/$holder/cmdline" | grep >/dev/null -- "$MNT2" || fail "pid $holder is not the daemon of $MNT2"
fusermount3 -u "$MNT2"
for _ in $(seq 1 100); do kill -0 "$holder" 2>/dev/null || break; sleep 0.02; done

# ---- a symlinked --state: resolved once, the link stays ----
mkdir -m 700 "$TMP/persist"
ln -s "$TMP/persist/real.state.yaml" "$TMP/link.state.yaml"
envfs_mount "${IN[@]}" --state "$TMP/link.state.yaml"
echo one >"$dir/LINK_V"
echo two >"$dir/LINK_V"
[ -L "$TMP/link.state.yaml" ] || fail "the symlink was replaced by a file"
grep -q 'LINK_V", value: "two"' "$TMP/persist/real.state.yaml" || fail "the target did not get the save"
grep -q "^state: $TMP/link.state.yaml -> $TMP/persist/real.state.yaml\$" "$MNT/status" ||
	fail "status does not show the resolved state path: $(grep ^state: "$MNT/status")"
envfs_umount
envfs_mount "${IN[@]}" --state "$TMP/link.state.yaml"
[ "$(cat "$dir/LINK_V")" = two ] || fail "remount through the link: $(cat "$dir/LINK_V")"
envfs_umount

# ---- not a regular file, no directory ----
# A device of our own: were it accepted, a save would replace it, and
# /dev/null is the whole machine's.
mknod "$TMP/chardev" c 1 3
refused "a character device" "$TMP/chardev" "not a regular file \\(a character device\\)"
[ -c "$TMP/chardev" ] || fail "the device was replaced"
mkfifo "$TMP/fifo.yaml"
refused "a FIFO" "$TMP/fifo.yaml" "not a regular file \\(a FIFO\\)"
ln -s "$TMP/fifo.yaml" "$TMP/fifo-link.yaml"
refused "a symlink to a FIFO" "$TMP/fifo-link.yaml" "not a regular file \\(a FIFO\\)"
mkdir "$TMP/adir"
refused "a directory" "$TMP/adir" "not a regular file \\(a directory\\)"
refused "a missing directory" "$TMP/nowhere/run.state.yaml" "directory .*nowhere.* does not exist"

# ---- a state file someone else could have written ----
bad="$TMP/bad"
mkdir -m 700 "$bad"
printf 'version: 1\noverrides:\n  - {backend: "maxtext", arch: "gfx950", name: "LD_PRELOAD", value: "/tmp/evil.so"}\n' >"$bad/s.yaml"
chmod 600 "$bad/s.yaml"
chown 65534:65534 "$bad/s.yaml"
refused "owned by another user" "$bad/s.yaml" "owned by uid 65534"
chown 0:0 "$bad/s.yaml"
chmod 666 "$bad/s.yaml"
refused "world-writable" "$bad/s.yaml" "writable by others \\(mode 0666\\)"
chmod 620 "$bad/s.yaml"
refused "group-writable" "$bad/s.yaml" "writable by its group \\(mode 0620\\)"
chmod 600 "$bad/s.yaml"
chmod 777 "$bad"
refused "in a world-writable directory" "$bad/s.yaml" "directory $bad is writable by others"
chmod 700 "$bad"
chown 65534 "$bad"
refused "in another user's directory" "$bad/s.yaml" "directory $bad is owned by uid 65534"
chown 0 "$bad"
# A sticky world-writable directory (like /tmp) protects a file that is ours.
chmod 1777 "$bad"
envfs_mount "${IN[@]}" --state "$bad/s.yaml"
[ "$(cat "$dir/LD_PRELOAD")" = /tmp/evil.so ] || fail "a trusted file in a sticky directory did not load"
envfs_umount
# ... but not one another user owns there.
chown 65534 "$bad/s.yaml"
refused "another user's file in a sticky directory" "$bad/s.yaml" "owned by uid 65534"
chown 0 "$bad/s.yaml"
# A root-owned file reached through a symlink that anyone may replace
# (its directory is world-writable, not sticky): refused, naming it.
chmod 700 "$bad"
ww="$TMP/ww-state"
mkdir "$ww"
chmod 777 "$ww"
ln -s "$bad/s.yaml" "$ww/s-link.yaml"
refused "a symlink in a world-writable directory" "$ww/s-link.yaml" \
	"symlink $ww/s-link.yaml: directory $ww is writable by others"

# The state of a --sync node mounted without --sync: the node left the
# run, so the mount writes the file without its sync: mark (it kept it,
# and set --state then refused the file for good).
printf 'version: 1\nsync: {run: "r1", node: "n0"}\noverrides: []\n' >"$TMP/was-sync.yaml"
chmod 600 "$TMP/was-sync.yaml"
envfs_mount "${IN[@]}" --state "$TMP/was-sync.yaml"
! grep -q '^sync:' "$TMP/was-sync.yaml" || fail "a mount without --sync kept the sync: mark"
envfs_umount
"$ENVFS_BIN" set "${IN[@]}" --state "$TMP/was-sync.yaml" maxtext/gfx950 NCCL_DEBUG INFO ||
	fail "set --state of a state no --sync mount holds: exit $?"
