"""Driving the page in Debian's headless Chromium (chromium-driver + python3-selenium), and
reading Debian's Firefox ESR's console: shared by the browser tests (test_page.py,
test_page_hub.py) and the benchmarks (tools/bench-web.py, tools/bench-page-hub.py)."""
import json
import os
import subprocess
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def browser(download_dir):
    o = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
              "--allow-file-access-from-files", "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--no-first-run", "--window-size=1440,900", "--user-data-dir=" + tempfile.mkdtemp()]:
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    d.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": download_dir})
    return d


def console(d):
    """The page's console.log lines since the last call (the text inside the quotes)."""
    out = []
    for e in d.get_log("browser"):
        m = e["message"]
        q = m.find('"')
        text = json.loads(m[q:]) if q >= 0 and m.endswith('"') else m
        out.append(text)
    return out


def wait_for(d, predicate, seconds, lines):
    deadline = time.time() + seconds
    while time.time() < deadline:
        lines += console(d)
        hit = [l for l in lines if predicate(l)]
        if hit:
            return hit[0]
        time.sleep(0.1)
    return None


def open_page(d, url, hash_):
    d.get("about:blank")
    d.get(url + hash_)
    lines = []
    ready = wait_for(d, lambda l: l.startswith("attnsim ready:"), 60, lines)
    return ready, lines


def firefox_line(url, hash_, prefix, seconds=90):
    """The first console line from `prefix` on that Firefox prints for the page (console to
    stdout, a fresh profile, under Xvfb: its headless mode offers no WebGL 2 here), or None."""
    profile = tempfile.mkdtemp(prefix="attnsim-ff-")
    with open(os.path.join(profile, "user.js"), "w") as f:
        f.write('user_pref("devtools.console.stdout.content", true);\n'
                'user_pref("webgl.disable-fail-if-major-performance-caveat", true);\n'
                'user_pref("browser.shell.checkDefaultBrowser", false);\n')
    p = subprocess.Popen(["xvfb-run", "-a", "-s", "-screen 0 1440x900x24", "firefox-esr", "--no-remote",
                          "--profile", profile, url + hash_], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    found, deadline = None, time.time() + seconds
    try:
        os.set_blocking(p.stdout.fileno(), False)
        buf = ""
        while time.time() < deadline and found is None:
            try:
                buf += os.read(p.stdout.fileno(), 65536).decode("utf-8", "replace")
            except BlockingIOError:
                pass
            for line in buf.splitlines():
                if prefix in line:
                    found = line[line.index(prefix):].rstrip('"')
                    break
            time.sleep(0.2)
    finally:
        os.killpg(p.pid, 9)
        p.wait()
    return found
