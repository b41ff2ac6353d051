# End-to-end: the hostile-input corpus (issue 8, part 2). Every entry of
# tests/hostile/expect.tsv is run through `primus-envfs check` with the input
# in place; it must print the expected diagnostic, exit with the expected
# code, not crash, use at most 250 ms of CPU time (ENVFS_HOSTILE_MAX_CPU_MS:
# a blow-up bound: superlinear work on a 1 MiB input costs seconds; the
# largest input, a 1 MiB spec, takes 80 to 120 ms through libyaml and the
# launch's two simulations, and the test prints how many inputs took over
# 100 ms, issue 8's figure), finish within 1 s of wall time
# (ENVFS_HOSTILE_MAX_MS: a hang bound) and stay within 64 MiB
# (ENVFS_HOSTILE_MAX_KB). The big inputs come from tests/hostile/gen.sh.
set -eu
. "$(dirname "$0")/lib.sh"

HOSTILE=$(cd "$(dirname "$0")/../hostile" && pwd)
GEN=$TMP/gen
bash "$HOSTILE/gen.sh" "$GEN"

# ASan reserves terabytes of address space, so the address-space limit only
# applies to a plain build, which is where the 1 s / 64 MiB promise is kept.
# A sanitizer build runs 3-5 times slower with shadow memory and redzones on
# every allocation: it gets 4 times the bounds and a small quarantine, and
# is there to prove the corpus crash-free and sanitizer-clean.
asan=${ENVFS_ASAN:-}
if [ -z "$asan" ]; then
	if grep -qa -e __asan_init -e __ubsan_handle "$ENVFS_BIN"; then asan=1; else asan=0; fi
fi
scale=1
if [ "$asan" = 1 ]; then
	scale=4
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16
	export ASAN_OPTIONS
fi
MAX_MS=${ENVFS_HOSTILE_MAX_MS:-$((1000 * scale))}
MAX_CPU_MS=${ENVFS_HOSTILE_MAX_CPU_MS:-$((250 * scale))}
MAX_KB=${ENVFS_HOSTILE_MAX_KB:-$((65536 * scale))}
TIME=/usr/bin/time
"$TIME" -f %M -o /dev/null true 2>/dev/null ||
	fail "GNU time (/usr/bin/time, Debian package time) is needed to measure CPU time and RSS"

