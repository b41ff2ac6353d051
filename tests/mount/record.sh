#!/bin/bash
# The run record in the mount and diff against a mount: the record file
# of a directory follows every change (a write is an override with its
# source); diff record:FILE mount:DIR shows what changed since the record
# was taken, each variable once, with the layer on each side; a secret
# written through the mount is compared in the diff process and never
# shown.
. "$(dirname "$0")/lib.sh"

cfg="$TMP/exp.yaml"
printf 'env:\n  NCCL_DEBUG: "INFO"\n' >"$cfg"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg"
dir="$MNT/env/maxtext/gfx950"
SCHEMA="$ENVFS_SPECS/schemas/record.schema.json"

[ "$(stat -c %a "$dir/record")" = 444 ] || fail "record mode $(stat -c %a "$dir/record")"
cp "$dir/record" "$TMP/before.json"
"$PYTHON" "$ENVFS_SOURCE_ROOT/tests/schema_check.py" "$SCHEMA" "$TMP/before.json" ||
	fail "the mount's record is not valid"
"$ENVFS_BIN" diff "record:$TMP/before.json" "mount:$MNT" >"$TMP/same" ||
	fail "a record of the mount differs from the mount: $(cat "$TMP/same")"
grep -qx 'no differences' "$TMP/same" || fail "no 'no differences': $(cat "$TMP/same")"

# A write, and a secret written with a mode that keeps it private.
echo WARN >"$dir/NCCL_DEBUG"
py_errno "put('$dir/HF_TOKEN', 'tok-one\n')" >/dev/null
grep -q '"name":"NCCL_DEBUG","value":"WARN"' "$dir/record" || fail "the record did not follow the write"
grep -q 'tok-one' "$dir/record" && fail "the record holds the secret's value"
set +e
"$ENVFS_BIN" diff "record:$TMP/before.json" "mount:$MNT" >"$TMP/after" 2>"$TMP/after.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "diff after a write exited $rc: $(cat "$TMP/after" "$TMP/after.err")"
grep -qx 'changed NCCL_DEBUG' "$TMP/after" || fail "no changed NCCL_DEBUG: $(cat "$TMP/after")"
grep -qxF "  a: \"INFO\"  config  $cfg:2" "$TMP/after" || fail "a's side: $(cat "$TMP/after")"
grep -qx '  b: "WARN"  override  override' "$TMP/after" || fail "b's side: $(cat "$TMP/after")"
grep -qx 'added HF_TOKEN: secret, only in b' "$TMP/after" || fail "the secret: $(cat "$TMP/after")"
[ "$(grep -c '^changed NCCL_DEBUG$' "$TMP/after")" = 1 ] || fail "NCCL_DEBUG listed more than once"
grep -qxF -- "+++ b: mount:$MNT (maxtext/gfx950)" "$TMP/after" || fail "b's label: $(head -2 "$TMP/after")"
# The override does not survive the launch (the config sets it): a warning
# the record did not have.
grep -qx 'diagnostics only in b:' "$TMP/after" || fail "the new warning is not shown: $(cat "$TMP/after")"

# Two records of the mount: the secret is compared through its file.
cp "$dir/record" "$TMP/with-secret.json"
py_errno "put('$dir/HF_TOKEN', 'tok-two\n')" >/dev/null
set +e
"$ENVFS_BIN" diff "mount:$MNT" "mount:$MNT" -b maxtext -a gfx950 --all >"$TMP/self"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "a mount against itself exited $rc: $(cat "$TMP/self")"
grep -qx 'same HF_TOKEN: secret, the same' "$TMP/self" || fail "secret vs itself: $(cat "$TMP/self")"
! grep -q -e tok-one -e tok-two "$TMP/after" "$TMP/self" || fail "a diff printed the secret"
# A mount side that is no mount, or a directory the mount does not have,
# is named as such (exit 2: a side cannot be read), as set names them.
diff_err() { # diff_err WANT ARGS...: exit 2 and a message matching WANT
	local want=$1 rc=0
	shift
	"$ENVFS_BIN" diff "$@" >"$TMP/derr.out" 2>"$TMP/derr" || rc=$?
	[ "$rc" -eq 2 ] && grep -q -- "$want" "$TMP/derr" ||
		fail "diff $*: exit $rc, want 2 and '$want': $(cat "$TMP/derr")"
}
diff_err "mount:$TMP: not a primus-envfs mount (no status file)" "mount:$TMP" "mount:$MNT" -b maxtext -a gfx950
diff_err "mount:$MNT: no directory nosuch/gfx950" "mount:$MNT" "mount:$MNT" -b nosuch -a gfx950
diff_err "mount:$MNT: no directory maxtext/gfx1" "record:$TMP/before.json" "mount:$MNT" -a gfx1
envfs_umount

# The record names the bytes each input was loaded from: the config's
# after a reload, and the --env-file's as read at start (its lines are
# not read again, so a later edit of the file is not what the run got).
printf 'env:\n  NCCL_DEBUG: "INFO"\n' >"$cfg"
printf 'NCCL_IB_HCA=mlx5_0\n' >"$TMP/run.env"
env_sum=$(sha256sum <"$TMP/run.env" | cut -d' ' -f1)
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --env-file "$TMP/run.env"
input_sum() { # input_sum KIND: the record's sha256 of its input of that kind
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(i["sha256"] or "null" for i in r["inputs"] if i["kind"] == sys.argv[2]))' "$dir/record" "$1"
}
[ "$(input_sum env-file)" = "$env_sum" ] || fail "env-file sha256 $(input_sum env-file), not $env_sum"
[ "$(input_sum config)" = "$(sha256sum <"$cfg" | cut -d' ' -f1)" ] || fail "config sha256"
printf 'NCCL_IB_HCA=mlx5_1\n' >"$TMP/run.env"
printf 'env:\n  NCCL_DEBUG: "WARN"\n' >"$cfg.new"
mv "$cfg.new" "$cfg"
wait_for_value "$dir/NCCL_DEBUG" WARN 10000 >/dev/null
[ "$(input_sum config)" = "$(sha256sum <"$cfg" | cut -d' ' -f1)" ] ||
	fail "config sha256 after the reload: $(input_sum config)"
[ "$(cat "$dir/NCCL_IB_HCA")" = mlx5_0 ] || fail "the env-file was read again"
[ "$(input_sum env-file)" = "$env_sum" ] ||
	fail "env-file sha256 after the reload $(input_sum env-file): not the bytes loaded ($env_sum)"
"$PYTHON" "$ENVFS_SOURCE_ROOT/tests/schema_check.py" "$SCHEMA" "$dir/record" ||
	fail "the record with an env-file is not valid"
envfs_umount
echo "ok: record"
