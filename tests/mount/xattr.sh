#!/bin/bash
# The read-only extended attributes of SPEC 6.2 on a variable from each
# layer: backend, runner, image, host, cli, config. An attribute that does
# not apply is absent (ENODATA) and not listed; none can be set or removed.
. "$(dirname "$0")/lib.sh"

export MOUNT_TEST_HOST=from-the-host
IN=(--specs "$ENVFS_SPECS" --config "$FIX/exp.yaml" --inherit "$FIX/image.env"
	--pass MOUNT_TEST_HOST --env MOUNT_TEST_CLI=from-cli
	--env XLA_FLAGS_APPEND=--xla_gpu_autotune_level=2)
envfs_mount "${IN[@]}"
dir="$MNT/env/maxtext/gfx950"

# xa FILE ATTR: the attribute's value, or the error getfattr reports.
xa() {
	getfattr --absolute-names --only-values -n "user.primus.$2" "$dir/$1" 2>&1 || true
}

# expect VAR ATTR VALUE
expect() {
	local got
	got=$(xa "$1" "$2")
	[ "$got" = "$3" ] || fail "$1 user.primus.$2 is '$got', want '$3'"
}

# absent VAR ATTR...: each is ENODATA and not listed.
absent() {
	local v=$1 a
	shift
	for a in "$@"; do
		xa "$v" "$a" | grep >/dev/null 'No such attribute' || fail "$v user.primus.$a: '$(xa "$v" "$a")', want ENODATA"
	done
}

