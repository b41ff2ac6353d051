#!/usr/bin/env python3
"""Histories of many nodes, checked against a model (Python 3, stdlib only).

Used by tests/sync/histories.sh, which runs clients (histories_client.py)
on several --sync mounts while it injects faults, and then asks this file
whether what every node ends up holding is explained by the history.

  histories_check.py plan --seed S [--faults LIST] [--nodes N] [--events FILE]
      the seed's choices, as shell assignments (and the fault schedule
      written to FILE, one "MS ACTION ARG" a line)
  histories_check.py check --names "A B" --final FILE HISTORY...
      exit 0 when the history explains the final states, 1 (saying why)
      when not
  histories_check.py selftest
      the checker against hand-made histories, good and bad

The model. A directory holds a few names, each absent or holding a value;
every write writes a value no other write writes, so a final value names
the one write it came from. An operation is
  write N V   open(O_CREAT|O_TRUNC), write, close: two steps. The open of a
              name the node does not hold creates it empty (a commit of
              its own), so it is step T: N becomes "" or, when the node
              held N, nothing changes. The close commits V: step P.
  rm N        N becomes absent (also when it already was: a delete of
              nothing is no change to explain)
  mv A B      B takes A's value and A becomes absent; A must hold a value
              (a mv that succeeded moved something: "moving" a value A no
              longer holds resurrects it)
Each operation has its invocation and completion times (one monotonic
clock for every client) and an outcome: ok, failed (an errno that means
"not applied, anywhere": EIO, ENOENT, ...), or unknown (another errno, or
no answer before the run ended). The final state of every node must be the
same, and must be the state that SOME serial order of the operations gives
where
  - every ok operation is in the order, and one that completed before
    another was invoked comes first (real time);
  - no failed operation is in the order;
  - an unknown one may be in it (anywhere after its invocation) or not.
The search for such an order is exact and bounded: a depth-first walk over
"which operations are in the order so far" and the model state, with each
configuration visited once, pruned when a value the final state holds was
written and then vanished (values are unique, so it never comes back).
"""

import argparse
import bisect
import json
import random
import sys

ABSENT = None

# Errnos of a change that is applied nowhere (section "Many nodes" of the
# spec: EIO after the writer made sure the lost request cannot apply);
# any other errno, or no answer at all, leaves the outcome unknown.
FAIL_ERRNOS_DEFAULT = ("EIO ENOENT EEXIST EINVAL EFBIG ENAMETOOLONG EACCES EPERM EROFS "
                       "EXDEV ENOTDIR EISDIR")

FAULT_KINDS = ("kill", "stop", "mstop", "compact", "foreign")


# ---- the plan: every random choice of a run, from its seed ----------------------------

def plan(seed, faults, nodes=None, op_ms=20000):
    """The choices of run SEED: node count, names, clients, fault events.

    Events are (ms after the start of the clients, action, argument); the
    member faults (kill/restart, stop/cont) never overlap, so a quorum of
    two is always up apart from one member's own fault."""
    rng = random.Random(f"histories/{seed}")
    n = nodes if nodes else rng.randint(2, 4)
    names = ["ENVFS_H_A", "ENVFS_H_B", "ENVFS_H_C"][:rng.choice((2, 3))]
    clients = n + rng.randint(0, 2)
    events = []
    # Member faults in disjoint windows of the op phase.
    member = [k for k in ("kill", "stop") if k in faults]
    t = 1000
    windows = []
    while member and t < op_ms - 4000:
        kind = rng.choice(member)
        dur = rng.randint(800, 2500)
        windows.append((t, kind, rng.randrange(3), dur))
        t += dur + rng.randint(1500, 4000)
    for start, kind, m, dur in windows:
        events.append((start, kind, m))
        events.append((start + dur, "restart" if kind == "kill" else "cont", m))
    if "mstop" in faults:
        for _ in range(rng.randint(1, 2)):
            start = rng.randint(1000, op_ms - 4000)
            i = rng.randrange(n)
            events.append((start, "mstop", i))
            events.append((start + rng.randint(500, 2500), "mcont", i))
    if "compact" in faults:
        for _ in range(rng.randint(1, 3)):
            events.append((rng.randint(1500, op_ms - 2000), "compact", "-"))
    if "foreign" in faults:
        events.append((rng.randint(500, op_ms - 3000), "foreign", rng.randint(1, 3)))
    events.sort(key=lambda e: e[0])
    return {"nodes": n, "names": names, "clients": clients, "op_ms": op_ms,
            "events": events}


