#!/bin/bash
# The history beside --state (STATE.history): after a remount with the
# same --state, `history` lists the earlier generations (the last
# history=N), numbered on from them; the file is 0600 and holds no
# secret's value; a corrupt or hostile file is named with its line on
# stderr and the mount starts with an empty history; a file others can
# write is refused, as the state file is.
. "$(dirname "$0")/lib.sh"

cfg="$TMP/exp.yaml"
state="$TMP/run.state"
hfile="$state.history"
printf 'env:\n  NCCL_DEBUG: "INFO"\n' >"$cfg"
dir="$MNT/env/maxtext/gfx950"
hist() { "$ENVFS_BIN" history --mount "$MNT" maxtext/gfx950 "$@"; }
changes() { awk '/^gen /{keep = $4 != "start"} keep' "$1"; }

envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state"
echo 7 >"$dir/NNODES"
rm "$dir/NCCL_DEBUG"
mv "$dir/NNODES" "$dir/NNODES_MOVED"
py_errno "put('$dir/HF_TOKEN', 'tok-hstate-1\n')" >/dev/null
hist >"$TMP/h1"
envfs_umount
[ -f "$hfile" ] || fail "no $hfile after the changes"
[ "$(stat -c %a "$hfile")" = 600 ] || fail "$hfile has mode $(stat -c %a "$hfile")"
! grep -q 'tok-hstate' "$hfile" || fail "$hfile holds the secret's value"
[ "$(changes "$TMP/h1" | grep -c '^gen ')" -eq 5 ] || fail "not five changes (the secret: a create, then a write): $(cat "$TMP/h1")"

# Remounted: the same changes, then the new start, numbered after them.
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state"
hist >"$TMP/h2"
changes "$TMP/h1" >"$TMP/c1"
head -n "$(wc -l <"$TMP/c1")" <(changes "$TMP/h2") >"$TMP/c2"
diff -u "$TMP/c1" "$TMP/c2" || fail "the remount lost or changed the history"
for c in write rm mv; do
	grep -qE "^gen [0-9]+  [^ ]+  $c  uid $(id -u) pid [0-9]+\$" "$TMP/h2" || fail "no $c after the remount: $(cat "$TMP/h2")"
done
grep -qx '  maxtext/gfx950 NCCL_DEBUG: "INFO" config -> (unset)' "$TMP/h2" || fail "rm's change: $(cat "$TMP/h2")"
last=$(sed -n 's/^gen \([0-9]*\) .*/\1/p' "$TMP/c1" | tail -1)
new=$(sed -n 's/^gen \([0-9]*\) .* start$/\1/p' "$TMP/h2" | tail -1)
[ -n "$new" ] && [ "$new" -gt "$last" ] || fail "the new start is gen '$new', the last kept $last"
"$PYTHON" "$ENVFS_SOURCE_ROOT/tests/schema_check.py" "$ENVFS_SPECS/schemas/history.schema.json" \
	"$MNT/history" || fail "the history file of the mount is not valid"
envfs_umount

# A reload's generation, the last before an unmount, is kept (its save
# waits for the next change; the unmount is one) and its number is not
# given again after the remount.
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state"
printf 'env:\n  NCCL_DEBUG: "INFO"\n  ENVFS_RELOADED: "1"\n' >"$cfg.new"
mv "$cfg.new" "$cfg"
wait_for_value "$dir/ENVFS_RELOADED" 1 30000 >/dev/null
rgen=$(hist | sed -n 's/^gen \([0-9]*\) .* reload$/\1/p' | tail -1)
[ -n "$rgen" ] || fail "no reload generation: $(hist)"
envfs_umount
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state"
hist >"$TMP/h3"
grep -qE "^gen $rgen  [^ ]+  reload\$" "$TMP/h3" || fail "the reload's gen $rgen was lost at the unmount: $(cat "$TMP/h3")"
new=$(sed -n 's/^gen \([0-9]*\) .* start$/\1/p' "$TMP/h3" | tail -1)
[ "$new" -gt "$rgen" ] || fail "the new start is gen $new, after the reload's $rgen"
envfs_umount
printf 'env:\n  NCCL_DEBUG: "INFO"\n' >"$cfg"

# A change made offline (set --state) is a generation too: the remount
# tells it, after the ones before, and numbers on after it (it left no
# trace: the next start showed the new value with no change behind it).
"$ENVFS_BIN" set --specs "$ENVFS_SPECS" --config "$cfg" --state "$state" maxtext/gfx950 \
	ENVFS_OFFLINE 7 || fail "set --state offline: exit $?"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state"
hist >"$TMP/h4"
ogen=$(sed -n "s/^gen \([0-9]*\)  [^ ]*  write  uid $(id -u) pid [0-9]*\$/\1/p" "$TMP/h4" | tail -1)
grep -qx '  maxtext/gfx950 ENVFS_OFFLINE: (unset) -> "7" override' "$TMP/h4" && [ -n "$ogen" ] &&
	[ "$ogen" -gt "$rgen" ] || fail "the offline set is not in the history after the reload's gen $rgen: $(cat "$TMP/h4")"
new=$(sed -n 's/^gen \([0-9]*\) .* start$/\1/p' "$TMP/h4" | tail -1)
[ "$new" -gt "$ogen" ] || fail "the start after an offline set is gen $new, not after $ogen"
envfs_umount

