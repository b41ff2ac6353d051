#!/usr/bin/env bash
# A variable the specs mark `scope: node` (NODE_RANK: another value on
# every node by design, left out of the digest) written through one
# node's mount stays on that node: no key in etcd, the other nodes keep
# their own value, verify still passes, and status and explain say it
# is kept on this node. A key for such a name that reaches etcd anyway
# (an older version, a hand-made put) is never applied: each node names
# it once on stderr, escaped, at start-up or from the watch. NNODES is
# the same on every node and stays shared (the control).
. "$(dirname "$0")/mountlib.sh"

RUNP="/primus-envfs/runs/$RUN"
KEY="$RUNP/overrides/$DIR_BA/NODE_RANK"
# Each node names the hand-made key once, quoted; nothing else.
NODE_STDERR_ALLOW="^primus-envfs: --sync: ignoring \"$KEY\": NODE_RANK is node-scoped \(scope: node\), each node keeps its own \(docs/SYNC.md\)$"
N4=(--specs "$ENVFS_SPECS" --env NNODES=4)

etcd_cluster_start 1
node_mount 0 "${N4[@]}"
node_mount 1 "${N4[@]}"
[ "$(node_read 1 NODE_RANK)" = 1 ] || fail "node 1 starts with NODE_RANK $(node_read 1 NODE_RANK)"

echo 3 >"$(node_dir 0)/NODE_RANK" || fail "writing NODE_RANK on node 0"
[ "$(node_read 0 NODE_RANK)" = 3 ] || fail "node 0 does not serve its write: $(node_read 0 NODE_RANK)"
# The control, written after: once node 1 has it, node 1 has seen every
# revision before it. Its value is none the nodes start with (--env
# NNODES=4), or the wait would pass before node 1 applied anything.
echo 5 >"$(node_dir 0)/NNODES" || fail "writing NNODES on node 0"
node_wait_value 1 NNODES 5
[ "$(node_read 1 NODE_RANK)" = 1 ] ||
	fail "node 0's NODE_RANK reached node 1: it reads $(node_read 1 NODE_RANK)"
ectl get --prefix "$RUNP/overrides/" --keys-only >"$TMP/keys"
grep -qx "$RUNP/overrides/$DIR_BA/NNODES" "$TMP/keys" || fail "the control is not in etcd: $(cat "$TMP/keys")"
! grep -q "NODE_RANK" "$TMP/keys" || fail "NODE_RANK is in etcd: $(grep NODE_RANK "$TMP/keys")"
verify_rc 0 --nodes 2 --wait 10
note "verify: $(cat "$TMP/v.out")"

# status and explain say where the override is.
node_status 0 >"$TMP/st.0"
grep -qx "sync_local $DIR_BA/NODE_RANK: scope node, kept on this node" "$TMP/st.0" ||
	fail "status does not say NODE_RANK is kept on node 0: $(grep '^sync_local\|^sync_overrides' "$TMP/st.0")"
grep -qx "sync_overrides: local 1 remote 1" "$TMP/st.0" || fail "node 0: $(grep "^sync" "$TMP/st.0")"
node_status 1 >"$TMP/st.1"
grep -qx "sync_overrides: local 0 remote 1" "$TMP/st.1" || fail "node 1: $(grep ^sync_overrides "$TMP/st.1")"
sed -n '/^NODE_RANK$/,/^$/p' "$(node_dir 0)/explain" >"$TMP/ex.0"
grep -q "^  scope: node .*stays on the node that wrote it" "$TMP/ex.0" ||
	fail "explain does not say NODE_RANK stays on its node: $(cat "$TMP/ex.0")"

# An rm is the node's own as well: node 0 goes back to its --env value,
# nothing is sent (the key stays absent, node 1 keeps its value).
rm "$(node_dir 0)/NODE_RANK" || fail "rm NODE_RANK on node 0"
[ "$(node_read 0 NODE_RANK)" = 0 ] || fail "node 0 after rm: $(node_read 0 NODE_RANK)"
echo 2 >"$(node_dir 0)/NNODES"
node_wait_value 1 NNODES 2
[ "$(node_read 1 NODE_RANK)" = 1 ] || fail "node 0's rm reached node 1: $(node_read 1 NODE_RANK)"
[ -z "$(ectl get --prefix "$RUNP/overrides/" --keys-only | grep NODE_RANK)" ] ||
	fail "the rm put NODE_RANK in etcd"
echo 6 >"$(node_dir 0)/NNODES"
node_wait_value 1 NNODES 6

# A key put by hand (an older version of this program shares it): never
# applied, by the watch or by a start-up read, and named once.
echo 3 >"$(node_dir 0)/NODE_RANK"
ectl put "$KEY" "=2" >/dev/null
ectl put "$RUNP/overrides/$DIR_BA/ENVFS_AFTER" "=after-1" >/dev/null
node_wait_value 0 ENVFS_AFTER after-1
node_wait_value 1 ENVFS_AFTER after-1
[ "$(node_read 0 NODE_RANK)" = 3 ] || fail "node 0 applied the hand-made key: $(node_read 0 NODE_RANK)"
[ "$(node_read 1 NODE_RANK)" = 1 ] || fail "node 1 applied the hand-made key: $(node_read 1 NODE_RANK)"
# Its deletion is not applied either (it would take node 0's own away).
ectl del "$KEY" >/dev/null
ectl put "$RUNP/overrides/$DIR_BA/ENVFS_AFTER" "=after-2" >/dev/null
node_wait_value 0 ENVFS_AFTER after-2
[ "$(node_read 0 NODE_RANK)" = 3 ] || fail "node 0 applied the key's deletion: $(node_read 0 NODE_RANK)"
ectl put "$KEY" "=2" >/dev/null
ectl put "$RUNP/overrides/$DIR_BA/ENVFS_AFTER" "=after-3" >/dev/null
node_wait_value 0 ENVFS_AFTER after-3
node_wait_value 1 ENVFS_AFTER after-3
node_mount 2 "${N4[@]}"
[ "$(node_read 2 NODE_RANK)" = 2 ] || fail "node 2 (--env NODE_RANK=2) reads $(node_read 2 NODE_RANK)"
[ "$(node_read 2 ENVFS_AFTER)" = after-3 ] || fail "node 2 did not read the run: $(node_read 2 ENVFS_AFTER)"
[ "$(node_read 2 NNODES)" = 6 ] || fail "node 2 did not take NNODES: $(node_read 2 NNODES)"
node_status 2 >"$TMP/st.2"
! grep -q "^sync_local" "$TMP/st.2" || fail "node 2 lists a local override: $(grep ^sync_local "$TMP/st.2")"
verify_rc 0 --nodes 3 --wait 10
for i in 0 1 2; do node_umount "$i"; done
for i in 0 1 2; do
	n=$(grep -c "ignoring \"$KEY\"" "${NODE_ERR_FILES[$i]}" || true)
	[ "$n" = 1 ] || fail "node $i named the hand-made key $n times: $(cat "${NODE_ERR_FILES[$i]}")"
done
echo "ok"
