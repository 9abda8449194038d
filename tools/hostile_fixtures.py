#!/usr/bin/env python3
"""Fixtures of tools/hostile.sh for the round-3 surfaces (issue 37): Hugging Face folders,
shard indexes and tokenizers whose *work* (not only their sizes) is hostile. Files of a few MB
that bash would build slowly; every one is refused by attnsim in one line.

    tools/hostile_fixtures.py OUT_DIR

Writes OUT_DIR/<case>/ folders. Each folder is a Hugging Face model folder or a tokenizer
folder; the comment above each says what it is and which of issue 37's classes it covers.
"""
import json
import os
import shutil
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden")


def folder(out, name, like=None):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    if like:
        for f in os.listdir(like):  # the model's files, not the reference tensors (*.npy, whole/)
            if not f.endswith(".npy") and os.path.isfile(os.path.join(like, f)):
                shutil.copy(os.path.join(like, f), d)
    return d


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, separators=(",", ":"))


def safetensors(path, tensors):
    """tensors: [(name, dtype, shape, raw bytes)] -> one safetensors file."""
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return [(k, v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items() if k != "__metadata__"]


def tokenizer_json(vocab, merges=(), normalizer=None, pre_tokenizer=None, added=()):
    return {"model": {"type": "BPE", "vocab": vocab, "merges": list(merges)},
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer,
            "added_tokens": [{"id": i, "content": c, "special": True} for i, c in added]}


def main(out):
    gpt2 = os.path.join(GOLDEN, "hf_gpt2_f32")
    gpt2_tensors = read_safetensors(os.path.join(gpt2, "model.safetensors"))

    # [1] work: an index naming 400,000 shards (the shard list was searched linearly: O(n^2))
    d = folder(out, "shards-400k")
    shutil.copy(os.path.join(gpt2, "config.json"), d)
    write_json(os.path.join(d, "model.safetensors.index.json"),
               {"weight_map": {f"t{i}": f"m{i}.safetensors" for i in range(400_000)}})

    # [1] a valid folder plus 40,000 one-element tensors no layer reads: valid, and opened in
    # linear time (each name was found by a linear search: 60,000 took 17-20 s)
    d = folder(out, "extra-40k")
    shutil.copy(os.path.join(gpt2, "config.json"), d)
    extra = [(f"unused.{i}", "F32", [1], b"\0\0\0\0") for i in range(40_000)]
    safetensors(os.path.join(d, "model.safetensors"), gpt2_tensors + extra)

    # [7] an index listing a tensor that no shard holds, and a shard tensor the index leaves out
    for name, listed in (("index-ghost", {"ghost.weight": "model-00001-of-00001.safetensors"}),
                         ("index-missing", {})):
        d = folder(out, name)
        shutil.copy(os.path.join(gpt2, "config.json"), d)
        shard = "model-00001-of-00001.safetensors"
        safetensors(os.path.join(d, shard), gpt2_tensors)
        weight_map = {t[0]: shard for t in gpt2_tensors}
        if not listed:
            weight_map.pop(gpt2_tensors[-1][0])
        weight_map.update(listed)
        write_json(os.path.join(d, "model.safetensors.index.json"), {"weight_map": weight_map})

    # [7] bos_token_id past the vocabulary; vocab.json without its merges.txt
    d = folder(out, "bos-past-vocab", gpt2)
    config = json.load(open(os.path.join(gpt2, "config.json")))
    write_json(os.path.join(d, "config.json"), dict(config, bos_token_id=99))
    d = folder(out, "no-merges", gpt2)
    shutil.copy(os.path.join(GOLDEN, "hf_gpt2_tok", "vocab.json"), d)

    # [2] tokenizers whose pipeline would grow the text past memory
    ab = {"a": 0, "b": 1, "\u2581": 2}
    doubling = {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}] * 40}
    many = {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "a"}, "content": "b"},
        {"type": "Replace", "pattern": {"String": "b"}, "content": "a"},
        {"type": "Replace", "pattern": {"String": "a"}, "content": "a"}] * 1000}
    long_prepend = {"type": "Prepend", "prepend": "a" * (10 << 20)}
    # a space becomes 256 bytes: 70,000 spaces would be 18 MB of text, 300 MB with its spans
    metaspace = {"type": "Metaspace", "replacement": "_" * 256, "prepend_scheme": "always", "split": True}
    for name, tok in (("tok-doubling", tokenizer_json(ab, normalizer=doubling)),
                      ("tok-3000-replaces", tokenizer_json(ab, normalizer=many)),
                      ("tok-10mb-prepend", tokenizer_json(ab, normalizer=long_prepend)),
                      ("tok-metaspace", tokenizer_json(ab, pre_tokenizer=metaspace))):
        write_json(os.path.join(folder(out, name), "tokenizer.json"), tok)

    # [1] 40,000 added tokens sharing a 30-byte prefix: each was compared at every position
    # (a 120,000-character text ran for minutes); the text's last "!" has no token
    prefix = "a" * 30
    added = [(3 + i, prefix + "b" + format(i, "016b").replace("0", "a").replace("1", "b")) for i in range(40_000)]
    write_json(os.path.join(folder(out, "tok-40k-added"), "tokenizer.json"), tokenizer_json(ab, added=added))

    # [7] added tokens that lie: two tokens on one id; an id the vocabulary gives to another token
    write_json(os.path.join(folder(out, "tok-added-dup-id"), "tokenizer.json"),
               tokenizer_json(ab, added=[(3, "<x>"), (3, "<y>")]))
    write_json(os.path.join(folder(out, "tok-added-collides"), "tokenizer.json"),
               tokenizer_json(ab, added=[(1, "<x>")]))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: tools/hostile_fixtures.py OUT_DIR")
    main(sys.argv[1])
