#!/bin/bash
# Issue 3, acceptance 1 and 2, with the built binary and the shipped specs:
# torch_fl's exported per-accelerator defaults, and what `check` says about
# misspelled, non-boolean, empty, retired and out-of-enum FLAGOS_* values.
# Env: ENVFS_BIN (the binary), ENVFS_SPECS (the shipped specs dir).
set -eu

bin=${ENVFS_BIN:?ENVFS_BIN is not set}
specs=${ENVFS_SPECS:?ENVFS_SPECS is not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# has FILE TEXT: FILE contains TEXT (fixed string) on some line.
has() {
	grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "missing: $2"; }
}

hasnt() {
	! grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "unexpected: $2"; }
}

# line FILE LINE: FILE has exactly this line.
line() {
	grep -qxF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "no line: $2"; }
}

# check_rc WANT ARGS...: runs `check` (stdout+stderr to $tmp/out), wants exit WANT.
check_rc() {
	local want=$1 rc=0
	shift
	"$bin" check --specs "$specs" -b torch_fl "$@" >"$tmp/out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || { cat "$tmp/out" >&2; fail "check $* exited $rc, want $want"; }
}

# --- acceptance 1: exported defaults per accelerator ---------------------
"$bin" resolve --specs "$specs" -b torch_fl -a musa --format env_file >"$tmp/musa" ||
	fail "resolve torch_fl/musa failed"
line "$tmp/musa" "TORCH_DEVICE_BACKEND_AUTOLOAD=0"
line "$tmp/musa" "TORCHINDUCTOR_COMPILE_THREADS=1"
hasnt "$tmp/musa" "FLAGOS_"

"$bin" resolve --specs "$specs" -b torch_fl -a cuda --format env_file >"$tmp/cuda" ||
	fail "resolve torch_fl/cuda failed"
hasnt "$tmp/cuda" "TORCH_DEVICE_BACKEND_AUTOLOAD"
hasnt "$tmp/cuda" "TORCHINDUCTOR_COMPILE_THREADS"
hasnt "$tmp/cuda" "FLAGOS_"

# Also with the shipped specs found without --specs (a fresh build tree).
"$bin" resolve -b torch_fl -a musa --format env_file >"$tmp/musa2" ||
	fail "resolve without --specs failed"
cmp -s "$tmp/musa" "$tmp/musa2" || fail "resolve with and without --specs differ"

# No FLAGOS_* default is exported on any accelerator.
for arch in cuda ppu metax ascend tsingmicro dcu gcu musa bpu; do
	"$bin" resolve --specs "$specs" -b torch_fl -a "$arch" --format env_file >"$tmp/a" ||
		fail "resolve torch_fl/$arch failed"
	hasnt "$tmp/a" "FLAGOS_"
done

# A clean torch_fl checks clean.
check_rc 0

# --- acceptance 2: check ---------------------------------------------------
check_rc 1 --env FLAGOS_LOG_DISPACH=1
has "$tmp/out" "warning: FLAGOS_LOG_DISPACH is not a torch_fl variable; nothing reads it."
has "$tmp/out" "Did you mean FLAGOS_LOG_DISPATCH? (retired: replaced by FLAGOS_LOG=dispatch)"

check_rc 1 --env FLAGOS_ALIAS_CUDA=2
has "$tmp/out" "warning: FLAGOS_ALIAS_CUDA=2 is not a boolean (1 true on yes / 0 false off no, any case); torch_fl warns once and the default (on) applies"

check_rc 0 --env FLAGOS_ALIAS_CUDA=
hasnt "$tmp/out" "FLAGOS_ALIAS_CUDA"

for retired in FLAGOS_LOG_DISPATCH ALL_USE_FLAGGEMS FLAGOS_USE_TILEOPS FLAGOS_USE_VENDOR_OPS; do
	check_rc 0 --env "$retired=1"
	hasnt "$tmp/out" "$retired"
done

check_rc 1 --env FLAGOS_FORCE_BACKEND=gpu
has "$tmp/out" "FLAGOS_FORCE_BACKEND=gpu is not one of: flaggems vendor tileops"

# explain says what the empty boolean means, and what a retired name is.
"$bin" resolve --specs "$specs" -b torch_fl -a cuda --format explain \
	--env FLAGOS_ALIAS_CUDA= --env FLAGOS_LOG_DISPATCH=1 >"$tmp/explain" ||
	fail "resolve --format explain failed"
has "$tmp/explain" "FLAGOS_ALIAS_CUDA is empty: treated as unset, so the default on applies"
has "$tmp/explain" "retired: inert, nothing reads it; replaced by FLAGOS_LOG=dispatch"

# --- the rest of issue 3's torch_fl rules ------------------------------------
check_rc 1 --env FLAGOS_LOG=dispach,fallback
has "$tmp/out" "FLAGOS_LOG: unknown entry 'dispach' (known: dispatch fallback op_cache); did you mean 'dispatch'?"

check_rc 0 --env FLAGOS_OP_add__Tensor=cuda --env FLAGOS_LOG=dispatch,op_cache

# GEMS_VENDOR outside the set torch_fl can route is an error.
check_rc 2 -a cuda --env GEMS_VENDOR=amd
has "$tmp/out" "error: GEMS_VENDOR=amd is not one of: nvidia metax hygon ascend mthreads enflame iluvatar kunlunxin du thead musa cambricon cuda"
# Every vendor torch_fl's vendor table routes is valid, on every accelerator.
for v in nvidia metax hygon ascend mthreads enflame iluvatar kunlunxin du thead musa cambricon cuda; do
	check_rc 0 -a dcu --env GEMS_VENDOR=$v
