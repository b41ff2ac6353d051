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
#   - a node whose environment carries an error (NODE_RANK >= NNODES):
#     exit 1, naming the node and the error once, with its directories;
#   - every difference listed once, with the directories it applies to;
#   - names from etcd (keys, node, backend and arch names) printed
#     escaped: a key holding a newline and ESC[2J forges no line;
#   - etcd stopped: exit 3, within the --sync-timeout bound.
. "$(dirname "$0")/mountlib.sh"

IMG=$ENVFS_FIXTURES/node
etcd_cluster_start 1
EP=$(etcd_endpoints)

# The verify process ends on its own: never a hang.
N4=(--env NNODES=4)
node_mount 0 --specs "$ENVFS_SPECS" "${N4[@]}" --inherit "$IMG/image-a.env"
node_mount 1 --specs "$ENVFS_SPECS" "${N4[@]}" --inherit "$IMG/image-a.env"
node_mount 2 --specs "$ENVFS_SPECS" "${N4[@]}" --inherit "$IMG/image-a.env"

# ---- --wait: a gate started before the last node mounts ----------------------------
"$ENVFS_BIN" verify --sync "etcd://$EP" --run "$RUN" --nodes 4 --wait 30 \
	>"$TMP/w.out" 2>"$TMP/w.err" &
WPID=$!
sleep 0.5
node_mount 3 --specs "$ENVFS_SPECS" "${N4[@]}" --inherit "$IMG/image-a.env"
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
summary_key="/primus-envfs/runs/$RUN/nodes/node3"
ectl get "$summary_key" --print-value-only >"$TMP/ghost.summary"
[ -s "$TMP/ghost.summary" ] || fail "node 3 has no summary to copy"
node_umount 3
# Unmounted: its lease is revoked, so it is gone at once, not in 10 s.
verify_rc 2 --nodes 4
grep -q "^verify: run $RUN: 3 nodes registered, --nodes says 4: node0 node1 node2$" \
	"$TMP/v.out" || fail "after unmounting node 3: $(cat "$TMP/v.out")"
# Its record put back under no lease (by hand, or left by a restore): no
# mount keeps it, so it is no node. It was counted, and made the missing
# node look present (verify exited 0).
ectl put "$summary_key" <"$TMP/ghost.summary" >/dev/null
verify_rc 2 --nodes 4
grep -q "^verify: run $RUN: 3 nodes registered, --nodes says 4: node0 node1 node2$" \
	"$TMP/v.out" || fail "a lease-less record counted as a node: $(cat "$TMP/v.out")"
grep -q "node3: a record under no lease (no mount keeps it" "$TMP/v.err" ||
	fail "the lease-less record is not named: $(cat "$TMP/v.err")"
ectl del "$summary_key" >/dev/null
# A key deeper under nodes/ is no node's record: named, not counted.
ectl put "$summary_key/extra" "x" >/dev/null
verify_rc 2 --nodes 4
grep -q "runs/$RUN/nodes/node3/extra: not a node's record" "$TMP/v.err" ||
	fail "a key under a node's name is not named: $(cat "$TMP/v.err")"
ectl del "$summary_key/extra" >/dev/null
node_mount 3 --specs "$ENVFS_SPECS" "${N4[@]}" --inherit "$IMG/image-b.env"
verify_rc 1 --nodes 4 --wait 10
cp "$TMP/v.out" "$TMP/odd.out"
grep -q "^verify: run $RUN: 4 nodes registered, 1 differs from the 3 that agree (node0 node1 node2)$" \
	"$TMP/v.out" || fail "verify: $(cat "$TMP/v.out")"
grep -q '^node3: differs from node0:$' "$TMP/v.out" || fail "node3 is not named: $(cat "$TMP/v.out")"
# Each difference once, with the directories it applies to (the image
# is inherited by every directory; maxtext's specs add flags to it): not
# once per directory.
grep -Eq '^  XLA_FLAGS: node3 "--xla_image=2 [^"]*", node0 "--xla_image=1 [^"]*" \[maxtext/gfx942 maxtext/gfx950\]$' \
	"$TMP/v.out" && grep -q '^  XLA_FLAGS: node3 "--xla_image=2", node0 "--xla_image=1" \[maxdiffusion/gfx942 .* and 7 more\]$' \
	"$TMP/v.out" || fail "XLA_FLAGS with both values is not named once: $(cat "$TMP/v.out")"
