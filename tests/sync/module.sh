#!/usr/bin/env bash
# The sync module and its options (issue 16): only --sync loads
# primus-envfs-sync.so and, through it, libcurl; everything else runs
# without either (the executable does not link them: docs/PERFORMANCE.md).
# Bad sync options are one line and exit 64; a module that cannot be
# loaded, or a cluster that cannot be reached, one line and exit 2 (at
# once where nothing listens; a cluster that accepts and does not answer
# is tried again within the start-up budget).
. "$(dirname "$0")/mountlib.sh"

BIN=$ENVFS_BIN
etcd_cluster_start 1
EP=$(etcd_endpoints)

# ---- the executable links neither libcurl nor json-c ----------------------------
ldd "$BIN" >"$TMP/ldd" || fail "ldd $BIN"
! grep -Eq 'libcurl|libjson-c' "$TMP/ldd" || fail "primus-envfs links: $(grep -E 'curl|json' "$TMP/ldd")"
# ... nor loads them for resolve: the dynamic loader's own account.
LD_DEBUG=files "$BIN" resolve -b maxtext -a gfx950 >/dev/null 2>"$TMP/ld.resolve" ||
	fail "resolve failed: $(tail -3 "$TMP/ld.resolve")"
grep -q 'file=libc.so' "$TMP/ld.resolve" || fail "LD_DEBUG=files shows no library at all"
! grep -Eq 'file=[^ ]*(libcurl|primus-envfs-sync)' "$TMP/ld.resolve" ||
	fail "resolve loaded: $(grep -E 'file=[^ ]*(curl|sync)' "$TMP/ld.resolve" | head -3)"
note "resolve maps $(grep -c 'calling init' "$TMP/ld.resolve") libraries, no libcurl"

# maps_of PID: the files mapped by PID.
maps_of() {
	awk '$6 ~ /^\// { print $6 }' "/proc/$1/maps" | sort -u
}

# ---- a mount without --sync maps neither -----------------------------------------------
m="$TMP/plain"
mkdir -p "$m"
"$BIN" -f "$m" 2>"$TMP/plain.err" &
ppid=$!
for _ in $(seq 1 200); do mountpoint -q "$m" && break; sleep 0.05; done
mountpoint -q "$m" || fail "the plain mount did not come up: $(cat "$TMP/plain.err")"
maps_of "$ppid" >"$TMP/plain.maps"
! grep -Eq 'libcurl|primus-envfs-sync' "$TMP/plain.maps" ||
	fail "a mount without --sync maps $(grep -E 'curl|sync' "$TMP/plain.maps")"
! grep -q '^sync' "$m/status" || fail "status of a plain mount has sync lines: $(grep '^sync' "$m/status")"
fusermount3 -u "$m"
wait "$ppid" || fail "the plain mount exited $?"
[ ! -s "$TMP/plain.err" ] || fail "plain mount's stderr: $(cat "$TMP/plain.err")"

# ---- a mount with --sync maps the module and libcurl -------------------------------
node_mount 0
maps_of "${NODE_PID[0]}" >"$TMP/sync.maps"
grep -q '/fs/sync/primus-envfs-sync.so$' "$TMP/sync.maps" ||
	fail "the build tree's module is not mapped: $(grep sync "$TMP/sync.maps")"
grep -q 'libcurl' "$TMP/sync.maps" || fail "--sync does not map libcurl"
node_umount 0

# ---- options --------------------------------------------------------------------------------
# expect_usage REGEX ARG...: the mount refuses ARGs with exit 64 and one
# line matching REGEX, mounting nothing.
expect_refused() {
	local want=$1 re=$2 rc=0
	shift 2
	"$BIN" "$@" -f "$TMP/refused" >"$TMP/r.out" 2>"$TMP/r.err" || rc=$?
	[ "$rc" = "$want" ] || fail "$*: exit $rc, want $want: $(cat "$TMP/r.err")"
	[ "$(wc -l <"$TMP/r.err")" = 1 ] || fail "$*: not one line: $(cat "$TMP/r.err")"
	grep -Eq -- "$re" "$TMP/r.err" || fail "$*: '$(cat "$TMP/r.err")' does not match /$re/"
	! mountpoint -q "$TMP/refused" || fail "$*: mounted"
}
mkdir -p "$TMP/refused"
pw="pw-$RANDOM$RANDOM"
unset SLURM_JOB_ID
expect_refused 64 '^primus-envfs: --sync-password: refused: a password on the command line' \
	--sync "etcd://$EP" --run 1 --sync-user app --sync-password "$pw"
expect_refused 64 '^primus-envfs: -o sync_password: refused' \
	--sync "etcd://$EP" --run 1 -o "sync_user=app,sync_password=$pw"
expect_refused 64 "^primus-envfs: --sync-user: a user name has no ':'" \
	--sync "etcd://$EP" --run 1 --sync-user "app:$pw"
! grep -q "$pw" "$TMP/r.err" || fail "a message shows the password"
expect_refused 64 "^primus-envfs: --sync: refused: a user name or password in the URL" \
	--sync "http://app:$pw@$EP" --run 1
! grep -q "$pw" "$TMP/r.err" || fail "a message shows the password of a URL"
expect_refused 64 'milliseconds from 100' --sync "etcd://$EP" --run 1 --sync-timeout " 500"
# A malformed endpoint list is a usage error, as for verify.
for u in "etcd://" "etcd://nohost" "etcd://127.0.0.1:99999" "ftp://127.0.0.1:1" "etcd://,,,"; do
	expect_refused 64 '^primus-envfs: --sync: etcd endpoints' --sync "$u" --run 1
