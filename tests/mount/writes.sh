#!/bin/bash
# Writes as per-run overrides (SPEC 7): a write sets the override at
# close, one trailing newline stripped, readers see the old value until
# then; rm reverts an override or unsets a variable everywhere; mv moves
# a value within a directory (so sed -i works) and not across; bad names,
# NUL and oversized values are refused; views, status, diagnostics and
# xattrs are read-only; modes and owners cannot change; -o ro is EROFS.
. "$(dirname "$0")/lib.sh"

envfs_mount --specs "$ENVFS_SPECS" --config "$FIX/exp.yaml"
dir="$MNT/env/maxtext/gfx950"
gen() {
	sed -n 's/^generation: //p' "$MNT/status"
}
layer() {
	getfattr --absolute-names --only-values -n user.primus.layer "$dir/$1"
}

# ---- echo, then cat: the old value was cached first ----
[ "$(cat "$dir/NCCL_IB_GID_INDEX")" = 5 ] || fail "config value"
grep -qx NCCL_IB_GID_INDEX=5 "$dir/env_file" || fail "env_file before"
g=$(gen)
echo 7 >"$dir/NCCL_IB_GID_INDEX"
[ "$(cat "$dir/NCCL_IB_GID_INDEX")" = 7 ] || fail "override not read back: $(cat "$dir/NCCL_IB_GID_INDEX")"
[ "$(stat -c %s "$dir/NCCL_IB_GID_INDEX")" -eq 2 ] || fail "size after the write"
grep -qx NCCL_IB_GID_INDEX=7 "$dir/env_file" || fail "env_file not refreshed"
[ "$(gen)" -gt "$g" ] || fail "generation did not grow"
[ "$(layer NCCL_IB_GID_INDEX)" = override ] || fail "layer: $(layer NCCL_IB_GID_INDEX)"
getfattr --absolute-names --only-values -n user.primus.shadowed "$dir/NCCL_IB_GID_INDEX" |
	grep >/dev/null -x 'config=5' || fail "shadowed lacks config=5"
grep -q 'override' "$dir/explain" || fail "explain does not mark the override"
grep -qx 'overrides: 1' "$MNT/status" || fail "status overrides: $(grep overrides "$MNT/status")"
# The digest in status is the new one.
sum=$(sha256sum <"$dir/environ")
grep -qx "digest maxtext/gfx950 ${sum%% *}" "$MNT/status" || fail "status digest is stale"
# Another directory is untouched.
[ "$(cat "$MNT/env/maxtext/gfx942/NCCL_IB_GID_INDEX")" = 5 ] || fail "override leaked to gfx942"

# ---- values with spaces, quotes and an embedded newline ----
printf '%s\n' "a b  \"c\" 'd'" "second line" >"$dir/MOUNT_TEST_NEW"
want=$(printf '%s\n%s' "a b  \"c\" 'd'" "second line")
[ "$(cat "$dir/MOUNT_TEST_NEW")" = "$want" ] || fail "round trip: $(cat "$dir/MOUNT_TEST_NEW")"
(. "$dir/env.sh" && [ "$MOUNT_TEST_NEW" = "$want" ]) || fail "env.sh does not reproduce it"
# Exactly one trailing newline goes; none is added to the value.
printf 'x\n\n' >"$dir/MOUNT_TEST_NL"
[ "$(od -An -c "$dir/MOUNT_TEST_NL" | tr -d ' ')" = 'x\n\n' ] || fail "two newlines: $(od -c "$dir/MOUNT_TEST_NL")"
printf 'nonl' >"$dir/MOUNT_TEST_NL"
[ "$(stat -c %s "$dir/MOUNT_TEST_NL")" -eq 5 ] || fail "no newline written"

