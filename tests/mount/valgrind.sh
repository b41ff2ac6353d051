#!/bin/bash
# One mount-level run under valgrind memcheck (issue 8.1): mount, read every
# view and some variables, reload the config, read again, unmount with
# SIGTERM. Zero errors and zero definitely-lost bytes.
. "$(dirname "$0")/lib.sh"

if ! command -v valgrind >/dev/null; then
	echo "valgrind is not installed: skipped" >&2
	exit 77
fi
if grep -q -e __asan_init -e __tsan_init "$ENVFS_BIN" 2>/dev/null; then
	echo "the binary is built with a sanitizer (ASan, TSan), which valgrind cannot run: skipped" >&2
	exit 77
fi

# valgrind cannot replace malloc in a static executable, where it would
# report no leak whatever leaked.
REAL_BIN=${ENVFS_BIN:?ENVFS_BIN is not set (tests/meson.build)}
readelf -l "$REAL_BIN" | grep >/dev/null "program interpreter" ||
	fail "$REAL_BIN is statically linked: valgrind cannot check its heap"
LOG="$TMP/valgrind.log"
cat >"$TMP/vg-envfs" <<SH
#!/bin/sh
exec valgrind --quiet --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite --log-file="$LOG" "$REAL_BIN" "\$@"
SH
chmod +x "$TMP/vg-envfs"
ENVFS_BIN="$TMP/vg-envfs"

cp "$FIX/exp.yaml" "$TMP/exp.yaml"
printf 'HF_TOKEN=hf_secret\n' >"$TMP/secret.env"
envfs_mount --specs "$ENVFS_SPECS" --config "$TMP/exp.yaml" --env-file "$TMP/secret.env"
D="$MNT/env/maxtext/gfx950"
for f in env_file environ env.sh env.json explain digest; do
	cat "$D/$f" >/dev/null || fail "read $f under valgrind"
done
cat "$MNT/status" "$MNT/diagnostics" >/dev/null
getfattr -d -m - "$D/XLA_FLAGS" >/dev/null 2>&1 || fail "getfattr under valgrind"
before=$(cat "$D/XLA_FLAGS")
printf 'env:\n  XLA_FLAGS_APPEND: "--xla_gpu_autotune_level=5"\n' >"$TMP/exp.yaml.new"
mv "$TMP/exp.yaml.new" "$TMP/exp.yaml"
for _ in $(seq 1 100); do
	[ "$(cat "$D/XLA_FLAGS")" != "$before" ] && break
	sleep 0.05
done
case "$(cat "$D/XLA_FLAGS")" in
*--xla_gpu_autotune_level=5) ;;
*) fail "the reload was not seen under valgrind" ;;
esac
ls -la "$D" >/dev/null

# Handles the kernel never releases: the daemon stops reading requests at
# SIGTERM, so a directory, a view and a write open with pending bytes
# that a process still holds get no RELEASE. Their memory must be freed
# all the same (fs/daemon/handles.c), or valgrind counts it definitely lost.
"$PYTHON" - "$D" "$TMP/held" <<'PY' &
import os, sys, time
d, flag = sys.argv[1], sys.argv[2]
fds = [os.open(d, os.O_RDONLY | os.O_DIRECTORY),
       os.open(d + "/env_file", os.O_RDONLY),
       os.open(d + "/XLA_FLAGS", os.O_RDONLY),
       os.open(d + "/NNODES", os.O_WRONLY)]
os.listdir(fds[0])
os.read(fds[1], 100)
os.write(fds[3], b"pending, never closed")
open(flag, "w").close()
time.sleep(30)
PY
holder=$!
wait_for_file "$TMP/held" "the holder did not open its files"

kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
PID=""
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
if [ "$rc" -ne 0 ]; then
	cat "$LOG" >&2
	fail "valgrind or the daemon exited $rc"
fi
if [ -s "$LOG" ]; then
	cat "$LOG" >&2
	fail "valgrind reported errors or definite leaks"
fi
! mountpoint -q "$MNT" || fail "still mounted after SIGTERM"
echo "valgrind: 0 errors, 0 bytes definitely lost"
