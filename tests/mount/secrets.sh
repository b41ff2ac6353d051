#!/bin/bash
# Secrets on a mount: a secret's file is 0600 with stat size 0 (its length
# is no one else's business) and reads give the value to its owner; the
# views holding it are 0600; digest (0444) and status' digest lines do not
# change when only a secret's value does, and do when another value does.
. "$(dirname "$0")/lib.sh"

dir="$MNT/env/maxtext/gfx950"
# mount_digest ENV_FILE [ARG...]: mounts with ENV_FILE; prints the digest
# file and status' digest line of maxtext/gfx950, then unmounts.
mount_digest() {
	envfs_mount --specs "$ENVFS_SPECS" --env-file "$@"
	cat "$dir/digest"
	grep '^digest maxtext/gfx950 ' "$MNT/status"
	envfs_umount
}
printf 'HF_TOKEN=hunter2\nMYCO_PIN=pin-a\nNCCL_DEBUG=INFO\n' >"$TMP/a.env"
printf 'HF_TOKEN=hunter3\nMYCO_PIN=pin-b\nNCCL_DEBUG=INFO\n' >"$TMP/b.env"
printf 'HF_TOKEN=hunter2\nMYCO_PIN=pin-a\nNCCL_DEBUG=WARN\n' >"$TMP/c.env"
da=$(mount_digest "$TMP/a.env" --secret MYCO_PIN)
db=$(mount_digest "$TMP/b.env" -o secret=MYCO_PIN)
dc=$(mount_digest "$TMP/c.env" --secret MYCO_PIN)
[ "$da" = "$db" ] || fail "digest changes with a secret's value: $da / $db"
[ "$da" != "$dc" ] || fail "digest does not change with NCCL_DEBUG"

envfs_mount --specs "$ENVFS_SPECS" --env-file "$TMP/a.env" --secret MYCO_PIN
for n in HF_TOKEN MYCO_PIN; do
	[ "$(mode_of "$dir/$n")" = 600 ] || fail "$n: mode $(mode_of "$dir/$n")"
	[ "$(stat -c %s "$dir/$n")" = 0 ] || fail "$n: stat size $(stat -c %s "$dir/$n"), want 0"
done
[ "$(cat "$dir/HF_TOKEN")" = hunter2 ] || fail "HF_TOKEN reads '$(cat "$dir/HF_TOKEN")'"
[ "$(cat "$dir/MYCO_PIN")" = pin-a ] || fail "MYCO_PIN reads '$(cat "$dir/MYCO_PIN")'"
[ "$(stat -c %s "$dir/NCCL_DEBUG")" = 5 ] || fail "NCCL_DEBUG: stat size $(stat -c %s "$dir/NCCL_DEBUG")"
for v in environ env_file env.sh env.json; do
	[ "$(mode_of "$dir/$v")" = 600 ] || fail "$v: mode $(mode_of "$dir/$v") with a secret in it"
done
# explain redacts: it stays readable.
[ "$(mode_of "$dir/explain")" = 444 ] || fail "explain: mode $(mode_of "$dir/explain")"
! grep -q 'hunter2\|pin-a' "$dir/explain" || fail "explain holds a secret's value"
[ "$(mode_of "$dir/digest")" = 444 ] || fail "digest: mode $(mode_of "$dir/digest")"
! grep -q 'hunter2\|pin-a' "$MNT/status" || fail "status holds a secret's value"
envfs_umount

# A secret flag list: XLA_FLAGS marked secret holds its tokens' values
# nowhere a non-owner reads: not in the record (0444; a token with a value
# is NAME=<redacted>, as explain shows it), not in user.primus.effective.
printf 'env:\n  XLA_FLAGS_APPEND: "--xla_dump_to=/tmp/SEKRETPATH"\n' >"$TMP/xs.yaml"
envfs_mount --specs "$ENVFS_SPECS" --config "$TMP/xs.yaml" --secret 'XLA_FLAGS*'
[ "$(mode_of "$dir/XLA_FLAGS")" = 600 ] || fail "XLA_FLAGS: mode $(mode_of "$dir/XLA_FLAGS")"
grep -q SEKRETPATH "$dir/XLA_FLAGS" || fail "XLA_FLAGS does not read its value to its owner"
! grep -q SEKRETPATH "$dir/record" || fail "the record holds a secret flag list's value"
grep -q '"token":"--xla_dump_to=<redacted>"' "$dir/record" ||
	fail "the record does not name the secret flag list's flag"
! getfattr --only-values -n user.primus.effective "$dir/XLA_FLAGS" 2>/dev/null | grep -q SEKRETPATH ||
	fail "user.primus.effective shows a secret flag list's value"
envfs_umount

# A value built from a secret stays redacted once an override shadows it:
# FOO is public again (the override's plain value), but its config value
# (the token) is in no 0444 view and no xattr, nor after rm.
printf 'HF_TOKEN=hf_TAINTSEKRET\n' >"$TMP/tok.env"
printf 'env:\n  FOO: "Bearer ${HF_TOKEN}"\n' >"$TMP/taint.yaml"
envfs_mount --specs "$ENVFS_SPECS" --config "$TMP/taint.yaml" --env-file "$TMP/tok.env"
[ "$(mode_of "$dir/FOO")" = 600 ] || fail "FOO, built from a secret: mode $(mode_of "$dir/FOO")"
echo plain >"$dir/FOO"
[ "$(cat "$dir/FOO")" = plain ] || fail "the override of FOO reads '$(cat "$dir/FOO")'"
for when in "after an override" "after rm"; do
	! grep -q TAINTSEKRET "$dir/explain" || fail "$when, explain shows the shadowed secret"
	! grep -q TAINTSEKRET "$dir/record" || fail "$when, the record shows the shadowed secret"
	[ "$when" = "after rm" ] ||
		! getfattr --only-values -n user.primus.shadowed "$dir/FOO" 2>/dev/null | grep -q TAINTSEKRET ||
		fail "$when, user.primus.shadowed shows the shadowed secret"
	[ "$when" = "after rm" ] || rm "$dir/FOO"
done
envfs_umount

# A spec default built from a secret, shadowed by an override: no
# user.primus.default (it printed the token on a 0644 file).
cp -R "$ENVFS_SPECS" "$TMP/dspecs"
printf '  - name: HUB_AUTH_HEADER\n    value: "Bearer ${HF_TOKEN}"\n' >>"$TMP/dspecs/maxtext.yaml"
envfs_mount --specs "$TMP/dspecs" --env-file "$TMP/tok.env"
echo plain >"$dir/HUB_AUTH_HEADER"
[ "$(mode_of "$dir/HUB_AUTH_HEADER")" = 644 ] || fail "HUB_AUTH_HEADER overridden: mode $(mode_of "$dir/HUB_AUTH_HEADER")"
getfattr --only-values -n user.primus.default "$dir/HUB_AUTH_HEADER" >"$TMP/def" 2>"$TMP/def.err" &&
	fail "user.primus.default of a default built from a secret: $(cat "$TMP/def")"
grep -q 'No such attribute' "$TMP/def.err" || fail "user.primus.default: $(cat "$TMP/def.err")"
! grep -q TAINTSEKRET "$dir/explain" "$dir/record" || fail "a view shows the default built from a secret"
envfs_umount
echo ok
