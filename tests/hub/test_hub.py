#!/usr/bin/env python3
"""attnsim-cli pull and --model ORG/NAME against the mock hub on 127.0.0.1 (issue 39).

  python3 tests/hub/test_hub.py build/attnsim-cli      (CTest runs it: `ctest -R hub_mock`)

Each test has its own cache folder (HF_HUB_CACHE) and talks to nothing but 127.0.0.1. The
model is tests/golden/hf_gpt2_tok (config.json, model.safetensors, vocab.json, merges.txt,
47 KB) served as attnsim-test/tiny-gpt2; ATTNSIM_HUB_TIMEOUT=1 keeps the stall case short.
"""
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_hub import MockHub, git_blob_sha1, shard_folder  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = None
MODEL = os.path.join(ROOT, "tests", "golden", "hf_gpt2_tok")
NAME = "attnsim-test/tiny-gpt2"
TOKEN = "hf_attnsimTestToken_0123456789"
WEIGHTS_SHA = hashlib.sha256(open(os.path.join(MODEL, "model.safetensors"), "rb").read()).hexdigest()


class HubTest(unittest.TestCase):
    token = None

    def setUp(self):
        self.hub = MockHub({NAME: MODEL}, token=self.token, stall_s=4).start()
        self.tmp = tempfile.mkdtemp(prefix="attnsim-hub-")
        self.cache = os.path.join(self.tmp, "cache")
        self.repo_dir = os.path.join(self.cache, "models--attnsim-test--tiny-gpt2")
        self.commit = self.hub.repos[NAME].commit

    def tearDown(self):
        self.hub.stop()
        shutil.rmtree(self.tmp)

    def env(self, extra=None):
        e = {k: v for k, v in os.environ.items() if not k.startswith("HF_") and "proxy" not in k.lower()}
        e.update({"HF_HUB_CACHE": self.cache, "HF_ENDPOINT": self.hub.url, "ATTNSIM_HUB_TIMEOUT": "1",
                  "NO_PROXY": "*"})
        e.update(extra or {})
        return e

    def cli(self, *args, env=None, cwd=None):
        p = subprocess.run([CLI, *args], env=self.env(env), cwd=cwd or self.tmp, capture_output=True, text=True, errors="replace", timeout=60)
        return p.returncode, p.stdout, p.stderr

    def assert_refused(self, code, out, err, *words):
        """Exit 2 and one line on stderr holding each of `words`; nothing on stdout."""
        self.assertEqual(code, 2, err)
        self.assertEqual(out, "")
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith("attnsim-cli: "), err)
        for w in words:
            self.assertIn(w, lines[0])
        return lines[0]

    def snapshot_files(self):
        d = os.path.join(self.repo_dir, "snapshots")
        return sorted(os.path.relpath(os.path.join(p, f), d) for p, _, fs in os.walk(d) for f in fs) if os.path.isdir(d) else []

    def assert_nothing_verified(self):
        """After a failure: no snapshot file, no ref, no blob of the weights."""
        self.assertEqual(self.snapshot_files(), [])
        self.assertFalse(os.path.exists(os.path.join(self.repo_dir, "refs", "main")))
        self.assertFalse(os.path.exists(os.path.join(self.repo_dir, "blobs", WEIGHTS_SHA)))


