# Shared harness of the mount-level tests (sourced, bash).
#
# Each test owns real mounts in a temporary directory: the daemon runs in
# the foreground in the background (`&`), the test waits until the path is
# a mount point, and an EXIT trap unmounts and kills whatever is left even
# when the test fails. The daemon's stderr is captured per mount and must
# hold nothing unexpected (sanitizer reports above all). KEEP_TMP=1 keeps
# the temporary directory for a look after a failure.
#
#   . "$(dirname "$0")/lib.sh"
#   envfs_mount --config "$ENVFS_FIXTURES/mount/exp.yaml"
#   [ "$(cat "$MNT/env/maxtext/gfx950/NNODES")" = 1 ] || fail "NNODES"
set -euo pipefail

: "${ENVFS_BIN:?ENVFS_BIN must name the primus-envfs binary}"

# The time bounds the tests hold (SPEC 6.4's 100 ms reload, SIGTERM's 2 s)
# are promises of a plain build. Under ThreadSanitizer every memory access
# of the daemon is instrumented and it runs 5 to 15 times slower, so there
# the bounds are ten times wider: that build is there to find races, not to
# time them. scaled_ms N prints the bound to hold for N ms.
TIME_SCALE=1
if grep -qa __tsan_init "$ENVFS_BIN" 2>/dev/null; then
	TIME_SCALE=10
fi
scaled_ms() {
	echo $(($1 * TIME_SCALE))
}
: "${ENVFS_SPECS:?ENVFS_SPECS must name the source specs directory}"
: "${ENVFS_FIXTURES:?ENVFS_FIXTURES must name tests/fixtures}"

FIX="$ENVFS_FIXTURES/mount"
TMP=$(mktemp -d /tmp/envfs-mount-test.XXXXXX)
MNT="$TMP/mnt"
mkdir "$MNT"
PID=""                 # the daemon of the current mount
NMOUNT=0
DAEMON_ERR=""          # its stderr
ERR_FILES=()           # every daemon's stderr, checked at exit
# Other mount points a test uses (a second daemon, a refused start); the
# EXIT trap unmounts them too.
EXTRA_MNTS=()
# Extended regex of daemon stderr lines a test expects (none by default).
ENVFS_STDERR_ALLOW=${ENVFS_STDERR_ALLOW:-}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

note() {
	echo "# $*" >&2
}

# Fails when a daemon's stderr holds a sanitizer report or any line the
# test did not declare in ENVFS_STDERR_ALLOW.
. "$(dirname "${BASH_SOURCE[0]}")/../daemon_stderr.sh"
check_daemon_stderr() {
	stderr_check "$1" "${ENVFS_STDERR_ALLOW:-}"
}

cleanup() {
	local rc=$? f
	set +e
	# A test's own teardown first (a stopped daemon to continue, ...).
	if [ "$(type -t test_cleanup)" = function ]; then
		test_cleanup
	fi
	for f in "$MNT" "${EXTRA_MNTS[@]}"; do
		if mountpoint -q "$f" 2>/dev/null; then
			fusermount3 -u "$f" 2>/dev/null || fusermount3 -uz "$f" 2>/dev/null
		fi
	done
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID" 2>/dev/null
		sleep 0.2
		kill -KILL "$PID" 2>/dev/null
	fi
	wait 2>/dev/null
	for f in "${ERR_FILES[@]}"; do
		check_daemon_stderr "$f" || rc=1
	done
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
	exit $rc
}
trap cleanup EXIT

# Waits (up to 5 s) until $MNT is a mount point of the running daemon.
wait_mounted() {
	local i
	for i in $(seq 1 250); do
		if mountpoint -q "$MNT"; then
			return 0
		fi
		if ! kill -0 "$PID" 2>/dev/null; then
			cat "$DAEMON_ERR" >&2
			fail "the daemon exited before mounting"
		fi
		sleep 0.02
	done
	fail "no mount at $MNT after 5 s"
}

# envfs_mount [INPUTS] [-o OPTS]: mounts on $MNT in the foreground, in the
# background; the daemon's pid is $PID.
envfs_mount() {
	NMOUNT=$((NMOUNT + 1))
	DAEMON_ERR="$TMP/daemon.$NMOUNT.err"
	ERR_FILES+=("$DAEMON_ERR")
	"$ENVFS_BIN" "$@" -f "$MNT" 2>"$DAEMON_ERR" &
	PID=$!
	wait_mounted
}

# Unmounts $MNT and checks the daemon exited 0.
envfs_umount() {
	local rc=0
	fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT"
	wait "$PID" || rc=$?
	PID=""
	[ "$rc" -eq 0 ] || fail "daemon exited $rc after unmount"
	! mountpoint -q "$MNT" || fail "$MNT still mounted"
}

# Every <backend>/<arch> directory the shipped specs declare (SPEC 4).
shipped_dirs() {
	local b a
	for b in maxdiffusion maxtext megatron torchtitan; do
		for a in gfx942 gfx950; do
			echo "$b/$a"
		done
	done
	for a in cuda ppu metax ascend tsingmicro dcu gcu musa bpu; do
		echo "torch_fl/$a"
	done
}

# mode_of FILE: octal permission bits, e.g. 644.
mode_of() {
	stat -c %a "$1"
}

# Milliseconds since the epoch, without a fork.
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# wait_for_value FILE EXPECTED BUDGET_MS: reads FILE (its first line) until
# it is EXPECTED; prints the milliseconds it took; fails after BUDGET_MS.
wait_for_value() {
	local file=$1 want=$2 budget=$3 start v
	start=$(now_ms)
	while :; do
		v=""
		{ IFS= read -r v <"$file"; } 2>/dev/null || true
		if [ "$v" = "$want" ]; then
			echo $(($(now_ms) - start))
			return 0
		fi
		if [ $(($(now_ms) - start)) -gt "$budget" ]; then
			fail "$file still reads '$v', not '$want', after ${budget} ms"
		fi
	done
}

# wait_for_file PATH WHAT: waits up to 5 s for PATH to exist (a helper
# process's "ready" flag); fails naming WHAT otherwise.
wait_for_file() {
	local _
	for _ in $(seq 1 250); do
		[ -e "$1" ] && return 0
		sleep 0.02
	done
	fail "$2"
}

. "$(dirname "${BASH_SOURCE[0]}")/../py_errno.sh"

# as_nobody CMD...: CMD as uid/gid 65534 with no supplementary groups.
as_nobody() {
	setpriv --reuid 65534 --regid 65534 --clear-groups "$@"
}

# as_other PYTHON_EXPR: py_errno as uid/gid 65534.
as_other() {
	py_errno "$1" as_nobody
}

# expect_other WANT... -- PYTHON_EXPR: as_other must print one of WANT.
expect_other() {
	local want=() got w
	while [ "$1" != -- ]; do want+=("$1"); shift; done
	got=$(as_other "$2")
	for w in "${want[@]}"; do
		[ "$got" = "$w" ] && return 0
	done
	fail "as uid 65534: $2: $got, want ${want[*]}"
}

# expect_errno WANT PYTHON_EXPR: fails unless py_errno prints WANT.
expect_errno() {
	local got
	got=$(py_errno "$2")
	[ "$got" = "$1" ] || fail "$2: $got, want $1"
}
