#!/usr/bin/env bash
# Fuzzes every libFuzzer harness for SECONDS seconds each, from a copy of its
# seed corpus, and prints the executions each reached. Exits non-zero on any
# finding (crash, leak, sanitizer report, timeout, out-of-memory).
#
#   tests/fuzz/run.sh 60                 # CI smoke run
#   FUZZ_ONLY=spec tests/fuzz/run.sh 3600
#
# Env: FUZZ_BUILD (build dir, default <repo>/build-fuzz, configured with clang
# if missing), FUZZ_ONLY (space-separated harness names), FUZZ_ARTIFACTS
# (where findings are kept, default a temp dir that is kept on failure),
# FUZZ_JOBS (harnesses run at once, default 1).
set -euo pipefail

SECONDS_EACH=${1:?usage: run.sh SECONDS}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${FUZZ_BUILD:-$REPO/build-fuzz}
HARNESSES=${FUZZ_ONLY:-config spec inherit expr state yaml json}
JOBS=${FUZZ_JOBS:-1}

if [ ! -f "$BUILD/build.ninja" ]; then
	CC=clang meson setup "$BUILD" "$REPO" -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
ninja -C "$BUILD" $(for h in $HARNESSES; do echo "tests/fuzz/fuzz_$h"; done) >/dev/null

WORK=$(mktemp -d "${TMPDIR:-/tmp}/envfs-fuzz.XXXXXX")
ART=${FUZZ_ARTIFACTS:-$WORK/artifacts}
mkdir -p "$ART"

# Seed directories of each harness (keep in step with tests/fuzz/meson.build).
seeds() {
	case $1 in
	config) echo tests/fixtures/config tests/fixtures/e2e tests/fixtures/mount \
		tests/fixtures/resolve tests/hostile/config ;;
	spec) echo specs tests/fixtures/resolve/specs tests/fixtures/resolve/cycle/specs \
		tests/fixtures/yaml tests/fixtures/validate tests/hostile/spec ;;
	inherit) echo tests/fixtures/inherit tests/fixtures/docker tests/fixtures/mount \
		tests/hostile/inherit ;;
	expr) echo tests/fuzz/seeds/expr ;;
	state) echo tests/fuzz/seeds/state ;;
	yaml) echo specs tests/fixtures/yaml tests/fixtures/config tests/fixtures/e2e \
		tests/fixtures/resolve tests/fixtures/validate tests/fuzz/seeds/state \
		tests/fuzz/seeds/yaml tests/hostile/config tests/hostile/spec ;;
	esac
}

fuzz_one() {
	h=$1
	corpus=$WORK/corpus-$h
	mkdir -p "$corpus"
	for d in $(seeds "$h"); do
		[ -d "$REPO/$d" ] || continue
		# Regular files only, flattened; the YAML names collide across dirs.
		find "$REPO/$d" -type f -size -1024k -print0 |
			while IFS= read -r -d '' f; do
				cp "$f" "$corpus/$(echo "$f" | sha1sum | cut -c1-16)"
			done
	done
	set +e
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		"$BUILD/tests/fuzz/fuzz_$h" -max_total_time="$SECONDS_EACH" \
		-print_final_stats=1 -dict="$HERE/yaml.dict" -timeout=10 \
		-max_len="${FUZZ_MAX_LEN:-16384}" -artifact_prefix="$ART/$h-" \
		"$corpus" >"$WORK/$h.log" 2>&1
	echo $? >"$WORK/$h.rc"
	set -e
}

pids=()
for h in $HARNESSES; do
	fuzz_one "$h" &
	pids+=($!)
	if [ "${#pids[@]}" -ge "$JOBS" ]; then
		wait "${pids[0]}"
		pids=("${pids[@]:1}")
	fi
done
for p in "${pids[@]}"; do
	wait "$p"
done

failed=0
for h in $HARNESSES; do
	rc=$(cat "$WORK/$h.rc")
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$h.log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+' "$WORK/$h.log" | tail -1 || true)
	findings=$(find "$ART" -name "$h-*" -type f | wc -l)
	printf '%-8s %12s executions  %-10s rc=%s  findings=%s\n' "$h" "${execs:-?}" \
		"${cov:-}" "$rc" "$findings"
	if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ] || [ -z "$execs" ]; then
		failed=1
		echo "--- $h: tail of $WORK/$h.log" >&2
		tail -40 "$WORK/$h.log" >&2
	fi
done
if [ "$failed" -ne 0 ]; then
	echo "fuzz: findings kept in $ART (logs in $WORK)" >&2
	exit 1
fi
rm -rf "$WORK"
echo "fuzz: no findings"
