#!/usr/bin/env bash
# Mounts with --sync while etcd fails.
# - the leader killed during a stream of writes: every close() returns 0,
#   EIO (applied nowhere) or ETIMEDOUT (outcome unknown: a member held the
#   request) within the bound (2 s, plus scheduling), none hangs, and every
#   acknowledged write is on every node afterwards;
# - two of three members killed: writes fail (EIO, or ETIMEDOUT while the
#   survivor still takes requests) within the bound, reads keep
#   serving, status says why; after the restart writes and the watch work
#   again without a remount;
# - a member SIGSTOPped: the nodes using it fail over (writes within the
#   bound; its watchers see later writes);
# - a compaction while a node is cut off: it re-reads and agrees, deletes
#   in the compacted history included;
# - two writers racing on one variable: all nodes end on etcd's value, the
#   one with the highest revision.
. "$(dirname "$0")/mountlib.sh"

# The bound of one write: twice --sync-timeout (2000 ms: the commit, then
# the fence's move when its answer was lost) and generous slack for a
# loaded 2-core machine (liveness, not speed).
BOUND_MS=5500
OVP="/primus-envfs/runs/$RUN/overrides/$DIR_BA"

# writes NODE FIRST LAST OUT: writes ENVFS_F_k=k for k in FIRST..LAST on
# NODE, one close() each; OUT gets "k ok|ERRNO MS" per write.
writes() {
	"$PYTHON" - "$(node_dir "$1")" "$2" "$3" >"$4" <<'PY'
import errno, os, sys, time
d, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for k in range(first, last + 1):
    t0 = time.monotonic()
    try:
        with open(f"{d}/ENVFS_F_{k}", "w") as f:
            f.write(f"{k}\n")
        r = "ok"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    print(k, r, int((time.monotonic() - t0) * 1000), flush=True)
    time.sleep(0.02)
PY
}

# check_bound OUT: every write returned 0, EIO or ETIMEDOUT, within
# BOUND_MS.
check_bound() {
	local bad
	bad=$(awk -v b=$BOUND_MS '($2 != "ok" && $2 != "EIO" && $2 != "ETIMEDOUT") || $3 > b' "$1")
	[ -z "$bad" ] || fail "writes out of bound or with another error: $bad"
	note "$(awk '{ n[$2]++; if ($3 > m) m = $3 } END { for (k in n) printf "%s %d, ", k, n[k]; printf "slowest %d ms", m }' "$1")"
}

etcd_cluster_start 3
# Node i starts on member i % 3.
for i in 0 1 2; do
	NODE_ENDPOINTS=$(etcd_endpoints $i $(((i + 1) % 3)) $(((i + 2) % 3))) node_mount "$i"
done
# Node 3 knows member 2 only: cut off when it is stopped.
NODE_ENDPOINTS=$(etcd_endpoints 2) node_mount 3
# A write whose answer was lost while no member could take the fence's
# move is of unknown outcome until etcd answers again (docs/SYNC.md).
NODE_STDERR_ALLOW='^primus-envfs: --sync: (shutting down: )?the outcome of '

# ---- the leader killed during a stream of writes ----------------------------------
leader=$(etcd_leader)
writes 0 1 40 "$TMP/w1" &
wpid=$!
sleep 0.4
note "killing the leader, member $leader"
etcd_kill "$leader"
wait "$wpid" || fail "the writer failed: $(cat "$TMP/w1")"
[ "$(wc -l <"$TMP/w1")" = 40 ] || fail "not every write returned: $(cat "$TMP/w1")"
check_bound "$TMP/w1"
etcd_restart "$leader"
for k in $(awk '$2 == "ok" { print $1 }' "$TMP/w1"); do
	for i in 0 1 2 3; do node_wait_value "$i" "ENVFS_F_$k" "$k" 15; done
done
note "every acknowledged write of $(grep -c ' ok ' "$TMP/w1") is on every node"

# ---- two of three members killed ----------------------------------------------------
etcd_kill 1
etcd_kill 2
writes 0 100 102 "$TMP/w2"
check_bound "$TMP/w2"
! grep -q ' ok ' "$TMP/w2" || fail "a write succeeded without quorum: $(cat "$TMP/w2")"
for i in 0 1 2; do
	[ "$(node_read "$i" ENVFS_F_100)" = "<absent>" ] || fail "node $i shows the refused write"
	[ "$(node_read "$i" ENVFS_F_1)" = 1 ] || fail "node $i does not serve reads without quorum"
done
grep -Eq "^sync_last_error: (commit|watch): .*(leader|refused|timed out|within)" <(node_status 0) || fail "status 0 does not say why: $(node_status 0 | grep ^sync)"
# Without quorum the watches end (Hasleader), and status says so.
for t in $(seq 1 100); do
	node_status 1 | grep >/dev/null -x "sync_connected: no" && break
	sleep 0.1
done
node_status 1 | grep >/dev/null -x "sync_connected: no" || fail "node 1 still says connected: $(node_status 1 | grep ^sync)"
node_status 1 | grep >/dev/null "^sync_last_error: watch: " || fail "node 1 does not say why: $(node_status 1 | grep ^sync)"
etcd_start 1
etcd_start 2
etcd_wait_healthy
for i in 0 1 2 3; do
	for t in $(seq 1 150); do
		node_status "$i" | grep >/dev/null -x "sync_connected: yes" && break
		sleep 0.1
	done
	node_status "$i" | grep >/dev/null -x "sync_connected: yes" || fail "node $i did not reconnect: $(node_status "$i" | grep ^sync)"
done
writes 1 110 110 "$TMP/w3"
grep -q '^110 ok ' "$TMP/w3" || fail "no write after the restart: $(cat "$TMP/w3")"
for i in 0 1 2 3; do node_wait_value "$i" ENVFS_F_110 110 10; done

