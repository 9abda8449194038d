#!/usr/bin/env python3
"""A stand-in for the Hugging Face Hub on 127.0.0.1, for attnsim's download tests (issue 39).

It serves model folders under the Hub's URL layout, with the headers the real Hub sends:
  GET /api/models/ORG/NAME/revision/REV?blobs=true   model info: sha, siblings with size,
                                                     blobId and (for *.safetensors) lfs.sha256
  GET|HEAD /ORG/NAME/resolve/REV/FILE               a small file: 200, ETag = its git blob sha1;
                                                     an LFS file: 302 to /cdn/SHA256 with
                                                     X-Linked-Etag, X-Linked-Size; both with
                                                     X-Repo-Commit
  GET /cdn/SHA256                                    the LFS bytes, Range -> 206
and CORS headers on everything (OPTIONS answered), as the page would need them.

Faults, set by the test (MockHub.fault = {...}) or over HTTP (GET /_control?fault=F&file=X&count=N;
count -1 = always). F is one of
  truncate  Content-Length short of the file, that many bytes (a body cut at a clean boundary)
  drop      the full Content-Length, half the bytes, then (half a second later, as a real
            connection dies after a while: a browser hands the bytes on first) the connection closes
  stall     the full Content-Length, a quarter of the bytes, then silence for `stall_s` seconds
  badsha    the right length, one byte flipped
  flood     an error page that never ends (2 MiB of it, then the connection closes)
  headers   2 MiB of headers
  drip      the full Content-Length, then the body at 2 bytes a second (X = "api": the model info)
  overrun   no Content-Length: the file, then more bytes until the client hangs up
  401 403 404 500 503   that status (X = "api" for the model info, else the file's resolve)
`token` set: the API and resolve URLs answer 401 unless "Authorization: Bearer TOKEN".
A hostile hub's lies, set by the test: `info_patch` = {FILE: {"size": N}} changes what the model
info says of FILE; `any_revision` = True answers every revision (a pinned commit, main/x) with
the repository's one commit.
Every request is logged (method, path, Range, Authorization, status) for the test to check.

Standalone: python3 mock_hub.py ORG/NAME=DIR [...]  prints the port, serves until killed.
"""
import hashlib
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.parse

EXPOSED = "X-Repo-Commit, X-Linked-Etag, X-Linked-Size, ETag, Content-Range, Content-Length, Location"


