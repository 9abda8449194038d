#!/usr/bin/python3
"""The browser build, driven in Debian's headless Chromium (chromium-driver + python3-selenium).

attnsim.html is copied alone into an empty folder and opened from file://, as a teacher who
got it by e-mail would. Checks (tools/test.sh runs this after tools/web.sh):
  - deep links to scenarios (a model one, a decode one, bug-lab ones, both languages) reach
    their "attnsim ready:" console line at the linked step;
  - the files the first view does not need unpack after it, and lessons that read them open
    from a fresh page without a missing file;
  - the trace the page logs (&log=trace) equals the desktop's `attnsim --print-trace`:
    names, shapes, strides, offsets, storage sharing, NaN / inf counts, and values through
    per-step checksums within float tolerance (Eigen in the page, OpenBLAS on the desktop);
  - deep links to a step the scenario lacks, or a lesson step number that is not one, open the
    first step with an error banner; the page's own buttons are in Korean with lang=ko;
  - the right arrow key moves to the next step (the hash follows);
  - a lesson's number quiz is answered by typing, and the progress lands in localStorage;
  - a malformed .npy through the file input gives one error banner and the page runs on;
  - a zipped checkpoint folder through the file input opens in the model scenario, and so
    does a zipped tiny Hugging Face folder; one whose config.json lies is one error banner;
  - one slide's SVG exported from the page equals the desktop's SVG of the same slide;
  - Debian's Firefox ESR (under Xvfb: its headless mode offers no WebGL 2 here) opens the
    same file and reaches the ready line of a Korean deep link and a model one.
Usage: tests/web/test_page.py BUILD_WEB_DIR DESKTOP_BUILD_DIR
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from page_driver import browser, console, firefox_line, open_page, wait_for

WEB, DESKTOP = sys.argv[1], sys.argv[2]
APP = os.path.join(DESKTOP, "attnsim")
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


def desktop_trace(scenario, model=None):
    extra = ["--model", model] if model else []
    out = subprocess.run([APP, "--scenario", scenario, "--print-trace"] + extra, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def page_language_model(folder):
    """The page's copy of the language model: wordnet-lm-s1 with its .npy in float16, as
    tools/web_files.py writes it, so the desktop's trace reads the weights the page reads."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
    import web_files
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "models", "wordnet-lm-s1")
    dst = os.path.join(folder, "wordnet-lm-s1")
    os.mkdir(dst)
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if not os.path.isfile(path):
            continue  # hf/: not in the page
        with open(path, "rb") as f:
            data = f.read()
        with open(os.path.join(dst, name), "wb") as f:
            f.write(web_files.half_npy(data, path) if name.endswith(".npy") else data)
    return dst


def same_trace(page, desk):
    """Where they differ, or None. Storage ids are compared as a sharing pattern."""
    if [s["name"] for s in page["steps"]] != [s["name"] for s in desk["steps"]]:
        return "step names differ"
    if page["config"] != desk["config"]:
        return "configs differ"
    ids_p, ids_d = {}, {}
    for a, b in zip(page["steps"], desk["steps"]):
        for key in ["op", "shape", "strides", "offset", "is_view", "skipped", "copied_bytes", "nan_count",
                    "neginf_count", "posinf_count", "dtype", "contiguous"]:
            if a.get(key) != b.get(key):
                return "%s: %s %r != %r" % (a["name"], key, a.get(key), b.get(key))
        if (a["storage_id"] is None) != (b["storage_id"] is None):
            return a["name"] + ": storage"
        if a["storage_id"] is not None:
            if ids_p.setdefault(a["storage_id"], len(ids_p)) != ids_d.setdefault(b["storage_id"], len(ids_d)):
                return a["name"] + ": shares storage differently"
        if "checksum" in a:
            for key in ["sum", "abs_sum"]:
                x, y = a["checksum"][key], b["checksum"][key]
                scale = max(1.0, a["checksum"]["abs_sum"])
                if not math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-4 * scale):
                    return "%s: checksum %s %r != %r" % (a["name"], key, x, y)
    return None


def page_hash(d):
    return d.execute_script("return location.hash")


