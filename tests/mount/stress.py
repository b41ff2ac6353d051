#!/usr/bin/python3
"""Concurrency stress of a mounted primus-envfs (issue 8.4), driven by
tests/mount/stress.sh, which owns the mount.

    stress.py run DIR CONFIG SECONDS RESULT   writers, readers, config rewrites
    stress.py ro DIR CONFIG SECONDS           readers and config rewrites (-o ro)
    stress.py verify DIR RESULT               after a remount: last acked values

run: 4 writer threads each own 50 variables W<w>_<i> in DIR and set them in
turn to values that name the writer, the variable and a sequence number,
padded to a length (sometimes over a page) that the sequence number
determines, so any value read can be checked to be one written whole. A
value is written in three write() calls after an O_TRUNC open, so a torn
or partial commit would show. A write counts as acknowledged when close()
returned; its time (monotonic, taken after close) is recorded.

4 reader threads read random variable files and env_file in a loop, each
read stamped with the time before its open(). A read is stale when some
write to that variable was acknowledged before the read started and the
read shows an older sequence number (or the variable missing, the empty
value its creating open() gave it, or the config's value under an
override). Everything is checked after the run,
so the readers stay fast.

A fifth thread rewrites CONFIG every 10 ms, in turn in place (truncate and
write) and by rename: it changes MOUNT_STRESS_CFG to a value whose length
(10 bytes to over two pages) follows from the rewrite's number, and sets
W0_0 and W1_1, which the overrides must keep shadowing through every
reload. Every read of MOUNT_STRESS_CFG, and of its line in env_file, must
be exactly one written value, and its fstat size must agree with the
bytes read; it must never be missing (every version sets it). `ro` runs the readers and the rewriter alone, for a -o ro
mount, where reads come without an open.

RESULT (JSON) gets the last acknowledged value of every variable, which
verify compares after the remount with the same --state.
"""
import bisect
import json
import os
import random
import sys
import threading
import time

WRITERS = 4
VARS = 50
READERS = 4
PAGE = 4096


def name_of(w, i):
    return "W%d_%d" % (w, i)


def value_of(w, i, seq):
    """The value written for (w, i, seq); its length follows from seq.

    Every fourth write of every fifth variable is over a page (so a value
    spans pages and read() calls), the others 20..200 bytes. At most 40
    variables are long at once, which keeps the state file far below its
    1 MiB limit."""
    head = "w%d-i%d-seq%d-" % (w, i, seq)
    rnd = random.Random(seq * 1000003 + w * 1009 + i)
    if i % 5 == 0 and seq % 4 == 0:
        n = PAGE + rnd.randrange(1, 2 * PAGE)
    else:
        n = rnd.randrange(20, 200)
    fill = "abcdefghijklmnopqrstuvwxyz0123456789"[seq % 36]
    return head + fill * max(0, n - len(head) - 4) + "-end"


def parse(value):
    """(w, i, seq) of a value written whole, or None when it is torn."""
    try:
        w, i, seq, _ = value.split("-", 3)
        w, i, seq = int(w[1:]), int(i[1:]), int(seq[3:])
    except ValueError:
        return None
    if value != value_of(w, i, seq):
        return None
    return w, i, seq


CFG_SIZES = (10, 100, 3000, PAGE + 100, 2 * PAGE + 100)


def cfg_value(k):
    """MOUNT_STRESS_CFG of the k-th config rewrite."""
    head = "c%d-" % k
    fill = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[k % 26]
    return head + fill * max(0, CFG_SIZES[k % len(CFG_SIZES)] - len(head))


def cfg_ok(value):
    try:
        return value == cfg_value(int(value[1:value.index("-")]))
    except ValueError:
        return False


def write_config(config, k):
    text = ('env:\n  MOUNT_STRESS_CFG: "%s"\n'
            '  W0_0: "from-config-%d"\n  W1_1: "from-config-%d"\n' % (cfg_value(k), k, k))
    if k % 2:
        with open(config, "w") as f:       # in place: truncate, write
            f.write(text)
    else:
        tmp = config + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, config)


