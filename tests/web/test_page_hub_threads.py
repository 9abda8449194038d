#!/usr/bin/python3
"""The threaded page (tools/web.sh --threads) served cross-origin isolated by
tools/serve-isolated.py on 127.0.0.1, in Debian's headless Chromium: Open from Hugging Face…
opens the tiny model (tests/golden/hf_gpt2_tok) through the mock hub, as test_page_hub.py does
for the one-file page.
It once died in that build: Debian's clang 14 and emscripten 3.1.6's libunwind disagreed on
where a landing pad's context lives under -pthread, so no `catch (const T&)` ever matched and
the first exception the page meant to catch (the progress file not written yet, 30 frames in)
went up to the browser as an uncaught WebAssembly.Exception, and the page stopped
(src/app/wasm_eh_threads_web.c). Checks:
  - the page is cross-origin isolated (threads), and ready;
  - the model downloads and opens: the "Opened" banner, then the hub's "downloaded" one, and
    the model scenario in the hash;
  - nothing uncaught all along (window's error and unhandledrejection events), and the page
    still runs its frames after it: asked again, the model opens from the browser's storage.
tools/test.sh builds only the one-file page: without BUILD_WEB_THREADS_DIR/attnsim.html this
says so and exits 0 (build it with tools/web.sh --threads, a few minutes more).
Usage: tests/web/test_page_hub_threads.py [BUILD_WEB_THREADS_DIR]   (default build-web-threads)
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WEB = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build-web-threads")
if not os.path.isfile(os.path.join(WEB, "attnsim.html")):
    print("skipped: no %s (the threaded page: tools/web.sh --threads builds it)" % os.path.join(WEB, "attnsim.html"))
    sys.exit(0)
sys.path.insert(0, os.path.join(ROOT, "tests", "hub"))
from mock_hub import MockHub  # noqa: E402
from page_driver import browser, console, open_page  # noqa: E402

MODEL = os.path.join(ROOT, "tests", "golden", "hf_gpt2_tok")
NAME = "attnsim-test/tiny-gpt2"
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Installed before the page's own scripts: an uncaught WebAssembly.Exception reaches the console
# as a bare "attnsim.js 0:N" line, without its words.
CATCHER = """window.attnsimUncaught = [];
window.addEventListener("error", function (e) { window.attnsimUncaught.push(String(e.message)); });
window.addEventListener("unhandledrejection", function (e) { window.attnsimUncaught.push(String(e.reason)); });"""


def uncaught(d):
    return d.execute_script("return window.attnsimUncaught || []")


def hub_open(d, lines, want, seconds=120):
    """attnsim_hub_open(NAME), then the banners since, up to the hub's own (`want` or an error)."""
    start = len(lines)
    d.execute_script("Module.ccall('attnsim_hub_open', null, ['string', 'string'], [arguments[0], ''])", NAME)
    deadline = time.time() + seconds
    while time.time() < deadline:
        lines += console(d)
        banners = [l for l in lines[start:] if l.startswith("attnsim banner:")]
        if any(" error: " in b or (NAME in b and want in b) for b in banners) or uncaught(d):
            return banners
        time.sleep(0.1)
    return [l for l in lines[start:] if l.startswith("attnsim banner:")]


def main():
    port = free_port()
    server = subprocess.Popen(["/usr/bin/python3", os.path.join(ROOT, "tools", "serve-isolated.py"), WEB, str(port)])
    hub = MockHub({NAME: MODEL}).start()
    d = None
    try:
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        d = browser(tempfile.mkdtemp(prefix="attnsim-page-threads-"))
        d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CATCHER})
        url = "http://127.0.0.1:%d/attnsim.html" % port
        ready, lines = open_page(d, url, "#scenario=default&step=q_proj&lang=en&hf_endpoint=%s&hub_timeout=30" % hub.url)
        isolated = d.execute_script("return self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'")
        check(ready is not None and isolated, "the threaded page is ready, cross-origin isolated: %r" % ready)
        if ready is None:
            return
        banners = hub_open(d, lines, "downloaded")
        check(any(" info: " in b and "Opened" in b for b in banners), "the \"Opened\" banner: %r" % banners)
        check(any(" info: " in b and NAME in b and "downloaded" in b for b in banners),
              "the model downloads and opens: %r" % banners[-1:])
        check("scenario=model" in d.execute_script("return location.hash"), "the model opens in the model scenario")
        # frames still run (the page's progress check has thrown and caught on the way: every 30)
        banners = hub_open(d, lines, "no network")
        check(any(" info: " in b and NAME in b and "no network" in b for b in banners),
              "asked again, it opens from the browser's storage: %r" % banners[-1:])
        check(not uncaught(d), "nothing uncaught: %r" % uncaught(d))
    finally:
        if d:
            d.quit()
        hub.stop()
        server.kill()
        server.wait()
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all threaded page hub checks passed")


main()