# history=2 after a remount: the last two.
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state" -o history=2
[ "$(grep -o '"generation":' "$MNT/history" | wc -l)" -eq 2 ] || fail "history=2 keeps: $(cat "$MNT/history")"
envfs_umount

# Corrupt and hostile files: the file and line named, an empty history.
ENVFS_STDERR_ALLOW="^primus-envfs: $hfile:[0-9]+: .*; the history starts empty\$"
bad() { # bad LINE CONTENT: the file with CONTENT, whose LINE is at fault
	printf '%b' "$2" >"$hfile"
	chmod 600 "$hfile"
	envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state"
	grep -q "^primus-envfs: $hfile:$1: .*; the history starts empty\$" "$DAEMON_ERR" ||
		fail "'$2': no message for line $1: $(cat "$DAEMON_ERR")"
	[ "$(grep -o '"generation":' "$MNT/history" | wc -l)" -eq 1 ] &&
		grep -q '"cause":"start"' "$MNT/history" || fail "'$2': the history: $(cat "$MNT/history")"
	envfs_umount
}
bad 1 'not a history\n'
bad 2 'primus-envfs-history 1\ngen 3 1 0 pwn - - -\n'
bad 3 'primus-envfs-history 1\ngen 3 1 0 write - - -\nvar =maxtext =gfx950 =X 0 1 =a =x =y\n'
bad 3 'primus-envfs-history 1\ngen 3 1 0 write - - -\nvar =maxtext =gfx950 =X 1 1 =leak - - 1 - - -\n'
bad 3 'primus-envfs-history 1\ngen 9 1 0 write - - -\ngen 3 1 0 write - - -\n'
bad 2 "primus-envfs-history 1\ngen 3 1 0 write 1 1 =$(head -c 70000 /dev/zero | tr '\0' a)\n"
bad 2 'primus-envfs-history 1\ngen 3 1 0 write - - -'
# A generation the next could not follow, or JSON readers could not tell
# apart (over 2^53), is refused rather than wrapped past 2^64-1.
bad 2 'primus-envfs-history 1\ngen 18446744073709551615 1 0 write - - -\nend 1\n'
bad 2 'primus-envfs-history 1\ngen 9007199254740993 1 0 write - - -\nend 1\n'
bad 2 'primus-envfs-history 1\ngen 3 1 0 write - - =a\0b\n'

# A file others can write is refused, as the state file is.
printf 'primus-envfs-history 1\n' >"$hfile"
chmod 666 "$hfile"
set +e
"$ENVFS_BIN" --specs "$ENVFS_SPECS" --config "$cfg" --state "$state" -f "$MNT" 2>"$TMP/ww.err"
rc=$?
set -e
[ "$rc" -ne 0 ] && grep -q "$hfile.*someone else could have written it" "$TMP/ww.err" ||
	fail "a history file others can write: exit $rc, $(cat "$TMP/ww.err")"

# A variable that is a secret now has no value in the history, whatever
# it was when the history was written: --secret added at a remount, and
# a file that gives a name secret by pattern (PGPASSWORD) a value.
rm -f "$hfile" "$state"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state"
echo histSECRETv1 >"$dir/MYVAR"
echo histSECRETv2 >"$dir/MYVAR"
grep -q histSECRETv1 "$MNT/history" || fail "the values of MYVAR before it is a secret: $(cat "$MNT/history")"
envfs_umount
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state" --secret MYVAR
! grep -q histSECRET "$MNT/history" || fail "MOUNT/history keeps the values of a secret: $(cat "$MNT/history")"
hist MYVAR >"$TMP/h_sec"
grep -q 'MYVAR' "$TMP/h_sec" || fail "the secret's changes are gone: $(cat "$TMP/h_sec")"
! grep -q histSECRET "$TMP/h_sec" || fail "history prints the values of a secret: $(cat "$TMP/h_sec")"
echo x >"$dir/NNODES"   # a change, so the file is saved again
envfs_umount
! grep -q histSECRET "$hfile" || fail "$hfile keeps the values of a secret"
printf 'primus-envfs-history 1\ngen 1 1 0 write 0 1 -\nvar =maxtext =gfx950 =PGPASSWORD 0 0 - - - 1 =LEAKEDpg1 =override -\nend 1\n' >"$hfile"
chmod 600 "$hfile"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state"
grep -q PGPASSWORD "$MNT/history" || fail "the change of PGPASSWORD is gone: $(cat "$MNT/history")"
! grep -q LEAKEDpg "$MNT/history" || fail "a secret by pattern is served with its value: $(cat "$MNT/history")"
! hist PGPASSWORD | grep -q LEAKEDpg || fail "history prints a value of a secret by pattern"
envfs_umount
# A layer in the file is printed escaped, as the value beside it is.
printf 'primus-envfs-history 1\ngen 1 1 0 write 0 1 -\nvar =maxtext =gfx950 =NCCL_DEBUG 0 0 - - - 1 =v1 =over%%0Alayer%%1B[2J -\nend 1\n' >"$hfile"
chmod 600 "$hfile"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --state "$state"
hist NCCL_DEBUG >"$TMP/h_esc"
! grep -q "$(printf '\033')" "$TMP/h_esc" || fail "history prints a layer's ESC raw: $(od -c "$TMP/h_esc" | head)"
grep -q '"v1" over\\nlayer\\x1b\[2J$' "$TMP/h_esc" || fail "the layer is not shown escaped: $(cat "$TMP/h_esc")"
envfs_umount
echo "ok: history_state"
