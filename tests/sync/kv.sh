#!/usr/bin/env bash
# Keys on a real 3-member etcd cluster, through the client (etcd_driver):
# values round-trip byte for byte, ranges stop at the prefix, CAS and
# create-exclusive hold on revisions, a move is one revision, and errors
# are clear. Prints put and watch-visible latencies (not asserted).
. "$(dirname "$0")/lib.sh"

etcd_cluster_start 3

# ---- values round-trip, binary included ------------------------------------
printf 'line one\nline two\n\0after a NUL \xff\xfe\xc3\x28 not UTF-8\n' >"$TMP/v.bin"
for i in $(seq 0 255); do printf "\\$(printf %03o "$i")"; done >>"$TMP/v.bin"
drv put-file /t/a/b/c/d "$TMP/v.bin" >/dev/null
drv get /t/a/b/c/d >"$TMP/v.out"
cmp "$TMP/v.bin" "$TMP/v.out" || fail "binary value did not round-trip"
# Read through another member: the same bytes.
DRV_ENDPOINTS=$(etcd_endpoints 2) drv get /t/a/b/c/d | cmp - "$TMP/v.bin" ||
	fail "binary value differs on member 2"

# A key with spaces and UTF-8, and an empty value.
drv put "/t/k é x" "v1" >/dev/null
[ "$(drv get "/t/k é x")" = v1 ] || fail "UTF-8 key"
: >"$TMP/empty"
drv put-file /t/empty "$TMP/empty" >/dev/null
drv meta /t/empty | grep >/dev/null ' len 0 ' || fail "empty value: $(drv meta /t/empty)"
[ "$(drv get /t/empty | wc -c)" = 0 ] || fail "empty value read back non-empty"
# 1 MiB of random bytes.
head -c 1048576 /dev/urandom >"$TMP/big"
drv put-file /t/big "$TMP/big" >/dev/null
drv get /t/big | cmp - "$TMP/big" || fail "1 MiB value"

# A missing key: exit 1, nothing on stdout.
rc=0
out=$(drv get /t/none 2>"$TMP/err") || rc=$?
[ "$rc" = 1 ] && [ -z "$out" ] || fail "missing key: rc $rc, '$out'"
grep -q 'missing /t/none' "$TMP/err" || fail "missing key message"

# ---- revisions -----------------------------------------------------------
r1=$(drv put /t/rev one | sed 's/^ok //')
r2=$(drv put /t/rev two | sed 's/^ok //')
[ "$r2" -gt "$r1" ] || fail "revisions do not grow: $r1 then $r2"
meta=$(drv meta /t/rev)
[[ $meta == "create $r1 mod $r2 version 2 "* ]] || fail "meta: $meta"

# ---- ranges stop at the prefix -----------------------------------------------
for k in /p/a /p/b /p/c/d /p0 /pa /o; do drv put "$k" "x$k" >/dev/null; done
out=$(drv range /p/)
keys=$(sed 1d <<<"$out" | cut -d' ' -f1 | tr '\n' ' ')
[ "$keys" = "/p/a /p/b /p/c/d " ] || fail "range /p/: '$keys'"
head -1 <<<"$out" | grep >/dev/null ' n 3 more 0$' || fail "range header: $(head -1 <<<"$out")"
# The value column is hex: x/p/a.
grep -q "^/p/a [0-9]* $(printf 'x/p/a' | od -An -tx1 | tr -d ' \n')$" <<<"$out" ||
	fail "range values: $out"
out=$(drv range /p/ 2)
head -1 <<<"$out" | grep >/dev/null ' n 2 more 1$' || fail "range limit 2: $(head -1 <<<"$out")"

# ---- delete ------------------------------------------------------------------
out=$(drv del /p/a)
[ "$out" = "deleted 1 rev $(etcd_revision)" ] || fail "delete /p/a: '$out'"
drv del /p/a | grep >/dev/null '^deleted 0 ' || fail "delete of a missing key"
drv delp /p/ | grep >/dev/null '^deleted 2 ' || fail "delete --prefix /p/"
drv range /p | sed 1d | cut -d' ' -f1 | tr '\n' ' ' | grep >/dev/null -x '/p0 /pa ' ||
	fail "delete --prefix /p/ went past its prefix"