class Download(HubTest):
    def test_pull_lands_in_the_cache_layout_huggingface_hub_reads(self):
        code, out, err = self.cli("pull", NAME)
        self.assertEqual(code, 0, err)
        snap = os.path.join(self.repo_dir, "snapshots", self.commit)
        self.assertEqual(out.splitlines()[-1], snap)
        with open(os.path.join(self.repo_dir, "refs", "main")) as f:
            self.assertEqual(f.read(), self.commit)  # no newline, as huggingface_hub writes it
        self.assertEqual(self.snapshot_files(), [self.commit + "/" + f for f in
                                                 ("config.json", "merges.txt", "model.safetensors", "vocab.json")])
        for f in os.listdir(snap):
            data = open(os.path.join(MODEL, f), "rb").read()
            blob = hashlib.sha256(data).hexdigest() if f.endswith(".safetensors") else git_blob_sha1(data)
            link = os.path.join(snap, f)
            self.assertTrue(os.path.islink(link))
            self.assertEqual(os.readlink(link), "../../blobs/" + blob)  # relative: the cache may move
            self.assertEqual(open(link, "rb").read(), data)
        self.assertEqual([b for b in os.listdir(os.path.join(self.repo_dir, "blobs")) if b.endswith(".incomplete")], [])
        # the weight file came through the Hub's redirect to its CDN
        self.assertEqual([e["status"] for e in self.hub.requests("/resolve/" + self.commit + "/model.safetensors")], [302])
        self.assertEqual(len(self.hub.requests("/cdn/" + WEIGHTS_SHA)), 1)
        # a second pull asks the Hub for the model info only
        n = len(self.hub.log)
        self.assertEqual(self.cli("pull", NAME)[0], 0)
        self.assertEqual([e["path"].split("?")[0] for e in self.hub.log[n:]],
                         ["/api/models/%s/revision/main" % NAME])

    def test_a_sharded_model_pulls_every_shard_its_index_names(self):
        sharded = os.path.join(self.tmp, "sharded")
        shard_folder(MODEL, sharded)
        hub = MockHub({"attnsim-test/sharded": sharded}).start()
        try:
            code, out, err = self.cli("pull", "attnsim-test/sharded", env={"HF_ENDPOINT": hub.url})
            self.assertEqual(code, 0, err)
            self.assertEqual(sorted(os.listdir(out.splitlines()[-1])), sorted(os.listdir(sharded)))
            by_name = self.cli("trace", "--model", "attnsim-test/sharded", "--layer", "0", "--tokens", "1,2,3", "--json",
                               env={"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "1"})
            by_folder = self.cli("trace", "--model", MODEL, "--layer", "0", "--tokens", "1,2,3", "--json")
            self.assertEqual(by_name[0], 0, by_name[2])
            self.assertEqual(json.loads(by_name[1])["steps"], json.loads(by_folder[1])["steps"])
        finally:
            hub.stop()

    def test_model_by_name_opens_from_the_cache_and_offline(self):
        self.assertEqual(self.cli("pull", NAME)[0], 0)
        by_folder = self.cli("trace", "--model", MODEL, "--layer", "0", "--tokens", "1,2,3", "--json")
        n = len(self.hub.log)
        by_name = self.cli("trace", "--model", NAME, "--layer", "0", "--tokens", "1,2,3", "--json",
                           env={"HF_HUB_OFFLINE": "1"})
        self.assertEqual(by_name[0], 0, by_name[2])
        self.assertEqual(by_name[1], by_folder[1])
        for args in (["tokenize", "--model", NAME, "--text", "hello"], ["predict", "--model", NAME, "--tokens", "1,2"],
                     ["heads", "--model", NAME], ["decode", "--model", NAME, "--tokens", "1", "--steps", "2"]):
            code, _, err = self.cli(*args, env={"HF_HUB_OFFLINE": "1"})
            self.assertEqual(code, 0, (args, err))
        # cached: no request even online
        self.assertEqual(self.cli("predict", "--model", NAME, "--tokens", "1,2")[0], 0)
        self.assertEqual(len(self.hub.log), n)

    def test_model_by_name_downloads_when_not_cached(self):
        code, _, err = self.cli("predict", "--model", NAME, "--tokens", "1,2")
        self.assertEqual(code, 0, err)
        self.assertEqual(len(self.hub.requests("/cdn/")), 1)

    def test_a_local_folder_of_that_name_wins(self):
        shutil.copytree(MODEL, os.path.join(self.tmp, NAME))
        code, _, err = self.cli("predict", "--model", NAME, "--tokens", "1,2")
        self.assertEqual(code, 0, err)
        self.assertEqual(self.hub.log, [])

    def test_offline_refuses_what_is_not_cached(self):
        line = self.assert_refused(*self.cli("pull", NAME, env={"HF_HUB_OFFLINE": "1"}), "HF_HUB_OFFLINE=1", "is not in")
        self.assertIn("attnsim-cli pull " + NAME, line)
        self.assert_refused(*self.cli("trace", "--model", NAME, "--tokens", "1", env={"HF_HUB_OFFLINE": "yes"}),
                            "HF_HUB_OFFLINE=1")
        self.assertEqual(self.hub.log, [])

    def test_offline_refuses_a_snapshot_that_lacks_files(self):
        self.assertEqual(self.cli("pull", NAME)[0], 0)
        os.unlink(os.path.join(self.repo_dir, "blobs", WEIGHTS_SHA))  # the link now dangles
        self.assert_refused(*self.cli("pull", NAME, env={"HF_HUB_OFFLINE": "1"}), "lacks model.safetensors")

    def test_resume_after_a_dropped_connection_fetches_only_the_rest(self):
        self.hub.fault = {"fault": "drop", "file": "model.safetensors", "count": 1}
        self.assert_refused(*self.cli("pull", NAME), "connection ended after", "resume")
        self.assert_nothing_verified()
        part = os.path.join(self.repo_dir, "blobs", WEIGHTS_SHA + ".incomplete")
        kept = os.path.getsize(part)
        size = os.path.getsize(os.path.join(MODEL, "model.safetensors"))
        self.assertEqual(kept, size // 2)
        code, _, err = self.cli("pull", NAME)
        self.assertEqual(code, 0, err)
        cdn = self.hub.requests("/cdn/")
        self.assertEqual([(e["range"], e["status"]) for e in cdn], [(None, 200), ("bytes=%d-" % kept, 206)])
        self.assertFalse(os.path.exists(part))
        self.assertEqual(hashlib.sha256(open(os.path.join(self.repo_dir, "blobs", WEIGHTS_SHA), "rb").read()).hexdigest(),
                         WEIGHTS_SHA)

    def test_waits_for_the_lock_huggingface_hub_takes(self):
        """Python's filelock (flock on .locks/models--ORG--NAME/<hash>.lock) and attnsim exclude each other."""
        lock = os.path.join(self.cache, ".locks", "models--attnsim-test--tiny-gpt2", WEIGHTS_SHA + ".lock")
        os.makedirs(os.path.dirname(lock))
        fd = os.open(lock, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        p = subprocess.Popen([CLI, "pull", NAME], env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.0)
        self.assertIsNone(p.poll())  # waiting, before any weight byte
        self.assertEqual(self.hub.requests("/cdn/"), [])
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        self.assertEqual(p.wait(timeout=30), 0, p.stderr.read())
        p.stdout.close()
        p.stderr.close()
        self.assertEqual(len(self.hub.requests("/cdn/")), 1)

    def test_memory_is_checked_before_any_weight_byte(self):
        self.assert_refused(*self.cli("pull", NAME, "--mem-limit", "1K"), "over the limit of 1.00 KiB", "nothing of the weights")
        self.assertEqual(self.hub.requests("model.safetensors"), [])
        self.assertEqual(self.hub.requests("/cdn/"), [])
        self.assert_nothing_verified()

    def test_cors_headers(self):
        req = urllib.request.Request(self.hub.url + "/%s/resolve/main/config.json" % NAME, method="OPTIONS")
        with urllib.request.urlopen(req) as r:
            self.assertEqual(r.headers["Access-Control-Allow-Origin"], "*")
            self.assertIn("X-Linked-Etag", r.headers["Access-Control-Expose-Headers"])


class Faults(HubTest):
    def fault(self, fault, file, *words, count=-1):
        self.hub.fault = {"fault": fault, "file": file, "count": count}
        line = self.assert_refused(*self.cli("pull", NAME), *words)
        self.assert_nothing_verified()
        return line

    def test_truncated_body(self):
        self.fault("truncate", "model.safetensors", "Content-Length")

    def test_wrong_sha256(self):
        self.fault("badsha", "model.safetensors", "sha256 mismatch", WEIGHTS_SHA)
        self.assertEqual(os.listdir(os.path.join(self.repo_dir, "blobs")).count(WEIGHTS_SHA + ".incomplete"), 0)

    def test_wrong_git_sha1_of_a_small_file(self):
        self.fault("badsha", "config.json", "git sha1 mismatch")

    def test_401_says_how_to_pass_a_token(self):
        self.fault("401", "api", "HTTP 401", "HF_TOKEN")

    def test_403_on_a_file(self):
        self.fault("403", "model.safetensors", "HTTP 403", "HF_TOKEN")

    def test_404_says_the_name_is_wrong(self):
        line = self.assert_refused(*self.cli("pull", "attnsim-test/no-such-model"), "HTTP 404", "check the name")
        self.assertIn("attnsim-test/no-such-model", line)
        self.fault("404", "model.safetensors", "HTTP 404")

    def test_500(self):
        self.fault("500", "api", "HTTP 500", "try again later")

    def test_endless_error_page_and_headers(self):
        self.fault("flood", "model.safetensors", "over 1 MiB of an HTTP 500 page")
        self.fault("headers", "model.safetensors", "response headers")  # libcurl's own bound (300 KB)

    def test_stall_past_the_timeout(self):
        self.fault("stall", "model.safetensors", "no data", "ATTNSIM_HUB_TIMEOUT")

    def test_connection_refused(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nothing listens there now
        self.assert_refused(*self.cli("pull", NAME, env={"HF_ENDPOINT": "http://127.0.0.1:%d" % port}), "cannot reach",
                            "HF_HUB_OFFLINE")

    def test_bad_names_and_settings(self):
        self.assert_refused(*self.cli("pull", "not-a-name"), "not a model name")
        self.assert_refused(*self.cli("pull", NAME + "@../x"), "revision")
        self.assert_refused(*self.cli("pull", NAME, env={"ATTNSIM_HUB_TIMEOUT": "soon"}), "ATTNSIM_HUB_TIMEOUT")
        self.assert_refused(*self.cli("pull", NAME, env={"HF_TOKEN": "a\nb"}), "HF_TOKEN")
        self.assertEqual(self.hub.log, [])


class Hostile(HubTest):
    """Issue 49: a hub that drips, lies about sizes or commits, an endpoint with a password, a
    repository without a tokenizer, and caches that cannot be written."""

    def timed_pull(self, *args, env=None):
        t0 = time.monotonic()
        code, out, err = self.cli("pull", *args, env=env)
        return code, out, err, time.monotonic() - t0

    def blobs(self):
        d = os.path.join(self.repo_dir, "blobs")
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def test_a_dripping_model_info_is_cut_at_its_deadline(self):
        self.hub.fault = {"fault": "drip", "file": "api", "count": -1}  # 2 bytes a second: never a stall
        code, out, err, seconds = self.timed_pull(NAME, env={"ATTNSIM_HUB_TIMEOUT": "2"})
        self.assert_refused(code, out, err, "the model info", "bytes in", "slower than 16 KiB/s after the first 2 s")
        self.assertLess(seconds, 5)  # the deadline (2 s and a few bytes), not the ~900 bytes at 2 a second
        self.assertFalse(os.path.exists(self.repo_dir))

    def test_a_dripping_file_is_cut_and_resumed(self):
        self.hub.fault = {"fault": "drip", "file": "config.json", "count": 1}
        code, out, err, seconds = self.timed_pull(NAME)
        self.assert_refused(code, out, err, "config.json", "slower than", "resume")
        self.assertLess(seconds, 4)
        self.assert_nothing_verified()
        config = os.path.join(MODEL, "config.json")
        with open(config, "rb") as f:
            part = os.path.join(self.repo_dir, "blobs", git_blob_sha1(f.read()) + ".incomplete")
        kept = os.path.getsize(part)
        self.assertTrue(0 < kept < os.path.getsize(config), kept)
        self.assertEqual(self.cli("pull", NAME)[0], 0)
        self.assertEqual([e["range"] for e in self.hub.requests("/config.json")], [None, "bytes=%d-" % kept])

    def test_a_config_the_model_info_calls_huge_is_refused_before_its_body(self):
        self.hub.info_patch = {"config.json": {"size": 10 ** 15}}
        self.hub.fault = {"fault": "overrun", "file": "config.json", "count": -1}  # and it would stream forever
        code, out, err, seconds = self.timed_pull(NAME)
        self.assert_refused(code, out, err, "config.json is 1000000000000000 bytes", "over the 1.00 MiB",
                            "before any byte")
        self.assertLess(seconds, 5)
        self.assertEqual(self.hub.requests("config.json"), [])
        self.assertFalse(os.path.exists(self.repo_dir))
        self.hub.info_patch = {"vocab.json": {"size": (32 << 20) + 1}}  # the tokenizer's files: 32 MiB
        self.assert_refused(*self.cli("pull", NAME), "vocab.json is 33554433 bytes", "32.00 MiB")

    def test_a_body_past_its_size_is_cut_and_not_kept(self):
        for name in ("config.json", "model.safetensors"):
            self.hub.fault = {"fault": "overrun", "file": name, "count": -1}
            size = os.path.getsize(os.path.join(MODEL, name))
            self.assert_refused(*self.cli("pull", NAME), name, "more than the file's %d bytes" % size, "nothing was kept")
            self.assert_nothing_verified()
            self.assertEqual([b for b in self.blobs() if b.endswith(".incomplete")], [])

    def test_a_pinned_commit_answered_with_another_is_refused(self):
        self.hub.any_revision = True  # answers every revision with its own commit
        pinned = "0123456789abcdef0123456789abcdef01234567"
        self.assert_refused(*self.cli("pull", NAME + "@" + pinned), "the Hub answered with commit " + self.commit,
                            "pinned commit " + pinned, "nothing was written")
        self.assertFalse(os.path.exists(self.repo_dir))
        self.assertEqual(self.hub.requests("/resolve/"), [])
        code, out, err = self.cli("pull", NAME + "@" + self.commit)  # the commit it serves is pulled
        self.assertEqual(code, 0, err)
        self.assertEqual(out.splitlines()[-1], os.path.join(self.repo_dir, "snapshots", self.commit))
        self.assertFalse(os.path.exists(os.path.join(self.repo_dir, "refs")))  # a commit needs no ref

    def test_no_password_in_any_line(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        closed = "127.0.0.1:%d" % s.getsockname()[1]
        s.close()
        line = self.assert_refused(*self.cli("pull", NAME, env={"HF_ENDPOINT": "http://user:PASSWORD@" + closed}),
                                   "cannot reach http://***@" + closed)
        self.assertNotIn("PASSWORD", line)
        self.hub.fault = {"fault": "drip", "file": "api", "count": -1}
        mock = self.hub.url.replace("http://", "http://user:PASSWORD@")
        line = self.assert_refused(*self.cli("pull", NAME, env={"HF_ENDPOINT": mock}), "http://***@127.0.0.1")
        self.assertNotIn("PASSWORD", line)
        for endpoint in ("ftp://user:PASSWORD@127.0.0.1", "user:PASSWORD@127.0.0.1:9"):
            line = self.assert_refused(*self.cli("pull", NAME, env={"HF_ENDPOINT": endpoint}), "HF_ENDPOINT", "***@127.0.0.1")
            self.assertNotIn("PASSWORD", line)

    def test_a_repository_without_a_tokenizer_pulls_and_opens_on_token_ids(self):
        folder = os.path.join(self.tmp, "no-tokenizer")
        os.makedirs(folder)
        for f in ("config.json", "model.safetensors"):
            shutil.copy(os.path.join(MODEL, f), folder)
        hub = MockHub({"attnsim-test/no-tokenizer": folder}).start()
        try:
            env = {"HF_ENDPOINT": hub.url}
            code, out, err = self.cli("pull", "attnsim-test/no-tokenizer", env=env)
            self.assertEqual(code, 0, err)
            lines = out.splitlines()
            self.assertEqual(lines[-2], "attnsim-test/no-tokenizer has no tokenizer (tokenizer.json, or vocab.json + "
                                        "merges.txt): give its input as token ids (--tokens), not --text")
            self.assertEqual(sorted(os.listdir(lines[-1])), ["config.json", "model.safetensors"])
            env["HF_HUB_OFFLINE"] = "1"
            by_name = self.cli("trace", "--model", "attnsim-test/no-tokenizer", "--layer", "0", "--tokens", "1,2,3", "--json",
                               env=env)
            by_folder = self.cli("trace", "--model", folder, "--layer", "0", "--tokens", "1,2,3", "--json")
            self.assertEqual(by_name[0], 0, by_name[2])
            self.assertEqual(json.loads(by_name[1])["steps"], json.loads(by_folder[1])["steps"])
            self.assert_refused(*self.cli("predict", "--model", "attnsim-test/no-tokenizer", "--text", "hello", env=env),
                                "has no tokenizer (tokenizer.json, or vocab.json + merges.txt)", "--tokens")
        finally:
            hub.stop()

    def assert_cache_refusal(self, args, *words, env=None):
        line = self.assert_refused(*self.cli("pull", *args, env=env), *words)
        self.assertNotIn("filesystem error", line)
        return line

    def test_a_cache_that_is_a_file(self):
        open(self.cache, "w").close()
        self.assert_cache_refusal([NAME], "the Hugging Face cache " + self.cache + " (HF_HUB_CACHE) cannot be a folder",
                                  "is a file", "set HF_HUB_CACHE")
        self.assertEqual(os.path.getsize(self.cache), 0)

    def test_a_read_only_cache(self):
        """Refused in one line with nothing written; a read-only cache that holds the model whole still pulls."""
        os.chmod(self.tmp, 0o755)
        os.makedirs(self.cache)
        ro = {"env": self.env()}
        if os.getuid() == 0:  # root writes anywhere: the CLI runs as nobody, in a cache root owns
            ro["preexec_fn"] = lambda: os.setuid(65534)

        def pull():
            os.chmod(self.cache, 0o555)
            try:
                p = subprocess.run([CLI, "pull", NAME], capture_output=True, text=True, timeout=60, cwd="/", **ro)
            finally:
                os.chmod(self.cache, 0o755)
            return p.returncode, p.stdout, p.stderr

        line = self.assert_refused(*pull(), "cannot write to the Hugging Face cache " + self.cache, "Permission denied",
                                   "make it writable, or set HF_HUB_CACHE")
        self.assertNotIn("filesystem error", line)
        self.assertEqual(os.listdir(self.cache), [])
        self.assertEqual(self.cli("pull", NAME)[0], 0)
        code, out, err = pull()
        self.assertEqual(code, 0, err)
        self.assertEqual(out.splitlines()[-1], os.path.join(self.repo_dir, "snapshots", self.commit))

    def test_a_revision_whose_ref_is_in_the_way(self):
        self.hub.any_revision = True
        self.assertEqual(self.cli("pull", NAME)[0], 0)
        n = len(self.hub.log)
        self.assert_cache_refusal([NAME + "@main/x"], "keeps " + os.path.join(self.repo_dir, "refs", "main") +
                                  " as the ref of main, where the revision main/x needs a folder", "another revision")
        self.assertEqual(len(self.hub.log), n)  # refused before the Hub was asked
        shutil.rmtree(self.repo_dir)
        self.assertEqual(self.cli("pull", NAME + "@main/x")[0], 0)
        self.assert_cache_refusal([NAME], "as a folder (of refs such as main/...)", "another revision")


class Token(HubTest):
    token = TOKEN

    def test_token_is_sent_and_never_shown_or_written(self):
        self.assert_refused(*self.cli("pull", NAME), "HTTP 401", "set HF_TOKEN")
        code, out, err = self.cli("pull", NAME, env={"HF_TOKEN": TOKEN})
        self.assertEqual(code, 0, err)
        hub_requests = [e for e in self.hub.log if not e["path"].startswith("/cdn/")]
        self.assertTrue(hub_requests)
        self.assertTrue(all(e["authorization"] == "Bearer " + TOKEN for e in hub_requests[-5:]))
        self.assertNotIn(TOKEN, out + err)
        # a refused token: one line that never holds its value
        line = self.assert_refused(*self.cli("pull", NAME, env={"HF_TOKEN": "hf_wrong_" + TOKEN}), "refused the token")
        self.assertNotIn(TOKEN, line)
        for folder, _, files in os.walk(self.tmp):
            for f in files:
                with open(os.path.join(folder, f), "rb") as fh:
                    self.assertNotIn(TOKEN.encode(), fh.read())


if __name__ == "__main__":
    CLI = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