def client_ops(seed, client, names, count=400):
    """Client CLIENT's operations: (kind, name, to_or_value, sleep_s)."""
    rng = random.Random(f"histories/{seed}/client/{client}")
    ops = []
    for k in range(count):
        r = rng.random()
        a = rng.choice(names)
        if r < 0.5:
            op = ("write", a, f"v{client}_{k}")
        elif r < 0.7:
            op = ("rm", a, None)
        else:
            op = ("mv", a, rng.choice([b for b in names if b != a]))
        ops.append(op + (rng.uniform(0, 0.04),))
    return ops


# ---- histories -------------------------------------------------------------------------

class Op:
    """One operation of the history, as the client saw it."""

    def __init__(self, client, seq, kind, name, arg, inv, opened=None, cmp=None,
                 res=None, phase=None):
        self.client, self.seq, self.kind, self.name = client, seq, kind, name
        self.to = arg if kind == "mv" else None
        self.value = arg if kind == "write" else None
        self.inv, self.opened, self.cmp = inv, opened, cmp
        self.res, self.phase = res, phase

    def label(self):
        what = {"write": f"write {self.name}={self.value}", "rm": f"rm {self.name}",
                "mv": f"mv {self.name} {self.to}"}[self.kind]
        return f"c{self.client}#{self.seq} {what}"


def load_history(paths):
    """The operations of the clients' JSON-lines files (invocations without
    a completion line never answered)."""
    ops = {}
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                key = (r["c"], r["k"])
                if r["t"] == "inv":
                    ops[key] = Op(r["c"], r["k"], r["op"], r["name"], r.get("arg"), r["inv"])
                elif r["t"] == "open":
                    ops[key].opened = r["at"]
                else:
                    o = ops[key]
                    o.cmp, o.res, o.phase = r["cmp"], r["res"], r.get("phase")
    return sorted(ops.values(), key=lambda o: o.inv)


class Step:
    """One step of the model: T (create empty, optional effect), P (put),
    RM, MV. cmp None: floats (outcome unknown)."""
    __slots__ = ("op", "kind", "name", "to", "value", "inv", "cmp", "client")

    def __init__(self, op, kind, inv, cmp):
        self.op, self.kind, self.inv, self.cmp = op, kind, inv, cmp
        self.name, self.to, self.value, self.client = op.name, op.to, op.value, op.client


def outcome(res, fail_errnos):
    if res == "ok":
        return "ok"
    if res is not None and res in fail_errnos:
        return "fail"
    return "unknown"


def steps_of(ops, fail_errnos):
    """The model's steps of the history: (chain steps per client, floating
    steps, the failed operations)."""
    chains, floating, failed = {}, [], []
    for o in ops:
        chain = chains.setdefault(o.client, [])
        if o.kind != "write":
            oc = outcome(o.res, fail_errnos)
            if oc == "ok":
                chain.append(Step(o, o.kind, o.inv, o.cmp))
            elif oc == "unknown":
                floating.append(Step(o, o.kind, o.inv, None))
            else:
                failed.append(o)
            continue
        # A write: did its open answer, and how?
        if o.opened is None:
            oc_open = outcome(o.res, fail_errnos) if o.phase == "open" else "unknown"
            if oc_open == "fail":
                failed.append(o)
            else:
                floating.append(Step(o, "T", o.inv, None))
            continue
        chain.append(Step(o, "T", o.inv, o.opened))
        # P's interval is the whole write's: the open picks the file the
        # close commits to (a mv of it in between takes the data along,
        # an rm drops it, as on any file system), which is P placed
        # before that mv or rm.
        oc = outcome(o.res, fail_errnos)
        if oc == "ok":
            chain.append(Step(o, "P", o.inv, o.cmp))
        elif oc == "unknown":
            floating.append(Step(o, "P", o.inv, None))
        else:
            failed.append(o)
    return [chains[c] for c in sorted(chains)], floating, failed


