# Mounts with --sync on a real etcd cluster (sourced, bash, after nothing
# else): the etcd harness of lib.sh plus N mounts, each one "node".
#
#   . "$(dirname "$0")/mountlib.sh"
#   etcd_cluster_start 3
#   node_mount 0; node_mount 1          # $TMP/mnt.0, $TMP/mnt.1
#   echo 5 >"$(node_dir 0)/XLA_GPU_AUTOTUNE_LEVEL"
#   node_wait_value 1 XLA_GPU_AUTOTUNE_LEVEL 5
#
# Node I mounts on $TMP/mnt.I, in the foreground in the background, with
# its own --state $TMP/state.I, --env NODE_RANK=I and --sync-node nodeI,
# on run $RUN, with the endpoints of every member (NODE_ENDPOINTS to
# choose others). Every exit path unmounts every node before lib.sh kills
# what is left; each daemon's stderr must hold nothing but the lines a
# test allows (NODE_STDERR_ALLOW, an extended regex) and never a
# sanitizer report.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

: "${ENVFS_BIN:?ENVFS_BIN must name the primus-envfs binary}"
: "${ENVFS_FIXTURES:?ENVFS_FIXTURES must name tests/fixtures}"

if [ "${ENVFS_HAS_MOUNT:-1}" = 0 ]; then
	echo "SKIP: built without FUSE (-Dfuse=disabled)" >&2
	exit 77
fi

RUN="run-$$"
# Under ThreadSanitizer a daemon runs several times slower (a start-up read
# of 10,000 keys took over 15 s): the waits below are hang guards, wider
# there, as tests/mount/lib.sh's scaled_ms.
NODE_WAIT_SCALE=1
if grep -qa __tsan_init "$ENVFS_BIN" 2>/dev/null; then
	NODE_WAIT_SCALE=5
fi
NODE_STDERR_ALLOW=${NODE_STDERR_ALLOW:-}
declare -a NODE_PID NODE_ERR_FILES
NODE_N=0
DIR_BA=${DIR_BA:-maxtext/gfx950}

node_mnt() {
	echo "$TMP/mnt.$1"
}

# node_dir I [BACKEND/ARCH]: node I's directory of variables.
node_dir() {
	echo "$TMP/mnt.$1/env/${2:-$DIR_BA}"
}

. "$(dirname "${BASH_SOURCE[0]}")/../daemon_stderr.sh"
node_check_stderr() {
	stderr_check "$1" "${NODE_STDERR_ALLOW:-}"
}

# Called by lib.sh's fail: the last lines each daemon wrote, since a
# failure in CI is often explained there and nowhere else.
test_dump_logs() {
	local f
	for f in "${NODE_ERR_FILES[@]}"; do
		[ -s "$f" ] || continue
		echo "--- last lines of $(basename "$f")" >&2
		tail -n 15 "$f" >&2
	done
}

# Called by lib.sh's cleanup before it kills anything: unmount every node
# (a daemon killed while mounted leaves a dead mount behind), give the
# daemons a moment to exit, then check their stderr.
test_cleanup() {
	local i m rc=0 f
	for ((i = 0; i < NODE_N; i++)); do
		m=$(node_mnt "$i")
		if mountpoint -q "$m" 2>/dev/null; then
			fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
		fi
	done
	# A test's own mounts besides the nodes' (a second mount, one with
	# the default name) go too: a failed test leaves none behind.
	while read -r m; do
		fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
	done < <(awk -v t="$TMP/" 'index($2, t) == 1 { print $2 }' /proc/mounts)
	for ((i = 0; i < NODE_N; i++)); do
		[ -n "${NODE_PID[$i]:-}" ] || continue
		kill -CONT "${NODE_PID[$i]}" 2>/dev/null
		for _ in $(seq 1 50); do
			kill -0 "${NODE_PID[$i]}" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "${NODE_PID[$i]}" 2>/dev/null
	done
	for f in "${NODE_ERR_FILES[@]}"; do
		node_check_stderr "$f" || rc=1
	done
	return $rc
}

