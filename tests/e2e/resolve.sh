# End-to-end: `primus-envfs resolve` over the shipped specs (issue 2,
# acceptance 2) and the agreement of every output format.
set -eu
. "$(dirname "$0")/lib.sh"

# A clean environment: the runner passes MASTER_ADDR, NNODES, … through from
# the host, so the test's own environment must not leak into the result.
# onnode BIN CMD ARGS...: clean, on a fake node (tests/fixtures/host/gfx950),
# so what the runner detects (NCCL_IB_HCA, IP_INTERFACE) does not depend
# on this machine.
onnode() {
	_bin=$1 _cmd=$2
	shift 2
	clean "$_bin" "$_cmd" --host-root "$ENVFS_FIXTURES/host/gfx950" "$@"
}

MANAGED='--xla_gpu_memory_limit_slop_factor=95 --xla_gpu_reduce_scatter_combine_threshold_bytes=8589934592 --xla_gpu_enable_command_buffer='"''"' --xla_gpu_enable_latency_hiding_scheduler=true --xla_gpu_all_gather_combine_threshold_bytes=8589934592 --xla_gpu_enable_triton_gemm=false --xla_gpu_enable_cublaslt=true --xla_gpu_autotune_level=4 --xla_gpu_enable_all_gather_combine_by_dim=false'

# SPEC section 4: the runner base plus the maxtext defaults on gfx950,
# sorted by name (byte order).
cat >"$TMP/want_gfx950" <<EOF
CUDA_DEVICE_MAX_CONNECTIONS=1
ENABLE_NUMA_BINDING=0
GLOO_SOCKET_IFNAME=eth0
GPUS_PER_NODE=8
GPU_MAX_HW_QUEUES=2
HIP_FORCE_DEV_KERNARG=1
HIP_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
HSA_ENABLE_SDMA=1
HSA_FORCE_FINE_GRAIN_PCIE=1
HSA_NO_SCRATCH_RECLAIM=1
IP_INTERFACE=eth0
MASTER_ADDR=localhost
MASTER_PORT=1234
MSCCLPP_DISABLE_CHANNEL_CACHE=FALSE
NCCL_CHECKS_DISABLE=1
NCCL_CROSS_NIC=0
NCCL_DEBUG=
NCCL_IB_GID_INDEX=3
NCCL_IB_HCA=mlx5_0:1,mlx5_1:2
NCCL_P2P_NET_CHUNKSIZE=524288
NCCL_PXN_DISABLE=1
NCCL_SOCKET_IFNAME=eth0
NNODES=1
NODE_RANK=0
NVTE_ALLOW_NONDETERMINISTIC_ALGO=1
NVTE_CK_HOW_V3_BF16_CVT=2
NVTE_CK_IS_V3_ATOMIC_FP32=0
NVTE_CK_USES_BWD_V3=1
NVTE_CK_USES_FWD_V3=1
NVTE_DEBUG=0
NVTE_DEBUG_LEVEL=0
NVTE_FUSED_ATTN=1
NVTE_FUSED_ATTN_AOTRITON=0
NVTE_FUSED_ATTN_CK=1
NVTE_FUSED_ATTN_LOG_CONFIG=0
NVTE_ROCM_ENABLE_MXFP8=1
NVTE_USE_CAST_TRANSPOSE_TRITON=1
NVTE_USE_HIPBLASLT=1
NVTE_USE_OPTIMIZED_HIPIFIED_CAST_TRANSPOSE=0
PATCH_TE_FLASH_ATTN=0
PRIMUS_TURBO_ATTN_V3_ATOMIC_FP32=0
PRIMUS_TURBO_DEEPEP_TIMEOUT=600
RCCL_MSCCLPP_ENABLE=0
RCCL_MSCCLPP_FORCE_ENABLE=0
RCCL_MSCCLPP_THRESHOLD=1073741824
RCCL_MSCCL_ENABLE=0
RCCL_WARP_SPEED_AUTO=0
TF_CPP_MIN_LOG_LEVEL=2
TORCH_NCCL_HIGH_PRIORITY=1
TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK=0
XLA_FLAGS=$MANAGED
XLA_PYTHON_CLIENT_MEM_FRACTION=.97
EOF

# --- acceptance 2: no option but -b -a --format, from outside the tree ---
cd "$TMP"
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve -b maxtext -a gfx950 --format env_file
assert_no_crash "resolve maxtext/gfx950" "$TMP/err"
[ "$rc" -eq 0 ] || { cat "$TMP/err" >&2; fail "resolve -b maxtext -a gfx950 exited $rc"; }
grep -v '^#' "$TMP/out" >"$TMP/got"
diff -u "$TMP/want_gfx950" "$TMP/got" >&2 ||
	fail "maxtext/gfx950 env_file is not the runner base plus the maxtext defaults"
