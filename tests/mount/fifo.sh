#!/bin/bash
# Inputs that are not regular files, and a reload thread that is stuck
# (issue 14.8). A config, spec or --inherit file that is a FIFO (or is
# renamed into one) is refused with a message naming it, by check and by
# the mount, at start and at a reload, and never blocks anything: the
# mount keeps serving, status says why, the next good edit recovers.
# SIGTERM ends the daemon within 2 s even while its reload thread is
# stuck reading an input that never answers (here: a file on another
# FUSE mount whose daemon is stopped, as a hung NFS server would be).
. "$(dirname "$0")/lib.sh"

ENVFS_STDERR_ALLOW='the reload thread did not stop'
specs="$TMP/specs"
cp -r "$ENVFS_SPECS" "$specs"
cfgdir="$TMP/cfg"
mkdir "$cfgdir"
cfg="$cfgdir/exp.yaml"
printf 'env:\n  NCCL_IB_GID_INDEX: "5"\n' >"$cfg"
inh="$TMP/image.env"
echo 'IMAGE_VAR=1' >"$inh"
dir="$MNT/env/maxtext/gfx950"
IN=(--specs "$specs" --config "$cfg" --inherit "$inh")
APID=""

test_cleanup() {
	[ -z "$APID" ] || kill -CONT "$APID" 2>/dev/null
}

# no_hang WHAT PATTERN CMD...: CMD exits non-zero within 5 s, its stderr
# matching PATTERN.
no_hang() {
	local what=$1 pat=$2 rc=0
	shift 2
	timeout 5 "$@" >/dev/null 2>"$TMP/nohang.err" || rc=$?
	[ "$rc" -ne 124 ] || fail "$what: hung"
	[ "$rc" -ne 0 ] || fail "$what: exit 0"
	grep -qE "$pat" "$TMP/nohang.err" || fail "$what: stderr: $(cat "$TMP/nohang.err")"
}

# ---- check and a mount start refuse a FIFO, at once ----
mkfifo "$TMP/fifo.yaml"
no_hang "check --config FIFO" "fifo.yaml.*not a regular file \\(a FIFO\\)" \
	"$ENVFS_BIN" check --specs "$specs" --config "$TMP/fifo.yaml"
no_hang "check --inherit FIFO" "fifo.yaml.*not a regular file \\(a FIFO\\)" \
	"$ENVFS_BIN" check --specs "$specs" --inherit "$TMP/fifo.yaml"
mkfifo "$specs/zz_fifo.yaml"
no_hang "check with a FIFO among the specs" "zz_fifo.yaml.*not a regular file \\(a FIFO\\)" \
	"$ENVFS_BIN" check --specs "$specs"
no_hang "resolve with a FIFO among the specs" "zz_fifo.yaml.*not a regular file" \
	"$ENVFS_BIN" resolve --specs "$specs" -b maxtext -a gfx950
no_hang "a mount with a FIFO among the specs" "zz_fifo.yaml.*not a regular file" \
	"$ENVFS_BIN" --specs "$specs" -f "$MNT"
rm "$specs/zz_fifo.yaml"
no_hang "a mount with a FIFO config" "fifo.yaml.*not a regular file \\(a FIFO\\)" \
	"$ENVFS_BIN" --specs "$specs" --config "$TMP/fifo.yaml" -f "$MNT"
! mountpoint -q "$MNT" || fail "mounted with a FIFO config"

# ---- a FIFO renamed over an input of a running mount ----
envfs_mount "${IN[@]}"
[ "$(cat "$dir/NCCL_IB_GID_INDEX")" = 5 ] || fail "initial value"
# wait_error PATTERN: status's last_error matches within 1 s.
wait_error() {
	local start
	start=$(now_ms)
	until grep -qE "^last_error: .*$1" "$MNT/status"; do
		[ $(($(now_ms) - start)) -le 1000 ] ||
			fail "status shows no '$1': $(grep last_error "$MNT/status")"
		sleep 0.01
	done
	grep -qE "$1" "$MNT/diagnostics" || fail "diagnostics do not say '$1'"
}
# recover FILE CONTENT: a good file renamed over FILE is served within 1 s.
recover() {
	printf '%s' "$2" >"$1.new"
	mv "$1.new" "$1"
}
mkfifo "$cfg.fifo"
mv "$cfg.fifo" "$cfg"
wait_error "$cfg: error: not a regular file \\(a FIFO\\)"
[ "$(cat "$dir/NCCL_IB_GID_INDEX")" = 5 ] || fail "the last good value is not served"
echo 6 >"$dir/WRITE_WHILE_BROKEN" || fail "a write while the config is a FIFO"
recover "$cfg" 'env:
  NCCL_IB_GID_INDEX: "7"
