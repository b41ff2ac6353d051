#!/bin/bash
# Request counts (issue 7): the caching policy, made observable through the
# `requests <op> <count>` lines of status.
#
# - -o ro: a second `cat` of an unchanged variable (and of a view, and an
#   `ls` of its directory) costs zero requests: no OPEN (answered ENOSYS
#   once, so the kernel stops asking), no FLUSH, no RELEASE, no LOOKUP,
#   GETATTR or READ (long timeouts, kept pages, cached listings).
# - writable mount: exactly the OPEN round trip, plus the RELEASE the kernel
#   sends after every OPEN (in the background: close() does not wait for
#   it; no flag spares it). No FLUSH (read-only opens reply noflush), and
#   nothing else.
#
# Reading status costs requests too; those about status itself are counted
# on their own line (`requests status`) and left out of the comparison.
. "$(dirname "$0")/lib.sh"

SNAP=""
LAST_SELF=-1
# snapshot: sets SNAP to the "op count" lines of a fresh status. On -o ro,
# status is page-cached like any file and the daemon drops those pages
# right after each read (from its reload thread): a read that races that
# is recognised by an unchanged `requests status` count and retried.
snapshot() {
	local i s self
	for i in $(seq 1 200); do
		s=$(cat "$MNT/status")
		self=$(sed -n 's/^requests status //p' <<<"$s")
		[ -n "$self" ] || fail "status has no 'requests status' line"
		if [ "$self" != "$LAST_SELF" ]; then
			LAST_SELF=$self
			SNAP=$(sed -n '/^requests status /d; s/^requests //p' <<<"$s")
			return 0
		fi
		sleep 0.01
	done
	fail "status did not show fresh counters within 2 s"
}

# delta BEFORE AFTER: "op +n" for every counter that moved.
delta() {
	join <(sort <<<"$1") <(sort <<<"$2") | awk '$3 != $2 { print $1, "+" ($3 - $2) }'
}

# --- -o ro: zero requests ---------------------------------------------------
envfs_mount --specs "$ENVFS_SPECS" --config "$FIX/exp.yaml" -o ro
dir="$MNT/env/maxtext/gfx950"
f="$dir/NCCL_IB_GID_INDEX"
[ "$(cat "$f")" = 5 ] || fail "ro: value $(cat "$f")"
cat "$f" >/dev/null
cat "$dir/env_file" >/dev/null
ls "$dir" >/dev/null
[ "$(sed -n 's/^mount: //p' "$MNT/status")" = ro ] || fail "status does not say mount: ro"
snapshot
[ -n "$(sed -n 's/^open //p' <<<"$SNAP")" ] || fail "no 'requests open' line in status"

snapshot; before=$SNAP
[ "$(cat "$f")" = 5 ] || fail "ro: warm value $(cat "$f")"
snapshot; after=$SNAP
d=$(delta "$before" "$after")
[ -z "$d" ] || fail "ro: a warm cat of a variable caused requests: $(echo $d)"

snapshot; before=$SNAP
grep -qx NCCL_IB_GID_INDEX=5 "$dir/env_file" || fail "ro: env_file lacks the value"
ls "$dir" | grep >/dev/null -x NCCL_IB_GID_INDEX || fail "ro: ls lacks the variable"
stat "$f" >/dev/null
snapshot; after=$SNAP
d=$(delta "$before" "$after")
[ -z "$d" ] || fail "ro: a warm cat of env_file, ls or stat caused requests: $(echo $d)"
note "ro: warm cat, cat env_file, ls, stat: 0 requests"

# The status file itself stays current: its counters move with a request.
snapshot; before=$SNAP
cat "$dir/NO_SUCH_VARIABLE_$$" 2>/dev/null && fail "ro: a missing variable reads"
snapshot; after=$SNAP
[ "$(delta "$before" "$after")" = "lookup +1" ] ||
	fail "ro: a lookup of a new name shows as: $(delta "$before" "$after")"
envfs_umount

# --- writable: the OPEN round trip ------------------------------------------
envfs_mount --specs "$ENVFS_SPECS" --config "$FIX/exp.yaml"
[ "$(cat "$f")" = 5 ] || fail "rw: value $(cat "$f")"
cat "$f" >/dev/null
sleep 0.1                    # the RELEASEs of those opens land
snapshot; before=$SNAP
[ "$(cat "$f")" = 5 ] || fail "rw: warm value $(cat "$f")"
snapshot; after=$SNAP
d=$(delta "$before" "$after" | grep -v '^release ' || true)
[ "$d" = "open +1" ] || fail "rw: a warm cat caused, besides RELEASE: $(echo $d)"
# RELEASE is sent after close() returns; wait for it, and for nothing else.
for i in $(seq 1 100); do
	snapshot
	d=$(delta "$before" "$SNAP")
	[ "$(echo $d)" = "open +1 release +1" ] && break
	[ "$i" -lt 100 ] || fail "rw: a warm cat caused: $(echo $d)"
	sleep 0.01
done
note "rw: warm cat: $(echo $d)"
envfs_umount
