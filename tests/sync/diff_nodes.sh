#!/usr/bin/env bash
# diff of two nodes of a running job through etcd (mountlib.sh): node 1
# runs with a value node 0 does not have; diff node:node0 node:node1
# names it once, with both values and where each came from; what nodes
# do not publish (NODE_RANK, scope: node; anything of a secret) is not
# compared; a node that publishes nothing is exit 2; no
# --sync is a usage error; the JSON is valid against its schema.
. "$(dirname "$0")/mountlib.sh"

etcd_cluster_start 1
EP=$(etcd_endpoints)
printf 'HF_TOKEN=tok-node-zero\n' >"$TMP/s0.env"
printf 'HF_TOKEN=tok-node-one\n' >"$TMP/s1.env"
chmod 600 "$TMP/s0.env" "$TMP/s1.env"
node_mount 0 --specs "$ENVFS_SPECS" --env NNODES=2 --env-file "$TMP/s0.env"
node_mount 1 --specs "$ENVFS_SPECS" --env NNODES=2 --env NCCL_DEBUG=INFO --env-file "$TMP/s1.env"
verify_rc 1 --nodes 2 --wait 20
d() { # d NAME ARGS...: diff of the run's nodes; stdout in $TMP/NAME, status in $rc
	local n=$1
	shift
	rc=0
	"$ENVFS_BIN" diff --sync "etcd://$EP" --run "$RUN" "$@" >"$TMP/$n" 2>"$TMP/$n.err" || rc=$?
}
d two node:node0 node:node1 -b maxtext -a gfx950
[ "$rc" -eq 1 ] || fail "diff of two nodes: exit $rc: $(cat "$TMP/two" "$TMP/two.err")"
grep -qx -- '--- a: node:node0 (maxtext/gfx950)' "$TMP/two" || fail "a's label: $(head -2 "$TMP/two")"
grep -qx 'changed NCCL_DEBUG' "$TMP/two" || fail "no changed NCCL_DEBUG: $(cat "$TMP/two")"
grep -qE '^  a: ""  runner  specs/base\.yaml:[0-9]+$' "$TMP/two" || fail "node0's side: $(cat "$TMP/two")"
grep -qx '  b: "INFO"  cli  cli' "$TMP/two" || fail "node1's side: $(cat "$TMP/two")"
# Nodes publish neither their node-scoped variables (NODE_RANK differs by
# design) nor anything of a secret's value: a secret cannot be compared.
grep -q 'NODE_RANK' "$TMP/two" && fail "NODE_RANK (scope: node) is shown: $(cat "$TMP/two")"
grep -qx "unknown HF_TOKEN: secret, cannot be compared: a record holds no secret's value" "$TMP/two" ||
	fail "the secret: $(cat "$TMP/two")"
! grep -q 'tok-node' "$TMP/two" "$TMP/two.err" || fail "a diff printed a secret"
[ "$(grep -c '^changed ' "$TMP/two")" -eq 1 ] || fail "more than NCCL_DEBUG differs: $(cat "$TMP/two")"
d json node:node0 node:node1 -b maxtext -a gfx950 --format json
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
"$PY" "$ENVFS_SOURCE_ROOT/tests/schema_check.py" "$ENVFS_SPECS/schemas/diff.schema.json" "$TMP/json" ||
	fail "diff --format json of two nodes is not valid"
# A node that publishes nothing, and diff without --sync.
d missing node:node0 node:nobody -b maxtext -a gfx950
[ "$rc" -eq 2 ] && grep -q 'node nobody publishes no maxtext/gfx950' "$TMP/missing.err" ||
	fail "a missing node: exit $rc: $(cat "$TMP/missing.err")"
rc=0
"$ENVFS_BIN" diff node:node0 node:node1 -b maxtext -a gfx950 >/dev/null 2>"$TMP/nosync.err" || rc=$?
[ "$rc" -eq 64 ] && grep -q 'node:node0 needs --sync' "$TMP/nosync.err" ||
	fail "node: without --sync: exit $rc: $(cat "$TMP/nosync.err")"
# What no node can be called is a usage error (64), as --sync-node's, and
# is shown escaped: not "publishes nothing" (2) after asking etcd.
for bad in '' .. a/b $'nl\nx' "$(head -c 300 /dev/zero | tr '\0' n)"; do
	d badname node:node0 "node:$bad" -b maxtext -a gfx950
	[ "$rc" -eq 64 ] && grep -q 'is not a node name' "$TMP/badname.err" ||
		fail "node:'$bad': exit $rc: $(cat "$TMP/badname.err")"
	[ "$(wc -l <"$TMP/badname.err")" -le 2 ] || fail "node:'$bad': the message is not one line: $(cat "$TMP/badname.err")"
done
node_umount 1
node_umount 0
echo "ok: diff_nodes"
