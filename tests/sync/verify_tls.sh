#!/usr/bin/env bash
# primus-envfs verify on a cluster with client-certificate TLS and RBAC,
# as a user whose role may use the prefix /app/ only (issue 16): two
# mounts register and verify reads them (exit 0) with the same options a
# mount takes; a wrong password, a certificate outside the CA and a
# prefix outside the role are exit 3 with one line that never holds the
# password; the password on the command line is refused (64).
. "$(dirname "$0")/mountlib.sh"

etcd_cluster_start 1 tls
printf '%s\n' "$APP_PW" >"$TMP/app.pw"
chmod 600 "$TMP/app.pw"
AUTH=(--sync-prefix /app --sync-user app --sync-password-file "$TMP/app.pw")
TLSO=(--sync-ca "$TLS/ca.crt" --sync-cert "$TLS/client.crt" --sync-key "$TLS/client.key")
EP=$(etcd_endpoints)

node_mount 0 --specs "$ENVFS_SPECS" --env NNODES=2 "${AUTH[@]}"
node_mount 1 --specs "$ENVFS_SPECS" --env NNODES=2 "${AUTH[@]}"

# verify_rc WANT ARG...: verify of the run with ARGs; out/err in $TMP/v.*.
verify_rc() {
	local want=$1 rc=0
	shift
	"$ENVFS_BIN" verify --sync "etcd://$EP" --run "$RUN" "$@" >"$TMP/v.out" 2>"$TMP/v.err" ||
		rc=$?
	cat "$TMP/v.err" >>"$TMP/all.err"
	[ "$rc" = "$want" ] || fail "verify ${*: -3}: exit $rc, want $want: $(cat "$TMP/v.out" "$TMP/v.err")"
}

verify_rc 0 --nodes 2 --wait 10 "${TLSO[@]}" "${AUTH[@]}"
grep -q "^verify: run $RUN: 2 nodes registered and equal (17 directories compared)$" "$TMP/v.out" ||
	fail "verify over TLS: $(cat "$TMP/v.out")"
# The password from the environment works too, and leaves no trace.
PRIMUS_ENVFS_SYNC_PASSWORD=$APP_PW verify_rc 0 --nodes 2 "${TLSO[@]}" --sync-prefix /app \
	--sync-user app

printf 'not-%s\n' "$APP_PW" >"$TMP/wrong.pw"
verify_rc 3 --nodes 2 "${TLSO[@]}" --sync-prefix /app --sync-user app \
	--sync-password-file "$TMP/wrong.pw"
grep -q "authentication failed" "$TMP/v.err" || fail "wrong password: $(cat "$TMP/v.err")"
verify_rc 3 --nodes 2 --sync-ca "$TLS/ca.crt" --sync-cert "$TLS/other-client.crt" \
	--sync-key "$TLS/other-client.key" "${AUTH[@]}"
grep -q "refused our client certificate" "$TMP/v.err" || fail "foreign certificate: $(cat "$TMP/v.err")"
# A prefix outside the role: etcd refuses the read.
verify_rc 3 --nodes 2 "${TLSO[@]}" --sync-user app --sync-password-file "$TMP/app.pw"
grep -q "^primus-envfs: verify: reading /primus-envfs/runs/$RUN/nodes/: " "$TMP/v.err" ||
	fail "a prefix outside the role: $(cat "$TMP/v.err")"
verify_rc 64 --nodes 2 "${TLSO[@]}" --sync-user app --sync-password "$APP_PW"
! grep -qF -- "$APP_PW" "$TMP/all.err" || fail "a message holds the password"
echo "verify_tls: all checks passed"
