#!/usr/bin/env bash
# primus-envfs verify, the multi-node gate (issue 16, acceptance 3), on a
# real etcd cluster with four mounts as four nodes (mountlib.sh):
#   - the same inputs, another NODE_RANK on each: exit 0 (NODE_RANK is
#     scope: node), also when verify waits for the last node to mount;
#   - one node with another --inherit image XLA_FLAGS: exit 1, naming that
#     node and XLA_FLAGS with both values; -b of a backend where they
#     agree: exit 0;
#   - --nodes 5: exit 2, naming the four present; an unmounted node
#     leaves the registry at once (its lease is revoked);
#   - a node with a secret the others lack: named, by name only; the
#     token, and its SHA-256, are nowhere in etcd nor in verify's output;
#   - etcd stopped: exit 3, within the --sync-timeout bound.
. "$(dirname "$0")/mountlib.sh"

IMG=$ENVFS_FIXTURES/node
etcd_cluster_start 1
EP=$(etcd_endpoints)

# verify_rc WANT ARG...: runs verify on the run; its stdout in $TMP/v.out,
# stderr in $TMP/v.err; fails unless the exit status is WANT.
verify_rc() {
	local want=$1 rc=0
	shift
	"$ENVFS_BIN" verify --sync "etcd://$EP" --run "$RUN" "$@" >"$TMP/v.out" 2>"$TMP/v.err" ||
		rc=$?
	[ "$rc" = "$want" ] ||
		fail "verify $*: exit $rc, want $want: $(cat "$TMP/v.out" "$TMP/v.err")"
}

# The verify process ends on its own: never a hang.
node_mount 0 --specs "$ENVFS_SPECS" --inherit "$IMG/image-a.env"
node_mount 1 --specs "$ENVFS_SPECS" --inherit "$IMG/image-a.env"
node_mount 2 --specs "$ENVFS_SPECS" --inherit "$IMG/image-a.env"

# ---- --wait: a gate started before the last node mounts ----------------------------
"$ENVFS_BIN" verify --sync "etcd://$EP" --run "$RUN" --nodes 4 --wait 30 \
	>"$TMP/w.out" 2>"$TMP/w.err" &
WPID=$!
sleep 0.5
node_mount 3 --specs "$ENVFS_SPECS" --inherit "$IMG/image-a.env"
rc=0
wait "$WPID" || rc=$?
[ "$rc" = 0 ] || fail "verify --wait 30: exit $rc: $(cat "$TMP/w.out" "$TMP/w.err")"
grep -q "^verify: run $RUN: 4 nodes registered and equal (17 directories compared)$" \
	"$TMP/w.out" || fail "verify --wait: $(cat "$TMP/w.out")"
note "--wait: $(cat "$TMP/w.out")"

# ---- four nodes, another NODE_RANK each: equal ----------------------------------
for i in 0 1 2 3; do
	[ "$(node_read "$i" NODE_RANK)" = "$i" ] || fail "node $i: NODE_RANK is $(node_read "$i" NODE_RANK)"
	grep -Eq '^sync_lease: [0-9a-f]+ ttl 10 s, renewed' "$(node_mnt "$i")/status" ||
		fail "node $i: no lease in status: $(grep '^sync' "$(node_mnt "$i")/status")"
done
# What verify ignores does differ: the environ digests of the nodes.
d0=$(grep '^digest maxtext/gfx950' "$(node_mnt 0)/status")
d1=$(grep '^digest maxtext/gfx950' "$(node_mnt 1)/status")
[ "$d0" != "$d1" ] || fail "the environ digests of nodes 0 and 1 are equal: $d0"
verify_rc 0 --nodes 4
grep -q "^verify: run $RUN: 4 nodes registered and equal (17 directories compared)$" \
	"$TMP/v.out" || fail "verify: $(cat "$TMP/v.out")"
