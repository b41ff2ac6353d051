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

printf 'HF_TOKEN=hf_secret_value\n' >"$TMP/secret.env"
envfs_mount --specs "$ENVFS_SPECS" --env-file "$TMP/secret.env" -o allow_other
dir="$MNT/env/maxtext/gfx950"

[ "$(mode_of "$dir/HF_TOKEN")" = 600 ] || fail "secret mode $(mode_of "$dir/HF_TOKEN")"
[ "$(mode_of "$dir/env_file")" = 600 ] || fail "env_file holding a secret: $(mode_of "$dir/env_file")"
[ "$(cat "$dir/HF_TOKEN")" = hf_secret_value ] || fail "the owner cannot read the secret"

# Reading: plain variables yes, secrets no.
expect_other 1 -- "open('$dir/NNODES').read().strip()"
expect_other EACCES -- "open('$dir/HF_TOKEN').read()"
expect_other EACCES -- "open('$dir/env_file').read()"
expect_other ok -- "os.listdir('$dir')"

# Writing anything: no.
expect_other EACCES -- "put('$dir/NNODES', '2\\n')"
expect_other EACCES -- "put('$dir/NNODES', '2\\n', 'a')"
expect_other EACCES -- "put('$dir/HF_TOKEN', 'stolen\\n')"
expect_other EACCES -- "put('$dir/MOUNT_TEST_OTHER', 'x\\n')"
expect_other EACCES -- "os.unlink('$dir/NNODES')"
expect_other EACCES -- "os.rename('$dir/NNODES', '$dir/MOUNT_TEST_OTHER')"
expect_other EACCES -- "os.truncate('$dir/NNODES', 0)"
[ "$(cat "$dir/NNODES")" = 1 ] || fail "NNODES changed"
[ ! -e "$dir/MOUNT_TEST_OTHER" ] || fail "the other user created a variable"

# The owner (root) still writes; the other user sees the new value.
echo 2 >"$dir/NNODES"
expect_other 2 -- "open('$dir/NNODES').read().strip()"
envfs_umount
