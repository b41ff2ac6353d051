#!/bin/bash
# Every input as a mount option, parsed by libfuse's fuse_opt_parse (issue
# 15): -o config=,state=,inherit=,env=,env_file=,pass=,extra_arch=,specs=,
# host_root= (the repeatable ones repeatable), the -oLIST spelling, the
# SOURCE argument of mount(8) and fstab accepted and ignored, fstab's own
# options (auto, noauto, user, users, nouser, _netdev, nofail, defaults,
# x-*) dropped, and an option nobody knows refused by libfuse.
. "$(dirname "$0")/lib.sh"

cfg="$TMP/exp.yaml"
printf 'env:\n  FROM_CONFIG: "c"\n' >"$cfg"
printf 'IMG_A=1\nIMG_B=first\n' >"$TMP/a.env"
printf 'IMG_B=second\n' >"$TMP/b.env"
printf 'FROM_ENV_FILE=f\n' >"$TMP/run.env"
state="$TMP/state.yaml"
dir="$MNT/env/maxtext/gfx950"

export PASSED_ON=p
envfs_mount none -o "config=$cfg,state=$state,inherit=$TMP/a.env" -o "inherit=$TMP/b.env" \
	-o "env=ONE=1,env=TWO=a=b,env_file=$TMP/run.env,pass=PASSED_ON,extra_arch=gfx1200" \
	-o "specs=$ENVFS_SPECS,host_root=$ENVFS_FIXTURES/host/gfx942" \
	-o auto,noauto,user,users,nouser,_netdev,nofail,defaults,x-systemd.automount
for kv in FROM_CONFIG=c IMG_A=1 IMG_B=second ONE=1 TWO=a=b FROM_ENV_FILE=f PASSED_ON=p; do
	n=${kv%%=*}
	[ "$(cat "$dir/$n")" = "${kv#*=}" ] || fail "-o: $n reads '$(cat "$dir/$n" 2>&1)', want '${kv#*=}'"
done
[ -d "$MNT/env/maxtext/gfx1200" ] || fail "-o extra_arch=gfx1200: no directory"
grep -qx "config: $cfg" "$MNT/status" && grep -qx "state: $state" "$MNT/status" &&
	grep -qx "specs: $ENVFS_SPECS" "$MNT/status" || fail "status does not show the -o inputs: $(head -8 "$MNT/status")"
[ "$(getfattr --absolute-names --only-values -n user.primus.source "$dir/FROM_ENV_FILE")" = "$TMP/run.env:1" ] ||
	fail "-o env_file=: source is not FILE:LINE"
# state= persists: a write survives a remount from the same option
echo 7 >"$dir/NNODES"
envfs_umount
envfs_mount -o "state=$state" -o"specs=$ENVFS_SPECS"
[ "$(cat "$dir/NNODES")" = 7 ] || fail "-o state=: the override did not persist"
envfs_umount

# -oro, and ro/rw as the last word wins
envfs_mount --specs "$ENVFS_SPECS" -oro
grep -qx 'mount: ro' "$MNT/status" || fail "-oro: status does not say ro"
[ "$(py_errno "put('$dir/NNODES', '2\n')")" = EROFS ] || fail "-oro: a write was not EROFS"
envfs_umount

# An option nobody knows: libfuse's own error, nothing mounted
run_err="$TMP/unknown.err"
if "$ENVFS_BIN" --specs "$ENVFS_SPECS" -f -o no_such_opt=1 "$MNT" 2>"$run_err"; then
	fail "-o no_such_opt=1 mounted"
fi
grep -q 'no_such_opt' "$run_err" || fail "-o no_such_opt: the error does not name it: $(cat "$run_err")"
! mountpoint -q "$MNT" || fail "-o no_such_opt left a mount"
# Bad values of our own options: one line, exit 64 for the command line
set +e
"$ENVFS_BIN" -f -o entry_timeout=x "$MNT" 2>"$run_err"
rc=$?
"$ENVFS_BIN" -f -o env=1BAD=x "$MNT" 2>"$TMP/env.err"
rc2=$?
set -e
[ "$rc" -ne 0 ] && grep -q 'entry_timeout=x: expected a number' "$run_err" ||
	fail "-o entry_timeout=x: exit $rc: $(cat "$run_err")"
[ "$rc2" -ne 0 ] && grep -q '1BAD' "$TMP/env.err" || fail "-o env=1BAD=x: exit $rc2: $(cat "$TMP/env.err")"
echo "ok: options"
