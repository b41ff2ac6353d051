#!/usr/bin/env bash
# Issue 16, acceptance 5: a secret written on one node never reaches etcd
# (no key, no value: etcdctl get --prefix over every key) nor the other
# nodes, and its node's status says it stays node-local (by name, never
# the value). Secrets: a variable the specs declare secret (HF_TOKEN), and
# a file created with a mode that grants nothing to others (issue 14.14),
# renamed too. A plain write next to them is shared (the control).
. "$(dirname "$0")/mountlib.sh"

etcd_cluster_start 1
node_mount 0
node_mount 1
S1="hf_sekrit$RANDOM$RANDOM"
S2="tok_sekrit$RANDOM$RANDOM"

echo "$S1" >"$(node_dir 0)/HF_TOKEN" || fail "writing HF_TOKEN on node 0"
"$PYTHON" - "$(node_dir 0)/ENVFS_MY_TOKEN" "$S2" <<'PY' || fail "creating a 0600 file on node 0"
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
os.write(fd, (sys.argv[2] + "\n").encode())
os.close(fd)
PY
mv "$(node_dir 0)/ENVFS_MY_TOKEN" "$(node_dir 0)/ENVFS_MY_TOKEN2" || fail "mv of the secret"
# The control: shared, and once node 1 has it, node 1 has seen every
# revision before it.
echo shared-1 >"$(node_dir 0)/ENVFS_PLAIN"
node_wait_value 1 ENVFS_PLAIN shared-1

[ "$(node_read 0 HF_TOKEN)" = "$S1" ] || fail "node 0 lost HF_TOKEN: $(node_read 0 HF_TOKEN)"
[ "$(node_read 0 ENVFS_MY_TOKEN2)" = "$S2" ] || fail "node 0 lost ENVFS_MY_TOKEN2"
[ "$(stat -c %a "$(node_dir 0)/ENVFS_MY_TOKEN2")" = 600 ] || fail "the renamed secret is not 0600"
for n in HF_TOKEN ENVFS_MY_TOKEN ENVFS_MY_TOKEN2; do
	[ "$(node_read 1 $n)" = "<absent>" ] || fail "node 1 has $n: $(node_read 1 $n)"
done

# Every key and value etcd has.
ectl get --prefix "" >"$TMP/all"
grep -q "/overrides/$DIR_BA/ENVFS_PLAIN$" "$TMP/all" || fail "the control is not in etcd: $(cat "$TMP/all")"
# The node records (sync-verify's, for verify) name a secret as set and
# say nothing else of it (docs/SYNC.md, The node record): that entry
# aside, the names are nowhere, as keys or in values.
no_secret_entries() {
	sed -E 's/\{"name":"(HF_TOKEN|ENVFS_MY_TOKEN2?)","secret":true\}//g' "$1"
}
! no_secret_entries "$TMP/all" | grep >/dev/null -E "HF_TOKEN|ENVFS_MY_TOKEN" ||
	fail "a secret's key is in etcd: $(no_secret_entries "$TMP/all" | grep -E 'TOKEN')"
! grep -qF -e "$S1" -e "$S2" "$TMP/all" || fail "a secret's value is in etcd"

# A rewrite and an rm stay local too.
echo "$S1-2" >"$(node_dir 0)/HF_TOKEN"
rm "$(node_dir 0)/ENVFS_MY_TOKEN2"
echo shared-2 >"$(node_dir 0)/ENVFS_PLAIN"
node_wait_value 1 ENVFS_PLAIN shared-2
ectl get --prefix "" >"$TMP/all"
! no_secret_entries "$TMP/all" | grep >/dev/null -E "HF_TOKEN|ENVFS_MY_TOKEN" ||
	fail "a secret's key reached etcd later"
! grep -qF -e "$S1" -e "$S2" "$TMP/all" || fail "a secret's value reached etcd later"
[ "$(node_read 1 HF_TOKEN)" = "<absent>" ] || fail "node 1 has HF_TOKEN"

node_status 0 >"$TMP/st.0"
grep -qx "sync_local $DIR_BA/HF_TOKEN: secret, node-local" "$TMP/st.0" ||
	fail "status does not say HF_TOKEN stays local: $(grep ^sync "$TMP/st.0")"
