#!/bin/bash
# Reload against a writer that keeps the config open: the reload waits for
# an in-place write to finish, but not forever. A process that holds the
# config open and appends to it every 100 ms (a logger, `exec 3>>cfg`, an
# editor's autosave) must not keep a change it made out of the mount for
# as long as it runs; nor must one that holds it open and idle. The bound
# is only a hang guard (10 s, wider under TSan); what the user sees
# otherwise is a mount that never reloads, with status saying nothing.
# The load that stops waiting says so, once.
ENVFS_STDERR_ALLOW='an input was kept open and written to for [0-9]+ s: loaded as it is now'
. "$(dirname "$0")/lib.sh"

BUDGET_S=$(( $(scaled_ms 10000) / 1000 ))
cfg="$TMP/exp.yaml"
printf 'env:\n  NCCL_IB_GID_INDEX: "5"\n' >"$cfg"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg"
dir="$MNT/env/maxtext/gfx950"
[ "$(cat "$dir/NCCL_IB_GID_INDEX")" = 5 ] || fail "initial value"

# writer MODE NAME: appends NAME: "1" through a descriptor it keeps open,
# then (MODE ticks) a comment every 100 ms or (MODE idle) nothing, until
# NAME shows in the mount or the budget runs out; prints found or
# missing.
writer() {
	"$PYTHON" - "$cfg" "$dir" "$BUDGET_S" "$1" "$2" <<'PY'
import os, sys, time
cfg, d, budget, mode, name = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
fd = os.open(cfg, os.O_WRONLY | os.O_APPEND)
os.write(fd, b'  %s: "1"\n' % name.encode())
end = time.time() + budget
i = 0
while time.time() < end and name not in os.listdir(d):
    i += 1
    if mode == "ticks":
        os.write(fd, b"# tick %d\n" % i)
    time.sleep(0.1)
print("found" if name in os.listdir(d) else "missing")
os.close(fd)
PY
}

[ "$(writer idle RW_IDLE)" = found ] ||
	fail "a writer holding the config open and idle kept its change out for ${BUDGET_S} s"
[ "$(writer ticks RW_TICKS)" = found ] ||
	fail "a writer holding the config open and appending every 100 ms kept its change out for ${BUDGET_S} s: $(grep -E '^(generation|last_error)' "$MNT/status" | tr '\n' ' ')"
envfs_umount
n=$(grep -c 'an input was kept open and written to for [0-9]* s: loaded as it is now' "$TMP"/daemon.*.err || true)
[ "$n" = 1 ] || fail "the load that stopped waiting for the appending writer was said $n times, want 1"
echo "ok reload_writer"
