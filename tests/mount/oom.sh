#!/bin/bash
# A reload that fails for lack of memory says so (issue 14.11): in status
# (last_error), in diagnostics and on the daemon's stderr, while the last
# good resolution is served; once memory is back, the next edit recovers.
# The daemon's address space is capped with prlimit just above what it
# uses, and a config of nearly 1 MiB cannot be read within the cap.
. "$(dirname "$0")/lib.sh"

command -v prlimit >/dev/null || { echo "prlimit (util-linux) is missing: skipped" >&2; exit 77; }
if grep -qa -e __asan_init -e __tsan_init "$ENVFS_BIN" 2>/dev/null; then
	echo "AddressSanitizer and ThreadSanitizer reserve terabytes of address space and abort on a failed malloc: skipped" >&2
	exit 77
fi

ENVFS_STDERR_ALLOW='out of memory'
cfg="$TMP/exp.yaml"
printf 'env:\n  NCCL_IB_GID_INDEX: "5"\n' >"$cfg"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg"
dir="$MNT/env/maxtext/gfx950"
[ "$(cat "$dir/NCCL_IB_GID_INDEX")" = 5 ] || fail "initial value"
gen0=$(sed -n 's/^generation: //p' "$MNT/status")

# A config of nearly 1 MiB: 20,000 keys.
"$PYTHON" - "$cfg.big" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("env:\n  NCCL_IB_GID_INDEX: \"6\"\n")
    for i in range(20000):
        f.write("  MOUNT_BIG_%05d: \"%s\"\n" % (i, "v" * 20))
PY
vm=$(awk '/^VmSize:/ { print $2 }' "/proc/$PID/status")
prlimit --pid "$PID" --as=$(((vm + 512) * 1024)):
mv "$cfg.big" "$cfg"
start=$(now_ms)
until grep -q '^last_error: .*out of memory' "$MNT/status"; do
	[ $(($(now_ms) - start)) -le 3000 ] ||
		fail "status does not say out of memory: $(grep last_error "$MNT/status")"
	sleep 0.02
done
grep -q 'error: .*out of memory' "$MNT/diagnostics" || fail "diagnostics: $(cat "$MNT/diagnostics")"
grep -q 'out of memory' "$DAEMON_ERR" || fail "stderr says nothing"
[ "$(cat "$dir/NCCL_IB_GID_INDEX")" = 5 ] || fail "the last good value is not served"
[ "$(sed -n 's/^generation: //p' "$MNT/status")" = "$gen0" ] || fail "the generation moved"

# Memory back: the next edit recovers.
prlimit --pid "$PID" --as=unlimited:
printf 'env:\n  NCCL_IB_GID_INDEX: "7"\n' >"$cfg.new"
mv "$cfg.new" "$cfg"
wait_for_value "$dir/NCCL_IB_GID_INDEX" 7 2000 >/dev/null
grep -qx 'last_error: none' "$MNT/status" || fail "not recovered: $(grep last_error "$MNT/status")"
envfs_umount
