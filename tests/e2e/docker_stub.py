#!/usr/bin/env python3
"""A stub Docker Engine API on a unix socket, enough for `docker create`.

    docker_stub.py SOCKET ENV_OUT LOG

The docker CLI parses --env-file itself and posts the resulting list as
the container-create request's "Env"; this stub saves that list to ENV_OUT,
each entry UTF-8 encoded and followed by a NUL byte (the layout of
/proc/PID/environ and of primus-envfs's environ view), and answers 201.
Every request is logged to LOG as "METHOD PATH". Anything else gets a 404
with a JSON message, so an unexpected call fails the CLI loudly.
"""
import http.server
import json
import os
import socketserver
import sys

API_VERSION = "1.45"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "primus-envfs-docker-stub"

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    def _log(self):
        with open(self.server.log_path, "a") as f:
            f.write("%s %s\n" % (self.command, self.path))

    def _headers(self, status, body, ctype="application/json"):
        self.send_response(status)
        self.send_header("API-Version", API_VERSION)
        self.send_header("Docker-Experimental", "false")
        self.send_header("OSType", "linux")
        self.send_header("Ostype", "linux")
        self.send_header("Builder-Version", "1")
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()

    def _send(self, status, obj=None, raw=None, ctype="application/json"):
        body = raw if raw is not None else json.dumps(obj).encode()
        self._headers(status, body, ctype)
        if self.command != "HEAD":
            self.wfile.write(body)

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _path(self):
        p = self.path.split("?", 1)[0]
        # /v1.45/containers/create -> /containers/create
        parts = p.split("/", 2)
        if len(parts) == 3 and parts[1].startswith("v") and parts[1][1:2].isdigit():
            p = "/" + parts[2]
        return p

    def do_HEAD(self):
        self._log()
        if self._path() == "/_ping":
            return self._send(200, raw=b"OK", ctype="text/plain; charset=utf-8")
        self._send(404, {"message": "stub: no such endpoint"})

    def do_GET(self):
        self._log()
        p = self._path()
        if p == "/_ping":
            return self._send(200, raw=b"OK", ctype="text/plain; charset=utf-8")
        if p == "/version":
            return self._send(200, {
                "Version": "28.2.2", "ApiVersion": API_VERSION,
                "MinAPIVersion": "1.24", "Os": "linux", "Arch": "amd64",
                "GitCommit": "stub", "GoVersion": "go1.24", "KernelVersion": "stub",
                "Components": []})
        self._send(404, {"message": "stub: no such endpoint " + p})

    def do_POST(self):
        self._log()
        p = self._path()
        body = self._body()
        if p == "/containers/create":
            req = json.loads(body.decode("utf-8"))
            env = req.get("Env") or []
            tmp = self.server.env_out + ".tmp"
            with open(tmp, "wb") as f:
                for e in env:
                    f.write(e.encode("utf-8") + b"\0")
            os.replace(tmp, self.server.env_out)
            return self._send(201, {"Id": "x", "Warnings": []})
        self._send(404, {"message": "stub: no such endpoint " + p})


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        # http.server wants a (host, port) client address.
        sock, _ = super().get_request()
        return sock, ("stub", 0)


def main():
    sock, env_out, log = sys.argv[1:4]
    srv = Server(sock, Handler)
    srv.env_out = env_out
    srv.log_path = log
    srv.serve_forever()


if __name__ == "__main__":
    main()
