#!/bin/bash
# Names the tree cannot hold (issue 14.10): a variable whose name holds a
# '/', is '.' or '..', is empty, is longer than 255 bytes or is named like
# a view file never appears in a listing or a lookup, never breaks the
# listing of its directory (a key `a/b` made every listing fail with EIO),
# and stays in the views; nothing else in the tree changes. Also when
# such a name appears or goes with a reload.
. "$(dirname "$0")/lib.sh"

long=$(printf 'L%.0s' $(seq 1 300))
cfg="$TMP/exp.yaml"
write_cfg() {
	printf 'env:\n  GOOD: "1"\n%s' "$1" >"$cfg"
}
bad_keys=$(printf '  a/b: "slash"\n  "/lead": "lead"\n  ".": "dot"\n  "..": "dotdot"\n  %s: "long"\n  env_file: "view"\n' "$long")
write_cfg "$bad_keys"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg"
dir="$MNT/env/maxtext/gfx950"

# check_tree: every directory lists, no bad name in any listing, the dot
# entries once each, the good variable there, the bad values in environ.
check_tree() {
	local d names
	for d in "$MNT" "$MNT/env" "$MNT/env/maxtext" "$dir" "$MNT/env/torch_fl/cuda"; do
		names=$(ls -a "$d") || fail "ls -a $d failed"
		[ "$(grep -cx '\.' <<<"$names")" -eq 1 ] || fail "$d: '.' listed $(grep -cx '\.' <<<"$names") times"
		[ "$(grep -cx '\.\.' <<<"$names")" -eq 1 ] || fail "$d: '..' listed $(grep -cx '\.\.' <<<"$names") times"
		! grep -qx "$long" <<<"$names" || fail "$d lists the 300-byte name"
		! grep -q / <<<"$names" || fail "$d lists a name with a slash"
		[ "$(grep -cx env_file <<<"$names")" -le 1 ] || fail "$d lists env_file twice"
	done
	"$PYTHON" - "$dir" "$long" <<'PY' || fail "readdir of $dir"
import os, sys
d, long = sys.argv[1], sys.argv[2]
names = os.listdir(d)
assert "GOOD" in names, names
for bad in ("a/b", "/lead", ".", "..", long):
    assert bad not in names, bad
assert names.count("env_file") == 1
# Every listed name can be stat'ed.
for n in names:
    os.stat(os.path.join(d, n))
PY
	[ "$(cat "$dir/GOOD")" = 1 ] || fail "GOOD"
	[ ! -e "$dir/a" ] || fail "a exists"
	grep -q '^GOOD=1$' "$dir/env_file" || fail "env_file is not the view: $(head -3 "$dir/env_file")"
	tr '\0' '\n' <"$dir/environ" | grep >/dev/null -x 'a/b=slash' || fail "a/b is not in environ"
	tr '\0' '\n' <"$dir/environ" | grep >/dev/null -x '\.\.=dotdot' || fail ".. is not in environ"
	tr '\0' '\n' <"$dir/environ" | grep >/dev/null -x "$long=long" || fail "the long name is not in environ"
}
check_tree
got=$(py_errno "os.stat('$dir/$long')")
[ "$got" = ENOENT ] || [ "$got" = ENAMETOOLONG ] || fail "stat of the 300-byte name: $got"
expect_errno ENOENT "os.stat('$dir/a/b')"

# A reload that adds the names to a tree that did not have them, and one
# that takes them away again.
write_cfg ""
wait_for_value "$dir/GOOD" 1 1000 >/dev/null
start=$(now_ms)
until ! tr '\0' '\n' <"$dir/environ" | grep >/dev/null 'a/b='; do
	[ $(($(now_ms) - start)) -le 1000 ] || fail "the reload without the bad keys is not served"
done
ls "$dir" >/dev/null || fail "ls after the bad names went"
write_cfg "$bad_keys"
start=$(now_ms)
until tr '\0' '\n' <"$dir/environ" | grep >/dev/null 'a/b='; do
	[ $(($(now_ms) - start)) -le 1000 ] || fail "the reload with the bad keys is not served"
done
check_tree
envfs_umount

# -o ro takes another path through the listing (no opendir).
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" -o ro
check_tree
envfs_umount

# Writes take exactly the names every other node takes (names.h): an AMD
# target ID is an arch directory that holds overrides; a variable the
# config names outside [A-Za-z_][A-Za-z0-9_]* is shown but cannot be
# changed through the mount (EINVAL, before anything is committed), so
# no write is acknowledged that --sync could not share.
printf 'env:\n  GOOD: "1"\n  MY-VAR: "dash"\n' >"$cfg"
state="$TMP/names.state"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" --extra-arch 'gfx90a:xnack+' --state "$state"
tid="$MNT/env/maxtext/gfx90a:xnack+"
expect_errno ok "put('$tid/NEW_ONE', 'v\n')"
[ "$(cat "$tid/NEW_ONE")" = v ] || fail "the override in gfx90a:xnack+ is not served"
grep -q 'gfx90a:xnack+' "$state" || fail "the override in gfx90a:xnack+ is not in the state file"
[ "$(cat "$dir/MY-VAR")" = dash ] || fail "MY-VAR is not shown"
before=$(cat "$state")
expect_errno EINVAL "put('$dir/MY-VAR', 'x\n')"
expect_errno EINVAL "put('$dir/MY-VAR', 'x\n', 'a')"
expect_errno EINVAL "os.truncate('$dir/MY-VAR', 0)"
expect_errno EINVAL "os.unlink('$dir/MY-VAR')"
expect_errno EINVAL "os.rename('$dir/MY-VAR', '$dir/MY_VAR')"
expect_errno EINVAL "os.chmod('$dir/MY-VAR', 0o600)"
expect_errno EINVAL "os.rename('$dir/GOOD', '$dir/BAD-NAME')"
[ "$(cat "$dir/MY-VAR")" = dash ] || fail "MY-VAR changed: $(cat "$dir/MY-VAR")"
[ "$(cat "$dir/GOOD")" = 1 ] || fail "GOOD changed"
[ "$(cat "$state")" = "$before" ] || fail "a refused write reached the state file"
envfs_umount
