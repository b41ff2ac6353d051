# End-to-end: each recipe and mistake of the seed guide "Environment and XLA
# flags" (primus-env-and-xla-flags.txt), on the shipped maxtext spec.
set -eu
. "$(dirname "$0")/lib.sh"

CFG="$ENVFS_FIXTURES/config"
E2E="$ENVFS_FIXTURES/e2e"

MANAGED='--xla_gpu_memory_limit_slop_factor=95 --xla_gpu_reduce_scatter_combine_threshold_bytes=8589934592 --xla_gpu_enable_command_buffer='"''"' --xla_gpu_enable_latency_hiding_scheduler=true --xla_gpu_all_gather_combine_threshold_bytes=8589934592 --xla_gpu_enable_triton_gemm=false --xla_gpu_enable_cublaslt=true --xla_gpu_autotune_level=4 --xla_gpu_enable_all_gather_combine_by_dim=false'

# resolve_to NAME FORMAT ARGS...: resolve maxtext/gfx950 into $TMP/NAME.
resolve_to() {
	_n=$1 _f=$2
	shift 2
	run "$TMP/$_n" "$TMP/$_n.err" clean "$ENVFS_BIN" resolve -b maxtext -a gfx950 --format "$_f" "$@"
	assert_no_crash "$_n" "$TMP/$_n.err"
	[ "$rc" -eq 0 ] || { cat "$TMP/$_n.err" >&2; fail "$_n: resolve exited $rc"; }
}

# check_to NAME ARGS...: check maxtext/gfx950 into $TMP/NAME (stdout+stderr).
check_to() {
	_n=$1
	shift
	run "$TMP/$_n" "$TMP/$_n.err2" clean "$ENVFS_BIN" check -b maxtext -a gfx950 "$@"
	cat "$TMP/$_n.err2" >>"$TMP/$_n"
	assert_no_crash "$_n" "$TMP/$_n"
}

# effective FILE FLAG: the effective value of FLAG in the XLA_FLAGS line of an
# env_file: tokens keyed before '=', the last occurrence wins.
effective() {
	env_file_value "$1" XLA_FLAGS | tr ' ' '\n' |
		awk -v k="$2" 'index($0, k "=") == 1 { v = substr($0, length(k) + 2); f = 1 } END { if (f) print v; exit !f }'
}

# --- Override one flag, keep the defaults (XLA_FLAGS_APPEND in env:) ---
resolve_to append env_file --config "$CFG/append_one_flag.yaml"
expect_line "$TMP/append" "XLA_FLAGS=$MANAGED --xla_gpu_autotune_level=5" "append one flag"
[ "$(effective "$TMP/append" --xla_gpu_autotune_level)" = 5 ] ||
	fail "append one flag: the appended --xla_gpu_autotune_level=5 must be effective"
[ "$(env_file_value "$TMP/append" XLA_FLAGS | awk '{ print $NF }')" = --xla_gpu_autotune_level=5 ] ||
	fail "append one flag: the appended flag must be the last token"
expect_no_line_starting "$TMP/append" "XLA_FLAGS_APPEND=" "XLA_FLAGS_APPEND is consumed"
resolve_to append.environ environ --config "$CFG/append_one_flag.yaml"
tr '\0' '\n' <"$TMP/append.environ" | grep >/dev/null '^XLA_FLAGS_APPEND=' &&
	fail "XLA_FLAGS_APPEND is consumed: not in environ"
resolve_to append.sh sh --config "$CFG/append_one_flag.yaml"
grep -q 'XLA_FLAGS_APPEND' "$TMP/append.sh" && fail "XLA_FLAGS_APPEND is consumed: not in env.sh"
resolve_to append.json json --config "$CFG/append_one_flag.yaml"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit("XLA_FLAGS_APPEND" in d)' \
	"$TMP/append.json" || fail "XLA_FLAGS_APPEND is consumed: not in env.json"
