#!/usr/bin/env bash
# Training repeats bit for bit on any machine: retrains one seed of each shipped recipe
# (`train --recipe`, the run's own model.json) up to a step, and requires the same log lines
# (all but the wall-clock "seconds": the loss and gradient norm to 17 digits) and, where a
# checkpoint of that step ships with the run, the same bytes in every parameter. The
# fixed-order products and math (src/engine/gemm_fixed.h, fixed_math.h) make that hold
# across CPUs, kernel sets and thread counts. Then redoes each shipped MHA -> GQA conversion
# of one seed (`gqa-convert --uptrain`, g = 4, 2, 1) and requires the same parameters.
#   tools/retrain-check.sh [build/attnsim-cli]
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-build/attnsim-cli}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# recipe folder, step compared (its checkpoint too where one ships), and the run's
# --score-every where not the default 250 (a log cadence, not part of the recipe)
runs=("induction 500 25" "induction-d64-h1 250" "induction-d64-h8 250" "induction-d64-h1-6k-s1 250" "induction-d64-h8-6k-s1 250"
      "induction-d64-h2-6k-s1 250" "induction-d64-h4-6k-s1 250" "induction-d64-h16-6k-s1 250"
      "recall-d64-h8-kv1-8k-s1 1000 1000" "recall-d64-h8-kv8-8k-s1 250 1000"
      "gist-d64-h8-kv1-4k-s1 250 1000" "gist-d64-h8-kv8-4k-s1 250 1000")
strip_seconds() { sed 's/"seconds":[0-9.e+-]*,//' "$1"; }
# same_log NAME: the retrained run's log is the shipped run's first lines, wall time aside
same_log() {
  local lines
  lines=$(wc -l <"$tmp/$1/train_log.jsonl")
  diff -q <(strip_seconds "$tmp/$1/train_log.jsonl") <(strip_seconds "assets/models/$1/train_log.jsonl" | head -n "$lines") \
    >/dev/null && return
  echo "retrain-check: $1: the log's first $lines lines differ from the shipped run's" >&2
  exit 1
}
for entry in "${runs[@]}"; do
  read -r name step every <<<"$entry"
  shipped=assets/models/$name
  ckpt=$shipped/checkpoints/$(printf 'step-%06d' "$step")
  "$cli" train --recipe "$shipped" --stop-at "$step" --score-every "${every:-250}" --out "$tmp/$name" >/dev/null 2>&1 ||
    { echo "retrain-check: $name: training failed" >&2; exit 1; }
  what="every log line"
  if [[ -d $ckpt ]]; then
    for f in "$ckpt"/*.npy; do
      cmp -s "$f" "$tmp/$name/$(basename "$f")" || { echo "retrain-check: $name step $step: $(basename "$f") differs" >&2; exit 1; }
    done
    what="every parameter and log line"
  fi
  same_log "$name"
  echo "retrain-check: $name: $step steps, $what identical"
done
# The language models (the text task): the corpus comes from wordnet-base (tools/corpus.py
# checks its pinned sha256, train --recipe the recipe's); their logs carry a hash of every
# parameter at each scored step, so the log lines alone say the weights are identical.
python3 tools/corpus.py "$tmp/corpus" >/dev/null
# Their tokenizer: bpe-train on the training split gives the shipped tokenizer.json byte for byte.
"$cli" bpe-train --corpus "$tmp/corpus/train.txt" --merges 4000 --out "$tmp/tok" >/dev/null 2>"$tmp/err" ||
  { echo "retrain-check: bpe-train failed: $(tail -n 1 "$tmp/err")" >&2; exit 1; }
cmp -s "$tmp/tok/tokenizer.json" assets/models/wordnet-lm-s1/tokenizer.json ||
  { echo "retrain-check: bpe-train --merges 4000 no longer gives the shipped tokenizer.json" >&2; exit 1; }
echo "retrain-check: wordnet tokenizer: bpe-train --merges 4000, tokenizer.json identical"
for entry in "wordnet-lm-s1 200" "wordnet-lm-s2 100" "wordnet-lm-s3 100"; do
  read -r name step <<<"$entry"
  shipped=assets/models/$name
  "$cli" train --recipe "$shipped" --corpus "$tmp/corpus" --stop-at "$step" --score-every 100 --out "$tmp/$name" \
    >/dev/null 2>"$tmp/err" || { echo "retrain-check: $name: training failed: $(tail -n 1 "$tmp/err")" >&2; exit 1; }
  same_log "$name"
  echo "retrain-check: $name: $step steps, every log line and parameter hash identical"
done
# MHA -> GQA: the shipped conversions, mean-pooled and uptrained again with their recipe.
# converted folder, source run, K/V heads, uptraining steps
conversions=("induction-kv1-up150 induction 1 150"
             "induction-d64-h8-6k-s1-kv4-up300 induction-d64-h8-6k-s1 4 300"
             "induction-d64-h8-6k-s1-kv2-up300 induction-d64-h8-6k-s1 2 300"
             "induction-d64-h8-6k-s1-kv1-up300 induction-d64-h8-6k-s1 1 300")
for entry in "${conversions[@]}"; do
  read -r name from g steps <<<"$entry"
  "$cli" gqa-convert --model "assets/models/$from" --kv-heads "$g" --uptrain "$steps" --out "$tmp/$name" >/dev/null 2>&1 ||
    { echo "retrain-check: $name: gqa-convert failed" >&2; exit 1; }
  for f in "assets/models/$name"/*.npy; do
    cmp -s "$f" "$tmp/$name/$(basename "$f")" || { echo "retrain-check: $name: $(basename "$f") differs" >&2; exit 1; }
  done
  echo "retrain-check: $name: mean-pooled to $g K/V heads and uptrained $steps steps, every parameter identical"
done
