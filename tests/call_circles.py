#!/usr/bin/env python3
"""No circle of calls between the program's files.

A file calls another when its object leaves a symbol undefined that the
other's object defines (nm). Over every object built from fs/ and
resolver/, the calls must go one way: no file reaches itself through the
files it calls (a pair that calls each other, or a longer loop). Each
circle found is printed with the calls that make it, and the exit status
is 1; 77 when the build holds no objects to read (nothing built yet).

    tests/call_circles.py BUILD_DIR
"""
import os
import subprocess
import sys


def objects(build):
    out = []
    for top in ("fs", "resolver"):
        for dirpath, _, files in os.walk(os.path.join(build, top)):
            out += [os.path.join(dirpath, f) for f in files if f.endswith(".c.o")]
    return sorted(out)


def name_of(build, obj):
    # build/fs/libenvfs_cli.a.p/cli_args.c.o -> fs/cli_args.c (the
    # library's folder and the source's path with '/' as '_').
    rel = os.path.relpath(obj, build).split(os.sep)
    return rel[0] + "/" + rel[-1][:-2]


def symbols(build, objs):
    defs, undefs = {}, {}
    for k in range(0, len(objs), 200):
        chunk = objs[k:k + 200]
        res = subprocess.run(["nm", "-P", "-A"] + chunk, capture_output=True, text=True,
                             check=True)
        for line in res.stdout.splitlines():
            head, _, rest = line.partition(": ")
            parts = rest.split()
            if len(parts) < 2:
                continue
            n = name_of(build, head)
            sym, kind = parts[0], parts[1]
            if kind == "U":
                undefs.setdefault(n, set()).add(sym)
            elif kind in "TDBRGSVW":
                defs.setdefault(n, set()).add(sym)
    return defs, undefs


def circles(graph):
    """Tarjan's strongly connected components of more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    build = sys.argv[1]
    objs = objects(build)
    if not objs:
        print("call_circles: no objects under %s (build first)" % build, file=sys.stderr)
        return 77
    defs, undefs = symbols(build, objs)
    where = {}
    for n, d in defs.items():
        for s in d:
            where.setdefault(s, set()).add(n)
    graph = {}
    for n, u in undefs.items():
        for s in u:
            for m in where.get(s, ()):
                if m != n:
                    graph.setdefault(n, {}).setdefault(m, set()).add(s)
    found = circles(graph)
    for comp in found:
        print("call_circles: these files call one another: %s" % ", ".join(comp),
              file=sys.stderr)
        for a in comp:
            for b in comp:
                if b in graph.get(a, {}):
                    print("  %s -> %s: %s" % (a, b, " ".join(sorted(graph[a][b])[:5])),
                          file=sys.stderr)
    print("call_circles: %d objects, %d circles" % (len(objs), len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
