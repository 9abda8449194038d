#!/usr/bin/python3
"""Serves a folder over HTTP with the cross-origin isolation headers (COOP same-origin, COEP
require-corp) that give a page SharedArrayBuffer and so wasm threads: the host that
tools/web.sh --threads builds for. Any static host that sends these two headers will do.
Usage: tools/serve-isolated.py [DIR] [PORT]   (default build-web-threads, 8123)"""
import functools
import http.server
import sys

folder = sys.argv[1] if len(sys.argv) > 1 else "build-web-threads"
port = int(sys.argv[2]) if len(sys.argv) > 2 else 8123


class Isolated(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Isolated, directory=folder)).serve_forever()