# listed VAR NAME...: exactly these attributes are listed.
listed() {
	local v=$1 got want
	shift
	got=$(getfattr --absolute-names -m - "$dir/$v" | grep '^user\.' | LC_ALL=C sort | tr '\n' ' ')
	want=$(printf 'user.primus.%s\n' "$@" | LC_ALL=C sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "$v lists '$got', want '$want'"
}

# source_line VAR FILE PREFIX: the source is PREFIX:N and line N of FILE names VAR.
source_line() {
	local v=$1 file=$2 prefix=$3 src n
	src=$(xa "$v" source)
	[[ "$src" =~ ^"$prefix":([0-9]+)$ ]] || fail "$v user.primus.source is '$src', want $prefix:LINE"
	n=${BASH_REMATCH[1]}
	sed -n "${n}p" "$file" | grep >/dev/null "$v" || fail "$v: line $n of $file does not name it: $(sed -n "${n}p" "$file")"
}

# backend: a maxtext default nothing else sets.
expect NVTE_FUSED_ATTN_CK layer backend
expect NVTE_FUSED_ATTN_CK layers backend
expect NVTE_FUSED_ATTN_CK default 1
expect NVTE_FUSED_ATTN_CK exported 1
source_line NVTE_FUSED_ATTN_CK "$ENVFS_SPECS/maxtext.yaml" specs/maxtext.yaml
absent NVTE_FUSED_ATTN_CK shadowed effective

# runner: the base spec's MASTER_PORT.
expect MASTER_PORT layer runner
expect MASTER_PORT layers runner
expect MASTER_PORT default 1234
expect MASTER_PORT exported 1
source_line MASTER_PORT "$ENVFS_SPECS/base.yaml" specs/base.yaml
absent MASTER_PORT shadowed effective

# image: a new name, and one that beats the runner's default.
expect MOUNT_TEST_IMAGE layer image
expect MOUNT_TEST_IMAGE source "image:$FIX/image.env:2"
expect MOUNT_TEST_IMAGE layers image
expect MOUNT_TEST_IMAGE exported 1
absent MOUNT_TEST_IMAGE shadowed default note effective
listed MOUNT_TEST_IMAGE layer source layers exported
expect HSA_ENABLE_SDMA layer image
expect HSA_ENABLE_SDMA source "image:$FIX/image.env:3"
expect HSA_ENABLE_SDMA layers "runner image"
expect HSA_ENABLE_SDMA shadowed "runner=1"
expect HSA_ENABLE_SDMA default 1
[ "$(cat "$dir/HSA_ENABLE_SDMA")" = 0 ] || fail "HSA_ENABLE_SDMA reads $(cat "$dir/HSA_ENABLE_SDMA")"

# host: passed through from the daemon's environment.
expect MOUNT_TEST_HOST layer host
expect MOUNT_TEST_HOST source host
expect MOUNT_TEST_HOST layers host
expect MOUNT_TEST_HOST exported 1
absent MOUNT_TEST_HOST shadowed default note effective
listed MOUNT_TEST_HOST layer source layers exported

# cli: --env.
expect MOUNT_TEST_CLI layer cli
expect MOUNT_TEST_CLI source cli
expect MOUNT_TEST_CLI layers cli
expect MOUNT_TEST_CLI exported 1
absent MOUNT_TEST_CLI shadowed default note effective
listed MOUNT_TEST_CLI layer source layers exported

# config: beats the runner's 3; the source is the value's line.
expect NCCL_IB_GID_INDEX layer config
expect NCCL_IB_GID_INDEX layers "runner config"
expect NCCL_IB_GID_INDEX shadowed "runner=3"
expect NCCL_IB_GID_INDEX default 3
expect NCCL_IB_GID_INDEX exported 1
source_line NCCL_IB_GID_INDEX "$FIX/exp.yaml" "$FIX/exp.yaml"
[ "$(cat "$dir/NCCL_IB_GID_INDEX")" = 5 ] || fail "NCCL_IB_GID_INDEX reads $(cat "$dir/NCCL_IB_GID_INDEX")"
expect MOUNT_TEST_CONFIG layer config
source_line MOUNT_TEST_CONFIG "$FIX/exp.yaml" "$FIX/exp.yaml"

# A flag list: effective flags one per line, last value winning; the
# consumed append variable is not exported.
eff=$(xa XLA_FLAGS effective)
echo "$eff" | grep >/dev/null -x -- '--xla_gpu_autotune_level=2' || fail "XLA_FLAGS effective: $eff"
! echo "$eff" | grep >/dev/null -x -- '--xla_gpu_autotune_level=4' || fail "XLA_FLAGS effective keeps the loser: $eff"
echo "$eff" | grep >/dev/null -x -- '--xla_gpu_memory_limit_slop_factor=95' || fail "XLA_FLAGS effective: $eff"
expect XLA_FLAGS layer backend
expect XLA_FLAGS exported 1
[ -n "$(xa XLA_FLAGS note)" ] || fail "XLA_FLAGS has no note"
expect XLA_FLAGS_APPEND exported 0
expect XLA_FLAGS_APPEND layer cli
absent XLA_FLAGS_APPEND effective

# Only variable files carry attributes.
for f in env_file explain digest; do
	[ -z "$(getfattr --absolute-names -m - "$dir/$f")" ] || fail "$f lists attributes"
	xa "$f" layer | grep >/dev/null 'No such attribute' || fail "$f has user.primus.layer"
done
# An unknown attribute name is ENODATA, as the kernel client sees it.
python3 - "$dir/MOUNT_TEST_IMAGE" <<'PY' || fail "xattr size rules"
import errno, os, sys
f = sys.argv[1]
assert os.getxattr(f, "user.primus.layer") == b"image"
try:
    os.getxattr(f, "user.other")
    raise SystemExit("user.other exists")
except OSError as e:
    assert e.errno == errno.ENODATA, e
PY

# Read-only: set and remove are refused.
for op in "-n user.primus.layer -v config" "-n user.other -v 1" "-x user.primus.layer"; do
	out=$(setfattr $op "$dir/MASTER_PORT" 2>&1) && fail "setfattr $op succeeded"
	echo "$out" | grep >/dev/null -E 'Operation not permitted|Operation not supported' || fail "setfattr $op: $out"
done
expect MASTER_PORT layer runner
envfs_umount
