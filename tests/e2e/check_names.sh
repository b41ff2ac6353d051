# End-to-end: `check` on names nothing reads, XLA_FLAGS tokens, an --env
# value a later step replaces, and values a view leaves out.
set -eu
. "$(dirname "$0")/lib.sh"

FIX="$ENVFS_FIXTURES/names"

# expect_has FILE TEXT WHAT: FILE contains TEXT (fixed string).
expect_has() {
	grep -qF -- "$2" "$TMP/$1" || { cat "$TMP/$1" >&2; fail "$3"; }
}

# --- the four misspellings: a warning each with the suggestion ---
check_to typos --config "$FIX/typos.yaml" -a gfx950
expect_rc 1 typos
for pair in XLA_PYTHON_CLIENT_MEM_FRACTON:XLA_PYTHON_CLIENT_MEM_FRACTION \
	NCCL_IB_GID_INDX:NCCL_IB_GID_INDEX NCCL_SOCKET_IFNAM:NCCL_SOCKET_IFNAME \
	HIP_VISIBLE_DEVICE:HIP_VISIBLE_DEVICES; do
	bad=${pair%%:*} good=${pair#*:}
	expect_has typos "typos.yaml:" "no place"
	grep -qE "typos\.yaml:[0-9]+: warning: $bad: nothing reads this name; did you mean $good\?" \
		"$TMP/typos" || { cat "$TMP/typos" >&2; fail "$bad: no warning suggesting $good"; }
done
# a name that only carries a reader's prefix: an info line
grep -qE 'typos\.yaml:[0-9]+: info: nothing is known to read NCCL_FOO' "$TMP/typos" ||
	{ cat "$TMP/typos" >&2; fail "NCCL_FOO: no info line"; }

# the same in JSON
run "$TMP/typos.json" "$TMP/typos.json.err" clean "$ENVFS_BIN" check --config "$FIX/typos.yaml" \
	-a gfx950 --format json
[ "$rc" -eq 1 ] || fail "json check must exit 1, got $rc"
python3 - "$TMP/typos.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = {
    "XLA_PYTHON_CLIENT_MEM_FRACTON": "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "NCCL_IB_GID_INDX": "NCCL_IB_GID_INDEX",
    "NCCL_SOCKET_IFNAM": "NCCL_SOCKET_IFNAME",
    "HIP_VISIBLE_DEVICE": "HIP_VISIBLE_DEVICES",
}
for bad, good in want.items():
    hits = [x for x in d if x["severity"] == "warning" and
            x["message"] == f"{bad}: nothing reads this name; did you mean {good}?"]
    if not hits or not hits[0]["file"].endswith("typos.yaml") or not hits[0]["line"]:
        sys.exit(f"FAIL: json has no placed warning {bad} -> {good}: {d}")
if not [x for x in d if x["severity"] == "info" and
        x["message"] == "nothing is known to read NCCL_FOO"]:
    sys.exit("FAIL: json has no info line for NCCL_FOO")
PY

# --- the same check on the other layers a user sets: --env and --env-file ---
check_to cli_typo -b maxtext -a gfx950 --env NCCL_IB_GID_INDX=3
expect_rc 1 cli_typo
expect_has cli_typo "cli: warning: NCCL_IB_GID_INDX: nothing reads this name; did you mean NCCL_IB_GID_INDEX? [PE601]" \
	"--env misspelling: no warning with its suggestion"
printf '# a comment\nNCCL_SOCKET_IFNAM=eth0\n' >"$TMP/typo.env"
check_to file_typo -b maxtext -a gfx950 --env-file "$TMP/typo.env"
expect_rc 1 file_typo
expect_has file_typo "typo.env:2: warning: NCCL_SOCKET_IFNAM: nothing reads this name; did you mean NCCL_SOCKET_IFNAME? [PE601]" \
	"--env-file misspelling: no warning at its line"

