# End-to-end: the false-positive corpus. Every env: entry of Primus's
# example configs and every name its runner env files export
# (tests/fixtures/corpus/primus_env.tsv, generated from AMD-AGI/Primus at
# the commit its header names) is checked in a config of its own backend: none may raise a names or XLA-flag diagnostic
# except the ones listed here, which are true findings.
set -eu
. "$(dirname "$0")/lib.sh"

TSV="$ENVFS_FIXTURES/corpus/primus_env.tsv"
# jax removed its jax_spmd_mode option ("Remove unused jax_spmd_mode
# flag"): nothing in jax 0.10 reads JAX_SPMD_MODE.
ALLOWED='nothing is known to read JAX_SPMD_MODE'

for b in $(grep -v '^#' "$TSV" | cut -f1 | sort -u); do
	cfg="$TMP/$b.yaml"
	python3 - "$TSV" "$b" "$cfg" <<'PY'
import json, sys
tsv, backend, out = sys.argv[1:]
seen = {}
for line in open(tsv):
    if line.startswith("#"):
        continue
    b, name, value, _src = line.rstrip("\n").split("\t")
    if b == backend:
        seen[name] = value.replace("\\n", "\n")
with open(out, "w") as f:
    f.write("env:\n")
    for k, v in seen.items():
        # JSON strings are YAML double-quoted scalars; '$' is doubled so
        # the config's expansion gives the literal back.
        f.write(f"  {k}: {json.dumps(v.replace('$', '$$'))}\n")
    f.write(f"modules:\n  m:\n    framework: {backend}\n")
PY
	run "$TMP/$b.out" "$TMP/$b.err" clean "$ENVFS_BIN" check --config "$cfg"
	assert_no_crash "corpus $b" "$TMP/$b.err"
	# Diagnostics of the older rules may stand (the runner's own values
	# set in a config's env: are warnings of their own); the config must
	# have loaded and been checked.
	grep -qE '^[0-9]+ error\(s\), [0-9]+ warning\(s\), [0-9]+ info$' "$TMP/$b.err" &&
		! grep -q "$b.yaml:[0-9:]* error: .*\(syntax\|env:\)" "$TMP/$b.err" ||
		{ cat "$TMP/$b.err" >&2; fail "corpus $b: the config was not checked (exit $rc)"; }
	if grep -E 'nothing reads this name|nothing is known to read|reads this name, and a|XLA defines no flag|is not of the form --xla_|is a boolean flag|is left out of the|the --env value|--env gives' \
		"$TMP/$b.err" | grep -vF "$ALLOWED" >"$TMP/$b.new"; then
		cat "$TMP/$b.new" >&2
		fail "corpus $b: the diagnostics above are new on Primus's own configs"
	fi
done
echo "check_corpus: ok"
