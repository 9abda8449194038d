#!/usr/bin/env bash
# Configures and builds build-san/: one clang-14 tree with AddressSanitizer, UndefinedBehavior-
# Sanitizer and libFuzzer's coverage (ATTNSIM_FUZZ), which serves both the sanitizer stage of
# tools/test.sh (attnsim-cli, attnsim-san-tests, the mock hub) and the fuzzers (tools/fuzz.sh),
# so CI compiles the libraries under the sanitizers once, not once per compiler.
#   tools/san-build.sh TARGET...     e.g. attnsim-cli attnsim-san-tests fuzz_npy
# -O1: the sanitizers' own advice (the stack traces stay exact) and several times faster than
# -O0 at the hostile cases and the fuzzers' input counts.
set -euo pipefail
cd "$(dirname "$0")/.."
(($#)) || { echo "usage: tools/san-build.sh TARGET..." >&2; exit 2; }
CC=clang-14 CXX=clang++-14 cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DATTNSIM_FUZZ=ON \
  -DATTNSIM_GUI=OFF -DATTNSIM_CUDA=OFF -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" ${ATTNSIM_CMAKE_ARGS:-} >/dev/null
cmake --build build-san -j"$(nproc)" --target "$@"
