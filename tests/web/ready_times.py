#!/usr/bin/python3
"""Time to ready of the page at its deep links (issue 47: at most 2 s, lessons included).

attnsim.html is copied alone into an empty folder and opened from file:// in headless
Chromium (the browser already open, as a teacher's is), once per deep link and round; the
time is from navigation start to the "attnsim ready:" console line, read in the page
(performance.now() when the line was logged), so the polling of the console adds nothing.
Several pages (a build before and after a change) are timed in turns, link by link, so that
the machine's load moves them alike. Prints one row per link and page: the median and each
round, and each page's slowest median last.
Usage: tests/web/ready_times.py [--rounds N] [--link HASH]... PAGE...
  PAGE: a build-web folder or an .html file; default links: no hash, the start view, the
  article's example, the model view and five lessons at their first step"""
import argparse
import os
import shutil
import statistics
import tempfile

from page_driver import browser, console, wait_for

LINKS = ["", "#scenario=start", "#scenario=default", "#scenario=model", "#lesson=one-budget&at=1",
         "#lesson=heads-up-close&at=1", "#lesson=one-head-or-many&at=1", "#lesson=logits-to-a-token&at=1",
         "#lesson=heads-in-language&at=1"]


def ready_ms(d, url, hash_):
    """Milliseconds from navigation start to the ready line, or None when it never came."""
    d.get("about:blank")
    d.get(url + hash_)
    lines = []
    ready = wait_for(d, lambda l: l.startswith("attnsim ready:"), 60, lines)
    if ready is None:
        return None, lines
    return d.execute_script("return window.attnsimReadyMs || null"), lines


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--link", action="append")
    a.add_argument("pages", nargs="+")
    args = a.parse_args()
    links = args.link or LINKS
    folder = tempfile.mkdtemp(prefix="attnsim-ready-")
    urls = []
    for i, page in enumerate(args.pages):  # each alone in a folder of its own
        alone = os.path.join(folder, str(i))
        os.mkdir(alone)
        shutil.copy(os.path.join(page, "attnsim.html") if os.path.isdir(page) else page,
                    os.path.join(alone, "attnsim.html"))
        urls.append("file://" + os.path.join(alone, "attnsim.html"))
    d = browser(folder)
    rows = {}
    try:
        ready_ms(d, urls[0], "")  # the browser's own first start is not the page's
        for _ in range(args.rounds):
            for link in links:
                for page, url in zip(args.pages, urls):
                    ms, lines = ready_ms(d, url, link)
                    rows.setdefault((link, page), []).append(ms)
                    if os.environ.get("ATTNSIM_READY_LINES"):
                        print("\n".join("    " + l for l in lines if l.startswith("attnsim")))
    finally:
        d.quit()
    print("%-36s %-28s %7s   %s" % ("deep link", "page", "median", "rounds (ms)"))
    worst = {}
    for (link, page), times in rows.items():
        done = [t for t in times if t is not None]
        median = statistics.median(done) if len(done) == len(times) else float("inf")
        worst[page] = max(worst.get(page, 0.0), median)
        print("%-36s %-28s %7.0f   %s" % (link or "(none)", page[-28:], median,
                                          " ".join("-" if t is None else "%.0f" % t for t in times)))
    for page, ms in worst.items():
        print("slowest median of %s: %.0f ms" % (page, ms))


main()
