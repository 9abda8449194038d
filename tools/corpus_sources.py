"""The sources of the mixed corpus (tools/corpus_mix.py): each a function giving its documents.

Every source yields (key, text): key is stable across runs and decides the held-out split, text
is one document on one line (no '\\n'). ROOT (ATTNSIM_CORPUS_ROOT, default "") is put before
every path read, so a test can point the sources at a folder that lacks them.
"""
import glob
import gzip
import os
import re
import subprocess

import corpus  # WordNet's extraction (tools/corpus.py), shared with the WordNet-only corpus
from corpus_prose import SPACE, sections

ROOT = os.environ.get("ATTNSIM_CORPUS_ROOT", "")
WORDNET_GROUP = 20  # synsets per WordNet document (about 1.7 KB, 500 tokens at 4,000 merges)


class Missing(Exception):
    """A source's files are not there: the message names the path."""


def _read(path, opener=open):
    try:
        with opener(ROOT + path, "rt", encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise Missing("%s: %s" % (ROOT + path, e.strerror))


def _glob(pattern):
    paths = sorted(glob.glob(ROOT + pattern))
    if not paths:
        raise Missing("%s: no such files" % (ROOT + pattern))
    return [p[len(ROOT):] for p in paths]


def wordnet():
    """WordNet's synset lines (corpus.py's), held out by corpus.py's own rule, then grouped:
    WORDNET_GROUP consecutive synsets of one split make a document, so a 256-token window
    stays inside one, and the held-out synsets are exactly those of the WordNet corpus."""
    corpus.WORDNET = ROOT + "/usr/share/wordnet"
    if not os.path.isdir(corpus.WORDNET):
        raise Missing("%s: no such folder" % corpus.WORDNET)
    groups = {True: [], False: []}
    for part in corpus.PARTS:
        for pos, offset, words, gloss in corpus.synsets(part):
            key = "%s %s" % (pos, offset)
            held = corpus.zlib.crc32(key.encode()) % corpus.HELD_OUT_MOD == 0
            groups[held].append((key, corpus.line_of(words, gloss)))
    for held, lines in groups.items():
        for i in range(0, len(lines), WORDNET_GROUP):
            chunk = lines[i:i + WORDNET_GROUP]
            yield chunk[0][0], " ".join(t for _, t in chunk), held


def bible():
    """The King James Bible, one chapter a document (verses joined, their numbers dropped), as
    the bible program of bible-kjv prints it from bible-kjv-text's data."""
    data = ROOT + "/usr/lib"
    if not os.path.exists(data + "/bible.data"):
        raise Missing("%s/bible.data: No such file or directory" % data)
    try:
        out = subprocess.run(["bible", "-p", data, "-l100000", "Gen1:1-Rev22:21"], capture_output=True,
                             check=True, encoding="utf-8").stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise Missing("bible (from bible-kjv): %s" % e)
    chapter, verses = None, []
    for line in out.split("\n"):
        if not line.strip():
            continue
        if not line.startswith(" "):  # "Genesis 1"
            if chapter:
                yield chapter, " ".join(verses)
            chapter, verses = line.strip(), []
        else:  # "  1 In the beginning ..."
            verses.append(line.strip().split(" ", 1)[1])
    if chapter:
        yield chapter, " ".join(verses)


JARGON_ENTRY = re.compile(r"^   :([^:]+):(.*)$")
PRONUNCIATION = re.compile(r"/[^/]*/,?")


def jargon():
    """The Jargon File 4.4.7: each glossary entry a document ("headword: n. text", its
    pronunciation dropped, {cross-references} unbraced), each chapter and appendix section one."""
    lines = _read("/usr/share/doc/jargon-text/jargon.txt.gz", gzip.open).split("\n")
    start = next((i for i, l in enumerate(lines) if SPACE.sub(" ", l).startswith("Chapter 1. ")), None)
    if start is None:
        raise Missing("jargon.txt.gz has no 'Chapter 1.' heading")
    key, body = None, []

    def done():
        text = SPACE.sub(" ", " ".join(body).replace("{", "").replace("}", "")).strip()
        return (key, text) if key and len(text) > len(key) + 2 else None

    for line in lines[start:]:
        m = JARGON_ENTRY.match(line)
        if m or (line and not line.startswith(" ")):  # an entry, or a heading at column 0
            d = done()
            if d:
                yield d
            if m:
                key = m.group(1).strip()
                head = PRONUNCIATION.sub("", m.group(2)).strip(" ,")
                body = [key + ":", head]
            else:
                key = SPACE.sub(" ", line).strip()
                body = [key + "."]
            if key == "Glossary":  # the heading of the entries, with no text of its own
                key = None
        else:
            body.append(line.strip())
    d = done()
    if d:
        yield d


def _pages(files, split_at, drop=()):  # drop: the anchors' beginnings of parts left out
    for path in files:
        rel = os.path.relpath(path, os.path.dirname(os.path.commonpath(files)))
        seen = {}
        for anchor, text in sections(_read(path), split_at):
            if anchor.startswith(drop) or len(text) < 200:  # a heading alone, a contents list
                continue
            seen[anchor] = seen.get(anchor, 0) + 1
            yield "%s#%s/%d" % (rel, anchor, seen[anchor]), text


def handbook():
    """The Debian Administrator's Handbook (English HTML): a document per section (h1 to h3)."""
    files = [f for f in _glob("/usr/share/doc/debian-handbook/html/en-US/*.html") if not f.endswith("/index.html")]
    return _pages(files, ("h1", "h2", "h3"))


def gnu_standards():
    """The GNU Coding Standards and Information for Maintainers of GNU Software (HTML): a
    document per section (h1 to h3); the contents, the indexes and the licence text are left out."""
    files = [f + ".html" for f in ("/usr/share/doc/gnu-standards/standards", "/usr/share/doc/gnu-standards/maintain")]
    for f in files:
        if not os.path.exists(ROOT + f):
            raise Missing("%s: No such file or directory" % (ROOT + f))
    return _pages(files, ("h1", "h2", "h3"), drop=("SEC_Contents", "SEC_Overview", "GNU-Free-Documentation-License", "Index"))