done
# A node name may be a whole host name (253 bytes), not one byte more.
expect_refused 64 'is not a node name \(1 to 253' --sync "etcd://$EP" --run 1 \
	--sync-node "$(printf 'n%.0s' $(seq 254))"
expect_refused 64 '^primus-envfs: --run without --sync' --run 1
expect_refused 64 '^primus-envfs: --sync-node without --sync' -o sync_node=n1
expect_refused 64 'needs --run ID .*SLURM_JOB_ID is not set' --sync "etcd://$EP"
expect_refused 64 "'a/b' is not a run name" --sync "etcd://$EP" --run a/b
# What a refused name holds comes back escaped, never raw to the terminal.
expect_refused 64 "'a\\\\x1b\\[31mb' is not a node name" --sync "etcd://$EP" --run 1 \
	--sync-node "$(printf 'a\033[31mb')"
expect_refused 64 "'r\\\\nx' is not a run name" --sync "etcd://$EP" --run "$(printf 'r\nx')"
! grep -q "$(printf '\033')" "$TMP/r.err" || fail "a refused name reaches the terminal raw"
expect_refused 64 'milliseconds from 100' --sync "etcd://$EP" --run 1 --sync-timeout 5
expect_refused 64 'starting with' --sync "etcd://$EP" --run 1 --sync-prefix x
expect_refused 64 '^primus-envfs: --sync-cert without --sync-key' \
	--sync "etcd://$EP" --run 1 --sync-cert /etc/hostname
expect_refused 64 'needs a password' --sync "etcd://$EP" --run 1 --sync-user app
expect_refused 2 '^primus-envfs: --sync-ca /nonexistent: No such file' \
	--sync "etcd://$EP" --run 1 --sync-ca /nonexistent
expect_refused 2 '^primus-envfs: --sync-password-file /nonexistent: No such file' \
	--sync "etcd://$EP" --run 1 --sync-user app --sync-password-file /nonexistent
: >"$TMP/empty.pw"
expect_refused 64 'sync-password-file .*: empty' \
	--sync "etcd://$EP" --run 1 --sync-user app --sync-password-file "$TMP/empty.pw"

# A module that cannot be loaded: exit 2, one line naming it and why.
PRIMUS_ENVFS_SYNC_MODULE=$TMP/none.so expect_refused 2 \
	"cannot load the sync module $TMP/none.so: .*No such file.*PRIMUS_ENVFS_SYNC_MODULE" \
	--sync "etcd://$EP" --run 1
lib=$(awk '$3 ~ /libyaml/ { print $3 }' "$TMP/ldd")
[ -n "$lib" ] || fail "no libyaml in ldd's answer"
PRIMUS_ENVFS_SYNC_MODULE=$lib expect_refused 2 "the sync module $lib has no envfs_sync_api\\(\\)" \
	--sync "etcd://$EP" --run 1
# A cluster that does not answer: exit 2 within the bound, naming it.
free_port
t0=$(now_ms)
expect_refused 2 "^primus-envfs: --sync 127.0.0.1:$PORT: etcd connect: .*refused" \
	--sync "127.0.0.1:$PORT" --run 1 --sync-timeout 500
[ $(($(now_ms) - t0)) -lt 5000 ] || fail "a refused connect took $(($(now_ms) - t0)) ms"

# A cluster that accepts and does not answer for longer than one call's
# bound (its member SIGSTOPped: a busy one looks the same) is tried again
# within 15 times --sync-timeout: the mount comes up once it answers ...
etcd_stop 0
m="$TMP/busy"
mkdir -p "$m"
"$BIN" --sync "etcd://$EP" --run busy --sync-node b1 --sync-timeout 500 -f "$m" \
	2>"$TMP/busy.err" &
bpid=$!
# Longer than the start's spread (1 s) and one call (500 ms) together.
sleep 2
kill -0 "$bpid" 2>/dev/null || fail "the mount gave up on a stopped member: $(cat "$TMP/busy.err")"
etcd_cont 0
for _ in $(seq 1 300); do mountpoint -q "$m" && break; sleep 0.05; done
mountpoint -q "$m" || fail "the mount did not come up after etcd answered: $(cat "$TMP/busy.err")"
[ ! -s "$TMP/busy.err" ] || fail "the busy start's stderr: $(cat "$TMP/busy.err")"
fusermount3 -u "$m"
wait "$bpid" || fail "the mount after a busy start exited $?"
# ... and fails with one line once the budget is spent (200 ms: 3 s).
etcd_stop 0
expect_refused 2 "^primus-envfs: --sync .*stayed busy for the whole start-up budget" \
	--sync "etcd://$EP" --run busy --sync-node b2 --sync-timeout 200
etcd_cont 0

# The -o forms: sync= adds endpoints (a ',' would end the item), the
# first one refusing: the mount goes on to the next. $SLURM_JOB_ID is
# the run.
m="$TMP/oforms"
mkdir -p "$m"
SLURM_JOB_ID=4242 "$BIN" -o "sync=127.0.0.1:$PORT,sync=$EP,sync_timeout=3000,sync_node=n1" \
	-f "$m" 2>"$TMP/oforms.err" &
opid=$!
for _ in $(seq 1 200); do mountpoint -q "$m" && break; sleep 0.05; done
mountpoint -q "$m" || fail "the -o sync= mount did not come up: $(cat "$TMP/oforms.err")"
fusermount3 -u "$m"
wait "$opid" || fail "the -o sync= mount exited $?"

echo PASS
