#!/bin/bash
# What history and diff cost at 10,000 variables (not run by meson test;
# needs root, /dev/fuse and a quiet machine):
#   tests/bench/history_bench.sh BUILD_DIR [RUNS]
# 1. The daemon's peak RSS (VmHWM) with history=0 and with history=64,
#    after listing, 64 writes through the mount (each a generation of its
#    own) and a spec edit that changes every value (one generation of
#    10,000 changes, the largest there is): a generation adds what it
#    changed and nothing more.
# 2. diff of two 10,000-variable environments (two inputs, every value
#    different), p50 of RUNS, against resolve of one: the ratio is printed.
# 3. diff of the same two environments saved as run records (record -o),
#    already resolved: p50 of RUNS, its ratio to resolve, and the diff's
#    peak RSS (GNU time's maximum resident set) beside the records' size.
set -eu
build=${1:?usage: history_bench.sh BUILD_DIR [RUNS]}
runs=${2:-21}
bin=$(cd "$build" && pwd)/fs/primus-envfs
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/envfs-history-bench.XXXXXX)
mnt="$tmp/mnt"
cleanup() {
	mountpoint -q "$mnt" 2>/dev/null && fusermount3 -u "$mnt"
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/specs" "$mnt"
cp "$src"/specs/base.yaml "$src"/specs/catalog.yaml "$src"/specs/catalog.docs.yaml "$tmp/specs/"
cp -r "$src/specs/names" "$tmp/specs/"
python3 - "$tmp" <<'PY'
import sys
t = sys.argv[1]
with open(t + "/specs/bench.yaml", "w") as f:
    f.write("backend: bench\nuses_runner: false\narches: [x86]\nvariables:\n")
    for i in range(1, 10001):
        f.write('  - name: BENCH_VAR_%05d\n    value: "v%05d-%s"\n' % (i, i, "x" * 40))
for side in ("a", "b"):
    with open("%s/%s.yaml" % (t, side), "w") as f:
        f.write("env:\n")
        for i in range(1, 10001):
            f.write('  BENCH_VAR_%05d: "%s%05d-%s"\n' % (i, side, i, "y" * 40))
PY

# ms since the epoch
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

rss_with() { # rss_with HISTORY FULL: VmHWM in KiB after 64 writes (and, FULL=1, a full reload)
	sed -i 's/value: "w/value: "v/' "$tmp/specs/bench.yaml"
	"$bin" --specs "$tmp/specs" -o "history=$1" -f "$mnt" 2>/dev/null &
	local pid=$! i
	for i in $(seq 1 100); do mountpoint -q "$mnt" && break; sleep 0.05; done
	local dir="$mnt/env/bench/x86"
	ls -l "$dir" >/dev/null
	for i in $(seq 1 64); do echo "w$i" >"$dir/BENCH_VAR_00001"; done
	# Every value of the spec changed: one generation of 10,000 changes.
	[ "$2" = 1 ] && sed 's/value: "v/value: "w/' "$tmp/specs/bench.yaml" >"$tmp/bench.yaml.new"
	[ "$2" = 1 ] && mv "$tmp/bench.yaml.new" "$tmp/specs/bench.yaml"
	for i in $(seq 1 400); do
		[ "$2" = 1 ] || break
		case "$(cat "$dir/BENCH_VAR_00002")" in w*) break ;; esac
		sleep 0.05
	done
	cat "$mnt/history" >/dev/null
	local hwm
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
	fusermount3 -u "$mnt"
	wait "$pid" || true
	echo "$hwm"
}
mib() { echo "$1 / 1024" | bc -l; }
w0=$(rss_with 0 0)
w64=$(rss_with 64 0)
f0=$(rss_with 0 1)
f64=$(rss_with 64 1)
printf '%-58s %6.1f MiB\n' "1. peak RSS, 10,000 vars, 64 writes, history=0" "$(mib "$w0")"
printf '%-58s %6.1f MiB (+%.2f MiB)\n' "   the same, history=64 (64 generations of one write)" \
	"$(mib "$w64")" "$(mib $((w64 - w0)))"
printf '%-58s %6.1f MiB\n' "   64 writes and a 10,000-change reload, history=0" "$(mib "$f0")"
printf '%-58s %6.1f MiB (+%.2f MiB)\n' "   the same, history=64 (one generation of 10,000 changes)" \
	"$(mib "$f64")" "$(mib $((f64 - f0)))"

p50() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
time_runs() { # time_runs CMD...: p50 wall ms of RUNS runs
	local i t0
	for i in $(seq 1 "$runs"); do
		t0=$EPOCHREALTIME
		"$@" >/dev/null 2>&1 || true
		echo "($EPOCHREALTIME - $t0) * 1000" | bc -l
	done | p50
}
r=$(time_runs "$bin" resolve --specs "$tmp/specs" --config "$tmp/a.yaml" -b bench -a x86)
d=$(time_runs "$bin" diff --specs "$tmp/specs" -b bench -a x86 --config "$tmp/a.yaml" -- --config "$tmp/b.yaml")
n=$("$bin" diff --specs "$tmp/specs" -b bench -a x86 --config "$tmp/a.yaml" -- --config "$tmp/b.yaml" | grep -c '^changed ' || true)
printf '%-52s %7.1f ms\n' "2. resolve, 10,000 vars (p50 of $runs)" "$r"
printf '%-52s %7.1f ms (%.2fx resolve; %s variables differ)\n' "   diff of two 10,000-var inputs (p50 of $runs)" "$d" \
	"$(echo "$d / $r" | bc -l)" "$n"

"$bin" record --specs "$tmp/specs" --config "$tmp/a.yaml" -b bench -a x86 -o "$tmp/a.json"
"$bin" record --specs "$tmp/specs" --config "$tmp/b.yaml" -b bench -a x86 -o "$tmp/b.json"
rd=$(time_runs "$bin" diff "record:$tmp/a.json" "record:$tmp/b.json")
rn=$("$bin" diff "record:$tmp/a.json" "record:$tmp/b.json" | grep -c '^changed ' || true)
/usr/bin/time -f '%M' -o "$tmp/rss" "$bin" diff "record:$tmp/a.json" "record:$tmp/b.json" \
	>/dev/null 2>&1 || true
rss=$(tail -1 "$tmp/rss")
size=$(( $(stat -c %s "$tmp/a.json") + $(stat -c %s "$tmp/b.json") ))
printf '%-52s %7.1f ms (%.2fx resolve; %s variables differ)\n' "3. diff of two 10,000-var run records (p50 of $runs)" "$rd" \
	"$(echo "$rd / $r" | bc -l)" "$rn"
printf '%-52s %7.1f MiB (the two records: %.1f MiB)\n' "   its peak RSS" "$(mib "$rss")" "$(mib $((size / 1024)))"
