#!/usr/bin/env bash
# Issue 16, acceptance 4: mounts with --sync on a 3-member cluster with
# client-certificate TLS and RBAC, as a user whose role may use the
# prefix /app/ only. Works with the right files and password; a wrong
# password, a certificate the CA did not sign, a CA that did not sign the
# server, and a prefix outside the role are each one clear line at mount
# (exit 2, nothing mounted); an expired token is refreshed without losing
# the watch. No message holds the password.
. "$(dirname "$0")/mountlib.sh"

# Tokens expire after 2 s idle.
etcd_cluster_start 3 tls --auth-token-ttl 2
printf '%s\n' "$APP_PW" >"$TMP/app.pw"
chmod 600 "$TMP/app.pw"
AUTH=(--sync-prefix /app --sync-user app --sync-password-file "$TMP/app.pw")

# mount_fails REGEX ARG...: a mount of node 9 with ARGs exits 2 within
# 20 s, says REGEX in one line, and mounts nothing.
mount_fails() {
	local re=$1 rc=0 m="$TMP/mnt.fail"
	shift
	mkdir -p "$m"
	node_args 9
	timeout 20 "$ENVFS_BIN" --state "$TMP/state.fail" "${NODE_ARGS[@]}" "$@" -f "$m" \
		>"$TMP/fail.out" 2>"$TMP/fail.err" || rc=$?
	cat "$TMP/fail.err" >>"$TMP/all.err"
	! mountpoint -q "$m" || { fusermount3 -u "$m"; fail "mounted with $*"; }
	[ "$rc" = 2 ] || fail "mount with ${*: -2}: exit $rc, want 2: $(cat "$TMP/fail.err")"
	[ "$(wc -l <"$TMP/fail.err")" = 1 ] || fail "more than one line: $(cat "$TMP/fail.err")"
	grep -Eq -- "$re" "$TMP/fail.err" || fail "want /$re/, got: $(cat "$TMP/fail.err")"
	note "refused: $(cat "$TMP/fail.err")"
}

# ---- refused at mount ---------------------------------------------------------------
printf 'not-%s\n' "$APP_PW" >"$TMP/wrong.pw"
mount_fails "^primus-envfs: --sync .*authenticating as 'app': .*authentication failed" \
	--sync-prefix /app --sync-user app --sync-password-file "$TMP/wrong.pw"
mount_fails "^primus-envfs: --sync .*refused our client certificate" \
	"${AUTH[@]}" --sync-cert "$TLS/other-client.crt" --sync-key "$TLS/other-client.key"
mount_fails "^primus-envfs: --sync .*server's TLS certificate is not trusted by the CA file" \
	"${AUTH[@]}" --sync-ca "$TLS/other-ca.crt"
# The first key a mount touches under the prefix is its node name's.
mount_fails "^primus-envfs: --sync-node node[0-9]+: cannot take the name: etcd txn /other/runs/.*permission denied" \
	--sync-prefix /other --sync-user app --sync-password-file "$TMP/app.pw"
! grep -qF "$APP_PW" "$TMP/all.err" || fail "a message holds the password"

# ---- works with the right ones; the token expires, the watch stays --------------------
node_mount 0 "${AUTH[@]}"
node_mount 1 "${AUTH[@]}"
V=NVTE_DEBUG_LEVEL
echo 3 >"$(node_dir 0)/$V"
node_wait_value 1 $V 3
ectl get --prefix /app/runs/ --keys-only | grep >/dev/null "^/app/runs/$RUN/overrides/$DIR_BA/$V$" ||
	fail "no key under /app: $(ectl get --prefix /app/ --keys-only)"
# Idle past the token's TTL, on both the writer's and the watcher's side.
sleep 4
echo 4 >"$(node_dir 0)/$V" || fail "a write after the token expired failed: $(node_status 0 | grep ^sync_last)"
node_wait_value 1 $V 4 10
echo 5 >"$(node_dir 1)/$V" || fail "node 1's write after the token expired failed"
node_wait_value 0 $V 5 10
for i in 0 1; do
	node_status "$i" >"$TMP/st.$i"
	grep -qx "sync_connected: yes" "$TMP/st.$i" || fail "node $i: $(grep ^sync "$TMP/st.$i")"
	grep -qx "sync_resyncs: 0" "$TMP/st.$i" || fail "node $i re-read: $(grep ^sync "$TMP/st.$i")"
	! grep -qF "$APP_PW" "$TMP/st.$i" || fail "status holds the password"
done
for i in 0 1; do node_umount "$i"; done
! grep -qF "$APP_PW" "${NODE_ERR_FILES[@]}" || fail "a daemon's stderr holds the password"
echo "ok"