# ---- compare-and-swap ----------------------------------------------------------
mod=$(drv meta /t/rev | awk '{print $4}')
rc=0
out=$(drv cas /t/rev stale $((mod - 1))) || rc=$?
[ "$rc" = 1 ] && [[ $out == "failed "* ]] || fail "CAS on a stale revision: rc $rc '$out'"
[ "$(drv get /t/rev)" = two ] || fail "a failed CAS changed the value"
out=$(drv cas /t/rev three "$mod")
[[ $out == "ok "* ]] || fail "CAS on the current revision: '$out'"
[ "$(drv get /t/rev)" = three ] || fail "CAS did not write"
# The revision the txn reports is the key's new mod_revision.
[ "$(drv meta /t/rev | awk '{print $4}')" = "${out#ok }" ] || fail "CAS revision"

# ---- create-exclusive ---------------------------------------------------------
[[ $(drv create /t/once first) == "ok "* ]] || fail "create on a new key"
rc=0
out=$(drv create /t/once second) || rc=$?
[ "$rc" = 1 ] && [[ $out == "failed "* ]] || fail "create on an existing key: rc $rc '$out'"
[ "$(drv get /t/once)" = first ] || fail "create-exclusive overwrote"

# ---- atomic move ---------------------------------------------------------------
drv put /m/a moved >/dev/null
(drv watch /m/ 0 2 20 >"$TMP/mv.watch") &
wpid=$!
for _ in $(seq 1 100); do grep -q '^# created' "$TMP/mv.watch" 2>/dev/null && break; sleep 0.05; done
out=$(drv mv /m/a /m/b)
[[ $out == "ok "* ]] || fail "mv: '$out'"
rev=${out#ok }
[ "$(drv get /m/b)" = moved ] || fail "mv: the destination does not hold the value"
rc=0
drv get /m/a >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "mv: the source is still there"
wait "$wpid" || fail "the watcher of the move failed: $(cat "$TMP/mv.watch")"
# Both changes are one revision: the put and the delete.
grep -q "^ev $rev PUT /m/b " "$TMP/mv.watch" || fail "mv: no PUT at $rev: $(cat "$TMP/mv.watch")"
grep -q "^ev $rev DELETE /m/a " "$TMP/mv.watch" || fail "mv: no DELETE at $rev"
# Onto an existing key, or from a changed source: nothing moves.
drv put /m/c other >/dev/null
rc=0
out=$(drv mv /m/b /m/c) || rc=$?
[ "$rc" = 1 ] && [[ $out == "failed "* ]] || fail "mv onto an existing key: rc $rc '$out'"
[ "$(drv get /m/b)" = moved ] && [ "$(drv get /m/c)" = other ] || fail "a failed mv changed keys"

# ---- errors ----------------------------------------------------------------------
# Nothing listens: refused within the bound, naming the endpoint.
DRV_ENDPOINTS=127.0.0.1:1 expect_error ECONNREFUSED \
	'etcd put /x: 127\.0\.0\.1:1: Connection refused' drv put /x y
[ "$ERR_MS" -le 3000 ] || fail "refused endpoint took $ERR_MS ms (bound 2000)"
# A dead endpoint first: the call goes on to the live ones.
DRV_ENDPOINTS="127.0.0.1:1,$(etcd_endpoints)" drv put /x y : stats >"$TMP/out" ||
	fail "a dead first endpoint was not skipped"
grep -q 'failovers 1 ' "$TMP/out" || fail "no failover counted: $(cat "$TMP/out")"
# Bad endpoint lists: EINVAL before any request.
for bad in "etcd://" "h1" "h1:0" "h1:2379,,h2:1" "ftp://h:1"; do
	DRV_ENDPOINTS=$bad expect_error EINVAL "etcd endpoints '$bad': " drv put /x y
done
# Over etcd's request limit (1.5 MiB by default).
head -c 2000000 /dev/urandom >"$TMP/huge"
expect_error EMSGSIZE 'request is too large' drv put-file /t/huge "$TMP/huge"
# An empty key is refused locally.
expect_error EINVAL "etcd put '': empty key" drv put "" x
# Something that is not etcd on the port: a clear protocol error.
python3 -c 'import http.server,sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(s):
        s.send_response(404); s.end_headers(); s.wfile.write(b"nope")
    def log_message(s, *a): pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()' >"$TMP/http.port" &
hpid=$!
for _ in $(seq 1 100); do [ -s "$TMP/http.port" ] && break; sleep 0.05; done
DRV_ENDPOINTS="127.0.0.1:$(cat "$TMP/http.port")" expect_error EPROTO \
	'HTTP 404: not an etcd v3 JSON gateway' drv put /x y
kill "$hpid"
wait "$hpid" 2>/dev/null || true

# ---- latencies (printed, not asserted) ----------------------------------------
out=$(drv bench 300) || fail "bench: $out"
note "3 members, put through member 0, watched through member 1: $out"
grep -q ' unseen 0$' <<<"$out" || fail "the watcher missed puts: $out"

echo "PASS"
