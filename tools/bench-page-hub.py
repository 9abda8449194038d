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
Usage: tools/bench-page-hub.py [FOLDER]   (after tools/setup.sh and tools/web.sh;
                                           FOLDER default /tmp/attnsim-hub-folders/full/gpt2)"""
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
from page_driver import browser, console, open_page, wait_for  # noqa: E402

FOLDER = sys.argv[1] if len(sys.argv) > 1 else "/tmp/attnsim-hub-folders/full/gpt2"
NAME, TOKENS, LAYER, REPEATS, DECODE = "openai-community/gpt2", 64, 5, 10, 32
CLI = os.path.join(ROOT, "build", "attnsim-cli")


def hub_open(d, lines, want, seconds=600):
    """Seconds from attnsim_hub_open to the banner holding `want` (None and the banner on error)."""
    t0 = time.time()
    d.execute_script("Module.ccall('attnsim_hub_open', null, ['string', 'string'], [arguments[0], ''])", NAME)
    hit = wait_for(d, lambda l: l.startswith("attnsim banner:") and (want in l or " error: " in l), seconds, lines)
    return (time.time() - t0 if hit and want in hit else None), hit


def main():
    if not os.path.isfile(os.path.join(FOLDER, "config.json")):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "make_hub_folders.py"),
                        os.path.dirname(FOLDER), "--only", "gpt2"], check=True)
    mb = sum(os.path.getsize(os.path.join(FOLDER, f)) for f in os.listdir(FOLDER)) / 1e6
    tmp = tempfile.mkdtemp(prefix="attnsim-bench-page-hub-")
    page_dir = os.path.join(tmp, "page")
    os.mkdir(page_dir)
    shutil.copy(os.path.join(ROOT, "build-web", "attnsim.html"), page_dir)
    url = "file://" + os.path.join(page_dir, "attnsim.html")
    hub = MockHub({NAME: FOLDER}).start()
    link = "#scenario=default&step=q_proj&lang=en&hf_endpoint=" + hub.url
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_") and "proxy" not in k.lower()}
    env.update(HF_ENDPOINT=hub.url, HF_HUB_CACHE=os.path.join(tmp, "cache"), NO_PROXY="*")
    rows = []
    d = browser(os.path.join(tmp, "downloads"))
    try:
        t0 = time.time()
        subprocess.run([CLI, "pull", NAME], env=env, check=True, capture_output=True)
        desk_pull = time.time() - t0
        _, lines = open_page(d, url, link)
        page_pull, hit = hub_open(d, lines, "downloaded")
        if page_pull is None:
            sys.exit("the page's download failed: %r" % hit)
        rows.append(("download %.0f MB (s)" % mb, page_pull, desk_pull))
        hub.stop()
        hub = None
        _, lines = open_page(d, url, link)
        page_open, hit = hub_open(d, lines, "no network")
        if page_open is None:
            sys.exit("opening the stored model failed: %r" % hit)
        snapshot = d.execute_script("return FS.readdir('/hub/models--openai-community--gpt2/snapshots')[2]")
        dir_ = "/hub/models--openai-community--gpt2/snapshots/" + snapshot
        d.execute_script("Module.ccall('attnsim_bench_model', null, ['string', 'number', 'number', 'number', 'number'],"
                         " [arguments[0], %d, %d, %d, %d])" % (TOKENS, LAYER, REPEATS, DECODE), dir_)
        line = wait_for(d, lambda l: l.startswith("attnsim bench: model="), 900, lines)
        if not line:
            sys.exit("the page's benchmark gave no line: %r" % [l for l in lines if "bench" in l])
        page = dict(re.findall(r"(\w+)=([\d.]+)", line))
    finally:
        d.quit()  # before the desktop's timings: an open page draws frames on the same cores
        if hub:
            hub.stop()
    try:
        t0 = time.time()
        subprocess.run([CLI, "predict", "--model", NAME, "--text", "hello world", "--top-k", "1"],
                       env=dict(env, HF_HUB_OFFLINE="1"), check=True, capture_output=True)
        rows.append(("open the stored model (s)", page_open, time.time() - t0))
        desk = json.loads(subprocess.run(
            [CLI, "bench-model", "--model", os.path.join(env["HF_HUB_CACHE"], "models--openai-community--gpt2", "snapshots",
                                                          snapshot), "--length", str(TOKENS), "--layer", str(LAYER),
             "--repeats", str(REPEATS), "--decode", str(DECODE), "--json"],
            check=True, capture_output=True, text=True).stdout)
        rows.append(("forward, %d tokens, layer %d kept (ms)" % (TOKENS, LAYER), float(page["median_forward_ms"]),
                     desk["median_ms"]))
        rows.append(("decode (tokens/s)", float(page["decode_tokens_per_s"]), desk["decode_tokens_per_s"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("GPT-2 small (random weights), %s; load average %s" % (FOLDER, os.getloadavg()))
    print("%-40s %12s %12s  %s" % ("", "page", "desktop", "page's time / desktop's"))
    for what, p, q in rows:
        print("%-40s %12.2f %12.2f  %.2fx" % (what, p, q, q / p if "/s" in what else p / q))


main()
