#!/bin/bash
# The views of SPEC 6.3 are byte-for-byte what `primus-envfs resolve
# --format` prints for the same inputs, in every directory; digest is the
# sha256 of environ; status lists every digest; stat sizes are exact.
. "$(dirname "$0")/lib.sh"

export MOUNT_TEST_HOST=from-the-host
IN=(--specs "$ENVFS_SPECS" --config "$FIX/exp.yaml" --inherit "$FIX/image.env"
	--pass MOUNT_TEST_HOST --env MOUNT_TEST_CLI=from-cli
	--env XLA_FLAGS_APPEND=--xla_gpu_autotune_level=2)
envfs_mount "${IN[@]}"

declare -A file_of=([env_file]=env_file [environ]=environ [sh]=env.sh [json]=env.json
	[explain]=explain [digest]=digest [record]=record)
n=0
for d in $(shipped_dirs); do
	b=${d%/*} a=${d#*/}
	dir="$MNT/env/$d"
	for fmt in "${!file_of[@]}"; do
		f="$dir/${file_of[$fmt]}"
		"$ENVFS_BIN" resolve "${IN[@]}" -b "$b" -a "$a" --format "$fmt" >"$TMP/want"
		cmp "$TMP/want" "$f" >&2 || fail "$d/${file_of[$fmt]} differs from resolve --format $fmt"
		[ "$(stat -c %s "$f")" -eq "$(stat -c %s "$TMP/want")" ] ||
			fail "$d/${file_of[$fmt]}: stat size $(stat -c %s "$f"), content $(stat -c %s "$TMP/want")"
		n=$((n + 1))
	done
	sum=$(sha256sum <"$dir/environ")
	[ "$(cat "$dir/digest")" = "${sum%% *}" ] || fail "$d/digest is not sha256sum of environ"
	grep -qx "digest $d ${sum%% *}" "$MNT/status" || fail "status lacks 'digest $d ${sum%% *}'"
done
note "compared $n view files"

# The inputs reached the views (so the comparison above is not vacuous).
dir="$MNT/env/maxtext/gfx950"
grep -qx 'MOUNT_TEST_CONFIG=from-config' "$dir/env_file" || fail "config value missing"
grep -qx 'MOUNT_TEST_IMAGE=baked-in-image' "$dir/env_file" || fail "image value missing"
grep -qx 'MOUNT_TEST_HOST=from-the-host' "$dir/env_file" || fail "host value missing"
grep -qx 'MOUNT_TEST_CLI=from-cli' "$dir/env_file" || fail "cli value missing"
grep -q -- '--xla_gpu_autotune_level=2$' "$dir/XLA_FLAGS" || fail "XLA_FLAGS_APPEND not appended"
! grep -q '^XLA_FLAGS_APPEND=' "$dir/env_file" || fail "consumed XLA_FLAGS_APPEND exported"
[ "$(cat "$dir/XLA_FLAGS_APPEND")" = --xla_gpu_autotune_level=2 ] ||
	fail "XLA_FLAGS_APPEND has no file"

# Views render from one snapshot per open: two opens of an unchanged
# directory agree, and a view read through one fd in small pieces is whole.
cmp -s "$dir/explain" <(dd if="$dir/explain" bs=7 status=none) || fail "explain read in 7-byte pieces differs"
[ "$(stat -c %s "$MNT/status")" -eq "$(wc -c <"$MNT/status")" ] || fail "status size"
grep -qx 'generation: 1' "$MNT/status" || fail "status: $(cat "$MNT/status")"
grep -qx "config: $FIX/exp.yaml" "$MNT/status" || fail "status lacks the config"
grep -qx "inherit: $FIX/image.env" "$MNT/status" || fail "status lacks the inherit file"
grep -qx 'last_error: none' "$MNT/status" || fail "status has an error"
grep -qx 'overrides: 0' "$MNT/status" || fail "status: overrides"
envfs_umount