# ---- readers see the old value until close, never a partial one ----
"$PYTHON" - "$dir/MOUNT_TEST_NL" <<'PY' || fail "a reader saw a pending write"
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"pending")
assert open(p).read() == "nonl\n", open(p).read()
os.write(fd, b" more\n")
assert open(p).read() == "nonl\n", open(p).read()
os.close(fd)
assert open(p).read() == "pending more\n", open(p).read()
# Offset writes and O_APPEND behave as on a regular file within one open.
fd = os.open(p, os.O_RDWR)
os.pwrite(fd, b"P", 0)
assert os.pread(fd, 100, 0) == b"Pending more\n"
os.close(fd)
assert open(p).read() == "Pending more\n"
with open(p, "a") as f:
    f.write("tail\n")
assert open(p).read() == "Pending more\ntail\n", repr(open(p).read())
PY
# A shell's `> FILE` closes a descriptor before writing: readers racing
# a loop of writes see one whole value or the other, never an empty one.
echo aaaa >"$dir/MOUNT_TEST_RACE"
(for i in $(seq 1 200); do echo bbbb >"$dir/MOUNT_TEST_RACE"; echo aaaa >"$dir/MOUNT_TEST_RACE"; done) &
racer=$!
for i in $(seq 1 300); do
	v=$(cat "$dir/MOUNT_TEST_RACE")
	[ "$v" = aaaa ] || [ "$v" = bbbb ] || fail "a reader saw '$v' during a write"
done
wait "$racer"
truncate -s 3 "$dir/MOUNT_TEST_NL"
[ "$(cat "$dir/MOUNT_TEST_NL")" = Pen ] || fail "truncate -s: $(cat "$dir/MOUNT_TEST_NL")"
# An O_TRUNC that writes nothing is committed before the shell's last
# close returns, not at its first (tests/mount/truncate.sh has the rest).
: >"$dir/MOUNT_TEST_NL"
[ "$(stat -c %s "$dir/MOUNT_TEST_NL")" -eq 1 ] || fail "O_TRUNC to empty"

# ---- rm of an override reverts ----
rm "$dir/NCCL_IB_GID_INDEX"
[ "$(cat "$dir/NCCL_IB_GID_INDEX")" = 5 ] || fail "rm did not revert: $(cat "$dir/NCCL_IB_GID_INDEX")"
[ "$(layer NCCL_IB_GID_INDEX)" = config ] || fail "layer after rm"

# ---- rm of a plain variable unsets it everywhere ----
d0=$(cat "$dir/digest")
ls "$dir" | grep >/dev/null -x NCCL_CROSS_NIC || fail "NCCL_CROSS_NIC not listed before"
rm "$dir/NCCL_CROSS_NIC"
! ls "$dir" | grep >/dev/null -x NCCL_CROSS_NIC || fail "unset variable still listed"
! [ -e "$dir/NCCL_CROSS_NIC" ] || fail "unset variable still exists"
for v in env_file environ env.sh env.json; do
	! grep -qa NCCL_CROSS_NIC "$dir/$v" || fail "unset variable still in $v"
done
[ "$(cat "$dir/digest")" != "$d0" ] || fail "digest did not change"
sum=$(sha256sum <"$dir/environ")
[ "$(cat "$dir/digest")" = "${sum%% *}" ] || fail "digest is not sha256 of environ"
grep -qx "digest maxtext/gfx950 ${sum%% *}" "$MNT/status" || fail "status digest after rm"
expect_errno ENOENT "os.unlink('$dir/NCCL_CROSS_NIC')"
# Writing it again brings it back.
echo 0 >"$dir/NCCL_CROSS_NIC"
ls "$dir" | grep >/dev/null -x NCCL_CROSS_NIC || fail "rewritten variable not listed"
grep -qx NCCL_CROSS_NIC=0 "$dir/env_file" || fail "rewritten variable not in env_file"
[ "$(cat "$dir/digest")" = "$d0" ] || fail "digest did not come back"

