#!/usr/bin/env python3
"""One client of tests/sync/histories.sh: the operations of the seed's plan
for this client (histories_check.client_ops), run on one mount's directory
until they end or the deadline passes, each recorded as JSON lines: its
invocation (before the call), a write's open, and its completion with the
outcome ("ok" or the errno's name) and where it failed (open or close;
close() is where a write commits). Times are time.monotonic(), one clock
for every process of the machine.

  histories_client.py SEED CLIENT DIR "NAMES" SECONDS OUT
"""

import errno
import json
import os
import sys
import time

import histories_check as hc


def main():
    seed, client, d, names, seconds, out = sys.argv[1:7]
    client = int(client)
    names = names.split()
    deadline = time.monotonic() + float(seconds)
    with open(out, "w", buffering=1) as log:
        def rec(**kw):
            log.write(json.dumps(kw) + "\n")

        for k, (kind, name, arg, pause) in enumerate(hc.client_ops(seed, client, names)):
            time.sleep(pause)
            if time.monotonic() > deadline:
                break
            rec(t="inv", c=client, k=k, op=kind, name=name, arg=arg, inv=time.monotonic())
            phase, res = "close", "ok"
            try:
                if kind == "write":
                    phase = "open"
                    fd = os.open(f"{d}/{name}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                    rec(t="open", c=client, k=k, at=time.monotonic())
                    phase = "write"
                    try:
                        os.write(fd, (arg + "\n").encode())
                    except OSError:
                        os.close(fd)
                        raise
                    phase = "close"
                    os.close(fd)
                elif kind == "rm":
                    os.unlink(f"{d}/{name}")
                else:
                    os.rename(f"{d}/{name}", f"{d}/{arg}")
            except OSError as e:
                res = errno.errorcode.get(e.errno, str(e.errno))
            rec(t="done", c=client, k=k, cmp=time.monotonic(), res=res, phase=phase)
    return 0


if __name__ == "__main__":
    sys.exit(main())