# ---- a member SIGSTOPped: its users fail over -----------------------------------------
# A follower (a stopped leader costs an election: EIO is then right).
st=$((($(etcd_leader) + 1) % 3))
note "stopping member $st, node $st's first endpoint"
etcd_stop "$st"
writes "$st" 120 121 "$TMP/w4"
check_bound "$TMP/w4"
[ "$(grep -c ' ok ' "$TMP/w4")" = 2 ] || fail "node $st did not fail over: $(cat "$TMP/w4")"
ce=$(node_status "$st" | sed -n 's/^sync_commit_endpoint: //p')
[ -n "$ce" ] && [ "$ce" != "$(etcd_endpoint "$st")" ] || fail "node $st still writes to the stopped member: '$ce'"
writes $(((st + 1) % 3)) 122 122 "$TMP/w5"
grep -q ' ok ' "$TMP/w5" || fail "node $(((st + 1) % 3)) could not write: $(cat "$TMP/w5")"
# Node st watched on the stopped member: its watch fails over too.
for k in 120 121 122; do
	for i in 0 1 2; do node_wait_value "$i" "ENVFS_F_$k" "$k" 15; done
done
etcd_cont "$st"
etcd_wait_healthy
for k in 120 121 122; do node_wait_value 3 "ENVFS_F_$k" "$k" 15; done

# ---- a compaction while node 3 is cut off ---------------------------------------------
# (Killed, not stopped: a stopped member continued serves watches from
# its stale store while it catches up, and sees no compaction.)
etcd_kill 2
for t in $(seq 1 100); do
	node_status 3 | grep >/dev/null -x "sync_connected: no" && break
	sleep 0.1
done
node_status 3 | grep >/dev/null -x "sync_connected: no" || fail "node 3 still says connected: $(node_status 3 | grep ^sync)"
# (The leader may have been member 2: a write during the election may
# fail, within the bound.)
writes 0 130 134 "$TMP/w6"
check_bound "$TMP/w6"
grep -q ' ok ' "$TMP/w6" || fail "no write with member 2 killed: $(cat "$TMP/w6")"
for t in 1 2 3; do rm "$(node_dir 1)/ENVFS_F_110" 2>/dev/null && break; sleep 0.5; done
node_wait_value 0 ENVFS_F_110 "<absent>"
etcd_compact
etcd_restart 2
for k in $(awk '$2 == "ok" { print $1 }' "$TMP/w6"); do node_wait_value 3 "ENVFS_F_$k" "$k" 20; done
node_wait_value 3 ENVFS_F_110 "<absent>" 10
node_status 3 | grep >/dev/null -E "^sync_resyncs: [1-9]" || fail "node 3 did not re-read: $(node_status 3 | grep ^sync)"
for i in 0 1 2 3; do
	node_status "$i" | grep '^sync_overrides' >"$TMP/ov.$i"
done
for i in 1 2 3; do
	cmp -s "$TMP/ov.0" "$TMP/ov.$i" || fail "node $i: $(cat "$TMP/ov.$i"); node 0: $(cat "$TMP/ov.0")"
done

# ---- two writers racing on one variable ----------------------------------------------
# Racing, not failover: the member restarted above must serve again (a
# clean-clone CI run once raced while it was still settling, and a
# commit there spent its bound on slow requests, not on lost compares).
etcd_wait_healthy
# A write that lost its compare 20 times, or for the whole bound, fails
# with EIO, applied nowhere (docs/SYNC.md): on a slow machine (TSan) one
# racer can lose that often. Any other error fails the racer, and so does
# never getting one write through.
race() {
	"$PYTHON" - "$(node_dir "$1")" "$1" <<'PY'
import errno, sys
d, who = sys.argv[1], sys.argv[2]
ok = 0
for k in range(30):
    try:
        with open(f"{d}/ENVFS_RACE", "w") as f:
            f.write(f"{who}-{k}\n")
        ok += 1
    except OSError as e:
        if e.errno != errno.EIO:
            raise
print(f"racer {who}: {ok} of 30 written, {30 - ok} EIO", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
race 0 &
r0=$!
race 2 &
r2=$!
wait "$r0" || fail "racer 0 failed: $(node_status 0 | grep ^sync_last_error)"
wait "$r2" || fail "racer 2 failed: $(node_status 2 | grep ^sync_last_error)"
final=$(ectl get "$OVP/ENVFS_RACE" --print-value-only)
final=${final#=}
note "etcd's last value: $final"
for i in 0 1 2 3; do node_wait_value "$i" ENVFS_RACE "$final" 10; done
for i in 0 1 2 3; do node_umount "$i"; done

# ---- SIGTERM while no member answers -------------------------------------------------
# Every member SIGSTOPped (they accept connections and never answer): a
# SIGTERM still ends the daemon and its mount within 2 s (issue 14), the
# node's lease left to its TTL rather than waited on for --sync-timeout.
node_mount 4
m4=$(node_mnt 4)
for i in 0 1 2; do etcd_stop "$i"; done
sleep 0.3
t0=$(now_ms)
kill -TERM "${NODE_PID[4]}"
rc=0
wait "${NODE_PID[4]}" || rc=$?
t=$(($(now_ms) - t0))
NODE_PID[4]=""
for i in 0 1 2; do etcd_cont "$i"; done
note "SIGTERM with every member stopped: exit $rc after $t ms"
[ "$rc" -eq 0 ] || fail "the daemon exited $rc on SIGTERM with etcd stopped"
[ "$t" -le 2000 ] || fail "SIGTERM with etcd stopped took $t ms (bound 2000)"
! mountpoint -q "$m4" || fail "$m4 is still mounted after the daemon's exit"
echo "ok"
