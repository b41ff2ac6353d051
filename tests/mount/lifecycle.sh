#!/bin/bash
# Lifecycle: SIGTERM and SIGINT unmount cleanly and exit 0; without -f the
# daemon detaches once mounted; a mountpoint that is missing, not a
# directory or busy, a bad option and a config that does not load at start
# each fail with clear lines on stderr and leave no mount; -o ro refuses
# writes; -o allow_other adds default_permissions.
. "$(dirname "$0")/lib.sh"

IN=(--specs "$ENVFS_SPECS")

# signal SIG: a foreground daemon killed with SIG unmounts and exits 0.
for sig in TERM INT; do
	envfs_mount "${IN[@]}"
	[ "$(cat "$MNT/env/maxtext/gfx950/NNODES")" = 1 ] || fail "NNODES"
	kill -"$sig" "$PID"
	rc=0
	wait "$PID" || rc=$?
	PID=""
	[ "$rc" -eq 0 ] || fail "SIG$sig: exit status $rc"
	! mountpoint -q "$MNT" || fail "SIG$sig left $MNT mounted"
	! grep -q "$MNT" /proc/mounts || fail "SIG$sig left $MNT in /proc/mounts"
done

# SIGTERM while readers keep the daemon busy: with no kernel caching
# (timeouts 0) 16 processes of back-to-back stat+open+read+close
# (envfs-readloop) keep a request queued at all times, so the reading
# thread never sleeps and must take its signals between requests. In each
# loop mode: the default (a reading thread that spins, commits on workers),
# -s (one thread for everything), -o spin=0 (sleeps at once) and
# -o spin=10000.
: "${ENVFS_READLOOP:?meson sets ENVFS_READLOOP (tests/mount/readloop.c)}"
for mode in default -s "-o spin=0" "-o spin=10000"; do
	opts=(-o entry_timeout=0,attr_timeout=0)
	[ "$mode" = default ] || opts+=($mode)
	envfs_mount "${IN[@]}" "${opts[@]}"
	f=$MNT/env/maxtext/gfx950/NNODES
	[ "$(cat "$f")" = 1 ] || fail "$mode: NNODES"
	echo 3 >"$f" || fail "$mode: write"
	[ "$(cat "$f")" = 3 ] || fail "$mode: write not read back"
	loaders=()
	for _ in $(seq 1 16); do
		"$ENVFS_READLOOP" 30 "$f" "$MNT/env/maxtext/gfx950/env_file" &
		loaders+=($!)
	done
	sleep 0.5
	t0=$(date +%s%N)
	kill -TERM "$PID"
	# The load goes on until the mount is gone (the daemon unmounts, then
	# exits) or 3 s have passed, so a daemon deaf to the signal fails here
	# instead of hanging the test.
	for _ in $(seq 1 300); do
		grep -q "^[^ ]* $MNT " /proc/mounts || break
		sleep 0.01
	done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	kill "${loaders[@]}" 2>/dev/null || true
	wait "${loaders[@]}" 2>/dev/null || true
	rc=0
	wait "$PID" || rc=$?
	PID=""
	[ "$rc" -eq 0 ] || fail "$mode: SIGTERM under load: exit status $rc"
	[ "$ms" -lt 2000 ] || fail "$mode: SIGTERM under load took $ms ms"
	! mountpoint -q "$MNT" || fail "$mode: SIGTERM under load left $MNT mounted"
	note "$mode: SIGTERM under load of 16 readers: exited 0 in $ms ms"
done

# Without -f: the command returns once the mount is up; the daemon stays.
"$ENVFS_BIN" "${IN[@]}" "$MNT" 2>"$TMP/bg.err" || fail "background mount failed: $(cat "$TMP/bg.err")"
ERR_FILES+=("$TMP/bg.err")
mountpoint -q "$MNT" || fail "background mount: not mounted"
[ "$(cat "$MNT/env/maxtext/gfx950/NNODES")" = 1 ] || fail "background mount: NNODES"
# Find the daemon by the mount it serves (the test's own unique path).
bgpid=$(pgrep -f -- "primus-envfs.* $MNT\$" | head -1)
[ -n "$bgpid" ] || fail "no background daemon"
# Detached (fs/mount/daemonize.c): a session of its own, stdio on /dev/null.
[ "$(ps -o sid= -p "$bgpid" | tr -d ' ')" = "$bgpid" ] ||
	fail "background daemon is not a session leader: sid $(ps -o sid= -p "$bgpid")"