expect_line "$TMP/out" "XLA_FLAGS=$MANAGED" "managed XLA_FLAGS"
expect_line "$TMP/out" "RCCL_WARP_SPEED_AUTO=0" "gfx950 gate"
expect_no_line_starting "$TMP/out" "XLA_GPU_AUTOTUNE_LEVEL=" "export: false parameter"
expect_no_line_starting "$TMP/out" "JAX_COORDINATOR_" "single node"
expect_no_line_starting "$TMP/out" "XLA_FLAGS_APPEND=" "consumed variable"

# --- with --env NNODES=2 --env MASTER_ADDR=10.1.2.3 ---
sed -e 's/^NNODES=1$/NNODES=2/' -e 's/^MASTER_ADDR=localhost$/MASTER_ADDR=10.1.2.3/' \
	"$TMP/want_gfx950" >"$TMP/want_multi"
printf '%s\n' JAX_COORDINATOR_IP=10.1.2.3 JAX_COORDINATOR_PORT=1234 >>"$TMP/want_multi"
LC_ALL=C sort -o "$TMP/want_multi" "$TMP/want_multi"
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve -b maxtext -a gfx950 --format env_file \
	--env NNODES=2 --env MASTER_ADDR=10.1.2.3
assert_no_crash "resolve multi-node" "$TMP/err"
[ "$rc" -eq 0 ] || fail "multi-node resolve exited $rc"
grep -v '^#' "$TMP/out" >"$TMP/got"
diff -u "$TMP/want_multi" "$TMP/got" >&2 ||
	fail "NNODES=2 MASTER_ADDR=10.1.2.3 must add JAX_COORDINATOR_IP/PORT and nothing else"

# --env MASTER_PORT feeds JAX_COORDINATOR_PORT through its template
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve -b maxtext -a gfx950 \
	--env NNODES=4 --env MASTER_PORT=29500
expect_line "$TMP/out" "JAX_COORDINATOR_PORT=29500" "coordinator port follows MASTER_PORT"
expect_line "$TMP/out" "JAX_COORDINATOR_IP=localhost" "coordinator ip default"

# --- gfx942: the other arch gate ---
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve -b maxtext -a gfx942 --format env_file
[ "$rc" -eq 0 ] || fail "resolve maxtext/gfx942 exited $rc"
expect_line "$TMP/out" "HSA_NO_SCRATCH_RECLAIM=1" "gfx942 gate"
expect_no_line_starting "$TMP/out" "RCCL_WARP_SPEED_AUTO=" "gfx942 has no RCCL_WARP_SPEED_AUTO"
expect_line "$TMP/out" "XLA_FLAGS=$MANAGED" "gfx942 managed XLA_FLAGS"

# --- maxdiffusion: no XLA_FLAGS unless inherited, and then verbatim ---
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve -b maxdiffusion -a gfx950
[ "$rc" -eq 0 ] || fail "resolve maxdiffusion/gfx950 exited $rc"
expect_no_line_starting "$TMP/out" "XLA_FLAGS=" "maxdiffusion declares no managed flags"
expect_line "$TMP/out" "MASTER_PORT=1234" "maxdiffusion gets the runner base"
printf 'XLA_FLAGS=--xla_gpu_enable_triton_gemm=true --xla_keep=1\n' >"$TMP/md.env"
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve -b maxdiffusion -a gfx950 --inherit "$TMP/md.env"
expect_line "$TMP/out" "XLA_FLAGS=--xla_gpu_enable_triton_gemm=true --xla_keep=1" \
	"maxdiffusion passes an inherited XLA_FLAGS through unchanged"

# --- every format of every backend/arch, and their agreement ---
cat >"$TMP/agree.py" <<'EOF'
import hashlib, json, re, sys
d = sys.argv[1]
environ = open(d + "/environ", "rb").read()
assert environ == b"" or environ.endswith(b"\0"), "environ must end with NUL"
pairs = {}
for e in environ.split(b"\0")[:-1]:
    name, eq, value = e.partition(b"=")
    assert eq and re.fullmatch(rb"[A-Za-z_][A-Za-z0-9_]*", name), e
    assert name not in pairs, b"duplicate " + name
    pairs[name] = value
