# Shared harness of the etcd tests (sourced, bash): real etcd clusters on
# 127.0.0.1, started from Debian's etcd-server and stopped on every exit path.
#
#   . "$(dirname "$0")/lib.sh"
#   etcd_cluster_start 3                 # members 0 1 2, healthy on return
#   drv put /a x                         # the client under test (etcd_driver)
#   etcd_kill "$(etcd_leader)"; ...; etcd_restart 0
#
# Members are numbered from 0. Each has its client and peer port (distinct,
# free when picked), its data directory and log under the test's temporary
# directory; an EXIT/INT/TERM trap kills every member (and any straggler
# whose command line names that directory, and the test's background
# jobs) and removes it.
#
# etcd_cluster_start N [tls] [ETCD FLAG...]: with `tls`, members serve
# https with --client-cert-auth (peers stay on plain http), and files are
# made with openssl under $TLS: ca.crt, client.crt/.key (no CN: the JSON
# gateway rejects a CN when RBAC is on), other-ca.crt and
# other-client.crt/.key (a CA and a client the cluster does not trust).
# RBAC is then on: user root (password $ROOT_PW) and user app (password
# $APP_PW) whose role app-rw may read and write $APP_PREFIX only.
set -euo pipefail

: "${ETCD_DRIVER:?ETCD_DRIVER must name the etcd_driver binary}"

if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
	echo "SKIP: etcd and etcdctl are not installed (Debian: etcd-server etcd-client)" >&2
	exit 77
fi

TMP=$(mktemp -d /tmp/envfs-sync-test.XXXXXX)
TLS="$TMP/tls"
ETCD_N=0
ETCD_TLS=0
ETCD_EXTRA=()
declare -a ETCD_PID ETCD_CPORT ETCD_PPORT
ROOT_PW="root-$RANDOM-pw"
APP_PW="app-$RANDOM$RANDOM-secret"
APP_PREFIX=/app/
export ETCDCTL_API=3

fail() {
	echo "FAIL: $*" >&2
	etcd_dump_logs
	# A library that runs daemons shows their last words too.
	if declare -F test_dump_logs >/dev/null; then test_dump_logs; fi
	exit 1
}

note() {
	echo "# $*" >&2
}

etcd_dump_logs() {
	local i
	for ((i = 0; i < ETCD_N; i++)); do
		[ -s "$TMP/etcd.$i.log" ] || continue
		echo "--- last lines of member $i's log" >&2
		tail -n 5 "$TMP/etcd.$i.log" >&2
	done
}

# Every process whose command line names $TMP: the members, and whatever
# they or a failed test left behind.
etcd_stragglers() {
	local p cmd
	for p in /proc/[0-9]*; do
		cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		case $cmd in
		*"$TMP/"*) echo "${p#/proc/}" ;;
		esac
	done
}

cleanup() {
	local rc=$? p
	set +e
	trap - EXIT INT TERM
	# A test's own teardown first (mounts to undo before their daemons
	# are killed: tests/sync/mountlib.sh).
	if [ "$(type -t test_cleanup)" = function ]; then
		test_cleanup || rc=1
	fi
	for p in "${ETCD_PID[@]}"; do
		[ -n "$p" ] && kill -CONT "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	for p in $(etcd_stragglers); do
		[ "$p" != $$ ] && kill -CONT "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	# The test's own background jobs (drivers watching, writing): a
	# failed test must not leave them holding the test's output open.
	for p in $(jobs -p); do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The ports free_port picks from: below the kernel's ephemeral range, so
# that no outgoing connection of another process (a test next to this one
# talks to its etcd, a curl) holds one when etcd binds it, nor when a
# member restarts on its ports.
ETCD_PORT_LO=10000
ETCD_PORT_HI=32767
if read -r _eph_lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null &&
	[ "${_eph_lo:-0}" -gt $((ETCD_PORT_LO + 2000)) ]; then
	ETCD_PORT_HI=$((_eph_lo - 1))
fi

# free_port: sets PORT to a TCP port nobody listens on, not yet handed out
# by this test (not in a $(...) subshell: RANDOM and the list live here).
ETCD_USED_PORTS=" "
free_port() {
	local p
	while :; do
		p=$((ETCD_PORT_LO + (RANDOM * 32768 + RANDOM) % (ETCD_PORT_HI - ETCD_PORT_LO + 1)))
		case $ETCD_USED_PORTS in *" $p "*) continue ;; esac
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			ETCD_USED_PORTS+="$p "
			PORT=$p
			return
		fi
	done
}