for fd in 0 1 2; do
	[ "$(readlink "/proc/$bgpid/fd/$fd")" = /dev/null ] ||
		fail "background daemon fd $fd is $(readlink "/proc/$bgpid/fd/$fd")"
done
kill -TERM "$bgpid"
for _ in $(seq 1 100); do
	kill -0 "$bgpid" 2>/dev/null || break
	sleep 0.02
done
! kill -0 "$bgpid" 2>/dev/null || fail "background daemon survived SIGTERM"
! mountpoint -q "$MNT" || fail "background daemon left $MNT mounted"

# Without -f, a start that fails after the fork (here: no address space
# for the workers' stacks) still exits 2 with its reason on the terminal:
# the shell is told only once the threads run (fs/mount/daemonize.h). ASan
# and TSan need terabytes of address space, so not under them. 40 MB: the
# inputs load and the workers' stacks do not fit.
if ! grep -q -e __asan_init -e __tsan_init "$ENVFS_BIN" 2>/dev/null; then
	rc=0
	(ulimit -v 40000 && exec "$ENVFS_BIN" "${IN[@]}" "$MNT") 2>"$TMP/bgfail.err" || rc=$?
	[ "$rc" -eq 2 ] || fail "background start without workers exited $rc, not 2"
	grep -q "cannot start the FUSE workers" "$TMP/bgfail.err" ||
		fail "background start without workers: no reason on stderr: $(cat "$TMP/bgfail.err")"
	! mountpoint -q "$MNT" || fail "background start without workers left $MNT mounted"
fi

# expect_fail NAME PATTERN LINES CMD...: CMD exits non-zero, prints exactly
# LINES lines on stderr, the first matching PATTERN, and mounts nothing.
expect_fail() {
	local name=$1 pat=$2 lines=$3 rc=0 n
	shift 3
	"$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "$name: exit status 0"
	n=$(wc -l <"$TMP/err")
	[ "$n" -eq "$lines" ] || fail "$name: $n lines on stderr, want $lines: $(cat "$TMP/err")"
	grep -qE -- "$pat" "$TMP/err" || fail "$name: stderr '$(cat "$TMP/err")' does not match $pat"
	! grep -qE 'AddressSanitizer|runtime error:' "$TMP/err" || fail "$name: sanitizer report"
	! mountpoint -q "$MNT" || fail "$name: something got mounted"
}

expect_fail "missing mountpoint" "$TMP/nonexistent.*No such file or directory" 1 \
	"$ENVFS_BIN" "${IN[@]}" -f "$TMP/nonexistent"
touch "$TMP/plainfile"
expect_fail "file as mountpoint" "$TMP/plainfile.*Not a directory" 1 \
	"$ENVFS_BIN" "${IN[@]}" -f "$TMP/plainfile"
expect_fail "no mountpoint" "MOUNTPOINT" 1 "$ENVFS_BIN" "${IN[@]}" -f
expect_fail "bad timeout" "entry_timeout" 1 "$ENVFS_BIN" "${IN[@]}" -o entry_timeout=soon -f "$MNT"
expect_fail "bad spin" "spin=fast: expected microseconds from 0 to 10000" 1 \
	"$ENVFS_BIN" "${IN[@]}" -o spin=fast -f "$MNT"