# limited CMD...: CMD under the address-space limit (plain builds only).
limited() {
	if [ "$asan" = 1 ]; then
		"$@"
	else
		( ulimit -v "$MAX_KB" && exec "$@" )
	fi
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# run_check ARGS...: runs `check ARGS` on the input under GNU time; sets
# rc, ms (wall), cpu (user + system, ms) and kb (max RSS), and leaves the
# output in $TMP/err.
run_check() {
	local t0 user sys
	t0=$(now_ms)
	# env -i: bare names in inherit files must not find this environment.
	set +e
	limited "$TIME" -f '%M %U %S' -o "$TMP/rusage" env -i PATH="$PATH" \
		${ASAN_OPTIONS+ASAN_OPTIONS="$ASAN_OPTIONS"} \
		${UBSAN_OPTIONS+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		"$ENVFS_BIN" check "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	set -e
	ms=$(($(now_ms) - t0))
	cat "$TMP/out" >>"$TMP/err"
	# GNU time reports a signal death on its first line; the figures are
	# on the last: max RSS in KiB, user and system seconds (1/100 s).
	read -r kb user sys < <(tail -1 "$TMP/rusage")
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%d", (u + s) * 1000 + 0.5 }')
	case $kb in ''|*[!0-9]*) fail "GNU time gave no RSS for $kind/$file: $(cat "$TMP/rusage")" ;; esac
}

n=0 failures=0 max_ms=0 max_ms_at= max_cpu=0 max_cpu_at= max_kb=0 max_kb_at= over_100=0
fail_one() {
	echo "FAIL: $kind/$file: $*" >&2
	sed 's/^/    | /' "$TMP/err" | cut -c1-300 | head -20 >&2
	failures=$((failures + 1))
}

while IFS=$'\t' read -r kind file expect want_rc; do
	case $kind in ''|'#'*) continue ;; esac
	if [ -f "$HOSTILE/$kind/$file" ]; then
		input=$HOSTILE/$kind/$file
	elif [ -f "$GEN/$kind/$file" ]; then
		input=$GEN/$kind/$file
	else
		echo "FAIL: $kind/$file: listed in expect.tsv but neither in the corpus nor generated" >&2
		failures=$((failures + 1))
		continue
	fi
	case $kind in
	# One directory: the diagnostic comes from loading, and resolving every
	# shipped directory would only multiply the time by 17.
	config) args=(--config "$input" -b maxtext -a gfx950) ;;
	inherit) args=(--inherit "$input" -b maxtext -a gfx950) ;;
	spec)
		# NAME--what.yaml replaces the shipped NAME.yaml; others are added.
		specs=$TMP/specs-$n/specs
		mkdir -p "$specs"
		cp "$ENVFS_SPECS"/*.yaml "$specs/"
		case $file in
		*--*) cp "$input" "$specs/${file%%--*}.yaml" ;;
		*) cp "$input" "$specs/$file" ;;
		esac
		args=(--specs "$specs")
		;;
	*)
		echo "FAIL: expect.tsv: unknown kind '$kind'" >&2
		failures=$((failures + 1))
		continue
		;;
	esac
	n=$((n + 1))
	run_check "${args[@]}"
	# CPU and wall time only grow with what else runs (caches, a sibling
	# hyperthread, the tests meson runs beside this one): an input over
	# either bound gets up to four more tries and keeps its best of each,
	# as a benchmark would (the largest input, ref_chain_24k, takes about
	# 80 ms of CPU alone and was seen at 120 ms three times running on a
	# loaded machine).
	tries=1
	while { [ "$cpu" -gt "$MAX_CPU_MS" ] || [ "$ms" -gt "$MAX_MS" ]; } && [ "$tries" -lt 5 ]; do
		best_cpu=$cpu best_ms=$ms
		run_check "${args[@]}"
		tries=$((tries + 1))
		if [ "$best_cpu" -lt "$cpu" ]; then cpu=$best_cpu; fi
		if [ "$best_ms" -lt "$ms" ]; then ms=$best_ms; fi
	done
	[ "$cpu" -le 100 ] || over_100=$((over_100 + 1))
	if [ "$ms" -gt "$max_ms" ]; then max_ms=$ms max_ms_at=$kind/$file; fi
	if [ "$cpu" -gt "$max_cpu" ]; then max_cpu=$cpu max_cpu_at=$kind/$file; fi
	if [ "$kb" -gt "$max_kb" ]; then max_kb=$kb max_kb_at=$kind/$file; fi

	printf '%-8s %-40s rc=%s %5s ms %5s ms CPU %7s KiB\n' "$kind" "$file" "$rc" "$ms" "$cpu" "$kb"
	if [ "$rc" -ge 128 ]; then
		fail_one "killed by a signal (exit $rc)"
	elif grep -q -e 'AddressSanitizer' -e 'runtime error:' -e 'LeakSanitizer' "$TMP/err"; then
		fail_one "sanitizer report"
	elif ! grep -qF -- "$expect" "$TMP/err"; then
		fail_one "expected '$expect' in the output"
	elif [ "$rc" != "$want_rc" ]; then
		fail_one "check must exit $want_rc, got $rc"
	elif [ "$cpu" -gt "$MAX_CPU_MS" ]; then
		fail_one "used $cpu ms of CPU (limit $MAX_CPU_MS ms)"
	elif [ "$ms" -gt "$MAX_MS" ]; then
		fail_one "took $ms ms (limit $MAX_MS ms)"
	elif [ "$kb" -gt "$MAX_KB" ]; then
		fail_one "max RSS $kb KiB (limit $MAX_KB KiB)"
	fi
	rm -rf "$TMP/specs-$n"
done <"$HOSTILE/expect.tsv"

echo "hostile: $n inputs, $failures failed; most CPU $max_cpu ms ($max_cpu_at), $over_100 over" \
	"100 ms of CPU; slowest $max_ms ms ($max_ms_at);" \
	"max RSS ${max_kb} KiB ($max_kb_at); asan=$asan"
[ "$n" -ge 50 ] || fail "the corpus has $n inputs, fewer than 50"
[ "$failures" -eq 0 ] || fail "$failures hostile input(s) misbehaved"
