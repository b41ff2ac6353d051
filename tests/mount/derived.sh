#!/bin/bash
# Derived values follow an override (SPEC 3.2, 7): templates and
# conditions see final values, so overriding XLA_GPU_AUTOTUNE_LEVEL
# changes the managed XLA_FLAGS and overriding GPUS_PER_NODE changes
# HIP_VISIBLE_DEVICES; both were read (cached by the kernel) before the
# write, and the new value is there as soon as close() returns. rm brings
# the defaults back the same way.
. "$(dirname "$0")/lib.sh"

envfs_mount --specs "$ENVFS_SPECS"
dir="$MNT/env/maxtext/gfx950"
flags() {
	tr ' ' '\n' <"$dir/XLA_FLAGS" | grep -- '--xla_gpu_autotune_level=' || true
}

# Cache everything that is about to change, twice to be sure the kernel
# serves it from its cache.
for i in 1 2; do
	[ "$(flags)" = --xla_gpu_autotune_level=4 ] || fail "XLA_FLAGS before: $(flags)"
	[ "$(cat "$dir/HIP_VISIBLE_DEVICES")" = 0,1,2,3,4,5,6,7 ] || fail "HIP_VISIBLE_DEVICES before"
	grep -q -- '--xla_gpu_autotune_level=4' "$dir/env_file" || fail "env_file before"
	stat "$dir/XLA_FLAGS" "$dir/HIP_VISIBLE_DEVICES" >/dev/null
done
[ ! -e "$dir/XLA_GPU_AUTOTUNE_LEVEL" ] || fail "XLA_GPU_AUTOTUNE_LEVEL is a parameter, not exported"

echo 5 >"$dir/XLA_GPU_AUTOTUNE_LEVEL"
[ "$(flags)" = --xla_gpu_autotune_level=5 ] || fail "XLA_FLAGS after the override: $(flags)"
grep -q -- '--xla_gpu_autotune_level=5' "$dir/env_file" || fail "env_file after the override"
[ "$(stat -c %s "$dir/XLA_FLAGS")" -eq "$(wc -c <"$dir/XLA_FLAGS")" ] || fail "XLA_FLAGS size is stale"
[ "$(cat "$dir/XLA_GPU_AUTOTUNE_LEVEL")" = 5 ] || fail "the override itself"
getfattr --absolute-names --only-values -n user.primus.effective "$dir/XLA_FLAGS" |
	grep >/dev/null -x -- '--xla_gpu_autotune_level=5' || fail "effective flags"

echo 4 >"$dir/GPUS_PER_NODE"
[ "$(cat "$dir/HIP_VISIBLE_DEVICES")" = 0,1,2,3 ] || fail "HIP_VISIBLE_DEVICES: $(cat "$dir/HIP_VISIBLE_DEVICES")"
[ "$(stat -c %s "$dir/HIP_VISIBLE_DEVICES")" -eq 8 ] || fail "HIP_VISIBLE_DEVICES size is stale"
grep -qx HIP_VISIBLE_DEVICES=0,1,2,3 "$dir/env_file" || fail "env_file HIP_VISIBLE_DEVICES"
grep -qx GPUS_PER_NODE=4 "$dir/env_file" || fail "env_file GPUS_PER_NODE"
# Only that directory changed.
[ "$(cat "$MNT/env/maxtext/gfx942/HIP_VISIBLE_DEVICES")" = 0,1,2,3,4,5,6,7 ] ||
	fail "gfx942 changed too"

# rm reverts, derived values with it.
rm "$dir/GPUS_PER_NODE" "$dir/XLA_GPU_AUTOTUNE_LEVEL"
[ "$(cat "$dir/HIP_VISIBLE_DEVICES")" = 0,1,2,3,4,5,6,7 ] || fail "HIP_VISIBLE_DEVICES after rm"
[ "$(flags)" = --xla_gpu_autotune_level=4 ] || fail "XLA_FLAGS after rm: $(flags)"
[ ! -e "$dir/XLA_GPU_AUTOTUNE_LEVEL" ] || fail "the parameter has a file again"

# A whole XLA_FLAGS override is verbatim (SPEC 3.1 step 1).
echo '--xla_only=1' >"$dir/XLA_FLAGS"
[ "$(cat "$dir/XLA_FLAGS")" = --xla_only=1 ] || fail "XLA_FLAGS override: $(cat "$dir/XLA_FLAGS")"
envfs_umount