resolve_to append.explain explain --config "$CFG/append_one_flag.yaml"
grep -qF 'XLA_FLAGS_APPEND appended (wins): --xla_gpu_autotune_level=5' "$TMP/append.explain" ||
	fail "append one flag: explain must say 'XLA_FLAGS_APPEND appended (wins): …'"
check_to append.check --config "$CFG/append_one_flag.yaml"
[ "$rc" -eq 0 ] || { cat "$TMP/append.check" >&2; fail "append one flag: check must be clean (exit 0), got $rc"; }

# --- the same flag for one run only: --env XLA_FLAGS_APPEND ---
resolve_to cliappend env_file --env XLA_FLAGS_APPEND=--xla_gpu_autotune_level=5
expect_line "$TMP/cliappend" "XLA_FLAGS=$MANAGED --xla_gpu_autotune_level=5" "--env XLA_FLAGS_APPEND"

# --- Raise the first-collective timeouts (a folded >- scalar) ---
resolve_to timeouts env_file --config "$CFG/collective_timeouts.yaml"
expect_line "$TMP/timeouts" "XLA_FLAGS=$MANAGED --xla_gpu_first_collective_call_warn_stuck_timeout_seconds=300 --xla_gpu_first_collective_call_terminate_timeout_seconds=2400" \
	"first-collective timeouts appended"
[ "$(effective "$TMP/timeouts" --xla_gpu_first_collective_call_terminate_timeout_seconds)" = 2400 ] ||
	fail "terminate timeout must be effective"
[ "$(effective "$TMP/timeouts" --xla_gpu_autotune_level)" = 4 ] ||
	fail "timeouts recipe must keep the managed autotune level"

# --- Dump HLO through DUMP_HLO / DUMP_HLO_DIR ---
resolve_to dump env_file --config "$CFG/dump_hlo.yaml"
expect_line "$TMP/dump" "XLA_FLAGS=$MANAGED --xla_dump_to=output/xla_dump_hlo" "DUMP_HLO=1"
expect_line "$TMP/dump" "DUMP_HLO=1" "DUMP_HLO exported"
expect_line "$TMP/dump" "DUMP_HLO_DIR=output/xla_dump_hlo" "DUMP_HLO_DIR exported"
resolve_to dumpdir env_file --config "$E2E/dump_hlo_dir.yaml"
env_file_value "$TMP/dumpdir" XLA_FLAGS | grep >/dev/null -F -- "--xla_dump_to=/scratch/run 7/hlo" ||
	fail "DUMP_HLO_DIR must be used in --xla_dump_to"
resolve_to nodump env_file --env DUMP_HLO_DIR=/x
effective "$TMP/nodump" --xla_dump_to >/dev/null && fail "no --xla_dump_to without DUMP_HLO=1"
resolve_to clidump env_file --env DUMP_HLO=1
[ "$(effective "$TMP/clidump" --xla_dump_to)" = output/xla_dump_hlo ] ||
	fail "--env DUMP_HLO=1 must add --xla_dump_to=output/xla_dump_hlo"

# --- A config that owns XLA_FLAGS ---
resolve_to owns env_file --config "$CFG/owns_xla_flags.yaml"
expect_line "$TMP/owns" "XLA_FLAGS=--xla_gpu_enable_triton_gemm=false --xla_gpu_enable_cublaslt=true" \
	"owned XLA_FLAGS is the config value verbatim"
resolve_to owns.explain explain --config "$CFG/owns_xla_flags.yaml"
grep -qF 'XLA_FLAGS comes from the config env: block; managed defaults skipped' "$TMP/owns.explain" ||
	fail "owned XLA_FLAGS: explain must say 'XLA_FLAGS comes from the config env: block; managed defaults skipped'"
