#!/usr/bin/env bash
# Benchmark (not run by meson test): what the name checks cost `check`.
# `check --config CFG` is timed from exec to exit, RUNS times each in
# alternation (ABAB, so drift hits both), on a clean config with many
# names to look up (every env: entry of Primus's maxdiffusion examples,
# tests/fixtures/corpus/primus_env.tsv):
#   A  this build, shipped specs (the name lists loaded);
#   B  this build, the same specs without names/ (no name lists: the
#      names, XLA-flag and view checks have nothing to look up);
#   C  another build, e.g. of the commit before the checks, same specs
#      without names/ (BASE_BIN, optional).
# The same on a config of 200 names nothing reads (every one compared
# with every known name) checked in every directory: the worst case.
# Prints p50/p90 and the ratios A/B and A/C; the target is under 2x.
#
#   tests/bench/check_bench.sh BUILD_DIR [RUNS] [BASE_BIN]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: check_bench.sh BUILD_DIR [RUNS] [BASE_BIN]}" && pwd)
RUNS=${2:-60}
BASE_BIN=${3:-}
BIN=$BUILD/fs/primus-envfs
TMP=$(mktemp -d "${TMPDIR:-/tmp}/check-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

cp -R "$ROOT/specs" "$TMP/specs"
cp -R "$ROOT/specs" "$TMP/specs-nonames"
rm -rf "$TMP/specs-nonames/names"
python3 - "$ROOT/tests/fixtures/corpus/primus_env.tsv" "$TMP/clean.yaml" <<'PY'
import json, sys
seen = {}
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    b, name, value, _ = line.rstrip("\n").split("\t")
    if b == "maxdiffusion":
        seen[name] = value
with open(sys.argv[2], "w") as f:
    f.write("env:\n")
    for k, v in seen.items():
        f.write(f"  {k}: {json.dumps(v)}\n")
    f.write("modules:\n  m:\n    framework: maxdiffusion\n")
PY

{
	echo "env:"
	for ((i = 0; i < 200; i++)); do printf '  MY_APP_SETTING_NUMBER_%03d: "1"\n' "$i"; done
} >"$TMP/unknown.yaml"

declare -A T
# one LABEL BIN SPECS: one timed run (microseconds) appended to T[LABEL].
one() {
	local t0 t1 rc=0
	t0=${EPOCHREALTIME/./}
	env -i PATH="$PATH" "$2" check --specs "$3" --config "$CFG" >/dev/null 2>&1 || rc=$?
	t1=${EPOCHREALTIME/./}
	[ "$rc" -le 1 ] || { echo "check-bench: $2 exited $rc" >&2; exit 2; }
	T[$1]+="$((t1 - t0)) "
}

# pctl LABEL Q: the Q-th percentile of LABEL's runs, in ms.
pctl() {
	tr ' ' '\n' <<<"${T[$1]}" | grep . | sort -n | awk -v q="$2" '{ v[NR] = $1 } END {
		i = int(q * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; printf "%.2f", v[i] / 1000 }'
}

# scenario CONFIG TITLE: the three timings of check --config CONFIG.
scenario() {
	CFG=$1
	T=()
	for ((i = 0; i < RUNS + 2; i++)); do
		[ "$i" -lt 2 ] && { one warm "$BIN" "$TMP/specs"; continue; }
		one A "$BIN" "$TMP/specs"
		one B "$BIN" "$TMP/specs-nonames"
		[ -z "$BASE_BIN" ] || one C "$BASE_BIN" "$TMP/specs-nonames"
	done
	printf '%s, %d runs each\n' "$2" "$RUNS"
	for l in A B C; do
		[ -n "${T[$l]:-}" ] || continue
		case $l in
		A) what="name lists loaded" ;;
		B) what="this build, no name lists" ;;
		C) what="BASE_BIN, no name lists" ;;
		esac
		printf '  %s %-28s p50 %7s ms  p90 %7s ms\n' "$l" "$what" "$(pctl "$l" 0.5)" \
			"$(pctl "$l" 0.9)"
	done
	awk -v a="$(pctl A 0.5)" -v b="$(pctl B 0.5)" 'BEGIN { printf "  ratio A/B (p50): %.2fx\n", a / b }'
	[ -z "$BASE_BIN" ] ||
		awk -v a="$(pctl A 0.5)" -v c="$(pctl C 0.5)" \
			'BEGIN { printf "  ratio A/C (p50): %.2fx (target: under 2x)\n", a / c }'
}

scenario "$TMP/clean.yaml" \
	"check --config ($(grep -c '^  ' "$TMP/clean.yaml") names of Primus's maxdiffusion examples)"
scenario "$TMP/unknown.yaml" "check --config (200 names nothing reads, every directory)"
