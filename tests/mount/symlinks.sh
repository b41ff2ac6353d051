#!/bin/bash
# Symlinked inputs are watched through their whole chain: a
# config or --inherit path that is a symlink (or lies under one) is
# reloaded when its target is edited in place or replaced by rename, when
# the link is pointed elsewhere, and when a Kubernetes ConfigMap volume
# swaps its `..data` link atomically; the chain is resolved again after
# every change. A link left dangling is an
# error in status, and fixing it recovers.
. "$(dirname "$0")/lib.sh"

# Each reload is waited for as an event; the bound is only a hang guard.
# How fast a reload lands is the benchmark's figure (tests/bench, scenario 6).
BUDGET_MS=${ENVFS_RELOAD_BUDGET_MS:-$(scaled_ms 10000)}
dir="$MNT/env/maxtext/gfx950"
f="$dir/NCCL_IB_GID_INDEX"

# ---- a config symlinked to a file elsewhere ----
mkdir "$TMP/real" "$TMP/other" "$TMP/links"
printf 'env:\n  NCCL_IB_GID_INDEX: "1"\n' >"$TMP/real/exp.yaml"
printf 'env:\n  NCCL_IB_GID_INDEX: "30"\n' >"$TMP/other/exp.yaml"
ln -s ../real/exp.yaml "$TMP/links/exp.yaml"

# ConfigMap-shaped: exp.yaml -> ..data/exp.yaml, ..data -> ..<timestamp>.
cm="$TMP/cm"
mkdir "$cm"
stamp=0
# cm_swap VALUE: a new timestamped directory, its ..data link swapped in
# with one rename, the old directory removed (what the kubelet does).
cm_swap() {
	local old new
	old=$(readlink "$cm/..data" 2>/dev/null || true)
	stamp=$((stamp + 1))
	new="..2026_12_01_00_00_0$stamp.00000000$stamp"
	mkdir "$cm/$new"
	printf 'IMAGE_CM=%s\n' "$1" >"$cm/$new/image.env"
	printf 'env:\n  MOUNT_CM: "%s"\n' "$1" >"$cm/$new/exp.yaml"
	ln -s "$new" "$cm/..data_tmp"
	mv -T "$cm/..data_tmp" "$cm/..data"
	[ -z "$old" ] || rm -rf "${cm:?}/$old"
}
cm_swap first
ln -s ..data/image.env "$cm/image.env"
ln -s ..data/exp.yaml "$cm/exp.yaml"

no_error() {
	grep -qx 'last_error: none' "$MNT/status" || fail "$1: $(grep last_error "$MNT/status")"
}

envfs_mount --specs "$ENVFS_SPECS" --config "$TMP/links/exp.yaml" --inherit "$cm/image.env"
[ "$(cat "$f")" = 1 ] || fail "initial value through the link"
[ "$(cat "$dir/IMAGE_CM")" = first ] || fail "initial image value through the ConfigMap"
cat "$f" "$dir/IMAGE_CM" >/dev/null    # cached

