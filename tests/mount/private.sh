#!/bin/bash
# Secrecy follows the value when files move and are made (issue 14.14,
# the filesystem part): after `mv HF_TOKEN X`, X is secret (0600, its
# value redacted in explain and xattrs, the views that hold it 0600,
# unreadable to other users); a file created with a mode that grants
# nothing to group and others (O_CREAT 0600, as sed -i's temporary is)
# makes a private variable, treated as a secret; the flag survives a
# remount (--state). chmod between 0600 and 0644 makes an override
# private or public again (sed -i copies the original's mode onto its
# temporary), but a declared secret cannot be made readable.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "needs root for setpriv: skipped" >&2; exit 77; }
command -v setpriv >/dev/null || { echo "setpriv is missing: skipped" >&2; exit 77; }

TOKEN="hf_PrivateTestToken9137"
VAL2="other-private-value-5521"
state="$TMP/run.state.yaml"
dir="$MNT/env/maxtext/gfx950"
# Secrets by --env NAME (the value from this environment): given inline
# they would draw the command-line-secret warning.
export HF_TOKEN="$TOKEN" WANDB_API_KEY=wandb-key-7781
IN=(--specs "$ENVFS_SPECS" --env HF_TOKEN --env WANDB_API_KEY --state "$state" -o allow_other)
chmod 755 "$TMP"
envfs_mount "${IN[@]}"

# secret_file NAME VALUE: mode 0600, the value readable by the owner,
# redacted in explain and in every view but environ-like ones (0600),
# and EACCES for another user.
secret_file() {
	local n=$1 v=$2 f
	[ "$(mode_of "$dir/$n")" = 600 ] || fail "$n: mode $(mode_of "$dir/$n")"
	[ "$(cat "$dir/$n")" = "$v" ] || fail "$n: value"
	! grep -qF "$v" "$dir/explain" || fail "$n: its value is in explain"
	! getfattr -d -m - --absolute-names "$dir/$n" 2>/dev/null | grep >/dev/null -F "$v" ||
		fail "$n: its value is in an xattr"
	for f in env_file environ env.sh env.json; do
		[ "$(mode_of "$dir/$f")" = 600 ] || fail "$n: $f is $(mode_of "$dir/$f")"
	done
	expect_other EACCES -- "open('$dir/$n').read()"
	expect_other EACCES -- "open('$dir/env_file').read()"
}

# ---- mv of a secret: the new name is secret ----
[ "$(mode_of "$dir/HF_TOKEN")" = 600 ] || fail "HF_TOKEN is not secret to begin with"
mv "$dir/HF_TOKEN" "$dir/MOVED_TOKEN"
secret_file MOVED_TOKEN "$TOKEN"

# ---- O_CREAT 0600: a private variable ----
"$PYTHON" - "$dir/PRIV_NEW" "$VAL2" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, sys.argv[2].encode() + b"\n")
os.close(fd)
PY
secret_file PRIV_NEW "$VAL2"
# A later write keeps it private.
echo "$VAL2-b" >"$dir/PRIV_NEW"
secret_file PRIV_NEW "$VAL2-b"
# O_CREAT 0644: an ordinary variable.
expect_errno ok "os.close(os.open('$dir/PUB_NEW', os.O_WRONLY | os.O_CREAT, 0o644))"
[ "$(mode_of "$dir/PUB_NEW")" = 644 ] || fail "PUB_NEW: mode $(mode_of "$dir/PUB_NEW")"
expect_other ok -- "len(open('$dir/PUB_NEW').read())"

# ---- what sed -i does to a secret, step by step ----
"$PYTHON" - "$dir" "$TOKEN" <<'PY' || fail "sed's temporary of a secret was readable"
import os, stat, subprocess, sys
d, token = sys.argv[1], sys.argv[2]
tmp = os.path.join(d, "sedAbC123")
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)   # mkostemp
os.write(fd, token.encode() + b"X\n")
os.close(fd)
assert stat.S_IMODE(os.stat(tmp).st_mode) == 0o600
assert token not in open(os.path.join(d, "explain")).read()
r = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                    "cat", tmp], capture_output=True)
assert r.returncode != 0 and token.encode() not in r.stdout, r
os.chmod(tmp, 0o600)          # the original's mode, copied
os.rename(tmp, os.path.join(d, "MOVED_TOKEN"))
PY
secret_file MOVED_TOKEN "${TOKEN}X"
# sed -i itself, on the secret and on a plain variable.
sed -i 's/X$/Y/' "$dir/MOVED_TOKEN" 2>"$TMP/sed.err" || fail "sed -i: $(cat "$TMP/sed.err")"
[ ! -s "$TMP/sed.err" ] || fail "sed -i complained: $(cat "$TMP/sed.err")"
secret_file MOVED_TOKEN "${TOKEN}Y"
sed -i 's/^1$/0/' "$dir/NVTE_FUSED_ATTN" 2>"$TMP/sed.err" || fail "sed -i: $(cat "$TMP/sed.err")"
[ ! -s "$TMP/sed.err" ] || fail "sed -i complained: $(cat "$TMP/sed.err")"
[ "$(mode_of "$dir/NVTE_FUSED_ATTN")" = 644 ] || fail "sed -i made a plain variable private"
[ "$(cat "$dir/NVTE_FUSED_ATTN")" = 0 ] || fail "sed -i result"
! ls "$dir" | grep >/dev/null '^sed' || fail "sed's temporary is left"

# ---- chmod ----
expect_errno ok "os.chmod('$dir/PRIV_NEW', 0o644)"
[ "$(mode_of "$dir/PRIV_NEW")" = 644 ] || fail "chmod 644 of a private variable"
grep -qF "$VAL2-b" "$dir/explain" || fail "a public variable is redacted"
expect_errno ok "os.chmod('$dir/PRIV_NEW', 0o600)"
secret_file PRIV_NEW "$VAL2-b"
# A declared secret stays one, overridden or not; a variable without an
# override has nothing to carry the flag.
echo wandb-key-7782 >"$dir/WANDB_API_KEY"
expect_errno EPERM "os.chmod('$dir/WANDB_API_KEY', 0o644)"
[ "$(mode_of "$dir/WANDB_API_KEY")" = 600 ] || fail "chmod made a secret readable"
expect_errno EPERM "os.chmod('$dir/NCCL_IB_GID_INDEX', 0o600)"
expect_errno EPERM "os.chmod('$dir/PRIV_NEW', 0o755)"
grep -q 'name: "PRIV_NEW", value: .*, private: true}' "$state" || fail "the state file lacks the flag"
! grep -qF "$TOKEN" "$MNT/status" "$MNT/diagnostics" || fail "a secret in status or diagnostics"
envfs_umount

# ---- after a remount ----
envfs_mount "${IN[@]}"
secret_file PRIV_NEW "$VAL2-b"
secret_file MOVED_TOKEN "${TOKEN}Y"
[ "$(mode_of "$dir/PUB_NEW")" = 644 ] || fail "PUB_NEW after a remount"
envfs_umount