etcd_scheme() {
	if [ "$ETCD_TLS" = 1 ]; then echo https; else echo http; fi
}

# etcd_endpoint I: host:port of member I's client URL.
etcd_endpoint() {
	echo "127.0.0.1:${ETCD_CPORT[$1]}"
}

# etcd_endpoints [I...]: the members' endpoints, comma-separated, in the
# order given (default: all, from 0).
etcd_endpoints() {
	local out="" i
	if [ $# -eq 0 ]; then
		set -- $(seq 0 $((ETCD_N - 1)))
	fi
	for i in "$@"; do
		out+="${out:+,}$(etcd_endpoint "$i")"
	done
	echo "$out"
}

etcd_urls() {
	local out="" i s
	s=$(etcd_scheme)
	for ((i = 0; i < ETCD_N; i++)); do
		out+="${out:+,}$s://$(etcd_endpoint "$i")"
	done
	echo "$out"
}

# ectl [ARG...]: etcdctl on every member, as root once RBAC is on.
ETCD_ROOT_AUTH=0
ectl() {
	local a=(--endpoints="$(etcd_urls)" --dial-timeout=2s --command-timeout=3s)
	if [ "$ETCD_TLS" = 1 ]; then
		a+=(--cacert="$TLS/ca.crt" --cert="$TLS/client.crt" --key="$TLS/client.key")
	fi
	if [ "$ETCD_ROOT_AUTH" = 1 ]; then
		a+=(--user="root:$ROOT_PW")
	fi
	if [ -n "${ECTL_EXEC:-}" ]; then
		exec etcdctl "${a[@]}" "$@"
	fi
	etcdctl "${a[@]}" "$@"
}

# Member I's command line; it starts a new member or restarts one from
# its data directory alike (etcd ignores --initial-* once it has data).
etcd_member_cmd() {
	local i=$1 s cluster="" j
	s=$(etcd_scheme)
	for ((j = 0; j < ETCD_N; j++)); do
		cluster+="${cluster:+,}m$j=http://127.0.0.1:${ETCD_PPORT[$j]}"
	done
	ETCD_CMD=(etcd --name "m$i" --data-dir "$TMP/etcd.$i"
		--listen-client-urls "$s://127.0.0.1:${ETCD_CPORT[$i]}"
		--advertise-client-urls "$s://127.0.0.1:${ETCD_CPORT[$i]}"
		--listen-peer-urls "http://127.0.0.1:${ETCD_PPORT[$i]}"
		--initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PPORT[$i]}"
		--initial-cluster "$cluster"
		--initial-cluster-token "$ETCD_TOKEN"
		--initial-cluster-state new
		--logger zap --log-outputs stderr)
	if [ "$ETCD_TLS" = 1 ]; then
		ETCD_CMD+=(--client-cert-auth --trusted-ca-file "$TLS/ca.crt"
			--cert-file "$TLS/server.crt" --key-file "$TLS/server.key")
	fi
	ETCD_CMD+=("${ETCD_EXTRA[@]}")
}

etcd_spawn() {
	local i=$1
	etcd_member_cmd "$i"
	"${ETCD_CMD[@]}" >>"$TMP/etcd.$i.log" 2>&1 &
	ETCD_PID[$i]=$!
}

# etcd_member_args I: etcdctl's arguments for member I alone.
etcd_member_args() {
	ETCD_ARGS=(--endpoints="$(etcd_scheme)://$(etcd_endpoint "$1")"
		--dial-timeout=1s --command-timeout=1s)
	if [ "$ETCD_TLS" = 1 ]; then
		ETCD_ARGS+=(--cacert="$TLS/ca.crt" --cert="$TLS/client.crt" --key="$TLS/client.key")
	fi
}

# etcd_member_healthy I: member I has a leader and serves.
etcd_member_healthy() {
	etcd_member_args "$1"
	etcdctl "${ETCD_ARGS[@]}" endpoint health >/dev/null 2>&1
}

# etcd_wait_healthy [I...]: waits (up to 20 s) until the members (default:
# all that run) are healthy.
etcd_wait_healthy() {
	etcd_wait_up "$@" || fail "etcd member $ETCD_DOWN exited (see its log)"
}