def apply(step, state, index, mv_absent="fail"):
    """The states STEP can leave (a list: T has two; none: a mv of a name
    holding nothing, unless mv_absent is "noop")."""
    if step.kind == "T":
        s = list(state)
        s[index[step.name]] = ""
        return [state, tuple(s)]
    s = list(state)
    if step.kind == "P":
        s[index[step.name]] = step.value
    elif step.kind == "rm":
        s[index[step.name]] = ABSENT
    else:
        v = s[index[step.name]]
        if v is ABSENT:
            return [] if mv_absent == "fail" else [state]
        s[index[step.to]] = v
        s[index[step.name]] = ABSENT
    return [tuple(s)]


class Verdict:
    def __init__(self, ok, reasons, explored=0, order=None):
        self.ok, self.reasons, self.explored, self.order = ok, reasons, explored, order


def check(ops, names, finals, fail_errnos=None, budget=400000, initial=None,
          mv_absent="fail"):
    """Whether the history OPS explains the nodes' final states FINALS
    ({node: {name: value or None}}). initial: the names' state before the
    first operation (default: all absent). mv_absent "noop": a mv that
    succeeded when its source held nothing changed nothing (a weaker model,
    to tell such a mv from a lost write)."""
    fail_errnos = set((fail_errnos or FAIL_ERRNOS_DEFAULT).split())
    index = {n: i for i, n in enumerate(names)}
    reasons = []
    states = {node: tuple(f.get(n) for n in names) for node, f in finals.items()}
    if not states:
        return Verdict(False, ["no node's final state to check"])
    distinct = sorted(set(states.values()), key=repr)
    if len(distinct) > 1:
        for node in sorted(states):
            reasons.append(f"nodes diverge: {node} holds {show(names, states[node])}")
        return Verdict(False, reasons)
    final = distinct[0]
    chains, floating, failed = steps_of(ops, fail_errnos)
    start = tuple(initial.get(n) if initial else ABSENT for n in names)

    # Which step produced each value: unique values name their write.
    producer = {}
    for chain in chains:
        for s in chain:
            if s.kind == "P":
                producer[s.value] = s
    for s in floating:
        if s.kind == "P":
            producer[s.value] = s
    failed_values = {o.value: o for o in failed if o.kind == "write"}
    for n, v in zip(names, final):
        if v is ABSENT or v == "" or v in producer or v in start:
            continue
        if v in failed_values:
            o = failed_values[v]
            reasons.append(f"a failed write is visible: {n}={v} comes from {o.label()}, "
                           f"which failed with {o.res} (at its {o.phase})")
        else:
            reasons.append(f"{n}={v!r} was never written by any operation of the history")
    # An acknowledged write nothing could have overwritten, removed or moved.
    for chain in chains:
        for s in chain:
            if s.kind != "P" or s.value in final:
                continue
            later = [t for c2 in chains for t in c2 if t is not s and touches(t, s.name)
                     and not t.cmp < s.inv and not t.op is s.op]
            later += [t for t in floating if touches(t, s.name) and t.op is not s.op]
            if not later:
                reasons.append(f"an acknowledged write is lost: {s.op.label()} returned ok "
                               f"and no operation could overwrite, remove or move it, "
                               f"yet the final state is {show(names, final)}")
    if reasons:
        return Verdict(False, reasons)

    # The search.
    nclients = len(chains)
    cmps = [[s.cmp for s in chain] for chain in chains]

    def need(step):
        return tuple(bisect.bisect_left(cmps[d], step.inv) for d in range(nclients))

    chain_need = [[need(s) for s in chain] for chain in chains]
    float_need = [need(s) for s in floating]
    lengths = tuple(len(c) for c in chains)
    # For the pruning: where each final value's producer sits.
    watch = []
    for n, v in zip(names, final):
        if v is ABSENT or v == "" or v in start:
            continue
        s = producer[v]
        if s.cmp is None:
            watch.append((v, None, floating.index(s)))
        else:
            c = chains.index(next(ch for ch in chains if s in ch))
            watch.append((v, c, chains[c].index(s)))

    def dead(idx, mask, state):
        for v, c, pos in watch:
            placed = (mask >> pos) & 1 if c is None else idx[c] > pos
            if placed and v not in state:
                return True
        return False

    def enabled(req, idx):
        return all(idx[d] >= req[d] for d in range(nclients))

    root = (tuple(0 for _ in chains), 0, start)
    seen = {root}
    parent = {root: None}
    stack = [root]
    explored = 0
    while stack:
        cfg = stack.pop()
        explored += 1
        if explored > budget:
            return Verdict(False, [f"inconclusive: the search for a serial order exceeded its "
                                   f"budget of {budget} configurations"], explored)
        idx, mask, state = cfg
        if idx == lengths and state == final:
            order = []
            while parent[cfg] is not None:
                cfg, step = parent[cfg]
                order.append(step)
            return Verdict(True, [], explored, order[::-1])
        succ = []
        for c in range(nclients):
            if idx[c] < lengths[c] and enabled(chain_need[c][idx[c]], idx):
                step = chains[c][idx[c]]
                nidx = idx[:c] + (idx[c] + 1,) + idx[c + 1:]
                for ns in apply(step, state, index, mv_absent):
                    succ.append((step.cmp, (nidx, mask, ns), step))
        for f, step in enumerate(floating):
            if not (mask >> f) & 1 and enabled(float_need[f], idx):
                for ns in apply(step, state, index, mv_absent):
                    succ.append((float("inf"), (idx, mask | (1 << f), ns), step))
        # Pushed so that the step that completed first is tried first.
        succ.sort(key=lambda x: x[0], reverse=True)
        for _, ncfg, step in succ:
            if ncfg in seen or dead(*ncfg):
                continue
            seen.add(ncfg)
            parent[ncfg] = (cfg, step)
            stack.append(ncfg)
    n_ok = sum(len(c) for c in chains)
    return Verdict(False, [f"no serial order of the {n_ok} acknowledged steps (with any of the "
                           f"{len(floating)} of unknown outcome) consistent with real time gives "
                           f"the final state {show(names, final)}"], explored)


