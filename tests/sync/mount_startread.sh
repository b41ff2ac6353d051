#!/usr/bin/env bash
# The start-up read against members in different states: whatever member a
# mount asks, its first read shows every write acknowledged before it
# started (docs/SYNC.md, "What the other nodes do"), and a member that is
# current answers the read from its own store, with no round through the
# leader (a serializable read: what 1,024 mounts starting together can
# afford, docs/PERFORMANCE.md).
#
# The member that is behind is a real member behind tests/sync/lagproxy.py,
# which answers serializable reads as of an older revision (as a member
# that has not applied the rest of the log yet does) and holds watches
# back; linearizable reads it forwards as they are (a member answers one
# only once it caught up).
. "$(dirname "$0")/mountlib.sh"

LAG="$TMP/lag"
mkdir -p "$LAG"
OVR="/primus-envfs/runs/$RUN/overrides/"
# A key under the prefix that is no override: named once in a mount's
# log at start, however often its start-up read asks again.
JUNK="${OVR}not-an-override"
NODE_STDERR_ALLOW="^primus-envfs: --sync: ignoring \"$JUNK\": not an override \(docs/SYNC.md\)$"

# junk_named I: how often node I's log names the junk key.
junk_named() {
	grep -c "ignoring \"$JUNK\"" "${NODE_ERR_FILES[$1]}" || true
}

# ranges_of_overrides SERIALIZABLE STALE: how many reads of the overrides
# the proxy saw of that kind.
ranges_of_overrides() {
	grep -c "^serializable=$1 stale=$2 $OVR" "$LAG/ranges" 2>/dev/null || true
}

write() {
	py_errno "put('$(node_dir 0)/ENVFS_S', '$1\n')" | grep -qx ok || fail "node 0: write $1"
}

etcd_cluster_start 3
node_mount 0
ectl put "$JUNK" x >/dev/null
write old
OLD=$(etcd_revision)
write new

# ---- a member that applied the log only up to OLD -----------------------------
# Node 1 talks to it alone. "new" was acknowledged before node 1 started:
# its first read must show it, though its member's own store says "old"
# and its watch delivers nothing yet.
echo "$OLD" >"$LAG/stale_rev"
: >"$LAG/hold_watch"
proxy_start 1
NODE_ENDPOINTS="127.0.0.1:$PROXY_PORT" node_mount 1
v=$(node_read 1 ENVFS_S)
[ "$v" = new ] || fail "node 1's first read of ENVFS_S: '$v', want 'new' (acknowledged before node 1 started; its member was at revision $OLD)"
stale=$(ranges_of_overrides 1 1)
[ "$stale" -ge 1 ] ||
	fail "node 1 never read its member's own state (no serializable read of $OVR): $(cat "$LAG/ranges")"
[ "$(junk_named 1)" = 1 ] || fail "node 1 named the junk key $(junk_named 1) times, want once: $(cat "${NODE_ERR_FILES[1]}")"
# The member catches up: node 1 follows the run from there.
rm -f "$LAG/hold_watch" "$LAG/stale_rev"
write newer
node_wait_value 1 ENVFS_S newer

# ---- a member that is current ------------------------------------------------------
# Node 2 reads from it alone: its first read shows the last write, and
# the start-up read was the member's own (serializable), never one
# through the leader.
: >"$LAG/ranges"
NODE_ENDPOINTS="127.0.0.1:$PROXY_PORT" node_mount 2
v=$(node_read 2 ENVFS_S)
[ "$v" = newer ] || fail "node 2's first read of ENVFS_S: '$v', want 'newer'"
own=$(ranges_of_overrides 1 0)
lin=$(ranges_of_overrides 0 0)
[ "$own" -ge 1 ] && [ "$lin" = 0 ] ||
	fail "node 2's start-up read: $own serializable and $lin linearizable reads of $OVR, want >= 1 and 0: $(cat "$LAG/ranges")"
[ "$(junk_named 2)" = 1 ] || fail "node 2 named the junk key $(junk_named 2) times, want once"
write last
node_wait_value 2 ENVFS_S last
node_wait_value 1 ENVFS_S last
echo "ok: a first read behind a lagging member shows the write acknowledged before the start ($stale reads of the member's own state tried); a current member's read is its own"
