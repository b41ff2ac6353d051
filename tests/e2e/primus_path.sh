# End-to-end: --primus-path (and an image's PRIMUS_PATH) give what the
# runner derives from where Primus is, as the runner's own logic computes
# it under bash (tests/fixtures/primus_path/derive.sh), on a checkout and
# on a pip-style layout; a config's ${DATA_PATH}/${PRIMUS_PATH} expand.
set -eu
. "$(dirname "$0")/lib.sh"

DERIVE="$ENVFS_FIXTURES/primus_path/derive.sh"
NAMES='^(PRIMUS_PATH|PRIMUS_IMPORT_ROOT|DATA_PATH|HF_HOME|PYTHONPATH)='

# ours DIR [ARGS]: the five names as resolve gives them, sorted.
ours() {
	_d=$1
	shift
	clean "$ENVFS_BIN" resolve -b megatron -a gfx942 --primus-path "$_d" "$@" >"$TMP/ours.all" ||
		fail "resolve --primus-path $_d failed"
	grep -E "$NAMES" "$TMP/ours.all" | sort
}

# same WHAT GOT WANT: fails naming both when they differ.
same() {
	[ "$2" = "$3" ] || fail "$1: got
$2
want
$3"
}

mkdir -p "$TMP/checkout/Primus/primus" "$TMP/site-packages/primus"
: >"$TMP/checkout/Primus/primus/__init__.py"
: >"$TMP/site-packages/primus/__init__.py"

# A checkout: PRIMUS_PATH holds the primus package, so it is the import root.
want=$(clean bash "$DERIVE" "$TMP/checkout/Primus" | sort)
same "checkout layout" "$(ours "$TMP/checkout/Primus")" "$want"
# The same path written another way (trailing slash, ./ and ..) is the same.
same "checkout layout, unnormalized path" "$(ours "$TMP/checkout/./Primus/primus/../")" "$want"

# A pip install: PRIMUS_PATH is the package itself; its parent is the root.
want=$(clean bash "$DERIVE" "$TMP/site-packages/primus" | sort)
same "pip layout" "$(ours "$TMP/site-packages/primus")" "$want"
grep -qx "PRIMUS_IMPORT_ROOT=$TMP/site-packages" "$TMP/ours.all" || fail "pip layout: import root is not the parent"

# An inherited PYTHONPATH and DATA_PATH: the runner prefixes the one and
# keeps the other (a default applies only when unset or empty).
printf 'PYTHONPATH=/opt/lib\nDATA_PATH=/mnt/data\n' >"$TMP/image.env"
want=$(clean env PYTHONPATH=/opt/lib DATA_PATH=/mnt/data bash "$DERIVE" "$TMP/checkout/Primus" | sort)
same "with an image's PYTHONPATH and DATA_PATH" "$(ours "$TMP/checkout/Primus" --inherit "$TMP/image.env")" "$want"

# The acceptance: a config's ${DATA_PATH}/x and ${PRIMUS_PATH}/y expand as
# in the real launch, for a path that does not exist here (a checkout).
printf 'env:\n  MY_DATA: "${DATA_PATH}/x"\n  MY_CODE: "${PRIMUS_PATH}/y"\n' >"$TMP/exp.yaml"
clean "$ENVFS_BIN" resolve -b megatron -a gfx942 --primus-path /workspace/Primus --config "$TMP/exp.yaml" >"$TMP/acc" ||
	fail "resolve --primus-path /workspace/Primus failed"
for l in MY_DATA=/workspace/Primus/data/x MY_CODE=/workspace/Primus/y DATA_PATH=/workspace/Primus/data \
	HF_HOME=/workspace/Primus/data/huggingface PRIMUS_IMPORT_ROOT=/workspace/Primus \
	PRIMUS_PATH=/workspace/Primus PYTHONPATH=/workspace/Primus:; do
	grep -qx "$l" "$TMP/acc" || fail "--primus-path /workspace/Primus: no $l in $(grep -E "$NAMES|^MY_" "$TMP/acc")"
done

# An image's PRIMUS_PATH is where Primus is when --primus-path is not given;
# --primus-path wins over it.
printf 'PRIMUS_PATH=/opt/Primus\n' >"$TMP/p.env"
clean "$ENVFS_BIN" resolve -b megatron -a gfx942 --inherit "$TMP/p.env" --config "$TMP/exp.yaml" >"$TMP/img"
grep -qx 'MY_DATA=/opt/Primus/data/x' "$TMP/img" && grep -qx 'PYTHONPATH=/opt/Primus:' "$TMP/img" ||
	fail "an image's PRIMUS_PATH is not used: $(grep -E "$NAMES|^MY_" "$TMP/img")"
clean "$ENVFS_BIN" resolve -b megatron -a gfx942 --inherit "$TMP/p.env" --primus-path /workspace/Primus >"$TMP/both"
grep -qx 'PRIMUS_PATH=/workspace/Primus' "$TMP/both" || fail "--primus-path does not win over the image's"

# Without it: unknown, nothing derived, and explain says the launch derives them.
clean "$ENVFS_BIN" resolve -b megatron -a gfx942 --config "$TMP/exp.yaml" >"$TMP/none" 2>"$TMP/none.err"
! grep -qE "$NAMES" "$TMP/none" || fail "derived values without a PRIMUS_PATH: $(grep -E "$NAMES" "$TMP/none")"
grep -qx 'MY_DATA=${DATA_PATH}/x' "$TMP/none" || fail "without PRIMUS_PATH the reference is not left literal"
clean "$ENVFS_BIN" resolve -b megatron -a gfx942 --format explain >"$TMP/x"
grep -q 'PRIMUS_PATH: unknown here.*the launch derives.*--primus-path' "$TMP/x" ||
	fail "explain does not say the launch derives them: $(head -5 "$TMP/x")"

# torch_fl has no runner: nothing of this.
clean "$ENVFS_BIN" resolve -b torch_fl -a cuda --primus-path /workspace/Primus >"$TMP/tfl"
! grep -qE "$NAMES" "$TMP/tfl" || fail "torch_fl got runner paths"

echo "ok: primus_path"
