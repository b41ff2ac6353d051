#!/bin/bash
# Inputs another user can change, when the daemon runs as root (issue
# 14.15): a config, spec or --inherit file owned by another user, group or
# world writable, or in a directory others may write without the sticky
# bit, is a warning in `check` (exit 1) and in status and diagnostics,
# naming the file and why; inputs that are root's alone give none.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "the rule is for a daemon running as root: skipped" >&2; exit 77; }

specs="$TMP/specs"
cp -r "$ENVFS_SPECS" "$specs"
chmod 755 "$specs"
good="$TMP/good"
mkdir -m 755 "$good"
printf 'env:\n  NCCL_IB_GID_INDEX: "5"\n' >"$good/exp.yaml"
echo 'IMAGE_VAR=1' >"$good/image.env"
chmod 644 "$good/exp.yaml" "$good/image.env"

# ---- root's alone: no warning ----
"$ENVFS_BIN" check --specs "$specs" --config "$good/exp.yaml" --inherit "$good/image.env" \
	-b maxtext -a gfx950 >"$TMP/check.out" 2>&1 || true
! grep -q 'another user can change' "$TMP/check.out" || fail "a warning for root's own files: $(cat "$TMP/check.out")"
envfs_mount --specs "$specs" --config "$good/exp.yaml" --inherit "$good/image.env"
! grep -q '^warning:' "$MNT/status" || fail "status warns about root's own files"
envfs_umount

# ---- a world-writable directory, another owner, a writable spec ----
open="$TMP/open"
mkdir "$open"
chmod 777 "$open"
cp "$good/exp.yaml" "$open/exp.yaml"
cp "$good/image.env" "$TMP/theirs.env"
chown 65534:65534 "$TMP/theirs.env"
chmod 666 "$specs/maxtext.yaml"
# A spec that is a symlink is judged where it leads: here a directory
# others can write, although the spec directory itself is root's alone.
mv "$specs/torchtitan.yaml" "$open/torchtitan.yaml"
ln -s "$open/torchtitan.yaml" "$specs/torchtitan.yaml"
IN=(--specs "$specs" --config "$open/exp.yaml" --inherit "$TMP/theirs.env")

rc=0
"$ENVFS_BIN" check "${IN[@]}" -b maxtext -a gfx950 >"$TMP/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "check exits $rc, want 1 (warnings): $(cat "$TMP/check.out")"
grep -q "^$open/exp.yaml: warning: another user can change this file (directory $open is writable by others (mode 0777))" "$TMP/check.out" ||
	fail "no warning for the config: $(cat "$TMP/check.out")"
grep -q "^$TMP/theirs.env: warning: another user can change this file (owned by uid 65534)" "$TMP/check.out" ||
	fail "no warning for the inherit file: $(cat "$TMP/check.out")"
grep -q "^$specs/maxtext.yaml: warning: another user can change this file (writable by others (mode 0666))" "$TMP/check.out" ||
	fail "no warning for the spec file: $(cat "$TMP/check.out")"
grep -q "^$specs/torchtitan.yaml: warning: another user can change this file (directory $open is writable by others (mode 0777))" "$TMP/check.out" ||
	fail "no warning for the symlinked spec file: $(cat "$TMP/check.out")"
# An --env-file is an input like the others (it was not judged at all).
good_specs="$TMP/specs.good"
cp -r "$ENVFS_SPECS" "$good_specs"
chmod -R go-w "$good_specs"
printf 'ENVFS_THEIRS=1\n' >"$TMP/theirs.cli.env"
chown 65534:65534 "$TMP/theirs.cli.env"
rc=0
"$ENVFS_BIN" check --specs "$good_specs" --env-file "$TMP/theirs.cli.env" -b maxtext -a gfx950 >"$TMP/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "check of another user's --env-file exits $rc, want 1: $(cat "$TMP/check.out")"
grep -q "^$TMP/theirs.cli.env: warning: another user can change this file (owned by uid 65534)" "$TMP/check.out" ||
	fail "no warning for the --env-file: $(cat "$TMP/check.out")"

envfs_mount "${IN[@]}"
for want in "$open/exp.yaml: another user can change" "$TMP/theirs.env: another user can change" \
	"$specs/maxtext.yaml: another user can change"; do
	grep -q "^warning: $want" "$MNT/status" || fail "status lacks '$want': $(grep '^warning' "$MNT/status")"
	grep -q "${want%%:*}: warning: another user can change" "$MNT/diagnostics" ||
		fail "diagnostics lack the warning for ${want%%:*}"
done
# Fixed: the next reload drops the warning.
chmod 644 "$specs/maxtext.yaml"
chmod 755 "$open"
echo 'IMAGE_VAR=2' >"$TMP/theirs.env.new"
mv "$TMP/theirs.env.new" "$TMP/theirs.env"
wait_for_value "$MNT/env/maxtext/gfx950/IMAGE_VAR" 2 1000 >/dev/null
! grep -q '^warning:' "$MNT/status" || fail "status still warns: $(grep '^warning' "$MNT/status")"
envfs_umount

# ---- a clean file reached through a symlink others can replace ----
# The file and its real directories are root's alone, but the symlink on
# the way sits in a directory anyone may write: anyone can point it
# elsewhere. Likewise a spec directory reached that way.
ww="$TMP/ww"
mkdir "$ww"
chmod 777 "$ww"
ln -s "$good/exp.yaml" "$ww/exp-link.yaml"
ln -s "$good" "$ww/hop"
cp -r "$ENVFS_SPECS" "$TMP/specs-clean"
chmod 755 "$TMP/specs-clean"
ln -s "$TMP/specs-clean" "$ww/specs"
rc=0
"$ENVFS_BIN" check --specs "$ww/specs" --config "$ww/exp-link.yaml" --inherit "$ww/hop/image.env" \
	>"$TMP/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "check through symlinks in $ww exits $rc, want 1: $(cat "$TMP/check.out")"
for f in "$ww/exp-link.yaml:exp-link.yaml" "$ww/hop/image.env:hop" "$ww/specs:specs"; do
	grep -qF "${f%%:*}: warning: another user can change this file (symlink $ww/${f##*:}: directory $ww is writable by others (mode 0777))" "$TMP/check.out" ||
		fail "no warning for ${f%%:*} reached through a symlink in $ww: $(cat "$TMP/check.out")"
done
# In a sticky directory nobody else can replace root's symlink: no warning.
chmod 1777 "$ww"
"$ENVFS_BIN" check --specs "$ww/specs" --config "$ww/exp-link.yaml" --inherit "$ww/hop/image.env" \
	>"$TMP/check.out" 2>&1 || true
! grep -q 'another user can change' "$TMP/check.out" ||
	fail "a warning for symlinks in a sticky directory: $(cat "$TMP/check.out")"