def press(d, key, text=""):
    """Typed text, then a key held for 0.15 s (under ImGui's 0.275 s repeat delay), to the canvas (focused without a click, which
    would land on some widget). Held as a person holds it: Dear ImGui 1.86 reads a key's
    state once per frame, so a down and up between two slow frames is never seen."""
    d.execute_script("document.getElementById('canvas').focus()")
    if text:
        ActionChains(d).send_keys(text).perform()
    ActionChains(d).key_down(key).pause(0.15).key_up(key).perform()


def hash_becomes(d, part, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline and part not in page_hash(d):
        time.sleep(0.1)
    return part in page_hash(d)


def later_files_done(d, seconds=20):
    """Waits until the page has unpacked the files its first view did not need (one zip per
    frame after it); returns how many zips still wait."""
    deadline, waiting = time.time() + seconds, -1
    while time.time() < deadline and waiting != 0:
        waiting = d.execute_script("return document.querySelectorAll('script.attnsim-later').length")
        time.sleep(0.2)
    return waiting


def firefox_ready(url, hash_):
    return firefox_line(url, hash_, "attnsim ready:")


def main():
    folder = tempfile.mkdtemp(prefix="attnsim-page-")
    downloads = os.path.join(folder, "downloads")
    os.mkdir(downloads)
    page_dir = os.path.join(folder, "alone")
    os.mkdir(page_dir)
    shutil.copy(os.path.join(WEB, "attnsim.html"), page_dir)  # the file alone, nothing beside it
    url = "file://" + os.path.join(page_dir, "attnsim.html")
    size = os.path.getsize(os.path.join(page_dir, "attnsim.html"))
    # The language model's weights ship as float16 (tools/web_files.py); its limit: 24 MB.
    check(size <= 24 * 10**6, "attnsim.html is %.1f MB (the limit: 24 MB)" % (size / 1e6))
    d = browser(downloads)
    try:
        # Deep links, both languages: scenario, step and language come back in the ready line.
        links = [("default", "alpha", "ko"), ("default-en", "scores", "en"), ("article", "ctx_contiguous", "en"),
                 ("model", "alpha", "ko"), ("decode-gqa", "k_grouped", "en"), ("mask-two-fills", "scores_masked", "ko"),
                 ("query-padding-nan", "alpha", "en"), ("decode-model", "alpha", "en")]
        for scenario, step, lang in links:
            t0 = time.time()
            ready, lines = open_page(d, url, "#scenario=%s&step=%s&lang=%s" % (scenario, step, lang))
            want = "attnsim ready: scenario=%s step=%s lang=%s" % (scenario, step, lang)
            seconds = time.time() - t0
            check(ready == want, "deep link %s/%s/%s -> %r (%.1f s)" % (scenario, step, lang, ready, seconds))
            if scenario == "model":  # the language model, its held-out loss and roles measured at open
                check(seconds <= 3, "the model view opens the language model in %.1f s (at most 3)" % seconds)
            # the page's own files (lessons, checkpoints, NanumGothic) unpacked from the zip inside it
            missing = [l for l in lines if "did not unpack" in l or "font not found" in l]
            check(not missing, "the page's files and the Korean font are there %r" % missing)

        # The files the first view did not need wait in the page until it is ready, then
        # unpack one zip per frame: after a few seconds none waits. A lesson whose values and
        # figures read the toy runs' files opens at once from a fresh page all the same (the
        # shell unpacks the zip of a folder the app looks into).
        open_page(d, url, "#scenario=start&lang=en")
        waiting = later_files_done(d)
        check(waiting == 0, "the later files unpacked after the first view (%d zips still wait)" % waiting)
        for lesson in ["one-head-or-many", "watching-a-head-form", "gqa"]:
            ready, lines = open_page(d, url, "#lesson=%s&at=2&lang=en" % lesson)
            problems = [l for l in lines if "did not unpack" in l or "cannot fill" in l or "banner: error" in l]
            check(ready is not None and "lesson=%s at=2" % lesson in ready and not problems,
                  "lesson %s from a fresh page -> %r %r" % (lesson, ready, problems))

        # Deep links that name no step, or no step number of the lesson: the page opens at
        # the first step and says so in an error banner (it used to show `query` silently).
        bad_links = [("#scenario=default&step=frobnicate&lang=en", "step=query", "no step 'frobnicate'"),
                     ("#scenario=default&step=%00%FF&lang=en", "step=query", "no step '\\x00"),
                     ("#scenario=default&step=k_cache&lang=en", "step=query", "no step 'k_cache'"),
                     ("#lesson=one-budget&at=-5&lang=en", "at=1", "step ?, but this lesson has steps 1 to"),
                     ("#lesson=one-budget&at=NaN&lang=en", "at=1", "step ?, but"),
                     ("#lesson=one-budget&at=99999999999999999999&lang=en", "at=1", "step ?, but"),
                     ("#lesson=one-budget&at=99&lang=en", "at=1", "step 99, but")]
        for link, where, says in bad_links:
            ready, lines = open_page(d, url, link)
            banner = wait_for(d, lambda l: l.startswith("attnsim banner: error: "), 10, lines)
            check(ready is not None and where in ready and banner is not None and says in banner,
                  "bad deep link %s -> %r, banner %r" % (link, ready, banner))
        # The page's own buttons (HTML, outside the canvas) follow the UI's language.
        open_page(d, url, "#scenario=default&step=alpha&lang=ko")
        labels = d.execute_script("return [document.getElementById('open-file-label').textContent,"
                                  " document.getElementById('open-folder-label').textContent]")
        check(labels == ["파일 열기…", "폴더 열기…"], "Korean page buttons %r" % labels)

        # The page's trace against the desktop's, step by step.
        for scenario in ["default", "query-padding-nan", "mask-two-fills", "model", "decode-gqa"]:
            _, lines = open_page(d, url, "#scenario=%s&lang=en&log=trace" % scenario)
            line = wait_for(d, lambda l: l.startswith("attnsim trace: "), 30, lines)
            if line is None:
                check(False, "trace of %s logged" % scenario)
                continue
            desk = desktop_trace(scenario, page_language_model(folder) if scenario == "model" else None)
            diff = same_trace(json.loads(line[len("attnsim trace: "):]), desk)
            check(diff is None, "trace of %s equals the desktop's%s" % (scenario, "" if diff is None else ": " + diff))

        # The right arrow moves to the next step (pressed once the later files are in: a frame
        # that unpacks a zip on a loaded machine can outlast the key's 0.15 s).
        open_page(d, url, "#scenario=default&step=q_proj&lang=en")
        later_files_done(d)
        press(d, Keys.ARROW_RIGHT)
        check(hash_becomes(d, "step=k_proj"), "right arrow: q_proj -> k_proj (hash %s)" % page_hash(d))

        # A lesson's number quiz, answered by typing; progress saved in localStorage.
        ready, _ = open_page(d, url, "#lesson=one-budget&at=4&lang=en")
        check(ready is not None and "lesson=one-budget at=4" in ready, "lesson deep link -> %r" % ready)
        press(d, Keys.ENTER, text="144")
        saved = ""
        deadline = time.time() + 15
        while time.time() < deadline and "many-heads" not in saved:
            saved = d.execute_script("return localStorage.getItem('attnsim-progress') || ''")
            time.sleep(0.2)
        check('"many-heads"' in saved and "quizzes_right" in saved, "quiz answered and progress saved")

        # A malformed .npy through the file input: one error banner, and the page runs on.
        _, lines = open_page(d, url, "#scenario=default&step=q_proj&lang=en")
        bad = os.path.join(folder, "broken.npy")
        with open(bad, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00\x20\x00{'descr': '<f4', 'shape': (1, 2")
        d.find_element(By.ID, "pick-files").send_keys(bad)
        wait_for(d, lambda l: l.startswith("attnsim banner:"), 10, lines)
        time.sleep(1)
        lines += console(d)
        banners = [l for l in lines if l.startswith("attnsim banner:")]
        check(len(banners) == 1 and banners[0].startswith("attnsim banner: error: ") and "broken.npy" in banners[0],
              "malformed .npy: one banner %r" % banners)
        press(d, Keys.ARROW_RIGHT)
        check(hash_becomes(d, "step=k_proj"), "the page still runs after the bad file (hash %s)" % page_hash(d))

        # A checkpoint folder zipped (as a file manager zips it) through the same input: it opens.
        _, lines = open_page(d, url, "#scenario=default&step=q_proj&lang=en")
        zipped = shutil.make_archive(os.path.join(folder, "induction-d64-h1"), "zip", "assets/models", "induction-d64-h1")
        d.find_element(By.ID, "pick-files").send_keys(zipped)
        wait_for(d, lambda l: l.startswith("attnsim banner:"), 20, lines)
        banners = [l for l in lines if l.startswith("attnsim banner:")]
        check(len(banners) == 1 and " error: " not in banners[0] and "induction-d64-h1" in banners[0] and
              hash_becomes(d, "scenario=model"), "zipped checkpoint opens: %r, hash %s" % (banners, page_hash(d)))

        # A tiny Hugging Face folder (config.json, model.safetensors, vocab.json + merges.txt)
        # zipped through the same input: it opens in the model scenario; the same folder with a
        # config.json that lies is one error banner naming config.json, and the page runs on.
        _, lines = open_page(d, url, "#scenario=default&step=q_proj&lang=en")
        zipped = shutil.make_archive(os.path.join(folder, "hf_gpt2_tok"), "zip", "tests/golden", "hf_gpt2_tok")
        d.find_element(By.ID, "pick-files").send_keys(zipped)
        wait_for(d, lambda l: l.startswith("attnsim banner:"), 30, lines)
        banners = [l for l in lines if l.startswith("attnsim banner:")]
        check(len(banners) == 1 and " error: " not in banners[0] and "hf_gpt2_tok" in banners[0] and
              hash_becomes(d, "scenario=model"), "zipped Hugging Face folder opens: %r, hash %s" % (banners, page_hash(d)))
        broken = os.path.join(folder, "hf-broken")
        shutil.copytree("tests/golden/hf_gpt2_tok", os.path.join(broken, "hf-broken"))
        with open(os.path.join(broken, "hf-broken", "config.json"), "w") as f:
            f.write('{"model_type": "gpt2", "n_embd": 16, "n_head": 0, ')
        zipped = shutil.make_archive(os.path.join(folder, "hf-broken"), "zip", broken, "hf-broken")
        _, lines = open_page(d, url, "#scenario=default&step=q_proj&lang=en")
        d.find_element(By.ID, "pick-files").send_keys(zipped)
        wait_for(d, lambda l: l.startswith("attnsim banner:"), 20, lines)
        time.sleep(1)
        lines += console(d)
        banners = [l for l in lines if l.startswith("attnsim banner:")]
        check(len(banners) == 1 and " error: " in banners[0] and "config.json" in banners[0],
              "broken Hugging Face folder: one banner %r" % banners)
        press(d, Keys.ARROW_RIGHT)
        check(hash_becomes(d, "step=k_proj"), "the page still runs after the broken folder (hash %s)" % page_hash(d))

        # One slide as SVG: the page's download equals the desktop's file.
        open_page(d, url, "#scenario=default&step=alpha&lang=en")
        d.execute_script("Module.ccall('attnsim_export_slide', null, ['string'], ['svg'])")
        svg = os.path.join(downloads, "default-alpha-slide.svg")
        deadline = time.time() + 20
        while time.time() < deadline and not os.path.exists(svg):
            time.sleep(0.2)
        desk_svg = os.path.join(folder, "desktop.svg")
        subprocess.run([APP, "--export", desk_svg, "--scenario", "default", "--step", "alpha", "--size", "1920x1080",
                        "--lang", "en"], check=True, capture_output=True)
        same = os.path.exists(svg) and open(svg, "rb").read() == open(desk_svg, "rb").read()
        check(same, "slide SVG from the page equals the desktop's (%s)" % ("same bytes" if same else "differs or missing"))
    finally:
        d.quit()
    for scenario, step, lang in [("default", "alpha", "ko"), ("model", "alpha", "en")]:
        want = "attnsim ready: scenario=%s step=%s lang=%s" % (scenario, step, lang)
        got = firefox_ready(url, "#scenario=%s&step=%s&lang=%s" % (scenario, step, lang))
        check(got == want, "Firefox: deep link %s/%s/%s -> %r" % (scenario, step, lang, got))
    if failures:
        print("%d browser check(s) failed" % len(failures))
        sys.exit(1)
    print("all browser checks passed")


main()
