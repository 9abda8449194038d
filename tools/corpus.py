#!/usr/bin/env python3
"""The language model's corpus (issue 36): modern English from Debian's wordnet-base.

    tools/corpus.py OUT_DIR          writes OUT_DIR/train.txt, OUT_DIR/heldout.txt and
                                     OUT_DIR/SHA256SUMS, which `attnsim-cli train --corpus` checks
    tools/corpus.py --mix OUT_DIR    the mixed corpus of issue 46 (tools/corpus_mix.py), WordNet
                                     among five sources

WordNet 3.0 (Princeton's licence: use, copy and distribute freely with the notice kept; the
notice is in /usr/share/doc/wordnet-base/copyright) glosses every synset with a definition and,
for many, example sentences written by lexicographers: short, modern, ordinary English with a
headword that repeats inside its own line. One synset is one line:

    cup: a small open container usually used for drinking. "he drank a cup of strong coffee"

The held-out split is fixed once, here, and never trained on: a synset is held out when the
CRC-32 of "POS OFFSET" (e.g. "n 03147509") is 0 mod 20, about 5 % of the lines, spread over
the whole lexicon rather than one block of it. Both files are checked against pinned SHA-256
sums, so every machine trains on the same bytes; a missing package or a changed file is one
line and exit 2, with nothing written.
"""
import hashlib
import os
import sys
import tempfile
import zlib

WORDNET = "/usr/share/wordnet"
PARTS = ["noun", "verb", "adj", "adv"]
HELD_OUT_MOD = 20
# sha256 of the files this script writes from wordnet-base 1:3.0-37 (Debian 12)
PINNED = {
    "train.txt": "e4a8185db67a50b6ab39e0b28c4040da792bcc791316cdea8db3c2276f104ca3",
    "heldout.txt": "5c9aece0624b8d487ae11ccef8bfd26a950ecbcd8044de1c3951c9e3730dcf72",
}


def fail(msg):
    print("corpus.py: " + msg, file=sys.stderr)
    sys.exit(2)


def synsets(part):
    """(pos, offset, words, gloss) of every synset in WORDNET/data.PART."""
    path = os.path.join(WORDNET, "data." + part)
    try:
        lines = open(path, encoding="utf-8").read().split("\n")
    except OSError as e:
        fail("%s: %s (install the corpus: apt-get install wordnet-base)" % (path, e.strerror))
    for line in lines:
        if not line or line.startswith("  "):  # the licence header lines start with two spaces
            continue
        fields, _, gloss = line.partition(" | ")
        f = fields.split()
        offset, pos, count = f[0], f[2], int(f[3], 16)
        words = [f[4 + 2 * i].replace("_", " ") for i in range(count)]
        yield pos, offset, words, gloss.strip()


def line_of(words, gloss):
    """'cup: a small open container ... "he drank a cup of strong coffee"' """
    head = words[0].split("(")[0]  # adjectives carry markers such as "(a)" and "(p)"
    parts = [p.strip() for p in gloss.split(";") if p.strip()]
    definition = [p for p in parts if not p.startswith('"')]
    examples = [p for p in parts if p.startswith('"')]
    text = head + ": " + "; ".join(definition)
    if examples:
        text += ". " + " ".join(examples)
    return text


def main(out):
    train, held = [], []
    for part in PARTS:
        for pos, offset, words, gloss in synsets(part):
            text = line_of(words, gloss)
            key = ("%s %s" % (pos, offset)).encode()
            (held if zlib.crc32(key) % HELD_OUT_MOD == 0 else train).append(text)
    files = {"train.txt": "\n".join(train) + "\n", "heldout.txt": "\n".join(held) + "\n"}
    sums = "".join("%s  %s\n" % (PINNED[name], name) for name in files)
    for name, text in files.items():
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if PINNED[name] != digest:
            fail("%s would be %s, not the pinned %s: another wordnet-base than 1:3.0-37?" % (name, digest, PINNED[name]))
    os.makedirs(out, exist_ok=True)
    for name, text in list(files.items()) + [("SHA256SUMS", sums)]:  # whole or not at all: a temporary renamed into place
        fd, tmp = tempfile.mkstemp(dir=out, prefix="." + name)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600
        os.replace(tmp, os.path.join(out, name))
    print("%s: %d train lines (%d bytes), %d held-out lines (%d bytes)" %
          (out, len(train), len(files["train.txt"].encode()), len(held), len(files["heldout.txt"].encode())))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--mix":  # the mixed corpus of issue 46 (tools/corpus_mix.py)
        import corpus_mix
        corpus_mix.main(sys.argv[2])
    elif len(sys.argv) == 2 and not sys.argv[1].startswith("-"):
        main(sys.argv[1])
    else:
        fail("usage: tools/corpus.py OUT_DIR | tools/corpus.py --mix OUT_DIR")