# A long value that differs at its end is shown from a little before the
# difference, not as the same first 300 bytes twice.
grep -q '^  IMAGE_PATH: node3 \.\.\."/opt/hpcx/ompi/lib:/opt/image-b", node0 \.\.\."/opt/hpcx/ompi/lib:/opt/image-a" \[all 17 directories\]$' \
	"$TMP/v.out" || fail "IMAGE_PATH is not shown at its difference: $(grep IMAGE_PATH "$TMP/v.out")"
# Only these two differ, each pair of values said once.
[ "$(grep -c '^  ' "$TMP/v.out")" = 3 ] ||
	fail "verify names more than XLA_FLAGS and IMAGE_PATH once each: $(cat "$TMP/v.out")"
# -b and -a select what is compared.
verify_rc 1 --nodes 4 -b maxtext
[ "$(grep -c '^  XLA_FLAGS: .* \[all 2 directories\]$' "$TMP/v.out")" = 1 ] &&
	[ "$(grep -c '^  ' "$TMP/v.out")" = 2 ] || fail "-b maxtext: $(cat "$TMP/v.out")"
verify_rc 1 --nodes 4 -b maxtext -a gfx950
[ "$(grep -c '^  .* \[maxtext/gfx950\]$' "$TMP/v.out")" = 2 ] &&
	[ "$(grep -c '^  ' "$TMP/v.out")" = 2 ] || fail "-b maxtext -a gfx950: $(cat "$TMP/v.out")"
# A gate that would compare nothing fails: a misspelt backend.
verify_rc 64 --nodes 4 -b maxtxt
grep -q "node0 serves no directory maxtxt/\*" "$TMP/v.err" || fail "-b maxtxt: $(cat "$TMP/v.err")"

# ---- a secret: by name only, in etcd and in what verify prints ---------------------
node_umount 3
TOKEN="hf_verify_$RANDOM$RANDOM"
HF_TOKEN=$TOKEN node_mount 3 --specs "$ENVFS_SPECS" "${N4[@]}" --inherit "$IMG/image-a.env"
[ "$(node_read 3 HF_TOKEN)" = "$TOKEN" ] || fail "node 3 does not serve its HF_TOKEN"
verify_rc 1 --nodes 4 --wait 10 -b maxtext -a gfx950
grep -q '^  HF_TOKEN: node3 set (secret: value not published), node0 unset \[maxtext/gfx950\]$' \
	"$TMP/v.out" || fail "the secret's difference: $(cat "$TMP/v.out")"
[ "$(grep -c '^  ' "$TMP/v.out")" = 1 ] || fail "more than HF_TOKEN differs: $(cat "$TMP/v.out")"
ectl get --prefix "/primus-envfs/runs/$RUN/" >"$TMP/all.kv"
grep -q '"name":"HF_TOKEN","secret":true}' "$TMP/all.kv" || fail "no HF_TOKEN entry in node3's record"
! grep -q "$TOKEN" "$TMP/all.kv" "$TMP/v.out" "$TMP/v.err" || fail "the token's value is in etcd or verify's output"
# Nor a hash of it: the token's SHA-256 is nowhere.
th=$(printf '%s' "$TOKEN" | sha256sum | cut -d' ' -f1)
! grep -q "$th" "$TMP/all.kv" || fail "the token's SHA-256 is in etcd"

# ---- the gate: a node whose environment carries an error --------------------------
# NODE_RANK 4 with NNODES 4: the launcher exits on that node. Its digest
# equals the others' (NODE_RANK is scope: node), yet the gate fails,
# naming the node and the error once, with its directories.
node_mount 4 --specs "$ENVFS_SPECS" "${N4[@]}" --inherit "$IMG/image-a.env"
verify_rc 1 --nodes 5 --wait 10 -b maxtext
grep -q "^verify: run $RUN: 5 nodes registered, 1 differs from the 4 that agree (node0 node1 node2 node4); 1 with errors (node4)$" \
	"$TMP/v.out" || fail "the gate's verdict with an error: $(cat "$TMP/v.out")"
grep -q '^node4: errors in its environment:$' "$TMP/v.out" ||
	fail "node4's errors are not named: $(cat "$TMP/v.out")"
