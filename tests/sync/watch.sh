#!/usr/bin/env bash
# The watch on a real 3-member etcd cluster: events of a prefix from a
# given revision, in revision order, with nothing lost or repeated across a
# reconnect to another member; compaction reported as such; interrupt.
. "$(dirname "$0")/lib.sh"

etcd_cluster_start 3

# ---- from a revision, in order, only the prefix ----------------------------------
declare -a rev
for i in 1 2 3 4 5; do
	rev[$i]=$(drv put "/w/k$i" "value $i" | sed 's/^ok //')
	drv put "/wx/k$i" "outside" >/dev/null
done
drv del /w/k1 >/dev/null
out=$(drv watch /w/ "${rev[2]}" 5 10) || fail "watch from ${rev[2]}: $out"
got=$(grep '^ev ' <<<"$out" | cut -d' ' -f2-4 | tr '\n' ',')
del_rev=$((rev[5] + 2))
want="${rev[2]} PUT /w/k2,${rev[3]} PUT /w/k3,${rev[4]} PUT /w/k4,${rev[5]} PUT /w/k5,$del_rev DELETE /w/k1,"
[ "$got" = "$want" ] || fail "watch from ${rev[2]}: got '$got', want '$want'"
grep -q "^ev ${rev[3]} PUT /w/k3 $(printf 'value 3' | od -An -tx1 | tr -d ' \n')$" <<<"$out" ||
	fail "watch: value of /w/k3: $out"
grep -q "^ev $del_rev DELETE /w/k1 -$" <<<"$out" || fail "a DELETE carries no value: $out"
grep -q '^end 0$' <<<"$out" || fail "watch did not stop after 5 events: $out"

# From now (revision 0): only what comes after.
(drv watch /w/ 0 1 10 >"$TMP/now.out") &
wpid=$!
wait_line "$TMP/now.out" '^# created'
r=$(drv put /w/late yes | sed 's/^ok //')
wait "$wpid" || fail "watch from now: $(cat "$TMP/now.out")"
grep -q "^ev $r PUT /w/late " "$TMP/now.out" && [ "$(grep -c '^ev ' "$TMP/now.out")" = 1 ] ||
	fail "watch from now: $(cat "$TMP/now.out")"

# ---- a reconnect loses and repeats nothing -------------------------------------
# The watcher starts on a follower; the writer uses the other members.
lead=$(etcd_leader)
w=$(((lead + 1) % 3))
others=$(etcd_endpoints $(((w + 1) % 3)) $(((w + 2) % 3)))
start=$(($(etcd_revision) + 1))
(DRV_ENDPOINTS=$(etcd_endpoints "$w" $(((w + 1) % 3)) $(((w + 2) % 3))) \
	drv --resume watch /g/ "$start" 40 40 >"$TMP/g.out") &
wpid=$!
wait_line "$TMP/g.out" '^# created'
(DRV_ENDPOINTS=$others drv stream /g/ 40 40 >"$TMP/put.out") &
ppid=$!
wait_line "$TMP/put.out" '^put 10 '
etcd_kill "$w"
note "killed member $w, the watcher's, during the writes"
wait "$ppid" || fail "the writer failed: $(cat "$TMP/put.out")"
wait "$wpid" || fail "the watcher failed: $(cat "$TMP/g.out")"
grep -q '^# reconnect ' "$TMP/g.out" || fail "the watcher did not reconnect: $(cat "$TMP/g.out")"
note "watcher: $(grep '^# reconnect' "$TMP/g.out" | head -1)"
# Every acknowledged put seen once, at its revision, revisions rising.
grep '^put [0-9]* ok ' "$TMP/put.out" | awk '{print $5, "/g/" $2}' | sort >"$TMP/acked"
grep '^ev ' "$TMP/g.out" | awk '{print $2, $4}' >"$TMP/seen"
[ "$(wc -l <"$TMP/acked")" = 40 ] || fail "writes failed with a follower down: $(grep -v ' ok ' "$TMP/put.out")"
sort -n -c "$TMP/seen" 2>/dev/null && [ -z "$(cut -d' ' -f1 "$TMP/seen" | uniq -d)" ] ||
	fail "events out of order or repeated: $(cat "$TMP/seen")"
diff <(sort "$TMP/seen") "$TMP/acked" >/dev/null ||
	fail "events differ from the acknowledged puts: $(diff <(sort "$TMP/seen") "$TMP/acked")"
etcd_restart "$w"

# ---- compaction ---------------------------------------------------------------------
for i in 1 2 3; do drv put "/c/k$i" "$i" >/dev/null; done
old=$(($(etcd_revision) - 2))
etcd_compact
now=$(etcd_revision)
expect_error ESTALE "revision $old is compacted \(the oldest kept is $now\)" drv watch /c/ "$old" 1 10
grep -q "^compacted $now$" "$TMP/out" || fail "compaction not reported: $(cat "$TMP/out")"
# With --resume: read again, then watch from the read's revision.
(drv --resume watch /c/ "$old" 1 10 >"$TMP/c.out") &
wpid=$!
wait_line "$TMP/c.out" '^# reread rev [0-9]+ n 3$'
wait_line "$TMP/c.out" '^# created'
r=$(drv put /c/after x | sed 's/^ok //')
wait "$wpid" || fail "resume after compaction: $(cat "$TMP/c.out")"
grep -q "^ev $r PUT /c/after " "$TMP/c.out" || fail "no event after the re-read: $(cat "$TMP/c.out")"

# ---- the probe of a quiet watch makes no gRPC call ----------------------------------
# A quiet stream is probed every probe_ms (a stopped member keeps its
# sockets); the probe asks /version, which the member's HTTP server answers
# itself, not a maintenance status through the gateway: with a thousand
# nodes, one of those per node every 2 s was the members' largest load
# (docs/PERFORMANCE.md, tests/bench/sync_1024.sh).
status_calls() {
	curl -s "http://$(etcd_endpoint "$1")/metrics" |
		awk '/^grpc_server_handled_total/ && /grpc_method="Status"/ { s += $2 } END { print s + 0 }'
}
s0=$(status_calls 0)
DRV_ENDPOINTS=$(etcd_endpoint 0) expect_error EINTR 'interrupted' drv --probe-ms 100 watch /quiet/ 0 1 2
grep -q '^# created' "$TMP/out" || fail "the quiet watch was not created: $(cat "$TMP/out")"
s1=$(status_calls 0)
[ "$s1" = "$s0" ] || fail "a quiet watch's probes made $((s1 - s0)) gRPC Status calls on its member"

# ---- interrupt from another thread ----------------------------------------------------
t0=$(now_ms)
expect_error EINTR 'interrupted' drv watch /quiet/ 0 1 1
t=$(($(now_ms) - t0))
grep -q '^end EINTR$' "$TMP/out" || fail "interrupt: $(cat "$TMP/out")"
[ "$t" -lt 5000 ] || fail "an interrupted watch took $t ms to return"

echo "PASS"
