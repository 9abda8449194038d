#!/usr/bin/env bash
# The mixed corpus of issue 46 (tools/corpus.py --mix; tools/setup.sh installs its packages):
#   the files match their pinned sums and SHA256SUMS; no held-out document is in train.txt;
#   every source has held-out text and heldout.txt is theirs together; a missing source is one
#   line, exit 2 and nothing written.  About 10 s.
#   tests/lm/test_corpus_mix.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 tools/corpus.py --mix "$tmp/c" >/dev/null
(cd "$tmp/c" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not match the files"
python3 - "$tmp/c" <<'PY' || fail "the splits"
import json, os, sys
d = sys.argv[1]
read = lambda name: open(os.path.join(d, name), encoding="utf-8").read().split("\n")[:-1]
train, held = read("train.txt"), read("heldout.txt")
assert not set(held) & set(train), "a held-out document is in train.txt"
per_source = []
for s in json.load(open(os.path.join(d, "sources.json")))["sources"]:
    lines = read("heldout-%s.txt" % s["name"])
    assert lines, "heldout-%s.txt is empty" % s["name"]
    assert len(lines) == s["documents"]["heldout"], s["name"]
    per_source += lines
assert sorted(per_source) == sorted(held), "heldout.txt is not the sources' held-out files together"
assert all(l.strip() == l and l for l in train + held), "an empty line or one with edge spaces"
print("ok: %d train and %d held-out documents, none in both" % (len(train), len(held)))
PY

# a source that is not there: one line, exit 2, nothing written (all missing; WordNet alone there)
missing() {  # missing ROOT WANT
  set +e
  ATTNSIM_CORPUS_ROOT=$1 python3 tools/corpus.py --mix "$tmp/none" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  set -e
  [[ $rc == 2 ]] || fail "missing source: exit $rc, not 2"
  [[ $(wc -l <"$tmp/err") == 1 ]] || fail "missing source: not one line: $(cat "$tmp/err")"
  grep -q -- "$2" "$tmp/err" || fail "missing source: '$(cat "$tmp/err")' does not say '$2'"
  [[ ! -e $tmp/none ]] || fail "missing source: wrote $tmp/none"
  echo "ok: missing source: $(cat "$tmp/err")"
}
missing "$tmp/empty" "$tmp/empty/usr/share/wordnet"
mkdir -p "$tmp/part/usr/share" && ln -s /usr/share/wordnet "$tmp/part/usr/share/wordnet"
missing "$tmp/part" "bible: $tmp/part/usr/lib/bible.data"
echo "mixed corpus: all passed"