names = [n for n in (e.partition(b"=")[0] for e in environ.split(b"\0")[:-1])]
assert names == sorted(names), "environ not sorted by name"
js = json.loads(open(d + "/json", "rb").read())
assert isinstance(js, dict)
assert {k.encode(): v.encode("utf-8", "surrogateescape") for k, v in js.items()} == pairs, \
    "env.json differs from environ"
digest = open(d + "/digest", "rb").read().strip().decode()
assert digest == hashlib.sha256(environ).hexdigest(), "digest is not sha256 of environ"
ef = {}
for line in open(d + "/env_file", "rb").read().split(b"\n"):
    if not line or line.startswith(b"#"):
        continue
    n, _, v = line.partition(b"=")
    ef[n] = v
want = {n: v for n, v in pairs.items() if b"\n" not in v and b"\r" not in v}
assert ef == want, "env_file differs from environ"
EOF
for spec in "$ENVFS_SPECS"/*.yaml; do
	b=$(basename "$spec" .yaml)
	case $b in base | catalog | catalog.docs) continue ;; esac
	case $b in
	torch_fl) arches="cuda ppu metax ascend tsingmicro dcu gcu musa bpu" ;;
	*) arches="gfx942 gfx950" ;;
	esac
	for a in $arches; do
		d="$TMP/$b-$a"
		mkdir -p "$d"
		for fmt in env_file environ sh json explain digest; do
			run "$d/$fmt" "$d/$fmt.err" onnode "$ENVFS_BIN" resolve -b "$b" -a "$a" --format "$fmt"
			assert_no_crash "resolve $b/$a --format $fmt" "$d/$fmt.err"
			[ "$rc" -eq 0 ] || { cat "$d/$fmt.err" >&2; fail "resolve $b/$a --format $fmt exited $rc"; }
			[ -s "$d/$fmt" ] || [ "$fmt" = environ ] || fail "resolve $b/$a --format $fmt printed nothing"
			[ -s "$d/$fmt.err" ] && { cat "$d/$fmt.err" >&2; fail "resolve $b/$a --format $fmt wrote to stderr"; }
		done
		# the default format is env_file
		run "$d/default" "$d/default.err" onnode "$ENVFS_BIN" resolve -b "$b" -a "$a"
		cmp -s "$d/default" "$d/env_file" || fail "$b/$a: the default format is not env_file"
		grep -Eqx '[0-9a-f]{64}' "$d/digest" || fail "$b/$a: digest is not one line of 64 hex digits"
		python3 "$TMP/agree.py" "$d" || fail "$b/$a: the formats disagree"
		# env.sh, sourced, reproduces environ
		(
			set -a
			. "$d/sh"
			python3 -c 'import os, sys
want = {}
for e in open(sys.argv[1], "rb").read().split(b"\0")[:-1]:
    n, _, v = e.partition(b"=")
    want[n] = v
for n, v in want.items():
    if os.environb.get(n) != v:
        sys.exit("env.sh: %s differs" % n.decode())' "$d/environ"
		) || fail "$b/$a: sourcing env.sh does not reproduce environ"
	done
done

# Two different dirs have different digests, one dir is stable.
cmp -s "$TMP/maxtext-gfx942/digest" "$TMP/maxtext-gfx950/digest" &&
	fail "maxtext gfx942 and gfx950 have the same digest"
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve -b maxtext -a gfx950 --format digest
cmp -s "$TMP/out" "$TMP/maxtext-gfx950/digest" || fail "digest is not stable across runs"

# resolve reads the asked backend's own file (with base.yaml and
# catalog.yaml) and no other backend's: a broken torch_fl.yaml does not
# stop a maxtext resolve, while check, which reads everything, reports it.
run "$TMP/good" "$TMP/err" onnode "$ENVFS_BIN" resolve -b maxtext -a gfx950
mkdir -p "$TMP/sel/broken"
cp "$ENVFS_SPECS"/*.yaml "$TMP/sel/broken/"
printf 'backend: torch_fl\nvariables: [\n' >"$TMP/sel/broken/torch_fl.yaml"
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve --specs "$TMP/sel/broken" -b maxtext -a gfx950
cmp -s "$TMP/out" "$TMP/good" || fail "a broken torch_fl.yaml changed the maxtext resolve"
[ ! -s "$TMP/err" ] || fail "resolve -b maxtext read torch_fl.yaml: $(cat "$TMP/err")"
rc=0
onnode "$ENVFS_BIN" check --specs "$TMP/sel/broken" >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "torch_fl.yaml:3" "$TMP/err" ||
	fail "check missed the broken torch_fl.yaml (exit $rc): $(cat "$TMP/err")"
# The catalog's documentation (catalog.docs.yaml) is read only where it is
# shown: a broken one does not change a resolve of a view without notes,
# while explain, which shows them, and check report it at its line.
mkdir -p "$TMP/sel/docs"
cp "$ENVFS_SPECS"/*.yaml "$TMP/sel/docs/"
printf 'docs:\n  - name: MASTER_PORT\n    description: [\n' >"$TMP/sel/docs/catalog.docs.yaml"
for fmt in env_file environ sh json compose digest; do
	run "$TMP/want" "$TMP/err" onnode "$ENVFS_BIN" resolve -b maxtext -a gfx950 --format "$fmt"
	run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve --specs "$TMP/sel/docs" -b maxtext \
		-a gfx950 --format "$fmt"
	[ "$rc" -eq 0 ] && cmp -s "$TMP/out" "$TMP/want" ||
		fail "a broken catalog.docs.yaml changed resolve --format $fmt (exit $rc)"
	[ ! -s "$TMP/err" ] || fail "resolve --format $fmt read catalog.docs.yaml: $(cat "$TMP/err")"
done
for cmd in "resolve -b maxtext -a gfx950 --format explain" check; do
	rc=0
	# shellcheck disable=SC2086 # cmd is words
	onnode "$ENVFS_BIN" $cmd --specs "$TMP/sel/docs" >/dev/null 2>"$TMP/err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q "catalog.docs.yaml:4" "$TMP/err" ||
		fail "$cmd missed the broken catalog.docs.yaml (exit $rc): $(cat "$TMP/err")"
done
# Docs without the catalog they document are an error of the directory.
rm -rf "$TMP/sel/nocat"
mkdir -p "$TMP/sel/nocat"
cp "$ENVFS_SPECS"/*.yaml "$TMP/sel/nocat/"
rm "$TMP/sel/nocat/catalog.yaml"
rc=0
onnode "$ENVFS_BIN" check --specs "$TMP/sel/nocat" >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "catalog.docs.yaml: error: documents a catalog, but the spec directory has no catalog.yaml" "$TMP/err" ||
	fail "catalog.docs.yaml without catalog.yaml (exit $rc): $(cat "$TMP/err")"
# The backend's file under another name is still found (every file is
# read), and so it is when maxtext.yaml declares some other backend.
mkdir -p "$TMP/sel/renamed" "$TMP/sel/swapped"
cp "$ENVFS_SPECS"/*.yaml "$TMP/sel/renamed/"
mv "$TMP/sel/renamed/maxtext.yaml" "$TMP/sel/renamed/jax.yaml"
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve --specs "$TMP/sel/renamed" -b maxtext -a gfx950
cmp -s "$TMP/out" "$TMP/good" || fail "maxtext declared in jax.yaml: output differs"
cp "$ENVFS_SPECS"/*.yaml "$TMP/sel/swapped/"
mv "$TMP/sel/swapped/maxtext.yaml" "$TMP/sel/swapped/jax.yaml"
sed 's/^backend: megatron$/backend: maxtext_old/' "$ENVFS_SPECS/megatron.yaml" \
	>"$TMP/sel/swapped/maxtext.yaml"
rm "$TMP/sel/swapped/megatron.yaml"
grep -q '^backend: maxtext_old$' "$TMP/sel/swapped/maxtext.yaml" || fail "swapped: sed"
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve --specs "$TMP/sel/swapped" -b maxtext -a gfx950
cmp -s "$TMP/out" "$TMP/good" || fail "maxtext.yaml declaring maxtext_old: output differs"

# A second file declaring the asked backend is still an error for
# resolve, as for check and the mount (the other files are looked at for
# a `backend:` line), quoted or not, with a comment after it.
for decl in 'backend: maxtext' 'backend: "maxtext"  # a copy' "backend: 'maxtext'"; do
	rm -rf "$TMP/sel/dup"
	mkdir -p "$TMP/sel/dup"
	cp "$ENVFS_SPECS"/*.yaml "$TMP/sel/dup/"
	sed "s/^backend: maxtext\$/$decl/" "$ENVFS_SPECS/maxtext.yaml" >"$TMP/sel/dup/zz_copy.yaml"
	grep -qxF "$decl" "$TMP/sel/dup/zz_copy.yaml" || fail "dup: sed ($decl)"
	rc=0
	onnode "$ENVFS_BIN" resolve --specs "$TMP/sel/dup" -b maxtext -a gfx950 >/dev/null \
		2>"$TMP/err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q "backend 'maxtext' is also declared by" "$TMP/err" ||
		fail "a second maxtext declaration ($decl) was not reported (exit $rc): $(cat "$TMP/err")"
done
# A backend whose name only starts the same is no second declaration.
rm -rf "$TMP/sel/dup"
mkdir -p "$TMP/sel/dup"
cp "$ENVFS_SPECS"/*.yaml "$TMP/sel/dup/"
sed 's/^backend: megatron$/backend: maxtext2/' "$ENVFS_SPECS/megatron.yaml" >"$TMP/sel/dup/megatron.yaml"
run "$TMP/out" "$TMP/err" onnode "$ENVFS_BIN" resolve --specs "$TMP/sel/dup" -b maxtext -a gfx950
cmp -s "$TMP/out" "$TMP/good" || fail "backend maxtext2 disturbed the maxtext resolve"

# Host passthrough is per backend: the runner's list (MASTER_ADDR, ...)
# reaches a backend that uses the runner and not torch_fl
# (uses_runner: false), in the same run as a --env and a config value, so
# the candidates of every layer land on their own variables.
printf 'env:\n  NCCL_DEBUG: "INFO"\n' >"$TMP/host.yaml"
for ba in maxtext/gfx950 torch_fl/cuda; do
	run "$TMP/out" "$TMP/err" env -i PATH="$PATH" MASTER_ADDR=10.7.7.7 \
		${ASAN_OPTIONS+ASAN_OPTIONS="$ASAN_OPTIONS"} \
		${UBSAN_OPTIONS+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		"$ENVFS_BIN" resolve --config "$TMP/host.yaml" --env NNODES=3 \
		-b "${ba%/*}" -a "${ba#*/}"
	[ "$rc" -eq 0 ] || fail "$ba with MASTER_ADDR in the host environment exited $rc: $(cat "$TMP/err")"
	grep -qx 'NNODES=3' "$TMP/out" || fail "$ba: --env NNODES=3 lost"
	grep -qx 'NCCL_DEBUG=INFO' "$TMP/out" || fail "$ba: config NCCL_DEBUG=INFO lost"
	case $ba in
	maxtext/*) grep -qx 'MASTER_ADDR=10.7.7.7' "$TMP/out" ||
			fail "maxtext: host MASTER_ADDR did not pass through" ;;
	torch_fl/*) ! grep -q '10.7.7.7' "$TMP/out" ||
			fail "torch_fl: the runner's passthrough reached it: $(grep 10.7.7.7 "$TMP/out")" ;;
	esac
done

# The catalog is read from the spec directory like every spec: its types
# apply, and an edited catalog.yaml changes the result.
rm -rf "$TMP/cat"
mkdir -p "$TMP/cat/exact" "$TMP/cat/changed"
cp "$ENVFS_SPECS"/*.yaml "$TMP/cat/exact/"
cp "$ENVFS_SPECS"/*.yaml "$TMP/cat/changed/"
cat >"$TMP/cat/exp.yaml" <<'YAML'
env:
  MASTER_PORT: "80"
  NCCL_DEBUG: "LOUD"
  HSA_ENABLE_SDMA: "maybe"
YAML
run "$TMP/cat/a" "$TMP/err" onnode "$ENVFS_BIN" resolve --specs "$TMP/cat/exact" \
	--config "$TMP/cat/exp.yaml" -b maxtext -a gfx950 --format explain
grep -q "MASTER_PORT=80 is outside 1024-65535" "$TMP/cat/a" ||
	fail "the catalog's MASTER_PORT range was not applied"
# explain reads the catalog's docs: the description is MASTER_PORT's note.
python3 - "$TMP/cat/a" <<'EOF'
import sys
block = open(sys.argv[1]).read().split("\nMASTER_PORT\n", 1)[1].split("\n\n", 1)[0]
want = ("  note: TCP port for the store backing torch.distributed. Default 1234 "
        "for direct runs; 29500 in some Python defaults.")
assert want in block.split("\n"), "MASTER_PORT's note is not the catalog's description:\n" + block
EOF
sed -i 's/^    min: 1024$/    min: 10/' "$TMP/cat/changed/catalog.yaml"
run "$TMP/cat/b" "$TMP/err" onnode "$ENVFS_BIN" resolve --specs "$TMP/cat/changed" \
	--config "$TMP/cat/exp.yaml" -b maxtext -a gfx950 --format explain
! grep -q "MASTER_PORT=80 is outside" "$TMP/cat/b" ||
	fail "a changed catalog.yaml (MASTER_PORT min 10) changed nothing"

echo "ok: resolve"
