#!/usr/bin/env python3
"""An etcd member that lags, for tests/sync/mount_startread.sh,
tests/sync/learn_slow.sh and tests/sync/write_lag.sh.

    lagproxy.py PORT UPSTREAM_PORT DIR

Serves the JSON gateway on 127.0.0.1:PORT by forwarding every request to
the real member on UPSTREAM_PORT, and behaves as a member that has
applied the log only up to a revision, as the files in DIR say:

- DIR/stale_rev (a revision): a serializable range (which a member
  answers from its own store, without asking the leader) is answered as
  of that revision, its header saying that revision, as a member that is
  behind answers it. A linearizable range is forwarded as it is: a member
  that is behind waits until it caught up before it answers one.
- DIR/hold_watch: a watch is not forwarded while the file exists (a
  member that is behind delivers nothing newer than what it applied).
- DIR/hold_events: a watch stream already open passes nothing on while
  the file exists; what etcd sent meanwhile follows, in order, once it
  is gone (a member whose apply lags behind the leader's).
- DIR/txn_delay_ms (milliseconds): a txn is forwarded only after that
  long, as a loaded cluster takes it (it still applies once forwarded,
  whether or not the client waited for the answer).

Every range is logged to DIR/ranges, one line each:
"serializable=0|1 stale=0|1 KEY". DIR/ready is written once it listens.
"""
import base64
import http.client
import http.server
import json
import os
import sys
import threading
import time

PORT, UPSTREAM, DIR = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
LOG_LOCK = threading.Lock()


def read_flag(name):
    try:
        with open(os.path.join(DIR, name)) as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


def log_range(serializable, stale, key):
    with LOG_LOCK, open(os.path.join(DIR, "ranges"), "a") as f:
        f.write("serializable=%d stale=%d %s\n" % (serializable, stale, key))


class Handler(http.server.BaseHTTPRequestHandler):
    # One request per connection: the client reconnects, and a stream
    # ends where the connection does.
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.forward(None)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.forward(self.rfile.read(n) if n else b"")

    def forward(self, body):
        stale = None
        if self.path == "/v3/kv/range" and body:
            req = json.loads(body)
            serializable = bool(req.get("serializable"))
            key = base64.b64decode(req.get("key", "")).decode("utf-8", "replace")
            rev = read_flag("stale_rev")
            if serializable and rev:
                stale = int(rev)
                if not int(req.get("revision", 0)):
                    req["revision"] = stale
                body = json.dumps(req).encode()
            log_range(serializable, stale is not None, key)
        if self.path == "/v3/kv/txn":
            delay = read_flag("txn_delay_ms")
            if delay:
                time.sleep(int(delay) / 1000.0)
        if self.path == "/v3/watch":
            while read_flag("hold_watch") is not None:
                time.sleep(0.05)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "connection", "content-length", "expect")}
        up = http.client.HTTPConnection("127.0.0.1", UPSTREAM)
        try:
            up.request(self.command, self.path, body, headers)
            r = up.getresponse()
            if self.path == "/v3/watch":
                self.send_response(r.status)
                self.send_header("Content-Type", r.getheader("Content-Type", "application/json"))
                self.end_headers()
                while True:
                    chunk = r.read1(65536)
                    if not chunk:
                        break
                    while read_flag("hold_events") is not None:
                        time.sleep(0.02)
                    self.wfile.write(chunk)
                    self.wfile.flush()
                return
            data = r.read()
            if stale is not None and r.status == 200:
                reply = json.loads(data)
                reply.setdefault("header", {})["revision"] = str(stale)
                data = json.dumps(reply).encode()
            self.send_response(r.status)
            self.send_header("Content-Type", r.getheader("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            up.close()


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    server.daemon_threads = True
    with open(os.path.join(DIR, "ready"), "w") as f:
        f.write("%d\n" % os.getpid())
    server.serve_forever()


if __name__ == "__main__":
    main()