done
"$bin" resolve --specs "$specs" -b torch_fl -a cuda --env GEMS_VENDOR=kunlunxin >"$tmp/kx" 2>"$tmp/kx.err" ||
	fail "resolve with GEMS_VENDOR=kunlunxin exits non-zero: $(cat "$tmp/kx.err")"
grep -qx 'GEMS_VENDOR=kunlunxin' "$tmp/kx" || fail "GEMS_VENDOR=kunlunxin not resolved: $(cat "$tmp/kx")"
# A pin compares the relaxed reading (stripped, any case): " off " is OFF.
check_rc 0 -a dcu --env "FLAGOS_BUILD_FLAGGEMS_CPP= off "
check_rc 0 -a dcu --env FLAGOS_BUILD_FLAGGEMS_CPP=no
check_rc 2 -a dcu --env "FLAGOS_BUILD_FLAGGEMS_CPP= on "
# A condition on a switch reads it the relaxed way: tRuE disables the cache.
for t in tRuE " 1 " YES On; do
	"$bin" resolve --specs "$specs" -b torch_fl -a cuda --env "FLAGOS_TILEOPS_DISABLE_ALL_CACHE=$t" >"$tmp/tl" ||
		fail "resolve FLAGOS_TILEOPS_DISABLE_ALL_CACHE=$t"
	grep -qx 'TILELANG_DISABLE_CACHE=1' "$tmp/tl" || fail "FLAGOS_TILEOPS_DISABLE_ALL_CACHE='$t' does not export TILELANG_DISABLE_CACHE=1"
done
for f in 0 off " nO " 2; do
	"$bin" resolve --specs "$specs" -b torch_fl -a cuda --env "FLAGOS_TILEOPS_DISABLE_ALL_CACHE=$f" >"$tmp/tl" 2>/dev/null ||
		fail "resolve FLAGOS_TILEOPS_DISABLE_ALL_CACHE=$f"
	! grep -q '^TILELANG_DISABLE_CACHE=' "$tmp/tl" || fail "FLAGOS_TILEOPS_DISABLE_ALL_CACHE='$f' exports TILELANG_DISABLE_CACHE"
done

# Pins: tsingmicro forces FLAGOS_BUILD_VENDOR ON; the same value elsewhere is fine.
check_rc 2 -a tsingmicro --env FLAGOS_BUILD_VENDOR=OFF
has "$tmp/out" "error: FLAGOS_BUILD_VENDOR=OFF contradicts the value ON that torch_fl forces on tsingmicro"
check_rc 0 -a tsingmicro --env FLAGOS_BUILD_VENDOR=1
check_rc 0 -a cuda --env FLAGOS_BUILD_VENDOR=OFF
check_rc 2 -a musa --env FLAGOS_BUILD_FLAGGEMS_CPP=ON
has "$tmp/out" "FLAGOS_BUILD_FLAGGEMS_CPP=ON contradicts the value OFF that torch_fl forces on musa"

# --- the cross-variable rules of issue 3, through the Primus backends --------
prim() {
	local want=$1 rc=0
	shift
	"$bin" check --specs "$specs" -b maxtext -a gfx950 "$@" >"$tmp/out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || { cat "$tmp/out" >&2; fail "check maxtext $* exited $rc, want $want"; }
}
prim 0
prim 2 --env PRIMUS_HIPBLASLT_TUNING=1 --env PRIMUS_DETERMINISTIC=1
has "$tmp/out" "PRIMUS_HIPBLASLT_TUNING=1 is mutually exclusive with deterministic mode"
prim 2 --env MASTER_PORT=80
has "$tmp/out" "MASTER_PORT=80 is outside 1024-65535"
prim 0 --env MASTER_PORT=29500
prim 2 --env XLA_GPU_AUTOTUNE_LEVEL=0
has "$tmp/out" "XLA_GPU_AUTOTUNE_LEVEL=0 is below the minimum 1"
has "$tmp/out" "NaN loss"
prim 0 --env XLA_GPU_AUTOTUNE_LEVEL=1
prim 2 --env PRIMUS_HIPBLASLT_TUNING_STAGE=4 --env PRIMUS_HIPBLASLT_TUNING=1
has "$tmp/out" "PRIMUS_HIPBLASLT_TUNING_STAGE=4 is outside 0-3"
prim 0 --env PRIMUS_HIPBLASLT_TUNING_STAGE=3 --env PRIMUS_HIPBLASLT_TUNING=1
prim 1 --env PRIMUS_LOG_LEVEL=TRACE
has "$tmp/out" "PRIMUS_LOG_LEVEL=TRACE is not one of: DEBUG INFO WARN ERROR"
prim 0 --env PRIMUS_LOG_LEVEL=WARN

# --- torch_fl reads its owned values as _env.py does (issue 13) -------------
# Stripped of surrounding blanks, enums and list entries in any case, blank
# list entries dropped: each of these is valid, so check is clean.
check_rc 0 -a cuda --env FLAGOS_FORCE_BACKEND=Vendor
check_rc 0 -a cuda --env "FLAGOS_ALIAS_CUDA= nO "
check_rc 0 -a cuda --env "FLAGOS_LOG= Dispatch , fallback ,,"
# ... and still checked after stripping.
check_rc 1 -a cuda --env "FLAGOS_FORCE_BACKEND= gpu "
has "$tmp/out" "FLAGOS_FORCE_BACKEND=gpu is not one of: flaggems vendor tileops"

echo "ok: torch_fl e2e"
