"""Driving the page in Debian's headless Chromium (chromium-driver + python3-selenium): shared
by the browser test (test_page.py) and the benchmark (tools/bench-web.py)."""
import json
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
