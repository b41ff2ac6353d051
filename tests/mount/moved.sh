#!/bin/bash
# A write handle held open across mv and rm (issue 14.5) commits where the
# file went, as on a regular file where the data follows the inode: to B
# after `mv A B`, nowhere after `rm A` (nor after another file is moved
# over A, which unlinks A's inode). The moved or removed name never comes
# back, in the mount or in the --state file.
. "$(dirname "$0")/lib.sh"

state="$TMP/run.state.yaml"
dir="$MNT/env/maxtext/gfx950"
envfs_mount --specs "$ENVFS_SPECS" --config "$FIX/exp.yaml" --state "$state"

"$PYTHON" - "$dir" "$state" <<'PY' || fail "a held-open writer committed to the wrong name"
import os, sys
d, state = sys.argv[1], sys.argv[2]
P = lambda n: os.path.join(d, n)
def read(n):
    try:
        with open(P(n)) as f:
            return f.read()
    except FileNotFoundError:
        return None
def put(n, v):
    with open(P(n), "w") as f:
        f.write(v)
def in_state(n):
    return ('name: "%s",' % n) in open(state).read()

# mv A B while A is open for writing: the close commits to B.
put("MV_A", "old\n")
fd = os.open(P("MV_A"), os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"new\n")
os.rename(P("MV_A"), P("MV_B"))
assert read("MV_B") == "old\n", read("MV_B")      # not committed yet
os.close(fd)
assert read("MV_A") is None, "MV_A came back: %r" % read("MV_A")
assert read("MV_B") == "new\n", read("MV_B")
assert 'name: "MV_B", value: "new"' in open(state).read()

# Twice renamed, then closed: the last name.
fd = os.open(P("MV_B"), os.O_WRONLY | os.O_APPEND)
os.write(fd, b"more\n")
os.rename(P("MV_B"), P("MV_C"))
os.rename(P("MV_C"), P("MV_D"))
os.close(fd)
assert read("MV_B") is None and read("MV_C") is None
assert read("MV_D") == "new\nmore\n", read("MV_D")

# rm A while A is open for writing: the close commits nothing.
put("RM_A", "old\n")
fd = os.open(P("RM_A"), os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"ghost\n")
os.unlink(P("RM_A"))
os.close(fd)
assert read("RM_A") is None, "RM_A came back: %r" % read("RM_A")
assert "ghost" not in open(state).read()

# rm of a config variable while open: it stays unset.
assert read("NCCL_IB_GID_INDEX") == "5\n"
fd = os.open(P("NCCL_IB_GID_INDEX"), os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"9\n")
os.unlink(P("NCCL_IB_GID_INDEX"))
os.close(fd)
assert read("NCCL_IB_GID_INDEX") is None, read("NCCL_IB_GID_INDEX")

# rm, then a new file of the same name, then the old writer closes: the
# new file keeps its own value.
put("RE_A", "first\n")
fd = os.open(P("RE_A"), os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"stale\n")
os.unlink(P("RE_A"))
put("RE_A", "second\n")
os.close(fd)
assert read("RE_A") == "second\n", read("RE_A")

# Another file moved over A while A is open: A's inode is gone.
put("OV_A", "a\n")
put("OV_C", "c\n")
fd = os.open(P("OV_A"), os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"lost\n")
os.rename(P("OV_C"), P("OV_A"))
os.close(fd)
assert read("OV_A") == "c\n", read("OV_A")
assert read("OV_C") is None

# A bare truncation held across mv: the empty value goes to the new name.
put("TR_A", "full\n")
fd = os.open(P("TR_A"), os.O_WRONLY | os.O_TRUNC)
os.rename(P("TR_A"), P("TR_B"))
os.close(fd)
assert read("TR_A") is None and read("TR_B") == "\n", (read("TR_A"), read("TR_B"))

# A file created and renamed before its first close.
fd = os.open(P("NEW_N"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
os.write(fd, b"v\n")
os.rename(P("NEW_N"), P("NEW_M"))
os.close(fd)
assert read("NEW_N") is None and read("NEW_M") == "v\n", (read("NEW_N"), read("NEW_M"))
for n in ("MV_A", "MV_B", "MV_C", "RM_A", "OV_C", "TR_A", "NEW_N"):
    assert not (in_state(n) and ('name: "%s", value' % n) in open(state).read()), n
PY
envfs_umount

# The remount agrees.
envfs_mount --specs "$ENVFS_SPECS" --config "$FIX/exp.yaml" --state "$state"
[ "$(cat "$dir/MV_D")" = "$(printf 'new\nmore')" ] || fail "MV_D after remount"
for n in MV_A MV_B RM_A NCCL_IB_GID_INDEX NEW_N; do
	[ ! -e "$dir/$n" ] || fail "$n exists after a remount"
done
[ "$(cat "$dir/RE_A")" = second ] || fail "RE_A after remount"
envfs_umount
