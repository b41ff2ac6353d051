#!/usr/bin/env bash
# The verify scenario of the benchmark (issue 16, acceptance 6; not run by
# meson test): `primus-envfs verify` over 256 registered node records on a
# 3-member etcd cluster on loopback, equal and with one odd node.
#
#   tests/bench/verify_bench.sh BUILD_DIR [NODES] [RUNS]
#
# The records are what 256 mounts with --sync put (verify_records builds
# them with node_record_build over the shipped specs' 17 directories);
# each verify run is timed from exec to exit, RUNS times (default 20),
# and printed as p50/p99 with the ratio to `etcdctl get --prefix` of the
# same summaries (the bare read every verify makes: what it adds over
# etcd's own client).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:?usage: verify_bench.sh BUILD_DIR [NODES] [RUNS]}" && pwd)
NODES=${2:-256}
RUNS=${3:-20}
export ETCD_DRIVER=$BUILD/tests/etcd_driver
BIN=$BUILD/fs/primus-envfs
RECORDS=$BUILD/tests/bench/verify_records
. "$ROOT/tests/sync/lib.sh"

etcd_cluster_start 3
EP=$(etcd_endpoints)
RUN=bench-$$

# time_runs WANT_RC CMD...: RUNS timings of CMD (ms, one per line) into
# $TMP/times; CMD must exit WANT_RC every time.
time_runs() {
	local want=$1 i t0 t1 rc
	shift
	: >"$TMP/times"
	for ((i = 0; i < RUNS; i++)); do
		rc=0
		t0=${EPOCHREALTIME/./}
		"$@" >"$TMP/run.out" 2>"$TMP/run.err" || rc=$?
		t1=${EPOCHREALTIME/./}
		[ "$rc" = "$want" ] || fail "$*: exit $rc, want $want: $(head -3 "$TMP/run.out" "$TMP/run.err")"
		echo "$(((t1 - t0) / 1000)).$(((t1 - t0) % 1000 / 100))" >>"$TMP/times"
	done
}

# pctl Q: the Q-th percentile of $TMP/times (nearest rank).
pctl() {
	sort -n "$TMP/times" | awk -v q="$1" '{ v[NR] = $1 } END {
		i = int(q * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; print v[i] }'
}

report() {
	local name=$1 p50 p99
	p50=$(pctl 0.5)
	p99=$(pctl 0.99)
	printf '%-44s p50 %7s ms   p99 %7s ms' "$name" "$p50" "$p99"
	if [ -n "${BASE_P50:-}" ]; then
		awk -v a="$p50" -v b="$BASE_P50" 'BEGIN { printf "   %.2fx etcdctl get\n", a / b }'
	else
		echo
	fi
	LAST_P50=$p50
}

"$RECORDS" --endpoints "$EP" --run "$RUN" --nodes "$NODES" --specs "$ROOT/specs"
VF=("$BIN" verify --sync "etcd://$EP" --run "$RUN" --nodes "$NODES")

time_runs 0 etcdctl --endpoints="$(etcd_urls)" get --prefix "/primus-envfs/runs/$RUN/nodes/"
report "etcdctl get --prefix (the $NODES summaries)"
BASE_P50=$LAST_P50
time_runs 0 "${VF[@]}"
report "verify, $NODES equal nodes"
head -1 "$TMP/run.out"

"$RECORDS" --endpoints "$EP" --run "$RUN" --nodes "$NODES" --odd 17 --specs "$ROOT/specs" \
	>/dev/null
time_runs 1 "${VF[@]}"
report "verify, $NODES nodes, one odd (details read)"
head -3 "$TMP/run.out" | cut -c1-120
time_runs 2 "$BIN" verify --sync "etcd://$EP" --run "$RUN" --nodes $((NODES + 1))
report "verify, --nodes $((NODES + 1)) (one missing)"
