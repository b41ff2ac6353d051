#!/bin/bash
# The host entry (SPEC 6.1, issue 13): each backend directory has `host`,
# a symlink to the arch directory a launch on this node uses, from the
# KFD topology (or PRIMUS_GPU_MODEL as the runner reads it), for torch_fl
# `cuda` when an NVIDIA driver is loaded; absent when nothing is
# detected, with the reason in status; following reloads; read-only.
# The node is one of the fake trees of tests/fixtures/host (--host-root).
. "$(dirname "$0")/lib.sh"

HR="$ENVFS_FIXTURES/host"
IN=(--specs "$ENVFS_SPECS")

# host_is BACKEND ARCH: env/BACKEND/host is a symlink to ARCH, listed as
# one, and a path through it reads the arch directory's files.
host_is() {
	local b=$1 a=$2 link="$MNT/env/$1/host"
	[ -L "$link" ] || fail "$b/host is not a symlink ($(stat -c %F "$link" 2>&1))"
	[ "$(readlink "$link")" = "$a" ] || fail "$b/host -> $(readlink "$link"), want $a"
	ls -l "$MNT/env/$b" | grep >/dev/null " host -> $a\$" || fail "ls -l $b: $(ls -l "$MNT/env/$b" | grep host)"
	"$PYTHON" -c 'import os, stat, sys; d = sys.argv[1]
e = [x for x in os.scandir(d) if x.name == "host"]
assert len(e) == 1 and e[0].is_symlink(), e' "$MNT/env/$b" || fail "readdir of $b: host is not one symlink entry"
	cmp "$link/env_file" "$MNT/env/$b/$a/env_file" || fail "$b/host/env_file differs from $a's"
	[ "$(grep -x "^host $b: $a\$" "$MNT/status")" ] || fail "status: $(grep "^host $b" "$MNT/status")"
}
# no_host BACKEND: no host entry, and status says why.
no_host() {
	[ ! -e "$MNT/env/$1/host" ] && [ ! -L "$MNT/env/$1/host" ] || fail "$1/host exists"
	! ls -a "$MNT/env/$1" | grep >/dev/null -x host || fail "$1 lists host"
	grep -qE "^host $1: none \\(.+\\)\$" "$MNT/status" || fail "status does not say why $1 has no host: $(grep "^host $1" "$MNT/status")"
}

# ---- gfx942 ----
envfs_mount "${IN[@]}" --host-root "$HR/gfx942"
host_is maxtext gfx942
host_is megatron gfx942
[ "$(cat "$MNT/env/maxtext/host/HIP_VISIBLE_DEVICES")" = "$(cat "$MNT/env/maxtext/gfx942/HIP_VISIBLE_DEVICES")" ] ||
	fail "HIP_VISIBLE_DEVICES through the link"
no_host torch_fl
# Read-only, as every entry the specs make.
for expr in "os.unlink('$MNT/env/maxtext/host')" "os.rename('$MNT/env/maxtext/host', '$MNT/env/maxtext/h2')" \
	"os.symlink('gfx950', '$MNT/env/maxtext/host')" "os.rename('$MNT/env/maxtext/gfx950', '$MNT/env/maxtext/host')" \
	"os.chmod('$MNT/env/maxtext/host', 0o700)" \
	"os.setxattr('$MNT/env/maxtext/host', 'user.primus.layer', b'x', follow_symlinks=False)"; do
	got=$(py_errno "$expr")
	case $got in EPERM|EEXIST|ENOTDIR|ENOTSUP|EOPNOTSUPP) ;; *) fail "$expr: $got" ;; esac
done
host_is maxtext gfx942
envfs_umount

# ---- gfx950, and PRIMUS_GPU_MODEL choosing as the runner does ----
envfs_mount "${IN[@]}" --host-root "$HR/gfx950"
host_is maxtext gfx950
# history of BACKEND/host is that of the directory it leads to.
echo 3 >"$MNT/env/maxtext/gfx950/NNODES"
"$ENVFS_BIN" history --mount "$MNT" maxtext/host NNODES >"$TMP/hh" ||
	fail "history maxtext/host: exit $?"
grep -qx '  maxtext/gfx950 NNODES: "1" runner -> "3" override' "$TMP/hh" ||
	fail "history maxtext/host does not show gfx950's change: $(cat "$TMP/hh")"
envfs_umount
envfs_mount "${IN[@]}" --host-root "$HR/gfx942" --env PRIMUS_GPU_MODEL=MI355X -o ro
host_is maxtext gfx950
expect_errno EROFS "os.unlink('$MNT/env/maxtext/host')"
envfs_umount

# ---- no GPU; an NVIDIA node ----
envfs_mount "${IN[@]}" --host-root "$HR/cpuonly"
no_host maxtext
no_host megatron
no_host torch_fl
envfs_umount
envfs_mount "${IN[@]}" --host-root "$HR/nvidia"
host_is torch_fl cuda
no_host maxtext
envfs_umount

# ---- it follows reloads: PRIMUS_GPU_MODEL in an image file ----
img="$TMP/image.env"
echo 'PRIMUS_GPU_MODEL=MI300X' >"$img"
envfs_mount "${IN[@]}" --host-root "$HR/gfx950" --inherit "$img"
host_is maxtext gfx942
cat "$MNT/env/maxtext/host/HIP_VISIBLE_DEVICES" >/dev/null     # cached
echo 'PRIMUS_GPU_MODEL=MI355X' >"$img.new"
mv "$img.new" "$img"
start=$(now_ms)
until [ "$(readlink "$MNT/env/maxtext/host")" = gfx950 ]; do
	[ $(($(now_ms) - start)) -le 1000 ] || fail "host did not follow the reload: $(readlink "$MNT/env/maxtext/host")"
	sleep 0.01
done
host_is maxtext gfx950
envfs_umount
