#!/usr/bin/env bash
# Leases on a real etcd: a key put with a lease goes when the lease
# expires, stays while keepalives come, and goes at once on revoke.
. "$(dirname "$0")/lib.sh"

etcd_cluster_start 1

# wait_gone KEY BUDGET_S: waits until KEY does not exist.
wait_gone() {
	local t rc
	for t in $(seq 1 $(($2 * 10))); do
		rc=0
		drv get "$1" >/dev/null 2>&1 || rc=$?
		[ "$rc" = 1 ] && return 0
		[ "$rc" = 0 ] || fail "get $1: rc $rc"
		sleep 0.1
	done
	fail "$1 still exists after $2 s"
}

# ---- expiry ------------------------------------------------------------------
out=$(drv lease-grant 2 : put /l/a v last : meta /l/a)
id=$(sed -n 's/^lease \([0-9]*\) ttl 2$/\1/p' <<<"$out")
[ -n "$id" ] || fail "lease grant: $out"
grep -q "lease $id len 1 " <<<"$out" || fail "the key is not on the lease: $out"
t0=$(now_ms)
wait_gone /l/a 6
note "a key on a 2 s lease went after $(($(now_ms) - t0)) ms"
expect_error ENOENT 'no such lease' drv lease-keepalive "$id"
expect_error ENOENT 'no such lease' drv lease-ttl "$id"

# A TTL under etcd's minimum is raised to it.
out=$(drv lease-grant 1 : lease-ttl last)
grep -q '^remaining [0-9]* granted 2$' <<<"$out" || fail "a 1 s lease: $out"

# ---- keepalive keeps the key -----------------------------------------------------
# A 6 s lease held for 9 s, each keepalive bounded at 4 s: on a loaded
# machine a member can take over 2 s to answer one, which is no failure
# of the keepalives (a 2 s lease and the default 2 s bound made it one).
out=$(drv lease-grant 6 : put /l/b v last)
id=$(sed -n 's/^lease \([0-9]*\) ttl 6$/\1/p' <<<"$out")
[ -n "$id" ] || fail "lease grant: $out"
out=$(drv --total-ms 4000 lease-hold "$id" 9 2>&1) || fail "keepalives: $out"
note "9 s of keepalives on a 6 s lease: $out"
[ "$(drv get /l/b)" = v ] || fail "the key went although keepalives came"
out=$(drv lease-ttl "$id")
grep -Eq '^remaining [1-6] granted 6$' <<<"$out" || fail "ttl after keepalives: $out"

# ---- revoke deletes at once ------------------------------------------------------------
drv lease-revoke "$id" | grep >/dev/null '^revoked$' || fail "revoke"
rc=0
drv get /l/b >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "the key outlived its revoked lease"
expect_error ENOENT 'lease not found' drv lease-revoke "$id"

# A put on a lease that does not exist.
expect_error ENOENT 'lease not found' drv put /l/c v 12345

echo "PASS"