# The target edited in place.
printf 'env:\n  NCCL_IB_GID_INDEX: "2"\n' >"$TMP/real/exp.yaml"
ms=$(wait_for_value "$f" 2 "$BUDGET_MS"); note "target edited in place: $ms ms"
# The target replaced by rename, as editors do.
printf 'env:\n  NCCL_IB_GID_INDEX: "3"\n' >"$TMP/real/exp.yaml.new"
mv "$TMP/real/exp.yaml.new" "$TMP/real/exp.yaml"
ms=$(wait_for_value "$f" 3 "$BUDGET_MS"); note "target replaced by rename: $ms ms"
# The link pointed elsewhere (atomically), then the new target edited.
ln -s ../other/exp.yaml "$TMP/links/exp.yaml.new"
mv -T "$TMP/links/exp.yaml.new" "$TMP/links/exp.yaml"
ms=$(wait_for_value "$f" 30 "$BUDGET_MS"); note "link retargeted: $ms ms"
printf 'env:\n  NCCL_IB_GID_INDEX: "31"\n' >"$TMP/other/exp.yaml"
ms=$(wait_for_value "$f" 31 "$BUDGET_MS"); note "new target edited: $ms ms"
# ... and the old target no longer matters: after it is edited, one edit
# of the new target (by rename: one reload) must be the only change seen.
g=$(sed -n 's/^generation: //p' "$MNT/status")
printf 'env:\n  NCCL_IB_GID_INDEX: "4"\n' >"$TMP/real/exp.yaml"
printf 'env:\n  NCCL_IB_GID_INDEX: "33"\n' >"$TMP/other/exp.yaml.new"
mv "$TMP/other/exp.yaml.new" "$TMP/other/exp.yaml"
ms=$(wait_for_value "$f" 33 "$BUDGET_MS"); note "new target replaced: $ms ms"
[ "$(sed -n 's/^generation: //p' "$MNT/status")" = $((g + 1)) ] ||
	fail "an edit of the old target was loaded (generation $g -> $(sed -n 's/^generation: //p' "$MNT/status"))"
no_error "after the link edits"

# ConfigMap swaps of the --inherit file, three times: the chain is
# resolved again after each.
for v in second third fourth; do
	cm_swap "$v"
	ms=$(wait_for_value "$dir/IMAGE_CM" "$v" "$BUDGET_MS"); note "..data swap to $v: $ms ms"
	no_error "after the ..data swap to $v"
done

# A dangling link is an error; fixing it recovers.
rm "$TMP/other/exp.yaml"
start=$(now_ms)
until grep -q "^last_error: .*exp.yaml" "$MNT/status"; do
	[ $(($(now_ms) - start)) -le "$BUDGET_MS" ] || fail "a dangling config link is no error: $(grep last_error "$MNT/status")"
	sleep 0.01
done
[ "$(cat "$f")" = 33 ] || fail "the last good value is not served"
printf 'env:\n  NCCL_IB_GID_INDEX: "32"\n' >"$TMP/other/exp.yaml"
ms=$(wait_for_value "$f" 32 "$BUDGET_MS"); note "dangling link fixed: $ms ms"
no_error "after the fix"
envfs_umount

# ---- a ConfigMap config: exp.yaml -> ..data/exp.yaml ----
envfs_mount --specs "$ENVFS_SPECS" --config "$cm/exp.yaml" -o ro
[ "$(cat "$dir/MOUNT_CM")" = fourth ] || fail "initial ConfigMap config value"
for v in fifth sixth; do
	cm_swap "$v"
	ms=$(wait_for_value "$dir/MOUNT_CM" "$v" "$BUDGET_MS"); note "config ..data swap to $v: $ms ms"
	no_error "after the config ..data swap"
done
envfs_umount

# ---- an edit right after the link is retargeted ----
# The new target's directory is watched only once the reload that
# followed the link is done; an edit made as soon as the mount shows the
# new target (before that) must still be seen. Each round points the link
# at a directory never watched before and edits its file at once.
envfs_mount --specs "$ENVFS_SPECS" --config "$TMP/links/exp.yaml"
for i in $(seq 1 40); do
	mkdir "$TMP/round$i"
	printf 'env:\n  NCCL_IB_GID_INDEX: "%d"\n' $((1000 + 2 * i)) >"$TMP/round$i/exp.yaml"
	ln -s "../round$i/exp.yaml" "$TMP/links/exp.yaml.new"
	mv -T "$TMP/links/exp.yaml.new" "$TMP/links/exp.yaml"
	wait_for_value "$f" $((1000 + 2 * i)) "$BUDGET_MS" >/dev/null
	printf 'env:\n  NCCL_IB_GID_INDEX: "%d"\n' $((1001 + 2 * i)) >"$TMP/round$i/exp.yaml"
	wait_for_value "$f" $((1001 + 2 * i)) "$BUDGET_MS" >/dev/null
done
note "40 edits right after a retarget seen"
envfs_umount
