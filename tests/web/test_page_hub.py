#!/usr/bin/python3
"""The page's Open from Hugging Face… against the mock hub on 127.0.0.1 (issue 39), in
Debian's headless Chromium. attnsim.html is opened alone from file://, with the hash naming the
mock hub (hf_endpoint=, as HF_ENDPOINT does on the desktop). Checks, in one browser profile:
  - each failure is one error banner that says what to do, and the page runs on: a 401 (the
    Token field), a 500 (try again later), a wrong sha256 (nothing kept), a stall past
    hub_timeout, a model info dripping past its deadline, a password in hf_endpoint (never
    shown), and Cancel;
  - a sharded model fetches its index, then every shard the index names;
  - a download cut halfway (the mock drops the connection) is one error banner, and what
    arrived stays in IndexedDB; asking again resumes with a Range request from there, and the
    model opens in the model scenario;
  - the stored list names the model with its size, the files' bytes;
  - the mock hub stopped and the page reloaded, the model opens again from the browser's
    storage with no network;
  - a wrong name (404), and a config.json that would not fit the page's memory (refused before
    any weight byte is asked for), are one error banner each, and the page runs on;
  - Delete empties the list;
  - a gated model (the mock wants a token): refused without one, fetched with the one typed,
    which goes out as "Authorization: Bearer" and is kept nowhere (localStorage, IndexedDB);
  - Debian's Firefox ESR downloads and opens the model from a #hub=ORG/NAME link.
The model is tests/golden/hf_gpt2_tok (47 KB), as in tests/hub/test_hub.py.
Usage: tests/web/test_page_hub.py BUILD_WEB_DIR
"""
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "hub"))
from mock_hub import MockHub, shard_folder  # noqa: E402
from page_driver import browser, console, firefox_line, open_page  # noqa: E402

WEB = sys.argv[1]
MODEL = os.path.join(ROOT, "tests", "golden", "hf_gpt2_tok")
NAME, HUGE, SHARDED = "attnsim-test/tiny-gpt2", "attnsim-test/huge-gpt2", "attnsim-test/sharded-gpt2"
TOKEN = "hf_attnsimPageToken_0123456789"
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def hub_open(d, name, lines, want, seconds=60, token=""):
    """attnsim_hub_open(name), then the first banner after it that holds `want` or is an error
    (opening a model shows an "Opened" banner before the hub's own)."""
    start = len(lines)
    d.execute_script("Module.ccall('attnsim_hub_open', null, ['string', 'string'], [arguments[0], arguments[1]])", name, token)
    deadline = time.time() + seconds
    while time.time() < deadline:
        lines += console(d)
        for l in lines[start:]:
            if l.startswith("attnsim banner:") and (want in l or " error: " in l):
                return l
        time.sleep(0.1)
    print("      the banners since: %r" % [l for l in lines[start:] if l.startswith("attnsim banner:")])
    return None


def stored(d):
    return d.execute_async_script("attnsimHub.list().then(arguments[arguments.length - 1])")


def parts_kept(d):
    return d.execute_async_script("""
        var done = arguments[arguments.length - 1];
        var r = indexedDB.open("attnsim-hub");
        r.onsuccess = function () {
          var c = r.result.transaction("parts").objectStore("parts").count();
          c.onsuccess = function () { done(c.result); };
        };""")