expect_fail "spin too long" "spin=10001" 1 "$ENVFS_BIN" "${IN[@]}" -o spin=10001 -f "$MNT"
expect_fail "negative spin" "spin=-1" 1 "$ENVFS_BIN" "${IN[@]}" -o spin=-1 -f "$MNT"
expect_fail "unknown flag" "-x" 1 "$ENVFS_BIN" "${IN[@]}" -x -f "$MNT"
expect_fail "missing config" "nope.yaml" 1 "$ENVFS_BIN" "${IN[@]}" --config "$TMP/nope.yaml" -f "$MNT"
# A config that does not parse: there is no last good resolution yet.
printf 'env:\n  A: "x\n  B: [\n' >"$TMP/broken.yaml"
rc=0
"$ENVFS_BIN" "${IN[@]}" --config "$TMP/broken.yaml" -f "$MNT" 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] || fail "broken config at start: exit $rc"
grep -qE "^primus-envfs: $TMP/broken.yaml:[0-9]+:[0-9]+: error" "$TMP/err" ||
	fail "broken config at start: $(cat "$TMP/err")"
! grep -vq "error" "$TMP/err" || fail "broken config at start: stray lines: $(cat "$TMP/err")"
! mountpoint -q "$MNT" || fail "broken config got mounted"
# Unknown -o options are libfuse's to refuse.
rc=0
"$ENVFS_BIN" "${IN[@]}" -o no_such_option -f "$MNT" 2>"$TMP/err" || rc=$?
[ "$rc" -ne 0 ] || fail "-o no_such_option: exit 0"
grep -q no_such_option "$TMP/err" || fail "-o no_such_option: $(cat "$TMP/err")"
! mountpoint -q "$MNT" || fail "-o no_such_option got mounted"

# Busy: a second daemon on a live mount refuses with one line.
envfs_mount "${IN[@]}"
expect_fail_busy() {
	local rc=0
	"$ENVFS_BIN" "${IN[@]}" -f "$MNT" 2>"$TMP/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "busy: exit 0"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "busy: $(cat "$TMP/err")"
	grep -q "busy" "$TMP/err" || fail "busy: $(cat "$TMP/err")"
}
expect_fail_busy
[ "$(cat "$MNT/env/maxtext/gfx950/NNODES")" = 1 ] || fail "first mount hurt by the second"
envfs_umount

# -o ro: the kernel refuses every change.
envfs_mount "${IN[@]}" -o ro
grep -E " $MNT fuse.primus-envfs ro[, ]" /proc/mounts >/dev/null || fail "-o ro: $(grep "$MNT" /proc/mounts)"
out=$(touch "$MNT/env/maxtext/gfx950/NEW_NAME" 2>&1) && fail "-o ro: create succeeded"
echo "$out" | grep >/dev/null 'Read-only file system' || fail "-o ro: $out"
[ "$(cat "$MNT/env/maxtext/gfx950/NNODES")" = 1 ] || fail "-o ro: NNODES"
envfs_umount

# Read side of a writable mount until overrides exist: views refuse writes.
envfs_mount "${IN[@]}"
out=$( (echo x >"$MNT/env/maxtext/gfx950/env_file") 2>&1) && fail "wrote a view"
echo "$out" | grep >/dev/null 'Permission denied' || fail "write to a view: $out"
out=$( (echo x >"$MNT/status") 2>&1) && fail "wrote status"
envfs_umount

# -o allow_other: other users get in, and the kernel checks modes.
printf 'HF_TOKEN=xyz-secret\n' >"$TMP/secret.env"
envfs_mount "${IN[@]}" --env-file "$TMP/secret.env" -o allow_other
opts=$(awk -v m="$MNT" '$2 == m { print $4 }' /proc/mounts)
[[ ",$opts," == *,allow_other,* && ",$opts," == *,default_permissions,* ]] ||
	fail "-o allow_other: mount options $opts"
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	chmod 755 "$TMP"   # mktemp made it 0700: let the other user reach $MNT
	[ "$(as_nobody cat "$MNT/env/maxtext/gfx950/NNODES")" = 1 ] || fail "nobody cannot read NNODES"
	! as_nobody cat "$MNT/env/maxtext/gfx950/HF_TOKEN" 2>/dev/null || fail "nobody read the secret"
	! as_nobody cat "$MNT/env/maxtext/gfx950/env_file" 2>/dev/null || fail "nobody read env_file with a secret"
fi
envfs_umount
