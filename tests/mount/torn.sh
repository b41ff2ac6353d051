#!/bin/bash
# No torn reads during reloads, and no name vanishing in between (issue
# 14.6). The config is rewritten every few milliseconds, in place and by
# rename, switching a variable among values of different sizes (some
# over a page), while readers read it and env_file: every read must be
# exactly one of the written values (env_file: hold exactly one), and its
# fstat size must agree with its bytes; a
# name that every version of the config sets must never be missing. On
# -o ro (reads without an open) and on a writable mount. TORN_SECONDS
# (3 by default) per mount.
. "$(dirname "$0")/lib.sh"

SECONDS_EACH=${TORN_SECONDS:-3}
cfg="$TMP/exp.yaml"

run() {
	"$PYTHON" - "$cfg" "$MNT/env/maxtext/gfx950" "$SECONDS_EACH" <<'PY'
import errno, os, sys, threading, time
cfg, d, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
values = ["a" * 3, "b" * 40, "c" * 4000, "d" * 5000, "e" * 9000, ""]
want = {(v + "\n").encode() for v in values}
stop = time.time() + secs
bad = []
counts = {"reads": 0, "writes": 0, "held": 0}

def config(i):
    v = values[i % len(values)]
    return 'env:\n  TORN_V: "%s"\n  TORN_STAY: "%d"\n' % (v, i % 7)

def writer():
    i = 0
    while time.time() < stop:
        i += 1
        if i % 2:
            with open(cfg, "w") as f:            # in place
                f.write(config(i))
        else:
            with open(cfg + ".new", "w") as f:   # by rename
                f.write(config(i))
            os.rename(cfg + ".new", cfg)
        counts["writes"] += 1
        time.sleep(0.003)

def reader(name, check):
    p = os.path.join(d, name)
    while time.time() < stop and len(bad) < 5:
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError as e:
            bad.append("%s: open: %s" % (name, errno.errorcode[e.errno]))
            continue
        try:
            size = os.fstat(fd).st_size
            data = b""
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(fd)
        counts["reads"] += 1
        msg = check(data, size)
        if msg:
            bad.append("%s: %s" % (name, msg))

def check_v(data, size):
    if data not in want:
        return "read %d bytes that are no written value: %r...%r" % (len(data), data[:12], data[-12:])
    if size != len(data):
        return "fstat says %d bytes, the read gave %d" % (size, len(data))

def check_view(data, size):
    lines = data.split(b"\n")
    vals = [l[len(b"TORN_V="):] for l in lines if l.startswith(b"TORN_V=")]
    if len(vals) != 1 or (vals[0] + b"\n") not in want or not data.endswith(b"\n"):
        return "env_file of %d bytes holds no whole value: %r" % (len(data), [v[:12] for v in vals])
    if size != len(data):
        return "env_file: fstat says %d bytes, the read gave %d" % (size, len(data))

def check_stay(data, size):
    if data.strip() not in [str(i).encode() for i in range(7)]:
        return "read %r" % data

def held():
    # A descriptor kept open across reloads keeps reading what it opened.
    p = os.path.join(d, "TORN_V")
    while time.time() < stop and len(bad) < 5:
        try:
            f = open(p, "rb")
        except OSError as e:
            bad.append("held open: open: %s" % errno.errorcode[e.errno])
            continue
        with f:
            first = f.read()
            time.sleep(0.02)
            f.seek(0)
            again = f.read()
        counts["held"] += 1
        if first not in want or again != first:
            bad.append("held open: %d then %d bytes" % (len(first), len(again)))

ts = [threading.Thread(target=writer)]
ts += [threading.Thread(target=reader, args=("TORN_V", check_v)) for _ in range(3)]
ts += [threading.Thread(target=reader, args=("TORN_STAY", check_stay))]
ts += [threading.Thread(target=reader, args=("env_file", check_view))]
ts += [threading.Thread(target=held)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("# %(writes)d config rewrites, %(reads)d reads, %(held)d held-open rereads" % counts,
      file=sys.stderr)
if bad:
    print("\n".join(bad[:5]), file=sys.stderr)
    sys.exit(1)
PY
}

printf 'env:\n  TORN_V: "aaa"\n  TORN_STAY: "0"\n' >"$cfg"
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg" -o ro
run || fail "-o ro: a torn or missing read"
envfs_umount
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg"
run || fail "writable: a torn or missing read"
envfs_umount

# In-place writers that follow one another, each holding the config open
# (emptied by O_TRUNC) for 300 ms before it writes: the file is held open
# for longer than the reload's patience with one writer (1 s), but by
# writers that come and go, so every load waits for the writer it found;
# none publishes the emptied file (TORN_STAY would vanish).
slow_writers() {
	"$PYTHON" - "$cfg" "$MNT/env/maxtext/gfx950/TORN_STAY" <<'PY'
import errno, os, sys, threading, time
cfg, p = sys.argv[1], sys.argv[2]
done = threading.Event()
bad, reads = [], [0]

def reader():
    while not done.is_set() and len(bad) < 5:
        try:
            with open(p, "rb") as f:
                data = f.read()
        except OSError as e:
            bad.append("TORN_STAY: open: %s" % errno.errorcode[e.errno])
            continue
        reads[0] += 1
        # What the earlier runs left (0-6), or a slow writer's (0-11).
        if data.strip() not in [str(i).encode() for i in range(12)]:
            bad.append("TORN_STAY: read %r" % data)
        time.sleep(0.005)

t = threading.Thread(target=reader)
t.start()
for i in range(12):
    with open(cfg, "w") as f:
        f.flush()
        time.sleep(0.3)
        f.write('env:\n  TORN_V: "slow%d"\n  TORN_STAY: "%d"\n' % (i, i))
done.set()
t.join()
print("# 12 slow in-place writers, %d reads" % reads[0], file=sys.stderr)
if bad:
    print("\n".join(bad[:5]), file=sys.stderr)
    sys.exit(1)
PY
}
envfs_mount --specs "$ENVFS_SPECS" --config "$cfg"
slow_writers || fail "slow in-place writers: the emptied config was published"
wait_for_value "$MNT/env/maxtext/gfx950/TORN_V" slow11 2000 >/dev/null
envfs_umount
