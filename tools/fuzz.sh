#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) into build-fuzz/ and runs each for a
# fixed time from its committed seed corpus (tests/fuzz/corpus/<name>/). Any crash, sanitizer
# report, leak, timeout (a hang: one input over 10 s) or out-of-memory (over 2 GiB) fails:
# the reproducer is left as build-fuzz/findings/<name>/crash-*, to become a regression test.
#   tools/fuzz.sh                 every target, ATTNSIM_FUZZ_SECONDS each (default 30)
#   tools/fuzz.sh npy lesson      only those
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${ATTNSIM_FUZZ_SECONDS:-30}
targets=("$@")
((${#targets[@]})) || targets=(npy mask lesson checkpoint cli)

CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DATTNSIM_FUZZ=ON \
  -DATTNSIM_GUI=OFF -DATTNSIM_CUDA=OFF -DBUILD_TESTING=OFF -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in "${targets[@]}"; do
  work=build-fuzz/corpus/$t findings=build-fuzz/findings/$t
  mkdir -p "$work" "$findings"
  # The committed seeds stay as they are; what the fuzzer adds goes to build-fuzz/corpus.
  if ! build-fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
       -print_final_stats=1 -artifact_prefix="$findings/" "$work" "tests/fuzz/corpus/$t" \
       >"build-fuzz/fuzz_$t.log" 2>&1; then
    echo "fuzz_$t: FAILED (reproducer in $findings/, log build-fuzz/fuzz_$t.log)" >&2
    grep -E "ERROR|SUMMARY|runtime error" "build-fuzz/fuzz_$t.log" | head -5 >&2 || true
    status=1
  else
    runs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "build-fuzz/fuzz_$t.log" | grep -oE "[0-9]+$" || echo "?")
    echo "fuzz_$t: ${seconds}s, $runs inputs, no crash, no sanitizer report, no hang"
  fi
done
exit $status
