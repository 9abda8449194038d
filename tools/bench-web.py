#!/usr/bin/python3
"""The browser build's targets (issue 22), side by side with the desktop in one run:
  - attnsim.html's size, and the time from opening it to its first frame (the ready line);
  - frames in the default and model scenarios, and in model while training live (with the
    training steps per second meanwhile): median and p95 ms;
  - the article preset's forward pass (B32 T128 d512 h8, every intermediate kept);
  - an edit at the default preset: from the request to the frame that shows the new numbers.
Each is measured in the single-file page (file://, no threads: tasks in time slices between
frames), in the threaded page when build-web-threads/ exists (served with the cross-origin
isolation headers by tools/serve-isolated.py: tasks on threads), and on the desktop
(xvfb-run + llvmpipe for frames, attnsim-cli bench for the forward pass). Headless Chromium
draws with SwiftShader. Every number is a median over its run; the machine's load average is
printed beside them, since a loaded 2-core machine moves every column.
Usage: tools/bench-web.py [FRAMES]   (from the repository root, after tools/setup.sh and
                                      tools/web.sh [--threads]; FRAMES default 300)"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "web"))
from page_driver import browser, console, wait_for  # noqa: E402

FRAMES = int(sys.argv[1]) if len(sys.argv) > 1 else 300
RUNS = 10
rows = []  # (what, page, threaded page, desktop)


def page_bench(d, url, hash_, seconds=600):
    """(seconds to the ready line, the bench line's fields)."""
    d.get("about:blank")
    t0 = time.time()
    d.get(url + hash_)
    lines = []
    ready = wait_for(d, lambda l: l.startswith("attnsim ready:"), 120, lines)
    load = time.time() - t0 if ready else None
    line = wait_for(d, lambda l: l.startswith("attnsim bench:"), seconds, lines)
    return load, dict(kv.split("=") for kv in line.split()[2:]) if line else {}


def desktop(args):
    out = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1440x900x24", "build/attnsim"] + args,
                         capture_output=True, text=True, timeout=900).stdout
    return out


def desktop_frames(scenario, train=False):
    out = desktop(["--scenario", scenario, "--bench-frames", str(FRAMES)] + (["--train-live"] if train else []))
    m = re.search(r"median ([\d.]+) ms, p95 ([\d.]+) ms", out)
    steps = re.search(r"training live meanwhile: (\d+) steps", out)
    return (float(m.group(1)), float(m.group(2))) if m else None, int(steps.group(1)) if steps else None, out


def desktop_forward():
    out = subprocess.run(["build/attnsim-cli", "bench", "--repeats", str(RUNS), "--json"], capture_output=True,
                         text=True).stdout
    return json.loads(out)["median_ms"]


def desktop_edit():
    out = desktop(["--scenario", "default", "--bench-edit", "20"])
    m = re.search(r"edit -> first frame showing it: median ([\d.]+) ms", out)
    return float(m.group(1)) if m else None


def main():
    folder = tempfile.mkdtemp(prefix="attnsim-bench-")
    alone = os.path.join(folder, "alone")
    os.mkdir(alone)
    shutil.copy("build-web/attnsim.html", alone)
    pages = [("page", "file://" + os.path.join(alone, "attnsim.html"))]
    server = None
    if os.path.exists("build-web-threads/attnsim.html"):
        server = subprocess.Popen(["/usr/bin/python3", "tools/serve-isolated.py", "build-web-threads", "8123"])
        time.sleep(1)
        pages.append(("threads", "http://127.0.0.1:8123/attnsim.html"))
    d = browser(folder)
    res = {}
    try:
        for name, url in pages:
            r = {}
            r["load"], _ = page_bench(d, url, "#scenario=default&lang=en&bench=frames:30")
            _, r["default"] = page_bench(d, url, "#scenario=default&lang=en&bench=frames:%d" % FRAMES)
            _, r["model"] = page_bench(d, url, "#scenario=model&lang=en&bench=frames:%d" % FRAMES)
            _, r["train"] = page_bench(d, url, "#scenario=model&lang=en&bench=frames:%d&train=live" % FRAMES)
            _, r["article"] = page_bench(d, url, "#scenario=article&lang=en&bench=run:%d" % RUNS)
            _, r["edit"] = page_bench(d, url, "#scenario=default&lang=en&bench=run:20")
            r["threads"] = d.execute_script("return typeof SharedArrayBuffer !== 'undefined' && self.crossOriginIsolated")
            res[name] = r
            print(name, json.dumps(r), flush=True)
    finally:
        d.quit()
        if server:
            server.kill()
    load_avg = os.getloadavg()[0]
    df, _, _ = desktop_frames("default")
    dm, _, _ = desktop_frames("model")
    dt, dsteps, dout = desktop_frames("model", train=True)
    dfwd, dedit = desktop_forward(), desktop_edit()
    dsecs = re.search(r"(\d+) frames, median", dout)

    def col(name, key, field, fmt="%.1f"):
        r = res.get(name)
        return fmt % float(r[key][field]) if r and r.get(key, {}).get(field) else "-"

    print("\nload average at the desktop runs: %.1f (2 cores); page size %.1f MB" %
          (load_avg, os.path.getsize("build-web/attnsim.html") / 1e6))
    print("| measure | page (file://, no threads) | page (threads, isolated) | desktop | target |")
    print("|---|---|---|---|---|")
    print("| open → first frame, s | %.1f | %s | | ≤ 5 |" %
          (res["page"]["load"], "%.1f" % res["threads"]["load"] if "threads" in res else "-"))
    for key, label, dd in [("default", "default frames", df), ("model", "model frames", dm),
                           ("train", "model frames, training live", dt)]:
        print("| %s: median / p95 ms | %s / %s | %s / %s | %s | ≤ 16 / ≤ 33 |" %
              (label, col("page", key, "median_ms"), col("page", key, "p95_ms"), col("threads", key, "median_ms"),
               col("threads", key, "p95_ms"), "%.1f / %.1f" % dd if dd else "-"))
    print("| training steps / s while drawing | %s | %s | %s steps in %d frames | ≥ 10 |" %
          (col("page", "train", "steps_per_s"), col("threads", "train", "steps_per_s"), dsteps,
           int(dsecs.group(1)) if dsecs else FRAMES))
    pf = col("page", "article", "median_forward_ms")
    print("| article forward, ms | %s | %s | %.1f | page ≤ 4× desktop (%.1f×) |" %
          (pf, col("threads", "article", "median_forward_ms"), dfwd, float(pf) / dfwd if pf != "-" else 0))
    print("| default edit → frame, ms | %s | %s | %s | ≤ 100 |" %
          (col("page", "edit", "median_edit_ms"), col("threads", "edit", "median_edit_ms"), dedit))


main()