'
wait_for_value "$dir/NCCL_IB_GID_INDEX" 7 1000 >/dev/null
grep -qx 'last_error: none' "$MNT/status" || fail "not recovered: $(grep last_error "$MNT/status")"
mkfifo "$inh.fifo"
mv "$inh.fifo" "$inh"
wait_error "$inh: error: not a regular file \\(a FIFO\\)"
[ "$(cat "$dir/IMAGE_VAR")" = 1 ] || fail "the last good image value is not served"
recover "$inh" 'IMAGE_VAR=2
'
wait_for_value "$dir/IMAGE_VAR" 2 1000 >/dev/null
grep -qx 'last_error: none' "$MNT/status" || fail "not recovered: $(grep last_error "$MNT/status")"
# A FIFO appearing among the specs.
mkfifo "$specs/zz_fifo.yaml"
wait_error "zz_fifo.yaml: error: not a regular file \\(a FIFO\\)"
rm "$specs/zz_fifo.yaml"
recover "$cfg" 'env:
  NCCL_IB_GID_INDEX: "8"
'
wait_for_value "$dir/NCCL_IB_GID_INDEX" 8 1000 >/dev/null
# SIGTERM ends it promptly (it used to hang in the FIFO forever).
start=$(now_ms)
kill -TERM "$PID"
wait "$PID" || fail "exit status $? after SIGTERM"
PID=""
[ $(($(now_ms) - start)) -le "$(scaled_ms 2000)" ] || fail "SIGTERM took $(($(now_ms) - start)) ms"
! mountpoint -q "$MNT" || fail "still mounted after SIGTERM"

# ---- a reload stuck on an input that never answers ----
AMNT="$TMP/amnt"
mkdir "$AMNT"
EXTRA_MNTS=("$AMNT")
# Nothing cached: every stat and read of its files is a request.
"$ENVFS_BIN" --specs "$ENVFS_SPECS" --env 'CFG=env: {}' -o attr_timeout=0,entry_timeout=0 \
	-f "$AMNT" 2>"$TMP/a.err" &
APID=$!
for _ in $(seq 1 250); do mountpoint -q "$AMNT" && break; sleep 0.02; done
mountpoint -q "$AMNT" || fail "the helper mount did not come up"
# The config of the mount under test is a symlink to a file the helper
# serves: a YAML mapping with an empty env: block.
ln -sfn "$AMNT/env/maxtext/gfx950/CFG" "$cfgdir/stuck.yaml"
envfs_mount --specs "$specs" --config "$cfgdir/stuck.yaml" --inherit "$inh"
[ "$(cat "$dir/IMAGE_VAR")" = 2 ] || fail "initial value with the symlinked config"
kill -STOP "$APID"
echo 'IMAGE_VAR=3' >"$inh"      # a reload starts and blocks on the config
sleep 0.3
# Reads and writes are still served.
[ "$(cat "$dir/IMAGE_VAR")" = 2 ] || fail "a read while the reload is stuck"
echo 9 >"$dir/WRITE_WHILE_STUCK" || fail "a write while the reload is stuck"
[ "$(cat "$dir/WRITE_WHILE_STUCK")" = 9 ] || fail "the write while the reload is stuck"
start=$(now_ms)
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
PID=""
elapsed=$(($(now_ms) - start))
[ "$elapsed" -le "$(scaled_ms 2000)" ] || fail "SIGTERM with a stuck reload took $elapsed ms"
! mountpoint -q "$MNT" || fail "still mounted after SIGTERM"
note "SIGTERM with a stuck reload thread: exit $rc after $elapsed ms"
kill -CONT "$APID"
fusermount3 -u "$AMNT"
wait "$APID" || fail "the helper daemon exited $?"
APID=""