def double_moves(ops):
    """Pairs of overlapping successful mvs of one source with no write or
    mv into it invoked before both ended: one of them moved a
    value the other had already taken."""
    ok = [o for o in ops if o.res == "ok"]
    pairs = []
    for i, x in enumerate(ok):
        if x.kind != "mv":
            continue
        for y in ok[i + 1:]:
            if y.inv > x.cmp:
                break
            if y.kind != "mv" or y.name != x.name:
                continue
            end = max(x.cmp, y.cmp)
            if not any(z.res != "fail" and z.inv < end and z.inv > min(x.inv, y.inv) and
                       (z.kind == "write" and z.name == x.name or z.to == x.name)
                       for z in ops):
                pairs.append((x, y))
    return pairs


def touches(step, name):
    return step.name == name or step.to == name


def show(names, state):
    return "{" + ", ".join(f"{n}={'<absent>' if v is ABSENT else repr(v)}"
                           for n, v in zip(names, state)) + "}"


def print_history(ops, out):
    if not ops:
        print("  (no operation)", file=out)
        return
    t0 = min(o.inv for o in ops)

    def ms(t):
        return "      -" if t is None else f"{(t - t0) * 1000:7.0f}"
    for o in ops:
        res = o.res if o.res is not None else "no answer"
        print(f"  {ms(o.inv)} {ms(o.opened)} {ms(o.cmp)}  {o.label():32} {res}"
              f"{' (' + o.phase + ')' if o.phase and o.res != 'ok' else ''}", file=out)


# ---- the command line ------------------------------------------------------------------

