#!/usr/bin/python3
"""GPT-2 small through Open from Hugging Face… in the page, side by side with the desktop in one
run (issue 39's speed targets):
  - the download into the page's IndexedDB from the mock hub on 127.0.0.1 (MB/s), and
    `attnsim-cli pull` of the same model (the CPU's cost of fetching and verifying: loopback
    has no network in the way);
  - opening the stored model again after a reload, with the mock hub stopped (target <= 10 s);
  - the forward pass over 64 tokens, one layer's every step kept, and greedy decode through the
    KV caches: the page's attnsim_bench_model against `attnsim-cli bench-model ... --decode`,
    the same code (model/hf_bench.h), medians (target: the page <= 3x the desktop).
The folder is tools/make_hub_folders.py's gpt2 (random weights of GPT-2 small's shapes).
Headless Chromium; the machine's load average is printed beside the numbers.
Usage: tools/bench-page-hub.py [--page [LABEL=]HTML]... [--cli ATTNSIM_CLI] [FOLDER]
  (after tools/setup.sh and tools/web.sh; FOLDER default /tmp/attnsim-hub-folders/full/gpt2;
  --page default build-web/attnsim.html, given twice or more: each page in turn, a column each,
  as a kernel's before and after in one run; an http:// URL is opened as served, as the threads
  build behind tools/serve-isolated.py is; --cli default build/attnsim-cli)"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "web"))
sys.path.insert(0, os.path.join(ROOT, "tests", "hub"))
from mock_hub import MockHub  # noqa: E402
from page_driver import browser, open_page, wait_for  # noqa: E402

NAME, TOKENS, LAYER, REPEATS, DECODE = "openai-community/gpt2", 64, 5, 10, 32


def hub_open(d, lines, want, seconds=600):
    """Seconds from attnsim_hub_open to the banner holding `want` (None and the banner on error)."""
    t0 = time.time()
    d.execute_script("Module.ccall('attnsim_hub_open', null, ['string', 'string'], [arguments[0], ''])", NAME)
    hit = wait_for(d, lambda l: l.startswith("attnsim banner:") and (want in l or " error: " in l), seconds, lines)
    return (time.time() - t0 if hit and want in hit else None), hit


def bench_page(html, folder, tmp):
    """One page's numbers: the download, the reopen with the hub stopped, attnsim_bench_model."""
    if html.startswith("http"):  # a served page (the threads build behind tools/serve-isolated.py)
        url = html
    else:  # alone in an empty folder, from file://
        page_dir = tempfile.mkdtemp(prefix="page-", dir=tmp)
        shutil.copy(html, os.path.join(page_dir, "attnsim.html"))
        url = "file://" + os.path.join(page_dir, "attnsim.html")
    hub = MockHub({NAME: folder}).start()
    link = "#scenario=default&step=q_proj&lang=en&hf_endpoint=" + hub.url
    d = browser(os.path.join(tmp, "downloads"))
    try:
        _, lines = open_page(d, url, link)
        pull, hit = hub_open(d, lines, "downloaded")
        if pull is None:
            sys.exit("%s: the page's download failed: %r" % (html, hit))
        hub.stop()
        hub = None
        _, lines = open_page(d, url, link)
        reopen, hit = hub_open(d, lines, "no network")
        if reopen is None:
            sys.exit("%s: opening the stored model failed: %r" % (html, hit))
        snapshot = d.execute_script("return FS.readdir('/hub/models--openai-community--gpt2/snapshots')[2]")
        dir_ = "/hub/models--openai-community--gpt2/snapshots/" + snapshot
        d.execute_script("Module.ccall('attnsim_bench_model', null, ['string', 'number', 'number', 'number', 'number'],"
                         " [arguments[0], %d, %d, %d, %d])" % (TOKENS, LAYER, REPEATS, DECODE), dir_)
        line = wait_for(d, lambda l: l.startswith("attnsim bench: "), 900, lines)
        if not line or "median_forward_ms" not in line:
            sys.exit("%s: the page's benchmark gave no numbers: %r" % (html, line or [l for l in lines if "bench" in l]))
        bench = dict(re.findall(r"(\w+)=([\d.]+)", line))
        heap = d.execute_script("return Module.HEAP8.length") / 1e6  # wasm memory never shrinks: the peak
    finally:
        d.quit()  # before the next page and the desktop: an open page draws frames on the same cores
        if hub:
            hub.stop()
    return [pull, reopen, float(bench["median_forward_ms"]), float(bench["decode_tokens_per_s"]), heap]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default="/tmp/attnsim-hub-folders/full/gpt2")
    ap.add_argument("--page", action="append", help="[LABEL=]attnsim.html (repeatable)")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "attnsim-cli"))
    args = ap.parse_args()
    folder = os.path.abspath(args.folder)
    pages = [p.split("=", 1) if "=" in p.split("://")[0] else [os.path.basename(os.path.dirname(p.rstrip("/"))) or "page", p]
             for p in (args.page or [os.path.join(ROOT, "build-web", "attnsim.html")])]
    if not os.path.isfile(os.path.join(folder, "config.json")):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "make_hub_folders.py"),
                        os.path.dirname(folder), "--only", "gpt2"], check=True)
    mb = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)) / 1e6
    tmp = tempfile.mkdtemp(prefix="attnsim-bench-page-hub-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_") and "proxy" not in k.lower()}
    env.update(HF_HUB_CACHE=os.path.join(tmp, "cache"), NO_PROXY="*")
    try:
        hub = MockHub({NAME: folder}).start()
        try:
            t0 = time.time()
            subprocess.run([args.cli, "pull", NAME], env=dict(env, HF_ENDPOINT=hub.url), check=True, capture_output=True)
            desk_pull = time.time() - t0
        finally:
            hub.stop()
        columns = []
        for label, html in pages:  # each page's numbers as they come, in case a later step fails
            columns.append(bench_page(html, folder, tmp))
            print("%s: download %.1f s, reopen %.1f s, forward %.1f ms, decode %.2f tokens/s, wasm heap %.0f MB"
                  % tuple([label] + columns[-1]), file=sys.stderr, flush=True)
        t0 = time.time()
        subprocess.run([args.cli, "predict", "--model", NAME, "--text", "hello world", "--top-k", "1"],
                       env=dict(env, HF_HUB_OFFLINE="1"), check=True, capture_output=True)
        desk_open = time.time() - t0
        snapshots = os.path.join(env["HF_HUB_CACHE"], "models--openai-community--gpt2", "snapshots")
        bench = subprocess.Popen(
            [args.cli, "bench-model", "--model", os.path.join(snapshots, os.listdir(snapshots)[0]), "--length", str(TOKENS),
             "--layer", str(LAYER), "--repeats", str(REPEATS), "--decode", str(DECODE), "--json"],
            stdout=subprocess.PIPE, text=True)
        text = bench.stdout.read()
        _, status, usage = os.wait4(bench.pid, 0)  # this child's own peak, not the browser's
        bench.returncode = os.waitstatus_to_exitcode(status)
        if bench.returncode:
            sys.exit("attnsim-cli bench-model failed (%d)" % bench.returncode)
        desk = json.loads(text)
        peak_rss = usage.ru_maxrss * 1024 / 1e6  # KiB
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = [("download %.0f MB (s)" % mb, desk_pull), ("open the stored model (s)", desk_open),
            ("forward, %d tokens, layer %d kept (ms)" % (TOKENS, LAYER), desk["median_ms"]),
            ("decode (tokens/s)", desk["decode_tokens_per_s"]),
            ("memory: wasm heap / peak RSS (MB)", peak_rss)]
    print("GPT-2 small (random weights), %s; load average %s" % (folder, os.getloadavg()))
    labels = [label for label, _ in pages]
    print("%-40s" % "" + "".join("%14s" % l for l in labels) + "%14s  " % "desktop" +
          "  ".join("%s / desktop" % l for l in labels))
    for i, (what, q) in enumerate(rows):
        ps = [c[i] for c in columns]
        print("%-40s" % what + "".join("%14.2f" % p for p in ps) + "%14.2f  " % q +
              "  ".join("%.2fx" % (q / p if "/s" in what else p / q) for p in ps))


main()
