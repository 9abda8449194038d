#!/usr/bin/env python3
"""Writes the tiny tokenizer folders tests/test_hf_tokenizer.cpp loads (tests/golden/tokenizers/):

  gpt2/     vocab.json + merges.txt, GPT-2's layout: the 256 byte characters (ids 0..255 in
            GPT-2's bytes_to_unicode order), merges that spell "Hello", " world", " 2024",
            and <|endoftext|> last
  gpt2-json/  the same model as one tokenizer.json (merges as ["a", "b"] pairs, tokenizers >= 0.20)
  llama3/   tokenizer.json as Llama 3 writes it: Split by Llama 3's regex, then ByteLevel without
            its own regex, ignore_merges, <|begin_of_text|> as BOS; " hello" is a token no merge
            reaches (ignore_merges takes it whole)
  qwen2/    Qwen2's: NFC, Split by Qwen2's regex (single digits), ByteLevel
  llama2/   Llama 2's SentencePiece-style tokenizer.json: Prepend + Replace normalizer, BPE with
            byte_fallback (<0x00>..<0xFF>), <unk> <s> </s>, merges spelling "▁Hello", "▁world",
            "▁안"; "녕" and emoji are not tokens (they fall back to bytes)

The ids the test expects follow from these lists by hand (each is spelled out in the test).
Run from the repository root: python3 tests/golden/make_tokenizer_fixtures.py
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizers")


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return bs, [chr(c) for c in cs]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def byte_level_model(merges):
    _, chars = bytes_to_unicode()
    vocab = {c: i for i, c in enumerate(chars)}  # GPT-2's order: '!' is 0, 'Ġ' (space) is 220
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return vocab


GPT2_MERGES = [("H", "e"), ("l", "l"), ("He", "ll"), ("Hell", "o"), ("Ġ", "w"), ("o", "r"), ("Ġw", "or"),
               ("Ġwor", "l"), ("Ġworl", "d"), ("2", "0"), ("20", "2"), ("202", "4"), ("Ġ", "2024")]


def gpt2():
    vocab = byte_level_model(GPT2_MERGES)
    vocab["<|endoftext|>"] = len(vocab)
    write(os.path.join(OUT, "gpt2", "vocab.json"), json.dumps(vocab, ensure_ascii=False) + "\n")
    write(os.path.join(OUT, "gpt2", "merges.txt"), "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in GPT2_MERGES))
    eot = vocab["<|endoftext|>"]
    tok = {
        "version": "1.0",
        "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": True, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                  "merges": [[a, b] for a, b in GPT2_MERGES]},
    }
    write(os.path.join(OUT, "gpt2-json", "tokenizer.json"), json.dumps(tok, ensure_ascii=False, indent=1) + "\n")


LLAMA3_REGEX = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2_REGEX = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def split_byte_level(name, regex, normalizer, ignore_merges, bos):
    vocab = byte_level_model(GPT2_MERGES)
    vocab["Ġhello"] = len(vocab)  # no merge makes it: only ignore_merges finds it
    added = []
    for content in ["<|begin_of_text|>", "<|end_of_text|>"]:
        added.append({"id": len(vocab) + len(added), "content": content, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True})
    post = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}
    if bos:
        post = {"type": "Sequence", "processors": [post, {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [], "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [added[0]["id"]],
                                                                  "tokens": ["<|begin_of_text|>"]}}}]}
    tok = {
        "version": "1.0",
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": ignore_merges, "vocab": vocab, "merges": [f"{a} {b}" for a, b in GPT2_MERGES]},
    }
    write(os.path.join(OUT, name, "tokenizer.json"), json.dumps(tok, ensure_ascii=False, indent=1) + "\n")


LLAMA2_MERGES = [("l", "l"), ("▁", "H"), ("e", "ll"), ("▁H", "ell"), ("▁Hell", "o"), ("▁", "w"), ("o", "r"),
                 ("▁w", "or"), ("l", "d"), ("▁wor", "ld"), ("▁", "안")]


def llama2():
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    for c in ["▁", "H", "e", "l", "o", "w", "r", "d", "안"]:
        vocab[c] = len(vocab)
    for a, b in LLAMA2_MERGES:
        vocab.setdefault(a + b, len(vocab))
    added = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for c, i in [("<unk>", 0), ("<s>", 1), ("</s>", 2)]]
    tok = {
        "version": "1.0",
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                           {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "vocab": vocab,
                  "merges": [f"{a} {b}" for a, b in LLAMA2_MERGES]},
    }
    write(os.path.join(OUT, "llama2", "tokenizer.json"), json.dumps(tok, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    gpt2()
    split_byte_level("llama3", LLAMA3_REGEX, None, True, True)
    split_byte_level("qwen2", QWEN2_REGEX, {"type": "NFC"}, False, False)
    llama2()
