"""The mixed corpus (issue 46): cased English from five openly licensed Debian packages.

    tools/corpus.py --mix OUT_DIR    writes OUT_DIR/train.txt, heldout.txt (what `train --corpus`
                                     reads), heldout-SOURCE.txt (each source's held-out part),
                                     sources.json and SHA256SUMS

One document is one line: a Bible chapter, a Jargon File entry, a section of a manual, 20
WordNet synsets (tools/corpus_sources.py says how each source is cut). A document is held out
when the CRC-32 of its key ("Genesis 1", "html/library/os.html#os-procinfo/1", ...) is 0 mod 20,
about 5 % of each source; WordNet keeps corpus.py's own rule, synset by synset, so its held-out
lines are those of the WordNet corpus. Both files list their documents in the order of the
SHA-256 of "SOURCE KEY": the sources are interleaved, so the first held-out windows already
come from all of them. Every file is checked against pinned SHA-256 sums and every package
against its pinned version: another version, or a source missing, is one line and exit 2, with
nothing written.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zlib

import corpus
import corpus_sources as src

HELD_OUT_MOD = 20
# name, what it reads, the Debian packages (pinned versions: Debian 12), the licence
SOURCES = [
    ("wordnet", src.wordnet, {"wordnet-base": "1:3.0-37"},
     "WordNet 3.0 licence (Princeton): use, copy, modify and distribute with the notice kept"),
    ("bible", src.bible, {"bible-kjv-text": "4.38", "bible-kjv": "4.38"},
     "public domain (the King James Version, 1611; the text file: 'copy, modify or distribute at will')"),
    ("jargon", src.jargon, {"jargon-text": "4.4.7-4.1"}, "public domain (the Jargon File 4.4.7)"),
    ("debian-handbook", src.handbook, {"debian-handbook": "11.20220922"},
     "CC-BY-SA-3.0 (chosen of the package's GPL-2.0+ or CC-BY-SA-3.0)"),
    ("gnu-standards", src.gnu_standards, {"gnu-standards": "2022.03.23-0.1"},
     "GFDL-1.3+, no invariant sections, no cover texts"),
]
# sha256 of every file this script writes from the versions above
PINNED = {
    "heldout-bible.txt": "0ca0fbd906c81d4ecf96ab666520e893567cbdf51f5f052dfc92d6fc94499a2e",
    "heldout-debian-handbook.txt": "03697eeb30e8be2a2961a94d79131f870c1ee575881d699d27728f15995e5abc",
    "heldout-gnu-standards.txt": "441164e8f7b7389c8cd134886b1bc527fc5671a56e91f0476ff07fdf1cdb0d02",
    "heldout-jargon.txt": "d0bccb26ba09f881c106bde68a86892290423df6df2dc4d1849675163e8a308f",
    "heldout-wordnet.txt": "d742fe9600f6e56ff12b63a5dc356733f876260f2e329137b0ba3dd7e56acb1e",
    "heldout.txt": "24060103e4827c91d4858a3d59845a775b4055b85096e6f5733a128b10204061",
    "sources.json": "f6a6931dea4bac32787cff7e02bd05a62ec8658d4e9cc58bf6ded8fb63b68be2",
    "train.txt": "fd89187fc093058391038306aaee1945af68b6280d1442d591335553675f73e2",
}


def installed(package):
    try:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, encoding="utf-8")
    except OSError:
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def collect():
    """{source: ([train texts], [held-out texts], {package: version})}, or exit 2."""
    out = {}
    for name, read, packages, _ in SOURCES:
        for package, want in packages.items():
            have = installed(package)
            if have is None:
                corpus.fail("%s: package %s is not installed (tools/setup.sh installs it)" % (name, package))
            if have != want:
                corpus.fail("%s: package %s is %s, not the pinned %s" % (name, package, have, want))
        docs = []
        try:
            for d in read():
                key, text = d[0], d[1]
                held = d[2] if len(d) > 2 else zlib.crc32(("%s %s" % (name, key)).encode()) % HELD_OUT_MOD == 0
                order = hashlib.sha256(("%s %s" % (name, key)).encode()).digest()
                docs.append((order, held, text))
        except src.Missing as e:
            corpus.fail("%s: %s (install it: tools/setup.sh)" % (name, e))
        if not docs:
            corpus.fail("%s: no documents" % name)
        out[name] = docs
    return out


def files_of(sources):
    """{file name: text} of the whole corpus."""
    lines = lambda docs: "".join(t + "\n" for _, _, t in sorted(docs))
    every = [d for docs in sources.values() for d in docs]
    files = {"train.txt": lines([d for d in every if not d[1]]), "heldout.txt": lines([d for d in every if d[1]])}
    total = sum(len(t.encode()) + 1 for _, _, t in every)
    table = []
    for name, read, packages, licence in SOURCES:
        docs = sources[name]
        train, held = [d for d in docs if not d[1]], [d for d in docs if d[1]]
        files["heldout-%s.txt" % name] = lines(held)
        size = lambda ds: sum(len(t.encode()) + 1 for _, _, t in ds)
        table.append({"name": name, "packages": packages, "licence": licence,
                      "documents": {"train": len(train), "heldout": len(held)},
                      "bytes": {"train": size(train), "heldout": size(held)},
                      "share": round(size(docs) / total, 4)})
    files["sources.json"] = json.dumps({"held_out": "CRC-32 of 'SOURCE KEY' %% %d == 0 (WordNet: of 'POS OFFSET')"
                                        % HELD_OUT_MOD, "sources": table}, indent=1) + "\n"
    return files


def main(out):
    files = files_of(collect())
    sums = {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in files.items()}
    if os.environ.get("ATTNSIM_CORPUS_PRINT_SUMS"):  # to pin a new version: prints, writes nothing
        print(json.dumps(sums, indent=4, sort_keys=True))
        return
    for name, digest in sums.items():
        if PINNED.get(name) != digest:
            corpus.fail("%s would be %s, not the pinned %s: another package version than corpus_mix.py pins?"
                        % (name, digest, PINNED.get(name)))
    files["SHA256SUMS"] = "".join("%s  %s\n" % (sums[n], n) for n in sorted(sums))
    os.makedirs(out, exist_ok=True)
    for name, text in files.items():  # each whole or not at all: a temporary renamed into place
        fd, tmp = tempfile.mkstemp(dir=out, prefix="." + name)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600
        os.replace(tmp, os.path.join(out, name))
    table = json.loads(files["sources.json"])["sources"]
    print("%s: %d bytes train, %d held out; %s" % (out, len(files["train.txt"].encode()),
          len(files["heldout.txt"].encode()), ", ".join("%s %.1f %%" % (s["name"], 100 * s["share"]) for s in table)))