check_to owns.check --config "$CFG/owns_xla_flags.yaml"
[ "$rc" -eq 1 ] || { cat "$TMP/owns.check" >&2; fail "owned XLA_FLAGS: check must warn (exit 1), got $rc"; }
grep -E "owns_xla_flags\.yaml:6:[0-9]+: warning: .*XLA_FLAGS" "$TMP/owns.check" |
	grep >/dev/null -F -- '--xla_gpu_autotune_level=4' ||
	{ cat "$TMP/owns.check" >&2; fail "owned XLA_FLAGS: warning at file:6:col naming the skipped --xla_gpu_autotune_level=4"; }
# an image value does not sneak back in under an owning config
resolve_to owns.img env_file --config "$CFG/owns_xla_flags.yaml" --inherit "$E2E/baked_image.env"
expect_line "$TMP/owns.img" "XLA_FLAGS=--xla_gpu_enable_triton_gemm=false --xla_gpu_enable_cublaslt=true" \
	"the config owns XLA_FLAGS over the image"

# --- env: nested under a module is not applied ---
resolve_to nested env_file --config "$CFG/env_under_module.yaml"
expect_line "$TMP/nested" "XLA_PYTHON_CLIENT_MEM_FRACTION=.97" "env: under a module is not applied"
check_to nested.check --config "$CFG/env_under_module.yaml"
[ "$rc" -eq 1 ] || { cat "$TMP/nested.check" >&2; fail "env: under a module: check must warn (exit 1), got $rc"; }
grep -E "env_under_module\.yaml:10:[0-9]+: warning: " "$TMP/nested.check" | grep >/dev/null "pre_trainer" ||
	{ cat "$TMP/nested.check" >&2; fail "env: under a module: warning at file:10:col naming module pre_trainer"; }

# --- unquoted 0.96: what Primus exports (str() of the float), with a warning ---
resolve_to float env_file --config "$CFG/unquoted_float.yaml"
expect_line "$TMP/float" "XLA_PYTHON_CLIENT_MEM_FRACTION=0.96" "unquoted 0.96: str() of the float"
check_to float.check --config "$CFG/unquoted_float.yaml"
[ "$rc" -eq 1 ] || { cat "$TMP/float.check" >&2; fail "unquoted 0.96: check must warn (exit 1), got $rc"; }
grep -qE "unquoted_float\.yaml:6:[0-9]+: warning: .*XLA_PYTHON_CLIENT_MEM_FRACTION" "$TMP/float.check" ||
	{ cat "$TMP/float.check" >&2; fail "unquoted 0.96: warning at file:6:col"; }
# 0.960, 010 and on: the run gets str() of what PyYAML built
resolve_to f0960 env_file --config "$E2E/unquoted_0960.yaml"
expect_line "$TMP/f0960" "XLA_PYTHON_CLIENT_MEM_FRACTION=0.96" "unquoted 0.960 exported as 0.96"
expect_line "$TMP/f0960" "GPU_MAX_HW_QUEUES=8" "unquoted 010 exported as 8"
expect_line "$TMP/f0960" "NCCL_DEBUG_SUBSYS=True" "unquoted on exported as True"
check_to f0960.check --config "$E2E/unquoted_0960.yaml"
[ "$rc" -eq 1 ] || { cat "$TMP/f0960.check" >&2; fail "unquoted 0.960: check must warn (exit 1), got $rc"; }
grep -E "unquoted_0960\.yaml:6:[0-9]+: warning: " "$TMP/f0960.check" | grep >/dev/null '0\.960.*"0\.96"' ||
	{ cat "$TMP/f0960.check" >&2; fail "unquoted 0.960: warning must name 0.960 and the exported 0.96"; }
grep -E "unquoted_0960\.yaml:7:[0-9]+: warning: " "$TMP/f0960.check" | grep >/dev/null '010.*"8"' ||
	{ cat "$TMP/f0960.check" >&2; fail "unquoted 010: warning must name 010 and the exported 8"; }