[ ! -s "$TMP/v.err" ] || fail "verify wrote to stderr: $(cat "$TMP/v.err")"
verify_rc 0 --nodes 4 -q
[ ! -s "$TMP/v.out" ] || fail "verify -q printed: $(cat "$TMP/v.out")"
# The record holds no node-scoped value: NODE_RANK is in no detail.
ectl get --prefix "/primus-envfs/runs/$RUN/node-dirs/node1/" --print-value-only >"$TMP/detail"
grep -q '"name":"XLA_FLAGS"' "$TMP/detail" || fail "no XLA_FLAGS in node1's detail"
! grep -q '"name":"NODE_RANK"' "$TMP/detail" || fail "NODE_RANK is in node1's detail"

# ---- the lease: kept alive, and granted again when lost -----------------------
lease=$(sed -n 's/^sync_lease: \([0-9a-f]*\) ttl .*/\1/p' "$(node_mnt 0)/status")
[ -n "$lease" ] || fail "node 0: no lease id in status"
sleep 4
ttl=$(ectl lease timetolive "$lease" | sed -n 's/.*remaining(\(-*[0-9]*\)s).*/\1/p')
[ -n "$ttl" ] && [ "$ttl" -ge 6 ] ||
	fail "lease $lease of node 0: $(ectl lease timetolive "$lease") 4 s later (not kept alive)"
# Revoked behind its back (as when it expired while etcd was away): the
# record is gone, and back under a new lease at the next keepalive.
ectl lease revoke "$lease" >/dev/null
verify_rc 2 --nodes 4
verify_rc 0 --nodes 4 --wait 10
lease2=$(sed -n 's/^sync_lease: \([0-9a-f]*\) ttl .*/\1/p' "$(node_mnt 0)/status")
[ -n "$lease2" ] && [ "$lease2" != "$lease" ] || fail "node 0: lease '$lease2' after the revoke of $lease"
note "lease $lease revoked: node 0 registered again under $lease2"

# ---- --nodes 5: missing, the present ones named ------------------------------------
verify_rc 2 --nodes 5
grep -q "^verify: run $RUN: 4 nodes registered, --nodes says 5: node0 node1 node2 node3$" \
	"$TMP/v.out" || fail "verify --nodes 5: $(cat "$TMP/v.out")"
t0=$(now_ms)
verify_rc 2 --nodes 5 --wait 1
t1=$(now_ms)
[ $((t1 - t0)) -ge 900 ] || fail "verify --wait 1 returned after $((t1 - t0)) ms"
note "--nodes 5 --wait 1: exit 2 after $((t1 - t0)) ms"

# ---- node 3 with another image: its XLA_FLAGS, both values ------------------------
node_umount 3
# Unmounted: its lease is revoked, so it is gone at once, not in 10 s.
verify_rc 2 --nodes 4
grep -q "^verify: run $RUN: 3 nodes registered, --nodes says 4: node0 node1 node2$" \
	"$TMP/v.out" || fail "after unmounting node 3: $(cat "$TMP/v.out")"
node_mount 3 --specs "$ENVFS_SPECS" --inherit "$IMG/image-b.env"
verify_rc 1 --nodes 4 --wait 10
cp "$TMP/v.out" "$TMP/odd.out"
grep -q "^verify: run $RUN: 4 nodes registered, 1 differs from the 3 that agree (node0 node1 node2)$" \
	"$TMP/v.out" || fail "verify: $(cat "$TMP/v.out")"
grep -q '^node3: differs from node0:$' "$TMP/v.out" || fail "node3 is not named: $(cat "$TMP/v.out")"
grep -Eq '^  maxtext/gfx950: XLA_FLAGS: node3 "--xla_image=2 [^"]*", node0 "--xla_image=1 ' \
	"$TMP/v.out" || fail "XLA_FLAGS with both values is not named: $(cat "$TMP/v.out")"
# A long value that differs at its end is shown from a little before the
# difference, not as the same first 300 bytes twice.
grep -q '^  maxtext/gfx950: IMAGE_PATH: node3 \.\.\."/opt/hpcx/ompi/lib:/opt/image-b", node0 \.\.\."/opt/hpcx/ompi/lib:/opt/image-a"$' \
	"$TMP/v.out" || fail "IMAGE_PATH is not shown at its difference: $(grep IMAGE_PATH "$TMP/v.out")"