# ---- sed -i and mv within a directory ----
[ "$(cat "$dir/NVTE_FUSED_ATTN")" = 1 ] || fail "NVTE_FUSED_ATTN before sed"
sed -i 's/^1$/0/' "$dir/NVTE_FUSED_ATTN" 2>"$TMP/sed.err" || fail "sed -i: $(cat "$TMP/sed.err")"
[ ! -s "$TMP/sed.err" ] || fail "sed -i complained: $(cat "$TMP/sed.err")"
[ "$(cat "$dir/NVTE_FUSED_ATTN")" = 0 ] || fail "sed -i result: $(cat "$dir/NVTE_FUSED_ATTN")"
! ls "$dir" | grep >/dev/null '^sed' || fail "sed's temporary file is left: $(ls "$dir" | grep '^sed')"
grep -qx NVTE_FUSED_ATTN=0 "$dir/env_file" || fail "env_file after sed -i"
mv "$dir/MOUNT_TEST_NEW" "$dir/MOUNT_TEST_MOVED"
! [ -e "$dir/MOUNT_TEST_NEW" ] || fail "mv source still exists"
[ "$(cat "$dir/MOUNT_TEST_MOVED")" = "$want" ] || fail "mv target value"
ino=$(stat -c %i "$dir/MOUNT_TEST_MOVED")
[ "$(ls -i "$dir" | awk '$2 == "MOUNT_TEST_MOVED" { print $1 }')" = "$ino" ] || fail "inode of the moved name"
expect_errno EXDEV "os.rename('$dir/MOUNT_TEST_MOVED', '$MNT/env/maxtext/gfx942/MOUNT_TEST_MOVED')"
expect_errno EXDEV "os.rename('$dir/MOUNT_TEST_MOVED', '$MNT/env/megatron/gfx950/MOUNT_TEST_MOVED')"

# ---- refused values and names ----
for bad in 1BAD BAD-NAME a.b 'sp ace'; do
	expect_errno EINVAL "open('$dir/$bad', 'w')"
done
expect_errno EINVAL "os.rename('$dir/MOUNT_TEST_MOVED', '$dir/9LIVES')"
"$PYTHON" - "$dir/MOUNT_TEST_MOVED" <<'PY' || fail "NUL was not refused with EINVAL"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
try:
    os.write(fd, b"a\0b")
    sys.exit("the write was accepted")
except OSError as e:
    assert e.errno == errno.EINVAL, e
try:
    os.close(fd)    # nothing is committed after a refused write
except OSError as e:
    assert e.errno == errno.EINVAL, e
PY
[ "$(cat "$dir/MOUNT_TEST_MOVED")" = "$want" ] || fail "a refused write changed the value"
expect_errno ok "put('$dir/MOUNT_TEST_BIG', 'x' * 131072)"
[ "$(stat -c %s "$dir/MOUNT_TEST_BIG")" -eq 131073 ] || fail "131,072 bytes not kept"
expect_errno ok "put('$dir/MOUNT_TEST_BIG', 'y' * 131072 + '\\n')"
expect_errno EFBIG "put('$dir/MOUNT_TEST_BIG', 'x' * 131073)"
expect_errno EFBIG "put('$dir/MOUNT_TEST_BIG', 'x' * 200000)"
[ "$(head -c 1 "$dir/MOUNT_TEST_BIG")" = y ] || fail "a refused write changed the big value"

# ---- read-only files, xattrs, modes ----
for v in env_file environ env.sh env.json explain digest; do
	expect_errno EACCES "open('$dir/$v', 'w')"
	expect_errno EACCES "open('$dir/$v', 'a')"
	expect_errno EACCES "os.truncate('$dir/$v', 0)"
	expect_errno EACCES "os.unlink('$dir/$v')"
	expect_errno EACCES "os.rename('$dir/$v', '$dir/MOUNT_TEST_X')"
	expect_errno EACCES "os.rename('$dir/MOUNT_TEST_MOVED', '$dir/$v')"
done
for v in status diagnostics; do
	expect_errno EACCES "open('$MNT/$v', 'w')"
	expect_errno EACCES "os.unlink('$MNT/$v')"
	expect_errno EACCES "os.rename('$MNT/$v', '$MNT/x')"