# node_args I: the sync options of node I (into NODE_ARGS).
node_args() {
	NODE_ARGS=(--sync "etcd://${NODE_ENDPOINTS:-$(etcd_endpoints)}" --run "$RUN"
		--sync-node "node$1")
	if [ "$ETCD_TLS" = 1 ]; then
		NODE_ARGS+=(--sync-ca "$TLS/ca.crt" --sync-cert "$TLS/client.crt"
			--sync-key "$TLS/client.key")
	fi
}

# node_mount I [ARG...]: mounts node I with its state, NODE_RANK and sync
# options, then ARGs; waits (up to 15 s, 75 s under TSan) until it is mounted.
node_mount() {
	local i=$1 m t
	shift
	m=$(node_mnt "$i")
	mkdir -p "$m"
	[ "$i" -lt "$NODE_N" ] || NODE_N=$((i + 1))
	node_args "$i"
	NODE_ERR="$TMP/daemon.$i.$RANDOM.err"
	NODE_ERR_FILES+=("$NODE_ERR")
	"$ENVFS_BIN" --state "$TMP/state.$i" --env "NODE_RANK=$i" "${NODE_ARGS[@]}" \
		"$@" -f "$m" 2>"$NODE_ERR" &
	NODE_PID[$i]=$!
	for t in $(seq 1 $((300 * NODE_WAIT_SCALE))); do
		if mountpoint -q "$m"; then
			node_wait_record "$i"
			return 0
		fi
		if ! kill -0 "${NODE_PID[$i]}" 2>/dev/null; then
			cat "$NODE_ERR" >&2
			fail "node $i exited before mounting"
		fi
		sleep 0.05
	done
	fail "node $i: no mount at $m after $((15 * NODE_WAIT_SCALE)) s"
}

# node_wait_record I: waits (up to 5 s) until node I has put its first
# record or says why it cannot: a mount puts it up to a second after it
# serves (a random delay), and a test's verify right after the mounts
# would otherwise count the node as missing. Never fails: a test of the
# record checks it itself.
node_wait_record() {
	local t
	for t in $(seq 1 $((100 * NODE_WAIT_SCALE))); do
		! grep -q '^sync_record: .*not put yet' "$(node_mnt "$1")/status" 2>/dev/null && return 0
		sleep 0.05
	done
	return 0
}

# node_umount I: unmounts node I and checks its daemon exited 0.
node_umount() {
	local rc=0
	fusermount3 -u "$(node_mnt "$1")" || fail "fusermount3 -u $(node_mnt "$1")"
	wait "${NODE_PID[$1]}" || rc=$?
	NODE_PID[$1]=""
	[ "$rc" -eq 0 ] || fail "node $1's daemon exited $rc after unmount"
}

# node_read I NAME: NAME's value on node I ("<absent>" when it has none).
# create_close PATH DATA: creates PATH (O_CREAT|O_TRUNC), writes DATA and a
# newline, closes it; prints "close ok" or "close ERRNO" (the close's).
create_close() {
	"$PYTHON" - "$1" "$2" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
os.write(fd, sys.argv[2].encode() + b"\n")
try:
    os.close(fd)
    print("close ok")
except OSError as e:
    print("close " + errno.errorcode[e.errno])
PY
}

node_read() {
	local v
	if { IFS= read -r v <"$(node_dir "$1")/$2"; } 2>/dev/null; then
		printf '%s' "$v"
	else
		printf '<absent>'
	fi
}

# node_wait_value I NAME VALUE [BUDGET_S]: waits (default 10 s) until node
# I reads VALUE ("<absent>": no such file) for NAME.
node_wait_value() {
	local t v
	for t in $(seq 1 $((${4:-10} * 100 * NODE_WAIT_SCALE))); do
		v=$(node_read "$1" "$2")
		[ "$v" = "$3" ] && return 0
		sleep 0.01
	done
	fail "node $1: $2 is '$v', not '$3', after ${4:-10} s (status: $(node_status "$1" | grep '^sync' | tr '\n' ';'))"
}

