#!/usr/bin/env bash
# A write that loses its compare to another node's change the writer's
# watch has not delivered yet (its member lags: tests/sync/lagproxy.py
# holds the events back). The node must take that change from the watch,
# in revision order and whole, before it computes its write again: a
# fresh read of only the keys the write touches, applied at once, put
# half of node 0's mv on node 1 (both names at once, a state of no serial
# order) and gave node 1 a history of two changes where node 0 has one.
. "$(dirname "$0")/mountlib.sh"

etcd_cluster_start 1
proxy_start 0
node_mount 0
NODE_ENDPOINTS="127.0.0.1:$PROXY_PORT" node_mount 1 --sync-timeout 20000
hist() { "$ENVFS_BIN" history --mount "$(node_mnt "$1")" "$DIR_BA"; }

echo a >"$(node_dir 0)/ENVFS_LAG_X"
node_wait_value 1 ENVFS_LAG_X a

# Node 1's member stops delivering; node 0 moves X to Y.
: >"$LAG/hold_events"
mv "$(node_dir 0)/ENVFS_LAG_X" "$(node_dir 0)/ENVFS_LAG_Y" || fail "mv on node 0"
[ "$(ectl get "/primus-envfs/runs/$RUN/overrides/$DIR_BA/ENVFS_LAG_Y" --print-value-only)" = "=a" ] ||
	fail "etcd does not hold node 0's mv"

# Node 1 writes Y, which it does not know of: its compare fails, and it
# reads Y fresh (the proxy logs that read).
: >"$LAG/ranges"
"$ENVFS_BIN" set --mount "$(node_mnt 1)" "$DIR_BA" ENVFS_LAG_Y b >"$TMP/set.out" 2>"$TMP/set.err" &
SET_PID=$!
for _ in $(seq 1 $((1200 * NODE_WAIT_SCALE))); do
	grep -q "overrides/$DIR_BA/ENVFS_LAG_Y\$" "$LAG/ranges" && break
	kill -0 "$SET_PID" 2>/dev/null || break
	sleep 0.05
done
grep -q "overrides/$DIR_BA/ENVFS_LAG_Y\$" "$LAG/ranges" ||
	fail "node 1's write never read Y again: $(cat "$TMP/set.err")"
# While the events are held, node 1 shows no value of Y with X still
# there (set's create makes an empty Y of this node's alone meanwhile).
y=$(node_read 1 ENVFS_LAG_Y)
if [ "$(node_read 1 ENVFS_LAG_X)" = a ] && [ "$y" != "<absent>" ] && [ -n "$y" ]; then
	fail "node 1 shows half of node 0's mv: X=a and Y=$(node_read 1 ENVFS_LAG_Y)"
fi
rm -f "$LAG/hold_events"
RC=0
wait "$SET_PID" || RC=$?
[ "$RC" = 0 ] || fail "set on node 1: exit $RC: $(cat "$TMP/set.err")"
node_wait_value 0 ENVFS_LAG_Y b
node_wait_value 1 ENVFS_LAG_X "<absent>"
[ "$(node_read 1 ENVFS_LAG_Y)" = b ] || fail "node 1: Y is $(node_read 1 ENVFS_LAG_Y)"

# One history on both nodes: the write, the mv, the write (generation
# numbers and times are each node's own: a create in passing takes a
# number on its node alone).
for i in 0 1; do
	hist "$i" | sed -E 's/^gen [0-9]+  [^ ]+  /gen  /' |
		awk '/^gen /{keep = $2 != "start"} keep' >"$TMP/n.$i"
done
[ "$(grep -c '^gen ' "$TMP/n.0")" -eq 3 ] || fail "node 0: not three changes: $(cat "$TMP/n.0")"
diff -u "$TMP/n.0" "$TMP/n.1" || fail "the nodes tell different histories: $(hist 0; hist 1)"
echo ok