done
# status and diagnostics live at the root only (SPEC 6.1): in an arch
# directory they are ordinary variable names.
expect_errno ok "put('$dir/status', 'st')"
[ "$(cat "$dir/status")" = st ] || fail "a variable named status"
grep -qx 'status=st' "$dir/env_file" || fail "variable status not in env_file"
rm "$dir/status"
[ ! -e "$dir/status" ] || fail "rm of the variable named status"
expect_errno EACCES "open('$MNT/newfile', 'w')"
expect_errno EPERM "os.mkdir('$dir/sub')"
expect_errno EPERM "os.setxattr('$dir/NVTE_FUSED_ATTN', 'user.primus.layer', b'x')"
expect_errno EPERM "os.removexattr('$dir/NVTE_FUSED_ATTN', 'user.primus.layer')"
expect_errno ENOTSUP "os.setxattr('$dir/NVTE_FUSED_ATTN', 'user.other', b'x')"
[ "$(mode_of "$dir/NVTE_FUSED_ATTN")" = 644 ] || fail "variable mode"
# (NVTE_FUSED_ATTN has an override from sed -i now: chmod 0600 would make
# it private, tests/mount/private.sh. NCCL_IB_GID_INDEX has none.)
expect_errno EPERM "os.chmod('$dir/NCCL_IB_GID_INDEX', 0o600)"
expect_errno EPERM "os.chmod('$dir/NVTE_FUSED_ATTN', 0o755)"
expect_errno ok "os.chmod('$dir/NVTE_FUSED_ATTN', 0o644)"
expect_errno EPERM "os.chown('$dir/NVTE_FUSED_ATTN', $(id -u) + 1, -1)"
expect_errno ok "os.chown('$dir/NVTE_FUSED_ATTN', $(id -u), $(id -g))"
expect_errno ok "os.utime('$dir/NVTE_FUSED_ATTN', (1, 1))"
expect_errno EPERM "os.chmod('$dir', 0o700)"
[ "$(mode_of "$dir")" = 755 ] || fail "directory mode"
# The mode asked for at create is the mount's, but for one that grants
# nothing to others, which makes a private variable (tests/mount/private.sh).
expect_errno ok "os.close(os.open('$dir/MOUNT_TEST_MODE', os.O_CREAT | os.O_WRONLY, 0o640))"
[ "$(mode_of "$dir/MOUNT_TEST_MODE")" = 644 ] || fail "create mode: $(mode_of "$dir/MOUNT_TEST_MODE")"
expect_errno ok "os.close(os.open('$dir/MOUNT_TEST_MODE6', os.O_CREAT | os.O_WRONLY, 0o600))"
[ "$(mode_of "$dir/MOUNT_TEST_MODE6")" = 600 ] || fail "create mode 0600: $(mode_of "$dir/MOUNT_TEST_MODE6")"
expect_errno EEXIST "os.open('$dir/MOUNT_TEST_MODE', os.O_CREAT | os.O_EXCL | os.O_WRONLY)"
envfs_umount

# ---- -o ro refuses every change with EROFS ----
envfs_mount --specs "$ENVFS_SPECS" -o ro
expect_errno EROFS "open('$dir/NVTE_FUSED_ATTN', 'w')"
expect_errno EROFS "open('$dir/MOUNT_TEST_NEW', 'w')"
expect_errno EROFS "os.unlink('$dir/NVTE_FUSED_ATTN')"
expect_errno EROFS "os.rename('$dir/NVTE_FUSED_ATTN', '$dir/X')"
expect_errno EROFS "os.truncate('$dir/NVTE_FUSED_ATTN', 0)"
expect_errno EROFS "os.chmod('$dir/NVTE_FUSED_ATTN', 0o644)"
[ "$(cat "$dir/NVTE_FUSED_ATTN")" = 1 ] || fail "ro mount value"
envfs_umount