grep -qx "sync_overrides: local 1 remote 1" "$TMP/st.0" || fail "$(grep ^sync_overrides "$TMP/st.0")"
! grep -qF -e "$S1" -e "$S2" "$TMP/st.0" || fail "status holds a secret"
node_status 1 >"$TMP/st.1"
grep -qx "sync_overrides: local 0 remote 1" "$TMP/st.1" || fail "node 1: $(grep ^sync_overrides "$TMP/st.1")"
! grep -q "^sync_local" "$TMP/st.1" || fail "node 1 lists a local override: $(grep ^sync_local "$TMP/st.1")"
# An rm of a secret a lower layer sets (here --env, from each node's own
# environment) is an unset override: node-local too. Sent, it would put
# the secret's key in etcd and take every other node's token away.
HF_TOKEN="$S1-n2" node_mount 2 --env HF_TOKEN
HF_TOKEN="$S1-n3" node_mount 3 --env HF_TOKEN
rm "$(node_dir 2)/HF_TOKEN" || fail "rm HF_TOKEN on node 2"
[ "$(node_read 2 HF_TOKEN)" = "<absent>" ] || fail "node 2 still has HF_TOKEN"
echo shared-3 >"$(node_dir 2)/ENVFS_PLAIN"
node_wait_value 3 ENVFS_PLAIN shared-3
[ "$(node_read 3 HF_TOKEN)" = "$S1-n3" ] || fail "node 2's rm of HF_TOKEN reached node 3"
ectl get --prefix "" >"$TMP/all"
! no_secret_entries "$TMP/all" | grep >/dev/null -E "HF_TOKEN" ||
	fail "the rm of a secret put its key in etcd: $(no_secret_entries "$TMP/all" | grep HF_TOKEN)"

# A private override over the run's shared value: its rm or mv is this
# node's alone. They deleted the run's key, taking the value from every
# other node (found by an attack); the node takes the run's value back.
key="/primus-envfs/runs/$RUN/overrides/$DIR_BA/ENVFS_PRIV_X"
echo shared-x >"$(node_dir 1)/ENVFS_PRIV_X"
node_wait_value 0 ENVFS_PRIV_X shared-x
chmod 600 "$(node_dir 0)/ENVFS_PRIV_X" || fail "chmod 600 on node 0"
echo mine-x >"$(node_dir 0)/ENVFS_PRIV_X"
[ "$(ectl get "$key" --print-value-only)" = "=shared-x" ] || fail "node 0's private write reached etcd"
rm "$(node_dir 0)/ENVFS_PRIV_X" || fail "rm of the private override on node 0"
[ "$(ectl get "$key" --print-value-only)" = "=shared-x" ] ||
	fail "the rm of node 0's private override deleted the run's key: $(ectl get "$key")"
[ "$(node_read 0 ENVFS_PRIV_X)" = shared-x ] || fail "node 0 after its rm: $(node_read 0 ENVFS_PRIV_X), not the run's"
! node_status 0 | grep -q "^sync_local $DIR_BA/ENVFS_PRIV_X:" ||
	fail "node 0's status still keeps the run's value local: $(node_status 0 | grep ENVFS_PRIV_X)"
echo shared-y >"$(node_dir 1)/ENVFS_PLAIN"
node_wait_value 0 ENVFS_PLAIN shared-y
[ "$(node_read 1 ENVFS_PRIV_X)" = shared-x ] || fail "node 1 lost the run's value: $(node_read 1 ENVFS_PRIV_X)"
chmod 600 "$(node_dir 0)/ENVFS_PRIV_X" && echo mine-x2 >"$(node_dir 0)/ENVFS_PRIV_X" ||
	fail "the private override again"
mv "$(node_dir 0)/ENVFS_PRIV_X" "$(node_dir 0)/ENVFS_PRIV_Z" || fail "mv of the private override"
[ "$(ectl get "$key" --print-value-only)" = "=shared-x" ] ||
	fail "the mv of node 0's private override deleted the run's key"
[ -z "$(ectl get "${key%X}Z")" ] || fail "the mv put the private value's key in etcd"
[ "$(node_read 0 ENVFS_PRIV_Z)" = mine-x2 ] && [ "$(node_read 0 ENVFS_PRIV_X)" = shared-x ] ||
	fail "node 0 after its mv: Z=$(node_read 0 ENVFS_PRIV_Z) X=$(node_read 0 ENVFS_PRIV_X)"
for i in 0 1 2 3; do node_umount "$i"; done
! grep -qF -e "$S1" -e "$S2" "${NODE_ERR_FILES[@]}" "$TMP"/etcd.*.log || fail "a log holds a secret"
echo "ok"