# --- an XLA_ or JAX_ name in a TorchTitan run ---
check_to titan_jax -b torchtitan -a gfx950 --env JAX_PLATFORMS=rocm
expect_rc 1 titan_jax
expect_has titan_jax "cli: warning: JAX_PLATFORMS: only XLA and JAX reads this name, and a torchtitan run does not use it [PE603]" \
	"JAX_ name in torchtitan: no warning"

# --- an XLA_ name in a Megatron run ---
check_to megatron --config "$FIX/megatron_xla.yaml" -a gfx950
expect_rc 1 megatron
grep -qE 'megatron_xla\.yaml:[0-9]+: warning: XLA_PYTHON_CLIENT_MEM_FRACTION: only XLA and JAX reads this name, and a megatron run does not use it' \
	"$TMP/megatron" || { cat "$TMP/megatron" >&2; fail "XLA_ name in megatron: no warning"; }
grep -q 'NCCL_DEBUG' "$TMP/megatron" && fail "NCCL_DEBUG is read by every backend's NCCL"
# ... while the same name in maxtext is read
printf 'env:\n  XLA_PYTHON_CLIENT_MEM_FRACTION: "0.9"\nmodules:\n  t:\n    framework: maxtext\n' \
	>"$TMP/maxtext_xla.yaml"
check_to maxtext_xla --config "$TMP/maxtext_xla.yaml" -a gfx950
expect_rc 0 maxtext_xla
# A name in no reader's list, not this backend's, of a prefix only
# readers this backend never runs read: XLA_GPU_AUTOTUNE_LEVEL and
# XLA_FLAGS_APPEND (MaxText's launch merges them), FLAGOS_LOG (torch_fl's)
# in a Megatron run, passed on unread (they were silent). NVTE_CK_USES_FWD_V3,
# which MaxText's spec sets, Transformer Engine reads in a Megatron run
# too. The same for resolve -b, which reads no other backend's spec.
check_to meg_other -b megatron -a gfx950 --env XLA_GPU_AUTOTUNE_LEVEL=5 \
	--env XLA_FLAGS_APPEND=--xla_gpu_enable_triton_gemm=false --env FLAGOS_LOG=1 --env NVTE_CK_USES_FWD_V3=1
expect_rc 1 meg_other
expect_has meg_other "cli: warning: XLA_GPU_AUTOTUNE_LEVEL: XLA_ names are for XLA and JAX, which a megatron run does not use [PE603]" \
	"XLA_GPU_AUTOTUNE_LEVEL in megatron: no warning"
expect_has meg_other "cli: warning: XLA_FLAGS_APPEND: XLA_ names are for XLA and JAX, which a megatron run does not use [PE603]" \
	"XLA_FLAGS_APPEND in megatron: no warning"
expect_has meg_other "cli: warning: FLAGOS_LOG: FLAGOS_ names are for" "FLAGOS_LOG in megatron: no warning"
grep -q 'NVTE_CK_USES_FWD_V3' "$TMP/meg_other" && { cat "$TMP/meg_other" >&2; fail "NVTE_CK_USES_FWD_V3 is Transformer Engine's, which megatron runs"; }
check_to max_other -b maxtext -a gfx950 --env XLA_GPU_AUTOTUNE_LEVEL=5 \
	--env XLA_FLAGS_APPEND=--xla_gpu_enable_triton_gemm=false
expect_rc 0 max_other
clean "$ENVFS_BIN" resolve -b megatron -a gfx950 --env XLA_GPU_AUTOTUNE_LEVEL=5 --format explain |
	grep -q 'XLA_GPU_AUTOTUNE_LEVEL: XLA_ names are for XLA and JAX, which' ||
	fail "resolve -b megatron does not say what check says of XLA_GPU_AUTOTUNE_LEVEL"