def main():
    folder = tempfile.mkdtemp(prefix="attnsim-page-hub-")
    page_dir = os.path.join(folder, "alone")
    os.mkdir(page_dir)
    shutil.copy(os.path.join(WEB, "attnsim.html"), page_dir)
    url = "file://" + os.path.join(page_dir, "attnsim.html")
    huge = os.path.join(folder, "huge")
    shutil.copytree(MODEL, huge)
    with open(os.path.join(huge, "config.json")) as f:
        config = json.load(f)
    config.update(n_layer=400, n_embd=8192, n_head=64, n_inner=None)  # ~320 B parameters
    with open(os.path.join(huge, "config.json"), "w") as f:
        json.dump(config, f)
    sharded = os.path.join(folder, "sharded")
    shard_folder(MODEL, sharded)
    hub = MockHub({NAME: MODEL, HUGE: huge, SHARDED: sharded}, stall_s=6).start()
    link = "#scenario=default&step=q_proj&lang=en&hf_endpoint=%s&hub_timeout=2" % hub.url
    size = sum(os.path.getsize(os.path.join(MODEL, f)) for f in os.listdir(MODEL))
    d = browser(os.path.join(folder, "downloads"))
    try:
        _, lines = open_page(d, url, link)
        # 0. failures, one banner each
        for fault, target, words in [("401", "api", "Token field"), ("500", "api", "try again later"),
                                     ("badsha", "model.safetensors", "nothing was kept"),
                                     ("stall", "model.safetensors", "no data from"),
                                     ("drip", "api", "slower than 16 KiB/s")]:
            hub.fault = {"fault": fault, "file": target, "count": 1}
            b = hub_open(d, NAME, lines, NAME)
            check(b is not None and " error: " in b and words in b, "%s: one error banner: %r" % (fault, b))
            if fault == "badsha":
                check(parts_kept(d) == 0, "a wrong sha256 keeps nothing")
        # a password in the Hub's address reaches no banner (fetch refuses such a URL, and
        # its own words quote it)
        hub.fault = {}
        creds = link.replace("hf_endpoint=http://", "hf_endpoint=http://user:PASSWORD@")
        _, lines = open_page(d, url, creds)
        b = hub_open(d, NAME, lines, NAME)
        check(b is not None and " error: " in b and "PASSWORD" not in b and "***@" in b,
              "a password in hf_endpoint is not shown: %r" % b)
        _, lines = open_page(d, url, link)
        hub.fault = {"fault": "stall", "file": "model.safetensors", "count": 1}
        start = len(lines)
        d.execute_script("Module.ccall('attnsim_hub_open', null, ['string', 'string'], [arguments[0], ''])", NAME)
        time.sleep(1)
        d.execute_script("attnsimHub.cancel()")
        b, deadline = None, time.time() + 20
        while time.time() < deadline and not b:
            lines += console(d)
            b = next((l for l in lines[start:] if l.startswith("attnsim banner:")), None)
            time.sleep(0.1)
        check(b is not None and " error: " in b and "cancelled" in b, "Cancel: one banner %r" % b)
        # 1. cut halfway: one error banner, the half kept
        hub.fault = {"fault": "drop", "file": "model.safetensors", "count": 1}
        b = hub_open(d, NAME, lines, NAME)
        check(b is not None and " error: " in b and NAME in b, "a cut download is one error banner: %r" % b)
        check(parts_kept(d) > 0, "what arrived before the cut is kept in IndexedDB")
        # 2. again: resumed with Range, then opened
        before = len(hub.requests("/cdn/"))
        b = hub_open(d, NAME, lines, "downloaded")
        ranges = [e["range"] for e in hub.requests("/cdn/")[before:]]
        check(b is not None and " info: " in b and "downloaded" in b, "asked again, it downloads: %r" % b)
        check(len(ranges) == 1 and (ranges[0] or "").startswith("bytes=") and ranges[0] != "bytes=0-",
              "the weights resumed with a Range request: %r" % ranges)
        check("scenario=model" in d.execute_script("return location.hash"), "the model opens in the model scenario")
        check(parts_kept(d) == 0, "no part left once the file is whole")
        rows = stored(d)
        check(len(rows) == 1 and rows[0]["name"] == NAME and rows[0]["bytes"] == size,
              "the stored list: %r (the files: %d bytes)" % (rows, size))
        # a sharded model: the index, then every shard it names; stored, then deleted again
        b = hub_open(d, SHARDED, lines, "downloaded")
        shards = sorted(e["path"].rsplit("/", 1)[1] for e in hub.requests("sharded-gpt2/resolve/"))
        # (its config and tokenizer files are the tiny model's blobs, already stored: not asked for)
        check(b is not None and " info: " in b and shards == sorted(f for f in os.listdir(sharded) if "safetensors" in f),
              "a sharded model downloads its index and both shards: %r, %r" % (b, shards))
        d.execute_async_script("attnsimHub.remove(arguments[0]).then(arguments[arguments.length - 1])", SHARDED)
        # 3. a wrong name, a model too large for the page
        b = hub_open(d, "attnsim-test/no-such-model", lines, "no such model")
        check(b is not None and " error: " in b and "no such model" in b, "a wrong name: %r" % b)
        b = hub_open(d, HUGE, lines, HUGE)
        weights = [e for e in hub.requests("huge-gpt2/resolve") if e["path"].endswith("model.safetensors")]
        check(b is not None and " error: " in b and "over the" in b and not weights,
              "a model too large for the page is refused before its weights: %r (weight requests: %d)" % (b, len(weights)))
        # Firefox, its own profile: a #hub= link downloads and opens it
        got = firefox_line(url, "#hub=%s&hf_endpoint=%s" % (NAME, hub.url), "attnsim banner: info: " + NAME + ":")
        check(got is not None and "downloaded" in got, "Firefox: a #hub= link downloads and opens the model: %r" % got)
        # 4. offline: the hub stopped, the page reloaded
        hub.stop()
        hub = None
        _, lines = open_page(d, url, link)
        b = hub_open(d, NAME, lines, "no network")
        check(b is not None and " info: " in b and "no network" in b, "with the hub stopped it opens from storage: %r" % b)
        check("scenario=model" in d.execute_script("return location.hash"), "the stored model opens in the model scenario")
        # 5. delete
        d.execute_async_script("attnsimHub.remove(arguments[0]).then(arguments[arguments.length - 1])", NAME)
        check(stored(d) == [], "Delete empties the stored list")
        b = hub_open(d, NAME, lines, NAME)
        check(b is not None and " error: " in b and "cannot reach" in b, "deleted, and the hub stopped: %r" % b)
        # 6. a gated model: the token typed goes out as a header and is kept nowhere
        gated = MockHub({NAME: MODEL}, token=TOKEN).start()
        try:
            _, lines = open_page(d, url, "#scenario=default&step=q_proj&lang=en&hf_endpoint=" + gated.url)
            b = hub_open(d, NAME, lines, NAME)
            check(b is not None and " error: " in b and "HTTP 401" in b and "Token field" in b,
                  "gated, no token: %r" % b)
            b = hub_open(d, NAME, lines, "downloaded", token=TOKEN)
            sent = [e["authorization"] for e in gated.requests("/api/")]
            check(b is not None and " info: " in b and sent[-1] == "Bearer " + TOKEN, "gated, the token typed: %r" % b)
            kept = d.execute_async_script("""
                var done = arguments[arguments.length - 1], found = [];
                for (var i = 0; i < localStorage.length; i++) found.push(localStorage.getItem(localStorage.key(i)));
                attnsimHub.list().then(function (rows) { done(JSON.stringify(found) + JSON.stringify(rows)); });""")
            check(TOKEN not in kept, "the token is in neither localStorage nor the stored records")
        finally:
            gated.stop()
    finally:
        d.quit()
        if hub:
            hub.stop()
        shutil.rmtree(folder, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all page hub checks passed")


main()
