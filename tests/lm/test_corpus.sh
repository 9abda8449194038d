#!/usr/bin/env bash
# The language model's corpus and tokenizer (issue 36), on the real WordNet text:
#   tools/corpus.py extracts it and checks its pinned sha256; a changed file is refused;
#   the shipped tokenizer gives the held-out split back byte for byte, and Korean too;
#   train --task text refuses a corpus that fails SHA256SUMS, and options out of range,
#   with one line, exit 2 and no run folder; heads --corpus refuses what its counts and
#   forwards would need past --mem-limit, before it counts.
#   tests/lm/test_corpus.sh build/attnsim-cli
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=$1
model=${LM_MODEL:-assets/models/wordnet-lm-s1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 tools/corpus.py "$tmp/c" >/dev/null
(cd "$tmp/c" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not match the files"
"$cli" tokenize --model "$model" --file "$tmp/c/heldout.txt" | grep -q "round trip exact" || fail "held-out round trip"
printf '고양이가 생선을 먹었다. 어텐션은 "헤드"마다 다른 곳을 본다\n\xff\xfe odd bytes\n' >"$tmp/ko.txt"
"$cli" tokenize --model "$model" --file "$tmp/ko.txt" | grep -q "round trip exact" || fail "Korean round trip"

# Each shipped run's heldout_report.json (what the lesson's heldout_loss, unigram_loss and
# bigram_loss read) is what the corpus gives now, to 1e-4 (the forward's sums may round
# differently on another CPU's kernels; the counts are exact).
for run in assets/models/wordnet-lm-s*/; do
  [[ -n ${LM_MODEL:-} ]] && break
  "$cli" heads --model "$run" --corpus "$tmp/c" --json >"$tmp/report.json"
  python3 - "$run/heldout_report.json" "$tmp/report.json" <<'PY' || fail "$run: heldout_report.json is not what the corpus gives"
import json, sys
shipped, now = (json.load(open(p)) for p in sys.argv[1:])
def close(a, b, path):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a: close(a[k], b[k], path + "/" + k)
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)): close(x, y, "%s/%d" % (path, i))
    elif isinstance(a, float):
        assert abs(a - b) <= 1e-4 * max(1, abs(a)), "%s: %r against %r" % (path, a, b)
    else:
        assert a == b, "%s: %r against %r" % (path, a, b)
close(shipped, now, "")
PY
  echo "ok: $run heldout_report.json"
done

# one line, exit 2, nothing written
refused() {  # refused WHAT EXPECTED-TEXT ARGS...
  local what=$1 want=$2
  shift 2
  set +e
  "$cli" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || fail "$what: exit $rc, not 2"
  [[ $(wc -l <"$tmp/err") == 1 ]] || fail "$what: not one line: $(cat "$tmp/err")"
  grep -q -- "$want" "$tmp/err" || fail "$what: '$(cat "$tmp/err")' does not say '$want'"
  [[ ! -e $tmp/run ]] || fail "$what: left $tmp/run"
  echo "ok: $what: $(cat "$tmp/err")"
}
train=(train --task text --tokenizer "$model" --layers 1 --heads 1 --d-model 8 --steps 2 --out "$tmp/run")
cp -r "$tmp/c" "$tmp/bad"
echo "one more line" >>"$tmp/bad/train.txt"
refused "changed corpus" "SHA256SUMS lists" "${train[@]}" --corpus "$tmp/bad"
cp -r "$tmp/c" "$tmp/nohold" && rm "$tmp/nohold/heldout.txt"
refused "missing held-out file" "heldout.txt" "${train[@]}" --corpus "$tmp/nohold"
refused "no corpus" "--corpus" "${train[@]}"
refused "context past the positions" "seq" "${train[@]}" --corpus "$tmp/c" --seq 4611686018427387904
refused "vocabulary beside a tokenizer" "vocab" "${train[@]}" --corpus "$tmp/c" --vocab 4611686018427387904
printf '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}' >"$tmp/lie.json"
mkdir "$tmp/lie" && cp "$tmp/lie.json" "$tmp/lie/tokenizer.json"
refused "tokenizer without <|endoftext|>" "endoftext" train --task text --tokenizer "$tmp/lie" --corpus "$tmp/c" --out "$tmp/run"
refused "heads --corpus past --mem-limit" "mem-limit" heads --model "$model" --corpus "$tmp/c" --mem-limit 64M
refused "0 merges" "merges" bpe-train --corpus "$tmp/c/train.txt" --merges 0 --out "$tmp/run"
cp -r "$tmp/bad" "$tmp/other" && (cd "$tmp/other" && sha256sum train.txt heldout.txt >SHA256SUMS)  # consistent, not WordNet's
refused "recipe with another corpus" "not the recipe's" train --recipe "$model" --corpus "$tmp/other" --stop-at 1 --out "$tmp/run"
echo "corpus, tokenizer and refusals: all passed"