# Only these two differ, in every directory.
! grep -E '^  [^ ]+: [A-Z_]+:' "$TMP/v.out" | grep -Evq ': (XLA_FLAGS|IMAGE_PATH): ' ||
	fail "verify names more than XLA_FLAGS and IMAGE_PATH: $(cat "$TMP/v.out")"
# -b and -a select what is compared.
verify_rc 1 --nodes 4 -b maxtext
[ "$(grep -c '^  maxtext/gfx9[45][02]: XLA_FLAGS: ' "$TMP/v.out")" = 2 ] &&
	[ "$(grep -c '^  ' "$TMP/v.out")" = 4 ] || fail "-b maxtext: $(cat "$TMP/v.out")"
verify_rc 1 --nodes 4 -b maxtext -a gfx950
[ "$(grep -c '^  ' "$TMP/v.out")" = 2 ] || fail "-b maxtext -a gfx950: $(cat "$TMP/v.out")"
# A gate that would compare nothing fails: a misspelt backend.
verify_rc 64 --nodes 4 -b maxtxt
grep -q "node0 serves no directory maxtxt/\*" "$TMP/v.err" || fail "-b maxtxt: $(cat "$TMP/v.err")"

# ---- a secret: by name only, in etcd and in what verify prints ---------------------
node_umount 3
TOKEN="hf_verify_$RANDOM$RANDOM"
HF_TOKEN=$TOKEN node_mount 3 --specs "$ENVFS_SPECS" --inherit "$IMG/image-a.env"
[ "$(node_read 3 HF_TOKEN)" = "$TOKEN" ] || fail "node 3 does not serve its HF_TOKEN"
verify_rc 1 --nodes 4 --wait 10 -b maxtext -a gfx950
grep -q '^  maxtext/gfx950: HF_TOKEN: node3 set (secret: value not published), node0 unset$' \
	"$TMP/v.out" || fail "the secret's difference: $(cat "$TMP/v.out")"
[ "$(grep -c '^  ' "$TMP/v.out")" = 1 ] || fail "more than HF_TOKEN differs: $(cat "$TMP/v.out")"
ectl get --prefix "/primus-envfs/runs/$RUN/" >"$TMP/all.kv"
grep -q '"name":"HF_TOKEN","secret":true}' "$TMP/all.kv" || fail "no HF_TOKEN entry in node3's record"
! grep -q "$TOKEN" "$TMP/all.kv" "$TMP/v.out" "$TMP/v.err" || fail "the token's value is in etcd or verify's output"
# Nor a hash of it: the token's SHA-256 is nowhere.
th=$(printf '%s' "$TOKEN" | sha256sum | cut -d' ' -f1)
! grep -q "$th" "$TMP/all.kv" || fail "the token's SHA-256 is in etcd"

# ---- records that cannot be read: named, never a crash ---------------------------
R2=/primus-envfs/runs/$RUN-bad/nodes
sum0=$(ectl get "/primus-envfs/runs/$RUN/nodes/node0" --print-value-only)
ectl put "$R2/node0" "$sum0" >/dev/null
ectl put "$R2/bad" '{"format":1,"node":' >/dev/null
ectl put "$R2/liar" "$sum0" >/dev/null
ectl put "$R2/future" '{"format":2,"node":"future"}' >/dev/null
rc=0
"$ENVFS_BIN" verify --sync "etcd://$EP" --run "$RUN-bad" --nodes 4 >"$TMP/v.out" 2>"$TMP/v.err" || rc=$?
[ "$rc" = 1 ] || fail "verify of unreadable records: exit $rc: $(cat "$TMP/v.out" "$TMP/v.err")"
grep -q '^bad: differs from node0:$' "$TMP/v.out" &&
	grep -q '^  its record cannot be read: not a JSON object$' "$TMP/v.out" &&
	grep -q "^  its record cannot be read: the record names node 'node0'$" "$TMP/v.out" &&
	grep -q '^  its record cannot be read: format is not 1$' "$TMP/v.out" ||
	fail "unreadable records: $(cat "$TMP/v.out")"

