#!/bin/bash
# The mount in the system (issue 15): `meson install` into a temporary
# destdir, put in place (its prefix and mount-helper directory overlaid)
# in a mount namespace of this test's own, then the real mount(8):
#   mount -t fuse.primus-envfs none DIR -o config=...,state=...
# finds the installed mount.fuse.primus-envfs (a link to the binary) and
# runs it with no PATH at all; an fstab line works through mount -T; and
# without the helper, Debian's mount.fuse3 runs primus-envfs from its
# default PATH (sh's: /usr/local/bin among it), or from a full path given
# in the type. Skipped (77) unless root with unshare and overlayfs.
if [ -z "${ENVFS_MOUNT8_NS:-}" ]; then
	if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v mount >/dev/null; then
		echo "needs root, unshare(1) and mount(8): skipped" >&2
		exit 77
	fi
	ENVFS_MOUNT8_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

build=$(cd "$(dirname "$ENVFS_BIN")/.." && pwd)
eval "$(meson introspect --buildoptions "$build" | "$PYTHON" -c '
import json, os, shlex, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
for k in ("bindir",):
    print("%s=%s" % (k, shlex.quote(os.path.join(o["prefix"], o[k]))))
print("prefix=%s" % shlex.quote(o["prefix"]))
print("helperdir=%s" % shlex.quote(o["mount_helper_dir"]))
')"
[ -n "$helperdir" ] || { note "built with -Dmount_helper_dir='': no helper to try"; exit 77; }
dest="$TMP/dest"
meson install -C "$build" --no-rebuild --destdir "$dest" >"$TMP/install.log" 2>&1 ||
	fail "meson install --destdir: $(tail -5 "$TMP/install.log")"
helper="$dest$helperdir/mount.fuse.primus-envfs"
[ -L "$helper" ] && [ "$(readlink "$helper")" = "$bindir/primus-envfs" ] ||
	fail "no mount.fuse.primus-envfs -> $bindir/primus-envfs in $dest$helperdir"

# overlay LOWER DIR: DIR shows LOWER's files over its own, here only.
overlay() {
	mkdir -p "$2"
	mount -t overlay overlay -o "lowerdir=$1:$2" "$2" || {
		note "overlayfs not available: skipped"
		exit 77
	}
}
overlay "$dest$prefix" "$prefix"
sbin_real=$(realpath "$helperdir")
overlay "$dest$helperdir" "$sbin_real"
[ -x "/sbin/mount.fuse.primus-envfs" ] || fail "the helper is not where mount(8) looks"

cfg="$TMP/exp.yaml"
printf 'env:\n  FROM_CONFIG: "c"\n' >"$cfg"
state="$TMP/state.yaml"
dir="$MNT/env/maxtext/gfx950"

# mount8 ARGS...: the real mount(8) with no environment at all; the
# daemon's pid in PID afterwards.
mount8() {
	env -i /usr/bin/mount "$@" 2>"$TMP/mount.err" || {
		cat "$TMP/mount.err" >&2
		fail "mount $* failed"
	}
	mountpoint -q "$MNT" || fail "mount $*: nothing mounted"
	PID=$(pgrep -n -f -- "none $MNT" || true)
	[ "$(findmnt -n -o FSTYPE "$MNT")" = fuse.primus-envfs ] ||
		fail "mount $*: type $(findmnt -n -o FSTYPE "$MNT")"
}
umount8() {
	umount "$MNT" || fail "umount $MNT"
	! mountpoint -q "$MNT" || fail "$MNT still mounted"
	PID=""
}

# 1. the helper, by mount -t, with fstab's options among them
mount8 -t fuse.primus-envfs none "$MNT" -o "config=$cfg,state=$state,noauto,_netdev,nofail"
[ "$(cat "$dir/FROM_CONFIG")" = c ] || fail "helper: the config= input did not reach the mount"
grep -qx "config: $cfg" "$MNT/status" && grep -qx "state: $state" "$MNT/status" ||
	fail "helper: status: $(head -6 "$MNT/status")"
specs=$(sed -n 's/^specs: //p' "$MNT/status")
[ "$(realpath "$specs")" = "$(realpath "$prefix/share/primus-envfs/specs")" ] ||
	fail "helper: not the installed specs: $specs"
echo 3 >"$dir/NNODES"
umount8
grep -q 'NNODES' "$state" || fail "helper: state= did not persist the write"

# 2. an fstab line (mount -T: this test's own fstab), mounted by its dir
printf 'none %s fuse.primus-envfs config=%s,state=%s,ro,nofail,_netdev 0 0\n' "$MNT" "$cfg" "$state" >"$TMP/fstab"
mount8 -T "$TMP/fstab" "$MNT"
[ "$(cat "$dir/NNODES")" = 3 ] || fail "fstab: the state file's override is not there"
grep -qx 'mount: ro' "$MNT/status" || fail "fstab: ro was not applied"
umount8

# 3. a failing start: mount(8) fails with the reason, nothing mounted
if env -i /usr/bin/mount -t fuse.primus-envfs none "$MNT" -o config=/nonexistent/exp.yaml 2>"$TMP/bad.err"; then
	fail "mount with a missing config succeeded"
fi
grep -q '/nonexistent/exp.yaml' "$TMP/bad.err" || fail "mount with a missing config: $(cat "$TMP/bad.err")"
! mountpoint -q "$MNT" || fail "a failed mount left something mounted"

# 4. no helper: Debian's mount.fuse3 runs the command named by the type
umount "$sbin_real"
# A helper installed on this machine itself (the README's first command
# runs meson install) is hidden here: an overlay whose upper layer deletes
# it, in this test's own mount namespace only.
if [ -e "$sbin_real/mount.fuse.primus-envfs" ] || [ -L "$sbin_real/mount.fuse.primus-envfs" ]; then
	mkdir -p "$TMP/sbin-up" "$TMP/sbin-work"
	mount -t overlay overlay \
		-o "lowerdir=$sbin_real,upperdir=$TMP/sbin-up,workdir=$TMP/sbin-work" "$sbin_real" ||
		fail "could not hide the installed helper with an overlay"
	rm -f "$sbin_real/mount.fuse.primus-envfs"
fi
[ ! -e /sbin/mount.fuse.primus-envfs ] || fail "the helper is still there"
if [ -x /sbin/mount.fuse3 ] || [ -x /sbin/mount.fuse ]; then
	mount8 -t "fuse.$bindir/primus-envfs" none "$MNT" -o "config=$cfg"
	[ "$(cat "$dir/FROM_CONFIG")" = c ] || fail "mount.fuse3 with a full path: config not applied"
	umount8
	case ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:" in
	*":$bindir:"*)
		mount8 -t fuse.primus-envfs none "$MNT" -o "config=$cfg,nofail"
		[ "$(cat "$dir/FROM_CONFIG")" = c ] || fail "mount.fuse3 by name: config not applied"
		umount8 ;;
	*) note "$bindir is not on mount.fuse3's default PATH: only the full-path type tried" ;;
	esac
else
	note "no mount.fuse3: the fallback was not tried"
fi
echo "ok: mount8"
