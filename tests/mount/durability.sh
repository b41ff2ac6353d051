#!/bin/bash
# --state (SPEC 7): every change is durable before close() returns. A
# writer loops over overrides and logs each value once its close() has
# returned; the daemon is SIGKILLed in the middle; a remount with the same
# state file shows every logged value. The state file always parses; a
# save that fails refuses the change and keeps the old file; a corrupt
# state file stops the mount naming the file and line.
. "$(dirname "$0")/lib.sh"

ENVFS_STDERR_ALLOW='cannot save the state|cannot restore the previous overrides'
sdir="$TMP/state"
mkdir "$sdir"
state="$sdir/run.state.yaml"
dir="$MNT/env/maxtext/gfx950"
IN=(--specs "$ENVFS_SPECS" --state "$state")

# ---- values that need escaping survive a remount byte for byte ----
envfs_mount "${IN[@]}"
printf 'q"uote\\back\tslash\nline\r\x01\x7f caf\xc3\xa9 \xe2\x80\xa8 end' >"$dir/MOUNT_ODD"
printf '\xff\xfe not utf-8' >"$dir/MOUNT_BIN"
printf '  lead and trail  ' >"$dir/MOUNT_SPACE"
cp "$dir/MOUNT_ODD" "$TMP/odd"
cp "$dir/MOUNT_BIN" "$TMP/bin"
rm "$dir/NCCL_CROSS_NIC"
[ "$(stat -c %a "$state")" = 600 ] || fail "state file mode $(stat -c %a "$state")"
envfs_umount
envfs_mount "${IN[@]}"
cmp "$TMP/odd" "$dir/MOUNT_ODD" || fail "escaped value did not round-trip"
cmp "$TMP/bin" "$dir/MOUNT_BIN" || fail "non-UTF-8 value did not round-trip"
[ "$(cat "$dir/MOUNT_SPACE")" = '  lead and trail  ' ] || fail "spaces did not round-trip"
[ ! -e "$dir/NCCL_CROSS_NIC" ] || fail "the unset did not survive"
grep -qx 'overrides: 4' "$MNT/status" || fail "status after remount: $(grep overrides "$MNT/status")"
"$PYTHON" -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' "$state" ||
	fail "the state file is not YAML"

# ---- a failed save refuses the change and keeps the old file ----
cp "$state" "$TMP/state.before"
mv "$sdir" "$sdir.away"
expect_errno ENOENT "put('$dir/MOUNT_SPACE', 'lost')"
[ "$(cat "$dir/MOUNT_SPACE")" = '  lead and trail  ' ] || fail "a refused change is visible"
mv "$sdir.away" "$sdir"
cmp "$state" "$TMP/state.before" || fail "the state file changed on a failed save"
echo kept >"$dir/MOUNT_SPACE"
[ "$(cat "$dir/MOUNT_SPACE")" = kept ] || fail "writes after the failure"

# ---- SIGKILL in the middle of a loop of overrides ----
log="$TMP/written"
: >"$log"
# bash ignores the result of close() after a redirection, so the writer
# is python: a value is logged only when its close() succeeded.
"$PYTHON" - "$dir" "$log" <<'PY' &
import os, sys
d, log = sys.argv[1], sys.argv[2]
with open(log, "a") as out:
    for i in range(1, 100000):
        name = "MOUNT_DUR_%d" % (i % 37)
        try:
            with open(os.path.join(d, name), "w") as f:
                f.write("v%d\n" % i)
        except OSError:
            break
        out.write("%s v%d\n" % (name, i))
        out.flush()
PY
writer=$!
# Watch the file while it is rewritten: every version parses.
"$PYTHON" - "$state" "$log" <<'PY' || fail "a version of the state file did not parse"
import os, sys, time, yaml
state, log = sys.argv[1], sys.argv[2]
seen = 0
deadline = time.time() + 10
while time.time() < deadline and os.path.getsize(log) < 8000:
    with open(state) as f:
        doc = yaml.safe_load(f)
    assert doc["version"] == 1 and isinstance(doc["overrides"], list), doc
    seen += 1
print("# parsed the state file %d times" % seen, file=sys.stderr)
PY
kill -KILL "$PID"
wait "$PID" 2>/dev/null || true
PID=""
wait "$writer" || true
fusermount3 -uz "$MNT"
n_logged=$(wc -l <"$log")
[ "$n_logged" -gt 50 ] || fail "only $n_logged writes before the kill"
note "$n_logged writes had returned before SIGKILL"

envfs_mount "${IN[@]}"
# Every value whose close() returned is there, or a later one (the write
# in flight at the kill may have been committed without returning).
declare -A last
while read -r name val; do
	last[$name]=${val#v}
done <"$log"
for name in "${!last[@]}"; do
	got=$(cat "$dir/$name") || fail "$name lost"
	[ "${got#v}" -ge "${last[$name]}" ] || fail "$name is $got, but v${last[$name]} was written"
done
envfs_umount

# ---- a corrupt state file stops the mount, naming file and line ----
# bad_state TEXT LINE: the mount must fail and name $state:LINE.
bad_state() {
	local rc=0
	printf '%s' "$1" >"$state"
	"$ENVFS_BIN" "${IN[@]}" -f "$MNT" 2>"$TMP/bad.err" || rc=$?
	if mountpoint -q "$MNT"; then
		fusermount3 -u "$MNT"
		fail "mounted with a corrupt state file"
	fi
	[ "$rc" -ne 0 ] || fail "exit 0 with a corrupt state file"
	grep -q "$state:$2:" "$TMP/bad.err" || fail "no $state:$2 in: $(cat "$TMP/bad.err")"
	grep -q 'never discarded' "$TMP/bad.err" || fail "no advice in: $(cat "$TMP/bad.err")"
}
bad_state $'version: 1\noverrides:\n  - {backend: "maxtext", arch: "gfx950", name: "A", value: "x"\n' 4
bad_state $'version: 1\noverrides:\n  - {backend: "maxtext", arch: "gfx950", name: "A", value: "x"}\n  - {backend: "maxtext", arch: "gfx950", name: "A=B", value: "x"}\n' 4
bad_state $'version: 1\noverrides:\n  - {backend: "maxtext", arch: "gfx950", name: "A"}\n' 3
bad_state $'version: 2\noverrides: []\n' 1
bad_state $'\x89PNG garbage: [\n' 1
