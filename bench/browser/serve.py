#!/usr/bin/env python3
"""Serve the browser bench page (make bench-browser): mpk vs msgpackr vs protobuf.js vs JSON.parse.

  python3 bench/browser/serve.py [--port 8765] [--host 127.0.0.1]

URL paths: / -> bench/browser/, /workloads/ -> build/bench-workloads/ (bench/workloads/gen.py),
/proto/ -> bench/workloads/ (the .proto files), /mpk/ -> js/build/browser/ (make js-build),
/node_modules/ -> build/bench-browser/node_modules/ (msgpackr, protobufjs). Standard library only.
"""
import argparse
import functools
import http.server
import os
import posixpath
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MOUNTS = [
    ("/workloads/", os.path.join(ROOT, "build", "bench-workloads")),
    ("/proto/", os.path.join(ROOT, "bench", "workloads")),
    ("/mpk/", os.path.join(ROOT, "js", "build", "browser")),
    ("/node_modules/", os.path.join(ROOT, "build", "bench-browser", "node_modules")),
    ("/", HERE),
]


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map,
                          **{".mjs": "text/javascript", ".js": "text/javascript", ".msgpack": "application/vnd.msgpack",
                             ".pb": "application/octet-stream", ".proto": "text/plain", ".svg": "image/svg+xml"})

    def translate_path(self, path):
        path = posixpath.normpath(urllib.parse.unquote(urllib.parse.urlsplit(path).path))
        if not path.endswith("/") and self.path.split("?")[0].endswith("/"):
            path += "/"
        for prefix, base in MOUNTS:
            if path == prefix.rstrip("/") or path.startswith(prefix):
                rest = path[len(prefix):] if path.startswith(prefix) else ""
                parts = [p for p in rest.split("/") if p and p not in (".", "..")]
                return os.path.join(base, *parts)
        return os.path.join(HERE, "index.html")

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, fmt, *args):
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()
    server = http.server.ThreadingHTTPServer((args.host, args.port), functools.partial(Handler, directory=HERE))
    print(f"bench-browser: open http://{args.host}:{server.server_address[1]}/ (Ctrl-C stops the server)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
