#!/usr/bin/env bash
# The 1,024-node benchmark (issue 23; not run by meson test): for each
# count of nodes (default 64, 256 and 1024), a fresh 3-member etcd cluster
# on 127.0.0.1 and that many sync clients of the real etcd client in one
# process (tests/bench/sync_nodes.c: each registers its node record under
# a lease it keeps alive and watches the run's overrides, as a mount with
# --sync does; no FUSE mount). Measured: all registered, an override put
# on one client to every watcher's callback (p50, p99 over the writes and
# watchers), `primus-envfs verify --nodes N` from exec to exit (p50, p99),
# and the etcd members' CPU time and peak RSS meanwhile; then the growth
# from the smallest count to each larger one, as ratios.
#
#   tests/bench/sync_1024.sh [BUILD_DIR] [NODES...]
#
# Needs etcd-server and etcd-client, about 8 file descriptors per node
# (ulimit -n) and a quiet machine for a few minutes. Figures:
# docs/PERFORMANCE.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
shift || true
SCALES=("$@")
[ ${#SCALES[@]} -gt 0 ] || SCALES=(64 256 1024)
WRITES=${WRITES:-20}
VERIFY_RUNS=${VERIFY_RUNS:-10}
STEADY=${STEADY:-10}
BIN=$build/fs/primus-envfs
NODES_BIN=$build/tests/bench/sync_nodes
export ETCD_DRIVER=$build/tests/etcd_driver
for f in "$BIN" "$NODES_BIN" "$ETCD_DRIVER"; do
	[ -x "$f" ] || {
		echo "no $f: build first (ninja -C $build)" >&2
		exit 2
	}
done
. "$root/tests/sync/lib.sh"

# ETCD_DATA=DIR: the members' data directories under DIR instead of the
# test's directory in /tmp (a tmpfs such as /dev/shm: no disk sync in
# the way), to tell a slow disk's share of a slow start from the CPU's.
ETCD_DATA_DIR=""
if [ -n "${ETCD_DATA:-}" ]; then
	ETCD_DATA_DIR=$(mktemp -d "$ETCD_DATA/envfs-bench.XXXXXX")
	eval "bench_orig_$(declare -f etcd_member_cmd)"
	etcd_member_cmd() {
		local k
		bench_orig_etcd_member_cmd "$@"
		for k in "${!ETCD_CMD[@]}"; do
			if [ "${ETCD_CMD[$k]}" = --data-dir ]; then
				ETCD_CMD[$((k + 1))]="$ETCD_DATA_DIR/etcd.$1"
			fi
		done
	}
fi
test_cleanup() {
	[ -z "$ETCD_DATA_DIR" ] || rm -rf "$ETCD_DATA_DIR"
}

cluster_stop() {
	local i
	for ((i = 0; i < ETCD_N; i++)); do
		etcd_kill "$i"
		rm -rf "$TMP/etcd.$i" ${ETCD_DATA_DIR:+"$ETCD_DATA_DIR/etcd.$i"}
	done
}

echo "sync_1024: $(nproc) CPUs, etcd data in ${ETCD_DATA_DIR:-$TMP}, load at start:$(uptime | sed 's/.*load average:/ /')"
results=()
for n in "${SCALES[@]}"; do
	etcd_cluster_start 3
	pids="${ETCD_PID[0]},${ETCD_PID[1]},${ETCD_PID[2]}"
	"$NODES_BIN" --endpoints "$(etcd_endpoints)" --run "bench$n-$$" --nodes "$n" \
		--verify "$BIN" --etcd-pids "$pids" --writes "$WRITES" \
		--verify-runs "$VERIFY_RUNS" --steady "$STEADY" --ramp "${RAMP_MS:-0}" --probe-ms "${PROBE_MS:-0}" --nice "${NODE_NICE:-0}" --specs "$root/specs" \
		>"$TMP/out.$n" 2>"$TMP/err.$n" || {
		cat "$TMP/out.$n" >&2
		if [ -n "${KEEP_LOGS:-}" ]; then
			mkdir -p "$KEEP_LOGS"
			cp "$TMP"/etcd.*.log "$KEEP_LOGS"/
		fi
		fail "sync_nodes --nodes $n: $(cat "$TMP/err.$n")"
	}
	grep -v '^result ' "$TMP/out.$n"
	results+=("$(grep '^result ' "$TMP/out.$n")")
	cluster_stop
done
echo "load at end:$(uptime | sed 's/.*load average:/ /')"

# The table, and each figure's growth from the first count: a cost that
# grows linearly with the nodes has the ratio of the counts.
printf '%s\n' "${results[@]}" | awk '
{
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[NR, kv[1]] = kv[2] }
	rows = NR
}
END {
	split("register_ms node_register_p99_ms override_p50_ms override_p99_ms last_p99_ms verify_p50_ms " \
	      "verify_p99_ms etcd_cpu_register_ms etcd_cpu_steady_pct etcd_cpu_write_ms " \
	      "etcd_cpu_verify_ms etcd_rss_mib", keys, " ")
	printf "\n%-22s", "nodes"
	for (r = 1; r <= rows; r++) printf " %10s", v[r, "nodes"]
	for (r = 2; r <= rows; r++) printf "   x%s/%s", v[r, "nodes"], v[1, "nodes"]
	printf "\n"
	for (k = 1; k in keys; k++) {
		key = keys[k]
		printf "%-22s", key
		for (r = 1; r <= rows; r++) printf " %10s", v[r, key]
		for (r = 2; r <= rows; r++)
			printf "   %*.2f", length("x" v[r, "nodes"] "/" v[1, "nodes"]),
			       (v[1, key] > 0 ? v[r, key] / v[1, key] : 0)
		printf "\n"
	}
	printf "%-22s", "nodes ratio"
	for (r = 1; r <= rows; r++) printf " %10s", ""
	for (r = 2; r <= rows; r++)
		printf "   %*.2f", length("x" v[r, "nodes"] "/" v[1, "nodes"]), v[r, "nodes"] / v[1, "nodes"]
	printf "\n"
	for (r = 1; r <= rows; r++)
		if (v[r, "leases_lost"] + v[r, "keepalive_errors"] + v[r, "watch_restarts"] > 0)
			printf "nodes %s: %s leases lost, %s keepalives failed, %s watch restarts\n",
			       v[r, "nodes"], v[r, "leases_lost"], v[r, "keepalive_errors"],
			       v[r, "watch_restarts"]
}'
