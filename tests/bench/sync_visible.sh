#!/usr/bin/env bash
# Benchmark (issue 16, acceptance 6; not run by meson test): 16 mounts
# with --sync on a 3-member etcd cluster on 127.0.0.1, every mount its own
# node; one write after another, each on the next node, timed from the
# write until every mount reads the new value (write-to-visible-
# everywhere), p50 and p99. The floor beside it: etcd_driver's bench, a
# put and the watch event on another member, with the same client.
#
#   tests/bench/sync_visible.sh [BUILD_DIR] [WRITES] [MOUNTS]
#
# Needs root, /dev/fuse, etcd-server and etcd-client, python3; a quiet
# machine. Figures: docs/PERFORMANCE.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
WRITES=${2:-200}
MOUNTS=${3:-16}
export ENVFS_BIN="$build/fs/primus-envfs"
export ETCD_DRIVER="$build/tests/etcd_driver"
export ENVFS_FIXTURES="$here/../fixtures"
[ -x "$ENVFS_BIN" ] && [ -x "$ETCD_DRIVER" ] || {
	echo "no $ENVFS_BIN or $ETCD_DRIVER: build first (ninja -C $build)" >&2
	exit 2
}
. "$here/../sync/mountlib.sh"

etcd_cluster_start 3
floor=$(drv bench "$WRITES") || fail "etcd_driver bench: $floor"
# The other floor: close() on one mount without --sync (the same commit:
# resolve, --state with its fsync, invalidations).
plain="$TMP/plain"
mkdir -p "$plain"
"$ENVFS_BIN" --state "$TMP/state.plain" -f "$plain" 2>"$TMP/plain.err" &
ppid=$!
for _ in $(seq 1 300); do mountpoint -q "$plain" && break; sleep 0.05; done
mountpoint -q "$plain" || fail "the plain mount did not come up: $(cat "$TMP/plain.err")"
plain_close=$("$PYTHON" - "$plain/env/$DIR_BA/NVTE_DEBUG_LEVEL" "$WRITES" <<'PY'
import sys, time
path, n = sys.argv[1], int(sys.argv[2])
v = []
for k in range(n):
    t0 = time.monotonic()
    with open(path, "w") as f:
        f.write(f"{k}\n")
    v.append((time.monotonic() - t0) * 1000)
v.sort()
print(f"{v[len(v) // 2]:.1f} {v[min(len(v) - 1, int(.99 * len(v)))]:.1f}")
PY
)
fusermount3 -u "$plain"
wait "$ppid" || true
for ((i = 0; i < MOUNTS; i++)); do
	NODE_ENDPOINTS=$(etcd_endpoints $((i % 3)) $(((i + 1) % 3)) $(((i + 2) % 3))) node_mount "$i"
done
"$PYTHON" - "$TMP" "$DIR_BA" "$WRITES" "$MOUNTS" "$floor" "$plain_close" <<'PY'
import sys, time
tmp, ba, writes, mounts, floor = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
plain = sys.argv[6].split()
paths = [f"{tmp}/mnt.{i}/env/{ba}/NVTE_DEBUG_LEVEL" for i in range(mounts)]
lat, close = [], []
for k in range(writes):
    want = str(1000 + k)
    t0 = time.monotonic()
    with open(paths[k % mounts], "w") as f:
        f.write(want + "\n")
    close.append((time.monotonic() - t0) * 1000)
    pending = set(range(mounts))
    while pending:
        for i in list(pending):
            with open(paths[i]) as f:
                if f.read().rstrip("\n") == want:
                    pending.discard(i)
        if time.monotonic() - t0 > 30:
            sys.exit(f"write {k}: mounts {sorted(pending)} never saw {want}")
    lat.append((time.monotonic() - t0) * 1000)
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]
t = floor.split()
f = {t[i]: t[i + 1] for i in range(len(t) - 1) if t[i].endswith("_ms")}
fl = float(f.get("visible_p50_ms", "nan"))
print(f"sync write-to-visible, {mounts} mounts, 3 members, {writes} writes:")
print(f"  close() p50 {pct(close, .5):.1f} ms p99 {pct(close, .99):.1f} ms"
      f" (one mount without --sync: p50 {plain[0]} ms p99 {plain[1]} ms)")
print(f"  visible everywhere p50 {pct(lat, .5):.1f} ms p99 {pct(lat, .99):.1f} ms max {max(lat):.1f} ms")
print(f"  floor (etcd put, watch on another member): put p50 {f.get('put_p50_ms')} ms,"
      f" visible p50 {f.get('visible_p50_ms')} ms p99 {f.get('visible_p99_ms')} ms")
print(f"  ratio visible-everywhere p50 / floor visible p50: {pct(lat, .5) / fl:.1f}")
PY
for ((i = 0; i < MOUNTS; i++)); do node_umount "$i"; done