[ "$(grep -c 'NODE_RANK (4) must be < NNODES (4)' "$TMP/v.out")" = 1 ] &&
	grep -q '^  .*: error: NODE_RANK (4) must be < NNODES (4): .* \[all 2 directories\]$' "$TMP/v.out" ||
	fail "the NODE_RANK error is not named once with its directories: $(cat "$TMP/v.out")"
node_umount 4
verify_rc 1 --nodes 4 -b maxtext -a gfx950
! grep -q 'errors' "$TMP/v.out" || fail "errors named without node4: $(cat "$TMP/v.out")"

# ---- records that cannot be read: named, never a crash ---------------------------
# Under a lease, as a mount puts its record (one under none is no node).
R2=/primus-envfs/runs/$RUN-bad/nodes
L2=$(ectl lease grant 600 | sed -n 's/^lease \([0-9a-f]*\) granted.*/\1/p')
[ -n "$L2" ] || fail "no lease for the forged records"
lput() { ectl put --lease="$L2" "$@" >/dev/null; }
sum0=$(ectl get "/primus-envfs/runs/$RUN/nodes/node0" --print-value-only)
lput "$R2/node0" "$sum0"
lput "$R2/bad" '{"format":1,"node":'
lput "$R2/liar" "$sum0"
lput "$R2/future" '{"format":2,"node":"future"}'
# Names from etcd are printed escaped: a key holding a newline and ESC[2J,
# and a record whose version, backend and arch hold control bytes.
forged=$(printf 'x\nverify: run %s: 4 nodes registered and equal (17 directories compared)\033[2J' "$RUN-bad")
lput "$R2/$forged" "$sum0"
z64=0000000000000000000000000000000000000000000000000000000000000000
lput "$R2/zesc" '{"format":1,"node":"zesc","version":"1\u001b]0;pwn\u0007","revision":1,"when_ms":1,"dirs":[{"backend":"a\u001b[2Jb","arch":"x\ny","digest":"'$z64'","vars":0,"secrets":0,"errors":["e\u001b[2J\nverify: forged"],"nerrors":1}]}'
rc=0
"$ENVFS_BIN" verify --sync "etcd://$EP" --run "$RUN-bad" --nodes 6 >"$TMP/v.out" 2>"$TMP/v.err" || rc=$?
[ "$rc" = 1 ] || fail "verify of unreadable records: exit $rc: $(cat "$TMP/v.out" "$TMP/v.err")"
grep -q '^bad: differs from node0:$' "$TMP/v.out" &&
	grep -q '^  its record cannot be read: not a JSON object$' "$TMP/v.out" &&
	grep -q "^  its record cannot be read: the record names node 'node0'$" "$TMP/v.out" &&
	grep -q '^  its record cannot be read: format is not 1$' "$TMP/v.out" ||
	fail "unreadable records: $(cat "$TMP/v.out")"
! grep -q "$(printf '\033')" "$TMP/v.out" "$TMP/v.err" || fail "an ESC byte from etcd was printed: $(cat -v "$TMP/v.out")"
! grep -q '^verify: run [^ ]*: 4 nodes registered and equal' "$TMP/v.out" ||
	fail "a key forged a verdict line: $(cat -v "$TMP/v.out")"
grep -Fq 'x\nverify: run '"$RUN-bad"': 4 nodes registered and equal (17 directories compared)\x1b[2J' "$TMP/v.out" &&
	grep -Fq 'a\x1b[2Jb/x\ny' "$TMP/v.out" && grep -Fq 'e\x1b[2J\nverify: forged' "$TMP/v.out" ||
	fail "the names from etcd are not shown escaped: $(cat -v "$TMP/v.out")"

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
"$ENVFS_BIN" verify --help | grep >/dev/null '^Exit status: 0 N nodes registered and equal' ||
	fail "verify --help has no exit statuses"

# ---- a record built while etcd is away is put once it is back --------------------
cp "$IMG/image-a.env" "$TMP/img.env"
node_mount 5 --specs "$ENVFS_SPECS" --env NNODES=8 --inherit "$TMP/img.env" --run "$RUN-away"
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
		grep >/dev/null '"name":"IMAGE_VAR","hash":"[0-9a-f]*","len":18,"value":"changed-while-away"'; then
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
