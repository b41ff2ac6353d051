#!/bin/bash
# Crash (issue 8.5). CRASH_ITERATIONS (50 by default) times: a writer loops
# over overrides, logging each value once its close() returned; the daemon
# is SIGKILLed 0-300 ms in; the dead mount is cleaned up with
# `fusermount3 -uz`; a remount with the same --state must load the state
# file and show every acknowledged write (the last one per variable, or
# the later one that was in flight). Then faults on the state-file path,
# injected with strace: a failing rename, fsync of the temporary file and
# fsync of the directory each give the writer's close() EIO, leave the
# state file byte-identical and the variable at its previous value, and
# the next write succeeds.
. "$(dirname "$0")/lib.sh"

ENVFS_STDERR_ALLOW='cannot save the state'
ITER=${CRASH_ITERATIONS:-50}
sdir="$TMP/state"
mkdir "$sdir"
state="$sdir/run.state.yaml"
log="$TMP/acked"
dir="$MNT/env/maxtext/gfx950"
IN=(--specs "$ENVFS_SPECS" --state "$state")
: >"$log"

# writer BASE: sets CRASH_0..CRASH_19 in turn to c<BASE + n>, appending
# "name n" to $log after each close() that succeeded, until one fails (the
# daemon is dead). Values grow across iterations, so "at least the last
# acknowledged" is a comparison of numbers.
writer() {
	"$PYTHON" - "$dir" "$log" "$1" <<'PY'
import os, sys
d, log, base = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(log, "a") as out:
    for n in range(base, base + 1000000):
        name = "CRASH_%d" % (n % 20)
        try:
            fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            try:
                os.write(fd, b"c%d\n" % n)
            finally:
                os.close(fd)
        except OSError:
            break
        out.write("%s %d\n" % (name, n))
        out.flush()
PY
}

# verify: every variable in $log holds its last logged value or a later
# one; prints the number of variables checked.
verify() {
	"$PYTHON" - "$dir" "$log" <<'PY'
import os, sys
d, log = sys.argv[1], sys.argv[2]
last = {}
for line in open(log):
    name, n = line.split()
    last[name] = max(last.get(name, 0), int(n))
bad = 0
for name, n in sorted(last.items()):
    try:
        got = open(os.path.join(d, name)).read()
    except OSError as e:
        got = str(e)
    if not (got.startswith("c") and got.endswith("\n") and got[1:-1].isdigit()
            and int(got[1:-1]) >= n):
        print("%s is %r, but c%d was acknowledged" % (name, got, n), file=sys.stderr)
        bad += 1
print(len(last))
sys.exit(1 if bad else 0)
PY
}

envfs_mount "${IN[@]}"
total_ms=0
for i in $(seq 1 "$ITER"); do
	writer $((i * 1000000)) &
	wpid=$!
	ms=$((RANDOM % 301))
	total_ms=$((total_ms + ms))
	sleep "$(printf '0.%03d' "$ms")"
	kill -KILL "$PID"
	wait "$PID" 2>/dev/null || true
	PID=""
	wait "$wpid" || true
	fusermount3 -uz "$MNT" || fail "iteration $i: fusermount3 -uz"
	# The state file loads (the mount refuses one that does not) ...
	envfs_mount "${IN[@]}"
	# ... and holds every acknowledged write.
	nvars=$(verify) || fail "iteration $i: an acknowledged write was lost (killed after $ms ms)"
done
acked=$(wc -l <"$log")
leftover=$(find "$sdir" -name '.run.state.yaml.*' | wc -l)
[ "$acked" -gt "$ITER" ] || fail "only $acked writes were acknowledged in $ITER iterations"
# The fault tests below count saves: FAULT_V exists first, so that each
# of their writes is one save (creating a variable is a save of its own).
expect_errno ok "put('$dir/FAULT_V', 'zero\\n')"
note "crash: $ITER SIGKILLs (mean $((total_ms / ITER)) ms after the writer started), $acked acknowledged writes over $nvars variables, none lost; $leftover temporary files left behind (never read)"
envfs_umount

# ---- faults on the state-file path ----
if ! command -v strace >/dev/null; then
	note "strace is not installed: fault injection skipped"
	echo "crash: ok (without fault injection)"
	exit 0
fi
REAL_BIN=$ENVFS_BIN

# fault SYSCALL WHEN WHAT: mounts under strace so that the WHEN-th call of
# SYSCALL fails with EIO. Three writes of FAULT_V succeed first (the
# mount does no state-file syscall before the first write, so the WHEN-th
# call falls in a later write); then a write that must fail, and one that
# must succeed again.
fault() {
	local sc=$1 when=$2 what=$3 got
	# LeakSanitizer cannot run under ptrace; the other tests check leaks.
	cat >"$TMP/strace-envfs" <<SH
#!/bin/sh
ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
exec strace -f -qq -o /dev/null -e trace=$sc -e inject=$sc:error=EIO:when=$when "$REAL_BIN" "\$@"
SH
	chmod +x "$TMP/strace-envfs"
	# strace counts calls per thread: one request thread (-s) makes
	# every save count.
	ENVFS_BIN="$TMP/strace-envfs" envfs_mount "${IN[@]}" -s
	for v in one two three; do
		expect_errno ok "put('$dir/FAULT_V', '$v\\n')"
	done
	cp "$state" "$TMP/state.before"
	got=$(py_errno "put('$dir/FAULT_V', 'lost\\n')")
	[ "$got" = EIO ] || fail "$what: close() gave $got, want EIO"
	cmp -s "$state" "$TMP/state.before" || fail "$what: the state file changed"
	[ "$(cat "$dir/FAULT_V")" = three ] || fail "$what: FAULT_V reads '$(cat "$dir/FAULT_V")', not the previous value"
	grep -q 'FAULT_V.*"three"' "$state" || fail "$what: the state file lost FAULT_V"
	expect_errno ok "put('$dir/FAULT_V', 'after\\n')"
	[ "$(cat "$dir/FAULT_V")" = after ] || fail "$what: the write after the fault"
	envfs_umount
	grep -q 'FAULT_V.*"after"' "$state" || fail "$what: the write after the fault is not saved"
	note "$what: close() got EIO, the state file stayed byte-identical, the value rolled back"
}
# Each write saves the state file (fsync of the temporary file, rename,
# fsync of the directory) on the request thread; the history beside it
# is saved by a thread of its own once the mount runs, but the history of
# the mount's start is saved before, on this thread (rename 1, fsync
# 1-2). The first three writes make calls 2-4 of rename, 3-8 of fsync;
# the fourth's are rename 5, fsync 9 and 10.
fault rename 5 "failing rename"
fault fsync 9 "failing fsync of the temporary file"
fault fsync 10 "failing fsync of the directory"
echo "crash: ok"
