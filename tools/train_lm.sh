#!/usr/bin/env bash
# The shipped language models (issue 36), from the Debian package to assets/models/:
#   1. tools/corpus.py: WordNet's glosses, pinned sha256, the fixed held-out split
#   2. bpe-train: a byte-level BPE of 4,000 merges (4,257 tokens with <|endoftext|>)
#   3. train --task text: GPT-2's form, 4 layers × 4 heads, d_model 128, 128 positions,
#      4,000 steps of 16 windows, one seed per run, each on one core (taskset), two at a time
#   4. each run: its checkpoint (the final model, its log, tokenizer.json), heldout_report.json
#      (the whole held-out split beside the unigram, bigram and trigram baselines, with
#      standard errors) and hf/, the Hugging Face GPT-2 export in F16
# About 30 minutes of one core per seed on the 2-core build machine; never run in CI (CI
# retrains a prefix of each: tools/retrain-check.sh).
#   tools/train_lm.sh [build/attnsim-cli] [SEEDS...]     default seeds: 1 2 3
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${1:-build/attnsim-cli}
shift || true
seeds=("${@:-1 2 3}")
read -r -a seeds <<<"${seeds[*]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 tools/corpus.py "$work/corpus"
"$cli" bpe-train --corpus "$work/corpus/train.txt" --heldout "$work/corpus/heldout.txt" --merges 4000 --out "$work/tok"
train_one() {  # SEED CPU
  taskset -c "$2" "$cli" train --task text --corpus "$work/corpus" --tokenizer "$work/tok" \
    --layers 4 --heads 4 --d-model 128 --seq 128 --layernorm --mlp --tied --batch 16 --steps 4000 \
    --lr 1e-3 --warmup 200 --weight-decay 0.1 --clip 1 --score-every 100 --checkpoint-every 500 \
    --seed "$1" --data-seed "$1" --out "$work/run-s$1" >"$work/s$1.txt"
}
i=0
for seed in "${seeds[@]}"; do
  train_one "$seed" $((i % 2)) &
  i=$((i + 1))
  (( i % 2 == 0 )) && wait
done
wait
for seed in "${seeds[@]}"; do
  out=assets/models/wordnet-lm-s$seed
  rm -rf "$out" && mkdir -p "$out"
  # the final model, its log and tokenizer; the intermediate checkpoints stay out (5 MB each:
  # the log's scores every 100 steps are the timeline)
  cp "$work/run-s$seed"/{model.json,train_log.jsonl,tokenizer.json} "$work/run-s$seed"/*.npy "$out/"
  "$cli" heads --model "$out" --corpus "$work/corpus" --json >"$out/heldout_report.json"
  "$cli" export-hf --model "$out" --tokenizer "$out" --out "$out/hf" --dtype f16
  echo "$out: $(python3 -c "import json;r=json.load(open('$out/heldout_report.json'));print('held-out loss %.4f, unigram %.4f, bigram %.4f' % (r['heldout']['loss'], r['baselines']['unigram'], r['baselines']['bigram']))")"
done
