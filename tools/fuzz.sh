#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) into build-san/ (tools/san-build.sh: the
# tree tools/test.sh's sanitizer stage shares) and runs each from its committed seed corpus
# (tests/fuzz/corpus/<name>/). Any crash, sanitizer report, leak, timeout (a hang: one input over
# 10 s) or out-of-memory (over 2 GiB) fails: the reproducer is left as
# build-san/findings/<name>/crash-*, to become a regression seed and test.
#
# Two modes, because CI must not pass or fail by luck:
#   tools/fuzz.sh [TARGET...]    CI mode: a fixed seed, a fixed number of inputs per target and a
#                                fresh working corpus, so every machine runs the same inputs and a
#                                green run here is a green run in CI.
#   ATTNSIM_FUZZ_SECONDS=600 tools/fuzz.sh [TARGET...]
#                                exploration: a random seed for that long per target, keeping
#                                what it learns in build-san/corpus/ between runs.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
((${#targets[@]})) || targets=(npy mask zip lesson checkpoint cli safetensors tokenizer pipeline nested_zip)
# CI mode's inputs per target: about 30 s each on a loaded 2-core machine.
declare -A runs=([npy]=600000 [mask]=600000 [zip]=30000 [lesson]=200000 [checkpoint]=20000 [cli]=5000
                 [safetensors]=600000 [tokenizer]=20000 [pipeline]=60000 [nested_zip]=5000)

tools/san-build.sh "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in "${targets[@]}"; do
  findings=build-san/findings/$t
  if [[ -n ${ATTNSIM_FUZZ_SECONDS:-} ]]; then
    work=build-san/corpus/$t
    budget=(-max_total_time="$ATTNSIM_FUZZ_SECONDS")
    what="${ATTNSIM_FUZZ_SECONDS}s"
  else
    work=build-san/ci-corpus/$t
    rm -rf "$work"
    budget=(-seed=1 -runs="${runs[$t]}")
    what="seed 1"
  fi
  mkdir -p "$work" "$findings"
  # The committed seeds stay as they are; what the fuzzer adds goes to $work.
  start=$SECONDS
  if ! build-san/fuzz_"$t" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
       -print_final_stats=1 -artifact_prefix="$findings/" "$work" "tests/fuzz/corpus/$t" \
       >"build-san/fuzz_$t.log" 2>&1; then
    echo "fuzz_$t: FAILED (reproducer in $findings/, log build-san/fuzz_$t.log)" >&2
    grep -E "ERROR|SUMMARY|runtime error" "build-san/fuzz_$t.log" | head -5 >&2 || true
    status=1
  else
    n=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "build-san/fuzz_$t.log" | grep -oE "[0-9]+$" || echo "?")
    echo "fuzz_$t: $what, $n inputs in $((SECONDS - start)) s, no crash, no sanitizer report, no hang"
  fi
done
exit $status