# --- a bad token is placed where it was written: an --env-file's XLA_FLAGS
# line, not the spec that merges the list (it said specs/maxtext.yaml:11)
printf 'OTHER=1\nXLA_FLAGS=--xla_gpu_autotune_levle=3\n' >"$TMP/flags.env"
check_to flagplace -b maxtext -a gfx950 --env-file "$TMP/flags.env"
expect_rc 1 flagplace
expect_has flagplace "$TMP/flags.env:2: warning: XLA_FLAGS: XLA defines no flag --xla_gpu_autotune_levle" \
	"the bad token is not placed at its env-file line"

# --- each bad XLA_FLAGS_APPEND token: a warning with a suggestion ---
check_to append --config "$FIX/xla_append.yaml" -a gfx950
expect_rc 1 append
expect_has append "warning: XLA_FLAGS_APPEND: XLA defines no flag --xla_gpu_autotune_levl; did you mean --xla_gpu_autotune_level?" \
	"misspelled flag: no warning with its suggestion"
expect_has append "warning: XLA_FLAGS_APPEND: 'xla_gpu_enable_cublaslt=true' is not of the form --xla_NAME[=VALUE]; did you mean --xla_gpu_enable_cublaslt=true?" \
	"token without --: no warning"
expect_has append "warning: XLA_FLAGS_APPEND: --xla_gpu_enable_cublaslt is a boolean flag and 'maybe' is not true, false, 1 or 0" \
	"non-boolean value of a boolean flag: no warning"
grep -q "latency_hiding_scheduler is a boolean" "$TMP/append" && fail "TRUE is a boolean XLA accepts"
# reported once, though XLA_FLAGS carries the append's tokens again
[ "$(grep -c 'xla_gpu_autotune_levl' "$TMP/append")" -eq 1 ] ||
	{ cat "$TMP/append" >&2; fail "one bad token must be reported once"; }
# an image's XLA_FLAGS token is checked too
printf 'XLA_FLAGS=--xla_gpu_enable_triton_gem=false\n' >"$TMP/image.env"
check_to image_flag --inherit "$TMP/image.env" -b maxtext -a gfx950
expect_rc 1 image_flag
expect_has image_flag "XLA_FLAGS: XLA defines no flag --xla_gpu_enable_triton_gem; did you mean --xla_gpu_enable_triton_gemm?" \
	"image XLA_FLAGS token: no warning"

# --- --env XLA_FLAGS replaced by the backend's managed flags: a warning naming the step ---
check_to cli_flags -b maxtext -a gfx950 --env XLA_FLAGS=--xla_gpu_autotune_level=0
expect_rc 1 cli_flags
expect_has cli_flags "warning: XLA_FLAGS: --env gives --xla_gpu_autotune_level=0, which the backend step (maxtext's managed flags) replaces with --xla_gpu_autotune_level=4" \
	"--env XLA_FLAGS replaced: no warning naming the step"
# --- a plain --env value the config env: block replaces ---
check_to cli_config --config "$FIX/megatron_xla.yaml" -a gfx950 --env NCCL_DEBUG=INFO
expect_has cli_config "warning: NCCL_DEBUG: the --env value 'INFO' is replaced by the config env: block (step 5); the run gets 'WARN'" \
	"--env replaced by the config: no warning"

# --- a value a view leaves out: a diagnostic naming the view, variable and why ---
check_to views --config "$FIX/view_omission.yaml" -a gfx950
expect_rc 1 views
grep -qE 'view_omission\.yaml:[0-9]+: warning: TWO_LINES is left out of the env_file view: value contains a newline' \
	"$TMP/views" || { cat "$TMP/views" >&2; fail "env_file omission: no diagnostic"; }
expect_has views 'warning: LITERAL_DOLLAR is left out of the compose.env view: value contains ${...}' \
	"compose omission: no diagnostic"
# env.sh: a name the shell cannot export (from an image: information only)
printf 'BAD-NAME=1\n' >"$TMP/badname.env"
check_to view_sh --inherit "$TMP/badname.env" -b megatron -a gfx950
expect_has view_sh "info: BAD-NAME is left out of the env.sh view: not a shell variable name" \
	"env.sh omission: no diagnostic"

echo "check_names: ok"