def check_cfg_view(raw, size, errors):
    """env_file read whole: its size agrees, and its MOUNT_STRESS_CFG line
    is exactly one written value. Returns the text."""
    if size != len(raw):
        errors.append(("torn", "env_file: fstat says %d bytes, read %d" % (size, len(raw))))
    text = raw.decode()
    cfg = [line for line in text.split("\n") if line.startswith("MOUNT_STRESS_CFG=")]
    if len(cfg) != 1 or not cfg_ok(cfg[0].split("=", 1)[1]):
        errors.append(("torn", "env_file: MOUNT_STRESS_CFG lines %r" % [c[:40] for c in cfg]))
    return text


def check_cfg_var(raw, size, errors):
    """MOUNT_STRESS_CFG read whole: one written value, its size agreeing."""
    if size != len(raw) or not raw.endswith(b"\n") or not cfg_ok(raw[:-1].decode()):
        errors.append(("torn", "MOUNT_STRESS_CFG: %d bytes (fstat %d): %r...%r"
                       % (len(raw), size, raw[:16], raw[-16:])))


def rewrite_loop(config, stop, counts, key):
    """Rewrites config every 10 ms until stop; counts[key] = rewrites."""
    k = 0
    while not stop.wait(0.01):
        k += 1
        write_config(config, k)
    counts[key] = k


def min_writes():
    return int(os.environ.get("STRESS_MIN_WRITES", "100"))