# ---- the command line -----------------------------------------------------------
verify_rc 64 --nodes 0
grep -q -- "--nodes '0' is not a count" "$TMP/v.err" || fail "--nodes 0: $(cat "$TMP/v.err")"
verify_rc 64
grep -q -- "--nodes is required" "$TMP/v.err" || fail "no --nodes: $(cat "$TMP/v.err")"
verify_rc 64 --nodes 4 --wait soon
rc=0
"$ENVFS_BIN" verify --nodes 4 >/dev/null 2>"$TMP/v.err" || rc=$?
[ "$rc" = 64 ] && grep -q -- "--sync is required" "$TMP/v.err" ||
	fail "verify without --sync: exit $rc: $(cat "$TMP/v.err")"
"$ENVFS_BIN" verify --help | grep -q '^Exit status: 0 N nodes registered and equal' ||
	fail "verify --help has no exit statuses"

# ---- a record built while etcd is away is put once it is back --------------------
cp "$IMG/image-a.env" "$TMP/img.env"
node_mount 5 --specs "$ENVFS_SPECS" --inherit "$TMP/img.env" --run "$RUN-away"
verify_rc 0 --nodes 1 --wait 10 --run "$RUN-away"
etcd_stop 0
sed -i 's/^IMAGE_VAR=baked$/IMAGE_VAR=changed-while-away/' "$TMP/img.env"
for _ in $(seq 1 100); do
	[ "$(node_read 5 IMAGE_VAR)" = changed-while-away ] && break
	sleep 0.05
done
[ "$(node_read 5 IMAGE_VAR)" = changed-while-away ] || fail "node 5 did not reload"
t0=$(awk '{ print $14 + $15 }' "/proc/${NODE_PID[5]}/stat")
sleep 3
t1=$(awk '{ print $14 + $15 }' "/proc/${NODE_PID[5]}/stat")
# Retrying is waiting: well under a second of CPU in 3 s (ticks of 10 ms).
[ $((t1 - t0)) -lt 100 ] || fail "node 5 used $((t1 - t0)) ticks of CPU in 3 s with etcd away"
etcd_cont 0
ok=
for _ in $(seq 1 100); do
	if ectl get "/primus-envfs/runs/$RUN-away/node-dirs/node5/maxtext/gfx950" --print-value-only |
		grep -q '"name":"IMAGE_VAR","hash":"[0-9a-f]*","len":18,"value":"changed-while-away"'; then
		ok=1
		break
	fi
	sleep 0.1
done
[ -n "$ok" ] || fail "node 5's new record was not put after etcd came back: $(grep '^sync_record' "$(node_mnt 5)/status")"
note "etcd away: node 5 used $((t1 - t0)) ticks in 3 s; its record was put once etcd was back"
node_umount 5

# ---- etcd stopped: exit 3 within the bound ----------------------------------------
etcd_stop 0
t0=$(now_ms)
verify_rc 3 --nodes 4 --sync-timeout 1000
t1=$(now_ms)
grep -q 'etcd cannot be reached' "$TMP/v.err" || fail "etcd stopped: $(cat "$TMP/v.err")"
[ $((t1 - t0)) -lt 5000 ] || fail "verify took $((t1 - t0)) ms against a stopped etcd"
note "SIGSTOPped etcd: exit 3 after $((t1 - t0)) ms: $(head -1 "$TMP/v.err")"
etcd_cont 0
for i in 0 1 2 3; do node_umount "$i"; done
etcd_kill 0
t0=$(now_ms)
verify_rc 3 --nodes 4
t1=$(now_ms)
grep -q 'etcd cannot be reached' "$TMP/v.err" || fail "etcd killed: $(cat "$TMP/v.err")"
note "killed etcd: exit 3 after $((t1 - t0)) ms"
sed 's/^/    | /' "$TMP/odd.out" | cut -c1-160 | head -6
echo "verify: all checks passed"