# etcd_wait_up [I...]: like etcd_wait_healthy, but returns 1 when a member
# exited (its index in ETCD_DOWN) instead of failing.
ETCD_DOWN=""
etcd_wait_up() {
	local i t
	if [ $# -eq 0 ]; then
		set -- $(seq 0 $((ETCD_N - 1)))
	fi
	for i in "$@"; do
		for t in $(seq 1 200); do
			etcd_member_healthy "$i" && continue 2
			if ! kill -0 "${ETCD_PID[$i]}" 2>/dev/null; then
				ETCD_DOWN=$i
				return 1
			fi
			sleep 0.1
		done
		fail "etcd member $i not healthy after 20 s"
	done
}

# etcd_port_taken: a member exited because one of its ports was taken
# (between free_port and its bind, by another test's process).
etcd_port_taken() {
	grep -qs 'address already in use' "$TMP"/etcd.*.log
}

etcd_tls_files() {
	local ext
	mkdir -p "$TLS"
	ext="$TLS/ext.cnf"
	{
		echo "[srv]"
		echo "subjectAltName=IP:127.0.0.1,DNS:localhost"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		echo "[cli]"
		echo "extendedKeyUsage=clientAuth"
	} >"$ext"
	(
		cd "$TLS"
		for ca in ca other-ca; do
			openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
				-nodes -keyout "$ca.key" -out "$ca.crt" -days 2 \
				-subj "/O=primus-envfs test/CN=$ca" 2>/dev/null
		done
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout server.key -out server.csr -subj "/CN=127.0.0.1" 2>/dev/null
		openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
			-days 2 -extfile "$ext" -extensions srv -out server.crt 2>/dev/null
		# The clients: no CN, only an organisation.
		for c in client:ca other-client:other-ca; do
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
				-keyout "${c%%:*}.key" -out "${c%%:*}.csr" \
				-subj "/O=primus-envfs test client" 2>/dev/null
			openssl x509 -req -in "${c%%:*}.csr" -CA "${c#*:}.crt" \
				-CAkey "${c#*:}.key" -CAcreateserial -days 2 -extfile "$ext" \
				-extensions cli -out "${c%%:*}.crt" 2>/dev/null
		done
	) || fail "openssl could not make the test certificates"
}

# Users root and app, role app-rw on $APP_PREFIX, then auth enable.
etcd_rbac() {
	ectl user add root --new-user-password="$ROOT_PW" >/dev/null
	ectl user add app --new-user-password="$APP_PW" >/dev/null
	ectl role add app-rw >/dev/null
	ectl role grant-permission app-rw --prefix=true readwrite "$APP_PREFIX" >/dev/null
	ectl user grant-role app app-rw >/dev/null
	ectl auth enable >/dev/null
	ETCD_ROOT_AUTH=1
}

etcd_cluster_start() {
	local n=$1 i try
	shift
	if [ "${1:-}" = tls ]; then
		ETCD_TLS=1
		shift
		command -v openssl >/dev/null || {
			echo "SKIP: openssl is not installed" >&2
			exit 77
		}
		etcd_tls_files
	fi
	ETCD_EXTRA=("$@")
	ETCD_N=$n
	ETCD_TOKEN="envfs-$$-$RANDOM"
	# A port taken between free_port and etcd's bind (other tests pick
	# ports at the same time): new ports, a fresh cluster, again.
	for try in 1 2 3 4 5 6; do
		for ((i = 0; i < n; i++)); do
			free_port
			ETCD_CPORT[$i]=$PORT
			free_port
			ETCD_PPORT[$i]=$PORT
			rm -rf "$TMP/etcd.$i"
			: >"$TMP/etcd.$i.log"
		done
		for ((i = 0; i < n; i++)); do
			etcd_spawn "$i"
		done
		if etcd_wait_up; then
			if [ "$ETCD_TLS" = 1 ]; then
				etcd_rbac
			fi
			note "etcd cluster of $n up: $(etcd_endpoints)"
			return 0
		fi
		etcd_port_taken || fail "etcd member $ETCD_DOWN exited (see its log)"
		note "etcd: a port was taken before a member bound it (try $try): new ports"
		for ((i = 0; i < n; i++)); do
			kill -KILL "${ETCD_PID[$i]}" 2>/dev/null || true
			wait "${ETCD_PID[$i]}" 2>/dev/null || true
			ETCD_PID[$i]=""
		done
		# The new token: a member of the old cluster never joins the new.
		ETCD_TOKEN="envfs-$$-$RANDOM"
	done
	fail "could not start etcd on free ports"
}

# etcd_kill I: SIGKILL, and waits until it is gone.
etcd_kill() {
	kill -CONT "${ETCD_PID[$1]}" 2>/dev/null || true
	kill -KILL "${ETCD_PID[$1]}" 2>/dev/null || true
	wait "${ETCD_PID[$1]}" 2>/dev/null || true
	ETCD_PID[$1]=""
}

# etcd_stop I / etcd_cont I: SIGSTOP and SIGCONT (the member keeps its
# sockets: it accepts connections and never answers).
etcd_stop() {
	kill -STOP "${ETCD_PID[$1]}"
}

etcd_cont() {
	kill -CONT "${ETCD_PID[$1]}"
}

# etcd_restart I: starts a killed member again from its data directory
# (kills it first if it runs) and waits until it is healthy.
etcd_restart() {
	[ -z "${ETCD_PID[$1]}" ] || etcd_kill "$1"
	etcd_spawn "$1"
	etcd_wait_healthy "$1"
}

# etcd_start I: like etcd_restart, without waiting (a member alone can
# not be healthy without quorum).
etcd_start() {
	[ -z "${ETCD_PID[$1]}" ] || etcd_kill "$1"
	etcd_spawn "$1"
}

# etcd_leader: the index of the member that is leader (waits up to 10 s).
etcd_leader() {
	local t i st lead id
	for t in $(seq 1 100); do
		for ((i = 0; i < ETCD_N; i++)); do
			[ -n "${ETCD_PID[$i]}" ] || continue
			etcd_member_args "$i"
			st=$(etcdctl "${ETCD_ARGS[@]}" endpoint status -w json 2>/dev/null) || continue
			lead=$(sed -n 's/.*"leader":\([0-9]*\).*/\1/p' <<<"$st")
			id=$(sed -n 's/.*"member_id":\([0-9]*\).*/\1/p' <<<"$st")
			if [ -n "$lead" ] && [ "$lead" != 0 ] && [ "$lead" = "$id" ]; then
				echo "$i"
				return 0
			fi
		done
		sleep 0.1
	done
	fail "no etcd leader after 10 s"
}

# etcd_revision: the cluster's current revision.
etcd_revision() {
	ectl endpoint status -w json | sed -n 's/.*"revision":\([0-9]*\).*/\1/p' | sort -n | tail -1
}

# etcd_compact [REV]: compacts the history up to REV (default: now).
etcd_compact() {
	local rev=${1:-$(etcd_revision)}
	ectl compaction --physical "$rev" >/dev/null
}

# drv [ARG...]: the client under test, on every member (override with
# DRV_ENDPOINTS), with the TLS files when the cluster has TLS.
drv() {
	local a=(--endpoints "${DRV_ENDPOINTS:-$(etcd_endpoints)}")
	if [ "$ETCD_TLS" = 1 ]; then
		a+=(--ca "$TLS/ca.crt" --cert "$TLS/client.crt" --key "$TLS/client.key")
	fi
	"$ETCD_DRIVER" "${a[@]}" "$@"
}

# wait_line FILE REGEX [BUDGET_S]: waits (default 10 s) until a line of
# FILE matches the extended REGEX.
wait_line() {
	wait_count "$1" "$2" 1 "${3:-10}"
}

# wait_count FILE REGEX N [BUDGET_S]: waits until N lines of FILE match.
wait_count() {
	local t
	for t in $(seq 1 $((${4:-10} * 20))); do
		[ "$(grep -Ec -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.05
	done
	fail "fewer than $3 lines /$2/ in $1 after ${4:-10} s: $(cat "$1" 2>/dev/null)"
}

# expect_error ERRNO REGEX CMD [ARG...]: CMD (drv, or the driver with
# arguments of its own) fails with exit status 3 and the message
# "error ERRNO MS: ..." matching REGEX. Its stdout is left in $TMP/out,
# its stderr in $TMP/err and appended to $TMP/all.err (checked for
# secrets by tests that have some); MS (the call's duration) in ERR_MS.
expect_error() {
	local want=$1 re=$2 rc=0
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	cat "$TMP/err" >>"$TMP/all.err"
	[ "$rc" = 3 ] || fail "${*: -3}: exit status $rc, want 3: $(cat "$TMP/out" "$TMP/err")"
	grep -Eq -- "^error $want [0-9]+: .*$re" "$TMP/err" ||
		fail "${*: -3}: want $want /$re/, got: $(cat "$TMP/err")"
	ERR_MS=$(sed -n "s/^error $want \([0-9]*\): .*/\1/p" "$TMP/err" | head -1)
	note "$want in $ERR_MS ms: $(head -1 "$TMP/err" | cut -d' ' -f4-)"
}

# Milliseconds since the epoch, without a fork.
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}
