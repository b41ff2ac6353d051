#!/bin/bash
# Permissions (SPEC 6.2, 7): mounted by root with -o allow_other, another
# user (uid 65534, through setpriv) reads plain variables but not a
# secret (0600) nor a view holding one, and cannot change anything; the
# owner still can. Skipped (77) unless run as root with setpriv.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	note "needs root and setpriv: skipped"
	exit 77
fi
# The other user must be able to reach the mount point.
chmod 755 "$TMP"

envfs_mount --specs "$ENVFS_SPECS" --env HF_TOKEN=hf_secret_value -o allow_other
dir="$MNT/env/maxtext/gfx950"

# as_other PYTHON_EXPR: py_errno as uid/gid 65534 with no groups.
as_other() {
	setpriv --reuid 65534 --regid 65534 --clear-groups "$PYTHON" - "$1" <<'PY'
import errno, os, sys
def put(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)
try:
    r = eval(sys.argv[1])
    print("ok" if r is None or not isinstance(r, str) else r)
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PY
}
expect_other() {
	local got
	got=$(as_other "$2")
	[ "$got" = "$1" ] || fail "as uid 65534: $2: $got, want $1"
}

[ "$(mode_of "$dir/HF_TOKEN")" = 600 ] || fail "secret mode $(mode_of "$dir/HF_TOKEN")"
[ "$(mode_of "$dir/env_file")" = 600 ] || fail "env_file holding a secret: $(mode_of "$dir/env_file")"
[ "$(cat "$dir/HF_TOKEN")" = hf_secret_value ] || fail "the owner cannot read the secret"

# Reading: plain variables yes, secrets no.
expect_other 1 "open('$dir/NNODES').read().strip()"
expect_other EACCES "open('$dir/HF_TOKEN').read()"
expect_other EACCES "open('$dir/env_file').read()"
expect_other ok "os.listdir('$dir')"

# Writing anything: no.
expect_other EACCES "put('$dir/NNODES', '2\\n')"
expect_other EACCES "put('$dir/NNODES', '2\\n', 'a')"
expect_other EACCES "put('$dir/HF_TOKEN', 'stolen\\n')"
expect_other EACCES "put('$dir/MOUNT_TEST_OTHER', 'x\\n')"
expect_other EACCES "os.unlink('$dir/NNODES')"
expect_other EACCES "os.rename('$dir/NNODES', '$dir/MOUNT_TEST_OTHER')"
expect_other EACCES "os.truncate('$dir/NNODES', 0)"
[ "$(cat "$dir/NNODES")" = 1 ] || fail "NNODES changed"
[ ! -e "$dir/MOUNT_TEST_OTHER" ] || fail "the other user created a variable"

# The owner (root) still writes; the other user sees the new value.
echo 2 >"$dir/NNODES"
expect_other 2 "open('$dir/NNODES').read().strip()"
envfs_umount