def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def shard_folder(src, dst):
    """`src`'s model.safetensors as two shards and model.safetensors.index.json in `dst`, the
    other files copied: the sharded layout a large model has, at the tests' size."""
    import shutil
    import struct
    os.makedirs(dst)
    for f in os.listdir(src):
        if f != "model.safetensors":
            shutil.copy(os.path.join(src, f), dst)
    with open(os.path.join(src, "model.safetensors"), "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        header = json.loads(fh.read(n))
        data = fh.read()
    names = sorted(k for k in header if k != "__metadata__")
    weight_map = {}
    for i, part in enumerate([names[: len(names) // 2], names[len(names) // 2:]]):
        shard = "model-%05d-of-00002.safetensors" % (i + 1)
        head, body = {}, b""
        for k in part:
            begin, end = header[k]["data_offsets"]
            head[k] = dict(header[k], data_offsets=[len(body), len(body) + end - begin])
            body += data[begin:end]
            weight_map[k] = shard
        text = json.dumps(head).encode()
        text += b" " * (-len(text) % 8)
        with open(os.path.join(dst, shard), "wb") as fh:
            fh.write(struct.pack("<Q", len(text)) + text + body)
    with open(os.path.join(dst, "model.safetensors.index.json"), "w") as fh:
        json.dump({"metadata": {"total_size": len(data)}, "weight_map": weight_map}, fh)


class Repo:
    def __init__(self, name, folder):
        self.name = name
        self.commit = hashlib.sha1(("attnsim mock " + name).encode()).hexdigest()
        self.files = {}
        for f in sorted(os.listdir(folder)):
            with open(os.path.join(folder, f), "rb") as fh:
                self.files[f] = fh.read()
        self.sha256 = {f: hashlib.sha256(d).hexdigest() for f, d in self.files.items()}
        self.git_sha1 = {f: git_blob_sha1(d) for f, d in self.files.items()}

    @staticmethod
    def is_lfs(name):
        return name.endswith(".safetensors")

    def info(self):
        siblings = []
        for name, data in self.files.items():
            s = {"rfilename": name, "size": len(data), "blobId": self.git_sha1[name]}
            if self.is_lfs(name):
                s["lfs"] = {"sha256": self.sha256[name], "size": len(data), "pointerSize": 134}
            siblings.append(s)
        return {"id": self.name, "modelId": self.name, "sha": self.commit, "private": False, "siblings": siblings}


class MockHub:
    def __init__(self, repos, token=None, stall_s=5.0):
        self.repos = {name: Repo(name, folder) for name, folder in repos.items()}
        self.token = token
        self.stall_s = stall_s
        self.fault = {}  # {"fault": F, "file": X, "count": N}
        self.info_patch = {}
        self.any_revision = False
        self.log = []
        self.connections = set()  # open ones: a browser keeps them alive past stop() unless cut
        self.lock = threading.Lock()
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_OPTIONS(self):
                self.answer(204, b"", {"Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
                                       "Access-Control-Allow-Headers": "Authorization, Range"})

            def do_HEAD(self):
                hub.handle(self, head=True)

            def do_GET(self):
                hub.handle(self, head=False)

            def answer(self, status, body, headers=None, send=None):
                with hub.lock:
                    hub.log.append({"method": self.command, "path": self.path, "status": status,
                                    "range": self.headers.get("Range"),
                                    "authorization": self.headers.get("Authorization")})
                self.send_response(status)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Expose-Headers", EXPOSED)
                headers = dict(headers or {})
                headers.setdefault("Content-Length", str(len(body)))
                for k, v in headers.items():
                    if v is not None:  # None: no such header (a body delimited by the connection's end)
                        self.send_header(k, v)
                self.end_headers()
                if self.command == "HEAD":
                    return
                (send or (lambda: self.wfile.write(body)))()

        class Server(http.server.ThreadingHTTPServer):
            def process_request(self, request, client_address):
                with hub.lock:
                    hub.connections.add(request)
                super().process_request(request, client_address)

            def shutdown_request(self, request):
                with hub.lock:
                    hub.connections.discard(request)
                super().shutdown_request(request)

            def handle_error(self, request, client_address):
                if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that gave up is a test's point
                    super().handle_error(request, client_address)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port

    def start(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        """Stops listening and cuts every open connection: a stopped hub answers nothing."""
        self.server.shutdown()
        self.server.server_close()
        with self.lock:
            for c in self.connections:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def requests(self, part=""):
        with self.lock:
            return [e for e in self.log if part in e["path"]]

    def take_fault(self, target):
        """The fault for `target` ("api" or a file name), used up by one request."""
        with self.lock:
            f = self.fault
            if not f or f.get("file") != target or f.get("count", 1) == 0:
                return None
            if f.get("count", 1) > 0:
                f["count"] = f.get("count", 1) - 1
            return f["fault"]

    def authorized(self, h):
        return self.token is None or h.headers.get("Authorization") == "Bearer " + self.token

    def handle(self, h, head):
        url = urllib.parse.urlsplit(h.path)
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        if parts[:1] == ["_control"]:
            q = urllib.parse.parse_qs(url.query)
            self.fault = {"fault": q["fault"][0], "file": q["file"][0], "count": int(q.get("count", ["1"])[0])} if "fault" in q else {}
            return h.answer(200, b"ok\n")
        if parts[:2] == ["api", "models"] and len(parts) == 6 and parts[4] == "revision":
            return self.model_info(h, parts[2] + "/" + parts[3], parts[5])
        if len(parts) == 5 and parts[2] == "resolve":
            return self.resolve(h, parts[0] + "/" + parts[1], parts[3], parts[4])
        if len(parts) == 2 and parts[0] == "cdn":
            return self.cdn(h, parts[1])
        h.answer(404, b'{"error":"not found"}', {"Content-Type": "application/json"})

    def error_status(self, h, target):
        """401 without the token, else the status fault set for `target`, else None."""
        if not self.authorized(h):
            return 401
        if self.fault.get("fault", "").isdigit():
            fault = self.take_fault(target)
            return int(fault) if fault else None
        return None

    def known(self, r, rev):
        return r is not None and (self.any_revision or rev in ("main", r.commit))

    def model_info(self, h, repo, rev):
        status = self.error_status(h, "api")
        r = self.repos.get(repo)
        if status is None and not self.known(r, rev):
            status = 404 if self.token is None or r is not None else 401  # the Hub hides private repos behind 401
        if status:
            return h.answer(status, json.dumps({"error": "Repository Not Found or access refused"}).encode(),
                            {"Content-Type": "application/json", "X-Error-Code": "RepoNotFound"})
        info = r.info()
        for s in info["siblings"]:
            s.update(self.info_patch.get(s["rfilename"], {}))
        self.send_bytes(h, json.dumps(info).encode(), "api", {"Content-Type": "application/json"})

    def resolve(self, h, repo, rev, name):
        r = self.repos.get(repo)
        status = self.error_status(h, name)
        if status is None and (not self.known(r, rev) or name not in r.files):
            status = 404
        if status:
            return h.answer(status, b'{"error":"Entry not found"}', {"Content-Type": "application/json", "X-Error-Code": "EntryNotFound"})
        data = r.files[name]
        common = {"X-Repo-Commit": r.commit}
        if r.is_lfs(name):
            sha = r.sha256[name]
            common.update({"X-Linked-Etag": '"%s"' % sha, "X-Linked-Size": str(len(data)), "ETag": '"%s"' % r.git_sha1[name],
                           "Location": "%s/cdn/%s" % (self.url, sha)})
            return h.answer(302, b"Found. Redirecting", common)
        common["ETag"] = '"%s"' % r.git_sha1[name]
        self.send_bytes(h, data, name, common)

    def cdn(self, h, sha):
        for r in self.repos.values():
            for name, data in r.files.items():
                if r.sha256[name] == sha:
                    return self.send_bytes(h, data, name, {"ETag": '"%s"' % sha})
        h.answer(404, b"no such object")

    def send_bytes(self, h, data, name, headers):
        start = 0
        rng = h.headers.get("Range")
        status = 200
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(data):
                return h.answer(416, b"", {"Content-Range": "bytes */%d" % len(data)})
            status = 206
            headers = dict(headers, **{"Content-Range": "bytes %d-%d/%d" % (start, len(data) - 1, len(data))})
        body = data[start:]
        fault = self.take_fault(name) if h.command == "GET" else None
        if fault == "flood":
            return h.answer(500, b"x" * (2 << 20), {"Content-Length": str(2 << 20)})
        if fault == "headers":
            return h.answer(status, body, dict(headers, **{"X-Pad-%d" % i: "y" * 1000 for i in range(2100)}))
        if fault == "truncate":
            return h.answer(status, body[: len(body) // 2], headers)
        if fault == "badsha":
            body = body[:-1] + bytes([body[-1] ^ 1])
        if fault == "drip":
            def drip():
                for i in range(len(body)):
                    h.wfile.write(body[i:i + 1])
                    h.wfile.flush()
                    time.sleep(0.5)
            return h.answer(status, body, headers, send=drip)
        if fault == "overrun":
            def overrun():
                h.wfile.write(body)
                while True:  # until the client hangs up (BrokenPipe ends the handler)
                    h.wfile.write(b"x" * 65536)
            h.close_connection = True
            return h.answer(status, body, dict(headers, **{"Content-Length": None, "Connection": "close"}), send=overrun)
        if fault in ("drop", "stall"):
            cut = len(body) // (2 if fault == "drop" else 4)

            def partial():
                h.wfile.write(body[:cut])
                h.wfile.flush()
                time.sleep(self.stall_s if fault == "stall" else 0.5)
                h.close_connection = True
            return h.answer(status, body, headers, send=partial)
        h.answer(status, body, headers)


def main():
    repos = dict(arg.split("=", 1) for arg in sys.argv[1:])
    hub = MockHub(repos, token=os.environ.get("MOCK_HUB_TOKEN"))
    print(hub.port, flush=True)
    hub.server.serve_forever()


if __name__ == "__main__":
    main()
