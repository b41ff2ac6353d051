#!/usr/bin/env bash
# TLS with client certificates and RBAC on a real etcd: the client works
# with a certificate without a CN and a password; a certificate from
# another CA, no certificate, an untrusted server, a wrong password and a
# write outside the user's prefix are clear errors (EACCES); an expired
# token is refreshed without the caller noticing, a watch included. No
# message ever holds the password.
. "$(dirname "$0")/lib.sh"

# Tokens expire after 2 s idle.
etcd_cluster_start 1 tls --auth-token-ttl 2
export APP_PW_ENV="$APP_PW" WRONG_PW_ENV="not-$APP_PW"
app=(--user app --password-env APP_PW_ENV)

# ---- what works ---------------------------------------------------------------------
out=$(drv "${app[@]}" connect : put /app/x v1 : get /app/x : stats) || fail "TLS + user app: $out"
grep -q '^member .* version 3\.' <<<"$out" || fail "connect: $out"
grep -q '^ok ' <<<"$out" && grep -q '^v1calls' <<<"$out" || fail "put/get: $out"
grep -q 'auths 1 reauths 0' <<<"$out" || fail "one authentication expected: $out"
openssl x509 -in "$TLS/client.crt" -noout -subject | grep >/dev/null -v 'CN' || fail "the client certificate has a CN"

# ---- what is refused, and how it says so ---------------------------------------------
expect_error EACCES "permission denied" drv "${app[@]}" put /other/x v
expect_error EACCES "authenticating as 'app': .*authentication failed" \
	drv --user app --password-env WRONG_PW_ENV put /app/x v
expect_error EACCES "user name is empty .*a user and password are needed" drv put /app/x v
# A client certificate the cluster's CA did not sign; none at all.
direct=("$ETCD_DRIVER" --endpoints "$(etcd_endpoints)")
expect_error EACCES "refused our client certificate" "${direct[@]}" --ca "$TLS/ca.crt" \
	--cert "$TLS/other-client.crt" --key "$TLS/other-client.key" "${app[@]}" put /app/x v
expect_error EACCES "refused our client certificate" "${direct[@]}" --ca "$TLS/ca.crt" \
	"${app[@]}" put /app/x v
# The server's certificate, checked against another CA.
expect_error EACCES "server's TLS certificate is not trusted by the CA file" "${direct[@]}" \
	--ca "$TLS/other-ca.crt" --cert "$TLS/client.crt" --key "$TLS/client.key" "${app[@]}" put /app/x v
# Plain http to a TLS member.
expect_error EPROTO "is the endpoint https" \
	"$ETCD_DRIVER" --endpoints "http://$(etcd_endpoint 0)" put /app/x v
# Files that cannot be read: before any request.
expect_error EINVAL "etcd CA file '$TMP/nope.crt': No such file" drv --ca "$TMP/nope.crt" put /app/x v

# ---- an expired token is refreshed -------------------------------------------------------
out=$(drv "${app[@]}" put /app/t 1 : sleep 3500 : put /app/t 2 : get /app/t : stats) ||
	fail "a call after the token expired: $out $(cat "$TMP/err")"
grep -q '^2calls' <<<"$out" || fail "the second put did not land: $out"
grep -q 'auths 2 reauths 1' <<<"$out" || fail "no re-authentication counted: $out"

# A watch outlives its token, and one started after the token expired
# authenticates again.
(drv "${app[@]}" watch /app/w/ 0 1 20 >"$TMP/w1.out") &
w1=$!
(drv "${app[@]}" put /app/t2 a : sleep 3500 : watch /app/w/ 0 1 20 : stats >"$TMP/w2.out") &
w2=$!
wait_line "$TMP/w1.out" '^# created'
sleep 4
r=$(drv "${app[@]}" put /app/w/1 b | sed 's/^ok //')
wait "$w1" || fail "a watch past its token's expiry: $(cat "$TMP/w1.out")"
wait "$w2" || fail "a watch started after the token expired: $(cat "$TMP/w2.out")"
grep -q "^ev $r PUT /app/w/1 " "$TMP/w1.out" || fail "watch 1 missed the put: $(cat "$TMP/w1.out")"
grep -q "^ev $r PUT /app/w/1 " "$TMP/w2.out" || fail "watch 2 missed the put: $(cat "$TMP/w2.out")"
grep -q 'reauths 1' "$TMP/w2.out" || fail "watch 2 did not re-authenticate: $(cat "$TMP/w2.out")"
# A user limited to /app/ may not watch elsewhere.
expect_error EACCES "permission denied" drv "${app[@]}" watch /other/ 0 1 5

# ---- no secret in any message ---------------------------------------------------------------
! grep -qF "$APP_PW" "$TMP/all.err" || fail "a message holds the password"
! grep -qF "$ROOT_PW" "$TMP/all.err" || fail "a message holds root's password"

echo "PASS"
