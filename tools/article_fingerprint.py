#!/usr/bin/python3
"""The article's sentences as hashed character 3-grams, for the lessons' closeness test.

The lessons must teach the article's facts in their own words (src/lessons/closeness.h).
The article is not in the repository; this writes, one line per article sentence, the
FNV-1a 32 hashes of its 3-grams under the same rules as closeness.cpp (lines, then pieces
ending in . ? ! before whitespace; formulas dropped; Hangul, ASCII letters, digits and '_'
kept; grams with a Hangul syllable). tests/test_lesson_closeness.cpp checks that a copied
article sentence scores 1 against it, so the two implementations cannot drift apart.
    /usr/bin/python3 tools/article_fingerprint.py ARTICLE > tests/golden/article_3grams.txt
"""
import sys

OPERATORS = "×=÷"


def split_sentences(text):
    out = []
    for line in text.split("\n"):
        cur = ""
        for i, c in enumerate(line):
            cur += c
            if c in ".?!" and (i + 1 == len(line) or line[i + 1] == " "):
                if cur.strip(" \t\r"):
                    out.append(cur)
                cur = ""
        if cur.strip(" \t\r"):
            out.append(cur)
    return out


def is_hangul(c):
    return "\uac00" <= c <= "\ud7a3"


def is_wording(c):
    return is_hangul(c) or (c < "\x80" and (c.isalnum() or c in "_#"))


def grams(sentence):
    words = sentence.replace("\u3000", " ").replace("\xa0", " ").replace("\t", " ").replace("\r", " ").split(" ")
    words = [w for w in words if w]
    drop = [False] * len(words)
    for i, w in enumerate(words):
        if any(c in OPERATORS for c in w):
            drop[i] = True
            if len(w) == 1:
                if i > 0:
                    drop[i - 1] = True
                if i + 1 < len(words):
                    drop[i + 1] = True
    kept = [c for i, w in enumerate(words) if not drop[i] for c in w if is_wording(c)]
    out = set()
    for i in range(len(kept) - 2):
        g = kept[i:i + 3]
        if any(is_hangul(c) for c in g):
            h = 2166136261
            for b in "".join(g).encode("utf-8"):
                h = ((h ^ b) * 16777619) & 0xFFFFFFFF
            out.add(h)
    return sorted(out)


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    print("# attnsim: 3-gram hashes of the source article's sentences, one line each (tools/article_fingerprint.py)")
    for s in split_sentences(text):
        g = grams(s)
        if g:
            print(" ".join(f"{h:08x}" for h in g))


if __name__ == "__main__":
    main()
