# The systemd unit (system/primus-envfs.service.in), as this build
# configures and `meson install` installs it: ExecStart runs the installed
# binary in the foreground (-f, so its stderr is the journal) with
# Type=notify (it says READY=1 once the mount serves, so
# Before=docker.service holds), and systemd-analyze verify accepts it
# without a word. Skipped (77) where systemd-analyze is missing.
set -eu
. "$(dirname "$0")/lib.sh"

if [ "${ENVFS_HAS_MOUNT:-1}" != 1 ]; then
	echo "built with -Dfuse=disabled: no mount, no unit" >&2
	exit 77
fi
build=$(cd "$(dirname "$ENVFS_BIN")/.." && pwd)
unit="$build/system/primus-envfs.service"
[ -f "$unit" ] || fail "the build configured no unit at $unit"
bindir=$(meson introspect --buildoptions "$build" | python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(os.path.join(o["prefix"], o["bindir"]))')

grep -qx 'Type=notify' "$unit" || fail "the unit is not Type=notify"
grep -q '^Before=.*docker.service' "$unit" || fail "the unit is not Before=docker.service"
grep -qx "ExecStart=$bindir/primus-envfs \$PRIMUS_ENVFS_ARGS -f -o allow_other /mnt/primus" "$unit" ||
	fail "ExecStart does not run $bindir/primus-envfs in the foreground: $(grep ExecStart= "$unit")"
! grep -q '@[A-Z]*@' "$unit" || fail "unsubstituted @VAR@ in the unit"

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "systemd-analyze not installed: the unit was not verified" >&2
	exit 77
fi
# The installed binary is not on this machine: verify a copy that runs
# the build's (verify checks the command exists), and the man page is
# not installed either (--man=no).
sed "s|^ExecStart=$bindir/primus-envfs |ExecStart=$ENVFS_BIN |" "$unit" >"$TMP/primus-envfs.service"
run "$TMP/verify.out" "$TMP/verify.err" systemd-analyze verify --man=no "$TMP/primus-envfs.service"
[ "$rc" -eq 0 ] || fail "systemd-analyze verify exited $rc: $(cat "$TMP/verify.err")"
# verify exits 0 on warnings too: it must have said nothing.
[ ! -s "$TMP/verify.err" ] && [ ! -s "$TMP/verify.out" ] ||
	fail "systemd-analyze verify complained: $(cat "$TMP/verify.err" "$TMP/verify.out")"
echo "ok: systemd_unit"
