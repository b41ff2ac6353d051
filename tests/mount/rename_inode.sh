#!/bin/bash
# After `mv A B` within a directory, B is the file A was, at once: the
# inode number stat gives is the one a listing gives, and its value, size
# and provenance are the moved value's. The kernel moved A's dentry onto
# B itself; the daemon's invalidations of the two names are queued, not
# waited for, so every round looks in the window before they land.
. "$(dirname "$0")/lib.sh"

envfs_mount --specs "$ENVFS_SPECS" --config "$FIX/exp.yaml"
dir="$MNT/env/maxtext/gfx950"

"$PYTHON" - "$dir" <<'PY' || fail "the moved name disagreed with itself"
import os, sys
d = sys.argv[1]
P = lambda n: os.path.join(d, n)
def listed(n):
    for e in os.scandir(d):
        if e.name == n:
            return e.inode()
    return None
bad = []
with open(P("RENAME_INO_A"), "w") as f:
    f.write("moved value\n")
src, dst = "RENAME_INO_A", "RENAME_INO_B"
for i in range(400):
    want = "value %d\n" % i
    with open(P(src), "w") as f:
        f.write(want)
    before = os.stat(P(src)).st_ino
    os.rename(P(src), P(dst))
    st = os.stat(P(dst))
    # A close waits for the invalidations queued before it, and the
    # removed file's number is freed after the moved one's, were that
    # evicted: a lookup of dst would then get another number.
    with open(P("RENAME_INO_C"), "w") as f:
        f.write("%d\n" % i)
    os.unlink(P("RENAME_INO_C"))
    ls = listed(dst)
    st2 = os.stat(P(dst))
    with open(P(dst)) as f:
        got = f.read()
    layer = os.getxattr(P(dst), "user.primus.layer").decode()
    if os.path.exists(P(src)):
        bad.append("%d: the source %s still exists" % (i, src))
    if not (before == st.st_ino == ls == st2.st_ino):
        bad.append("%d: inode before mv %d, stat %d, listing %s, stat again %d"
                   % (i, before, st.st_ino, ls, st2.st_ino))
    if got != want:
        bad.append("%d: value %r, want %r" % (i, got, want))
    if st.st_size != len(want) or st2.st_size != len(want):
        bad.append("%d: size %d then %d, want %d" % (i, st.st_size, st2.st_size, len(want)))
    if layer != "override":
        bad.append("%d: layer %r" % (i, layer))
    src, dst = dst, src
for b in bad[:20]:
    print(b, file=sys.stderr)
if bad:
    sys.exit("%d disagreements in 400 rounds" % len(bad))
PY
envfs_umount