grep -E "unquoted_0960\.yaml:8:[0-9]+: warning: " "$TMP/f0960.check" | grep >/dev/null 'on.*"True"' ||
	{ cat "$TMP/f0960.check" >&2; fail "unquoted on: warning must name on and the exported True"; }

# --- ${VAR:default} and ${VAR:-default} are left literal, with a warning ---
resolve_to dflt env_file --config "$CFG/default_syntax.yaml"
expect_line "$TMP/dflt" 'DUMP_HLO_DIR=${OUTPUT_DIR:output}/xla_dump_hlo' '${VAR:default} left literal'
expect_line "$TMP/dflt" 'HF_HOME=${DATA_PATH:-/data}/huggingface' '${VAR:-default} left literal'
check_to dflt.check --config "$CFG/default_syntax.yaml"
[ "$rc" -eq 1 ] || { cat "$TMP/dflt.check" >&2; fail "default syntax: check must warn (exit 1), got $rc"; }
grep -E "default_syntax\.yaml:6:[0-9]+: warning: " "$TMP/dflt.check" | grep >/dev/null -F '${OUTPUT_DIR:output}' ||
	{ cat "$TMP/dflt.check" >&2; fail 'default syntax: warning at file:6:col quoting ${OUTPUT_DIR:output}'; }
grep -qE "default_syntax\.yaml:7:[0-9]+: warning: " "$TMP/dflt.check" ||
	{ cat "$TMP/dflt.check" >&2; fail 'default syntax: warning at file:7:col for ${DATA_PATH:-/data}'; }
# even when the variable is set, the default form stays literal
resolve_to dflt.set env_file --config "$CFG/default_syntax.yaml" --env DATA_PATH=/mnt/data
expect_line "$TMP/dflt.set" 'HF_HOME=${DATA_PATH:-/data}/huggingface' '${VAR:-default} literal even when set'

# --- an image-baked --xla_gpu_autotune_level=0 loses to the managed =4 ---
resolve_to baked env_file --inherit "$E2E/baked_image.env"
expect_line "$TMP/baked" "XLA_FLAGS=--xla_gpu_autotune_level=0 --xla_gpu_enable_pgle=true $MANAGED" \
	"managed flags are appended after the inherited ones"
[ "$(effective "$TMP/baked" --xla_gpu_autotune_level)" = 4 ] ||
	fail "the managed --xla_gpu_autotune_level=4 must beat the baked =0"
[ "$(effective "$TMP/baked" --xla_gpu_enable_pgle)" = true ] ||
	fail "the unrelated baked --xla_gpu_enable_pgle=true must survive"
resolve_to baked.explain explain --inherit "$E2E/baked_image.env"
grep -qF 'XLA_FLAGS appended (managed defaults override inherited)' "$TMP/baked.explain" ||
	fail "baked: explain must say 'XLA_FLAGS appended (managed defaults override inherited)'"
# the same image with the append recipe: the append still wins last
resolve_to baked.append env_file --inherit "$E2E/baked_image.env" --config "$CFG/append_one_flag.yaml"
[ "$(effective "$TMP/baked.append" --xla_gpu_autotune_level)" = 5 ] ||
	fail "XLA_FLAGS_APPEND must beat both the baked and the managed autotune level"
[ "$(effective "$TMP/baked.append" --xla_gpu_enable_pgle)" = true ] ||
	fail "the baked pgle flag must survive the append"
# the same image as an environ file (NUL-separated)
printf 'XLA_FLAGS=--xla_gpu_autotune_level=0 --xla_gpu_enable_pgle=true\0OTHER=x\0' >"$TMP/baked.environ"
resolve_to baked.nul env_file --inherit "$TMP/baked.environ"
expect_line "$TMP/baked.nul" "XLA_FLAGS=--xla_gpu_autotune_level=0 --xla_gpu_enable_pgle=true $MANAGED" \
	"an environ-format --inherit file works the same"

echo "ok: recipes"