def min_vars():
    return int(os.environ.get("STRESS_MIN_VARS", str(WRITERS * VARS // 2)))


def run_threads(threads, stop, seconds, enough=None):
    """Runs threads for seconds, then on until enough() says the run did
    what it must to prove anything (a slow build or a loaded machine
    makes fewer writes in the same time), with a guard against a hang
    at 20 times seconds; a run that stops short fails on its counts."""
    for th in threads:
        th.start()
    stop.wait(seconds)
    guard = time.monotonic() + 19 * seconds
    while enough and not stop.is_set() and not enough() and time.monotonic() < guard:
        stop.wait(0.1)
    stop.set()
    for th in threads:
        th.join()


def read_file(path):
    """(bytes, fstat size) of one open, read to EOF."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        data = b""
        while True:
            chunk = f.read(1 << 16)
            if not chunk:
                return data, size
            data += chunk


class Acks:
    """Per variable, the acknowledged writes in order: times and seqs.
    One writer thread appends to a variable's lists; readers only look
    after the run."""

    def __init__(self):
        self.t = {name_of(w, i): [] for w in range(WRITERS) for i in range(VARS)}
        self.seq = {n: [] for n in self.t}
        self.started = {n: set() for n in self.t}   # every seq attempted

    def before(self, name, t):
        """The newest seq acknowledged before t, or None."""
        k = bisect.bisect_left(self.t[name], t)
        return self.seq[name][k - 1] if k else None


def run(d, config, seconds, result):
    acks = Acks()
    stop = threading.Event()
    errors = []           # (kind, detail): torn, stale, failed writes
    reads = []            # (t_start, name, seq or None or "config")
    env_reads = []        # (t_start, {name: seq or "config"})
    counts = {"writes": 0, "var_reads": 0, "env_reads": 0, "cfg_reads": 0,
              "config_rewrites": 0, "long_writes": 0, "close_ms_max": 0.0}
    lock = threading.Lock()

    def writer(w):
        rnd = random.Random(w)
        seq = 0
        n = 0
        long_n = 0
        close_max = 0.0
        while not stop.is_set():
            # Variables 0 and 1 first: the config shadows W0_0 and W1_1
            # until they are overridden, and the test checks that they
            # are, however few writes a slow (sanitizer) build manages.
            i = seq if seq < 2 else rnd.randrange(VARS)
            seq += 1
            name = name_of(w, i)
            data = (value_of(w, i, seq) + "\n").encode()
            acks.started[name].add(seq)
            cuts = sorted(rnd.sample(range(1, len(data)), 2))
            try:
                fd = os.open(os.path.join(d, name),
                             os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    os.write(fd, data[:cuts[0]])
                    os.write(fd, data[cuts[0]:cuts[1]])
                    os.write(fd, data[cuts[1]:])
                finally:
                    t0 = time.monotonic()
                    os.close(fd)
            except OSError as e:
                errors.append(("write", "%s seq %d: %s" % (name, seq, e)))
                stop.set()
                return
            t = time.monotonic()
            close_max = max(close_max, t - t0)
            acks.t[name].append(t)
            acks.seq[name].append(seq)
            n += 1
            long_n += len(data) > PAGE
        with lock:
            counts["writes"] += n
            counts["long_writes"] += long_n
            counts["close_ms_max"] = max(counts["close_ms_max"], close_max * 1000)

    def classify(name, value):
        if value.startswith("from-config-") and name in ("W0_0", "W1_1"):
            return "config"
        if value == "":
            return "created"   # O_CREAT made it, its first write is pending
        p = parse(value)
        if p is None or name_of(p[0], p[1]) != name:
            errors.append(("torn", "%s = %r" % (name, value[:120])))
            return None
        return p[2]

    def reader(r):
        rnd = random.Random(100 + r)
        nv = ne = nc = 0
        while not stop.is_set():
            x = rnd.random()
            if x < 0.1:
                t = time.monotonic()
                raw, size = read_file(os.path.join(d, "env_file"))
                text = check_cfg_view(raw, size, errors)
                seen = {}
                for line in text.split("\n"):
                    if line.startswith("W") and "=" in line:
                        name, value = line.split("=", 1)
                        if name in acks.t:
                            seen[name] = classify(name, value)
                env_reads.append((t, seen))
                ne += 1
                continue
            if x < 0.25:
                nc += 1
                try:
                    raw, size = read_file(os.path.join(d, "MOUNT_STRESS_CFG"))
                except FileNotFoundError:
                    errors.append(("missing", "MOUNT_STRESS_CFG, which every config sets"))
                    continue
                check_cfg_var(raw, size, errors)
                continue
            name = name_of(rnd.randrange(WRITERS), rnd.randrange(VARS))
            t = time.monotonic()
            try:
                raw, size = read_file(os.path.join(d, name))
            except FileNotFoundError:
                reads.append((t, name, "missing"))
                nv += 1
                continue
            # fstat reports the inode, which a write through the mount
            # changes as it would a regular file's, while this open keeps
            # the bytes it opened: no size check here (docs/RELIABILITY.md).
            if not raw.endswith(b"\n"):
                errors.append(("torn", "%s: %d bytes, no trailing newline: %r...%r"
                               % (name, len(raw), raw[:30], raw[-20:])))
                continue
            reads.append((t, name, classify(name, raw[:-1].decode())))
            nv += 1
        with lock:
            counts["var_reads"] += nv
            counts["env_reads"] += ne
            counts["cfg_reads"] += nc

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    threads += [threading.Thread(target=reader, args=(r,)) for r in range(READERS)]
    threads.append(threading.Thread(target=rewrite_loop,
                                    args=(config, stop, counts, "config_rewrites")))
    # The lists only grow, each by one writer: a look without the lock is
    # at worst one write behind.
    run_threads(threads, stop, seconds, lambda:
                sum(len(v) for v in acks.seq.values()) >= min_writes() and
                sum(1 for v in acks.seq.values() if v) >= min_vars())

    # Staleness, now that every acknowledgement is known.
    def check(t, name, got):
        want = acks.before(name, t)
        if want is None:
            return          # nothing acknowledged yet: any written value
        if not isinstance(got, int) or got < want:
            errors.append(("stale", "%s: read %s at %.6f, but seq %d was acknowledged "
                           "before" % (name, got, t, want)))

    for t, name, got in reads:
        if got is not None:
            check(t, name, got)
    for t, seen in env_reads:
        for name in acks.t:
            got = seen.get(name, "missing")
            if got is not None:
                check(t, name, got)
    # Every seq read was attempted by its writer (torn covers the bytes).
    for name, got in [(n, g) for _, n, g in reads] + \
            [kv for _, seen in env_reads for kv in seen.items()]:
        if isinstance(got, int) and got not in acks.started[name]:
            errors.append(("phantom", "%s: seq %d was never written" % (name, got)))

    last = {n: value_of(int(n[1:n.index("_")]), int(n[n.index("_") + 1:]), s[-1])
            for n, s in acks.seq.items() if s}
    with open(result, "w") as f:
        json.dump({"last": last, "counts": counts,
                   "config_last": counts["config_rewrites"]}, f)

    kinds = {}
    for kind, _ in errors:
        kinds[kind] = kinds.get(kind, 0) + 1
    print("# stress: %.0f s, %d writes acknowledged (%d over a page, slowest close %.1f ms), "
          "%d variable reads, %d env_file reads (%d values checked), %d config value reads, "
          "%d config rewrites"
          % (seconds, counts["writes"], counts["long_writes"], counts["close_ms_max"],
             counts["var_reads"], counts["env_reads"],
             sum(len(s) for _, s in env_reads), counts["cfg_reads"],
             counts["config_rewrites"]), file=sys.stderr)
    print("# stress: torn %d, stale %d, missing %d, phantom %d, failed writes %d"
          % (kinds.get("torn", 0), kinds.get("stale", 0), kinds.get("missing", 0),
             kinds.get("phantom", 0), kinds.get("write", 0)), file=sys.stderr)
    for kind, detail in errors[:10]:
        print("%s: %s" % (kind, detail), file=sys.stderr)
    if counts["writes"] < min_writes() or \
            counts["var_reads"] < 100 or counts["env_reads"] < 10:
        print("too little happened to prove anything", file=sys.stderr)
        return 1
    return 1 if errors else 0


def run_ro(d, config, seconds):
    """Readers of MOUNT_STRESS_CFG and env_file, and the rewriter, on a -o ro
    mount: every read is exactly one written value, and never missing."""
    stop = threading.Event()
    errors = []
    counts = {"reads": 0, "env_reads": 0, "rewrites": 0}
    lock = threading.Lock()

    def reader(r):
        rnd = random.Random(200 + r)
        n = ne = 0
        while not stop.is_set():
            env = rnd.random() < 0.2
            try:
                raw, size = read_file(os.path.join(d, "env_file" if env else "MOUNT_STRESS_CFG"))
            except FileNotFoundError:
                errors.append(("missing", "MOUNT_STRESS_CFG, which every config sets"))
                continue
            if env:
                check_cfg_view(raw, size, errors)
                ne += 1
            else:
                check_cfg_var(raw, size, errors)
            n += 1
        with lock:
            counts["reads"] += n
            counts["env_reads"] += ne

    threads = [threading.Thread(target=reader, args=(r,)) for r in range(READERS)]
    threads.append(threading.Thread(target=rewrite_loop, args=(config, stop, counts, "rewrites")))
    run_threads(threads, stop, seconds)
    kinds = {}
    for kind, _ in errors:
        kinds[kind] = kinds.get(kind, 0) + 1
    print("# stress -o ro: %.0f s, %d reads (%d of env_file), %d config rewrites; torn %d, "
          "missing %d" % (seconds, counts["reads"], counts["env_reads"], counts["rewrites"],
                          kinds.get("torn", 0), kinds.get("missing", 0)), file=sys.stderr)
    for kind, detail in errors[:10]:
        print("%s: %s" % (kind, detail), file=sys.stderr)
    if counts["reads"] < 100 or counts["rewrites"] < 10:
        print("too little happened to prove anything", file=sys.stderr)
        return 1
    return 1 if errors else 0


def verify(d, result):
    with open(result) as f:
        last = json.load(f)["last"]
    bad = 0
    for name, want in sorted(last.items()):
        try:
            with open(os.path.join(d, name), "rb") as f:
                got = f.read().decode()
        except OSError as e:
            got = str(e)
        if got != want + "\n":
            bad += 1
            if bad <= 10:
                print("%s: %r after the remount, want %r" % (name, got[:80], want[:80]),
                      file=sys.stderr)
    print("# stress: after the remount %d of %d variables hold their last acknowledged "
          "write" % (len(last) - bad, len(last)), file=sys.stderr)
    need = min_vars()
    return 1 if bad or len(last) < need else 0


if __name__ == "__main__":
    if sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]))
    if sys.argv[1] == "ro":
        sys.exit(run_ro(sys.argv[2], sys.argv[3], float(sys.argv[4])))
    sys.exit(verify(sys.argv[2], sys.argv[3]))