# verify_rc WANT ARG...: runs verify on the run (every member's endpoint);
# its stdout in $TMP/v.out, stderr in $TMP/v.err; fails unless the exit
# status is WANT.
verify_rc() {
	local want=$1 rc=0
	shift
	"$ENVFS_BIN" verify --sync "etcd://$(etcd_endpoints)" --run "$RUN" "$@" >"$TMP/v.out" \
		2>"$TMP/v.err" || rc=$?
	[ "$rc" = "$want" ] ||
		fail "verify $*: exit $rc, want $want: $(cat "$TMP/v.out" "$TMP/v.err")"
}

# set_rc VALUE: `set` of NCCL_DEBUG=VALUE in $DIR_BA through node 0's
# mount, its exit status in RC and its output in $TMP/set.out and
# $TMP/set.err; a hang guard of SET_TIMEOUT seconds (60: the tests that
# use it stop etcd or slow it down).
set_rc() {
	RC=0
	timeout "${SET_TIMEOUT:-60}" "$ENVFS_BIN" set --mount "$(node_mnt 0)" "$DIR_BA" NCCL_DEBUG "$1" \
		>"$TMP/set.out" 2>"$TMP/set.err" || RC=$?
}

# node_status I: node I's status file.
node_status() {
	cat "$(node_mnt "$1")/status" 2>/dev/null || true
}

# node_wait_learned I WHAT: waits (a hang guard: 30 s, wider under TSan)
# until node I's status names no write of unknown outcome; fails with
# WHAT and the node's sync lines (sync_last_error says why) otherwise.
node_wait_learned() {
	local t
	for t in $(seq 1 $((600 * NODE_WAIT_SCALE))); do
		node_status "$1" | grep >/dev/null '^sync_write_unknown' || return 0
		sleep 0.05
	done
	fail "$2: the outcome was never learned: $(node_status "$1" | grep '^sync')"
}

# proxy_start I: a lagging member (lagproxy.py, its flag files in $LAG,
# made here) in front of member I, on PROXY_PORT.
proxy_start() {
	local t
	LAG=${LAG:-$TMP/lag}
	mkdir -p "$LAG"
	free_port
	PROXY_PORT=$PORT
	"$PYTHON" "$(dirname "${BASH_SOURCE[0]}")/lagproxy.py" "$PROXY_PORT" "${ETCD_CPORT[$1]}" \
		"$LAG" >"$TMP/lagproxy.log" 2>&1 &
	for t in $(seq 1 100); do
		[ -s "$LAG/ready" ] && return 0
		sleep 0.05
	done
	fail "lagproxy did not start: $(cat "$TMP/lagproxy.log")"
}

. "$(dirname "${BASH_SOURCE[0]}")/../py_errno.sh"

# bulk_put FIRST LAST KEYFMT VALUE|@SIZE [PER_TXN]: puts the keys
# printf KEYFMT k for k in FIRST..LAST, straight through member 0's JSON
# gateway (etcdctl would cost a process per key), PER_TXN (default 1,
# etcd allows 128) in one txn. VALUE is the bytes of every key, or
# @SIZE that many 'x' bytes (a put carries at most --max-request-bytes,
# 1.5 MiB by default).
bulk_put() {
	"$PYTHON" - "$(etcd_scheme)://$(etcd_endpoint 0)" "$@" <<'PY'
import base64, json, sys, urllib.request
url, first, last, fmt, value = sys.argv[1:6]
per = int(sys.argv[6]) if len(sys.argv) > 6 else 1
v = b"x" * int(value[1:]) if value.startswith("@") else value.encode()
b64 = lambda b: base64.b64encode(b).decode()
def post(path, body):
    rq = urllib.request.Request(url + path, json.dumps(body).encode(),
                                {"Content-Type": "application/json"})
    with urllib.request.urlopen(rq, timeout=20) as r:
        return json.load(r)
ks = [(fmt % k).encode() for k in range(int(first), int(last) + 1)]
for i in range(0, len(ks), per):
    ops = [{"request_put": {"key": b64(k), "value": b64(v)}} for k in ks[i:i + per]]
    post("/v3/kv/txn", {"success": ops})
PY
}