def cmd_plan(a):
    faults = set(f for f in a.faults.replace(",", " ").split() if f)
    if faults == {"all"}:
        faults = set(FAULT_KINDS)
    bad = faults - set(FAULT_KINDS) - {"none"}
    if bad:
        print(f"histories_check.py: unknown fault {sorted(bad)[0]!r} "
              f"(known: {', '.join(FAULT_KINDS)}, all, none)", file=sys.stderr)
        return 2
    p = plan(a.seed, faults, a.nodes, a.op_ms)
    print(f"HIST_NODES={p['nodes']}")
    print(f"HIST_NAMES='{' '.join(p['names'])}'")
    print(f"HIST_CLIENTS={p['clients']}")
    print(f"HIST_OP_MS={p['op_ms']}")
    if a.events:
        with open(a.events, "w") as f:
            for t, act, arg in p["events"]:
                print(t, act, arg, file=f)
    return 0


def cmd_check(a):
    names = a.names.split()
    with open(a.final) as f:
        finals = json.load(f)
    ops = load_history(a.history)
    v = check(ops, names, finals, a.fail_errnos, a.budget, mv_absent=a.mv_absent)
    counts = {}
    for o in ops:
        k = f"{o.kind} {outcome(o.res, set(a.fail_errnos.split()))}"
        counts[k] = counts.get(k, 0) + 1
    summary = ", ".join(f"{k} {counts[k]}" for k in sorted(counts))
    # A run whose operations all failed proves nothing.
    if v.ok:
        lacking = [k for k in ("write", "rm", "mv") if not counts.get(f"{k} ok")]
        if lacking or sum(counts.get(f"{k} ok", 0) for k in ("write", "rm", "mv")) < a.min_ok:
            v = Verdict(False, [f"a vacuous history: fewer than {a.min_ok} acknowledged "
                                f"operations, or none of {', '.join(lacking) or 'some kind'}"])
    if v.ok:
        print(f"histories: {len(ops)} operations ({summary}); final state "
              f"{show(names, tuple(next(iter(finals.values())).get(n) for n in names))} "
              f"on {len(finals)} nodes; a serial order found after {v.explored} configurations")
        return 0
    print("histories: the history does not explain the final state:", file=sys.stderr)
    for r in v.reasons:
        print(f"  - {r}", file=sys.stderr)
    if v.explored and a.mv_absent == "fail":
        # Which rule is broken: a mv that "moved" a name holding nothing
        # (it ran on a stale view), or worse.
        weak = check(ops, names, finals, a.fail_errnos, a.budget, mv_absent="noop")
        if weak.ok:
            print("  - with a mv of a name holding nothing taken as changing nothing, a serial "
                  "order exists: some mv succeeded on a stale view of its source (its value "
                  "had already moved or been removed); no acknowledged write is lost",
                  file=sys.stderr)
            for x, y in double_moves(ops)[:3]:
                print(f"    for instance {x.label()} and {y.label()} both succeeded, and no "
                      f"write to {x.name} came between them", file=sys.stderr)
        else:
            print("  - even with a mv of a name holding nothing taken as changing nothing, no "
                  "serial order exists: an acknowledged operation is lost or a failed one "
                  f"applied ({weak.reasons[0]})", file=sys.stderr)
    print(f"operations: {summary}; columns: invoked, opened, completed (ms), op, outcome",
          file=sys.stderr)
    print_history(ops, sys.stderr)
    return 1


def main():
    ap = argparse.ArgumentParser(prog="histories_check.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--seed", required=True)
    p.add_argument("--faults", default="all")
    p.add_argument("--nodes", type=int, default=0)
    p.add_argument("--op-ms", type=int, default=20000)
    p.add_argument("--events")
    c = sub.add_parser("check")
    c.add_argument("--names", required=True)
    c.add_argument("--final", required=True)
    c.add_argument("--fail-errnos", default=FAIL_ERRNOS_DEFAULT)
    c.add_argument("--budget", type=int, default=400000)
    c.add_argument("--min-ok", type=int, default=10)
    c.add_argument("--mv-absent", choices=("fail", "noop"), default="fail")
    c.add_argument("history", nargs="+")
    sub.add_parser("selftest")
    a = ap.parse_args()
    if a.cmd == "plan":
        return cmd_plan(a)
    if a.cmd == "check":
        return cmd_check(a)
    import histories_selftest
    return histories_selftest.main()


if __name__ == "__main__":
    sys.exit(main())
